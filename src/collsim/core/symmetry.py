"""Symmetric schedules: representative transfers plus the group that moves them.

Ring all-reduce on 65,536 nodes is 8.6 x 10^9 transfers, but one step pattern repeated under
the ring's rotations.  A *translation group* acts on the nodes ``0..N-1`` written in mixed radix
``(n_1, ..., n_k)`` (``n_1 * ... * n_k = N``): the element ``g`` (a node too) sends node ``u`` to
``u + g``, digit by digit modulo each radix, on the digits it *moves*.  One radix ``(N,)`` is a
ring's rotations, ``(a, b, c)`` a torus's translations, ``(2,) * k`` the XOR group of recursive
halving; ``(N/D, D)`` with the first digit moving is the ring's rotations by multiples of ``D``.
The group acts *freely*: only the identity fixes a node.  The nodes whose moving digits are 0 are
its *domain*, one node of every orbit (node 0 alone when every digit moves: a *regular* action).
It acts on chunks through their *anchor*: with ``m = chunks / N`` chunks an anchor, chunk
``a * m + j`` goes to ``(a + g) * m + j`` (all-gather's chunk of node ``a``, the ``a``-th block
of an all-reduce).

A schedule invariant under such a group is stored as its transfers *into the domain*, one per
orbit: an orbit has one transfer per element (only the identity fixes a receiver), and exactly
one of them ends in the domain.  :class:`SymmetricSchedule` holds those representatives (a
:class:`~collsim.core.schedule.Schedule` on the full system and collective) and the group;
:meth:`SymmetricSchedule.expand` gives the ordinary schedule back.  Its data flow is checked on
the domain alone (:mod:`collsim.verify.orbits`) and its resources and time by the system's kind,
on the orbits; the argument is in ``docs/model.md``, "Symmetric schedules".

References
----------
W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., Cambridge University Press, 1911
(groups acting on sets, their orbits and regular actions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping

import numpy as np

from .collective import Collective
from .errors import InputError
from .holdings import Holdings
from .schedule import Schedule
from .system import System


LOOKUP_MIN_VALUES = 1 << 15
"""Calls on at least this many values read precomputed tables (below it, the digit arithmetic is as fast)."""

LOOKUP_MAX_NODES = 1 << 22
"""Groups of at most this many nodes keep each node's inverse, element and domain node (8 bytes each)."""

SUM_TABLE_NODES = 2048
"""Groups of at most this many nodes keep ``act(g, u)`` for every pair (at most 32 MiB)."""


