"""A packing of arborescences, pipelined into bulk-synchronous rounds of explicit transfers.

Every root sends ``m`` pieces a round, shared among its trees in proportion to their weights
(largest remainder: tree ``T`` sends ``m_T``), for ``rounds`` rounds, so its block is cut into
``rounds x m`` equal chunks.  The arc into a node at depth ``d`` carries batch ``k`` in round
``k + d - 1``: a node forwards a batch the round after it receives it.  Every full round
therefore loads every link alike, with the packing's load rounded to ``m`` pieces; the pipeline
adds one round per level of the deepest tree.  Pieces that cross the same logical link on the same
path in the same round travel as one transfer.

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


def per_round(packing: Packing, per: int) -> np.ndarray:
    """Pieces each tree sends a round when every root sends ``per`` a round (largest remainder).

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    out = np.zeros(len(packing.root), np.int64)
    for r in np.unique(packing.root):
        trees = np.flatnonzero(packing.root == r)
        out[trees] = shares(packing.weight[trees], per)
    return out


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


def merge(rnd, src, dst, path, chunk, rounds: int) -> Deliveries:
    """One transfer per (round, sender, receiver, path) from one row per piece delivered.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    order = np.lexsort((chunk, path, dst, src, rnd))
    rnd, src, dst, path, chunk = rnd[order], src[order], dst[order], path[order], chunk[order]
    new = np.flatnonzero(np.r_[True, (rnd[1:] != rnd[:-1]) | (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
                               | (path[1:] != path[:-1])])
    return Deliveries(rnd[new], src[new], dst[new], path[new], np.r_[new, len(chunk)].astype(np.int64),
                      chunk, rounds)


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
