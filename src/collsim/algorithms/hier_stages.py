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
    if not st.ring:                     # every member to every other (the system's pair routes)
        return system.group_exchange(st.dim)[1] + (system.startup_s or 0.0)
    k = system.sizes[st.dim]
    members = system.with_coord(st.dim, np.zeros(k, np.int64), np.arange(k))
    ptr, links = system.route(members, np.roll(members, -st.sign))   # every member to its ring neighbour
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


def dimension_rates(system, dims=None) -> np.ndarray:
    """Bytes per second one node receives over a dimension when its whole group exchanges directly.

    The dimension's link bandwidth times ``(k-1)`` over the most pair routes sharing one of its
    directed links in an all-to-all inside one group: ``bandwidth`` through a switch, ``(k-1)``
    bandwidths on a full mesh, less on a ring or a line.  ``dims``: only these dimensions (the
    others NaN); a group too large to route every pair of is refused with the estimate.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """
    out = []
    for d, dim in enumerate(system.dimensions):
        if dims is not None and d not in dims:    # not asked for: NaN
            out.append(np.nan)
            continue
        load, _ = system.group_exchange(d)      # refused with its estimate where every pair cannot be routed
        out.append(dim.bandwidth_bytes_per_s * (dim.size - 1) / load)
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


def _initial_holdings(n: int, collective: CollectiveType, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What ``nodes`` hold before the first stage: (node, block) pairs."""
    if collective.name == "allreduce":
        return np.repeat(nodes, n), np.tile(np.arange(n, dtype=np.int64), len(nodes))
    if collective.name == "allgather":
        return nodes.copy(), nodes.copy()
    s = np.repeat(nodes, n)
    t = np.tile(np.arange(n, dtype=np.int64), len(nodes))
    keep = s != t
    return s[keep], (s * n + t)[keep]


class _Frame:
    """Moves and holdings as they are kept: every node's (no group), or moved by the element that
    takes a node of them into the group's domain (the destination of a move, the holder of a
    holding), so that the domain's alone stand for all (the group maps the stages onto themselves)."""

    def __init__(self, n: int, collective: CollectiveType, group) -> None:
        self.n, self.pairs, self.group = n, collective.name == "alltoall", group

    def blocks(self, g, b: np.ndarray) -> np.ndarray:
        if not self.pairs:
            return self.group.act(g, b)
        a, c = np.divmod(b, self.n)
        return self.group.act(g, a) * self.n + self.group.act(g, c)

    def to_domain(self, by: np.ndarray, *others: np.ndarray, block: np.ndarray) -> tuple[np.ndarray, ...]:
        """``by`` (and ``others``, node ids, and ``block``) moved so that ``by`` lies in the domain."""
        if self.group is None:
            return (by, *others, block)
        g = self.group.inverse(self.group.element_of(by))
        return (self.group.act(g, by), *(self.group.act(g, o) for o in others), self.blocks(g, block))

    def move(self, src, dst, blk, red: bool) -> tuple:
        dst, src, blk = self.to_domain(dst, src, block=blk)
        return (src, dst, blk, red)