@dataclass(frozen=True)
class Translations:
    """Translations of some digits of a mixed-radix lattice of nodes: a group acting freely on them.

    Parameters
    ----------
    radices : tuple of int
        ``(n_1, ..., n_k)``, each at least 1; node ``u`` has the digits of
        :func:`numpy.unravel_index` (the last digit varies fastest).
    moving : tuple of bool, optional
        Which digits the group translates (default: all, a group acting *regularly*: one element
        takes node 0 to each node).  The others stay put: the nodes whose moving digits are 0
        form the *domain*, one node of every orbit (boxes of 8 translated as wholes keep the
        8 nodes of box 0; a ring rotated by multiples of ``D`` keeps nodes ``0..D-1``).

    Notes
    -----
    An element is named by the node it takes node 0 to (its fixed digits are 0), so
    :meth:`act` adds digit by digit in every case.

    Examples
    --------
    >>> ring = Translations((8,))
    >>> ring.order, ring.act(3, [0, 6]).tolist(), ring.inverse(3)
    (8, [3, 1], 5)
    >>> torus = Translations((2, 3))
    >>> torus.act(4, [0, 5]).tolist()    # (1, 1) + (1, 2) = (0, 0)
    [4, 0]
    >>> by4 = Translations((2, 4), moving=(True, False))   # rotations of 8 nodes by multiples of 4
    >>> by4.order, by4.domain().tolist(), by4.elements().tolist(), by4.act(4, [1, 6]).tolist()
    (2, [0, 1, 2, 3], [0, 4], [5, 2])
    """

    radices: tuple[int, ...]
    moving: tuple[bool, ...] | None = None

    def __post_init__(self) -> None:
        if not self.radices or any(int(r) < 1 for r in self.radices):
            raise InputError(f"a translation group needs radices of at least 1, got {self.radices!r}")
        object.__setattr__(self, "radices", tuple(int(r) for r in self.radices))
        moving = (True,) * len(self.radices) if self.moving is None else tuple(bool(m) for m in self.moving)
        if len(moving) != len(self.radices):
            raise InputError(f"moving names {len(moving)} digits, the radices {len(self.radices)}")
        object.__setattr__(self, "moving", moving)

    @classmethod
    def of_permutations(cls, perm) -> "Translations | None":
        """The regular translation group a table of permutations is, in the nodes' own numbering, or None.

        ``perm[g]`` is a permutation of the nodes taking node 0 to node ``g`` (a group acting
        regularly, as :meth:`collsim.kinds.network.network.Network.translations` finds).  It is
        this class's group when some radices make every row ``u -> u + g`` digit by digit: the
        last radix is the cycle of node 0 under row 1, the next under the row of that radix, and
        so on; then the whole table is compared.

        Examples
        --------
        >>> t = Translations((2, 3))
        >>> table = np.stack([t.act(g, np.arange(6)) for g in range(6)])
        >>> Translations.of_permutations(table)
        Translations(radices=(2, 3), moving=(True, True))
        >>> Translations.of_permutations(np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 1, 0], [3, 2, 0, 1]]))  # no
        """
        perm = np.asarray(perm)
        n = len(perm)
        if perm.ndim != 2 or perm.shape[1] < n or n == 0 or not np.array_equal(perm[:, 0], np.arange(n)):
            return None
        radices: list[int] = []
        stride = 1
        while stride < n:
            steps = [0]
            for _ in range(n):       # node 0's cycle under the unit of the next digit: 0, s, 2s, ...
                nxt = int(perm[stride, steps[-1]])
                if nxt == 0:
                    break
                steps.append(nxt)
            r = len(steps)
            if r < 2 or steps != list(range(0, r * stride, stride)) or n % (r * stride):
                return None
            radices.insert(0, r)
            stride *= r
        group = cls(tuple(radices) or (1,))
        nodes = np.arange(n)
        for lo in range(0, n, max(1, (1 << 22) // n)):
            g = np.arange(lo, min(n, lo + max(1, (1 << 22) // n)))
            if not np.array_equal(group.act(g[:, None], nodes[None, :]), perm[g, :n]):
                return None
        return group

    @property
    def nodes(self) -> int:
        """Number of nodes it acts on."""
        return math.prod(self.radices)

    @property
    def order(self) -> int:
        """Number of elements (the size of every orbit of nodes)."""
        return math.prod(r for r, m in zip(self.radices, self.moving) if m)

    @property
    def regular(self) -> bool:
        """Whether every digit moves (one orbit of nodes)."""
        return all(self.moving)

    def _digits(self, u) -> tuple[np.ndarray, ...]:
        return np.unravel_index(np.asarray(u, dtype=np.int64), self.radices)

    @cached_property
    def _sums(self) -> np.ndarray:
        """``act(g, u)`` for every pair, ``(N, N)``: one gather instead of a division per digit."""
        n = self.nodes
        table = np.empty((n, n), np.int64)
        u = np.arange(n, dtype=np.int64)
        for lo in range(0, n, 256):
            g = np.arange(lo, min(n, lo + 256), dtype=np.int64)
            table[lo:lo + len(g)] = self._node((a + b) % r for a, b, r in zip(self._digits(g[:, None]),
                                                                            self._digits(u[None, :]), self.radices))
        return table

    @cached_property
    def _per_node(self) -> dict[str, np.ndarray]:
        """:meth:`inverse`, :meth:`element_of` and :meth:`domain_of` of every node, for lookups."""
        u = np.arange(self.nodes, dtype=np.int64)
        return {"inverse": self._inverse(u), "element_of": self._element_of(u), "domain_of": self._domain_of(u)}

    def _looked_up(self, values) -> bool:
        """Whether a call on ``values`` reads a table (many values, a table of bounded size)."""
        return np.size(values) >= LOOKUP_MIN_VALUES and self.nodes <= LOOKUP_MAX_NODES

    def _node(self, digits) -> np.ndarray:
        return np.ravel_multi_index(tuple(digits), self.radices).astype(np.int64)

    def act(self, g, nodes) -> np.ndarray:
        """Images ``g + u`` of ``nodes`` (``g`` a scalar or an array broadcast against them).

        Examples
        --------
        >>> Translations((4,)).act([1, 2], [3, 3]).tolist()
        [0, 1]
        """
        g = np.asarray(g, dtype=np.int64)
        u = np.asarray(nodes, dtype=np.int64)
        if len(self.radices) == 1:
            return (u + g) % self.radices[0]
        if max(g.size, u.size) >= LOOKUP_MIN_VALUES and self.nodes <= SUM_TABLE_NODES:
            return self._sums[g, u]
        return self._node((a + b) % r for a, b, r in zip(self._digits(g), self._digits(u), self.radices))

    def inverse(self, g):
        """The element undoing ``g`` (scalar in, scalar out).

        Examples
        --------
        >>> Translations((2, 4)).inverse(5)    # (1, 1) -> (1, 3)
        7
        """
        out = self._per_node["inverse"][np.asarray(g, np.int64)] if self._looked_up(g) else self._inverse(g)
        return int(out) if out.ndim == 0 else out

    def _inverse(self, g) -> np.ndarray:
        return self._node((-d) % r for d, r in zip(self._digits(g), self.radices))

    def element_of(self, nodes) -> np.ndarray:
        """The element taking a domain node to each node: its moving digits.

        Examples
        --------
        >>> Translations((2, 4), moving=(True, False)).element_of([5, 2]).tolist()
        [4, 0]
        """
        if self._looked_up(nodes):
            return self._per_node["element_of"][np.asarray(nodes, np.int64)]
        return self._element_of(nodes)

    def _element_of(self, nodes) -> np.ndarray:
        return self._node(d if m else np.zeros_like(d) for d, m in zip(self._digits(nodes), self.moving))

    def domain_of(self, nodes) -> np.ndarray:
        """The domain node in each node's orbit: its fixed digits.

        Examples
        --------
        >>> Translations((2, 4), moving=(True, False)).domain_of([5, 2]).tolist()
        [1, 2]
        """
        if self._looked_up(nodes):
            return self._per_node["domain_of"][np.asarray(nodes, np.int64)]
        return self._domain_of(nodes)

    def _domain_of(self, nodes) -> np.ndarray:
        return self._node(np.zeros_like(d) if m else d for d, m in zip(self._digits(nodes), self.moving))

    def domain(self) -> np.ndarray:
        """The domain: the nodes whose moving digits are 0, one per orbit, in order."""
        return np.unique(self.domain_of(np.arange(self.nodes)))

    def elements(self) -> np.ndarray:
        """Every element, in order (the nodes whose fixed digits are 0)."""
        return np.unique(self.element_of(np.arange(self.nodes)))

    def generators(self) -> tuple[int, ...]:
        """One unit translation per moving digit of radix above 1: they generate the group.

        Examples
        --------
        >>> Translations((2, 1, 3)).generators()
        (3, 1)
        """
        strides = np.cumprod((1,) + self.radices[:0:-1])[::-1]
        return tuple(int(s) for s, r, m in zip(strides, self.radices, self.moving) if r > 1 and m)

    def act_chunks(self, g, chunks, per_anchor: int, interleaved: bool = False) -> np.ndarray:
        """Images of chunk ids: chunk ``a * per_anchor + j`` goes to ``act(g, a) * per_anchor + j``.

        ``interleaved``: the anchor is the chunk id modulo ``N`` instead (chunk ``j * N + a``, unit
        ``j`` of block ``a``, as the hierarchical algorithms number an all-reduce's chunks), and
        goes to ``j * N + act(g, a)``.

        Examples
        --------
        >>> Translations((4,)).act_chunks(1, [0, 1, 7], 2).tolist()
        [2, 3, 1]
        >>> Translations((4,)).act_chunks(1, [0, 1, 7], 2, interleaved=True).tolist()
        [1, 2, 4]
        """
        c = np.asarray(chunks, dtype=np.int64)
        if interleaved:
            n = self.nodes
            return c - c % n + self.act(g, c % n)
        return self.act(g, c // per_anchor) * per_anchor + c % per_anchor


def moved_routes(routes, rows, elements, link_images: Callable):
    """Link routes of rows ``rows``, each moved by its element: ``link_images(elements, links)`` maps
    every link of a route (a kind's translations of its links)."""
    moved = routes.take(np.asarray(rows, np.int64))
    owner = moved.path_owner if moved.multipath else np.arange(len(moved), dtype=np.int64)
    per_entry = np.repeat(np.asarray(elements, np.int64)[owner], moved.path_hops)
    return moved.replace(route_links=link_images(per_entry, moved.route_links).astype(moved.route_links.dtype))


def maps_links_alike(links, group: "Translations", link_images: Callable) -> bool:
    """Whether every generator of ``group`` maps the link table ``links`` one to one onto links of the
    same bandwidth and latency (``link_images(g, ids)``: the kind's images, -1 where none)."""
    ids = np.arange(len(links.src), dtype=np.int64)
    bw, lat = np.asarray(links.bandwidth_bytes_per_s), np.asarray(links.latency_s)
    for g in group.generators():
        image = link_images(g, ids)
        if (image < 0).any() or len(np.unique(image)) != len(ids):
            return False
        if not (np.array_equal(bw[image], bw) and np.array_equal(lat[image], lat)):
            return False
    return True


def quotient_routes(routes, representatives: Callable, links: int | None = None):
    """Link routes with every link replaced by ``representatives(links)``, its orbit's representative:
    the quotient network's routes, on which one flow per orbit is simulated (docs/model.md).

    ``links``: the system's number of links.  Where the routes hold more entries than that, every
    link's representative is computed once and the entries look it up, so that the temporaries are
    one table, not several arrays the size of the routes.
    """
    entries = routes.route_links
    if links is not None and 0 < links <= len(entries):
        table = np.asarray(representatives(np.arange(links, dtype=np.int64))).astype(entries.dtype)
        return routes.replace(route_links=table[entries])
    return routes.replace(route_links=representatives(entries).astype(entries.dtype))


def _invariant(h: Holdings, group: Translations, per_anchor: int, interleaved: bool = False) -> int | None:
    """A generator that does not map ``h`` onto itself, or None (then no element does)."""
    if h.ptr is not None:
        return group.generators()[0] if group.generators() else None  # explicit sets: not checked, refused
    chunks = np.arange(h.chunks, dtype=np.int64)
    every = h.every_mask
    for g in group.generators():
        image = group.act_chunks(g, chunks, per_anchor, interleaved)
        if not np.array_equal(every[image], every):
            return g
        held = h.holder >= 0
        moved = np.where(held, group.act(g, np.maximum(h.holder, 0)), -1)
        if not np.array_equal(h.holder[image].astype(np.int64), moved):
            return g
    return None


EXPANDED_BYTES_PER_TRANSFER = 160
"""What :meth:`SymmetricSchedule.expand` holds a transfer at its peak, besides chunks and routes
(the columns, the permutation that orders them and its keys)."""


@dataclass(frozen=True, eq=False)
class SymmetricSchedule:
    """A schedule stored as its transfers into a domain and the translation group that moves them.

    Parameters
    ----------
    reps : Schedule
        The representatives: every transfer of the schedule that ends in the group's domain
        (node 0 for a regular group), on the full system and collective, with its step, chunks
        and route.
    group : Translations
        A group acting freely on the ``N`` nodes and, through anchors, on the chunks; the
        system's kind must map it onto the system
        (:meth:`collsim.kinds.base.KindModel.accepts_group`).
    interleaved : bool, optional
        Chunk ``j * N + a`` belongs to anchor ``a`` (unit ``j`` of block ``a``) instead of chunk
        ``a * m + j`` (:meth:`Translations.act_chunks`); default False.

    Raises
    ------
    InputError
        If a representative does not end in the domain, the group acts on another node count,
        the chunks do not divide evenly among the anchors, the collective's pre- or
        postcondition or its chunk sizes are not invariant under the group.

    Examples
    --------
    >>> from collsim import build_symmetric, verify
    >>> s = build_symmetric("ring", "paper", "allreduce", "1MiB", nodes=8)
    >>> len(s.reps), s.transfers, len(s.expand()), verify(s).transfers
    (14, 112, 112, 112)
    """

    reps: Schedule
    group: Translations
    interleaved: bool = False

    def __post_init__(self) -> None:
        s, g = self.reps, self.group
        n = s.system.nodes
        if g.nodes != n:
            raise InputError(f"a translation group of {g.nodes} nodes cannot act on {n} nodes")
        outside = g.element_of(s.dst) != 0 if len(s) else np.zeros(0, bool)
        if outside.any():
            t = int(np.flatnonzero(outside)[0])
            raise InputError(f"representative transfer {t} ends at node {int(s.dst[t])}: a symmetric schedule "
                             f"keeps the transfers into its domain (nodes {g.domain()[:4].tolist()}...)"
                             if not g.regular else f"representative transfer {t} ends at node {int(s.dst[t])}: "
                             "a symmetric schedule keeps the transfers into node 0")
        c = s.collective
        if c.chunks % n:
            raise InputError(f"{c.chunks} chunks do not divide among {n} nodes: no chunk action")
        m = c.chunks // n
        for what, h in (("precondition", c.pre), ("postcondition", c.post)):
            bad = _invariant(h, g, m, self.interleaved)
            if bad is not None:
                raise InputError(f"{c.name}'s {what} is not invariant under translation by {bad}")
        if c.prefix:
            raise InputError(f"{c.name} needs node v to combine nodes 0..v: it is not invariant under translations")
        sizes = c.chunk_bytes.reshape(m, n).T if self.interleaved else c.chunk_bytes.reshape(n, m)
        if (sizes != sizes[:1]).any():
            raise InputError(f"{c.name}'s chunk sizes differ between nodes ({int(sizes.min())} to "
                             f"{int(sizes.max())} bytes): its transfers are not all alike")

    # -- what the pipeline and the reports read -------------------------------------------------
    @property
    def system(self) -> System:
        """The system."""
        return self.reps.system

    @property
    def collective(self) -> Collective:
        """The collective."""
        return self.reps.collective

    @property
    def algorithm(self) -> str:
        """The algorithm that built it."""
        return self.reps.algorithm

    @property
    def params(self) -> Mapping[str, Any]:
        """The algorithm's parameters."""
        return self.reps.params

    @property
    def per_anchor(self) -> int:
        """Chunks per anchor node (``chunks / N``)."""
        return self.collective.chunks // self.system.nodes

    def act_chunks(self, g, chunks) -> np.ndarray:
        """Images of chunk ids under the element(s) ``g`` (:meth:`Translations.act_chunks`)."""
        return self.group.act_chunks(g, chunks, self.per_anchor, self.interleaved)

    @property
    def transfers(self) -> int:
        """Transfers of the expanded schedule: ``N`` per representative."""
        return len(self.reps) * self.group.order

    @property
    def num_steps(self) -> int:
        """Physical steps (every orbit lies in one step)."""
        return self.reps.num_steps

    @property
    def num_rounds(self) -> int:
        """Logical rounds."""
        return self.reps.num_rounds

    def nbytes(self) -> int:
        """Memory held: the representatives' columns."""
        return self.reps.nbytes()

    def expand(self) -> Schedule:
        """The ordinary schedule: every representative moved by every element, step by step.

        Within a step the transfers are element-major (all representatives moved by ``0``,
        then by ``1`` ...); the system's kind moves the routes
        (:meth:`~collsim.kinds.base.KindModel.translate_routes`).
        """
        from .limits import check_memory
        from .plugins import model_for
        s, g = self.reps, self.group
        n = g.order
        check_memory(n * (EXPANDED_BYTES_PER_TRANSFER * len(s) + 24 * len(s.chunk_idx) + 3 * s.routes.nbytes()),
                     f"expanding {s.algorithm}'s {s.collective.name} on {s.system.nodes} nodes ({self.transfers} "
                     f"transfers, {n * len(s.chunk_idx)} chunk deliveries)",
                     "verify and time it on its orbits (compare, run), or use fewer nodes")
        bounds = s.step_bounds
        per = np.diff(bounds)
        # row r of step k, moved by element e, goes to bounds[k]*n + e*per[k] + (r - bounds[k])
        rows = np.arange(len(s), dtype=np.int64)
        step_of = s.step.astype(np.int64)
        base = np.repeat(bounds[:-1], per)
        out_rows = np.repeat(rows, n)
        elem = np.tile(np.arange(n, dtype=np.int64), len(s))   # element positions, named below
        order = np.argsort(base[out_rows] * n + elem * per[step_of[out_rows]] + (out_rows - base[out_rows]),
                           kind="stable")
        out_rows, elem = out_rows[order], g.elements()[elem[order]]
        lengths = np.diff(s.chunk_ptr)[out_rows]
        ptr = np.zeros(len(out_rows) + 1, dtype=s.chunk_ptr.dtype)
        np.cumsum(lengths, out=ptr[1:])
        src_rows = np.repeat(out_rows, lengths)
        first = s.chunk_ptr[:-1][out_rows]
        within = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], lengths)
        idx = self.act_chunks(np.repeat(elem, lengths), s.chunk_idx[np.repeat(first, lengths) + within])
        del src_rows
        routes = model_for(s.system).translate_routes(s.system, g, s.routes, out_rows, elem)
        return Schedule(s.system, s.collective, s.algorithm, dict(s.params), s.step[out_rows],
                        s.round[out_rows], g.act(elem, s.src[out_rows]), g.act(elem, s.dst[out_rows]),
                        ptr, idx.astype(s.chunk_idx.dtype), s.reduce[out_rows], routes)
