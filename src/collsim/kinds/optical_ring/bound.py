"""The optical ring's lower bound (derivations: docs/derivations/lower-bounds.md).

The traffic every schedule of a collective must carry (:func:`collsim.cost.bounds.traffic_bound`)
divided by the ring's channels: every channel moves one byte per ``1/B + t_oeo/flit`` seconds,
and every schedule pays at least one MRR configuration and one per-slot latency
(``slot_latency_s``: it has at least one slot).
"""

from __future__ import annotations


from ...core.collective import Collective
from ...cost.bounds import traffic_bound
from .system import OpticalRing


def optical_lower_bound_s(system: OpticalRing, c: Collective) -> float:
    """Lower bound on any schedule's time under collsim's optical model.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    eq. (3) (``d/B`` per step plus the O/E/O and MRR delays ``a``) and §V-A (parameters).
    """
    t = traffic_bound(c)
    tau = 1.0 / system.bandwidth_bytes_per_s + system.oeo_s_per_flit / system.flit_bytes
    channels = 2 * system.nodes * system.channels_per_direction
    load = max(t.recv_bytes / system.rx_channels, t.send_bytes / system.tx_channels,
               t.hop_bytes_ring / channels)
    return system.mrr_reconfig_s + system.slot_latency_s + tau * load
