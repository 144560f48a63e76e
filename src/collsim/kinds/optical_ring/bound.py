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

    Parameters
    ----------
    system : OpticalRing
        The ring.
    c : Collective
        The collective.

    Returns
    -------
    float
        ``t_reconf + t_slot + tau * max(recv/R, send/T, hop_bytes/(2 N F w))`` with
        ``tau = 1/B + t_oeo/flit`` seconds per byte per channel and ``t_slot`` the
        per-slot latency, charged once: every schedule has at least one slot.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    eq. (3) (``d/B`` per step plus the O/E/O and MRR delays ``a``) and §V-A (parameters).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> ring = OpticalRing(nodes=4, wavelengths=1, mrr_reconfig_s=0, oeo_cycles_per_flit=0)
    >>> optical_lower_bound_s(ring, make_collective("allgather", 4, 5_000_000_000))
    1.5
    """
    t = traffic_bound(c)
    tau = 1.0 / system.bandwidth_bytes_per_s + system.oeo_s_per_flit / system.flit_bytes
    channels = 2 * system.nodes * system.channels_per_direction
    load = max(t.recv_bytes / system.rx_channels, t.send_bytes / system.tx_channels,
               t.hop_bytes_ring / channels)
    return system.mrr_reconfig_s + system.slot_latency_s + tau * load
