"""Rings on every port: all-gather, reduce-scatter and all-reduce over k disjoint Hamiltonian cycles at once.

A node with k ports can join k rings at once: the message is split into k parts, and part ``c`` runs
the ring algorithm along the cycle of stride ``s_c`` (``i -> i + s_c``, with ``gcd(s_c, N) = 1`` so
that it visits every node; strides 1, -1, 2, -2 ... distinct modulo N).  Each step, every node sends k
transfers to k distinct nodes and receives k, always over the same circuits: one configuration, no
reconfiguration, and the bandwidth of all k ports, so on an optical circuit switch with ``p = k`` the
bandwidth term ``(N-1) m / (p b)`` of the all-gather bound is met (the bidirectional ring is ``k = 2``).

References
----------
P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", Journal
of Parallel and Distributed Computing 69(2), 2009 (the ring's bandwidth optimality); R. Thakur,
R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH", IJHPCA
19(1), 2005 (ring all-gather, reduce-scatter and all-reduce).
"""

from __future__ import annotations

from math import gcd

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder
from .registry import register


def ring_strides(nodes: int, rings: int) -> list[int]:
    """Up to ``rings`` strides 1, -1, 2, -2 ... each coprime with N and distinct modulo N.

    References
    ----------
    F. Harary, "Graph Theory", Addison-Wesley, 1969 (a circulant's cycle of stride s is Hamiltonian
    iff gcd(s, N) = 1).
    """
    out, seen = [], set()
    for step in range(1, nodes):
        for s in (step, -step):
            if len(out) < rings and gcd(step, nodes) == 1 and s % nodes not in seen:
                out.append(s)
                seen.add(s % nodes)
    return out


def _requires(system, collective: CollectiveType) -> str | None:
    return None if getattr(system, "ports", None) else "ring-multiport needs a system with ports (an ocs switch)"


@register(
    "ring-multiport", aliases=("multi-ring",), collectives=("allgather", "reducescatter", "allreduce"),
    systems=("ocs",), params=("rings",), requires=_requires,
    constraints="an ocs system; 1 <= rings <= the switch's ports",
    reference="[Thakur05] §3-4 (ring all-gather, reduce-scatter, all-reduce), run on k Hamiltonian cycles at "
              "once; Patarasuk and Yuan, JPDC 69(2), 2009 (bandwidth optimality of rings)",
    summary="the ring on k disjoint cycles at once (strides 1, -1, 2 ...), a k-th of the data each: one "
            "configuration, every port busy",
)
def ring_multiport(system, collective: CollectiveType, size_bytes, *, rings: int | None = None):
    """Build the ring on ``rings`` cycles at once (default: the switch's ports).

    Parameters
    ----------
    system : OCS
        The switch.
    collective : CollectiveType
        ``"allgather"``, ``"reducescatter"`` or ``"allreduce"``.
    size_bytes : int
        Each node's block (all-gather, reduce-scatter) or the vector (all-reduce).
    rings : int, optional
        Cycles, ``1 .. ports`` (fewer are used when N has fewer coprime strides).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"rings": k})``.

    Raises
    ------
    InputError
        ``rings`` outside ``1 .. system.ports``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005.

    Examples
    --------
    >>> from collsim.kinds.ocs.system import OCS
    >>> from collsim.core.collectives import TYPES
    >>> logical, params = ring_multiport(OCS(nodes=8, ports=2), TYPES["allgather"], 1024)
    >>> params, logical.rounds, len(logical.src)
    ({'rings': 2}, 7, 112)
    """
    n = system.nodes
    want = system.ports if rings is None else rings
    if not isinstance(want, (int, np.integer)) or isinstance(want, bool) or not 1 <= want <= system.ports:
        raise InputError(f"ring-multiport: rings must be an integer from 1 to {system.ports}, got {rings!r}")
    strides = ring_strides(n, int(want))
    k = len(strides)
    b = LogicalBuilder(make_collective(collective, n, size_bytes, split=n * k if collective.composed_of else k))
    i = np.arange(n)
    for p, phase in enumerate(collective.phases):
        red = phase.reduction  # reduce-scatter: the partial of block i-s-r s; all-gather: block i-r s
        for r in range(n - 1):
            for c, s in enumerate(strides):
                b.add(p * (n - 1) + r, i, (i + s) % n, (((i - int(red) * s - r * s) % n) * k + c)[:, None],
                      reduce=red)
    return b.build(), {"rings": k}
