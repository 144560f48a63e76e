"""A packing of arborescences, pipelined into bulk-synchronous rounds of explicit transfers.

Every root sends ``m`` pieces a round, shared among its trees in proportion to their weights
(by largest remainder, or link by link: tree ``T`` sends ``m_T``), for ``rounds`` rounds, so its block is cut into
``rounds x m`` equal chunks.  The arc into a node at depth ``d`` carries batch ``k`` in round
``k + d - 1``: a node forwards a batch the round after it receives it.  Every full round
therefore loads every link alike, with the packing's load rounded to ``m`` pieces; the pipeline
adds one round per level of the deepest tree.  Pieces that cross the same logical link on the same
path in the same round travel as one transfer.  :func:`pipeline_round_times` gives every round's
time from the trees' loads by arc depth (:func:`depth_loads`) without building the rounds.

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024 (pipelining the packed trees).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.csr import INDEX, permute_csr
from .packing import Packing


def shares(weight: np.ndarray, total: int) -> np.ndarray:
    """``total`` split in proportion to ``weight`` (largest remainder; sums to ``total``).

    References
    ----------
    M. L. Balinski, H. P. Young, "Fair Representation", Yale University Press, 1982 (Hamilton's
    largest-remainder method).
    """
    exact = np.asarray(weight, float) / np.sum(weight) * total
    out = np.floor(exact).astype(np.int64)
    rest = total - int(out.sum())
    if rest:
        out[np.argsort(-(exact - out), kind="stable")[:rest]] += 1
    return out


@dataclass(frozen=True, eq=False)
class Deliveries:
    """Transfers of a pipelined packing, in the packing's own direction.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """

    round: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    path: np.ndarray
    chunk_ptr: np.ndarray
    chunk_idx: np.ndarray
    rounds: int


def per_round(packing: Packing, per: int, capacity: np.ndarray | None = None) -> np.ndarray:
    """Pieces each tree sends a round when every root sends ``per`` a round.

    Every tree gets its share rounded down; the pieces left go one a pass to every root that has
    some left, each to its tree whose piece raises the most loaded link the least relative to
    ``capacity`` (every usable link's bandwidth, against the loads before the pass), ties to the
    largest remainder.  Without ``capacity``, by largest
    remainder alone.  A round lasts as long as its most loaded link needs, so the rounding that
    ignores the links can cost much where a root has many trees of small weight (a broadcast's 78
    trees on 32 GPUs on rails, 64 pieces a round: the most loaded link 1.13 times its share by
    largest remainder).

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024; M. L. Balinski, H. P. Young, "Fair Representation", Yale
    University Press, 1982 (Hamilton's largest-remainder method).
    """
    out = np.zeros(len(packing.root), np.int64)
    roots = np.unique(packing.root)
    if capacity is None:
        for r in roots:
            trees = np.flatnonzero(packing.root == r)
            out[trees] = shares(packing.weight[trees], per)
        return out
    _, inv = np.unique(packing.root, return_inverse=True)
    weight = np.asarray(packing.weight, float)
    exact = weight / np.bincount(inv, weights=weight)[inv] * per
    out = np.floor(exact).astype(np.int64)
    per_link = packing.folded_load() / np.asarray(capacity, float)[None, :]
    now = out @ per_link
    rest = per - np.bincount(inv, weights=out, minlength=len(roots)).astype(np.int64)
    while rest.any():       # every root with pieces left takes one, against the loads so far
        worst = (now[None, :] + per_link).max(axis=1)
        open_ = np.flatnonzero(rest[inv] > 0)
        order = open_[np.lexsort((-(exact[open_] - out[open_]), worst[open_], inv[open_]))]
        first = order[np.r_[True, inv[order][1:] != inv[order][:-1]]]
        out[first] += 1
        now += per_link[first].sum(axis=0)
        rest[inv[first]] -= 1
    return out


@dataclass(frozen=True, eq=False)
class DepthLoads:
    """Every tree's arcs by depth, as sparse entries: arc depth ``depth``, tree ``tree``, and the
    link crossed ``column`` (a link orbit's row where the packing is its planned root's trees,
    ``row_of`` then maps every usable link to its row), and the slowest arc per depth and tree
    (``latency_s``, ``(depths, trees)``, 0 where there are none).

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """

    depth: np.ndarray
    tree: np.ndarray
    column: np.ndarray
    columns: int
    row_of: np.ndarray | None
    latency_s: np.ndarray

    def per_depth(self, per: np.ndarray) -> np.ndarray:
        """``(depths, links)``: each usable link's load from the arcs into every depth when tree
        ``t`` carries ``per[t]`` (a link orbit's load on each of its links, as
        :meth:`Packing.link_load`); summed over depths it is ``link_load(per)``."""
        top = len(self.latency_s)
        q = np.bincount(self.depth * self.columns + self.column, weights=np.asarray(per, float)[self.tree],
                        minlength=top * self.columns).reshape(top, self.columns)
        return q if self.row_of is None else q[:, self.row_of]


