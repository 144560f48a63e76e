"""MSCCL executor limits checked from (algorithm, N, collective) alone, before anything is built.

The export gives every (rank, peer) pair a thread block holding both directions, and every
transfer between the two at least one step in it (one per contiguous run of its chunks), so a
thread block has at least as many steps as the pair has transfers, and a rank as many thread
blocks as it has peers (:mod:`.msccl_export`).  For the algorithms below both counts are closed
forms of N, so an export the executor cannot run is refused at once, naming the limit, instead
of after building, verifying and laying out a schedule of N^2 transfers (a ring all-reduce on
5000 ranks: 50 M transfers, killed at 15 GB).  An algorithm without a closed form here is
checked after building, as before.

The forms are lower bounds of what the export makes (``tests/test_kernel_kills.py`` compares
them with built schedules), so a refusal here is one the export would make too.
"""

from __future__ import annotations

from ...core.collectives import TYPES
from .errors import MscclLimitError
from .xml_model import MscclLimits

__all__ = ["PAIR_TRANSFERS", "PEERS", "check_msccl_limits", "msccl_lower_bounds"]


def _ring(n: int, coll: str) -> int | None:
    """N - 1 transfers per all-gather or reduce-scatter phase (all-reduce has both); None for others."""
    phases = TYPES[coll].phases
    return (n - 1) * len(phases) if all(p.per_node and not p.rooted for p in phases) else None


def _only(algorithm: str, f):
    """``f(N)`` for the collectives ``algorithm`` declares, else None."""
    def count(n: int, coll: str) -> int | None:
        from ...algorithms import get_algorithm
        return f(n) if coll in get_algorithm(algorithm).collectives else None
    return count


PAIR_TRANSFERS = {
    "ring": (_ring, "every transfer of rank v goes to v + 1"),
    "ring-personalized": (_only("ring-personalized", lambda n: n - 1), "every transfer of rank v goes to v + 1"),
    "ne": (_only("ne", lambda n: n // 2), "rank v alternates between its two neighbours"),
}
"""Algorithm -> (``f(N, collective)``: transfers between the busiest pair of ranks, or None; why)."""

PEERS = {
    "pairwise": (_only("pairwise", lambda n: n - 1), "every rank exchanges with every other"),
}
"""Algorithm -> (``f(N, collective)``: peers of a rank, one thread block each, or None; why)."""


def msccl_lower_bounds(algorithm: str, nodes: int, collective: str) -> tuple[int | None, int | None]:
    """Least steps of a thread block and least thread blocks of a gpu the export of this instance makes."""
    steps = PAIR_TRANSFERS[algorithm][0](nodes, collective) if algorithm in PAIR_TRANSFERS else None
    tbs = PEERS[algorithm][0](nodes, collective) if algorithm in PEERS else None
    return steps, tbs


def check_msccl_limits(algorithm: str, nodes: int, collective: str, limits: MscclLimits = MscclLimits()) -> None:
    """Refuse, before building, an export whose closed-form counts exceed the executor's limits."""
    steps, tbs = msccl_lower_bounds(algorithm, nodes, collective)
    if steps is not None and steps > limits.max_steps:
        raise MscclLimitError(
            f"{algorithm} {collective} on {nodes} gpus needs at least {steps} steps in one thread block "
            f"({PAIR_TRANSFERS[algorithm][1]}, one step each), above the executor's limit of {limits.max_steps} "
            f"steps per thread block (--max-steps; 64 in msccl-executor-nccl, 256 in RCCL); refused before building")
    if tbs is not None and tbs > limits.max_thread_blocks:
        raise MscclLimitError(
            f"{algorithm} {collective} on {nodes} gpus needs {tbs} thread blocks per gpu ({PEERS[algorithm][1]}, "
            f"one thread block per peer), above the executor's limit of {limits.max_thread_blocks} thread blocks "
            f"per gpu (--max-thread-blocks); refused before building")


def precheck_export(algorithm: str, system, collective: str, overrides: dict | None = None,
                    limits: MscclLimits = MscclLimits()) -> None:
    """What ``collsim export msccl ALGORITHM`` checks before building: :func:`check_msccl_limits`."""
    from ...algorithms import get_algorithm
    from ...core.collective import canonical_collective
    from ...core.errors import CollsimError
    from ...core.plugins import supports
    from ...systems import load_system
    try:
        spec = get_algorithm(algorithm)
        coll = canonical_collective(collective)
        sysm = load_system(system, **(overrides or {}))
        if not supports(sysm, "msccl"):
            return
        spec.check(sysm, coll)
    except CollsimError:
        return  # building reports it, as without this check
    check_msccl_limits(spec.name, sysm.nodes, coll, limits)
