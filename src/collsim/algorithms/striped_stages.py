"""Striped multi-stage schedules on the optical ring: OpTree-like stages over every free channel.

A radix vector ``(r_1, ..., r_k)`` with product N defines k stages; stage j has
stride ``d_j = N / (r_1 ... r_j)`` (stage 1 the longest, the last stride 1).  Before
stage j node x holds the blocks of one residue class mod ``d_{j-1}`` (``D_j = r_1 ...
r_{j-1}`` blocks, its *unit*); in stage j it gathers the units of ``x + t d_j`` for t in
the window ``[-a_j, b_j]``, ``a_j = floor((r_j - 1)/2)``, ``b_j = r_j - 1 - a_j``.

* ``pipeline`` (default): two ring pipelines on the stride-``d_j`` ring, clockwise for
  ``a_j`` rounds and counter-clockwise for ``b_j``; in round q every node forwards the
  unit it received in round q-1.  Every lightpath is ``d_j`` hops, every link carries
  ``d_j`` of them per direction, so each transfer gets a band of about ``F w / d_j``
  wavelengths.  Stage 1 with ``r_1`` even runs ``r_1/2`` rounds both ways, the last one
  carrying half of the unit each way.
* ``direct``: every node sends its unit to all ``r_j - 1`` window members at once, over
  bands as wide as the stage's link load allows (exact circular-arc colouring).

Reduce-scatter runs the all-gather's rounds backwards with the transfers reversed and
reduced at the receiver; all-reduce is reduce-scatter then all-gather over N blocks.
Default radices: the smallest closed-form time (:func:`striped_stages_time_s`) among the
ordered factorisations of N into at most four factors, physically feasible ones first.
Derivation and measurements: docs/derivations/striped-stages.md.

References
----------
F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024, §IV-A (stages of all-to-alls); P. Patarasuk, X. Yuan, "Bandwidth Optimal
All-reduce Algorithms for Clusters of Workstations", JPDC 69(2), 2009 (ring pipelines,
all-reduce as reduce-scatter then all-gather); J. Bruck et al., "Efficient algorithms for
all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997
(mixed-radix stages).  Striping every stage over the free channels is collsim's own
construction (issue #13).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.errors import UnsupportedError
from ..core.schedule import LogicalBuilder
from ..physical import max_feasible_hops
from .registry import register
from .striped_stages_plan import (STAGE_MODES, StagePlan, StagesPlan, _direct_colours, _piece_groups, _unit_bytes,
                                  arc_colours, ordered_factorisations, parse_radices, plan_stages)

__all__ = ["striped_stages", "striped_stages_time_s", "choose_radices", "striped_stages_candidates"]


def _ranked(system, collective: str, size_bytes: int, modes, max_factors: int) -> list[tuple]:
    """(sort key, radices, mode) of every candidate, best first."""
    n = system.nodes
    hops = max_feasible_hops(system.physical_params())
    out = []
    for rad in ordered_factorisations(n, max_factors):
        for mode in modes:
            plan = plan_stages(system, collective, size_bytes, rad, mode)
            t = _plan_time(plan, system, collective, size_bytes)
            out.append(((plan.max_hops > hops, not plan.exact, t, len(rad), rad, mode), rad, mode))
    out.sort(key=lambda e: e[0])
    return out


def choose_radices(system, collective: str, size_bytes: int, stage: str = "pipeline") -> tuple[int, ...]:
    """Default radices: the fastest by closed-form time, physically feasible ones first.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : str
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size.
    stage : str, optional
        ``pipeline`` or ``direct``.

    Returns
    -------
    tuple of int
        Among the ordered factorisations of N into at most four factors, the one whose
        plan has no lightpath longer than ``max_feasible_hops`` (if any has none) and the
        smallest :func:`striped_stages_time_s`; ties: fewer stages, then lexicographic.

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, §V-B (the depth chosen by time) and §IV-B
    (the longest feasible lightpath).

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> choose_radices(OpticalRing(nodes=64, wavelengths=8), "allgather", 1 << 20)
    (64,)
    >>> choose_radices(OpticalRing(nodes=64, wavelengths=8, slot_latency_s=1e-5), "allgather", 1024)
    (8, 8)
    """
    return _ranked(system, collective, size_bytes, (stage,), 4)[0][1]


def striped_stages_candidates(system, collective: str, size_bytes: int) -> list[dict]:
    """The ``tune=`` hook: radices and stage modes worth building and timing.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : str
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size.

    Returns
    -------
    list of dict
        Up to 12 ``{"radices": ..., "stage": ...}``: among the ordered factorisations of N
        into one to three factors, the best nine in ``pipeline`` mode and the best three in
        ``direct`` mode, ranked (physically feasible ones, longest lightpath
        ``<= max_feasible_hops``, first; then closed-form time) and merged in that order.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005 (choosing among algorithms per instance).

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> striped_stages_candidates(OpticalRing(nodes=6, wavelengths=4), "allgather", 1 << 20)[:2]
    [{'radices': (6,), 'stage': 'pipeline'}, {'radices': (2, 3), 'stage': 'pipeline'}]
    """
    pipe = _ranked(system, collective, size_bytes, ("pipeline",), 3)[:9]
    direct = _ranked(system, collective, size_bytes, ("direct",), 3)[:3]
    return [{"radices": rad, "stage": mode} for _, rad, mode in sorted(pipe + direct, key=lambda e: e[0])]


def _substep_classes(plan: StagesPlan, stage: StagePlan, cap: int, uneven: bool) -> list[int]:
    """Smallest unit class (mod ``N / held``) sent in each sub-step (group of classes) of a stage."""
    if stage.substeps == 1:
        return [0]
    if not uneven:                    # equal chunks: every unit has the same bytes
        return [0] * stage.substeps
    if stage.mode == "pipeline":      # group k: senders x with x mod d in [k cap, (k+1) cap)
        return [k * cap for k in range(stage.substeps)]
    n, d = plan.nodes, stage.stride
    p = n // d
    off, col, total = arc_colours(p, stage.ahead)
    x = np.arange(n)
    cls = x % (n // stage.held)
    low = np.full(stage.substeps, n, np.int64)
    for direction, count in ((1, stage.back), (-1, stage.ahead)):
        for t in range(1, count + 1):
            start = x // d if direction > 0 else (x // d - t) % p
            np.minimum.at(low, ((x % d) * total + off[t - 1] + col[t - 1, start]) // cap, cls)
    return low.tolist()


def _stage_slots(plan: StagesPlan, stage: StagePlan, collective: str, size_bytes: int, system, j: int):
    """(busy seconds, signature) of each slot of one all-gather stage, in order."""
    n, split = plan.nodes, plan.split
    cap = system.fibers * (system.wavelengths // stage.band)

    def busy(half: bool, cls) -> np.ndarray:
        groups = ([g for h in range(plan.halves) for g in _piece_groups(split, plan.halves, stage.pieces, h)]
                  if half else _piece_groups(split, 1, stage.pieces, None))
        top = np.max([_unit_bytes(collective, n, size_bytes, split, stage.held, g, cls) for g in groups], axis=0)
        return np.broadcast_to(system.transfer_time_s(top, stage.band), (stage.substeps,)).tolist()

    uneven = collective == "allreduce" and size_bytes % (n * split) != 0
    classes = np.asarray(_substep_classes(plan, stage, cap, uneven)) if uneven else np.zeros(1, np.int64)
    full = busy(False, classes)
    if stage.mode == "direct":        # one round, its sub-steps in turn
        return [(full[k], (j, k, True)) for k in range(stage.substeps)]
    half = busy(True, classes) if stage.balanced else full
    rounds = max(stage.back, stage.ahead)
    out = []
    for group in range(stage.substeps):   # each group of classes runs the whole pipeline in turn
        for q in range(rounds):
            times = half if stage.balanced and q == rounds - 1 else full
            out.append((times[group], (j, group, q < stage.back and q < stage.ahead)))
    return out


def striped_stages_time_s(system, collective: str, size_bytes: int, radices, stage: str = "pipeline") -> float:
    """Closed-form time of ``striped-stages`` under collsim's optical step model.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : str
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size m.
    radices : str or sequence of int
        Stage radices.
    stage : str, optional
        ``pipeline`` (default) or ``direct``.

    Returns
    -------
    float
        ``sum over slots of (t_transfer + t_slot) + t_r * reconfigurations``: every slot
        lasts its largest transfer, ``wire(q)/(bB) + ceil(ceil(q/flit)/b) t_oeo``;
        a slot reconfigures when it starts a stage or a group of channel classes, when a
        pipeline group's counter-clockwise tail begins, and in every sub-step of a direct
        stage (docs/derivations/striped-stages.md).  All-reduce is the reversed stages then
        the stages; its two middle slots share their lightpaths when stage 1's window is
        symmetric.

    Raises
    ------
    UnsupportedError
        If a transceiver limit forces the realisation to split slots (the plan is then
        not exact: fewer channels per node than transfers per slot).

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, eq. (3) and §V-A; collsim's step model
    (docs/cost-models.md).

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> ring = OpticalRing(nodes=16, wavelengths=8)
    >>> round(striped_stages_time_s(ring, "allgather", 4096, "4x4") * 1e6, 4)
    76.6576
    """
    plan = plan_stages(system, collective, size_bytes, radices, stage)
    if not plan.exact:
        raise UnsupportedError("striped-stages: the transceiver limits split slots, so the closed form does "
                               "not apply (fewer channels per node than transfers per slot)")
    return _plan_time(plan, system, collective, size_bytes)


def _plan_time(plan: StagesPlan, system, collective: str, size_bytes: int) -> float:
    slots = []
    for j, st in enumerate(plan.stages):
        slots += _stage_slots(plan, st, collective, size_bytes, system, j)
    if collective == "reducescatter":
        slots = slots[::-1]
    elif collective == "allreduce":
        first = plan.stages[0]
        cap = system.fibers * (system.wavelengths // first.band)
        # group 0 of a direct stage holds no longest arc when those colours come after it
        merge = first.back == first.ahead or _direct_colours(first.radix, first.ahead - 1) >= cap
        # reversed, stage 1's two-way rounds have the same lightpaths as the all-gather's
        rs = [(b, s if merge and s[0] == 0 else ("rs",) + s) for b, s in slots[::-1]]
        slots = rs + slots
    busy = sum(b for b, _ in slots)
    reconf = sum(1 for i, (_, s) in enumerate(slots) if i == 0 or s != slots[i - 1][1])
    return float(busy + reconf * system.mrr_reconfig_s + len(slots) * system.slot_latency_s)


def _chunks(blocks: np.ndarray, pieces: np.ndarray, split: int) -> np.ndarray:
    """(T, D*|pieces|) chunk ids of units given as (T, D) block ids."""
    return (blocks[:, :, None] * split + pieces[None, None, :]).reshape(len(blocks), -1)


def _colour(cls: np.ndarray, g: int, pieces: int, per_fiber: int) -> np.ndarray:
    """Channel colour of a transfer of class ``cls``: piece g on fiber g, or the class itself."""
    return cls + g * per_fiber if pieces > 1 else cls


def _stage_blocks(plan: StagesPlan, j: int, first_round: int, w: int, f: int):
    """Yield (round, src, dst, chunks, direction, colour, band) blocks of all-gather stage j."""
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
            q = np.repeat(np.arange(count), n)                               # round within the group
            src = np.tile(x, count)
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


@register(
    "striped-stages", collectives=("allgather", "reducescatter", "allreduce"), systems=("optical-ring",),
    aliases=("striped-multistage",), params=("radices", "stage"), tune=striped_stages_candidates,
    reference="[OpTree24] §IV-A (stages of all-to-alls over strided subsets); [Patarasuk09] (ring pipelines, "
              "all-reduce as reduce-scatter then all-gather); [Bruck97] (mixed-radix stages); striping every "
              "stage over the channels left free, the windows and the balancing are collsim's own (issue #13)",
    summary="mixed-radix stages of ring pipelines (or direct sends), each over bands of the free channels",
)
def striped_stages(system, collective, size_bytes, *, radices=None, stage: str = "pipeline"):
    """Build striped multi-stage all-gather, reduce-scatter or all-reduce schedules.

    Chunk ``s b + p`` is piece ``p`` of block ``b`` (``s = halves * F`` pieces per
    block; all-reduce cuts the vector into N blocks).  All channels are pre-assigned:
    pipeline transfers from node x take class ``x mod d_j``; direct transfers take
    the class of their arc in :func:`~collsim.algorithms.striped_stages_plan.arc_colours`
    on the stride ring, offset by ``x mod d_j``; with one piece per fiber, piece p is on
    fiber p.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : str
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
    n = system.nodes
    if stage not in STAGE_MODES:
        plan_stages(system, collective, size_bytes, (n,), stage)          # raises the InputError
    rad = parse_radices(n, radices) if radices is not None else choose_radices(system, collective, size_bytes, stage)
    plan = plan_stages(system, collective, size_bytes, rad, stage)
    split = plan.split * (n if collective == "allreduce" else 1)
    b = LogicalBuilder(make_collective(collective, n, size_bytes, split=split))
    rounds = sum(s.rounds for s in plan.stages)
    blocks = []
    first = 0
    for j, st in enumerate(plan.stages):
        blocks += list(_stage_blocks(plan, j, first, system.wavelengths, system.fibers))
        first += st.rounds
    if collective in ("reducescatter", "allreduce"):
        for rnd, src, dst, chunks, direction, colour, band in blocks:
            b.add(rounds - 1 - rnd, dst, src, chunks, reduce=True, direction=-direction, color=colour, band=band)
    if collective in ("allgather", "allreduce"):
        shift = rounds if collective == "allreduce" else 0
        for rnd, src, dst, chunks, direction, colour, band in blocks:
            b.add(rnd + shift, src, dst, chunks, direction=direction, color=colour, band=band)
    params = {"radices": "x".join(map(str, rad)), "stage": stage,
              "strides": [s.stride for s in plan.stages], "bands": [s.band for s in plan.stages],
              "pieces": [s.pieces for s in plan.stages]}
    return b.build(), params
