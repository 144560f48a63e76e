"""Stages of hierarchical collectives: what one dimension's groups move at once (:mod:`.hier_lanes` plans them).

A *stage* runs inside every group of one dimension at once (the nodes that differ only in that
coordinate, :class:`~collsim.kinds.hierarchical.system.Hierarchical`):

* ``rs`` (reduce-scatter): node ``v`` sends each block it holds to the group member whose
  coordinate equals the block's, to be combined there; it keeps the blocks of its own coordinate;
* ``ag`` (all-gather): ``v`` sends everything it holds to every group member;
* ``route`` (all-to-all): ``v`` sends each block to the member whose coordinate equals the block's
  destination's, and keeps holding what it received.

A stage is *direct* (one round, every group member at once: bandwidth-optimal through a switch or a
full mesh) or *ring* (``k - 1`` rounds around the group, clockwise or the other way:
bandwidth-optimal on a ring).  All-reduce is reduce-scatter over the dimensions in some order, then
all-gather in the reverse order; all-gather gathers in some order; all-to-all routes in some order.

References
----------
M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for deep
learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6), 2019;
P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of Workstations",
JPDC 69(2), 2009 (the ring stages).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..core.collectives import CollectiveType
from ..core.errors import InputError


@dataclass(frozen=True)
class Stage:
    """One stage of a lane: ``op`` (``rs``, ``ag`` or ``route``) over dimension ``dim``, direct or ring.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """

    op: str
    dim: int
    ring: bool = False
    sign: int = 1

    def rounds(self, k: int) -> int:
        """Rounds the stage takes on a dimension of ``k`` nodes."""
        return k - 1 if self.ring else 1


def templates(system, collective: CollectiveType, orders, ring: bool) -> list[tuple[Stage, ...]]:
    """The stage sequences of a collective, one per dimension order.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """
    dims = [d for d, k in enumerate(system.sizes) if k >= 2]
    if orders == "inner":
        perms = [tuple(dims)]
    elif orders == "outer":
        perms = [tuple(reversed(dims))]
    elif orders == "all":
        perms = (list(itertools.permutations(dims)) if len(dims) <= 4
                 else [tuple(dims[i:] + dims[:i]) for i in range(len(dims))])
    else:
        perms = [tuple(int(d) for d in p) for p in orders]
        if any(sorted(p) != dims for p in perms):
            raise InputError(f"every order must list the dimensions {dims} once, got {orders!r}")
    two_way = ring and any(_directed(system, d) for d in dims)
    return [template(collective, p, ring, sign) for p, sign in itertools.product(perms, (1, -1) if two_way else (1,))]


def template(collective: CollectiveType, order, ring: bool, sign: int = 1) -> tuple[Stage, ...]:
    """The stages of one dimension order (all-reduce: reduce-scatter in order, all-gather back).

    References
    ----------
    A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep learning in TensorFlow",
    arXiv:1802.05799, 2018 (reduce-scatter inside, all-reduce across, all-gather back).
    """
    if collective.name == "allreduce":
        return tuple([Stage("rs", d, ring, sign) for d in order] + [Stage("ag", d, ring, sign)
                                                                     for d in reversed(order)])
    return tuple(Stage("ag" if collective.name == "allgather" else "route", d, ring, sign) for d in order)


def stage_latency_s(system, st: Stage) -> float:
    """Start-up plus the latency of the longest route of one round of a stage.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (the start-up and latency term).
    """
    k = system.sizes[st.dim]
    members = system.with_coord(st.dim, np.zeros(k, np.int64), np.arange(k))
    if st.ring:                         # every member to its ring neighbour
        src, dst = members, np.roll(members, -st.sign)
    else:                               # every member to every other
        src, dst = (a.reshape(-1) for a in np.meshgrid(members, members, indexing="ij"))
        src, dst = src[src != dst], dst[src != dst]
    ptr, links = system.route(src, dst)
    lat = np.concatenate([[0.0], np.cumsum(system.links.latency_s[links])])
    return float((lat[ptr[1:]] - lat[ptr[:-1]]).max(initial=0.0)) + (system.startup_s or 0.0)


def _directed(system, d: int) -> bool:
    """Whether dimension ``d``'s ring steps each way use different links (a ring or full mesh of k > 2)."""
    dim = system.dimensions[d]
    return dim.topology in ("ring", "full") and dim.size > 2


def _resources(system, st: Stage) -> tuple[int, ...]:
    """The LP resources a stage's round occupies: ``2 d`` (and ``2 d + 1``, the other direction's links)."""
    if not _directed(system, st.dim):
        return (2 * st.dim,)
    if not st.ring:
        return (2 * st.dim, 2 * st.dim + 1)
    return (2 * st.dim + (st.sign < 0),)


def dimension_rates(system) -> np.ndarray:
    """Bytes per second one node receives over a dimension when its whole group exchanges directly.

    The dimension's link bandwidth times ``(k-1)`` over the most pair routes sharing one of its
    directed links in an all-to-all inside one group: ``bandwidth`` through a switch, ``(k-1)``
    bandwidths on a full mesh, less on a ring or a line.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """
    out = []
    for d, dim in enumerate(system.dimensions):
        k = dim.size
        members = system.with_coord(d, np.zeros(k, np.int64), np.arange(k))
        s, t = np.meshgrid(members, members, indexing="ij")
        keep = s != t
        _, links = system.route(s[keep], t[keep])
        load = np.bincount(links).max() if len(links) else 1
        out.append(dim.bandwidth_bytes_per_s * (k - 1) / load)
    return np.array(out)


