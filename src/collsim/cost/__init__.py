"""Cost that serves every kind: the traffic a collective must carry (:mod:`.bounds`), the α–β
time of transfers on links (:mod:`.network`, the flow simulator's fixed and bandwidth terms),
the calibrated LogGP model (:mod:`.loggp`), :func:`block_steps` and :func:`bus_bandwidth`.

Each kind's own time model and lower bound live in its package under :mod:`collsim.kinds`
(the optical ring's step model and the papers' eq. 3: :mod:`collsim.kinds.optical_ring.cost`;
networks' cut and flow bounds: :mod:`collsim.kinds.network.bound`).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.collective import Collective
from ..core.repeated import weighted_sum
from ..core.schedule import Schedule
from .bounds import traffic_bound
from .network import alpha_beta_time_s


def block_steps(schedule: Schedule) -> float:
    """Time in the papers' unit: one block (``size_bytes``) on one channel.

    Per physical step, the largest ``bytes / channels`` of its transfers (a band of
    ``b`` wavelengths is ``b`` channels; a network flow is one), summed over steps and
    divided by the collective's ``size_bytes``.  Start-up, O/E/O, packet padding and
    reconfiguration are left out: this is the step count the papers' formulas give
    (Ring all-gather: N-1), comparable with their ``paper_steps``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.2 and Table 1 (steps in which each wavelength carries d).
    """
    if not len(schedule):
        return 0.0
    per = schedule.size_bytes / schedule.routes.channels()
    worst = np.zeros(schedule.num_steps)
    np.maximum.at(worst, schedule.step, per)
    return weighted_sum(worst, schedule) / schedule.collective.size_bytes


def bus_bandwidth(collective: Collective, time_s: float) -> tuple[float, float]:
    """Algorithm and bus bandwidth with nccl-tests' conventions.

    References
    ----------
    NVIDIA, nccl-tests, doc/PERFORMANCE.md (algorithm and bus bandwidth).
    """
    algbw = collective.total_bytes / time_s if time_s > 0 else math.inf   # the collective's own factors
    return algbw, algbw * collective.type.busbw_factor(collective.nodes)


__all__ = ["alpha_beta_time_s", "block_steps", "bus_bandwidth", "traffic_bound"]