def depth_loads(packing: Packing, path_latency_s: np.ndarray) -> DepthLoads:
    """Every tree's arcs by depth (:class:`DepthLoads`), from the packing and each path's latency.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    depth = packing.depth()
    tree, node = np.nonzero(packing.parent >= 0)
    pid = packing.path[tree, node]
    d = depth[tree, node]
    hops = np.array([len(p) for p in packing.paths], np.int64)
    flat = np.concatenate(packing.paths).astype(np.int64) if len(packing.paths) else np.zeros(0, np.int64)
    start = np.r_[0, np.cumsum(hops)[:-1]]
    per = hops[pid]
    arc = np.repeat(np.arange(len(pid)), per)
    link = flat[np.repeat(start[pid], per) + np.arange(int(per.sum())) - np.repeat(np.r_[0, np.cumsum(per)[:-1]], per)]
    row_of, columns = None, len(packing.link_ids)
    if not (packing.expanded or packing.link_group is None):
        row_of = packing.link_rows()[0]
        link, columns = row_of[link], int(row_of.max()) + 1
    latency = np.zeros((int(depth.max()) + 1, len(packing.parent)))
    np.maximum.at(latency, (d, tree), np.asarray(path_latency_s, float)[pid])
    return DepthLoads(d[arc], tree[arc], link, columns, row_of, latency)


def pipeline_round_times(loads: DepthLoads, per: np.ndarray, rounds: int, capacity: np.ndarray,
                         piece_bytes: float, startup_s: float) -> np.ndarray:
    """Every round's time of :func:`pipeline` without building it: round ``j`` carries batch
    ``j - d + 1`` on every arc into depth ``d``; a round lasts its most loaded link's bytes over
    its bandwidth plus its slowest arc's latency and ``startup_s``.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    q = loads.per_depth(per)                                                # (depths, links)
    lat = np.where((per > 0)[None, :], loads.latency_s, 0.0).max(axis=1)   # (depths,)
    deep = np.flatnonzero(q.any(axis=1))
    top = int(deep.max()) if len(deep) else 1
    j = np.arange(rounds + top - 1)
    hi = np.minimum(top, j + 1)
    lo = np.maximum(1, j - rounds + 2)
    prefix = np.vstack([np.zeros((1, q.shape[1])), np.cumsum(q, axis=0)])
    busy = ((prefix[hi + 1] - prefix[lo]) / capacity[None, :]).max(axis=1) * piece_bytes
    d = np.arange(len(lat))
    wait = np.where((d[None, :] >= lo[:, None]) & (d[None, :] <= hi[:, None]), lat[None, :], 0.0).max(axis=1)
    return busy + wait + startup_s


