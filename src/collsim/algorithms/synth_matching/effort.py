"""What a matching run costs, as a floor, checked against collsim's time limit before it starts.

One run of the matching (:func:`collsim.algorithms.synth_matching.step.match`) scans, in every
step, every node's holdings and every link's candidates: about ``(N + L) P`` cells a step for
``N`` end nodes, ``L`` (logical) links and ``P`` pieces in flight (``N k`` for an all-gather or
reduce-scatter cut into ``k`` pieces per block, ``k`` for a broadcast or reduce).  A run takes at
least as many steps as the source's eccentricity (a piece crosses one link a step) and as the
pieces a node lacks over the pieces its in-links carry a step.  So a run costs at least

    steps x (N + L) x P / rate

seconds, with the rate measured on meshes, tori, hypercubes and rings of 10^3 to 4 x 10^4 nodes
and rounded up (:data:`SPREAD_CELLS_PER_S`, :data:`ROOTED_CELLS_PER_S`): what is refused would take
at least that long.  :func:`early_reason` makes that estimate from closed forms (node count,
link count, distances), before the network's link table is built; the search
(:func:`collsim.algorithms.synth_matching.search.best_plan`) makes it again per choice of pieces
and capacity, and drops the choices above collsim's time limit (:mod:`collsim.core.time_limit`).
"""

from __future__ import annotations

import numpy as np

from ...core.collective import collective_type
from ...core.collectives import CollectiveType
from ...core.limits import limit_error, memory_limit_bytes
from ...core.schedule import realised_floor_bytes
from ...core.time_limit import time_limit, time_limit_error

SPREAD_CELLS_PER_S = 1e9
"""Cells per second of an all-gather's matching (measured 3.3e8 to 7.7e8; rounded up to a floor)."""

ROOTED_CELLS_PER_S = 1e8
"""Cells per second of a broadcast's matching (measured 1.8e7 to 7.7e7: fewer pieces, more overhead)."""

HINT = "use fewer nodes, or fewer chunks or a larger capacity if they were set"

STATE_BYTES_PER_CELL = 12
"""Bytes of the matching's node x piece state per cell (its holdings, their copies and the rarity order)."""

SCHEDULE_BYTES_PER_DELIVERY = realised_floor_bytes(1, 1)
"""Bytes a delivery costs at least while its schedule is realised, when each is a transfer of its
own (as the whole blocks of a large network's plans are): the logical columns (round, source,
destination, chunk pointer and entry, reduce flag: 41 bytes) held twice while the physical copy
is made, and 32 bytes of step and route pointer (:func:`collsim.core.schedule.realised_floor_bytes`,
whose arithmetic ``collsim.pipeline.realise_bytes`` applies to the realisation itself): 114 bytes."""

ROUTE_ENTRY_BYTES = 8
"""Bytes of each link on a transfer's route (through switches: the logical link's path)."""

__all__ = ["HINT", "ROOTED_CELLS_PER_S", "ROUTE_ENTRY_BYTES", "SCHEDULE_BYTES_PER_DELIVERY", "SPREAD_CELLS_PER_S",
           "STATE_BYTES_PER_CELL", "early_reason", "eccentricity", "floor_s", "schedule_floor_bytes"]


def schedule_floor_bytes(nodes: int, collective: CollectiveType, route_hops: float) -> tuple[int, int]:
    """The chunk deliveries every plan of ``collective`` makes at least, and the bytes of a schedule
    holding them one transfer each, routed over ``route_hops`` links on average.

    Whole blocks, one piece each: an all-gather or reduce-scatter delivers each block to (or
    gathers it from) the ``N - 1`` other nodes, an all-reduce does both, a broadcast or reduce
    ``N - 1`` deliveries.  The builder checks this for every overlay before it plans, and plans
    only on those that fit (8,192 GPUs in 1,024 boxes of 8 on a fat tree: an all-reduce's 1.3e8
    deliveries over the ring overlay's routes of 2.1 links on average need 17 GiB, its doubling
    overlay's 4.1 links 20 GiB; before this check it planned for 4 minutes and its schedule took
    19 GiB before the verifier refused it).

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (every all-to-all broadcast delivers N - 1 blocks to each node).
    """
    n = int(nodes)
    deliveries = (n - 1) if collective.rooted else n * (n - 1) * (2 if collective.composed_of else 1)
    return deliveries, int(deliveries * (SCHEDULE_BYTES_PER_DELIVERY + ROUTE_ENTRY_BYTES * float(route_hops)))


