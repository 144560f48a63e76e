"""Realise a logical schedule on an optical ring: route, assign bands of channels, split rounds.

Each round is routed (the algorithm's direction, or the shortest one), then
coloured per direction: a round whose arcs are disjoint in a direction takes
colour 0 without any search; otherwise the chosen strategy colours it, unless
the algorithm pre-assigned colours from an exact construction.

A transfer may occupy a *band* of ``b`` consecutive wavelengths on one fiber
(``LogicalSchedule.band``; default 1).  A (round, direction) group is coloured
in *slots* as wide as its widest band, ``W``: a fiber holds ``w // W`` slots and
a direction ``S = F * (w // W)``.  Colour ``c`` maps to physical sub-step
``c // S`` of the round, fiber ``(c mod S) // (w // W)`` and lowest wavelength
``W * ((c mod S) mod (w // W))``; with ``W = 1`` this is the plain channel
mapping.  A round therefore needs exactly as many physical steps as its
colouring needs, never a formula.  If the system limits the channels a node may
transmit or receive on at once (a band counts its width), a sub-step that breaks
the limit is split further, greedily in transfer order.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...core.csr import permute_csr
from ...core.errors import InputError, UnsupportedError
from ...core.ring import arc_start, first_overlap, hops_along, shortest_direction
from .routes import RingRoutes
from ...core.schedule import LogicalSchedule, Schedule
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


def _split_for_transceivers(step: np.ndarray, src: np.ndarray, dst: np.ndarray, band: np.ndarray,
                            max_tx: int | None, max_rx: int | None, n: int) -> np.ndarray:
    """Spread each step's transfers over sub-steps so no node exceeds its channel limits."""
    if max_tx is None and max_rx is None:
        return step
    over = False
    for limit, col in ((max_tx, src), (max_rx, dst)):
        if limit is not None:
            if (band > limit).any():
                i = int(np.flatnonzero(band > limit)[0])
                raise InputError(f"transfer {i} uses a band of {int(band[i])} wavelengths but a node may use "
                                 f"only {limit} channels at once")
            over |= bool(np.bincount(step * n + col, weights=band).max() > limit)
    if not over:
        return step
    lim_tx = max_tx or int(band.sum()) + 1
    lim_rx = max_rx or int(band.sum()) + 1
    new_step = np.empty_like(step)
    offset = 0
    bounds = np.flatnonzero(np.diff(step)) + 1
    for part in np.split(np.arange(len(step)), bounds):
        used_tx: list[dict[int, int]] = []
        used_rx: list[dict[int, int]] = []
        for i in part.tolist():
            s, d, b = int(src[i]), int(dst[i]), int(band[i])
            k = 0
            while k < len(used_tx) and (used_tx[k].get(s, 0) + b > lim_tx or used_rx[k].get(d, 0) + b > lim_rx):
                k += 1
            if k == len(used_tx):
                used_tx.append({})
                used_rx.append({})
            used_tx[k][s] = used_tx[k].get(s, 0) + b
            used_rx[k][d] = used_rx[k].get(d, 0) + b
            new_step[i] = offset + k
        offset += len(used_tx)
    return new_step


def _slots(logical: LogicalSchedule, direction: np.ndarray, w: int):
    """Band per transfer and slot width per transfer (the widest band of its (round, direction)).

    Without bands the slot width is the scalar 1 (no per-transfer array is allocated).
    """
    t = len(logical.src)
    if logical.band is None:
        return np.ones(t, np.int32), 1
    band = logical.band.astype(np.int32, copy=False)
    if t and (band.min() < 1 or band.max() > w):
        i = int(np.flatnonzero((band < 1) | (band > w))[0])
        raise InputError(f"transfer {i} asks for a band of {int(band[i])} wavelengths; a band holds 1..{w} "
                         f"wavelengths of one fiber")
    group = logical.round * 2 + (direction > 0)
    if t and int(logical.round.max()) < 4 * t:  # dense round ids: index by (round, direction) directly
        inv = group
        widest = np.zeros(2 * int(logical.round.max()) + 2, np.int32)
    else:
        uniq, inv = np.unique(group, return_inverse=True)
        widest = np.zeros(len(uniq), np.int32)
    np.maximum.at(widest, inv, band)
    return band, widest[inv]


