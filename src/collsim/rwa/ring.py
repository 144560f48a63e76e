"""Turn a logical schedule into a physical one: route, assign channels, split rounds.

On the optical ring, each round is routed (the algorithm's direction, or the
shortest one), then coloured per direction: a round whose arcs are disjoint in
a direction takes colour 0 without any search; otherwise the chosen strategy
colours it, unless the algorithm pre-assigned colours from an exact
construction.  Colour ``c`` maps to physical sub-step ``c // (F*w)`` of the
round, fiber ``(c mod F*w) // w`` and wavelength ``c mod w``, so a round needs
exactly as many physical steps as its colouring needs, never a formula.  If
the system limits the channels a node may transmit or receive on at once, a
sub-step that breaks the limit is split further, greedily in transfer order.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..core.errors import UnsupportedError
from ..core.ring import arc_start, first_overlap, hops_along, shortest_direction
from ..core.schedule import LogicalSchedule, Schedule, permute_csr
from ..core.system import System
from .assign import Strategy, get_strategy


def _colors(logical: LogicalSchedule, direction: np.ndarray, hops: np.ndarray, n: int,
            strategy: Strategy) -> np.ndarray:
    """Colour every (round, direction) group; disjoint groups get colour 0.

    Pre-assigned colours (``logical.color >= 0``) are kept; a group whose transfers
    all have colour -1 is coloured here.  A group mixing the two is refused, since
    a strategy could not know which channels the exact construction relies on.
    """
    given = logical.color
    if given is not None and (given >= 0).all():
        return given.astype(np.int64, copy=False)
    colors = np.zeros(len(logical.src), dtype=np.int64) if given is None else np.maximum(given, 0)
    start = arc_start(logical.src, direction, n)
    group = logical.round * 2 + (direction > 0)
    todo = np.ones(len(group), bool) if given is None else given < 0
    if given is not None:
        pre_groups = np.unique(group[~todo])
        if np.isin(group[todo], pre_groups).any():
            raise UnsupportedError("a round mixes pre-assigned and unassigned colours in one direction")
    idx = np.flatnonzero(todo)
    if first_overlap(group[idx], start[idx], hops[idx], n) is None:
        return colors
    order = idx[np.argsort(group[idx], kind="stable")]
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    for part in np.split(order, bounds):
        if len(part) > 1 and first_overlap(np.zeros(len(part)), start[part], hops[part], n) is not None:
            colors[part] = strategy(start[part], hops[part], n)
    return colors


def _split_for_transceivers(step: np.ndarray, src: np.ndarray, dst: np.ndarray,
                            max_tx: int | None, max_rx: int | None, n: int) -> np.ndarray:
    """Spread each step's transfers over sub-steps so no node exceeds its limits."""
    if max_tx is None and max_rx is None:
        return step
    key_tx = np.bincount(step * n + src) if max_tx is not None else None
    key_rx = np.bincount(step * n + dst) if max_rx is not None else None
    over_tx = key_tx is not None and key_tx.max() > max_tx
    over_rx = key_rx is not None and key_rx.max() > max_rx
    if not (over_tx or over_rx):
        return step
    lim_tx = max_tx or len(src) + 1
    lim_rx = max_rx or len(src) + 1
    new_step = np.empty_like(step)
    offset = 0
    bounds = np.flatnonzero(np.diff(step)) + 1
    for part in np.split(np.arange(len(step)), bounds):
        used_tx: list[dict[int, int]] = []
        used_rx: list[dict[int, int]] = []
        for i in part.tolist():
            s, d = int(src[i]), int(dst[i])
            k = 0
            while k < len(used_tx) and (used_tx[k].get(s, 0) >= lim_tx or used_rx[k].get(d, 0) >= lim_rx):
                k += 1
            if k == len(used_tx):
                used_tx.append({})
                used_rx.append({})
            used_tx[k][s] = used_tx[k].get(s, 0) + 1
            used_rx[k][d] = used_rx[k].get(d, 0) + 1
            new_step[i] = offset + k
        offset += len(used_tx)
    return new_step


