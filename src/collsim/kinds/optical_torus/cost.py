"""Lower bound on any schedule's time on an optical torus (derivation: docs/optical-torus.md).

Three arguments, each under collsim's optical step model (a channel moves one
byte per ``tau = 1/B + t_oeo/flit`` seconds, every schedule pays one MRR
configuration and a per-slot latency per slot):

* **node ingress / egress**: some node must receive ``recv`` bytes (send
  ``send``) and sinks at most ``rx_channels`` lightpaths per slot (sources
  ``tx_channels``): ``2 F w`` with shared transceivers, ``4 F w`` without;
* **link capacity**: ``hop_bytes`` bytes x links must cross the ``2 N`` directed
  links of each dimension of size >= 2, ``F w`` channels each.  Every delivered byte
  crosses at least one link; for all-to-all (and shift) every byte crosses its
  torus distance (the row distance plus the column distance);
* **two slots**: when both sides are >= 2, a block of node ``(r, c)`` reaches
  ``(r', c')`` (``r' != r``, ``c' != c``) only through a third node, which forwards it
  in a later slot: all-gather, all-reduce, all-to-all and broadcast take at least
  two slots, each paying ``slot_latency_s`` (so does every collective but some
  shifts: each needs data from a node outside the receiver's row and column).
"""

from __future__ import annotations

import numpy as np

from ...core.collective import Collective
from ...cost.bounds import ring_distance_sum, traffic_bound

__all__ = ["torus_distance_sum", "torus_hop_bytes", "torus_lower_bound_s", "torus_min_slots"]


def torus_distance_sum(rows: int, cols: int) -> int:
    """Sum over ordered pairs of nodes of the torus distance (row plus column ring distances).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, Table 1 (the ring's distance sum behind the One-Stage model).
    """
    return cols * cols * ring_distance_sum(rows) + rows * rows * ring_distance_sum(cols)


def torus_hop_bytes(system, c: Collective) -> float:
    """Bytes x links that any schedule of ``c`` must carry on the torus.

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007 (lower bounds per collective).
    """
    m = float(c.size_bytes)
    if c.type.per_pair:   # all-to-all: one block per ordered pair, in closed form
        return torus_distance_sum(system.rows, system.cols) * m
    if c.type.point_to_point:   # one block per node, to its own destination
        a, dst = c.type.endpoints(system.nodes, c.shift)
        ra, ca = np.divmod(a, system.cols)
        rb, cb = np.divmod(dst, system.cols)
        dr, dc = (rb - ra) % system.rows, (cb - ca) % system.cols
        dist = np.minimum(dr, system.rows - dr) + np.minimum(dc, system.cols - dc)
        return float(dist.sum()) * m
    return traffic_bound(c).hop_bytes_ring


def torus_min_slots(system, c: Collective) -> int:
    """Fewest slots any schedule of ``c`` needs on the torus (module docstring).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §VI-B (rows, then columns).
    """
    if system.rows < 2 or system.cols < 2:
        return 1
    if c.type.shifted:
        a, dst = c.type.endpoints(system.nodes, c.shift)
        _, _, _, _, _, ok = system.ring_coords(a, dst)
        return 1 if ok.all() else 2
    return 2


def torus_lower_bound_s(system, c: Collective) -> float:
    """Lower bound on any schedule's time on an optical torus under collsim's optical model.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, eq. (3) (``d/B`` per step plus the O/E/O and MRR delays) and §VI-B.
    """
    t = traffic_bound(c)
    tau = 1.0 / system.bandwidth_bytes_per_s + system.oeo_s_per_flit / system.flit_bytes
    channels = system.link_count * system.channels_per_direction
    load = max(t.recv_bytes / system.rx_channels, t.send_bytes / system.tx_channels,
               torus_hop_bytes(system, c) / channels)
    return system.mrr_reconfig_s + torus_min_slots(system, c) * system.slot_latency_s + tau * load
