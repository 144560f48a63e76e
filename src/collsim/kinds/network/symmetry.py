"""Translations of a network, and its links' orbits under them.

A network whose vertex permutations keeping the links include a group acting regularly on the end
nodes (:meth:`~collsim.kinds.network.network.Network.translations`: a torus's shifts, a
hypercube's XORs, boxes on rails moved box by box and GPU by GPU) has a *translation group* when
that group is, in the end nodes' own numbering, a :class:`~collsim.core.symmetry.Translations`
(:meth:`~collsim.core.symmetry.Translations.of_permutations`): element ``g`` is the permutation
taking node 0 to node ``g``, switches moving with it.

The group must act freely on the links for a flow simulation on one flow per orbit to be the
whole schedule's (docs/model.md, "Symmetric schedules on hierarchical systems": the argument
is the same).  A link with an end node as an endpoint is moved by every element but the
identity, since the action on end nodes is regular; a link between two switches is checked: its
orbit must hold one link per element.  A link's canonical orbit representative is its image under
the element taking its *anchor* (an end-node endpoint) to node 0, and for a link between
switches the least link of its orbit.

References
----------
W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., Cambridge University Press, 1911 (groups
acting on sets, orbits, regular actions); D. Bertsekas, R. Gallager, "Data Networks", 2nd ed.,
Prentice Hall, 1992, ch. 6 (max-min fairness, unique, hence invariant under a group that maps the
flows onto themselves).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ...core.symmetry import Translations, maps_links_alike

MAX_TABLE_ENTRIES = 1 << 26
"""Largest ``elements x vertices`` table of the group kept (4 bytes an entry: 256 MiB); a larger
network is treated as having no translation group, and its schedules are expanded."""


@dataclass(frozen=True, eq=False)
class _Group:
    """A network's translation group with its tables: vertex images and switch-link orbits."""

    group: Translations
    vertex: np.ndarray          # (N, V): vertex[g, v] = g . v
    keys: np.ndarray            # sorted link keys src * V + dst
    order: np.ndarray           # link id of each sorted key
    inner_rep: np.ndarray       # (L,): the least link of the orbit of every switch-to-switch link, else -1


_GROUPS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_NONE = object()


def _found(system) -> _Group | None:
    try:
        hit = _GROUPS.get(system, None)
    except TypeError:    # not weakly referenceable: computed every time
        hit = None
    if hit is not None:
        return None if hit is _NONE else hit
    out = _make(system)
    try:
        _GROUPS[system] = _NONE if out is None else out
    except TypeError:
        pass
    return out


def _make(system) -> _Group | None:
    n, v = system.nodes, system.vertices
    if n * v > MAX_TABLE_ENTRIES:
        return None
    trans = system.translations()
    if trans is None:
        return None
    trans = np.asarray(trans)
    if trans.shape != (n, v):
        return None
    group = Translations.of_permutations(trans[:, :n])
    if group is None:
        return None
    lt = system.links
    src, dst = np.asarray(lt.src, np.int64), np.asarray(lt.dst, np.int64)
    key = src * v + dst
    order = np.argsort(key, kind="stable")
    keys = key[order]
    vertex = trans.astype(np.int32 if v < 2**31 else np.int64)
    inner = np.flatnonzero((src >= n) & (dst >= n))
    inner_rep = np.full(len(src), -1, np.int64)
    if len(inner):
        images = _lookup(keys, order, vertex[:, src[inner]].astype(np.int64) * v + vertex[:, dst[inner]])
        if (images < 0).any():
            return None
        ordered = np.sort(images, axis=0)
        if (ordered[1:] == ordered[:-1]).any():     # some element other than the identity fixes the link
            return None
        inner_rep[inner] = ordered[0]
    return _Group(group, vertex, keys, order, inner_rep)


def _link_keys(system) -> tuple[np.ndarray, np.ndarray]:
    found = _found(system)
    if found is not None:
        return found.keys, found.order
    lt = system.links
    key = np.asarray(lt.src, np.int64) * system.vertices + np.asarray(lt.dst, np.int64)
    order = np.argsort(key, kind="stable")
    return key[order], order


def _lookup(keys: np.ndarray, order: np.ndarray, want: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[at] == want, order[at], -1)


def translation_group(system, cyclic: bool = False) -> Translations | None:
    """The network's translation group, or None (no regular group of translations in its numbering,
    one that fixes a link between switches, or a table above :data:`MAX_TABLE_ENTRIES`).
    ``cyclic`` changes nothing: a network's digits are its own coordinates.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> translation_group(load_system("torus", dims=(3, 4)))
    Translations(radices=(3, 4), moving=(True, True))
    >>> translation_group(load_system("mesh", dims=(3, 4))) is None     # reflections only
    True
    """
    found = _found(system)
    return None if found is None else found.group


def _vertex_images(system, group: Translations, elements, vertices) -> np.ndarray:
    """``g . v``: the table of the network's own group, or on a network without switches the group's action."""
    found = _found(system)
    if found is not None and group == found.group:
        return found.vertex[elements, vertices].astype(np.int64)
    return group.act(elements, vertices)


def accepts(system, group) -> bool:
    """Whether ``group`` maps every link onto a link alike: the network's translation group, or on a
    network without switches any translation group of its end nodes that does (a ring's rotations
    on a network ring).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> accepts(load_system("ring", nodes=6), Translations((6,))), accepts(load_system("torus", dims=(2, 3)), Translations((6,)))
    (True, False)
    """
    found = _found(system)
    if not isinstance(group, Translations) or group.nodes != system.nodes \
            or not (found is not None and group == found.group or system.vertices == system.nodes):
        return False
    return maps_links_alike(system.links, group, lambda g, ids: link_images(system, group, g, ids))


def link_images(system, group: Translations, elements, links) -> np.ndarray:
    """The image of every link under its element (both arrays, broadcast); -1 where none exists.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> ring = load_system("ring", nodes=4)
    >>> g = translation_group(ring)
    >>> [ring.link_name(int(x)) for x in link_images(ring, g, 1, [0, 1])]
    ['n1->n2', 'n2->n3']
    """
    lt = system.links
    elements, links = np.broadcast_arrays(np.asarray(elements, np.int64), np.asarray(links, np.int64))
    v = system.vertices
    src = _vertex_images(system, group, elements, np.asarray(lt.src)[links])
    dst = _vertex_images(system, group, elements, np.asarray(lt.dst)[links])
    keys, order = _link_keys(system)
    return _lookup(keys, order, src * v + dst)


def orbit_representatives(system, group: Translations, links) -> np.ndarray:
    """The canonical representative of every link's orbit (equal for every link of one orbit).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> t = load_system("torus", dims=(3, 4))
    >>> ids = np.arange(len(t.links.src))
    >>> len(ids), len(np.unique(orbit_representatives(t, translation_group(t), ids)))   # 48 links, 4 orbits
    (48, 4)
    """
    found = _found(system)
    links = np.asarray(links, np.int64)
    if not len(links):
        return links
    lt = system.links
    n = system.nodes
    src, dst = np.asarray(lt.src, np.int64)[links], np.asarray(lt.dst, np.int64)[links]
    anchor = np.where(src < n, src, dst)
    # the element taking the anchor into the domain (the anchor itself names it only where the group is regular)
    back = group.inverse(group.element_of(np.minimum(anchor, n - 1)))
    out = link_images(system, group, np.atleast_1d(back), links)
    inner = anchor >= n
    if inner.any():
        out[inner] = found.inner_rep[links[inner]]
    return out


__all__ = ["MAX_TABLE_ENTRIES", "accepts", "link_images", "orbit_representatives", "translation_group"]
