"""The machinery of hierarchical collectives: stages one dimension at a time, pipelined over lanes.

A *stage* runs inside every group of one dimension at once (the nodes that differ only in that
coordinate, :class:`~collsim.systems.hierarchical.Hierarchical`):

* ``rs`` (reduce-scatter): node ``v`` sends each block it holds to the group member whose
  coordinate equals the block's, to be combined there; it keeps the blocks of its own coordinate;
* ``ag`` (all-gather): ``v`` sends everything it holds to every group member;
* ``route`` (all-to-all): ``v`` sends each block to the member whose coordinate equals the block's
  destination's, and keeps holding what it received.

A stage is *direct* (one round, every group member at once: bandwidth-optimal through a switch or a
full mesh) or *ring* (``k - 1`` rounds around the group: bandwidth-optimal on a ring).  All-reduce
is reduce-scatter over the dimensions in some order, then all-gather in the reverse order; all-gather
gathers in some order; all-to-all routes in some order.

**Lanes.**  The data is cut into units; a *lane* is a share of them that runs its stages in
consecutive rounds from a start round, in one dimension order.  Lanes that start at different
rounds or run different orders overlap in the same rounds (the flow simulator's bulk-synchronous
steps), so a dimension's links work while another's do: pipelining, and balancing bytes across
dimensions (a lane that crosses the fabric first moves its bulk over the fabric).  The shares
come from a small linear program (:func:`plan_lanes`): per round and dimension, the busiest node's
bytes over the dimension's rate are at most the round's time; the sum of round times is minimised.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..core.collective import make_collective
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder

_MAX_UNITS = 1 << 15
"""Cap on chunks a hierarchical schedule cuts the data into (lanes times their units)."""


@dataclass(frozen=True)
class Stage:
    """One stage of a lane: ``op`` (``rs``, ``ag`` or ``route``) over dimension ``dim``, direct or ring.

    Parameters
    ----------
    op : str
        ``"rs"`` (reduce-scatter), ``"ag"`` (all-gather) or ``"route"`` (all-to-all).
    dim : int
        The dimension.
    ring : bool, optional
        Ring rounds (``k - 1``) instead of one direct round.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).

    Examples
    --------
    >>> Stage("rs", 0, False).rounds(8), Stage("rs", 0, True).rounds(8)
    (1, 7)
    """

    op: str
    dim: int
    ring: bool = False

    def rounds(self, k: int) -> int:
        """Rounds the stage takes on a dimension of ``k`` nodes."""
        return k - 1 if self.ring else 1


def templates(system, collective: str, orders, ring: bool) -> list[tuple[Stage, ...]]:
    """The stage sequences of a collective, one per dimension order.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : str
        ``allreduce``, ``allgather`` or ``alltoall``.
    orders : str or list of tuple
        ``"all"`` (every order of the dimensions, up to 4 of them; rotations above), ``"inner"``
        (inner dimension first) or ``"outer"``, or explicit orders.
    ring : bool
        Ring stages instead of direct ones.

    Returns
    -------
    list of tuple of Stage
        One template per order.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).

    Examples
    --------
    >>> from collsim.systems.hierarchical import Hierarchical
    >>> [[(s.op, s.dim) for s in t] for t in templates(Hierarchical(nodes=8, dimensions="4x2"), "allreduce", "inner", False)]
    [[('rs', 0), ('rs', 1), ('ag', 1), ('ag', 0)]]
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
    out = []
    for p in perms:
        if collective == "allreduce":
            out.append(tuple([Stage("rs", d, ring) for d in p] + [Stage("ag", d, ring) for d in reversed(p)]))
        elif collective == "allgather":
            out.append(tuple(Stage("ag", d, ring) for d in p))
        else:
            out.append(tuple(Stage("route", d, ring) for d in p))
    return out


