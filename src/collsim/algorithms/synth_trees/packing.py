"""Fractional packing of spanning arborescences at the cut bound's rate (column generation).

Every end node ``r`` in ``roots`` must send one unit (its block) to every other end node.  A
spanning arborescence rooted at ``r`` whose arcs are *logical links* (a direct link, or a path
whose inner vertices are all switches: a switch forwards, it does not copy) carries a share of
it.  The linear programme

    minimise z  subject to  sum over trees of r of y_T = 1        for every root r
                            sum over trees T of y_T load_T(l) <= c_l z   for every link l

(``load_T(l)``: how many of T's logical links cross the physical link ``l``) has the exact cut
bound as its optimum when switches can be split off (Edmonds' branching theorem on the graph of
end nodes; Bang-Jensen, Frank and Jackson's splitting for switches on Eulerian networks): no
cut can carry more, and the trees reach it.  It is solved by column generation: HiGHS solves
the programme over the trees found so far, and each root's cheapest arborescence under the link
prices (the duals) is added while its reduced cost is negative.  Pricing is a shortest-path
computation (``scipy.sparse.csgraph.dijkstra``) through the switches and a minimum arborescence
(:mod:`~collsim.algorithms.synth_trees.arborescence`) per root.

References
----------
L. Zhao, S. Maleki, Z. Yang, H. Pourreza, A. Shah, C. Hwang, A. Krishnamurthy, "ForestColl:
Efficient collective communications on heterogeneous network fabrics", arXiv 2402.06787, 2024;
J. Edmonds, "Edge-disjoint branchings", Combinatorial Algorithms, 1973; J. Bang-Jensen,
A. Frank, B. Jackson, "Preserving and increasing local edge-connectivity in mixed graphs",
SIAM J. Discrete Math. 8(2), 1995; G. B. Dantzig, P. Wolfe, "Decomposition principle for linear
programs", Operations Research 8(1), 1960 (column generation).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...core.errors import InputError
from .arborescence import min_arborescence
from .translations import link_orbits, stabilisers, symmetry, translates


@dataclass(frozen=True, eq=False)
class Packing:
    """Arborescences with weights: every root's weights sum to 1.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """

    root: np.ndarray
    parent: np.ndarray
    path: np.ndarray
    weight: np.ndarray
    paths: tuple
    z: float
    iterations: int
    load: np.ndarray
    link_ids: np.ndarray
    group: np.ndarray | None = None
    link_group: np.ndarray | None = None
    expanded: bool = True

    def base(self) -> "Packing":
        """The planned roots' trees alone when the packing is moved by a group (itself otherwise)."""
        if self.group is None or not self.expanded:
            return self
        t0 = len(self.root) // len(self.group)
        return Packing(self.root[:t0], self.parent[:t0], self.path[:t0], self.weight[:t0], self.paths, self.z,
                       self.iterations, self.load[:t0], self.link_ids)

    def link_load(self, per: np.ndarray) -> np.ndarray:
        """Every usable link's load when tree ``t`` carries ``per[t]``: on a packing not expanded, a
        link carries its orbit's load from the planned root's trees (the images of the trees
        crossing the orbit's other links: one per element, the group acting freely and regularly)."""
        load = per @ self.load
        if self.expanded or self.link_group is None:
            return load
        row_of = self.link_rows()[0]
        return np.bincount(row_of, weights=load, minlength=int(row_of.max()) + 1)[row_of]

    def folded_load(self) -> np.ndarray:
        """``(trees, links)``: the load matrix with which ``link_load(per) == per @ folded_load()``."""
        if self.expanded or self.link_group is None:
            return np.asarray(self.load, float)
        row_of = self.link_rows()[0]
        rows = int(row_of.max()) + 1
        folded = np.zeros((len(self.load), rows))
        np.add.at(folded.T, row_of, np.asarray(self.load, float).T)
        return folded[:, row_of]

    def link_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Link orbits under the translations (:func:`link_orbits`), computed once per packing (a
        minimum over the group's every element and link: 10 M entries on 1,024 GPUs, read by every
        load and timing programme)."""
        return self._link_rows

    @cached_property
    def _link_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return link_orbits(self.link_group, len(self.link_ids))

    def depth(self) -> np.ndarray:
        """``(trees, N)`` hops from the tree's root to every end node."""
        t, n = self.parent.shape
        depth = np.full((t, n), -1, np.int64)
        depth[np.arange(t), self.root] = 0
        rows = np.arange(t)
        for _ in range(n):
            todo = depth < 0
            if not todo.any():
                break
            par = np.where(self.parent >= 0, self.parent, 0)
            pd = depth[rows[:, None], par]
            ready = todo & (pd >= 0)
            depth[ready] = pd[ready] + 1
        return depth


