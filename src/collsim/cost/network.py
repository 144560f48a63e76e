"""Closed-form (congestion-unaware) costs and lower bounds on electrical networks.

The α–β (Hockney) model charges a transfer ``t_s + t_w * m``.  Here ``t_w`` is
the inverse link bandwidth and the fixed part is ``startup_s`` (if the system
sets one) plus the latencies of the links on the route, so a one-hop message
costs exactly the textbook's ``t_s + t_w m`` with ``t_s`` the link latency.
Contention is ignored: that is the flow simulator's job (:mod:`collsim.sim`).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import Collective
from ..core.network import Network
from ..core.schedule import Schedule
from .bounds import traffic_bound
from .cuts import cut_bound_s


def path_fixed_s(schedule: Schedule) -> np.ndarray:
    """Start-up plus route latency of every path (every transfer, for single-path routes).

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    numpy.ndarray
        Seconds per path (:class:`~collsim.core.routes.LinkRoutes`: ECMP transfers have several).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α, the start-up); A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s``).

    Examples
    --------
    >>> import collsim
    >>> from collsim.systems.electrical import Ring
    >>> s = collsim.build("rd", Ring(nodes=4, link_latency_s=1e-6, startup_s=5e-6), "allgather", 1000)
    >>> sorted({round(t, 12) for t in path_fixed_s(s).tolist()})   # 5 us start-up + 1 us per link (1 or 2)
    [6e-06, 7e-06]
    """
    system = schedule.system
    routes = schedule.routes
    latency = system.links.latency_s
    if latency.size and (latency == latency[0]).all():  # uniform links: no per-hop gather
        return routes.path_hops * float(latency[0]) + (system.startup_s or 0.0)
    lat = latency[routes.route_links]
    per = np.zeros(routes.paths)
    nz = routes.path_hops > 0
    if lat.size:
        per[nz] = np.add.reduceat(lat, routes.route_ptr[:-1][nz])
    return per + (system.startup_s or 0.0)


def transfer_fixed_s(schedule: Schedule) -> np.ndarray:
    """Start-up plus route latency of every transfer (ECMP: its slowest path).

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    numpy.ndarray
        Seconds per transfer.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α, the start-up); A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s``).

    Examples
    --------
    >>> import collsim
    >>> from collsim.systems.electrical import Ring
    >>> s = collsim.build("ne", Ring(nodes=4, link_latency_s=1e-6, startup_s=5e-6), "allgather", 1000)
    >>> transfer_fixed_s(s).tolist()[:2]          # 5 us start-up + 1 us for one link
    [6e-06, 6e-06]
    """
    per = path_fixed_s(schedule)
    routes = schedule.routes
    if not routes.multipath or not len(per):
        return per
    return np.maximum.reduceat(per, routes.path_ptr[:-1])


def transfer_bandwidth_bytes_per_s(schedule: Schedule) -> np.ndarray:
    """Rate of every transfer alone on the network: its bottleneck link's bandwidth over its share.

    A single-path transfer moves at its slowest link's bandwidth.  An ECMP transfer's bytes
    are split over its paths; a link carries the summed share of the paths that cross it
    (all of them cross the sender's own link, say), so the transfer alone moves at
    ``min over its links of bandwidth / share``.

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    numpy.ndarray
        Bytes per second per transfer (``inf`` for routes without links).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (r∞, the asymptotic bandwidth); A. Grama, A. Gupta, G. Karypis, V. Kumar,
    "Introduction to Parallel Computing", 2nd ed., Addison-Wesley, 2003, ch. 4 (``t_w``, its inverse).

    Examples
    --------
    >>> import collsim
    >>> from collsim.systems.electrical import Ring
    >>> s = collsim.build("ring", Ring(nodes=4, link_bandwidth_bytes_per_s=1e9), "allgather", 1000)
    >>> transfer_bandwidth_bytes_per_s(s).tolist()[:2]
    [1000000000.0, 1000000000.0]
    """
    bw = schedule.system.links.bandwidth_bytes_per_s
    routes = schedule.routes
    out = np.full(len(routes), np.inf)
    if not routes.route_links.size:
        return out
    if not routes.multipath:
        nz = routes.path_hops > 0
        out[nz] = np.minimum.reduceat(bw[routes.route_links], routes.route_ptr[:-1][nz])
        return out
    nlinks = len(bw)
    key = np.repeat(routes.path_owner, routes.path_hops) * nlinks + routes.route_links
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    share = np.add.reduceat(np.repeat(routes.weights, routes.path_hops)[order], starts)
    owner, link = np.divmod(key[starts], nlinks)
    np.minimum.at(out, owner, bw[link] / share)
    return out


def alpha_beta_time_s(schedule: Schedule) -> float:
    """Congestion-unaware α–β time of a schedule: per step, the slowest transfer.

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    float
        Sum over steps of ``max(startup + route latency + bytes / bottleneck bandwidth)``;
        an ECMP transfer pays its slowest path's latency and its bytes at its most
        loaded link's share (:func:`transfer_bandwidth_bytes_per_s`).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994; A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s + t_w m`` per message).

    Examples
    --------
    >>> import collsim
    >>> from collsim.systems.electrical import Ring
    >>> s = collsim.build("ring", Ring(nodes=4, link_latency_s=1e-6, link_bandwidth_bytes_per_s=1e9),
    ...                   "allgather", 1000)
    >>> round(alpha_beta_time_s(s), 12)   # 3 steps of (1 us + 1000 B / 1 GB/s)
    6e-06
    """
    per = transfer_fixed_s(schedule) + schedule.size_bytes / transfer_bandwidth_bytes_per_s(schedule)
    busy = np.zeros(schedule.num_steps)
    np.maximum.at(busy, schedule.step, per)
    return float(busy.sum())


def network_lower_bound_s(system: Network, collective: Collective) -> float:
    """Lower bound on the time of a collective on an electrical network.

    Parameters
    ----------
    system : Network
        The network.
    collective : Collective
        The collective.

    Returns
    -------
    float
        ``startup + max(min link latency + load, hop chain)``, with ``load`` the
        largest of recv / node-in bandwidth, send / node-out bandwidth, link-bytes /
        total link bandwidth and the cut bound :func:`collsim.cost.cuts.cut_bound_s`
        (every end node's ingress and egress, the topology's closed-form cuts, every
        cut of small networks), and ``hop chain`` the route latency of the farthest
        pair the collective must connect (:func:`latency_chain_s`).

    Notes
    -----
    The traffic terms are those of :func:`collsim.cost.bounds.traffic_bound`
    (docs/derivations/lower-bounds.md); on a network every link crossing costs
    bandwidth, so the total crossing bound uses one crossing per required
    delivery (all-to-all and shift: the hop count of each pair's route, for all-to-all
    when ``N (N-1) <= 1.1e6``, i.e. ``N <= 1049``; one crossing per pair above).

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007 (bandwidth lower bounds); R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (the latency term).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> from collsim.systems.electrical import Star
    >>> star = Star(nodes=4, link_bandwidth_bytes_per_s=1e9, link_latency_s=1e-6)
    >>> network_lower_bound_s(star, make_collective("allgather", 4, 1000))   # 1 us + 3000 B in at 1 GB/s
    4e-06
    """
    lt = system.links
    n = system.nodes
    out_bw = np.bincount(lt.src, weights=lt.bandwidth_bytes_per_s, minlength=system.vertices)[:n]
    in_bw = np.bincount(lt.dst, weights=lt.bandwidth_bytes_per_s, minlength=system.vertices)[:n]
    t = traffic_bound(collective)
    link_bytes = t.hop_bytes_ring
    if collective.type.point_to_point:  # each block crosses its route
        s, d = collective.type.endpoints(n, collective.shift)
        if len(s) <= 1_100_000:
            ptr, _ = system.route(s, d)
            link_bytes = float(np.diff(ptr).sum()) * collective.size_bytes
        else:
            link_bytes = len(s) * float(collective.size_bytes)
    load = max(t.recv_bytes / in_bw.max(), t.send_bytes / out_bw.max(),
               link_bytes / lt.bandwidth_bytes_per_s.sum(), cut_bound_s(system, collective))
    fixed = (system.startup_s or 0.0)
    return float(fixed + max(lt.latency_s.min() + load, latency_chain_s(system, collective)))


def _latencies_from(system: Network, source: int, *, reverse: bool = False) -> np.ndarray:
    """Smallest summed link latency from ``source`` to every vertex (to it, if ``reverse``).

    Bellman-Ford relaxations over the whole link table at once; it stops when nothing
    improves, after at most the hop diameter of the network rounds.
    """
    lt = system.links
    a, b = (lt.dst, lt.src) if reverse else (lt.src, lt.dst)
    dist = np.full(system.vertices, np.inf)
    dist[source] = 0.0
    for _ in range(system.vertices):
        new = dist.copy()
        np.minimum.at(new, b, dist[a] + lt.latency_s)
        if np.array_equal(new, dist):
            break
        dist = new
    return dist


def latency_chain_s(system: Network, collective: Collective) -> float:
    """Route latency some required delivery pays: the farthest pair a collective must connect.

    Parameters
    ----------
    system : Network
        The network.
    collective : Collective
        The collective.

    Returns
    -------
    float
        The largest shortest-path latency (summed link latencies) over pairs
        ``(u, v)`` of end nodes such that ``v`` needs data of ``u``, taken over the
        pairs from node 0 (all-gather, reduce-scatter, all-reduce, all-to-all, scan),
        from the root (broadcast, scatter), to the root (reduce, gather), or from
        node 0 to node q (shift).  Whatever chain of messages carries ``u``'s data to
        ``v``, its routes together cross a path from ``u`` to ``v``, and every flow
        pays the latency of the links it crosses; so no schedule ends before the
        start-up plus this latency.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (latency per message); E. Chan, M. Heimlich,
    A. Purkayastha, R. van de Geijn, "Collective communication: theory, practice, and
    experience", Concurrency and Computation: Practice and Experience 19(13), 2007
    (the log p and p-1 latency lower bounds this hop chain complements).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> from collsim.systems.electrical import Ring
    >>> ring = Ring(nodes=64, link_latency_s=1e-6)
    >>> round(latency_chain_s(ring, make_collective("allgather", 64, 8)) * 1e6, 6)   # 32 hops away
    32.0
    """
    n = system.nodes
    t = collective.type
    root = int(collective.root or 0)
    if t.shifted:
        return float(_latencies_from(system, 0)[(collective.shift or 1) % n])
    if t.rooted and t.direction == "out":   # reduce, gather: into the root
        return float(_latencies_from(system, root, reverse=True)[:n].max())
    return float(_latencies_from(system, root if t.rooted else 0)[:n].max())
