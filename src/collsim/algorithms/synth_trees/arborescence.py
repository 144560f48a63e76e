"""Minimum-cost spanning arborescence with a given root (Chu–Liu/Edmonds), on a dense cost matrix.

The column generation of :mod:`~collsim.algorithms.synth_trees.packing` prices one arborescence
per root and iteration, thousands in all, on a dense matrix of logical-link costs.
``networkx.minimum_spanning_arborescence`` solves the same problem (it is the cross-check in the
tests) but walks Python objects edge by edge and takes no root; this version works column-wise in
numpy, one contraction level at a time.

References
----------
Y. J. Chu, T. H. Liu, "On the shortest arborescence of a directed graph", Scientia Sinica 14,
1965; J. Edmonds, "Optimum branchings", J. Res. Nat. Bur. Standards 71B, 1967.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError


def _cycles(pred: np.ndarray, root: int) -> list[np.ndarray]:
    """The cycles of the functional graph ``v -> pred[v]`` (``pred[root] = -1``)."""
    n = len(pred)
    state = np.zeros(n, np.int8)            # 0 new, 1 on the current walk, 2 done
    state[root] = 2
    out = []
    for start in range(n):
        if state[start]:
            continue
        walk = []
        v = start
        while state[v] == 0:
            state[v] = 1
            walk.append(v)
            v = int(pred[v])
        if state[v] == 1:                     # closed a cycle: from v to the end of the walk
            out.append(np.asarray(walk[walk.index(v):], dtype=np.int64))
        state[np.asarray(walk, dtype=np.int64)] = 2
    return out


def min_arborescence(cost: np.ndarray, root: int) -> np.ndarray:
    """The parent of every vertex in a minimum-cost spanning arborescence rooted at ``root``.

    References
    ----------
    Y. J. Chu, T. H. Liu, Scientia Sinica 14, 1965; J. Edmonds, J. Res. NBS 71B, 1967.
    """
    w = np.array(cost, dtype=float)
    n = len(w)
    np.fill_diagonal(w, np.inf)
    w[:, root] = np.inf
    pred = np.argmin(w, axis=0)
    best = w[pred, np.arange(n)]
    best[root] = 0.0
    if not np.isfinite(best).all():
        bad = [int(v) for v in np.flatnonzero(~np.isfinite(best))[:8]]
        raise InputError(f"no arborescence from node {root}: node(s) {bad} cannot be reached")
    pred[root] = -1
    cycles = _cycles(pred, root)
    if not cycles:
        return pred
    # contract every cycle to one vertex; an arc into a cycle vertex v costs w - best[v]
    comp = np.arange(n)
    for c in cycles:
        comp[c] = c[0]
    labels, comp = np.unique(comp, return_inverse=True)
    adj = w - best[None, :]
    order = np.argsort(comp, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(comp[order]) != 0])
    rows = np.minimum.reduceat(adj[order], starts, axis=0)          # (components, n): cheapest from each
    sub = np.minimum.reduceat(rows[:, order], starts, axis=1)
    np.fill_diagonal(sub, np.inf)
    cpred = min_arborescence(sub, int(comp[root]))
    # each component is entered at its vertex with the cheapest arc from its parent component
    into = cpred[comp]
    val = np.where(into >= 0, rows[np.maximum(into, 0), np.arange(n)], np.inf)
    by = np.lexsort((val, comp))
    entry = by[np.r_[True, comp[by][1:] != comp[by][:-1]]]
    entry = entry[into[entry] >= 0]
    source = np.where(comp[:, None] == into[entry][None, :], adj[:, entry], np.inf).argmin(axis=0)
    parent = pred.copy()
    parent[entry] = source                # the cycle is broken where it is entered; its other arcs stay
    parent[root] = -1
    return parent