def pipeline(packing: Packing, per: np.ndarray, rounds: int, chunk_base: np.ndarray) -> Deliveries:
    """Every piece of every tree, batch by batch down its tree.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    depth = packing.depth()
    t_all, n = packing.parent.shape
    rows_round, rows_src, rows_dst, rows_path, rows_chunk = [], [], [], [], []
    for r in np.unique(packing.root):
        trees = np.flatnonzero(packing.root == r)
        counts = per[trees] * rounds
        first = np.r_[0, np.cumsum(counts)[:-1]]
        for t, c, f in zip(trees, counts, first):
            if c == 0:
                continue
            i = np.arange(c)
            batch = i // per[t]
            nodes = np.flatnonzero(packing.parent[t] >= 0)
            rows_round.append((batch[:, None] + depth[t, nodes][None, :] - 1).ravel())
            rows_src.append(np.tile(packing.parent[t, nodes], c))
            rows_dst.append(np.tile(nodes, c))
            rows_path.append(np.tile(packing.path[t, nodes], c))
            rows_chunk.append(np.repeat(chunk_base[r] + f + i, len(nodes)))
    rnd, src, dst, path, chunk = (np.concatenate(x) for x in (rows_round, rows_src, rows_dst, rows_path, rows_chunk))
    return merge(rnd, src, dst, path, chunk, int(rnd.max()) + 1 if len(rnd) else 0)


def _lexicographic_order(columns) -> np.ndarray:
    """``np.lexsort`` of ``columns`` (the first the primary key), as one stable sort of a single
    mixed-radix key where every column is non-negative and the key fits in 63 bits (four times
    faster on a million rows), else by ``np.lexsort`` itself.

    >>> _lexicographic_order((np.array([1, 0, 1]), np.array([0, 5, 0]), np.array([2, 1, 0]))).tolist()
    [1, 2, 0]
    """
    cols = [np.asarray(c) for c in columns]
    if not len(cols[0]) or min(int(c.min()) for c in cols) < 0:
        return np.lexsort(cols[::-1])
    radices = [int(c.max()) + 1 for c in cols]
    if float(np.prod(np.array(radices, dtype=float))) >= 2.0**62:
        return np.lexsort(cols[::-1])
    key = cols[0].astype(np.int64)
    for c, r in zip(cols[1:], radices[1:]):
        key *= r
        key += c
    return np.argsort(key, kind="stable")


def merge(rnd, src, dst, path, chunk, rounds: int) -> Deliveries:
    """One transfer per (round, sender, receiver, path) from one row per piece delivered.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    order = _lexicographic_order((rnd, src, dst, path, chunk))
    rnd, src, dst, path, chunk = rnd[order], src[order], dst[order], path[order], chunk[order]
    new = np.flatnonzero(np.r_[True, (rnd[1:] != rnd[:-1]) | (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
                               | (path[1:] != path[:-1])])
    return Deliveries(rnd[new], src[new], dst[new], path[new], np.r_[new, len(chunk)].astype(np.int64),
                      chunk, rounds)


def merge_ranges(rnd, src, dst, path, first_chunk, count, rounds: int) -> Deliveries:
    """:func:`merge` of rows that each deliver ``count`` consecutive pieces from ``first_chunk``,
    where no two rows' ranges overlap: the rows are ordered, not their pieces (the same deliveries:
    within a transfer the ranges are disjoint, so ordering them by their first piece orders every
    piece).

    >>> d = merge_ranges(np.array([0, 0]), np.array([1, 1]), np.array([2, 2]), np.array([0, 0]),
    ...                  np.array([5, 0]), np.array([2, 3]), 1)
    >>> d.chunk_idx.tolist(), d.chunk_ptr.tolist()
    ([0, 1, 2, 5, 6], [0, 5])

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    if not len(rnd):
        empty = np.zeros(0, np.int64)
        return Deliveries(empty, empty, empty, empty, np.zeros(1, np.int64), empty, rounds)
    order = _lexicographic_order((rnd, src, dst, path, first_chunk))
    rnd, src, dst, path, first_chunk, count = (x[order] for x in (rnd, src, dst, path, first_chunk, count))
    new = np.flatnonzero(np.r_[True, (rnd[1:] != rnd[:-1]) | (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
                               | (path[1:] != path[:-1])])
    count = count.astype(np.int64)
    ends = np.cumsum(count)
    chunk = np.repeat(first_chunk.astype(np.int64) - (ends - count), count) + np.arange(int(ends[-1]))
    ptr = np.r_[0, ends][np.r_[new, len(rnd)]]
    return Deliveries(rnd[new], src[new], dst[new], path[new], ptr.astype(np.int64), chunk, rounds)


def transfer_columns(rnd, src, dst, plan: Deliveries, paths, reduce: bool, offset: int):
    """Columns (round, src, dst, chunk_ptr, chunk_idx, reduce, route_ptr, route_links) of deliveries
    already oriented as the schedule runs (``plan`` gives their pieces and path ids, ``paths`` the
    link ids of each path).

    A transfer whose path crosses a switch is sent as one transfer per piece (see
    ``build._emit``); a one-link transfer keeps its pieces together.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    hops = np.array([len(p) for p in paths], INDEX)
    sizes = np.diff(plan.chunk_ptr)
    split = hops[plan.path] > 1
    rows = np.repeat(np.arange(len(sizes)), np.where(split, sizes, 1))
    cptr = np.r_[0, np.cumsum(np.where(split[rows], 1, sizes[rows]))].astype(INDEX)
    route_ptr, route_links = permute_csr(hops, np.concatenate(paths).astype(INDEX), plan.path[rows])
    return (rnd[rows] + offset, src[rows], dst[rows], cptr, plan.chunk_idx, np.full(len(rows), reduce),
            route_ptr, route_links)
