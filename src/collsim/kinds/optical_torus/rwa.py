"""Realise a logical schedule on an optical torus: each transfer on its row or column ring.

Every transfer must join two nodes of one row or one column
(:meth:`~collsim.kinds.optical_torus.system.OpticalTorus.ring_coords`); it is routed
on that ring (the algorithm's direction, or the shortest), and coloured exactly
as on a ring (:mod:`collsim.kinds.optical_ring.rwa`), with one difference: transfers of
different rings never share a link, so channels are assigned per *(round,
ring, direction)* group instead of per (round, direction).  Pre-assigned
colours (OpTree's and the striped ring's exact constructions, lifted to every
ring by :mod:`collsim.algorithms.torus`) are kept; other overlapping groups are
coloured by the strategy, one group at a time.  A colour ``c`` of a group whose
widest band is ``W`` maps to sub-step ``c // (F (w // W))``, fiber and lowest
wavelength as on the ring; a round takes as many slots as its deepest group.
Transceiver limits that the channels do not already enforce (shared
transceivers, ``max_tx_channels``) split slots further, greedily.

The schedule's routes part is :class:`~collsim.kinds.optical_ring.routes.RingRoutes`: the ring
of a transfer is implied by its endpoints, ``direction`` and ``hops`` are along
that ring.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ...core.errors import InputError, UnsupportedError
from ...core.ring import first_overlap, hops_along, shortest_direction
from ..optical_ring.routes import RingRoutes
from ...core.schedule import LogicalSchedule, Schedule, permute_csr
from ..optical_ring.assign import Strategy, get_strategy
from ..optical_ring.rwa import _split_for_transceivers

__all__ = ["realize_torus", "torus_arcs"]


def torus_arcs(system, src, dst, direction=None):
    """Ring, direction, hops and arc start of every transfer on a torus (vectorised).

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992 (lightpaths).
    """
    dim, ring, a, b, length, ok = system.ring_coords(src, dst)
    if direction is None:
        direction = np.zeros(len(a), np.int8)
    direction = np.asarray(direction, dtype=np.int8).copy()
    hops = np.zeros(len(a), np.int64)
    for d, n in ((0, system.cols), (1, system.rows)):
        m = (dim == d) & ok
        if not m.any():
            continue
        unset = m & (direction == 0)
        if unset.any():
            direction[unset] = shortest_direction(a[unset], b[unset], n)
        hops[m] = hops_along(a[m], b[m], direction[m], n)
    start = np.where(direction > 0, a, (-a) % length)
    return {"dim": dim, "ring": ring, "length": length, "direction": direction, "hops": hops,
            "start": start, "ok": ok}


def _group_ids(logical: LogicalSchedule, arcs: dict, rings: int) -> np.ndarray:
    """(round, dimension, ring, direction) of each transfer as one int64."""
    return ((logical.round * 2 + arcs["dim"]) * rings + arcs["ring"]) * 2 + (arcs["direction"] > 0)


def _colors(logical: LogicalSchedule, arcs: dict, group: np.ndarray, system, strategy: Strategy) -> np.ndarray:
    """Keep pre-assigned colours; colour overlapping groups with the strategy (one call per group)."""
    given = logical.color
    if given is not None and (given >= 0).all():
        return given.astype(np.int64, copy=False)
    colors = np.zeros(len(group), np.int64) if given is None else np.maximum(given, 0)
    todo = np.ones(len(group), bool) if given is None else given < 0
    if given is not None and np.isin(group[todo], np.unique(group[~todo])).any():
        raise UnsupportedError("a ring's round mixes pre-assigned and unassigned colours in one direction")
    for d, n in ((0, system.cols), (1, system.rows)):
        idx = np.flatnonzero(todo & (arcs["dim"] == d))
        if len(idx) < 2 or first_overlap(group[idx], arcs["start"][idx], arcs["hops"][idx], n) is None:
            continue
        order = idx[np.argsort(group[idx], kind="stable")]
        for part in np.split(order, np.flatnonzero(np.diff(group[order])) + 1):
            if len(part) > 1 and first_overlap(np.zeros(len(part)), arcs["start"][part], arcs["hops"][part],
                                               n) is not None:
                colors[part] = strategy(arcs["start"][part], arcs["hops"][part], n)
    return colors


def realize_torus(system, logical: LogicalSchedule, *, strategy: str | Strategy = "first-fit",
                  algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
    """Route every transfer on its row or column ring, assign bands of channels, lay out slots.

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992; F. Dai, Y. Chen, Z. Huang,
    H. Zhang, "OpTree: An Efficient Algorithm for All-gather Operation in Optical
    Interconnect Systems", IEEE Open Journal of the Communications Society, 2024,
    §VI-B (an algorithm per row, then per column, of a torus).
    """
    strat = get_strategy(strategy)
    src, dst = logical.src, logical.dst
    t = len(src)
    if logical.via is not None and (logical.via >= 0).any():
        raise UnsupportedError("optical tori take no route hints (via); give a direction instead")
    arcs = torus_arcs(system, src, dst, logical.direction)
    if not arcs["ok"].all():
        i = int(np.flatnonzero(~arcs["ok"])[0])
        raise UnsupportedError(f"transfer {i} ({int(src[i])}->{int(dst[i])}) joins nodes that share neither a "
                               f"row nor a column of the {system.rows}x{system.cols} torus: a lightpath stays "
                               f"within one ring")
    rnd = logical.round
    if t > 1 and not (rnd[1:] >= rnd[:-1]).all():
        raise UnsupportedError("logical rounds must be in order")  # LogicalBuilder guarantees it
    w = system.wavelengths
    group = _group_ids(logical, arcs, max(system.rows, system.cols))
    if logical.band is None:
        band, width = np.ones(t, np.int32), 1
    else:
        band = logical.band.astype(np.int32, copy=False)
        if t and (band.min() < 1 or band.max() > w):
            i = int(np.flatnonzero((band < 1) | (band > w))[0])
            raise InputError(f"transfer {i} asks for a band of {int(band[i])} wavelengths; a band holds 1..{w} "
                             f"wavelengths of one fiber")
        uniq, inv = np.unique(group, return_inverse=True)
        widest = np.zeros(len(uniq), np.int32)
        np.maximum.at(widest, inv.reshape(-1), band)
        width = widest[inv.reshape(-1)]
    colors = _colors(logical, arcs, group, system, strat)
    per_fiber = w // width
    cap = system.fibers * per_fiber
    sub = colors // cap
    within = colors % cap
    fiber = (within // per_fiber).astype(np.int16)
    wavelength = ((within % per_fiber) * width).astype(np.int32)
    starts = np.flatnonzero(np.concatenate([[True], rnd[1:] != rnd[:-1]])) if t else np.zeros(0, np.int64)
    per_round = np.maximum.reduceat(sub + 1, starts) if t else np.zeros(0, np.int64)
    offsets = np.concatenate([[0], np.cumsum(per_round)[:-1]]).astype(np.int64)
    step = np.repeat(offsets, np.diff(np.append(starts, t))) + sub
    cols = {"round": rnd, "src": src, "dst": dst, "reduce": logical.reduce, "direction": arcs["direction"],
            "hops": arcs["hops"], "fiber": fiber, "wavelength": wavelength, "band": band}
    ptr, idx = logical.chunk_ptr, logical.chunk_idx
    for attempt in range(2):  # sort by step; again if transceiver limits split steps
        if t > 1 and not (step[1:] >= step[:-1]).all():
            order = np.argsort(step, kind="stable")
            step = step[order]
            ptr, idx = permute_csr(np.diff(ptr), idx, order)
            cols = {k: v[order] for k, v in cols.items()}
        if attempt == 0:
            split = _split_for_transceivers(step, cols["src"], cols["dst"], cols["band"], system.tx_limit,
                                            system.rx_limit, system.nodes)
            if split is step:
                break
            step = split
    routes = RingRoutes.create(**{k: cols.pop(k) for k in RingRoutes.COLUMNS})
    return Schedule(system=system, collective=logical.collective, algorithm=algorithm,
                    params=dict(params or {}), step=step.astype(np.int64, copy=False),
                    chunk_ptr=ptr, chunk_idx=idx, routes=routes, **cols)
