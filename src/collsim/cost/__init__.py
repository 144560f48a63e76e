"""Cost models: closed forms and lower bounds (the flow simulator lives in collsim.sim)."""

from __future__ import annotations

import math

from ..core.collective import Collective
from ..core.schedule import Schedule
from .bounds import optical_lower_bound_s, traffic_bound
from .network import alpha_beta_time_s, network_lower_bound_s
from .optical import paper_time_s, step_times


def schedule_time_s(schedule: Schedule) -> float:
    """Time of a schedule under collsim's closed-form model for its system.

    Optical rings use the optical step model; electrical networks the
    congestion-unaware α–β model (the flow simulator is :mod:`collsim.sim`).

    Parameters
    ----------
    schedule : Schedule
        A verified schedule.

    Returns
    -------
    float
        Seconds.
    """
    if schedule.system.optical:
        return step_times(schedule).total_s
    return alpha_beta_time_s(schedule)


def lower_bound_s(system, collective: Collective) -> float:
    """Lower bound on the time of ``collective`` on ``system``.

    Parameters
    ----------
    system : System
        The system.
    collective : Collective
        The collective instance (kind, nodes, size).

    Returns
    -------
    float
        Seconds; no schedule can be faster under collsim's model for the system.
    """
    if system.optical:
        return optical_lower_bound_s(system, collective)
    return network_lower_bound_s(system, collective)


def bus_bandwidth(collective: Collective, time_s: float) -> tuple[float, float]:
    """Algorithm and bus bandwidth with nccl-tests' conventions.

    Parameters
    ----------
    collective : Collective
        The collective (kind, nodes, size).
    time_s : float
        Measured or modelled time.

    Returns
    -------
    tuple of float
        ``(algbw_bytes_per_s, busbw_bytes_per_s)``: algbw = S/t with S the nccl-tests
        size (N*m for all-gather, reduce-scatter and all-to-all, m otherwise), busbw =
        algbw times 2(N-1)/N (all-reduce), (N-1)/N (all-gather, reduce-scatter,
        all-to-all) or 1 (broadcast, reduce).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> bus_bandwidth(make_collective("allreduce", 4, 1000), 1.0)
    (1000.0, 1500.0)
    """
    spec = collective.spec
    size = collective.size_bytes * (collective.nodes if spec.nccl_size_factor == "n" else 1)
    algbw = size / time_s if time_s > 0 else math.inf
    return algbw, algbw * spec.busbw_factor(collective.nodes)


__all__ = ["alpha_beta_time_s", "bus_bandwidth", "network_lower_bound_s", "lower_bound_s", "paper_time_s", "schedule_time_s", "step_times", "traffic_bound"]