def _logical(system, links=None) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    """Vertices, end nodes and the usable links (bandwidth > 0, among ``links`` if given): src, dst, ids."""
    lk = system.links
    keep = np.asarray(lk.bandwidth_bytes_per_s) > 0
    if links is not None:
        keep &= np.isin(np.arange(len(keep)), links)
    return (system.vertices, system.nodes, np.asarray(lk.src)[keep].astype(np.int64),
            np.asarray(lk.dst)[keep].astype(np.int64), np.flatnonzero(keep))


class _Pricer:
    """Cheapest logical link between every pair of end nodes under link prices, and its path."""

    def __init__(self, system, reverse: bool, links=None) -> None:
        from scipy.sparse import csr_matrix
        v, n, src, dst, ids = _logical(system, links)
        if reverse:
            src, dst = dst, src
        self.n, self.v, self.ids = n, v, ids
        # end node u's out-copy is u, its in-copy v + u: a path enters an end node only at its end
        head = np.where(dst < n, v + dst, dst)
        self.src, self.head = src, head
        self.shape = (v + n, v + n)
        self.csr = csr_matrix

    def costs(self, price: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(cost[u, w], predecessors)`` between end nodes; the hop term breaks ties toward short paths.

        Parallel links between two vertices count once, at the cheapest (the sparse matrix
        would add them); :meth:`path` takes that one.
        """
        from scipy.sparse.csgraph import dijkstra
        scale = float(price.max()) if price.size and price.max() > 0 else 1.0
        weight = price + 1e-7 * scale        # positive: csgraph takes a stored zero for "no arc"
        key = self.src * self.shape[0] + self.head
        order = np.lexsort((weight, key))
        first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
        self.pick = dict(zip(key[first].tolist(), first.tolist()))
        g = self.csr((weight[first], (self.src[first], self.head[first])), shape=self.shape)
        dist, pred = dijkstra(g, directed=True, indices=np.arange(self.n), return_predecessors=True)
        return dist[:, self.v:self.v + self.n], pred

    def path(self, pred: np.ndarray, u: int, w: int) -> list[int]:
        """Positions (into the usable links) of the cheapest path ``u -> w`` (after :meth:`costs`)."""
        verts = [self.v + w]
        while verts[-1] != u:
            verts.append(int(pred[u, verts[-1]]))
        verts.reverse()
        size = self.shape[0]
        return [self.pick[a * size + b] for a, b in zip(verts[:-1], verts[1:])]


def layered_tree(cost: np.ndarray, level: np.ndarray, root: int) -> np.ndarray:
    """The cheapest spanning arborescence whose arcs each go one hop level down from the root.

    With every arc from level ``d`` to ``d + 1`` the choices are independent: each node takes
    its cheapest arc from the level above.

    References
    ----------
    J. Edmonds, "Optimum branchings", J. Res. NBS 71B, 1967 (the unrestricted problem, which
    this restriction makes separable).
    """
    allowed = level[:, None] + 1 == level[None, :]
    parent = np.argmin(np.where(allowed, cost, np.inf), axis=0)
    parent[root] = -1
    return parent


def pack(system, roots=None, *, reverse: bool = False, links=None, layered: bool = False,  # noqa: C901, PLR0915
         max_iterations: int = 500, target_z: float | None = None, rel_tol: float = 1e-6,
         expand: bool = True) -> Packing:
    """Pack spanning arborescences from ``roots`` at the optimal rate.

    ``expand=False``: on a network with translations, the planned root's trees alone (not moved to
    every root; ``expanded`` False), for a schedule built as its representatives.

    References
    ----------
    L. Zhao et al., "ForestColl", arXiv 2402.06787, 2024; J. Edmonds, "Edge-disjoint
    branchings", 1973; G. B. Dantzig, P. Wolfe, Operations Research 8(1), 1960.
    """
    from scipy.optimize import linprog
    from scipy.sparse import csc_matrix, hstack
    pr = _Pricer(system, reverse, links)
    n = pr.n
    group = symmetry(system, pr) if roots is None else None
    all_roots = np.arange(n) if roots is None else np.asarray(roots, np.int64)
    cap = np.asarray(system.links.bandwidth_bytes_per_s, float)[pr.ids]
    cap_max = float(cap.max())
    cap = cap / cap_max
    target = None if target_z is None else target_z * cap_max       # in the programme's units
    nl = len(cap)
    if group is None:     # a row per link; every root's trees priced
        roots, rows = all_roots, np.arange(nl)
        row_of, copies, gl = rows, np.ones(nl), None
        stab = np.ones(n)
    else:                 # a row per orbit of links; one root per orbit stands for its images
        gv, gl = group
        row_of, rows, copies = link_orbits(gl, nl)
        roots, stab = stabilisers(gv[:, :n])
    row_cap = cap[rows]

    def row_load(load: np.ndarray, r: int) -> np.ndarray:
        """A column's load per row: its own per link, or with all its images per orbit (each root
        of ``r``'s orbit takes ``|stabiliser|`` images, each a ``1 / |stabiliser|`` share)."""
        if gl is None:
            return load
        return np.bincount(gl.ravel(), weights=np.tile(load, len(gl)), minlength=nl)[rows] / stab[r]
    path_ids: dict[tuple[int, ...], int] = {}
    paths: list[np.ndarray] = []
    cols_root, cols_parent, cols_path, cols_load, cols_rows = [], [], [], [], []

    def tree(parent: np.ndarray, pred: np.ndarray) -> tuple[list, np.ndarray]:
        """Each arc's path (a tuple of link positions, None at the root) and the tree's load per link."""
        arcs = [None if u < 0 else tuple(pr.path(pred, int(u), w)) for w, u in enumerate(parent)]
        load = np.bincount([i for a in arcs if a for i in a], minlength=nl).astype(float)
        return arcs, load

    def add_columns(trees: list) -> None:
        for r, parent, arcs, load in trees:
            pid = np.full(n, -1, np.int64)
            for w, links in enumerate(arcs):
                if links is None:
                    continue
                if links not in path_ids:
                    path_ids[links] = len(paths)
                    paths.append(np.asarray(links, np.int64))
                pid[w] = path_ids[links]
            cols_root.append(r)
            cols_parent.append(parent)
            cols_path.append(pid)
            cols_load.append(load)
            cols_rows.append(row_load(load, r))

    root_row = {int(r): i for i, r in enumerate(roots)}
    nr = len(roots)
    # ties between equally cheap trees go to arcs leaving nodes near the root: shallow trees
    # fill the pipeline sooner (pipeline.py); the term is far below any price difference
    from scipy.sparse.csgraph import shortest_path
    reach = np.isfinite(pr.costs(np.ones(nl))[0])
    # hop counts from the priced roots alone (one root where the translations stand for the rest: on
    # 2,000 GPUs on a fat tree every pair's took 3.5 s of a packing's CPU, one root's 0.2 s)
    from_roots = shortest_path(reach.astype(float), unweighted=True, indices=np.asarray(roots, np.int64))
    from_roots[~np.isfinite(from_roots)] = n
    hops = {int(r): from_roots[i] for i, r in enumerate(roots)}
    shallow = 1e-4 / n
    def cheapest(cost: np.ndarray, r: int, tie: float) -> np.ndarray:
        if layered:
            return layered_tree(cost, hops[r], r)
        return min_arborescence(cost + tie * hops[r][:, None], r)

    cost, pred = pr.costs(1.0 / cap)               # start from each root's fastest tree
    first = []
    for r in roots:
        parent = cheapest(cost, int(r), 0.0)
        first.append((int(r), parent, *tree(parent, pred)))
    add_columns(first)
    def priced(at: np.ndarray) -> tuple[list, float]:
        """Every root's cheapest tree under the link prices ``at``, and their total cost."""
        cost, pred = pr.costs(at)
        tie = shallow * (float(cost[np.isfinite(cost)].max()) if np.isfinite(cost).any() else 1.0)
        found, total = [], 0.0
        for r in roots:
            parent = cheapest(cost, int(r), tie)
            arcs, load = tree(parent, pred)
            total += float(at @ load) / stab[r]
            found.append((int(r), parent, arcs, load))
        return found, total

    it, z, lower = 0, np.inf, 0.0
    while True:
        it += 1
        k = len(cols_root)
        load = csc_matrix(np.asarray(cols_rows).T)                     # (rows, trees)
        # variables z, y_0..y_{k-1}: minimise z; every root's shares sum to 1; load - cap z <= 0
        a_ub = hstack([csc_matrix(-row_cap[:, None]), load]).tocsr()
        a_eq = csc_matrix((np.ones(k), ([root_row[r] for r in cols_root], np.arange(k) + 1)), shape=(nr, k + 1))
        res = linprog(np.r_[1.0, np.zeros(k)], A_ub=a_ub, b_ub=np.zeros(len(rows)), A_eq=a_eq.tocsr(), b_eq=np.ones(nr),
                      bounds=(0, None), method="highs")
        if res.status != 0:
            raise InputError(f"synth-trees: the packing programme failed: {res.message}")
        z = float(res.x[0])
        if it >= max_iterations or (target is not None and z <= target * (1 + rel_tol)) \
                or z <= lower * (1 + rel_tol):
            break
        mu, row_price = res.eqlin.marginals, np.maximum(-res.ineqlin.marginals, 0.0)
        price = copies * row_price[row_of]           # per link: its row's price, once per translate onto it
        found, total = priced(price)
        new = [(r, parent, arcs, load) for i, (r, parent, arcs, load) in enumerate(found)
               if float(price @ load) / stab[r] - mu[i] < -rel_tol * max(abs(mu[i]), 1e-12)]
        # Lagrangian bound: with link prices summing to 1 over the capacities, every root's block
        # costs at least its cheapest tree, so no packing needs less than their sum
        scale = float(row_price @ row_cap)
        if scale > 0:
            lower = max(lower, total / scale)
        if not new:
            break
        add_columns(new)
    y = res.x[1:]
    keep = np.flatnonzero(y > 1e-12)
    weight = y[keep]
    root = np.asarray(cols_root)[keep]
    parent, path, load = np.asarray(cols_parent)[keep], np.asarray(cols_path)[keep], np.asarray(cols_load)[keep]
    expanded = expand or group is None or len(roots) > 1 or len(gv) != n   # regular translations only
    if not expanded:                                    # one planned root: its trees stand for every root's
        all_roots = roots
    elif group is not None:                             # every kept tree's images under the group
        parent, path, load, root, weight = translates(gv[:, :n], gl, parent, path, load, weight, paths, path_ids)
    for r in all_roots:                                   # each root's shares sum to exactly 1
        m = root == r
        weight[m] /= weight[m].sum()
    return Packing(root=root, parent=parent, path=path, weight=weight, paths=tuple(paths), z=z / cap_max,
                   iterations=it, load=load, link_ids=pr.ids, group=None if group is None else gv[:, :n],
                   link_group=gl, expanded=expanded)


def planned_roots(system) -> int:
    """How many roots :func:`pack` prices for an all-gather here: one per orbit of the network's
    symmetries (one where it has translations), every end node where it has none.

    References
    ----------
    L. Zhao et al., "ForestColl", arXiv 2402.06787, 2024 (the packing this reduces).
    """
    group = symmetry(system, _Pricer(system, False))
    return system.nodes if group is None else len(stabilisers(group[0][:, :system.nodes])[0])

