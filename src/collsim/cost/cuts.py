"""Cut lower bounds on electrical networks (derivations: docs/derivations/lower-bounds.md).

A cut splits the vertices (end nodes and switches) into a side ``A`` and the
rest ``B``.  Every byte that must get from an end node in ``A`` to one in ``B``
crosses a link ``A -> B`` (switches never reduce), so a schedule takes at least
``demand(A -> B) / capacity(A -> B)`` seconds of link time, and likewise the
other way.  :func:`cut_demand_bytes` gives the demand of every collective for
any cut; :func:`cut_bound_s` takes the largest ratio over every single-node cut,
a family of closed-form cuts per topology, which each topology class gives
(:meth:`collsim.core.network.Network.cut_masks`: ring and line arcs, grid slabs,
hypercube sub-cubes, access switches with their end nodes, fat-tree pods) and,
for networks of at most ``exhaustive_vertices`` vertices, every cut; for all-gather,
reduce-scatter, all-reduce, broadcast and reduce on larger networks also the exact
maximum over every cut (:mod:`collsim.cost.exact_cut`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core.collective import Collective
from ..core.collectives import TYPES
from ..core.errors import InputError
from ..core.network import Network
from .cut_families import work_budget
from .exact_cut import max_cut_ratio, min_cut

EXHAUSTIVE_VERTICES = 16
"""Networks with at most this many vertices have every cut evaluated (2^V - 2 of them)."""

_CHUNK_CELLS = 1 << 22
"""Cuts x links (or cuts x nodes) evaluated per numpy pass."""


def cut_demand_bytes(c: Collective, in_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bytes any schedule of ``c`` must move across each cut, in each direction.

    Parameters
    ----------
    c : Collective
        The collective (kind, node count, ``size_bytes``, root, shift).
    in_a : numpy.ndarray
        Boolean, shape ``(K, N)``: which end nodes are on side ``A`` of each of ``K`` cuts.

    Returns
    -------
    tuple of numpy.ndarray
        ``(a_to_b, b_to_a)`` bytes per cut (zero when one side has no end node).

    Notes
    -----
    With ``a`` end nodes in ``A`` and ``b`` in ``B`` and m the message size:
    all-gather ``a m`` / ``b m`` (each block must enter the other side once);
    reduce-scatter ``b m`` / ``a m`` (each block of a node in ``B`` needs ``A``'s
    contributions, which ``A`` may combine first); all-reduce m each way;
    all-to-all ``a b m`` each way; broadcast / scatter m / ``b m`` into the side
    without the root; reduce / gather m / ``a m`` out of the side without the root;
    scan m from ``A`` to ``B`` if some node of ``A`` precedes some node of ``B``;
    shift m per node of ``A`` whose target is in ``B``.  These per-cut demands are
    collsim's own derivations.

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007 (the per-node special case); F. T. Leighton, "Introduction
    to Parallel Algorithms and Architectures: Arrays, Trees, Hypercubes", Morgan
    Kaufmann, 1992 (bisection arguments).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> cut = np.array([[True, True, False, False]])
    >>> [x.tolist() for x in cut_demand_bytes(make_collective("alltoall", 4, 10), cut)]
    [[40.0], [40.0]]
    >>> [x.tolist() for x in cut_demand_bytes(make_collective("scatter", 4, 10, root=0), cut)]
    [[20.0], [0.0]]
    """
    return _demand(c.kind, c.nodes, float(c.size_bytes), c.root, c.shift, in_a)


