"""Trees that spread along one translation at a time: a pool of shallow trees for timed rounds.

On a direct network with a translation group (a torus, a hypercube, a circulant), every link out of
node 0 is a translation ``g`` (the element taking node 0 to the link's head).  A tree of root 0
*ordered* by a sequence of such translations, each taken with its inverse, first spreads the block
along ``g_1``'s cycle through the root (both ways round, halfway each), then from every node
reached along ``g_2``'s cycle, and so on; where the cycles' products reach every end node once it
is a spanning tree of depth ``sum of floor(order / 2)``, the network's diameter on a torus.  On a
torus whose dimensions differ in bandwidth, the trees that cross the slow dimension first and
spread along the fast ones last carry the bottleneck's traffic from the first round to nearly the
last, so the timing programme (:mod:`~collsim.algorithms.synth_trees.timing`) fills and drains
them in fewer rounds than the packing's own trees, which the column generation picks among many
equally fast ones without regard to their depth (a 4x6 torus with rows 8x faster: 0.9815 of the
bound with 22 timed rounds on these trees, against 0.974 on the packing's).

Every ordering of the translation classes, and both ways of breaking the tie on cycles of even
length, give a tree; their weights are the timing programme's to choose.

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024 (the packing this pool stands beside); Y. Saad, M. H. Schultz,
"Data communication in parallel architectures", Parallel Computing 11(2), 1989 (dimension-ordered
spanning trees of tori and hypercubes).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .packing import Packing

MAX_END_NODES = 512
"""Largest network given the pool: beyond, even a few rounds of its per-arc timing programme exceed
:data:`~collsim.algorithms.synth_trees.timing.ARC_VARIABLES`."""

RATE_RTOL = 1e-6
"""The pool is kept only at the packing's rate, to this share: its trees are for filling rounds
fast, not for a slower rate (a 1,024-node hypercube's 16 orderings of its 10 classes reach 0.43 of it)."""

MAX_CLASSES = 6
"""Most translation classes (pairs of a translation and its inverse out of node 0) the pool is built
for: a torus has one per dimension and a 64-node hypercube six; a circuit switch's circulant of many
ports has one per port pair and no product structure, and its orderings would be numberless."""

MAX_TRIES = 256
"""Most orderings tried for trees (each costs one pass over the end nodes)."""

MAX_TREES = 16
"""Most ordered trees in the pool: every ordering of the classes and every tie-break while that
stays within it, else every ordering with the same tie-break on all classes (both ways)."""


def _cycle(group: np.ndarray, g: int, u: int) -> list[int]:
    """``u, g u, g^2 u, ...`` until it returns to ``u``."""
    out = [u]
    while True:
        nxt = int(group[g, out[-1]])
        if nxt == u:
            return out
        out.append(nxt)


def _tree(group: np.ndarray, order, signs, n: int) -> np.ndarray | None:
    """Parents of the tree of root 0 spreading along ``order`` (pairs ``(g, g^-1)``), or None where a
    node would be reached twice (the cycles' product is not the whole group)."""
    parent = np.full(n, -1, np.int64)
    seen = np.zeros(n, bool)
    seen[0] = True
    reached = [0]
    for (g, _), sign in zip(order, signs):
        new = []
        for u in reached:
            ring = _cycle(group, g, u)         # ring[d] = g^d u
            k = len(ring)
            for d in range(1, k):
                fwd, back = d, k - d
                prev = ring[d - 1] if fwd < back or (fwd == back and sign > 0) else ring[(d + 1) % k]
                w = ring[d]
                if seen[w]:
                    return None
                seen[w] = True
                parent[w] = prev
                new.append(w)
        reached += new
    return parent if seen.all() else None


def ordered_pool(system, packing: Packing, reverse: bool) -> Packing | None:
    """The ordered trees of root 0 (module docstring) as a packing beside ``packing`` (the planned
    root's trees on a network with a regular translation group, not expanded), weighted at their
    best rate; None where the network has no such trees (links through switches, no group).

    Examples
    --------
    >>> from collsim.experiments.network_families import hetero_mesh
    >>> from collsim.algorithms.synth_trees.packing import pack
    >>> net = hetero_mesh(3, 4, 4.0, torus=True)
    >>> pool = ordered_pool(net, pack(net, expand=False), False)
    >>> pool.depth().max(axis=1).tolist()
    [3, 3, 3, 3]

    References
    ----------
    Y. Saad, M. H. Schultz, Parallel Computing 11(2), 1989 (dimension-ordered spanning trees).
    """
    from scipy.optimize import linprog

    from .timing import ARC_VARIABLES
    group = packing.group
    n = system.nodes
    if group is None or packing.expanded or len(group) != n or len(np.unique(packing.root)) != 1 \
            or int(packing.root[0]) != 0 or n > MAX_END_NODES:
        return None
    lk = system.links
    src, dst = np.asarray(lk.src)[packing.link_ids], np.asarray(lk.dst)[packing.link_ids]
    if reverse:                                  # the packing's arcs run against the links
        src, dst = dst, src
    pos = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(src, dst)) if a < n and b < n}
    heads = sorted({b for (a, b) in pos if a == 0})
    classes: list[tuple[int, int]] = []
    for w in heads:                               # each translation with its inverse, once
        inv = int(np.flatnonzero(group[w] == 0)[0])
        if not any(w in c for c in classes):
            classes.append((w, inv))
    k = len(classes)
    if not 0 < k <= MAX_CLASSES:
        return None           # a circuit switch's many ports, say: no product of a few cycles
    sign_sets = list(itertools.product((1, -1), repeat=k)) if math.factorial(k) * 2 ** k <= MAX_TREES \
        else [(1,) * k, (-1,) * k]
    trees, seen = [], set()
    tries = itertools.product(itertools.permutations(classes), sign_sets)        # lazily: k! orders
    for order, signs in itertools.islice(tries, MAX_TRIES):
        parent = _tree(group, order, signs, n)
        if parent is not None and parent.tobytes() not in seen:
            seen.add(parent.tobytes())
            trees.append(parent)
        if len(trees) >= MAX_TREES:
            break
    depth = sum(len(_cycle(group, g, 0)) // 2 for g, _ in classes)
    if not trees or len(trees) * (n - 1) * (depth + 2) > ARC_VARIABLES:
        return None           # no timing programme of a few rounds past the depth would be solved per arc
    paths: list[np.ndarray] = []
    path_ids: dict[int, int] = {}
    path = np.full((len(trees), n), -1, np.int64)
    load = np.zeros((len(trees), len(packing.link_ids)))
    for t, parent in enumerate(trees):
        for w in np.flatnonzero(parent >= 0):
            key = pos.get((int(parent[w]), int(w)))
            if key is None:                       # an arc without its own link: not this pool
                return None
            if key not in path_ids:
                path_ids[key] = len(paths)
                paths.append(np.array([key], np.int64))
            path[t, w] = path_ids[key]
            load[t, key] += 1.0
    draft = Packing(root=np.zeros(len(trees), np.int64), parent=np.array(trees), path=path,
                    weight=np.full(len(trees), 1.0 / len(trees)), paths=tuple(paths), z=packing.z, iterations=0,
                    load=load, link_ids=packing.link_ids, group=group, link_group=packing.link_group,
                    expanded=False)
    # the weights at the trees' best rate: minimise z with every link's load within z x its bandwidth
    cap = np.asarray(lk.bandwidth_bytes_per_s, float)[packing.link_ids]
    folded = draft.folded_load() / cap[None, :]            # (trees, links): seconds a byte of block
    scale = float(folded.max())
    t = len(trees)
    res = linprog(np.r_[1.0, np.zeros(t)], A_ub=np.c_[-np.ones(len(cap)), folded.T / scale], b_ub=np.zeros(len(cap)),
                  A_eq=np.r_[0.0, np.ones(t)][None, :], b_eq=[1.0], bounds=(0, None), method="highs")
    if res.status != 0:
        return None
    if float(res.x[0]) * scale > packing.z * (1 + RATE_RTOL):
        return None           # slower than the packing's rate (a hypercube's few orderings of many classes)
    weight = np.maximum(res.x[1:], 0.0)      # every tree kept: the timing programme weighs them anew
    return Packing(root=draft.root, parent=draft.parent, path=path, weight=weight / weight.sum(), paths=tuple(paths),
                   z=float(res.x[0]) * scale, iterations=0, load=load, link_ids=packing.link_ids, group=group,
                   link_group=packing.link_group, expanded=False)


__all__ = ["ordered_pool"]