def floor_s(nodes: int, links: int, pieces: int, steps: int, rooted: bool) -> float:
    """Seconds one matching run takes at least.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023
    (the time-expanded network the matching walks step by step).
    """
    return float(steps) * (int(nodes) + int(links)) * int(pieces) / (ROOTED_CELLS_PER_S if rooted
                                                                      else SPREAD_CELLS_PER_S)


def eccentricity(nodes: int, src: np.ndarray, dst: np.ndarray, source: int) -> int:
    """Hops from ``source`` to the farthest end node it reaches over the links ``src -> dst``.

    References
    ----------
    T. H. Cormen, C. E. Leiserson, R. L. Rivest, C. Stein, "Introduction to Algorithms",
    3rd ed., MIT Press, 2009, §22.2 (breadth-first search).
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path
    g = coo_matrix((np.ones(len(src)), (src, dst)), shape=(nodes, nodes)).tocsr()
    dist = shortest_path(g, directed=True, unweighted=True, indices=int(source))
    reached = dist[np.isfinite(dist)]
    return int(reached.max()) if reached.size else 0


def _closed_form_eccentricity(system, reverse: bool) -> int | None:
    """Node 0's eccentricity from the topology's closed-form distances (None: none known), chunk by chunk."""
    n = int(system.nodes)
    far = 0
    for lo in range(0, n, 1 << 20):
        other = np.arange(lo, min(n, lo + (1 << 20)), dtype=np.int64)
        zero = np.zeros(len(other), np.int64)
        hops = system.distance(other, zero) if reverse else system.distance(zero, other)
        if hops is None:
            return None
        far = max(far, int(np.max(hops)))
    return far


def early_reason(system, collective: str | CollectiveType) -> str | None:
    """Why even the cheapest matching of ``collective`` would exceed the memory or time limit, from closed forms.

    Made before the link table (or an overlay) is built: the node x piece state of whole blocks
    against the memory limit on every network, and the running time on networks whose end nodes
    are joined by direct links and whose topology gives its link count and distances in closed form
    (ring, line, mesh, torus, hypercube); elsewhere the search checks each choice once it has the
    links.  The cheapest
    run cuts whole blocks and floods: it takes at least the diameter's steps for an all-gather
    (at least node 0's eccentricity), half of it for a broadcast from an unknown root.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.
    """
    collective = collective_type(collective)
    n = int(system.nodes)
    cells = n * (1 if collective.rooted else n)   # the node x piece state of whole blocks (search.best_plan)
    if cells * STATE_BYTES_PER_CELL > memory_limit_bytes():   # through switches too: before the overlays are built
        return str(limit_error(cells * STATE_BYTES_PER_CELL, f"synthesizing {collective.name} on {n} nodes (a node x "
                                                              f"piece state of {cells:.3g} cells)", "use fewer nodes"))
    try:
        links = system.link_count() if system.vertices == n else None
        ecc = None if links is None else _closed_form_eccentricity(system, reverse=collective.direction == "out"
                                                                    and not collective.rooted)
    except AttributeError:  # a network given as a bare link table, without closed forms
        return None
    if ecc is None:
        return None
    steps = (ecc + 1) // 2 if collective.rooted else ecc
    pieces = 1 if collective.rooted else n
    runs = 2 if collective.composed_of else 1           # all-reduce: a reduce-scatter and an all-gather
    estimate = runs * floor_s(n, links, pieces, steps, collective.rooted)
    if estimate <= time_limit()[0]:
        return None
    return str(time_limit_error(estimate, f"synthesizing {collective.name} on {n} nodes (at least {steps} steps of "
                                          f"{(n + links) * pieces:.3g} node x piece cells)", "use fewer nodes"))
