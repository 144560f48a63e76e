"""Binomial trees (MPICH): broadcast, reduce, scatter and gather on any N.

Ranks are taken relative to the root, ``rel = (r - root) mod N``.  With
``K = ceil(log2 N)``, in round ``j`` the mask is ``2**(K-1-j)`` and every rank
whose ``rel`` is a multiple of ``2 * mask`` sends to ``rel + mask`` (if it
exists): the root first reaches the far half, then everybody doubles.  Reduce
and gather run the same tree backwards.  Scatter sends each child the blocks
of its whole subtree ``[rel + mask, min(rel + 2 mask, N))``, so the root's
messages halve and its total is ``m (N - 1)``.

Unlike :mod:`recursive_doubling`'s halving tree, partners are found by adding
to the relative rank, so for a root other than 0 they are not hypercube
neighbours; with root 0 the two trees coincide.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import add_grouped, ceil_log2, check_root, ts_tw
from .latency import rounds_ts_s
from .registry import register


def binomial_rounds(n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Rounds of the binomial tree over relative ranks, root first.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005 (binomial tree broadcast, scatter and
    gather, ``ceil(lg p)`` steps).
    """
    out = []
    k = ceil_log2(n)
    for j in range(k):
        mask = 1 << (k - 1 - j)
        parent = np.arange(0, n, 2 * mask)
        parent = parent[parent + mask < n]
        child = parent + mask
        out.append((parent, child, np.minimum(child + mask, n)))
    return out


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    n, m = system.nodes, size_bytes
    root = int(params.get("root", 0))
    tree = [((parent + root) % n, (child + root) % n) for parent, child, _ in binomial_rounds(n)]
    if collective.direction == "out":                 # into the root (reduce, gather): children send to parents
        tree = [(child, parent) for parent, child in tree]
    ts = rounds_ts_s(system, tree)           # per round: start-up + the farthest message's route latency
    if collective.per_node:                   # scatter, gather: t_s log p + t_w m (p-1)
        return ts + tw * m * (n - 1)
    return ts + tw * m * ceil_log2(n)        # (t_s + t_w m) log p


@register(
    "binomial", collectives=("broadcast", "reduce", "scatter", "gather"), systems=("network",),
    params=("root",), alpha_beta=_alpha_beta, constraints="any N, any root",
    reference="[Thakur05] §2 (binomial-tree broadcast, scatter, gather; reduce as the reverse tree); "
              "[Grama03] ch. 4, one-to-all broadcast and scatter, costs (t_s + t_w m) log p and "
              "t_s log p + t_w m (p-1)",
    summary="binomial tree from the root over relative ranks: ceil(log2 N) rounds on any N",
)
def binomial(system, collective: CollectiveType, size_bytes, *, root: int = 0):
    """Build binomial-tree broadcast, reduce, scatter or gather.

    Parameters
    ----------
    system : Network
        Target network.
    collective : CollectiveType
        ``broadcast``, ``reduce``, ``scatter`` or ``gather``.
    size_bytes : int
        The vector (broadcast, reduce) or each node's block (scatter, gather).
    root : int, optional
        Root node (default 0).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005, §2; seed 002 (Grama et al.).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Star
    >>> collsim.build("binomial", Star(nodes=6), "scatter", "1KiB", root=2).num_steps
    3
    """
    n = system.nodes
    root = check_root(root, n)
    b = LogicalBuilder(make_collective(collective, n, size_bytes, root=root))
    rounds = binomial_rounds(n)
    forward = collective.direction == "in"   # out of the root (broadcast, scatter), else into it
    order = rounds if forward else rounds[::-1]
    for j, (parent, child, end) in enumerate(order):
        src, dst = (parent + root) % n, (child + root) % n
        if not forward:
            src, dst = dst, src
        if collective.whole_vector:   # broadcast, reduce: the whole vector
            b.add(j, src, dst, np.zeros((len(src), 1), np.int64), reduce=collective.reduction)
        else:  # blocks of the child's subtree, as node ids
            add_grouped(b, j, src, dst, end - child,
                        lambda rows, k, child=child: (child[rows, None] + np.arange(k)[None, :] + root) % n)
    return b.build(), {"root": root}
