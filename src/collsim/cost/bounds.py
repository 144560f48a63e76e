"""Lower bounds on collective time (derivations: docs/derivations/lower-bounds.md).

For each collective we bound, over all possible schedules, the bytes some node
must receive, the bytes some node must send, and the bytes that must cross
links in total (:func:`traffic_bound`); each kind divides them by the channels it
has (the optical ring: :func:`collsim.kinds.optical_ring.bound.optical_lower_bound_s`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.collective import Collective


@dataclass(frozen=True)
class TrafficBound:
    """Minimum traffic any schedule of a collective must carry (see :func:`traffic_bound`).

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007 (lower bounds per collective).
    """

    recv_bytes: float
    send_bytes: float
    hop_bytes_ring: float


def ring_distance_sum(n: int) -> int:
    """Sum over ordered pairs of the shortest ring distance.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Table 1: the One-Stage model's ``ceil(N^2 / 8w)`` steps, this sum spread over the
    ``2 N w`` link-channels of a bidirectional ring.
    """
    return n * (n * n // 4)


def traffic_bound(c: Collective) -> TrafficBound:
    """Traffic every schedule of ``c`` must carry (no in-network reduction).

    Notes
    -----
    All-gather: every node lacks N-1 blocks.  Reduce-scatter: per element, the N-1
    foreign contributions must each leave their node (a gather tree has N-1
    edges).  Scatter/gather: the root sends (receives) N-1 blocks.  Scan: every node
    but node 0 needs node 0's contribution.  Shift: each block crosses at least
    min(q, N-q) ring links.  All-reduce: per element, the minimum number of one-way calls that
    complete gossip among N nodes is 2N-2 (Harary & Schwenk 1974), so 2(N-1)S bytes
    are received in total and some node receives at least 2(N-1)S/N.  All-to-all:
    N-1 blocks in and out per node; on a ring each block crosses its shortest
    distance.

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007; P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce
    algorithms for clusters of workstations", JPDC 69(2), 2009 (all-reduce); F. Harary,
    A. J. Schwenk, "The communication problem on graphs and digraphs", Journal of the
    Franklin Institute 297, 1974 (one-way gossip).
    """
    return TrafficBound(*c.type.traffic(c.nodes, float(c.size_bytes), c.shift))   # the collective's own volumes
