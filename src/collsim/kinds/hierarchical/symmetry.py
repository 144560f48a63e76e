"""Translations of a hierarchical system's coordinates, and its links' orbits under them.

A hierarchical system (:mod:`.system`) joins every group of nodes that differ in coordinate ``d``
by dimension ``d``'s topology.  Adding ``g_d`` (mod ``k_d``) to coordinate ``d`` of every node
maps the system onto itself when that topology is a ``switch`` (a star), a ``ring``, a ``full``
mesh or a line of two: it maps the dimension's groups onto themselves with their links, and the
groups of every other dimension onto each other, switches and routes with them (a network kind in
another dimension, a fat tree say, is moved as a whole, its switches keeping their positions in
their group).  So the system's *translation group* moves every such coordinate, the others stay
(:class:`~collsim.core.symmetry.Translations` with the dimensions outer to inner as its digits):
boxes on rails (two ``switch`` dimensions) have a regular group.  A network kind that declares
translations in closed form (:meth:`~collsim.kinds.network.network.Network.translation_radices`: a
full fat tree's pods, edge switches and ports) moves too, its coordinate split into those digits
and its switches moved by the kind's own :meth:`~collsim.kinds.network.network.Network.translate`
(every copy of it alike): 1,024 boxes of 8 on a full fat tree of k = 16 have a group of 8,192
elements acting regularly.  A line of three or more, or a network kind without such a group
(a fat tree with empty ports, a torus kind), is not translated: its coordinate is fixed, and the
group's domain holds one node of every value of it.  ``translation_group(system, cyclic=True)``
keeps only digits that are whole coordinates: a ring stage (``c -> c + 1``) commutes with those
alone.

The group acts freely on the links: every link has an end node as an endpoint, which every
element but the identity moves, or lies inside a network kind's group, which every element but
the identity moves to another group (its coordinate is fixed, so an element moving nothing else is
the identity), or lies inside a moving network kind's group, whose kind names an end node moving
with the link (:meth:`~collsim.kinds.network.network.Network.link_anchors`), which every element
but the identity moves.  So every orbit of links has one link per element, and a link's canonical
representative is its image under the element taking its *anchor* (an end-node endpoint; for a
link between two switches, the kind's anchor, or in a fixed coordinate the group's member of
coordinate 0) into the domain.  A flow
simulation on those representatives is the whole schedule's (docs/model.md, "Symmetric schedules
on hierarchical systems").

References
----------
W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., Cambridge University Press, 1911 (groups
acting on sets, orbits); D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall, 1992,
ch. 6 (max-min fairness, unique, hence invariant under a group that maps the flows onto themselves).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.symmetry import Translations, maps_links_alike
from .dimensions import TOPOLOGIES, group_system

TRANSLATED = ("switch", "ring", "full")
"""Topologies whose coordinate the translation group moves (and ``line`` of two nodes)."""


def _moves(dim) -> bool:
    return dim.size > 1 and (dim.topology in TRANSLATED or dim.topology == "line" and dim.size == 2)


def _kind(dim):
    """The network kind of a network-kind dimension (one group's copy), else None."""
    return None if dim.topology in TOPOLOGIES else group_system(dim)


def _split(dim) -> tuple[int, ...] | None:
    """The digits a network-kind dimension's coordinate splits into under its kind's translations."""
    kind = _kind(dim)
    radices = None if kind is None else kind.translation_radices()
    return None if radices is None or math.prod(radices) != dim.size else tuple(radices)


def _pow2(k: int) -> bool:
    return k >= 1 and k & (k - 1) == 0


def _binary_dim(dim) -> bool:
    """Whether XOR of the coordinate's bits maps the dimension, its links and its routes onto themselves:
    a switch or full mesh (any permutation does), a line of two, or a kind declaring it."""
    if not _pow2(dim.size):
        return False
    if dim.topology in ("switch", "full") or dim.size <= 2:
        return True
    kind = _kind(dim)
    return kind is not None and kind.binary_translations()


def _is_binary(system, group: Translations) -> bool:
    """Whether ``group`` is XOR of the node ids' bits (every radix 2, as many as the ids have) on a
    system whose every moving bit lies in a dimension that XOR maps onto itself."""
    n = system.nodes
    if not _pow2(n) or group.radices != (2,) * (n.bit_length() - 1) or not all(_pow2(k) for k in system.sizes):
        return False
    at = 0
    for dim in system.dimensions[::-1]:
        width = dim.size.bit_length() - 1
        if any(group.moving[at:at + width]) and not _binary_dim(dim):
            return False
        at += width
    return True


def binary_group(system) -> Translations | None:
    """XOR of the node ids' bits, where every dimension is a power of two that XOR maps onto itself with
    its routes (switches, full meshes, lines of two, full fat trees of k a power of two), else None.

    Dimension-ordered routes go to routes: XOR keeps which coordinates differ, and inside a
    dimension a switch, a full mesh or a line of two routes by its members alone, and a full fat
    tree's D-mod-k routes move with any permutation of its digits' values
    (:meth:`~collsim.kinds.network.fat_tree.FatTree.binary_translations`).  Recursive halving and
    doubling (``v -> v XOR 2^k``) commute with every element.

    Examples
    --------
    >>> from collsim.kinds.hierarchical.system import Hierarchical
    >>> binary_group(Hierarchical(nodes=32, dimensions="switch:2,fat-tree:16"))
    Translations(radices=(2, 2, 2, 2, 2), moving=(True, True, True, True, True))
    >>> binary_group(Hierarchical(nodes=32, dimensions="ring:8,switch:4")) is None     # a ring of 8
    True
    """
    n = system.nodes
    if not _pow2(n) or n < 2 or not all(_binary_dim(d) for d in system.dimensions):
        return None
    return Translations((2,) * (n.bit_length() - 1))


def _digits(system, group: Translations) -> list[tuple[int, int]] | None:
    """``(first digit, digits)`` of every dimension (inner first) in ``group``'s radices, or None when
    they are not the coordinates' (each dimension's size, or a moving kind's split)."""
    at, out = 0, []
    for dim in system.dimensions[::-1]:
        split = _split(dim)
        for width in (1, len(split) if split else 0):
            if width and group.radices[at:at + width] == ((dim.size,) if width == 1 else split):
                break
        else:
            return None
        moving = group.moving[at:at + width]
        if any(moving) and not (width == 1 and _moves(dim) or split and (width > 1 or len(split) == 1)):
            return None
        out.append((at, width))
        at += width
    return out[::-1] if at == len(group.radices) else None


def translation_group(system, cyclic: bool = False) -> Translations | None:
    """The translations of every coordinate whose topology they map onto itself, or None.

    ``cyclic``: only the digits that are whole coordinates (a ring stage's ``c -> c + 1`` commutes
    with them); a network kind's coordinate split into several digits stays fixed.

    Examples
    --------
    >>> from collsim.kinds.hierarchical.system import Hierarchical
    >>> translation_group(Hierarchical(nodes=16, dimensions="switch:8,line:2"))
    Translations(radices=(2, 8), moving=(True, True))
    >>> translation_group(Hierarchical(nodes=24, dimensions="switch:8,line:3")).domain().tolist()
    [0, 8, 16]
    >>> translation_group(Hierarchical(nodes=128, dimensions="switch:8,fat-tree:16"))   # pods, edges, ports
    Translations(radices=(4, 2, 2, 8), moving=(True, True, True, True))
    """
    radices: list[int] = []
    moving: list[bool] = []
    for dim in system.dimensions[::-1]:                   # outer first: the last digit varies fastest
        split = _split(dim)
        if split is None:
            radices.append(dim.size)
            moving.append(_moves(dim))
        else:
            radices.extend(split)
            moving.extend([not cyclic or len(split) == 1] * len(split))
    if not any(moving):
        return None
    return Translations(tuple(radices), tuple(moving))


def accepts(system, group) -> bool:
    """Whether ``group`` is a translation group of the system's coordinates this module moves, mapping
    every link onto a link alike (:func:`maps_links`)."""
    return (isinstance(group, Translations) and (_digits(system, group) is not None or _is_binary(system, group))
            and maps_links(system, group))


def vertex_images(system, group: Translations, elements, vertices) -> np.ndarray:
    """The image of every vertex (end node or switch) under its element (both arrays, broadcast).

    A switch of dimension ``d`` keeps its position in its group and goes to the group of its
    member of coordinate 0's image.
    """
    elements, vertices = np.broadcast_arrays(np.asarray(elements, np.int64), np.asarray(vertices, np.int64))
    n = system.nodes
    xor = _is_binary(system, group) and _digits(system, group) is None    # (bits alone: the same either way)
    out = np.empty(vertices.shape, np.int64)
    node = vertices < n
    out[node] = group.act(elements[node], vertices[node])
    for d, base in enumerate(system._switch_base):
        if base < 0:
            continue
        per = system.dimensions[d].switches_per_group()
        end = base + n // system.sizes[d] * per
        sel = (vertices >= base) & (vertices < end)
        if not sel.any():
            continue
        grp, local = np.divmod(vertices[sel] - base, per)
        member = system._members(d, grp, np.zeros_like(grp))
        moved = group.act(elements[sel], member)
        if _split(system.dimensions[d]) is not None:    # the kind's switches move with its coordinate
            k = system.sizes[d]
            local = _kind(system.dimensions[d]).translate(system.coord(d, moved), k + local, xor=xor) - k
        out[sel] = base + system.group_of(d, moved) * per + local
    return out


def _link_keys(system) -> tuple[np.ndarray, np.ndarray]:
    lt = system.links
    key = lt.src.astype(np.int64) * system.vertices + lt.dst
    order = np.argsort(key, kind="stable")
    return key[order], order


def link_images(system, group: Translations, elements, links) -> np.ndarray:
    """The image of every link under its element (both arrays, broadcast); -1 where none exists."""
    lt = system.links
    elements, links = np.broadcast_arrays(np.asarray(elements, np.int64), np.asarray(links, np.int64))
    src = vertex_images(system, group, elements, lt.src[links])
    dst = vertex_images(system, group, elements, lt.dst[links])
    keys, order = _link_keys(system)
    want = src * system.vertices + dst
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[at] == want, order[at], -1)