def _demand(k: str, n: int, m: float, root: int | None, shift: int | None,
            in_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cut_demand_bytes` from the collective's fields."""
    in_a = np.asarray(in_a, dtype=bool)
    a = in_a.sum(axis=1)
    both = (a > 0) & (a < n)
    ab, ba = TYPES[k].cut_demand(in_a, root, shift, m)   # the collective's own per-cut volume
    zero = np.zeros(len(a))
    return np.where(both, ab, zero).astype(float), np.where(both, ba, zero).astype(float)


def _cut_masks(system: Network, exhaustive_vertices: int) -> np.ndarray:
    """Vertex masks ``(K, V)`` of every cut of a small network and the topology's closed-form cuts (side A True)."""
    v = system.vertices
    masks: list[np.ndarray] = []
    if v <= exhaustive_vertices:
        codes = np.arange(1, (1 << v) - 1, dtype=np.int64)
        masks.append(((codes[:, None] >> np.arange(v)) & 1).astype(bool))
    masks += system.cut_masks()  # each topology's families (Network.cut_masks)
    out = [mk for mk in masks if mk.shape[1] == v and len(mk)]
    return np.concatenate(out) if out else np.zeros((0, v), bool)


def cut_bound_s(system: Network, c: Collective, exhaustive_vertices: int = EXHAUSTIVE_VERTICES,
                exact: bool = True) -> float:
    """Largest cut bound: max over the evaluated cuts of demand / capacity, either way.

    Parameters
    ----------
    system : Network
        The network (any link bandwidths; links may be one-way).
    c : Collective
        The collective.
    exhaustive_vertices : int, optional
        Evaluate every cut of networks with at most this many vertices (0: only the
        single-node and closed-form cuts).
    exact : bool, optional
        All-gather, reduce-scatter, all-reduce, broadcast and reduce on larger networks: also
        the exact maximum over every cut (:func:`collsim.cost.exact_cut.max_cut_ratio`,
        parametric max-flow; :func:`collsim.cost.exact_cut.min_cut`).

    Returns
    -------
    float
        Seconds of link time (no latency) that no schedule beats: the maximum of
        ``demand / capacity`` over every single-node cut (an end node's egress and
        ingress), the topology's closed-form cuts (:mod:`collsim.cost.cuts`), and
        on small networks every cut (all-gather, reduce-scatter, all-reduce, broadcast and
        reduce: on every network, with ``exact``).  Cuts with zero capacity are skipped.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of
    Mathematics 8, 1956 (flow across a cut is at most its capacity); F. T. Leighton,
    "Introduction to Parallel Algorithms and Architectures: Arrays, Trees, Hypercubes",
    Morgan Kaufmann, 1992 (bisection widths of rings, meshes, tori and hypercubes).
    The demands are collsim's own (:func:`cut_demand_bytes`).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> from collsim.systems.mesh_torus import Mesh
    >>> mesh = Mesh.from_dims((4, 4), link_bandwidth_bytes_per_s=1.0)
    >>> cut_bound_s(mesh, make_collective("allgather", 16, 10))    # a corner takes 150 B on 2 links
    75.0
    >>> cut_bound_s(mesh, make_collective("alltoall", 16, 10))     # bisection: 8 x 8 x 10 B on 4 links
    160.0
    """
    key = (c.kind, c.nodes, c.root, c.shift, int(exhaustive_vertices), bool(exact))
    try:
        per_byte = _per_byte(system, *key)
    except TypeError:                       # an unhashable system: no cache
        per_byte = _per_byte.__wrapped__(system, *key)
    return per_byte * float(c.size_bytes)


@lru_cache(maxsize=16)
def _per_byte(system: Network, kind: str, n: int, root: int | None, shift: int | None,
              exhaustive_vertices: int, exact: bool = True) -> float:
    """:func:`cut_bound_s` for a 1-byte message (every demand is linear in m)."""
    lt = system.links
    bw = lt.bandwidth_bytes_per_s
    best = 0.0

    def worst(ab, ba, cab, cba) -> float:
        r = np.concatenate([np.divide(ab, cab, out=np.zeros(len(ab)), where=cab > 0),
                            np.divide(ba, cba, out=np.zeros(len(ba)), where=cba > 0)])
        return float(r.max(initial=0.0))

    out_bw = np.bincount(lt.src, weights=bw, minlength=system.vertices)[:n]
    in_bw = np.bincount(lt.dst, weights=bw, minlength=system.vertices)[:n]
    step = max(1, _CHUNK_CELLS // max(n, 1))
    for lo in range(0, n, step):                       # single end node v: A = {v}
        rows = np.arange(lo, min(n, lo + step))
        in_a = np.zeros((len(rows), n), bool)
        in_a[np.arange(len(rows)), rows] = True
        ab, ba = _demand(kind, n, 1.0, root, shift, in_a)
        best = max(best, worst(ab, ba, out_bw[rows], in_bw[rows]))
    masks = _cut_masks(system, exhaustive_vertices)
    step = max(1, _CHUNK_CELLS // max(len(lt), 1))
    for lo in range(0, len(masks), step):
        mk = masks[lo:lo + step]
        ms, md = mk[:, lt.src], mk[:, lt.dst]
        cab = (ms & ~md) @ bw
        cba = (~ms & md) @ bw
        ab, ba = _demand(kind, n, 1.0, root, shift, mk[:, :n])
        best = max(best, worst(ab, ba, cab, cba))
    # Rings, lines and stars (cuts_are_exact): their arcs and single nodes already attain every
    # cut's maximum (docs/derivations/lower-bounds.md).  Elsewhere the exact searches run with a budget of
    # scanned links: long rings (a 1-D torus) need O(N^2) or more, and keep the cuts above.
    if exact and system.vertices > exhaustive_vertices and not system.cuts_are_exact:
        work = work_budget(system)
        try:
            search, direction = TYPES[kind].exact_cut, TYPES[kind].direction
            if search == "ratio":                         # (N - e(S)) bytes into / out of S
                best = max(best, max_cut_ratio(system, direction, work)[0])
            elif search == "thinnest":                    # 1 byte across the thinnest cut
                best = max(best, 1.0 / min(min_cut(system, 0, "in", work)[0], min_cut(system, 0, "out", work)[0]))
            elif search == "root":                        # 1 byte into / out of a side without the root
                best = max(best, 1.0 / min_cut(system, int(root), direction, work)[0])
        except InputError:                  # an end node cut off (the cuts above skip it too), or over budget
            pass
    return best


__all__ = ["EXHAUSTIVE_VERTICES", "cut_bound_s", "cut_demand_bytes"]
