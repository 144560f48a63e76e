"""Plans of the striped multi-stage schedules (``striped-stages``).

A plan fixes, for every stage of a radix vector ``(r_1, ..., r_k)`` with product N,
its stride ``d_j = N / (r_1 ... r_j)``, the window ``[-a_j, b_j]`` of stride-ring
neighbours each node gathers from, how many rounds and slots it takes, how each
unit is cut into pieces (``pieces``: 1, or one per fiber) and the band of
wavelengths of every transfer.  The builder (:mod:`collsim.algorithms.striped_stages.build`)
and the closed-form time (:mod:`collsim.algorithms.striped_stages.cost`) both follow the plan.
Derivation: docs/derivations/striped-stages.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ...core.collective import collective_type, split_bytes
from ...core.collectives import CollectiveType
from ...core.errors import InputError
from ...core.numbers import parse_number

__all__ = ["STAGE_MODES", "StagePlan", "StagesPlan", "parse_radices", "ordered_factorisations",
           "arc_colours", "plan_stages"]

STAGE_MODES = ("pipeline", "direct")


def parse_radices(nodes: int, radices) -> tuple[int, ...]:
    """Validate a radix vector: integers >= 2 in stage order whose product is N.

    References
    ----------
    J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient algorithms for
    all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11),
    1997 (mixed-radix stages).
    """
    bad = InputError(f"striped-stages radices must be integers >= 2 such as 32x32, got {radices!r}")
    if isinstance(radices, str):
        parts = [p for p in re.split(r"[x*,\s]+", radices.strip().lower()) if p]
    else:
        parts = list(radices) if isinstance(radices, (tuple, list, np.ndarray)) else [radices]
    out = []
    for p in parts:
        if isinstance(p, bool) or not isinstance(p, (str, int, np.integer)) or not str(p).strip().isdigit():
            raise bad
        out.append(parse_number(p, "striped-stages radices", integer=True))  # ASCII digits only (core.numbers)
    if not out or min(out) < 2:
        raise bad
    if math.prod(out) != nodes:
        raise InputError(f"striped-stages radices {'x'.join(map(str, out))} multiply to {math.prod(out)}, "
                         f"not the {nodes} nodes")
    return tuple(out)


def ordered_factorisations(n: int, max_factors: int, limit: int = 5000) -> list[tuple[int, ...]]:
    """Ordered factorisations of n into 1..max_factors factors >= 2, fewest factors first.

    References
    ----------
    J. Bruck et al., IEEE TPDS 8(11), 1997 (radix choices of multi-stage exchanges).
    """
    divisors = [d for d in range(2, n + 1) if n % d == 0] if n < 1 << 20 else \
        sorted({x for i in range(2, math.isqrt(n) + 1) if n % i == 0 for x in (i, n // i)} | {n})
    out: list[tuple[int, ...]] = []
    for depth in range(1, max_factors + 1):
        def rec(rest: int, left: int, prefix: tuple[int, ...]):
            if len(out) >= limit:
                return
            if left == 1:
                if rest >= 2:
                    out.append(prefix + (rest,))
                return
            for d in divisors:
                if d * 2 > rest:
                    break
                if rest % d == 0:
                    rec(rest // d, left - 1, prefix + (d,))
        rec(n, depth, ())
    return out


def arc_colours(p: int, lengths: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Colour the arcs of lengths ``1..lengths`` starting at every node of a ``p``-ring.

    Length ``t`` gets its own colour range of ``k_t = ceil(p / floor(p / t))`` colours: the
    ring is cut into ``floor(p / t)`` segments of ``floor`` or ``ceil(p / q)`` nodes (each
    at least ``t``), and the arc from node ``z`` takes ``z``'s offset in its segment, so arcs
    of one colour start one segment apart and never overlap.  ``k_t = t`` when ``t | p``.

    References
    ----------
    A. Tucker, "Coloring a family of circular arcs", SIAM Journal on Applied Mathematics
    29(3), 1975 (circular-arc colouring; equal arcs from every node need
    ``ceil(p / floor(p / t))`` colours).
    """
    z = np.arange(p)
    col = np.zeros((lengths, p), np.int64)
    sizes = []
    for t in range(1, lengths + 1):
        q = p // t
        starts = (np.arange(q) * p) // q
        seg = np.searchsorted(starts, z, side="right") - 1
        col[t - 1] = z - starts[seg]
        sizes.append(-(-p // q))
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if sizes else np.zeros(0, np.int64)
    return off, col, int(sum(sizes))


def _direct_colours(p: int, b: int) -> int:
    t = np.arange(1, b + 1)
    return int((-(-p // (p // t))).sum())


@dataclass(frozen=True)
class StagePlan:
    """One stage of a plan (see :func:`plan_stages`).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §IV-A (stages of all-to-alls).
    """

    radix: int
    stride: int
    held: int
    back: int
    ahead: int
    balanced: bool
    mode: str
    pieces: int
    band: int
    colours: int
    substeps: int
    exact: bool

    @property
    def rounds(self) -> int:
        """Logical rounds, one slot each: per group of classes, 1 (direct) or ``max(back, ahead)``."""
        return (1 if self.mode == "direct" else max(self.back, self.ahead)) * self.substeps

    @property
    def slots(self) -> int:
        """Physical slots of the stage."""
        return self.rounds

    @property
    def max_hops(self) -> int:
        """Longest lightpath of the stage."""
        return self.stride * (self.ahead if self.mode == "direct" else 1)


@dataclass(frozen=True)
class StagesPlan:
    """A whole plan: radices, mode, chunking and stages.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
    Workstations", JPDC 69(2), 2009 (ring pipelines).
    """

    nodes: int
    radices: tuple[int, ...]
    mode: str
    split: int
    halves: int
    stages: tuple[StagePlan, ...]

    @property
    def exact(self) -> bool:
        """Whether the realisation keeps the planned slots (no transceiver split)."""
        return all(s.exact for s in self.stages)

    @property
    def max_hops(self) -> int:
        """Longest lightpath."""
        return max(s.max_hops for s in self.stages)

    def slots(self, collective: CollectiveType) -> int:
        """Physical slots of the collective (twice the all-gather's for all-reduce)."""
        one = sum(s.slots for s in self.stages)
        return len(collective.phases) * one


def _unit_bytes(collective: CollectiveType, n: int, m: int, split: int, held: int, pieces, cls=0):
    """Largest payload of a transfer carrying ``pieces`` of a unit of ``held`` blocks.

    For all-reduce the chunks of low vector positions are one byte larger, so the
    payload depends on the unit's residue class ``cls`` (mod ``N / held``): the smallest
    class among the slot's senders carries the most.  ``cls`` may be an array (one result each).
    """
    pieces = np.asarray(pieces, np.int64)
    if not collective.composed_of:
        return int(held * split_bytes(m, split)[pieces].sum())
    base, extra = divmod(int(m), n * split)
    delta = n // held                     # the unit is one residue class of blocks mod delta
    big = np.where(extra > pieces, (extra - pieces + split - 1) // split, 0)   # blocks b with b*s+p < extra
    cls = np.asarray(cls, np.int64)
    extra_blocks = np.maximum(0, -(-(big[:, None] - cls.reshape(1, -1)) // delta)).sum(axis=0)
    out = held * len(pieces) * base + extra_blocks
    return int(out[0]) if cls.ndim == 0 else out


def _piece_groups(split: int, halves: int, pieces: int, half: int | None):
    """Chunk indices (within a block) of each transfer of a unit: one list per piece group."""
    per = split // pieces
    groups = [np.arange(g * per, (g + 1) * per) for g in range(pieces)]
    if half is None:
        return groups
    return [g[half::halves] for g in groups]


def plan_stages(system, collective: str | CollectiveType, size_bytes: int, radices, mode: str = "pipeline") -> StagesPlan:
    """Plan every stage: windows, rounds, pieces, bands and slots.

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, §IV-A (stages); P. Patarasuk, X. Yuan,
    JPDC 69(2), 2009 (ring pipelines).
    """
    collective = collective_type(collective)
    if mode not in STAGE_MODES:
        raise InputError(f"striped-stages stage must be one of {', '.join(STAGE_MODES)}, got {mode!r}")
    n = system.nodes
    rad = parse_radices(n, radices)
    f, w = system.fibers, system.wavelengths
    limits = [x for x in (system.max_tx_channels, system.max_rx_channels) if x is not None]
    limit = min(limits) if limits else None
    halves = 2 if mode == "pipeline" and rad[0] % 2 == 0 else 1
    split = halves * f
    stages = []
    held = 1
    for j, r in enumerate(rad):
        d = n // (held * r)
        back, ahead = (r - 1) // 2, r - 1 - (r - 1) // 2
        balanced = j == 0 and halves == 2
        if balanced:
            back = ahead = r // 2
        if mode == "pipeline":
            colours, per_node = d, (back > 0) + (ahead > 0)
        else:
            colours, per_node = d * _direct_colours(n // d, ahead), r - 1
        best = None
        for g in ((1, f) if f > 1 else (1,)):
            if g == 1:
                wmax, sub = (w // -(-colours // f), 1) if colours <= f * w else (1, -(-colours // (f * w)))
            elif colours <= w:
                wmax, sub = w // colours, 1
            else:
                continue
            band, exact = wmax, True
            if limit is not None:
                band = min(wmax, limit // (per_node * g))
                if band < 1:
                    band, exact = 1, False
            groups = _piece_groups(split, 1, g, None)
            t = max(float(system.transfer_time_s(np.array([_unit_bytes(collective, n, size_bytes, split, held,
                                                                        q)]), band)[0]) for q in groups) * sub
            key = (not exact, t, g)
            if best is None or key < best[0]:
                best = (key, StagePlan(r, d, held, back, ahead, balanced, mode, g, band, colours, sub, exact))
        stages.append(best[1])
        held *= r
    return StagesPlan(n, rad, mode, split, halves, tuple(stages))