def maps_links(system, group: Translations) -> bool:
    """Whether every generator maps the links one to one onto links of the same bandwidth and latency."""
    return maps_links_alike(system.links, group, lambda g, ids: link_images(system, group, g, ids))


def _anchors(system, links: np.ndarray) -> np.ndarray:
    """An end node of every link that its orbit's links share through the group (see the module docstring)."""
    lt = system.links
    n = system.nodes
    src, dst = lt.src[links].astype(np.int64), lt.dst[links].astype(np.int64)
    out = np.where(src < n, src, dst)
    inner = out >= n
    if inner.any():   # switch to switch: inside a network kind's group, whose coordinate is fixed
        sw = out[inner]
        res = np.empty(len(sw), np.int64)
        other = np.where(src < n, dst, src)[inner]
        for d, base in enumerate(system._switch_base):
            if base < 0:
                continue
            per = system.dimensions[d].switches_per_group()
            sel = (sw >= base) & (sw < base + n // system.sizes[d] * per)
            if not sel.any():
                continue
            grp, local = np.divmod(sw[sel] - base, per)
            if _split(system.dimensions[d]) is not None:   # a moving kind's own anchor, in its group
                k = system.sizes[d]
                local = _kind(system.dimensions[d]).link_anchors(k + local, k + (other[sel] - base) % per)
            else:
                local = np.zeros_like(grp)
            res[sel] = system._members(d, grp, local)
        out[inner] = res
    return out


def orbit_representatives(system, group: Translations, links) -> np.ndarray:
    """The canonical representative of every link's orbit: its image by the element taking its
    anchor into the domain (equal for every link of one orbit).

    Examples
    --------
    >>> from collsim.kinds.hierarchical.system import Hierarchical
    >>> h = Hierarchical(nodes=8, dimensions="switch:4,switch:2")     # 2 boxes of 4 on 4 rails
    >>> g = translation_group(h)
    >>> ids = np.arange(len(h.links.src))
    >>> len(ids), len(np.unique(orbit_representatives(h, g, ids)))   # free: 32 links, 4 orbits of 8
    (32, 4)
    >>> [h.link_name(int(x)) for x in np.unique(orbit_representatives(h, g, ids))]
    ['n0->s0', 's0->n0', 'n0->s2', 's2->n0']
    """
    links = np.asarray(links, np.int64)
    if not len(links):
        return links
    back = group.inverse(group.element_of(_anchors(system, links)))
    return link_images(system, group, np.atleast_1d(back), links)


__all__ = ["TRANSLATED", "accepts", "binary_group", "link_images", "maps_links", "orbit_representatives",
           "translation_group", "vertex_images"]
