"""Path lengths on an optical circuit switch's circuits: how far data can spread per circuit hop.

The terms of the kind's lower bound (:mod:`collsim.kinds.ocs.model`, docs/derivations/ocs-bound.md) that
count circuit hops in a digraph of bounded out-degree.

References
----------
M. Miller, J. Širáň, "Moore graphs and beyond: A survey of the degree/diameter problem", Electronic
Journal of Combinatorics, Dynamic Survey DS14, 2013 (the Moore bound).
"""

from __future__ import annotations


def moore_diameter(nodes: int, degree: int) -> int:
    """Least ``D`` with ``1 + k + ... + k^D >= N``: no digraph of out-degree ``k`` reaches N nodes sooner."""
    reached, level, depth = 1, 1, 0
    while reached < nodes:
        level *= degree
        reached += level
        depth += 1
    return depth


def moore_distance_sum(nodes: int, degree: int) -> int:
    """Least sum of distances from one node to the N-1 others in a digraph of out-degree ``k``.

    At most ``k^j`` nodes lie at distance ``j``: filling the levels in order gives the least sum.
    """
    left, level, depth, total = nodes - 1, 1, 0, 0
    while left > 0:
        level *= degree
        depth += 1
        take = min(level, left)
        total += depth * take
        left -= take
    return total


def spread_rounds(nodes: int, ports: int) -> int:
    """``ceil(log_{p+1} N)``: circuit hops before one node's data can reach all N (exact integers)."""
    h, reach = 0, 1
    while reach < nodes:
        reach *= ports + 1
        h += 1
    return h