def _block_coord(system, collective: CollectiveType, blocks: np.ndarray, d: int) -> np.ndarray:
    """Coordinate ``d`` of what steers each block: its owner (all-reduce), source (all-gather) or destination."""
    n = system.nodes
    key = blocks % n if collective.name == "alltoall" else blocks
    return system.coord(d, key)


def _by_round(key: np.ndarray, first: int, count: int) -> list[np.ndarray]:
    """For ``r`` in ``0..count-1``, the positions where ``key == first + r``, in increasing order.

    One stable sort instead of a comparison of the whole array per round (a ring stage of ``k``
    members has ``k - 1`` rounds over every holding).
    """
    order = np.argsort(key, kind="stable")
    bounds = np.searchsorted(key[order], np.arange(first, first + count + 1))
    return [order[bounds[r]:bounds[r + 1]] for r in range(count)]


def stage_moves(system, collective: CollectiveType, template: tuple[Stage, ...]) -> list[list[tuple]]:
    """The block moves of every round of a template: per round, ``(src, dst, block, reduce)`` arrays.

    Blocks: all-reduce and all-gather, block ``b`` of the ``N`` (owner / source ``b``); all-to-all,
    pair ``a N + b`` (source ``a``, destination ``b``).

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """
    n = system.nodes
    v = np.arange(n, dtype=np.int64)
    if collective.name == "allreduce":
        hold_v, hold_b = np.repeat(v, n), np.tile(v, n)
    elif collective.name == "allgather":
        hold_v, hold_b = v.copy(), v.copy()
    else:
        s, t = np.divmod(np.arange(n * n, dtype=np.int64), n)
        keep = s != t
        hold_v, hold_b = s[keep], (s * n + t)[keep]
    out = []
    for st in template:
        d, k = st.dim, system.sizes[st.dim]
        cv = system.coord(d, hold_v)
        cb = _block_coord(system, collective, hold_b, d)
        rounds = []
        if st.op == "rs" and not st.ring:       # each block to its owner's coordinate, combined there
            w = system.with_coord(d, hold_v, cb)
            go = w != hold_v
            rounds.append((hold_v[go], w[go], hold_b[go], True))
            hold_v = w
        elif st.op == "rs":                     # ring: round r, the block of coordinate c - r - 1 moves on
            nxt = system.with_coord(d, hold_v, (cv + st.sign) % k)
            for go in _by_round((st.sign * (cv - cb)) % k, 1, k - 1):
                rounds.append((hold_v[go], nxt[go], hold_b[go], True))
            hold_v = system.with_coord(d, hold_v, cb)
        elif st.op == "route" and not st.ring:  # each block to its destination's coordinate
            w = system.with_coord(d, hold_v, cb)
            go = w != hold_v
            rounds.append((hold_v[go], w[go], hold_b[go], False))
            hold_v = w
        elif st.op == "route":                  # ring: every block not yet there moves one hop on
            for r in range(k - 1):
                go = cb != cv
                nxt = system.with_coord(d, hold_v[go], (cv[go] + st.sign) % k)
                rounds.append((hold_v[go], nxt, hold_b[go], False))
                hold_v = hold_v.copy()
                hold_v[go] = nxt
                cv = system.coord(d, hold_v)
        else:                                   # ag: every group member ends with every held block
            ev = system.with_coord(d, np.repeat(hold_v, k), np.tile(np.arange(k), len(hold_v)))
            eb = np.repeat(hold_b, k)
            if not st.ring:
                go = ev != np.repeat(hold_v, k)
                rounds.append((np.repeat(hold_v, k)[go], ev[go], eb[go], False))
            else:                               # ring: round r, the block of coordinate c - r moves on
                cev, ceb = system.coord(d, ev), np.repeat(cb, k)
                for go in _by_round((st.sign * (cev - ceb)) % k, 0, k - 1):
                    rounds.append((ev[go], system.with_coord(d, ev[go], (cev[go] + st.sign) % k), eb[go], False))
            hold_v, hold_b = ev, eb
        if st.op == "rs":   # every owner holds one (partial) copy of each of its blocks
            key = np.unique(hold_v * (n * n) + hold_b)
            hold_v, hold_b = key // (n * n), key % (n * n)
        out.append(rounds)
    return out


def round_costs(system, collective: CollectiveType, template, moves) -> list[tuple[tuple[int, ...], float]]:
    """Per round of a template: the resources it uses and its seconds per byte of one block.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (bytes over bandwidth).
    """
    rates = dimension_rates(system)
    out = []
    for st, rounds in zip(template, moves):
        rate = system.dimensions[st.dim].bandwidth_bytes_per_s if st.ring else rates[st.dim]
        for src, dst, _, _ in rounds:
            busiest = max(np.bincount(dst, minlength=system.nodes).max(initial=0),
                          np.bincount(src, minlength=system.nodes).max(initial=0))
            out.append((_resources(system, st), float(busiest / rate)))
    return out