def realize_ring(system, logical: LogicalSchedule, *, strategy: str | Strategy = "first-fit",
                 algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
    """Route, assign bands of channels and lay out physical steps on an optical ring.

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992 (lightpaths, RWA).
    """
    n = system.nodes
    strat = get_strategy(strategy)
    src, dst = logical.src, logical.dst
    if logical.via is not None and (logical.via >= 0).any():
        raise UnsupportedError("optical rings take no route hints (via); give a direction instead")
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
    w = system.wavelengths
    band, width = _slots(logical, direction, w)
    colors = _colors(logical, direction, hops, n, strat)
    per_fiber = w // width
    cap = system.fibers * per_fiber
    # ``colors`` may be the logical schedule's own column (or a broadcast view): never written.
    # Its copy ``within`` (int32 while the colours fit) becomes the wavelength column in place.
    cmax = int(colors.max()) if t else 0
    within = colors.astype(np.int32 if cmax < 2**31 else np.int64)
    del colors
    if isinstance(width, np.ndarray):
        fits = t == 0 or bool((within < cap).all())
    else:
        fits = cmax < cap
    if fits:  # every colour in the round's first sub-step: the step is the round's offset alone
        sub = None
    else:
        sub = within // cap
        np.remainder(within, cap, out=within)
    del cap
    if system.fibers == 1:  # within < cap = per_fiber
        fiber = np.zeros(t, np.int16)
    else:
        fiber = (within // per_fiber).astype(np.int16)
        np.remainder(within, per_fiber, out=within)
    if isinstance(width, np.ndarray) or width != 1:
        np.multiply(within, width, out=within)
    wavelength = within.astype(np.int32, copy=False)
    del within, width, per_fiber
    # physical steps: rounds in order, each taking (max sub-step + 1) slots
    rnd_all = logical.round
    if len(rnd_all) > 1 and not (rnd_all[1:] >= rnd_all[:-1]).all():
        raise UnsupportedError("logical rounds must be in order")  # LogicalBuilder guarantees it
    starts = np.flatnonzero(np.concatenate([[True], rnd_all[1:] != rnd_all[:-1]])) if t else np.zeros(0, np.int64)
    if not t:
        per_round = np.zeros(0, np.int64)
    elif sub is None:
        per_round = np.ones(len(starts), np.int64)
    else:
        per_round = np.maximum.reduceat(sub, starts).astype(np.int64) + 1
    offsets = np.concatenate([[0], np.cumsum(per_round)[:-1]])
    step = np.repeat(offsets, np.diff(np.append(starts, t)))
    del starts, per_round, offsets
    if sub is not None:
        step = step.astype(np.int64, copy=False)
        step += sub
        del sub
    cols = {"round": logical.round, "src": src, "dst": dst, "reduce": logical.reduce,
            "direction": direction, "hops": hops, "fiber": fiber, "wavelength": wavelength, "band": band}
    del src, dst, direction, hops, fiber, wavelength, band  # cols holds the only references
    ptr, idx = logical.chunk_ptr, logical.chunk_idx
    limits = (system.max_tx_channels, system.max_rx_channels)
    for attempt in range(2):  # sort by step; again if transceiver limits split steps
        if len(step) > 1 and not (step[1:] >= step[:-1]).all():
            order = np.argsort(step, kind="stable")
            step = step[order]
            for k in list(cols):  # one column at a time, the old one freed as it is replaced
                cols[k] = cols[k][order]
            ptr, idx = permute_csr(np.diff(ptr), idx, order)
            del order
        if attempt == 0:
            split = _split_for_transceivers(step, cols["src"], cols["dst"], cols["band"], *limits, n)
            if split is step:
                break
            step = split
    routes = RingRoutes.create(**{k: cols.pop(k) for k in RingRoutes.COLUMNS})
    return Schedule(system=system, collective=logical.collective, algorithm=algorithm,
                    params=dict(params or {}), step=step.astype(np.int64, copy=False),
                    chunk_ptr=ptr, chunk_idx=idx, routes=routes, **cols)
