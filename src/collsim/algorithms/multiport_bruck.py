"""Bruck's multiport algorithms: all-gather and all-to-all in ceil(log_{k+1} N) rounds on k ports per node.

Bruck et al. state both for *k-port* systems, where every node sends to k nodes and receives from k
at once; collsim's ``bruck`` is their one-port case.  With radix ``q = k + 1``:

* all-gather: in round ``j`` (distance unit ``D = q^j``) node ``r`` sends the (at most ``D``) blocks it
  holds to ``r - t D`` for ``t = 1 .. k``, only those the receiver still lacks; after the round it
  holds the ``q D`` blocks after it;
* all-to-all (index algorithm): block ``(s, s + i)`` moves ``t q^j`` forward in round ``j`` where ``t``
  is digit ``j`` of ``i`` in base ``q``.

Every round is one step in which each node uses k outgoing and k incoming circuits, so on an optical
circuit switch with ``p = k`` ports it meets the spread term ``ceil(log_{p+1} N)`` of the ocs bound
(docs/derivations/ocs-bound.md) and spreads its bytes over all p ports.

References
----------
J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient algorithms for all-to-all
communications in multiport message-passing systems", IEEE Transactions on Parallel and Distributed
Systems 8(11), 1997, pp. 1143-1156 (the k-port concatenation and index algorithms).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder
from .registry import register


def _rounds(n: int, q: int) -> int:
    """``ceil(log_q n)`` in integers."""
    rounds, reach = 0, 1
    while reach < n:
        reach *= q
        rounds += 1
    return rounds


def _requires(system, collective: CollectiveType) -> str | None:
    return None if getattr(system, "ports", None) else "bruck-multiport needs a system with ports (an ocs switch)"


@register(
    "bruck-multiport", aliases=("kport-bruck",), collectives=("allgather", "alltoall"), systems=("ocs",),
    params=("ports",), requires=_requires, constraints="an ocs system; 1 <= ports <= the switch's ports",
    reference="[Bruck97] k-port concatenation (all-gather) and index (all-to-all) algorithms",
    summary="ceil(log_{k+1} N) rounds; each node sends to k nodes per round (radix k+1 Bruck)",
)
def bruck_multiport(system, collective: CollectiveType, size_bytes, *, ports: int | None = None):
    """Build Bruck's k-port all-gather or all-to-all (``k = ports``, default the switch's).

    Parameters
    ----------
    system : OCS
        The switch.
    collective : CollectiveType
        ``"allgather"`` or ``"alltoall"``.
    size_bytes : int
        Each node's block (all-gather) or each (source, destination) block (all-to-all).
    ports : int, optional
        k, the nodes each node sends to per round (``1 .. system.ports``; 1 is ``bruck``).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"ports": k})``.

    Raises
    ------
    InputError
        ``ports`` outside ``1 .. system.ports``.

    References
    ----------
    J. Bruck et al., IEEE TPDS 8(11), 1997.

    Examples
    --------
    >>> from collsim.kinds.ocs.system import OCS
    >>> from collsim.core.collectives import TYPES
    >>> logical, params = bruck_multiport(OCS(nodes=9, ports=2), TYPES["allgather"], 64)
    >>> params, logical.rounds
    ({'ports': 2}, 2)
    >>> bruck_multiport(OCS(nodes=10, ports=2), TYPES["alltoall"], 64)[0].rounds
    3
    """
    n = system.nodes
    k = system.ports if ports is None else ports
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= system.ports:
        raise InputError(f"bruck-multiport: ports must be an integer from 1 to {system.ports}, got {ports!r}")
    q = int(k) + 1
    i = np.arange(n)
    b = LogicalBuilder(make_collective(collective, n, size_bytes))
    if collective.name == "allgather":
        for j in range(_rounds(n, q)):
            d = q ** j
            for t in range(1, q):
                cnt = min(d, n - t * d)
                if cnt > 0:
                    b.add(j, i, (i - t * d) % n, (i[:, None] + np.arange(cnt)[None, :]) % n)
        return b.build(), {"ports": int(k)}
    idx = np.arange(1, n)
    for j in range(_rounds(n, q)):
        d = q ** j
        digit = (idx // d) % q
        low = idx % d  # distance already travelled
        for t in range(1, q):
            moving = idx[digit == t]
            if moving.size:
                s = (i[:, None] - low[digit == t][None, :]) % n
                b.add(j, i, (i + t * d) % n, s * n + (s + moving[None, :]) % n)
    return b.build(), {"ports": int(k)}
