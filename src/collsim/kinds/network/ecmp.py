"""Minimum-hop routing on any link table: hop tables, ECMP multipath routes, links on shortest paths.

* :func:`hop_tables`: the all-pairs next-hop (lowest vertex id among ties) and hop-distance
  tables: hop distances by :func:`scipy.sparse.csgraph.shortest_path` on the reversed links
  (unweighted, from blocks of targets), the lowest next vertex by a segmented minimum over
  the links sorted by tail and head.
* :func:`ecmp_routes`: equal-cost multipath routes.  Every switch (and the sending node)
  splits a flow evenly over all its next hops that lie on a minimum-hop path to the
  destination, so a path's share of its transfer's bytes is the product of
  ``1 / (number of equal-cost next hops)`` over its hops (the fluid limit of per-hop
  hash-threshold ECMP).  Paths of a transfer are listed in lexicographic order of the
  vertices they visit; every path of a transfer has the same hop count.
* :func:`min_hop_links`: which directed links lie on some minimum-hop path between two
  end nodes: the links a routing could use, against which ``collsim compare`` and
  ``collsim topology`` report links and switches that the routing leaves idle.

All loops run per hop level (at most the diameter), never per transfer or per path.

References
----------
C. Hopps, "Analysis of an Equal-Cost Multi-Path Algorithm", RFC 2992, IETF, 2000
(per-hop equal splitting of flows over equal-cost next hops); D. Thaler, C. Hopps,
"Multipath Issues in Unicast and Multicast Next-Hop Selection", RFC 2991, IETF, 2000.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import RouteError
from ...core.limits import check_memory
from ...core.csr import INDEX
from .routes import LinkRoutes

BYTES_PER_PARTIAL_PATH = 64
"""Peak bytes per partial path while ECMP routes are expanded (its owner, vertex, weight,
parent and link, kept for every hop, and the final routes)."""


def hop_tables(links, vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """All-pairs next hop and hop distance, indexed ``[vertex, target]`` (-1: none / unreachable)."""
    from scipy.sparse import csr_array          # here: scipy.sparse takes 0.2 s to import, and most commands
    from scipy.sparse.csgraph import shortest_path   # never need hop tables
    nv = vertices
    u, v = links.src, links.dst
    check_memory(2 * 4 * nv * nv, f"the hop tables of a network of {nv} vertices",
                 "use a smaller network")
    nh = np.full((nv, nv), -1, dtype=np.int32)
    dist = np.full((nv, nv), -1, dtype=np.int32)
    towards = csr_array((np.ones(len(u)), (v, u)), shape=(nv, nv))   # reversed links: searches start at targets
    order = np.lexsort((v, u))                          # links by tail, then head: lowest next vertex first
    us, vs = u[order], v[order]
    tails, first = np.unique(us, return_index=True)     # each tail's segment of the sorted links
    block = max(1, min(nv, (1 << 22) // max(1, len(u))))
    rank = np.arange(len(us), dtype=np.int32 if len(us) < 2**31 - 1 else np.int64)
    for t0 in range(0, nv, block):
        w = min(block, nv - t0)
        hops = shortest_path(towards, method="D", unweighted=True, indices=np.arange(t0, t0 + w))
        d = np.where(np.isinf(hops), -1, hops).astype(np.int32)    # (w, V): hops to each target
        dist[:, t0:t0 + w] = d.T
        if not len(us):
            continue
        du, dv = d[:, us], d[:, vs]
        step = np.where((du >= 1) & (dv == du - 1), rank, len(us))
        lowest = np.minimum.reduceat(step, first, axis=1)   # first minimum-hop link of every tail
        nh[tails, t0:t0 + w] = np.where(lowest < len(us), vs[np.minimum(lowest, len(us) - 1)], -1).T
    return nh, dist


def ecmp_next_links(links, dist: np.ndarray, targets: int) -> tuple[np.ndarray, np.ndarray]:
    """Every link on a minimum-hop path from each vertex towards each of the first ``targets`` vertices."""
    u, v = links.src, links.dst
    nv = links.vertices
    check_memory(8 * (nv * targets + 1), f"the ECMP next-hop table of a network of {nv} vertices",
                 "use single-path routing (-S routing=single-path)")
    keys, found = [], []
    block = max(1, min(targets, (1 << 22) // max(1, len(u))))
    for t0 in range(0, targets, block):
        d = dist[:, t0:min(targets, t0 + block)]
        li, ti = np.nonzero((d[u] >= 1) & (d[v] == d[u] - 1))
        keys.append(u[li] * targets + t0 + ti)
        found.append(li)
    key = np.concatenate(keys) if keys else np.zeros(0, INDEX)
    link = np.concatenate(found) if found else np.zeros(0, INDEX)
    order = np.lexsort((v[link], key))
    ptr = np.zeros(nv * targets + 1, INDEX)
    np.cumsum(np.bincount(key, minlength=nv * targets), out=ptr[1:])
    return ptr, link[order].astype(INDEX)


def ecmp_routes(links, dist: np.ndarray, src: np.ndarray, dst: np.ndarray, *, name=str,
                topology: str = "network", table: tuple[np.ndarray, np.ndarray] | None = None) -> LinkRoutes:
    """Equal-cost multipath routes of many transfers at once (per-hop even split).

    References
    ----------
    C. Hopps, "Analysis of an Equal-Cost Multi-Path Algorithm", RFC 2992, IETF, 2000.
    """
    src = np.asarray(src, dtype=INDEX).reshape(-1)
    dst = np.asarray(dst, dtype=INDEX).reshape(-1)
    t = len(src)
    nv = links.vertices
    if t and (dist[src, dst] < 0).any():
        i = int(np.flatnonzero(dist[src, dst] < 0)[0])
        raise RouteError(f"{topology}: no path from {name(int(src[i]))} to {name(int(dst[i]))}")
    targets = int(table[0].size - 1) // nv if table is not None else (int(dst.max()) + 1 if t else 1)
    nptr, nlink = table if table is not None else ecmp_next_links(links, dist, targets)
    owner, cur, weight = np.arange(t, dtype=INDEX), src.copy(), np.ones(t)
    parents: list[np.ndarray] = []
    steps: list[np.ndarray] = []
    finished: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []   # (level, index, owner, weight)
    fin = cur == dst[owner]
    finished.append((0, np.flatnonzero(fin), owner[fin], weight[fin]))
    act = np.flatnonzero(~fin)
    level, total = 0, 0
    while act.size:
        key = cur[act] * targets + dst[owner[act]]
        branch = nptr[key + 1] - nptr[key]              # equal-cost next hops of every partial path
        if (branch == 0).any():                          # cannot happen with a consistent table
            i = int(act[np.flatnonzero(branch == 0)[0]])
            raise RouteError(f"{topology}: routing towards {name(int(dst[owner[i]]))} is stuck at {name(int(cur[i]))}")
        count = int(branch.sum())
        total += count
        check_memory(total * BYTES_PER_PARTIAL_PATH,
                     f"ECMP routes of {t} transfers on a {topology} network ({count} partial paths at hop {level + 1})",
                     "use single-path routing (-S routing=single-path) or fewer transfers")
        rep = np.repeat(np.arange(act.size, dtype=INDEX), branch)
        cand = nlink[np.repeat(nptr[key] - (np.cumsum(branch) - branch), branch) + np.arange(count, dtype=INDEX)]
        nxt = links.dst[cand]
        parent = act[rep]
        small = np.int32 if len(parent) < 2**31 else INDEX  # the per-hop history in half the memory
        owner, cur, weight = owner[parent], nxt, weight[parent] / branch[rep]
        parents.append(parent.astype(small))
        steps.append(cand.astype(small) if len(links.src) < 2**31 else cand)
        level += 1
        fin = cur == dst[owner]
        finished.append((level, np.flatnonzero(fin), owner[fin], weight[fin]))
        act = np.flatnonzero(~fin)
    groups = [g for g in finished if g[1].size]
    if not groups:
        return LinkRoutes(np.zeros(t + 1, INDEX), np.zeros(0, INDEX))
    own = np.concatenate([g[2] for g in groups])
    order = np.argsort(own, kind="stable")         # each transfer's paths finish at one level, in order
    hops = np.concatenate([np.full(g[1].size, g[0], INDEX) for g in groups])[order]
    ptr = np.zeros(len(own) + 1, INDEX)
    np.cumsum(hops, out=ptr[1:])
    place = np.empty(len(own), INDEX)
    place[order] = np.arange(len(own), dtype=INDEX)  # final position of every path
    route = np.empty(int(ptr[-1]), INDEX)
    base = 0
    for lv, idx, _, _ in groups:
        start = ptr[place[base:base + idx.size]]
        base += idx.size
        i = idx
        for h in range(lv - 1, -1, -1):                  # back along the parents: one pass per hop
            route[start + h] = steps[h][i]
            i = parents[h][i]
    if len(own) == t:                                    # no transfer has two paths: plain routes
        return LinkRoutes(ptr, route)
    path_ptr = np.zeros(t + 1, INDEX)
    np.cumsum(np.bincount(own, minlength=t), out=path_ptr[1:])
    return LinkRoutes(ptr, route, path_ptr, np.concatenate([g[3] for g in groups])[order])


def min_hop_links(links, dist: np.ndarray, nodes: int) -> np.ndarray:
    """Which directed links lie on some minimum-hop path between two distinct end nodes."""
    u, v = links.src, links.dst
    used = np.zeros(len(u), bool)
    block = max(1, min(nodes, (1 << 22) // max(1, len(u))))
    for t0 in range(0, nodes, block):
        tg = np.arange(t0, min(nodes, t0 + block))
        d = dist[:, tg]                                  # (V, w)
        mark = np.zeros(d.shape, bool)
        mark[:nodes] = d[:nodes] >= 1                    # every other end node sends to each target
        down = (d[v] >= 0) & (d[v] == d[u] - 1)          # (L, w): the link is a minimum-hop step
        while True:
            on = mark[u] & down
            new = np.zeros_like(mark)
            li, ti = np.nonzero(on)
            new[v[li], ti] = True
            new &= ~mark
            if not new.any():
                break
            mark |= new
        used |= (mark[u] & down).any(axis=1)
    return used


__all__ = ["ecmp_next_links", "ecmp_routes", "hop_tables", "min_hop_links"]
