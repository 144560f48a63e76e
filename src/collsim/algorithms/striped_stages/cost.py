"""The closed-form time of a ``striped-stages`` plan, and the radices it chooses.

:func:`striped_stages_time_s` adds up every slot of a plan
(:mod:`collsim.algorithms.striped_stages.plan`) under collsim's optical step model;
:func:`choose_radices` (the default radices) and :func:`striped_stages_candidates`
(the ``tune=`` hook) rank the ordered factorisations of N by it, physically
feasible ones first.  Derivation: docs/derivations/striped-stages.md.
"""

from __future__ import annotations

import numpy as np

from ...core.collective import collective_type
from ...core.collectives import CollectiveType
from ...core.errors import UnsupportedError
from ...kinds.optical_ring.physical import max_feasible_hops
from .plan import (
    StagePlan,
    StagesPlan,
    _direct_colours,
    _piece_groups,
    _unit_bytes,
    arc_colours,
    ordered_factorisations,
    plan_stages,
)

__all__ = ["striped_stages_time_s", "choose_radices", "striped_stages_candidates"]


def _ranked(system, collective: CollectiveType, size_bytes: int, modes, max_factors: int) -> list[tuple]:
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


def choose_radices(system, collective: str | CollectiveType, size_bytes: int, stage: str = "pipeline") -> tuple[int, ...]:
    """Default radices: the fastest by closed-form time, physically feasible ones first.

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, §V-B (the depth chosen by time) and §IV-B
    (the longest feasible lightpath).
    """
    collective = collective_type(collective)
    return _ranked(system, collective, size_bytes, (stage,), 4)[0][1]


def striped_stages_candidates(system, collective: str | CollectiveType, size_bytes: int) -> list[dict]:
    """The ``tune=`` hook: radices and stage modes worth building and timing.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005 (choosing among algorithms per instance).
    """
    collective = collective_type(collective)
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


def _stage_slots(plan: StagesPlan, stage: StagePlan, collective: CollectiveType, size_bytes: int, system, j: int):
    """(busy seconds, signature) of each slot of one all-gather stage, in order."""
    n, split = plan.nodes, plan.split
    cap = system.fibers * (system.wavelengths // stage.band)

    def busy(half: bool, cls) -> np.ndarray:
        groups = ([g for h in range(plan.halves) for g in _piece_groups(split, plan.halves, stage.pieces, h)]
                  if half else _piece_groups(split, 1, stage.pieces, None))
        top = np.max([_unit_bytes(collective, n, size_bytes, split, stage.held, g, cls) for g in groups], axis=0)
        return np.broadcast_to(system.transfer_time_s(top, stage.band), (stage.substeps,)).tolist()

    uneven = bool(collective.composed_of) and size_bytes % (n * split) != 0   # all-reduce's N blocks
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


def striped_stages_time_s(system, collective: str | CollectiveType, size_bytes: int, radices,
                          stage: str = "pipeline") -> float:
    """Closed-form time of ``striped-stages`` under collsim's optical step model.

    References
    ----------
    F. Dai et al., OpTree, IEEE OJ-COMS 2024, eq. (3) and §V-A; collsim's step model
    (docs/cost-models.md).
    """
    collective = collective_type(collective)
    plan = plan_stages(system, collective, size_bytes, radices, stage)
    if not plan.exact:
        raise UnsupportedError("striped-stages: the transceiver limits split slots, so the closed form does "
                               "not apply (fewer channels per node than transfers per slot)")
    return _plan_time(plan, system, collective, size_bytes)


def _plan_time(plan: StagesPlan, system, collective: CollectiveType, size_bytes: int) -> float:
    slots = []
    for j, st in enumerate(plan.stages):
        slots += _stage_slots(plan, st, collective, size_bytes, system, j)
    if collective.reduction and not collective.composed_of:   # reduce-scatter: the all-gather's slots reversed
        slots = slots[::-1]
    elif collective.composed_of:                     # all-reduce: reduce-scatter, then all-gather
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