def dimension_rates(system) -> np.ndarray:
    """Bytes per second one node receives over a dimension when its whole group exchanges directly.

    The dimension's link bandwidth times ``(k-1)`` over the most pair routes sharing one of its
    directed links in an all-to-all inside one group: ``bandwidth`` through a switch, ``(k-1)``
    bandwidths on a full mesh, less on a ring or a line.

    Parameters
    ----------
    system : Hierarchical
        The system.

    Returns
    -------
    numpy.ndarray
        One rate per dimension.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).

    Examples
    --------
    >>> from collsim.systems.hierarchical import Hierarchical
    >>> dimension_rates(Hierarchical(nodes=8, dimensions="switch:4:1GB/s,full:2:2GB/s")).tolist()
    [1000000000.0, 2000000000.0]
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


def _block_coords(system, collective: str, blocks: np.ndarray) -> np.ndarray:
    """Coordinates that steer each block: its owner (all-reduce), source (all-gather) or destination."""
    n = system.nodes
    key = blocks % n if collective == "alltoall" else blocks
    return system.coords(key)


def stage_moves(system, collective: str, template: tuple[Stage, ...]) -> list[list[tuple]]:
    """The block moves of every round of a template: per round, ``(src, dst, block, reduce)`` arrays.

    Blocks: all-reduce and all-gather, block ``b`` of the ``N`` (owner / source ``b``); all-to-all,
    pair ``a N + b`` (source ``a``, destination ``b``).

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : str
        ``allreduce``, ``allgather`` or ``alltoall``.
    template : tuple of Stage
        The stages.

    Returns
    -------
    list of list of tuple
        One list per stage, one ``(src, dst, block, reduce)`` per round of the stage.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).

    Examples
    --------
    >>> from collsim.systems.hierarchical import Hierarchical
    >>> h = Hierarchical(nodes=4, dimensions="2x2")
    >>> moves = stage_moves(h, "allgather", templates(h, "allgather", "inner", False)[0])
    >>> [len(rounds[0][0]) for rounds in moves]      # 4 blocks, then 4 nodes x 2 blocks
    [4, 8]
    """
    n = system.nodes
    v = np.arange(n, dtype=np.int64)
    if collective == "allreduce":
        hold_v, hold_b = np.repeat(v, n), np.tile(v, n)
    elif collective == "allgather":
        hold_v, hold_b = v.copy(), v.copy()
    else:
        s, t = np.divmod(np.arange(n * n, dtype=np.int64), n)
        keep = s != t
        hold_v, hold_b = s[keep], (s * n + t)[keep]
    out = []
    for st in template:
        d, k = st.dim, system.sizes[st.dim]
        cv = system.coords(hold_v)[:, d]
        cb = _block_coords(system, collective, hold_b)[:, d]
        rounds = []
        if st.op == "rs" and not st.ring:       # each block to its owner's coordinate, combined there
            w = system.with_coord(d, hold_v, cb)
            go = w != hold_v
            rounds.append((hold_v[go], w[go], hold_b[go], True))
            hold_v = w
        elif st.op == "rs":                     # ring: round r, the block of coordinate c - r - 1 moves on
            nxt = system.with_coord(d, hold_v, (cv + 1) % k)
            for r in range(k - 1):
                go = (cv - cb) % k == r + 1
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
                nxt = system.with_coord(d, hold_v[go], (cv[go] + 1) % k)
                rounds.append((hold_v[go], nxt, hold_b[go], False))
                hold_v = hold_v.copy()
                hold_v[go] = nxt
                cv = system.coords(hold_v)[:, d]
        else:                                   # ag: every group member ends with every held block
            ev = system.with_coord(d, np.repeat(hold_v, k), np.tile(np.arange(k), len(hold_v)))
            eb = np.repeat(hold_b, k)
            if not st.ring:
                go = ev != np.repeat(hold_v, k)
                rounds.append((np.repeat(hold_v, k)[go], ev[go], eb[go], False))
            else:                               # ring: round r, the block of coordinate c - r moves on
                cev, ceb = system.coords(ev)[:, d], np.repeat(cb, k)
                for r in range(k - 1):
                    go = (cev - ceb) % k == r
                    rounds.append((ev[go], system.with_coord(d, ev[go], (cev[go] + 1) % k), eb[go], False))
            hold_v, hold_b = ev, eb
        if st.op == "rs":   # every owner holds one (partial) copy of each of its blocks
            key = np.unique(hold_v * (n * n) + hold_b)
            hold_v, hold_b = key // (n * n), key % (n * n)
        out.append(rounds)
    return out


def _round_costs(system, collective: str, template, moves) -> list[tuple[int, float]]:
    """Per round of a template: its dimension and seconds per byte of one block (the busiest receiver)."""
    rates = dimension_rates(system)
    out = []
    for st, rounds in zip(template, moves):
        rate = system.dimensions[st.dim].bandwidth_bytes_per_s if st.ring else rates[st.dim]
        for src, dst, _, _ in rounds:
            busiest = max(np.bincount(dst, minlength=system.nodes).max(initial=0),
                          np.bincount(src, minlength=system.nodes).max(initial=0))
            out.append((st.dim, float(busiest) / rate))
    return out


def plan_lanes(costs: list[list[tuple[int, float]]], pieces: int, dims: int) -> tuple[np.ndarray, float]:
    """Shares of the data per lane (template, start round) minimising the sum of round times.

    Parameters
    ----------
    costs : list of list of (int, float)
        Per template, per round: the dimension used and seconds per unit of data.
    pieces : int
        Start rounds ``0 .. pieces-1`` (the pipeline depth).
    dims : int
        Number of dimensions.

    Returns
    -------
    tuple
        ``(templates, pieces)`` shares summing to 1, and the planned bandwidth time (the sum of
        round times, in the costs' unit).

    Notes
    -----
    The linear program: minimise ``sum_r T_r`` subject to, for every round ``r`` and dimension
    ``d``, ``sum over lanes active on d in r of x_lane cost <= T_r`` and ``sum x = 1``, ``x >= 0``
    (HiGHS through :func:`scipy.optimize.linprog`).  A round ends when its busiest dimension
    does (bulk-synchronous), so the objective is the schedule's bandwidth time.

    References
    ----------
    S. Rashidi, W. Won, S. Srinivasan, S. Sridharan, T. Krishna, "Themis: A Network Bandwidth-Aware
    Collective Scheduling Policy for Distributed Training of DL Models", ISCA 2022 (balancing
    chunks across dimensions by their bandwidth; here as a linear program).

    Examples
    --------
    >>> x, t = plan_lanes([[(0, 1.0), (1, 1.0)], [(1, 1.0), (0, 1.0)]], 1, 2)   # two orders share evenly
    >>> x.round(3).tolist(), round(t, 3)
    ([[0.5], [0.5]], 1.0)
    """
    from scipy.optimize import linprog
    length = max(len(c) for c in costs)
    rounds = length + pieces - 1
    lanes = [(t, s) for t in range(len(costs)) for s in range(pieces)]
    nx = len(lanes)
    a = np.zeros((rounds * dims, nx + rounds))
    for j, (t, s) in enumerate(lanes):
        for i, (d, c) in enumerate(costs[t]):
            a[(s + i) * dims + d, j] += c
    for r in range(rounds):
        a[r * dims:(r + 1) * dims, nx + r] = -1.0
    scale = max(float(a[:, :nx].max()), 1e-300)
    a[:, :nx] /= scale
    obj = np.concatenate([np.zeros(nx), np.ones(rounds)])
    eq = np.concatenate([np.ones(nx), np.zeros(rounds)])[None, :]
    res = linprog(obj, A_ub=a, b_ub=np.zeros(len(a)), A_eq=eq, b_eq=[1.0], bounds=(0, None), method="highs")
    if res.status != 0:   # not expected: the LP is always feasible and bounded; fall back to one lane
        x = np.zeros(nx)
        x[0] = 1.0
    else:
        x = np.maximum(res.x[:nx], 0)
    x = x / x.sum()
    busy = (a[:, :nx] @ x).reshape(rounds, dims).max(axis=1)
    return x.reshape(len(costs), pieces), float(busy.sum() * scale)


def integer_units(shares: np.ndarray, units: int) -> np.ndarray:
    """Whole units per lane, summing to ``units``, by largest remainder (a lane may get none).

    Parameters
    ----------
    shares : numpy.ndarray
        Fractions summing to 1.
    units : int
        Units to hand out.

    Returns
    -------
    numpy.ndarray
        Integers of the same shape.

    References
    ----------
    M. L. Balinski, H. P. Young, "Fair Representation: Meeting the Ideal of One Man, One Vote",
    Yale University Press, 1982 (Hamilton's largest-remainder method).

    Examples
    --------
    >>> integer_units(np.array([0.52, 0.31, 0.17]), 10).tolist()
    [5, 3, 2]
    """
    flat = shares.reshape(-1) * units
    out = np.floor(flat).astype(np.int64)
    rest = units - int(out.sum())
    out[np.argsort(-(flat - out), kind="stable")[:rest]] += 1
    return out.reshape(shares.shape)


def lanes_schedule(system, collective: str, size_bytes: int, *, pieces: int | None, orders, ring: bool,
                   units: int | None = None):
    """Build a hierarchical collective as lanes (see the module docstring).

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : str
        ``allreduce``, ``allgather`` or ``alltoall``.
    size_bytes : int
        The message size (all-reduce: the vector; otherwise per node or per pair).
    pieces : int or None
        Pipeline depth: lanes start at rounds ``0 .. pieces-1``; None chooses among 1, 2, 4, 8 and
        16 the one whose planned time plus one route latency per round is least.
    orders : str or list
        Dimension orders (:func:`templates`).
    ring : bool
        Ring stages instead of direct ones.
    units : int, optional
        Units the data is cut into (default: 64 per piece, capped so that the schedule has at
        most ``2**15`` chunks).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``; params give the depth, the lanes used (``order@start x units``)
        and the units.

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).

    Examples
    --------
    >>> from collsim.systems.hierarchical import Hierarchical
    >>> ls, params = lanes_schedule(Hierarchical(nodes=4, dimensions="2x2"), "allreduce", 64, pieces=1,
    ...                             orders="inner", ring=False)
    >>> ls.rounds, params["lanes"]
    (4, '0/1@0x64')
    """
    n = system.nodes
    temps = templates(system, collective, orders, ring)
    moves = [stage_moves(system, collective, t) for t in temps]
    costs = [_round_costs(system, collective, t, m) for t, m in zip(temps, moves)]
    block = size_bytes / n if collective == "allreduce" else size_bytes
    hop_s = 2 * max(d.latency_s for d in system.dimensions) + (system.startup_s or 0.0)
    plans = {p: plan_lanes(costs, p, len(system.dimensions)) for p in ([pieces] if pieces else (1, 2, 4, 8, 16))}
    pieces = min(plans, key=lambda p: plans[p][1] * block + (max(map(len, costs)) + p - 1) * hop_s)
    shares = plans[pieces][0]
    per_chunk = n if collective == "allreduce" else 1
    cap = max(1, _MAX_UNITS // per_chunk)
    units = int(units) if units is not None else max(1, min(cap, 64 * pieces))
    whole = integer_units(shares, units)
    if collective == "allreduce":
        coll = make_collective("allreduce", n, size_bytes, split=units * n)
    else:
        coll = make_collective(collective, n, size_bytes, split=units)
    b = LogicalBuilder(coll)
    first = 0
    used = []
    for (t, s), count in np.ndenumerate(whole):
        if count == 0:
            continue
        piece = np.arange(first, first + count, dtype=np.int64)
        first += count
        used.append(f"{'/'.join(str(st.dim) for st in temps[t][:len(system.dimensions)])}@{s}x{count}")
        r = s
        for rounds in moves[t]:
            for src, dst, blk, red in rounds:
                _add(b, r, src, dst, blk, piece, collective, n, red)
                r += 1
    sched = b.build()
    return sched, {"pieces": pieces, "lanes": ",".join(used), "units": units}


def _add(b: LogicalBuilder, rnd: int, src, dst, blk, piece, collective: str, n: int, red: bool) -> None:
    """Transfers of one round of one lane: every (src, dst) pair once, with all its blocks' pieces."""
    if not len(src):
        return
    order = np.lexsort((blk, dst, src))
    src, dst, blk = src[order], dst[order], blk[order]
    new = np.flatnonzero(np.concatenate([[True], (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])]))
    if collective == "allreduce":       # chunk u N + b: unit u of block b
        chunks = piece[None, :] * n + blk[:, None]
    else:                               # chunk b split + j: piece j of block (pair) b
        chunks = blk[:, None] * b.collective.split + piece[None, :]
    counts = np.diff(np.concatenate([new, [len(src)]])) * len(piece)
    flat = chunks.reshape(-1)
    lists = np.split(flat, np.cumsum(counts)[:-1])
    b.add(rnd, src[new], dst[new], lists, reduce=red)