def realize(system: System, logical: LogicalSchedule, *, strategy: str | Strategy = "first-fit",
            algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
    """Route, assign channels and lay out physical steps.

    Parameters
    ----------
    system : System
        Target system (currently an :class:`~collsim.systems.optical_ring.OpticalRing`).
    logical : LogicalSchedule
        Transfers grouped into rounds.
    strategy : str or callable, optional
        Wavelength-assignment strategy for rounds whose arcs overlap (default first-fit).
    algorithm : str, optional
        Name recorded in the schedule.
    params : Mapping, optional
        Parameters recorded in the schedule.

    Returns
    -------
    Schedule
        Physical schedule, transfers sorted by step (stable).

    Raises
    ------
    UnsupportedError
        If the system kind has no realisation.

    Examples
    --------
    >>> from collsim.systems.optical_ring import OpticalRing
    >>> from collsim.algorithms import build_logical
    >>> ring = OpticalRing(nodes=4, wavelengths=2)
    >>> sched = realize(ring, build_logical("ring", ring, "allgather", 64)[0])
    >>> sched.num_steps
    3
    """
    if not system.ring_routes:
        if not hasattr(system, "route"):
            raise UnsupportedError(f"no routing for system kind {system.kind!r}")
        return _realize_network(system, logical, algorithm, params)
    n = system.nodes
    strat = get_strategy(strategy)
    src, dst = logical.src, logical.dst
    if logical.direction is not None:
        direction = logical.direction.astype(np.int8, copy=False)
        unset = direction == 0
        if unset.any():
            direction = direction.copy()
            direction[unset] = shortest_direction(src[unset], dst[unset], n)
    else:
        direction = shortest_direction(src, dst, n)
    hops = hops_along(src, dst, direction, n)
    t = len(src)
    if system.optical:
        colors = _colors(logical, direction, hops, n, strat)
        w = system.wavelengths
        cap = system.channels_per_direction
        sub = colors // cap
        fiber = ((colors % cap) // w).astype(np.int16)
        wavelength = (colors % w).astype(np.int32)
        limits = (system.max_tx_channels, system.max_rx_channels)
    else:
        sub = np.zeros(t, np.int64)
        fiber = np.full(t, -1, np.int16)
        wavelength = np.full(t, -1, np.int32)
        limits = (None, None)
    # physical steps: rounds in order, each taking (max sub-step + 1) slots
    rnd_all = logical.round
    if len(rnd_all) > 1 and not (rnd_all[1:] >= rnd_all[:-1]).all():
        raise UnsupportedError("logical rounds must be in order")  # LogicalBuilder guarantees it
    starts = np.flatnonzero(np.concatenate([[True], rnd_all[1:] != rnd_all[:-1]])) if t else np.zeros(0, np.int64)
    per_round = np.maximum.reduceat(sub + 1, starts) if t else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(per_round)[:-1]])
    step = np.repeat(offsets, np.diff(np.append(starts, t))) + sub
    cols = {"round": logical.round, "src": src, "dst": dst, "reduce": logical.reduce,
            "direction": direction, "hops": hops, "fiber": fiber, "wavelength": wavelength}
    ptr, idx = logical.chunk_ptr, logical.chunk_idx
    for attempt in range(2):  # sort by step; again if transceiver limits split steps
        if len(step) > 1 and not (step[1:] >= step[:-1]).all():
            order = np.argsort(step, kind="stable")
            step = step[order]
            ptr, idx = permute_csr(np.diff(ptr), idx, order)
            cols = {k: v[order] for k, v in cols.items()}
        if attempt == 0:
            split = _split_for_transceivers(step, cols["src"], cols["dst"], *limits, n)
            if split is step:
                break
            step = split
    return Schedule(system=system, collective=logical.collective, algorithm=algorithm,
                    params=dict(params or {}), step=step.astype(np.int64, copy=False),
                    chunk_ptr=ptr, chunk_idx=idx, **cols)


def _realize_network(system, logical: LogicalSchedule, algorithm: str, params) -> Schedule:
    """Graph systems: route every transfer deterministically; one step per round."""
    t = len(logical.src)
    ptr, links = system.route(logical.src, logical.dst)
    _, step = np.unique(logical.round, return_inverse=True)
    return Schedule(
        system=system, collective=logical.collective, algorithm=algorithm, params=dict(params or {}),
        step=step.astype(np.int64), round=logical.round, src=logical.src, dst=logical.dst,
        chunk_ptr=logical.chunk_ptr, chunk_idx=logical.chunk_idx, reduce=logical.reduce,
        direction=np.zeros(t, np.int8), hops=np.diff(ptr), fiber=np.full(t, -1, np.int16),
        wavelength=np.full(t, -1, np.int32), route_ptr=ptr, route_links=links)
