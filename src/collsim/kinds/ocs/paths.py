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
    """Least ``D`` with ``1 + k + ... + k^D >= N``: no digraph of out-degree ``k`` reaches N nodes sooner.

    Parameters
    ----------
    nodes : int
        N.
    degree : int
        Out-degree ``k >= 1``.

    Returns
    -------
    int
        The Moore bound on the eccentricity of every node (0 for one node).

    Examples
    --------
    >>> moore_diameter(8, 1), moore_diameter(8, 2), moore_diameter(8, 7), moore_diameter(8, 100)
    (7, 3, 1, 1)
    """
    reached, level, depth = 1, 1, 0
    while reached < nodes:
        level *= degree
        reached += level
        depth += 1
    return depth


def moore_distance_sum(nodes: int, degree: int) -> int:
    """Least sum of distances from one node to the N-1 others in a digraph of out-degree ``k``.

    At most ``k^j`` nodes lie at distance ``j``: filling the levels in order gives the least sum.

    Parameters
    ----------
    nodes, degree : int
        N and ``k``.

    Returns
    -------
    int
        ``sum_j j * (nodes at distance j)`` for the Moore tree.

    Examples
    --------
    >>> moore_distance_sum(4, 1), moore_distance_sum(7, 2), moore_distance_sum(5, 4)
    (6, 10, 4)
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
    """``ceil(log_{p+1} N)``: circuit hops before one node's data can reach all N (exact integers).

    Parameters
    ----------
    nodes, ports : int
        N and p.

    Returns
    -------
    int
        Least ``H`` with ``(p + 1)^H >= N``.

    Examples
    --------
    >>> spread_rounds(8, 1), spread_rounds(9, 2), spread_rounds(10, 2)
    (3, 2, 3)
    """
    h, reach = 0, 1
    while reach < nodes:
        reach *= ports + 1
        h += 1
    return h
