"""The best cut of a network's closed-form families, and the exact search's budget (docs/derivations/lower-bounds.md).

Every topology gives families of cuts in closed form (:meth:`Network.cut_masks
<collsim.kinds.network.network.Network.cut_masks>`: ring and line arcs, grid slabs, sub-cubes, access
switches, fat-tree pods).  :func:`family_cut` evaluates them and every single end node for the
all-gather / reduce-scatter ratio ``(N - e(S)) / c(S)`` in a few numpy passes: on rings, lines and
stars (``cuts_are_exact``) that is the exact maximum over every cut, and elsewhere the cut the
bound stands on when the exact search (:func:`collsim.kinds.network.exact_cut.max_cut_ratio`) is over its
budget (:func:`work_budget`, :class:`WorkLimitError`).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from .network import Network

_CHUNK_CELLS = 1 << 22
"""Cuts x links evaluated per numpy pass (as :mod:`collsim.kinds.network.cuts`)."""


class WorkLimitError(InputError):
    """An exact cut search gave up after scanning more links than its budget (:func:`work_budget`).

    References
    ----------
    G. Gallo, M. D. Grigoriadis, R. E. Tarjan, "A fast parametric maximum flow algorithm and
    applications", SIAM Journal on Computing 18(1), 1989 (the search it bounds).
    """


MAX_WORK = 20_000_000
"""The most links an exact cut search scans (:func:`work_budget`)."""


def work_budget(system: Network) -> int:
    """Links the exact cut searches may scan on a network before they give up.

    Long rings and other long cycles are the slow case: flow must go the long way round,
    O(N^2) searches of O(N) links or worse.  The budget is 400 scans per vertex and link
    (at least a million), and at most :data:`MAX_WORK` scans: a fraction of a second to a few
    seconds (the search's Python loop scans 2 to 5 million links a second; a 64 x 64 mesh with
    one thin column needs 5 to 8 million for its exact cut).  Above the cap (more than 50,000
    vertices and links) a search that runs out keeps the closed-form cuts, which are lower
    bounds all the same: a 65,536-node hierarchical system took 60 s to bound with the uncapped
    budget (131 million scans), about 10 s with the cap.

    References
    ----------
    G. Gallo, M. D. Grigoriadis, R. E. Tarjan, "A fast parametric maximum flow algorithm and
    applications", SIAM Journal on Computing 18(1), 1989 (the parametric flow it budgets).
    """
    return min(MAX_WORK, max(1_000_000, 400 * (int(system.vertices) + len(system.links.src))))


def family_cut(system: Network, direction: str = "in") -> tuple[float, tuple[int, ...], int, float]:
    """The largest ``(N - e(S)) / c(S)`` over single end nodes and the topology's closed-form cuts.

    The cuts are those of :meth:`Network.cut_masks <collsim.kinds.network.network.Network.cut_masks>`
    (ring and line arcs, grid slabs, sub-cubes ...) and every ``S = {v}``; on the networks whose
    families are exact (``cuts_are_exact``: rings, lines, stars) this is the exact maximum over
    every cut, found without a flow.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of
    Mathematics 8, 1956 (no schedule moves more than a cut's capacity across it); F. T. Leighton,
    "Introduction to Parallel Algorithms and Architectures: Arrays, Trees, Hypercubes", Morgan
    Kaufmann, 1992 (the closed-form cuts of rings, meshes, tori and hypercubes).
    """
    if direction not in ("in", "out"):
        raise InputError(f"direction must be 'in' or 'out', not {direction!r}")
    n, v, lt = int(system.nodes), int(system.vertices), system.links
    bw = np.asarray(lt.bandwidth_bytes_per_s, dtype=float)
    tail, head = (lt.src, lt.dst) if direction == "in" else (lt.dst, lt.src)   # a link tail -> head enters {head}
    cap = np.bincount(head, weights=bw, minlength=v)[:n]
    ratio = np.divide(float(n - 1), cap, out=np.full(n, -1.0), where=cap > 0)
    t = int(np.argmax(ratio))
    best = (float(ratio[t]), (t,), 1, float(cap[t]))
    for masks in system.cut_masks():
        if masks.ndim != 2 or masks.shape[1] != v or not len(masks):
            continue
        step = max(1, _CHUNK_CELLS // max(len(bw), 1))
        for lo in range(0, len(masks), step):
            mk = masks[lo:lo + step]
            inside = mk[:, :n].sum(axis=1)
            c = (mk[:, head] & ~mk[:, tail]) @ bw
            r = np.divide((n - inside).astype(float), c, out=np.full(len(mk), -1.0),
                          where=(c > 0) & (inside >= 1) & (inside <= n - 1))
            k = int(np.argmax(r))
            if r[k] > best[0]:
                best = (float(r[k]), tuple(int(x) for x in np.flatnonzero(mk[k])), int(inside[k]), float(c[k]))
    if best[0] < 0:
        raise InputError("no cut with end nodes on both sides has links of positive bandwidth")
    return best


__all__ = ["MAX_WORK", "WorkLimitError", "family_cut", "work_budget"]
