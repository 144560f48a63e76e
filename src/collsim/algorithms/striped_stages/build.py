"""The ``striped-stages`` builder: a plan's stages as explicit transfers, with pre-assigned channels.

Every stage of the plan (:mod:`collsim.algorithms.striped_stages.plan`) becomes its
transfers: pipeline transfers from node x take channel class ``x mod d_j``, direct
transfers the class of their arc on the stride ring; reduce-scatter runs the
all-gather's rounds backwards, all-reduce is reduce-scatter then all-gather.
Derivation: docs/derivations/striped-stages.md.
"""

from __future__ import annotations

import numpy as np

from ...core.collective import make_collective
from ...core.collectives import CollectiveType
from ...core.schedule import LogicalBuilder
from ...core.symmetry import Translations
from ..registry import register
from .cost import choose_radices, striped_stages_candidates
from .plan import STAGE_MODES, StagesPlan, arc_colours, parse_radices, plan_stages

__all__ = ["striped_stages"]


def _chunks(blocks: np.ndarray, pieces: np.ndarray, split: int) -> np.ndarray:
    """(T, D*|pieces|) chunk ids of units given as (T, D) block ids."""
    return (blocks[:, :, None] * split + pieces[None, None, :]).reshape(len(blocks), -1)


def _colour(cls: np.ndarray, g: int, pieces: int, per_fiber: int) -> np.ndarray:
    """Channel colour of a transfer of class ``cls``: piece g on fiber g, or the class itself."""
    return cls + g * per_fiber if pieces > 1 else cls


def _stage_blocks(plan: StagesPlan, j: int, first_round: int, w: int, f: int, into: tuple[str, int] | None = None):
    """Yield (round, src, dst, chunks, direction, colour, band) blocks of all-gather stage j.

    ``into = ("dst", D)`` (or ``("src", D)``) makes only the pipeline transfers whose receiver (or
    sender) is below ``D``: a symmetric schedule's representatives, without the other nodes' rows."""
    st = plan.stages[j]
    n, d, held, split = plan.nodes, st.stride, st.held, plan.split
    delta = n // held
    member = np.arange(held) * delta
    x = np.arange(n)
    per_fiber = w // st.band
    per = split // st.pieces
    cap = f * per_fiber
    rounds = max(st.back, st.ahead)
    if st.mode == "pipeline":
        for direction, count in ((1, st.back), (-1, st.ahead)):
            if count == 0:
                continue
            xs = x
            if into is not None:  # the senders whose transfers end (or start) below D, in order
                xs = np.arange(into[1]) if into[0] == "src" else np.sort((np.arange(into[1]) - direction * d) % n)
            q = np.repeat(np.arange(count), len(xs))                         # round within the group
            src = np.tile(xs, count)
            owner = (src - direction * q * d) % n                             # unit forwarded in round q
            blocks = (owner[:, None] + member[None, :]) % n
            group = (src % d) // cap if st.substeps > 1 else 0                # classes take turns by groups
            cls = src % d - group * cap
            rnd = first_round + group * rounds + q
            full = q < (count - 1 if st.balanced else count)                  # balanced: the last round is halves
            for g in range(st.pieces):
                chunk = np.arange(g * per, (g + 1) * per)
                for rows, pieces in ((full, chunk), (~full, chunk[(0 if direction > 0 else 1)::plan.halves])):
                    if rows.any():
                        yield (rnd[rows], src[rows], (src[rows] + direction * d) % n,
                               _chunks(blocks[rows], pieces, split), direction,
                               _colour(cls[rows], g, st.pieces, per_fiber), st.band)
        return
    p = n // d
    off, col, total = arc_colours(p, st.ahead)
    coset, z = x % d, x // d
    blocks = (x[:, None] + member[None, :]) % n
    for direction, count in ((1, st.back), (-1, st.ahead)):
        for t in range(1, count + 1):
            start = z if direction > 0 else (z - t) % p                      # the arc's clockwise start
            cls = coset * total + off[t - 1] + col[t - 1, start]
            group = cls // cap                                                # classes take turns by groups
            cls = cls - group * cap
            for g in range(st.pieces):
                yield (first_round + group, x, (x + direction * t * d) % n,
                       _chunks(blocks, np.arange(g * per, (g + 1) * per), split), direction,
                       _colour(cls, g, st.pieces, per_fiber), st.band)


def _plan(system, collective: CollectiveType, size_bytes, radices, stage: str):
    n = system.nodes
    if stage not in STAGE_MODES:
        plan_stages(system, collective, size_bytes, (n,), stage)          # raises the InputError
    rad = parse_radices(n, radices) if radices is not None else choose_radices(system, collective, size_bytes, stage)
    return rad, plan_stages(system, collective, size_bytes, rad, stage)


