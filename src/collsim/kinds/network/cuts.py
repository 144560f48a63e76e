"""Cut lower bounds on electrical networks (derivations: docs/derivations/lower-bounds.md).

A cut splits the vertices (end nodes and switches) into a side ``A`` and the
rest ``B``.  Every byte that must get from an end node in ``A`` to one in ``B``
crosses a link ``A -> B`` (switches never reduce), so a schedule takes at least
``demand(A -> B) / capacity(A -> B)`` seconds of link time, and likewise the
other way.  :func:`cut_demand_bytes` gives the demand of every collective for
any cut; :func:`cut_bound_s` takes the largest ratio over every single-node cut,
a family of closed-form cuts per topology, which each topology class gives
(:meth:`collsim.kinds.network.network.Network.cut_masks`: ring and line arcs, grid slabs,
hypercube sub-cubes, access switches with their end nodes, fat-tree pods) and,
for networks of at most ``exhaustive_vertices`` vertices, every cut; for all-gather,
reduce-scatter, all-reduce, broadcast and reduce on larger networks also the exact
maximum over every cut (:mod:`collsim.kinds.network.exact_cut`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ...core.collective import Collective
from ...core.collectives import TYPES
from ...core.errors import InputError
from .network import Network
from .cut_families import work_budget
from .exact_cut import CutCertificate, max_cut_ratio, min_cut

EXHAUSTIVE_VERTICES = 16
"""Networks with at most this many vertices have every cut evaluated (2^V - 2 of them)."""

_CHUNK_CELLS = 1 << 22
"""Cuts x links (or cuts x nodes) evaluated per numpy pass."""


def cut_demand_bytes(c: Collective, in_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bytes any schedule of ``c`` must move across each cut, in each direction.

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
    """
    return _demand(c.name, c.nodes, float(c.size_bytes), c.root, c.shift, in_a)


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

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of
    Mathematics 8, 1956 (flow across a cut is at most its capacity); F. T. Leighton,
    "Introduction to Parallel Algorithms and Architectures: Arrays, Trees, Hypercubes",
    Morgan Kaufmann, 1992 (bisection widths of rings, meshes, tori and hypercubes).
    The demands are collsim's own (:func:`cut_demand_bytes`).
    """
    return _best_cut(system, c, exhaustive_vertices, exact).per_byte * float(c.size_bytes)


def cut_certificate(system: Network, c: Collective, exhaustive_vertices: int = EXHAUSTIVE_VERTICES,
                    exact: bool = True) -> CutCertificate:
    """The cut that attains :func:`cut_bound_s`: its receiving side, capacity and demand.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of
    Mathematics 8, 1956.
    """
    best = _best_cut(system, c, exhaustive_vertices, exact)
    if best.side is None:
        raise InputError(f"no cut of the {system.topology} network carries demand of this {c.name}")
    m = float(c.size_bytes)
    side = tuple(int(x) for x in best.side)
    inside = sum(1 for x in side if x < system.nodes)
    return CutCertificate(bound_s=best.per_byte * m, side=side, end_nodes_inside=inside,
                          capacity_bytes_per_s=best.capacity, demand_bytes=best.demand * m,
                          direction=best.direction)


class _Best(NamedTuple):
    """The binding cut for a 1-byte message: ratio, the side demand enters (or leaves), its capacity, the demand."""

    per_byte: float
    side: tuple[int, ...] | None
    capacity: float
    direction: str
    demand: float


def _best_cut(system: Network, c: Collective, exhaustive_vertices: int, exact: bool) -> _Best:
    key = (c.name, c.nodes, c.root, c.shift, int(exhaustive_vertices), bool(exact))
    try:
        return _per_byte(system, *key)
    except TypeError:                       # an unhashable system: no cache
        return _per_byte.__wrapped__(system, *key)


@lru_cache(maxsize=16)
def _per_byte(system: Network, kind: str, n: int, root: int | None, shift: int | None,
              exhaustive_vertices: int, exact: bool = True) -> _Best:
    """The binding cut of :func:`cut_bound_s` for a 1-byte message (every demand is linear in m)."""
    lt = system.links
    bw = lt.bandwidth_bytes_per_s
    best = _Best(0.0, None, 0.0, "in", 0.0)
    vertices = np.arange(system.vertices)

    def worst(ab, ba, cab, cba, in_a) -> _Best:
        """The best of these cuts, as its side A: demand leaving A (``"out"``) or entering it (``"in"``)."""
        r = np.concatenate([np.divide(ab, cab, out=np.zeros(len(ab)), where=cab > 0),
                            np.divide(ba, cba, out=np.zeros(len(ba)), where=cba > 0)])
        if not r.size or not r.max() > best.per_byte:
            return best
        i = int(np.argmax(r))
        k, out_of_a = i % len(ab), i < len(ab)
        return _Best(float(r[i]), tuple(vertices[in_a(k)].tolist()), float(cab[k] if out_of_a else cba[k]),
                     "out" if out_of_a else "in", float(ab[k] if out_of_a else ba[k]))

    out_bw = np.bincount(lt.src, weights=bw, minlength=system.vertices)[:n]
    in_bw = np.bincount(lt.dst, weights=bw, minlength=system.vertices)[:n]
    step = max(1, _CHUNK_CELLS // max(n, 1))
    for lo in range(0, n, step):                       # single end node v: A = {v}
        rows = np.arange(lo, min(n, lo + step))
        in_a = np.zeros((len(rows), n), bool)
        in_a[np.arange(len(rows)), rows] = True
        ab, ba = _demand(kind, n, 1.0, root, shift, in_a)
        best = worst(ab, ba, out_bw[rows], in_bw[rows], lambda k, rows=rows: vertices == rows[k])
    masks = _cut_masks(system, exhaustive_vertices)
    step = max(1, _CHUNK_CELLS // max(len(lt), 1))
    for lo in range(0, len(masks), step):
        mk = masks[lo:lo + step]
        ms, md = mk[:, lt.src], mk[:, lt.dst]
        cab = (ms & ~md) @ bw
        cba = (~ms & md) @ bw
        ab, ba = _demand(kind, n, 1.0, root, shift, mk[:, :n])
        best = worst(ab, ba, cab, cba, lambda k, mk=mk: mk[k])
    # Rings, lines and stars (cuts_are_exact): their arcs and single nodes already attain every
    # cut's maximum (docs/derivations/lower-bounds.md).  Elsewhere the exact searches run with a budget of
    # scanned links: long rings (a 1-D torus) need O(N^2) or more, and keep the cuts above.
    if exact and system.vertices > exhaustive_vertices and not system.cuts_are_exact:
        work = work_budget(system)
        try:
            search, direction = TYPES[kind].exact_cut, TYPES[kind].direction
            found = None
            if search == "ratio":                         # (N - e(S)) bytes into / out of S
                ratio, side, inside, cap = max_cut_ratio(system, direction, work)
                found = _Best(float(ratio), side, float(cap), direction, float(n - inside))
            elif search == "thinnest":                    # 1 byte across the thinnest cut
                found = min((_min_cut(system, 0, d, work) for d in ("in", "out")), key=lambda b: b.capacity)
            elif search == "root":                        # 1 byte into / out of a side without the root
                found = _min_cut(system, int(root), direction, work)
            if found is not None and found.per_byte > best.per_byte:
                best = found
        except InputError:                  # an end node cut off (the cuts above skip it too), or over budget
            pass
    return best


def _min_cut(system: Network, first: int, direction: str, work: int) -> _Best:
    """:func:`min_cut` as the binding cut of a demand of one byte."""
    cap, side, _ = min_cut(system, first, direction, work)
    return _Best(1.0 / cap, side, float(cap), direction, 1.0)


__all__ = ["EXHAUSTIVE_VERTICES", "cut_bound_s", "cut_certificate", "cut_demand_bytes"]
