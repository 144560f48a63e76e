"""WRHT: wavelength-reused hierarchical tree all-reduce (seed 003) and its all-gather extension (seed 004).

Reduce stage: the current representatives (initially all N nodes) are cut
into groups of ``m`` consecutive ones along the ring; the middle member of
each group is the new representative and every other member sends to it on a
direct lightpath (left members clockwise, right members counter-clockwise).
Groups occupy disjoint ring segments, so wavelengths are reused across groups.
This repeats until a one-hop all-to-all among the remaining representatives
fits in one physical step (or one representative is left); the all-to-all
then finishes the reduction, and the broadcast stage mirrors the reduce stage
with copies.  All-gather (seed 004 §IV-A.2) uses the same routes without
reduction: a member forwards every chunk of its subtree, and on the way back
a representative sends each member the chunks it lacks.

Group size: on one side of a representative all lightpaths cross the link
next to it, so one side can hold at most ``C = F * w`` members (channels per
direction) in one step, which gives ``m = 2C + 1`` (the papers' 2w + 1 for
F = 1).  The all-to-all among ``r`` representatives uses the exact
construction of :mod:`collsim.kinds.optical_ring.alltoall` (``W(r)`` channels per
direction, the minimum), and is used only when ``W(r) <= C`` and ``r - 1``
lightpaths fit a node's transmitters and receivers: a reduction all-to-all
split over two steps would count contributions twice.  Greedy strategies can
need more than ``W(r)`` colours on it and :func:`~collsim.rwa.realize.realize`
cannot mix pre-assigned and strategy colours, so a schedule with an all-to-all
round carries exact colours everywhere (group rounds: colour = distance to the
representative minus one, also optimal); otherwise the strategy colours it.
Derivations and step counts: ``docs/algorithms/wrht.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from ..core.validate import integer
from ..kinds.optical_ring.alltoall import (
    uniform_alltoall_ring,
    uniform_alltoall_wavelengths,
)
from .registry import register

_REF003 = "[WRHT23] §2 'The WRHT Scheme' and Figure 1 (full paper: [WRHT-ICPP23])"


def _ceil_log(n: int, m: int) -> int:
    """Smallest ``k >= 0`` with ``m**k >= n`` (exact integer arithmetic)."""
    k, p = 0, 1
    while p < n:
        p, k = p * m, k + 1
    return k


def _check_int(name: str, value, low: int) -> int:
    """:func:`collsim.core.validate.integer` with the ``WRHT`` prefix on the name."""
    return integer(f"WRHT {name}", value, lo=low)


def group_size(channels: int) -> int:
    """Largest WRHT group size whose gather round fits in one step: ``2 * channels + 1``.

    References
    ----------
    Seed 003 §2: the representative collects its group "by floor(m/2) wavelengths",
    so floor(m/2) <= w gives m = 2w + 1; seed 004 §IV-A.2 writes m̄ = 2w + 1.
    """
    return 2 * _check_int("channels", channels, 1) + 1


def paper_allreduce_steps(nodes: int, wavelengths: int, m: int | None = None) -> int:
    """Seed 003's all-reduce step count: ``2 ceil(log_m N)`` or ``2 ceil(log_m N) - 1``.

    With ``L = ceil(log_m N)``, ``L - 1`` levels of grouping leave
    ``m* = ceil(N / m**(L-1))`` representatives; the paper finishes with an
    all-to-all among them when its ``ceil(m*^2 / 8)`` wavelengths fit in ``w``
    (``2L - 1`` steps), otherwise with one more level to a single root (``2L``).

    References
    ----------
    Seed 003 §2, last paragraphs of "Broadcast stage" and of the wavelength analysis.
    """
    n = _check_int("nodes", nodes, 2)
    w = _check_int("wavelengths", wavelengths, 1)
    m = group_size(w) if m is None else _check_int("m", m, 2)
    levels = _ceil_log(n, m)
    m_star = -(-n // m ** (levels - 1))
    return 2 * levels - 1 if -(-m_star * m_star // 8) <= w else 2 * levels


def paper_allgather_steps(nodes: int, wavelengths: int, m: int | None = None) -> int:
    """Seed 004 Table 1's WRHT all-gather steps, in units of one chunk ``d`` per wavelength.

    ``1 + ceil(m̄(m̄^(θ-1) - 1)/(m̄ - 1)) + (θ-1) m̄^(θ-1)`` (gather, then broadcast
    over ``θ - 1`` levels) or ``... + θ m̄^(θ-1)``, with ``θ = ceil(log_m̄ N)``.
    The paper does not say which applies; as in seed 003, the ``θ - 1`` form is
    used when the top ``m* = ceil(N / m̄^(θ-1))`` nodes fit an all-to-all
    (``ceil(m*^2 / 8) <= w``).

    References
    ----------
    Seed 004 §IV-A.2 (text after Theorem 2) and Table 1; WRHT itself: seed 003 §2.
    """
    n = _check_int("nodes", nodes, 2)
    w = _check_int("wavelengths", wavelengths, 1)
    mb = group_size(w) if m is None else _check_int("m", m, 2)
    theta = _ceil_log(n, mb)
    top = mb ** (theta - 1)
    gather = 1 + -(-mb * (top - 1) // (mb - 1))
    m_star = -(-n // top)
    return gather + (theta - 1 if -(-m_star * m_star // 8) <= w else theta) * top


def _paper_steps(system, collective: CollectiveType, params):
    c = system.channels_per_direction
    m = params.get("m")
    if collective.reduction:   # all-reduce (WRHT's other collective is all-gather)
        return paper_allreduce_steps(system.nodes, c, m)
    return paper_allgather_steps(system.nodes, c, m)


@dataclass(frozen=True)
class _Level:
    """Member -> representative transfers of one grouping level (with subtree ranges)."""

    src: np.ndarray
    dst: np.ndarray
    direction: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _plan(n: int, m: int, channels: int, fanout: int):
    """Group levels until an all-to-all fits; return (levels, top reps, their lo, hi)."""
    reps = np.arange(n, dtype=np.int64)
    lo, hi = reps.copy(), reps + 1
    levels: list[_Level] = []
    while len(reps) > 1 and not (uniform_alltoall_wavelengths(len(reps)) <= channels
                                 and len(reps) - 1 <= fanout):
        r = len(reps)
        idx = np.arange(r)
        g = idx // m
        start = np.arange(0, r, m)
        size = np.minimum(m, r - start)
        mid = (size // 2)[g]
        rep_idx = (start + size // 2)[g]
        pos = idx - g * m
        member = pos != mid
        levels.append(_Level(reps[member], reps[rep_idx][member],
                             np.where(pos < mid, 1, -1)[member].astype(np.int8), lo[member], hi[member]))
        lo, hi = lo[start], hi[start + size - 1]
        reps = reps[start + size // 2]
    return levels, reps, lo, hi


def _ranges(lo: np.ndarray, hi: np.ndarray, n: int, complement: bool = False) -> list[np.ndarray]:
    """Chunk lists ``[lo, hi)`` (or its complement in ``[0, n)``) per transfer, built vectorised."""
    width = hi - lo
    length = n - width if complement else width
    ptr = np.zeros(len(lo) + 1, dtype=np.int64)
    np.cumsum(length, out=ptr[1:])
    k = np.arange(ptr[-1], dtype=np.int64) - np.repeat(ptr[:-1], length)
    if complement:
        idx = k + np.repeat(width, length) * (k >= np.repeat(lo, length))
    else:
        idx = k + np.repeat(lo, length)
    return np.split(idx, ptr[1:-1])


def _tune(system, collective: CollectiveType, size_bytes):
    # collsim tune: group sizes 3, 5, 9, 17 ... up to the default 2Fw+1 (smaller groups, shorter lightpaths)
    top = group_size(system.channels_per_direction)
    return [{"m": m} for m in sorted({(1 << j) + 1 for j in range(1, top.bit_length()) if (1 << j) + 1 < top} | {top})]


@register(
    "wrht", collectives=("allreduce", "allgather"), systems=("optical-ring",),
    aliases=("wavelength-reuse-hierarchical-tree",), paper_steps=_paper_steps, params=("m",), tune=_tune,
    reference=_REF003 + "; all-gather extension and its step formula: [OpTree24] §IV-A.2 and Table 1",
    summary="hierarchical groups of m = 2Fw+1 around middle representatives, all-to-all at the top",
)
def wrht(system, collective: CollectiveType, size_bytes, *, m: int | None = None):
    """Build WRHT all-reduce or all-gather as an explicit logical schedule.

    Rounds ``0 .. L-1`` gather group members into representatives (reducing
    for all-reduce), round ``L`` is the all-to-all among the remaining
    representatives when it fits (see the module docstring), and the last
    ``L`` rounds mirror the gather rounds with copies.

    Parameters
    ----------
    system : OpticalRing
        Target ring (``F`` fibers per direction, ``w`` wavelengths each).
    collective : CollectiveType
        ``"allreduce"`` (one chunk for the whole vector) or ``"allgather"``.
    size_bytes : int
        Message size.
    m : int, optional
        Group size, >= 2 (default ``2 F w + 1``); a larger ``m`` makes
        :func:`~collsim.rwa.realize.realize` split gather rounds into several steps.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)`` with ``params`` holding ``m``, ``levels``
        (grouping levels L), ``top`` (representatives left), ``final``
        (``"all-to-all"`` or ``"root"``) and ``colors``: group rounds are always
        coloured by the selected RWA strategy; the final all-to-all uses the exact
        optimal construction (greedy strategies need more than W(r) colours there).

    Raises
    ------
    InputError
        If ``m`` is not an integer >= 2.

    References
    ----------
    Seed 003 §2 and Figure 1 (reduce and broadcast stages, floor(m/2) wavelengths per
    group, m* = ceil(N / m^(ceil(log_m N) - 1)) nodes in the final all-to-all);
    seed 004 §IV-A.2 and Table 1 (all-gather without reduction).

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("wrht", "paper", "allreduce", "1MiB", nodes=1024)
    >>> verify(s).steps, s.params["m"], s.params["final"]
    (3, 129, 'all-to-all')
    """
    n = system.nodes
    channels = system.channels_per_direction
    m = group_size(channels) if m is None else _check_int("m", m, 2)
    fanout = min(system.tx_channels, system.rx_channels)
    levels, top, top_lo, top_hi = _plan(n, m, channels, fanout)
    reduce = collective.reduction   # all-reduce; else all-gather
    coll = make_collective(collective, n, size_bytes, split=1)
    b = LogicalBuilder(coll)
    a2a = uniform_alltoall_ring(len(top)) if len(top) > 1 else None
    exact = a2a is not None
    depth = len(levels)
    down0 = depth + exact

    def one(t: int) -> np.ndarray:
        return np.zeros((t, 1), dtype=np.int64)

    for j, lv in enumerate(levels):
        color = -1 if exact else None  # group rounds: the selected RWA strategy colours them
        up = one(len(lv.src)) if reduce else _ranges(lv.lo, lv.hi, n)
        b.add(j, lv.src, lv.dst, up, reduce=reduce, direction=lv.direction, color=color)
        down = one(len(lv.src)) if reduce else _ranges(lv.lo, lv.hi, n, complement=True)
        b.add(down0 + depth - 1 - j, lv.dst, lv.src, down, direction=-lv.direction, color=color)
    if a2a is not None:
        s = a2a.src
        data = one(len(s)) if reduce else _ranges(top_lo[s], top_hi[s], n)
        b.add(depth, top[s], top[a2a.dst], data, reduce=reduce, direction=a2a.direction, color=a2a.wavelength)
    params = {"m": m, "levels": depth, "top": int(len(top)), "final": "all-to-all" if exact else "root",
              "colors": "strategy (groups) + exact (all-to-all)" if exact else "strategy"}
    return b.build(), params
