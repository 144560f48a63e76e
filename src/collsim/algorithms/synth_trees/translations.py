"""Translations of a network: one root's trees moved to every root (``synth-trees``).

On a torus, a hypercube or a circuit switch, shifting every node by the same offset maps the
links onto themselves (:meth:`~collsim.kinds.network.network.Network.translations`).  By symmetry and
convexity the packing programme then has an optimal solution invariant under the shifts, so
:func:`~collsim.algorithms.synth_trees.packing.pack` prices root 0's trees alone with a row per
orbit of links, and the timing programme does the same; the trees are then moved to every root.

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024 (the packing); G. B. Dantzig, P. Wolfe, "Decomposition principle
for linear programs", Operations Research 8(1), 1960 (the programme being reduced).
"""

from __future__ import annotations

import weakref

import numpy as np

_SYMMETRIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Per system, :func:`symmetry`'s last answer and the usable links it was for: a synthesis packs
several times on one network (all-gather and reduce-scatter, the shallowest trees), and on 1,024
GPUs the table's link lookups took 1 s each time."""


def link_orbits(link_group: np.ndarray | None, links: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orbits of the usable links under translations, as rows of a programme.

    References
    ----------
    G. B. Dantzig, P. Wolfe, "Decomposition principle for linear programs", Operations Research
    8(1), 1960 (the programme being reduced).
    """
    if link_group is None:
        return np.arange(links), np.arange(links), np.ones(links)
    orbit = link_group.min(axis=0)
    reps = np.unique(orbit)
    row_of = np.searchsorted(reps, orbit)
    return row_of, reps, len(link_group) / np.bincount(row_of)[row_of]


def symmetry(system, pr) -> tuple[np.ndarray, np.ndarray] | None:
    """The network's symmetries as permutations of vertices and of the usable links, or None.

    :meth:`~collsim.kinds.network.network.Network.symmetries`: its translations (a group taking node 0 to
    every end node once) or another group of automorphisms; used only if row 0 is the identity,
    every row maps the end nodes onto themselves and the usable links onto themselves one to one,
    keeping every link's bandwidth.

    References
    ----------
    G. B. Dantzig, P. Wolfe, "Decomposition principle for linear programs", Operations Research
    8(1), 1960 (the programme being reduced).
    """
    key = (pr.n, np.asarray(pr.ids).tobytes())
    try:
        hit = _SYMMETRIES.get(system)
    except TypeError:     # not weakly referenceable: computed every time
        hit = None
    if hit is not None and hit[0] == key:
        return hit[1]
    out = _symmetry(system, pr)
    try:
        _SYMMETRIES[system] = (key, out)
    except TypeError:
        pass
    return out


def _symmetry(system, pr) -> tuple[np.ndarray, np.ndarray] | None:
    trans = system.symmetries()
    if trans is None:
        return None
    gv = np.asarray(trans, np.int64)
    n, lk = pr.n, system.links
    if gv.ndim != 2 or gv.shape[1] != system.vertices or not np.array_equal(gv[0], np.arange(system.vertices)) \
            or not (np.sort(gv[:, :n], axis=1) == np.arange(n)).all():
        return None
    src, dst = np.asarray(lk.src)[pr.ids], np.asarray(lk.dst)[pr.ids]
    ids = lk.index(gv[:, src], gv[:, dst])
    pos = np.searchsorted(pr.ids, ids)
    pos_c = np.minimum(pos, len(pr.ids) - 1)
    if (ids < 0).any() or not (pr.ids[pos_c] == ids).all():
        return None
    bw = np.asarray(lk.bandwidth_bytes_per_s, float)
    if not (np.sort(pos_c, axis=1) == np.arange(len(pr.ids))).all() or not (bw[ids] == bw[pr.ids]).all():
        return None
    return gv, pos_c


def stabilisers(gv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One end node per orbit of the group, and how many elements fix each end node.

    References
    ----------
    The orbit-stabiliser theorem: ``|G| = |orbit| x |stabiliser|``.
    """
    orbit = gv.min(axis=0)
    reps, size = np.unique(orbit, return_counts=True)
    return reps, len(gv) // size[np.searchsorted(reps, orbit)]


def translates(gv, gl, parent, path, load, weight, paths, path_ids):
    """Every tree moved by every element of the group (``gv`` on end nodes, ``gl`` on link positions).

    References
    ----------
    G. B. Dantzig, P. Wolfe, "Decomposition principle for linear programs", Operations Research
    8(1), 1960 (the programme being reduced).
    """
    g_count, n = gv.shape
    roots = np.flatnonzero(parent < 0) % n if parent.size else np.zeros(0, np.int64)
    out_parent, out_path, out_load = [], [], []
    for g in range(g_count):
        mp = np.full(parent.shape, -1, np.int64)
        mp[:, gv[g]] = np.where(parent >= 0, gv[g][np.maximum(parent, 0)], -1)
        ppath = np.full(path.shape, -1, np.int64)
        for t, w in zip(*np.nonzero(path >= 0)):
            key = tuple(gl[g][paths[path[t, w]]].tolist())
            if key not in path_ids:
                path_ids[key] = len(paths)
                paths.append(np.asarray(key, np.int64))
            ppath[t, gv[g][w]] = path_ids[key]
        moved = np.zeros_like(load)
        moved[:, gl[g]] = load
        out_parent.append(mp)
        out_path.append(ppath)
        out_load.append(moved)
    root = gv[:, roots].ravel()
    return (np.concatenate(out_parent), np.concatenate(out_path), np.concatenate(out_load), root,
            np.tile(weight, g_count))
