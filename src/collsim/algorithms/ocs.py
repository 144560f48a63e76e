"""Algorithms and phase arithmetic for a reconfigurable optical circuit switch (the ``ocs`` kind).

On an optical circuit switch (OCS) every node has ``p`` ports; a *configuration* is a set of
circuits in which each node uses at most ``p`` outgoing and ``p`` incoming ones, and changing it
costs the reconfiguration delay ``r``.  A schedule's consecutive steps share a *phase* (one
configuration) as long as the union of their circuits respects the port count:
:func:`group_phases` finds the fewest phases for the steps' order (greedy maximal runs), and
:func:`ocs_time_s` is the kind's closed form, contention included: per step the slowest route's
latency plus the busiest circuit's bytes over the port bandwidth, plus ``r`` per reconfiguration.

Two algorithm families live here:

* ``pairwise-relay``: all-to-all over one fixed ``d``-regular circulant (offsets ``1, b, b^2 ...``,
  ``b^d >= N``) with multi-hop relaying: N-1 rounds, no reconfiguration at all, where direct
  pairwise needs about ``(N-1)/p`` configurations;
* ``ocs-auto``: the reconfiguration-aware choice, which builds every candidate (ring, recursive
  doubling and halving, Bruck, the multiport ring and Bruck, pairwise, ring all-to-all, relayed
  pairwise) and keeps the fastest by :func:`~collsim.kinds.ocs.system.ocs_time_s`.  Its time is linear in
  ``r`` per candidate, so :func:`crossovers` gives the exact values of ``r`` where the winner changes.

References
----------
W. M. Mellette, R. Das, Y. Guo, R. McGuinness, A. C. Snoeren, G. Porter, "Expanding across time to
deliver bandwidth efficiency and low latency", NSDI 2020 (reconfigurable circuits, multi-hop relaying);
H. Ballani et al., "Sirius: A Flat Datacenter Network with Nanosecond Optical Switching", SIGCOMM 2020;
W. Wang et al., "TopoOpt: Co-optimizing Network Topology and Parallelization Strategy for Distributed
Training Jobs", NSDI 2023; R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective
communication operations in MPICH", IJHPCA 19(1), 2005 (the candidates).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..core.collective import collective_type, make_collective
from ..core.collectives import CollectiveType
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder, LogicalSchedule
from ..kinds.network.routes import LinkRoutes
from ..kinds.ocs.crossovers import best_at, crossovers  # noqa: F401 - crossovers: part of this family's API
from ..kinds.ocs.system import circuit_ids, ocs_time_s
from . import multiport_bruck, multiport_ring  # noqa: F401  (register bruck-multiport and ring-multiport, candidates)
from .registry import get_algorithm, register

CANDIDATES: dict[str, tuple[str, ...]] = {
    "allgather": ("ring", "ring-multiport", "recursive-doubling", "bruck", "bruck-multiport"),
    "reducescatter": ("ring", "ring-multiport", "rabenseifner"),
    "allreduce": ("ring", "ring-multiport", "rabenseifner", "recursive-doubling"),
    "alltoall": ("pairwise", "bruck", "bruck-multiport", "ring-personalized", "pairwise-relay"),
}
"""Candidates ``ocs-auto`` chooses among, per collective."""


def logical_time_s(system, logical: LogicalSchedule) -> tuple[float, int]:
    """:func:`ocs_time_s` of a logical schedule (each logical round one step).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (latency plus bytes over bandwidth); H. Ballani et al., SIGCOMM 2020 (reconfiguration).
    """
    coll = logical.collective
    per_chunk = coll.bytes_of(logical.chunk_idx).astype(float)
    sizes = np.zeros(len(logical.src))
    nz = np.diff(logical.chunk_ptr) > 0
    if per_chunk.size:
        sizes[nz] = np.add.reduceat(per_chunk, logical.chunk_ptr[:-1][nz])
    rnd = np.unique(logical.round, return_inverse=True)[1]
    return ocs_time_s(system, rnd, logical.src, logical.dst, sizes, logical.routes)


def _relay_base(nodes: int, degree: int) -> tuple[int, int]:
    """``(b, d)``: the smallest base ``b >= 2`` with ``b^degree >= N`` and the offsets ``d`` it needs."""
    b = max(2, int(np.ceil(nodes ** (1.0 / degree) - 1e-9)))
    while b ** degree < nodes:
        b += 1
    d = 1
    while b ** d < nodes:
        d += 1
    return b, d


def _relay_requires(system, collective: CollectiveType) -> str | None:
    return None if getattr(system, "ports", None) else "pairwise-relay needs an optical circuit switch (ports)"


@register(
    "pairwise-relay", aliases=("relayed-pairwise",), collectives=("alltoall",), systems=("ocs",),
    params=("degree",), requires=_relay_requires,
    constraints="an ocs system; 1 <= degree <= ports",
    reference="[Thakur05] §5 (pairwise exchange); relaying over a fixed circuit topology as in Opera "
              "(Mellette et al., NSDI 2020) and TopoOpt (Wang et al., NSDI 2023)",
    summary="all-to-all over one fixed degree-d circulant (offsets 1, b, b^2 ...): N-1 rounds of "
            "multi-hop relayed routes, no reconfiguration",
)
def pairwise_relay(system, collective: CollectiveType, size_bytes, *, degree: int | None = None):
    """Build pairwise all-to-all relayed over one fixed circulant of degree ``d``.

    Round ``k`` (``1 <= k <= N-1``): node ``i`` sends its block for ``i + k`` along the circuits of
    offsets ``b^j``, ``k_j`` hops each, where ``k_j`` are the base-``b`` digits of ``k``.  Every
    node uses the same ``d`` outgoing and incoming circuits throughout: one configuration.

    Parameters
    ----------
    system : OCS
        The switch.
    collective : CollectiveType
        ``"alltoall"``.
    size_bytes : int
        Each (source, destination) block.
    degree : int, optional
        Circuits per node, ``1 .. ports`` (default ``ports``).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"degree": d, "base": b})`` with explicit routes.

    Raises
    ------
    InputError
        A degree outside ``1 .. ports``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005, §5; W. M. Mellette et al., NSDI 2020.

    Examples
    --------
    >>> from collsim.kinds.ocs.system import OCS
    >>> from collsim.core.collectives import TYPES
    >>> logical, params = pairwise_relay(OCS(nodes=9, ports=2), TYPES["alltoall"], 64)
    >>> params, logical.rounds, int(np.diff(logical.routes.route_ptr).max())
    ({'degree': 2, 'base': 3}, 8, 4)
    """
    n, ports = system.nodes, system.ports
    degree = ports if degree is None else degree
    if not isinstance(degree, (int, np.integer)) or isinstance(degree, bool) or not 1 <= degree <= ports:
        raise InputError(f"pairwise-relay: degree must be an integer from 1 to ports={ports}, got {degree!r}")
    b, d = _relay_base(n, int(degree))
    builder = LogicalBuilder(make_collective("alltoall", n, size_bytes))
    i = np.arange(n)
    ptrs, links = [], []
    for k in range(1, n):
        digits = [(k // b ** j) % b for j in range(d)]
        seq = np.repeat([b ** j for j in range(d)], digits)
        pos = (i[:, None] + np.concatenate([[0], np.cumsum(seq)])[None, :]) % n
        links.append(circuit_ids(pos[:, :-1], pos[:, 1:], n).reshape(-1))
        ptrs.append(np.full(n, len(seq)))
        builder.add(k - 1, i, (i + k) % n, (i * n + (i + k) % n)[:, None])
    ptr = np.concatenate([[0], np.cumsum(np.concatenate(ptrs))])
    logical = builder.build()
    routes = LinkRoutes(ptr.astype(np.int64), np.concatenate(links).astype(np.int64))
    return dataclasses.replace(logical, routes=routes), \
        {"degree": int(degree), "base": int(b)}


def candidates(system, collective: str | CollectiveType) -> list[tuple[str, dict[str, Any]]]:
    """``ocs-auto``'s candidates that run on this instance: ``(algorithm, params)`` pairs.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (the candidates).
    """
    collective = collective_type(collective)
    out = []
    for name in CANDIDATES.get(collective.name, ()):
        spec = get_algorithm(name)
        if not spec.supports(system, collective) or (spec.requires and spec.requires(system, collective)):
            continue
        if name == "pairwise-relay":
            out += [(name, {"degree": d}) for d in range(1, min(system.ports, 3) + 1)]
        elif name in ("bruck-multiport", "ring-multiport") and system.ports == 1:
            continue  # one port: Bruck and the ring themselves
        else:
            out.append((name, {}))
    return out


def candidate_times(system, collective: str | CollectiveType, size_bytes: int) -> list[dict[str, Any]]:
    """Every candidate's closed form, split into the part without ``r`` and its reconfigurations.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005; H. Ballani et al., "Sirius: A Flat Datacenter
    Network with Nanosecond Optical Switching", SIGCOMM 2020 (the reconfiguration charge).
    """
    collective = collective_type(collective)
    rows = []
    for name, params in candidates(system, collective):
        logical, chosen = get_algorithm(name).builder(system, collective, size_bytes, **params)
        total, reconf = logical_time_s(system, logical)
        rows.append({"algorithm": name, "params": {**params, **chosen},
                     "comm_s": total - reconf * system.reconfiguration_s, "reconfigurations": reconf})
    return rows


def _auto_tune(system, collective: CollectiveType, size_bytes) -> list[dict[str, Any]]:
    return [{"choice": name, **params} for name, params in candidates(system, collective)]


@register(
    "ocs-auto", collectives=tuple(CANDIDATES), systems=("ocs",), params=("choice", "degree"),
    requires=_relay_requires, tune=_auto_tune,
    constraints="an ocs system",
    reference="[Thakur05] (choosing among ring, recursive doubling/halving, Bruck and pairwise by a cost "
              "model); the reconfiguration charge of Sirius (Ballani et al., SIGCOMM 2020) and TopoOpt",
    summary="reconfiguration-aware choice: the candidate (ring, recursive doubling/halving, Bruck, pairwise, "
            "relayed pairwise) with the least OCS closed-form time",
)
def ocs_auto(system, collective: CollectiveType, size_bytes, *, choice: str | None = None, degree: int | None = None):
    """Build the candidate with the least :func:`ocs_time_s` (or the one ``choice`` names).

    Parameters
    ----------
    system : OCS
        The switch.
    collective : CollectiveType
        One of :data:`CANDIDATES`.
    size_bytes : int
        Message size.
    choice : str, optional
        A candidate's name: build it instead of choosing (``collsim tune`` tries each).
    degree : int, optional
        With ``choice="pairwise-relay"``, its degree.

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"choice": name, ...its params})``.

    Raises
    ------
    InputError
        A ``choice`` that is not a candidate for this collective.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005.

    Examples
    --------
    >>> from collsim.kinds.ocs.system import OCS
    >>> from collsim.core.collectives import TYPES
    >>> ocs_auto(OCS(nodes=8, ports=1, reconfiguration_s=1e-9), TYPES["allgather"], 1024)[1]["choice"]
    'recursive-doubling'
    >>> ocs_auto(OCS(nodes=8, ports=1, reconfiguration_s=1e-2), TYPES["allgather"], 1024)[1]["choice"]
    'ring'
    """
    names = [name for name, _ in candidates(system, collective)]
    if choice is not None:
        if choice not in names:
            raise InputError(f"ocs-auto: choice must be one of {', '.join(dict.fromkeys(names))}, got {choice!r}")
        params = {"degree": degree} if choice == "pairwise-relay" and degree is not None else {}
        logical, chosen = get_algorithm(choice).builder(system, collective, size_bytes, **params)
        return logical, {"choice": choice, **chosen}
    win = best_at(candidate_times(system, collective, size_bytes), system.reconfiguration_s)
    return ocs_auto(system, collective, size_bytes, choice=win["algorithm"], degree=win["params"].get("degree"))
