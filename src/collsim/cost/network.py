"""The α–β closed form of a schedule on an electrical network (the lower bound is :mod:`.network_bound`).

The α–β (Hockney) model charges a transfer ``t_s + t_w * m``.  Here ``t_w`` is
the inverse link bandwidth and the fixed part is ``startup_s`` (if the system
sets one) plus the latencies of the links on the route, so a one-hop message
costs exactly the textbook's ``t_s + t_w m`` with ``t_s`` the link latency.
Links shared within a step are counted: a transfer's bytes move no faster than its
busiest link can carry everything that crosses it in that step (:func:`transfer_wire_s`).
How flows share a link over time (max-min fairness, staggered finishes) is the flow
simulator's job (:mod:`collsim.sim`).
"""

from __future__ import annotations

import numpy as np

from ..core.schedule import Schedule


def path_fixed_s(schedule: Schedule) -> np.ndarray:
    """Start-up plus route latency of every path (every transfer, for single-path routes).

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    numpy.ndarray
        Seconds per path (:class:`~collsim.kinds.network.routes.LinkRoutes`: ECMP transfers have several).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α, the start-up); A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s``).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Ring
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
    >>> from collsim.kinds.network.electrical import Ring
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
    >>> from collsim.kinds.network.electrical import Ring
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


def transfer_wire_s(schedule: Schedule) -> np.ndarray:
    """Per transfer, how long its busiest link needs for every byte that crosses it in the transfer's step.

    A link ``e`` carries, in step ``s``, ``L_{s,e}``: the bytes of every transfer of ``s`` whose route
    crosses it (an ECMP path its share).  Whatever order the link serves them in, the last of them
    leaves it ``L_{s,e} / c_e`` after the step starts, so a transfer is through no sooner than the
    largest ``L_{s,e} / c_e`` over its links.  Alone on its links, that is its bytes over its
    bottleneck's rate (:func:`transfer_bandwidth_bytes_per_s`).

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    numpy.ndarray
        Seconds per transfer (0 for an empty transfer, or one whose route has no link).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (``t_w``, per byte); docs/cost-models.md (the link-load form).

    Examples
    --------
    Pairwise all-to-all on a 4-node line: in its second step 0 -> 2 and 1 -> 3 share the link n1 -> n2.

    >>> import collsim
    >>> from collsim.kinds.network.electrical import Line
    >>> s = collsim.build("pairwise", Line(nodes=4, link_bandwidth_bytes_per_s=1e9), "alltoall", 1000)
    >>> [round(float(t) * 1e6, 6) for t in transfer_wire_s(s)[s.step == 1]]   # 2 x 1000 B per link
    [2.0, 2.0, 2.0, 2.0]
    """
    routes = schedule.routes
    out = np.zeros(len(routes))
    if not routes.route_links.size:
        return out
    size = np.asarray(schedule.size_bytes, dtype=np.float64)
    bw = schedule.system.links.bandwidth_bytes_per_s
    per_path = np.zeros(routes.paths)
    amount = size[routes.path_owner] * routes.weights   # the bytes of every path
    for first, end, load in routes.entry_link_loads(schedule.step_bounds, schedule.system, amount):
        lo = int(routes.route_ptr[first])
        time_s = load / bw[routes.route_links[lo:lo + load.size]]
        hops = routes.path_hops[first:end]
        nz = hops > 0
        if nz.any():
            per_path[first:end][nz] = np.maximum.reduceat(time_s, (routes.route_ptr[first:end] - lo)[nz])
    np.maximum.at(out, routes.path_owner, per_path)
    out[size <= 0] = 0.0
    return out


def alpha_beta_time_s(schedule: Schedule) -> float:
    """α–β time of a schedule that counts the load of every link: per step, its slowest transfer.

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`Network`.

    Returns
    -------
    float
        Sum over steps of ``max over its transfers of (startup + route latency + wire)``, with
        ``wire`` the time the transfer's busiest link needs for all the bytes that cross it in the
        step (:func:`transfer_wire_s`, ECMP paths weighted by their shares); an ECMP transfer pays its
        slowest path's latency.  A step therefore lasts at least ``max over links of load /
        bandwidth`` plus the smallest route latency, and without shared links this is the textbook
        ``t_s + t_w m`` of the step's slowest transfer (docs/cost-models.md derives it).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994; A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s + t_w m`` per message).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Line, Ring
    >>> s = collsim.build("ring", Ring(nodes=4, link_latency_s=1e-6, link_bandwidth_bytes_per_s=1e9),
    ...                   "allgather", 1000)
    >>> round(alpha_beta_time_s(s), 12)   # 3 steps of (1 us + 1000 B / 1 GB/s)
    6e-06
    >>> s = collsim.build("pairwise", Line(nodes=4, link_latency_s=0, link_bandwidth_bytes_per_s=1e9), "alltoall",
    ...                   1000)
    >>> round(alpha_beta_time_s(s) * 1e6, 6)   # steps of 1, 2 and 1 us: in the second, 2 blocks per link
    4.0
    """
    per = transfer_fixed_s(schedule) + transfer_wire_s(schedule)
    busy = np.zeros(schedule.num_steps)
    np.maximum.at(busy, schedule.step, per)
    return float(busy.sum())
