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

from ..core.repeated import weighted_sum
from ..core.schedule import Schedule


def path_fixed_s(schedule: Schedule) -> np.ndarray:
    """Start-up plus route latency of every path (every transfer, for single-path routes).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α, the start-up); A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s``).
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

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α, the start-up); A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s``).
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

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (r∞, the asymptotic bandwidth); A. Grama, A. Gupta, G. Karypis, V. Kumar,
    "Introduction to Parallel Computing", 2nd ed., Addison-Wesley, 2003, ch. 4 (``t_w``, its inverse).
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

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (``t_w``, per byte); docs/cost-models.md (the link-load form).
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

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994; A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4 (``t_s + t_w m`` per message).
    """
    per = transfer_fixed_s(schedule) + transfer_wire_s(schedule)
    busy = np.zeros(schedule.num_steps)
    np.maximum.at(busy, schedule.step, per)
    return weighted_sum(busy, schedule)  # a step standing for several counts for each
