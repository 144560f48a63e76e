"""Bruck's algorithms: all-gather and all-to-all on any N in ceil(log2 N) rounds.

All-gather: in round ``k`` node ``r`` sends every block it holds (at most
``2**k``) to ``r - 2**k``; the last round sends only the ``N - 2**k`` blocks
still missing.  All-to-all (radix 2): block ``(s, d)`` sits at index
``j = (d - s) mod N`` of its source's buffer; in round ``k`` every block whose
index has bit ``k`` set moves ``2**k`` nodes forward, so after the last round
it has moved exactly ``j``.  The local rotations of the original algorithm are
not communication and leave no trace in the schedule.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import ceil_log2, ts_tw
from .latency import rounds_ts_s
from .registry import register


def alltoall_blocks_per_round(n: int) -> list[int]:
    """Blocks each node sends in each round of the radix-2 all-to-all.

    References
    ----------
    J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient algorithms for
    all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11),
    1997 (the index algorithm, radix 2); R. Thakur, R. Rabenseifner, W. Gropp,
    IJHPCA 19(1), 2005 (its cost, ``(p/2) lg p`` blocks for ``p = 2**d``).
    """
    j = np.arange(1, n)
    return [int(((j >> k) & 1).sum()) for k in range(ceil_log2(n))]


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    n, m = system.nodes, size_bytes
    i = np.arange(n)
    sign = -1 if collective.name == "allgather" else 1   # all-gather: i -> i - 2^k; all-to-all: i -> i + 2^k
    ts = rounds_ts_s(system, [(i, (i + sign * (1 << k)) % n) for k in range(ceil_log2(n))])  # start-up + hops
    if collective.name == "allgather":  # ceil(lg p) t_s + (p-1) t_w m
        return ts + tw * m * (n - 1)
    # all-to-all: ceil(lg p) t_s + t_w m * sum_k #{j : bit k of j}  (= (p/2) lg p for p = 2^d)
    return ts + tw * m * sum(alltoall_blocks_per_round(n))


@register(
    "bruck", collectives=("allgather", "alltoall"), systems=("network",), alpha_beta=_alpha_beta,
    constraints="any N",
    reference="[Bruck97] §3 (index, radix 2) and §4 (concatenation); [Thakur05] §3 (Bruck all-gather, "
              "ceil(lg p) a + (p-1)/p n b) and §5 (Bruck all-to-all)",
    summary="ceil(log2 N) rounds at distances 2^k: all-gather (concatenation) and all-to-all (index) on any N",
)
def bruck(system, collective: CollectiveType, size_bytes):
    """Build Bruck all-gather or radix-2 all-to-all.

    Parameters
    ----------
    system : Network
        Target network.
    collective : CollectiveType
        ``"allgather"`` or ``"alltoall"``.
    size_bytes : int
        Each node's block (all-gather) or each (source, destination) block (all-to-all).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    J. Bruck et al., IEEE TPDS 8(11), 1997, pp. 1143-1156; R. Thakur, R. Rabenseifner,
    W. Gropp, IJHPCA 19(1), 2005, §3 and §5.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Star
    >>> collsim.build("bruck", Star(nodes=6), "allgather", "1KiB").num_steps
    3
    """
    n = system.nodes
    i = np.arange(n)
    if collective.name == "allgather":
        b = LogicalBuilder(make_collective("allgather", n, size_bytes))
        for k in range(ceil_log2(n)):
            d = 1 << k
            cnt = min(d, n - d)
            b.add(k, i, (i - d) % n, (i[:, None] + np.arange(cnt)[None, :]) % n)
        return b.build(), {}
    b = LogicalBuilder(make_collective("alltoall", n, size_bytes))
    j_all = np.arange(1, n)
    for k in range(ceil_log2(n)):
        d = 1 << k
        j = j_all[(j_all >> k) & 1 == 1]              # indices moving this round
        low = j & (d - 1)                              # distance already travelled
        # node c sends blocks (s, s + j) with s = c - low: shape (n, len(j))
        s = (i[:, None] - low[None, :]) % n
        b.add(k, i, (i + d) % n, s * n + (s + j[None, :]) % n)
    return b.build(), {}