def stage_moves(system, collective: CollectiveType, template: tuple[Stage, ...], group=None) -> list[list[tuple]]:
    """The block moves of every round of a template: per round, ``(src, dst, block, reduce)`` arrays.

    Blocks: all-reduce and all-gather, block ``b`` of the ``N`` (owner / source ``b``); all-to-all,
    pair ``a N + b`` (source ``a``, destination ``b``).

    ``group`` (a :class:`~collsim.core.symmetry.Translations` of the system's coordinates, which
    maps every stage onto itself): the moves *into* the group's domain alone, each the image of a
    move of the domain's holdings (the holdings of the domain stand for every node's, since the
    group maps holdings, and each stage's moves, onto themselves: a stage moves blocks by
    coordinate differences).  The state is then ``1 / order`` of every node's: on 1,024 boxes of
    8 GPUs (8,192 nodes, the GPUs' coordinate translated) 8.4 M holdings instead of 67 M.  The
    moves are the same as those of every node whose destination is in the domain, round by round.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension); W. Burnside, *Theory of Groups of Finite
    Order*, 2nd ed., 1911 (orbits of a free action).
    """
    n = system.nodes
    frame = _Frame(n, collective, group)
    nodes = np.arange(n, dtype=np.int64) if group is None else np.asarray(group.domain(), np.int64)
    hold_v, hold_b = _initial_holdings(n, collective, nodes)
    out = []
    for st in template:
        d, k = st.dim, system.sizes[st.dim]
        cv = system.coord(d, hold_v)
        cb = _block_coord(system, collective, hold_b, d)
        rounds = []
        if st.op == "rs" and not st.ring:       # each block to its owner's coordinate, combined there
            w = system.with_coord(d, hold_v, cb)
            go = w != hold_v
            rounds.append(frame.move(hold_v[go], w[go], hold_b[go], True))
            hold_v = w
        elif st.op == "rs":                     # ring: round r, the block of coordinate c - r - 1 moves on
            nxt = system.with_coord(d, hold_v, (cv + st.sign) % k)
            for go in _by_round((st.sign * (cv - cb)) % k, 1, k - 1):
                rounds.append(frame.move(hold_v[go], nxt[go], hold_b[go], True))
            hold_v = system.with_coord(d, hold_v, cb)
        elif st.op == "route" and not st.ring:  # each block to its destination's coordinate
            w = system.with_coord(d, hold_v, cb)
            go = w != hold_v
            rounds.append(frame.move(hold_v[go], w[go], hold_b[go], False))
            hold_v = w
        elif st.op == "route":                  # ring: every block not yet there moves one hop on
            for r in range(k - 1):
                go = cb != cv
                nxt = system.with_coord(d, hold_v[go], (cv[go] + st.sign) % k)
                rounds.append(frame.move(hold_v[go], nxt, hold_b[go], False))
                hold_v = hold_v.copy()
                hold_v[go] = nxt
                cv = system.coord(d, hold_v)
        else:                                   # ag: every group member ends with every held block
            ev = system.with_coord(d, np.repeat(hold_v, k), np.tile(np.arange(k), len(hold_v)))
            eb = np.repeat(hold_b, k)
            if not st.ring:
                go = ev != np.repeat(hold_v, k)
                rounds.append(frame.move(np.repeat(hold_v, k)[go], ev[go], eb[go], False))
            else:                               # ring: round r, the block of coordinate c - r moves on
                cev, ceb = system.coord(d, ev), np.repeat(cb, k)
                for go in _by_round((st.sign * (cev - ceb)) % k, 0, k - 1):
                    rounds.append(frame.move(ev[go], system.with_coord(d, ev[go], (cev[go] + st.sign) % k), eb[go],
                                             False))
            hold_v, hold_b = ev, eb
        if group is not None:                   # the holders moved back into the domain
            hold_v, hold_b = frame.to_domain(hold_v, block=hold_b)
        if st.op == "rs":   # every owner holds one (partial) copy of each of its blocks
            key = np.unique(hold_v * (n * n) + hold_b)
            hold_v, hold_b = key // (n * n), key % (n * n)
        out.append(rounds)
    return out


def round_costs(system, collective: CollectiveType, template, moves, group=None) -> list[tuple[tuple[int, ...], float]]:
    """Per round of a template: the resources it uses and its seconds per byte of one block.

    ``group``: ``moves`` are the moves into its domain (:func:`stage_moves`); a node then receives
    what its domain node does, and sends what the moves from its orbit carry (the group acting
    freely, every move from the orbit has one image into the domain).

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (bytes over bandwidth).
    """
    rates = dimension_rates(system, {st.dim for st in template if not st.ring})   # a ring stage's: its links'
    out = []
    for st, rounds in zip(template, moves):
        rate = system.dimensions[st.dim].bandwidth_bytes_per_s if st.ring else rates[st.dim]
        for src, dst, _, _ in rounds:
            senders = src if group is None else group.domain_of(src)
            busiest = max(np.bincount(dst, minlength=system.nodes).max(initial=0),
                          np.bincount(senders, minlength=system.nodes).max(initial=0))
            out.append((_resources(system, st), float(busiest / rate)))
    return out