def _orbits(system, collective: CollectiveType, size_bytes, *, radices=None, stage: str = "pipeline"):
    """The transfers into nodes ``0..d_1-1``: pipeline stages are invariant under rotations by multiples
    of the longest stride ``d_1`` (every stride divides it, and a transfer's channel class is its
    sender mod its stride).  Direct stages colour arcs by position: not invariant."""
    if stage != "pipeline":
        return None
    n = system.nodes
    _, plan = _plan(system, collective, size_bytes, radices, stage)
    d = plan.stages[0].stride
    group = Translations((n,)) if d == 1 else Translations((n // d, d), moving=(True, False))
    return (*_build(system, collective, size_bytes, radices, stage, receivers=d), group)


def _build(system, collective: CollectiveType, size_bytes, radices, stage: str, receivers: int | None = None):
    n = system.nodes
    rad, plan = _plan(system, collective, size_bytes, radices, stage)
    split = plan.split * (n if collective.composed_of else 1)   # all-reduce: N blocks
    b = LogicalBuilder(make_collective(collective, n, size_bytes, split=split, explicit=receivers is None),
                       receivers=receivers)
    rounds = sum(s.rounds for s in plan.stages)

    def stage_blocks(into):
        blocks, first = [], 0
        for j, st in enumerate(plan.stages):
            blocks += list(_stage_blocks(plan, j, first, system.wavelengths, system.fibers, into))
            first += st.rounds
        return blocks

    blocks = stage_blocks(None) if receivers is None else None
    shift = 0
    for phase in collective.phases:   # all-reduce: reduce-scatter, then all-gather
        if receivers is not None:  # representatives: the rows into nodes 0..D-1 (reversed: from them)
            blocks = stage_blocks(("src" if phase.reduction else "dst", receivers))
        if phase.reduction:   # the all-gather's rounds reversed, every transfer reducing
            for rnd, src, dst, chunks, direction, colour, band in blocks:
                b.add(rounds - 1 - rnd, dst, src, chunks, reduce=True, direction=-direction, color=colour, band=band)
            shift = rounds
        else:
            for rnd, src, dst, chunks, direction, colour, band in blocks:
                b.add(rnd + shift, src, dst, chunks, direction=direction, color=colour, band=band)
    params = {"radices": "x".join(map(str, rad)), "stage": stage,
              "strides": [s.stride for s in plan.stages], "bands": [s.band for s in plan.stages],
              "pieces": [s.pieces for s in plan.stages]}
    return b.build(), params


@register(
    "striped-stages", collectives=("allgather", "reducescatter", "allreduce"), systems=("optical-ring",),
    aliases=("striped-multistage",), params=("radices", "stage"), tune=striped_stages_candidates, orbits=_orbits,
    reference="[OpTree24] §IV-A (stages of all-to-alls over strided subsets); [Patarasuk09] (ring pipelines, "
              "all-reduce as reduce-scatter then all-gather); [Bruck97] (mixed-radix stages); striping every "
              "stage over the channels left free, the windows and the balancing are collsim's own",
    summary="mixed-radix stages of ring pipelines (or direct sends), each over bands of the free channels",
)
def striped_stages(system, collective: CollectiveType, size_bytes, *, radices=None, stage: str = "pipeline"):
    """Build striped multi-stage all-gather, reduce-scatter or all-reduce schedules.

    Chunk ``s b + p`` is piece ``p`` of block ``b`` (``s = halves * F`` pieces per
    block; all-reduce cuts the vector into N blocks).  All channels are pre-assigned:
    pipeline transfers from node x take class ``x mod d_j``; direct transfers take
    the class of their arc in :func:`~collsim.algorithms.striped_stages.plan.arc_colours`
    on the stride ring, offset by ``x mod d_j``; with one piece per fiber, piece p is on
    fiber p.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size m.
    radices : str or sequence of int, optional
        Stage radices in order, product N (``"32x32"`` or ``(32, 32)``); default
        :func:`choose_radices`.
    stage : str, optional
        ``pipeline`` (default) or ``direct``.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)`` with ``radices`` (``"32x32"``), ``stage``, the
        per-stage ``strides``, ``bands`` and ``pieces``.

    Raises
    ------
    InputError
        For bad radices or an unknown stage mode.

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, §IV-A; P. Patarasuk, X. Yuan, JPDC 69(2),
    2009.  The striping over free channels is collsim's own.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("striped-stages", "paper", "allgather", "1MiB", nodes=16, radices="4x4")
    >>> verify(s).steps, sorted(set(s.band.tolist())), int(s.hops.max())
    (4, [16, 64], 4)
    """
    return _build(system, collective, size_bytes, radices, stage)
