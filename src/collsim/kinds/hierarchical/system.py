"""Hierarchical, multi-dimensional electrical systems: one topology per dimension.

A system of ``D`` dimensions of sizes ``k_0 ... k_{D-1}`` (listed inner to outer) has
``N = k_0 k_1 ... k_{D-1}`` end nodes; node ``i`` has coordinates
``(i mod k_0, (i // k_0) mod k_1, ...)``.  Every *group* of nodes that differ only in
coordinate ``d`` is joined by dimension ``d``'s topology, with that dimension's link bandwidth
and latency:

* ``switch``: a star through one switch vertex per group (an NVSwitch box, or one rail of a
  rail-optimised fabric), a full-duplex link from each node to it;
* ``ring``: a bidirectional ring (``k = 2``: one link);
* ``line``: a linear array;
* ``full``: a link between every two nodes of the group;
* another network kind (``fat-tree``, ``torus`` ...): that kind with the group's nodes, its own
  switches and routes on every group (:mod:`collsim.kinds.hierarchical.dimensions`).

So 8-GPU boxes on a rail-optimised fabric of 16 boxes are ``switch:8:300GB/s`` then
``switch:16:50GB/s``, and a 4 x 4 x 4 torus of rings is three ``ring:4`` dimensions.  Routes are
dimension-ordered (inner dimension first), each hop within one dimension's topology, so a
transfer between nodes that differ in one coordinate stays in that dimension.  An optical
(WDM) dimension is not supported yet (docs/hierarchical.md).

>>> h = Hierarchical.from_options(dims="switch:8:300GB/s,switch:16:50GB/s")
>>> h.nodes, h.switches, h.dimensions[1].bandwidth_bytes_per_s
(128, 24, 50000000000.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from ..network.network import NUMBERED_ENTRIES, LinkTable, Network
from ...core.system import register_system_kind
from ...core.units import parse_bandwidth, parse_time
from .dimensions import DEFAULT_DIMS, TOPOLOGIES, Dimension, default_dims, group_system, read_dims


@register_system_kind
@dataclass(frozen=True)
class Hierarchical(Network):
    """A multi-dimensional system: dimension ``d``'s topology joins every group differing only in coordinate ``d``.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`; the link bandwidth and latency are the
        defaults of dimensions that give none.  ``nodes`` must be the product of the sizes.
    dimensions : tuple of Dimension
        Inner to outer; on input also text (``"switch:8,ring:4"``: per dimension its topology, size,
        then optionally bandwidth and latency) or tables (:func:`read_dims`).

    Examples
    --------
    >>> h = Hierarchical(nodes=8, dimensions="ring:4,switch:2:1GB/s")
    >>> h.coords(np.array([5])).tolist(), h.vertices, len(h.links)
    ([[1, 1]], 12, 32)
    >>> ptr, links = h.route(np.array([0]), np.array([7]))   # ring hop(s), then through a switch
    >>> [h.link_name(int(x)) for x in links]
    ['n0->n3', 'n3->s3', 's3->n7']
    """

    topology: ClassVar[str] = "hierarchical"
    dimensions: tuple[Dimension, ...] = DEFAULT_DIMS

    def __post_init__(self) -> None:
        super().__post_init__()
        dims = read_dims(self.dimensions, self.link_bandwidth_bytes_per_s, self.link_latency_s)
        object.__setattr__(self, "dimensions", dims)
        for d in dims:   # a network kind that cannot have the dimension's size is refused now, not when routed
            d.switches_per_group()
        if math.prod(d.size for d in dims) != self.nodes:
            raise InputError(f"hierarchical: nodes={self.nodes} is not the product of the dimension sizes "
                             f"{'x'.join(str(d.size) for d in dims)}")

    @classmethod
    def from_options(cls, nodes: int | None = None, dimensions: Any = None, dims: Any = None,
                     **opts: Any) -> "Hierarchical":
        """Build for the CLI and TOML: ``dimensions`` if given (``nodes`` must then match), else boxes of up to 8.

        Parameters
        ----------
        nodes : int, optional
            Nodes; without ``dims``, boxes of the largest divisor in 2..8 at 300 GB/s on a 50 GB/s
            switch (the default, without either, is 16 boxes of 8).
        dimensions : str, sequence, optional
            The dimensions (:func:`read_dims`).
        dims : str or sequence, optional
            The same, as text or tables (``-S dims=switch:8,ring:4``); give one of the two.
        **opts
            Other fields (``name``, ``link_bandwidth_bytes_per_s`` ...); None values are ignored.

        Returns
        -------
        Hierarchical
            The system.

        Raises
        ------
        InputError
            ``nodes`` disagreeing with ``dims``, or bad dimensions.
        """
        opts = {k: v for k, v in opts.items() if v is not None}
        if dims is not None and dimensions is not None:
            raise InputError("hierarchical: give dimensions or dims, not both")
        dims = dimensions if dims is None else dims
        if dims is None:
            dims = default_dims(int(nodes)) if nodes is not None else DEFAULT_DIMS
        probe = read_dims(dims, float(parse_bandwidth(opts.get("link_bandwidth_bytes_per_s", 12.5e9))),
                          float(parse_time(opts.get("link_latency_s", 1e-6))))
        total = math.prod(d.size for d in probe)
        if nodes is not None and int(nodes) != total:
            raise InputError(f"hierarchical: nodes={nodes} does not match dims "
                             f"{'x'.join(str(d.size) for d in probe)} (product {total})")
        return cls(nodes=total, dimensions=probe, **opts)

    def describe(self) -> dict[str, Any]:
        """As :meth:`System.describe`, each dimension as a table (JSON-able, read back by the constructor)."""
        out = super().describe()
        out["dimensions"] = [{"topology": d.topology, "size": d.size, "bandwidth_bytes_per_s": d.bandwidth_bytes_per_s,
                        "latency_s": d.latency_s} for d in self.dimensions]
        return out

    # --- coordinates and groups -----------------------------------------------------------
    @cached_property
    def strides(self) -> np.ndarray:
        """Node-id stride of each coordinate (``prod`` of the inner sizes)."""
        return np.concatenate([[1], np.cumprod([d.size for d in self.dimensions])[:-1]]).astype(np.int64)

    sizes = property(lambda self: tuple(d.size for d in self.dimensions), doc="Group size of each dimension.")

    def coords(self, nodes: np.ndarray) -> np.ndarray:
        """Coordinates ``(len(nodes), D)`` of end nodes."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return (nodes[:, None] // self.strides[None, :]) % np.array(self.sizes)[None, :]

    def coord(self, d: int, nodes: np.ndarray) -> np.ndarray:
        """Coordinate ``d`` of end nodes (one column of :meth:`coords`, without the others)."""
        return (np.asarray(nodes, dtype=np.int64) // int(self.strides[d])) % self.sizes[d]

    def group_of(self, d: int, nodes: np.ndarray) -> np.ndarray:
        """Index of each node's group in dimension ``d`` (0 .. N/k_d - 1)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        s, k = int(self.strides[d]), self.sizes[d]
        return nodes % s + (nodes // (s * k)) * s

    def with_coord(self, d: int, nodes: np.ndarray, c: np.ndarray) -> np.ndarray:
        """The nodes with coordinate ``d`` replaced by ``c``."""
        nodes = np.asarray(nodes, dtype=np.int64)
        s, k = int(self.strides[d]), self.sizes[d]
        return nodes + (np.asarray(c, dtype=np.int64) - (nodes // s) % k) * s

    def translations(self) -> np.ndarray | None:
        """``(N, V)`` vertex permutations keeping the links, row ``g`` taking node 0 to node ``g``: the
        kind's translation group in closed form (:func:`collsim.kinds.hierarchical.symmetry.translation_group`,
        switches moved with their groups) where it acts regularly, as a table; else the network's search.

        Examples
        --------
        >>> h = Hierarchical(nodes=32, dimensions="switch:2,fat-tree:16")   # 16 boxes of 2 on a full fat tree, k = 4
        >>> t = h.translations()
        >>> t.shape, t[:, 0].tolist() == list(range(32))
        ((32, 88), True)
        """
        from .symmetry import translation_group
        group = translation_group(self)
        if group is None or not group.regular or self.nodes * self.vertices > NUMBERED_ENTRIES:
            return super().translations()
        return self._kind_table

    @cached_property
    def _kind_table(self) -> np.ndarray:
        from .symmetry import translation_group, vertex_images
        group = translation_group(self)
        return vertex_images(self, group, np.arange(self.nodes)[:, None], np.arange(self.vertices)[None, :])

    @cached_property
    def _switch_base(self) -> tuple[int, ...]:
        """First switch vertex of each dimension (-1 for dimensions without switches); group g's are next."""
        out, nxt = [], self.nodes
        for d in self.dimensions:
            per = d.switches_per_group()
            out.append(nxt if per else -1)
            nxt += self.nodes // d.size * per
        return tuple(out)

    @property
    def switches(self) -> int:
        """Every group's switches in every dimension (one per ``switch`` group)."""
        return sum(self.nodes // d.size * d.switches_per_group() for d in self.dimensions)

    def _members(self, d: int, groups: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Vertices of group-local vertex ids: members (``local < k``) or the group's switches."""
        s, k = int(self.strides[d]), self.sizes[d]
        groups, local = np.asarray(groups, np.int64), np.asarray(local, np.int64)
        node = groups % s + (groups // s) * s * k + np.minimum(local, k - 1) * s
        per = self.dimensions[d].switches_per_group()
        return np.where(local < k, node, self._switch_base[d] + groups * per + (local - k))

    def link_count(self) -> int:
        """Sum over dimensions of groups x links per group."""
        return sum(self.nodes // d.size * d.links_per_group() for d in self.dimensions)

    def _dim_edges(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        dim, n = self.dimensions[d], self.nodes
        i = np.arange(n, dtype=np.int64)
        c = self.coords(i)[:, d]
        k = dim.size
        if dim.topology not in TOPOLOGIES:   # a network kind's graph on every group
            inner = group_system(dim).links
            g = np.repeat(np.arange(n // k), len(inner))
            return (self._members(d, g, np.tile(inner.src, n // k)),
                    self._members(d, g, np.tile(inner.dst, n // k)))
        if dim.topology == "switch":
            sw = self._switch_base[d] + self.group_of(d, i)
            return np.concatenate([i, sw]), np.concatenate([sw, i])
        if dim.topology == "full":
            u = np.repeat(i, k - 1)
            other = (np.repeat(c, k - 1) + np.tile(np.arange(1, k), n)) % k
            return u, self.with_coord(d, u, other)
        if dim.topology == "ring" and k > 2:
            return np.concatenate([i, i]), np.concatenate([self.with_coord(d, i, (c + 1) % k),
                                                           self.with_coord(d, i, (c - 1) % k)])
        up = i[c < k - 1]
        down = i[c > 0]
        return (np.concatenate([up, down]),
                np.concatenate([self.with_coord(d, up, self.coords(up)[:, d] + 1),
                                self.with_coord(d, down, self.coords(down)[:, d] - 1)]))

    def edges(self):
        """Every dimension's links, inner dimension first."""
        parts = [self._dim_edges(d) for d in range(len(self.dimensions))]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    @cached_property
    def link_dimension(self) -> np.ndarray:
        """The dimension of every directed link (in :attr:`links` order)."""
        counts = [len(self._dim_edges(d)[0]) for d in range(len(self.dimensions))]
        return np.repeat(np.arange(len(self.dimensions)), counts)

    @cached_property
    def links(self) -> LinkTable:
        """The directed link table, each link with its dimension's bandwidth and latency."""
        self.check_tables()  # refused before the edges are made, as every network's
        u, v = self.edges()
        bw, lat = [], []
        for d in self.dimensions:   # a network kind's links keep their own rates (one per group)
            inner = group_system(d).links if d.topology not in TOPOLOGIES else None
            count = self.nodes // d.size * d.links_per_group()
            bw.append(np.tile(inner.bandwidth_bytes_per_s, count // len(inner)) if inner is not None
                      else np.full(count, d.bandwidth_bytes_per_s))
            lat.append(np.tile(inner.latency_s, count // len(inner)) if inner is not None
                       else np.full(count, d.latency_s))
        return LinkTable(u, v, np.concatenate(bw), np.concatenate(lat), self.vertices)

    def next_hop(self, cur, src, dst):
        """Dimension-ordered: in the innermost differing coordinate, one hop of that dimension's topology."""
        cur = np.asarray(cur, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        out = np.empty_like(cur)
        src = np.asarray(src, dtype=np.int64)
        at_switch = cur >= self.nodes
        for d, base in enumerate(self._switch_base):   # a switch of dimension d: its topology's next hop
            per = self.dimensions[d].switches_per_group()
            mine = np.flatnonzero(at_switch & (cur >= base) & (cur < base + self.nodes // self.sizes[d] * per))
            if base < 0 or not mine.size:
                continue
            g, j = np.divmod(cur[mine] - base, per)
            s, k = int(self.strides[d]), self.sizes[d]
            if self.dimensions[d].topology == "switch":   # down to the node with dst's coordinate d
                out[mine] = self._members(d, g, (dst[mine] // s) % k)
            else:
                local = group_system(self.dimensions[d]).next_hop(k + j, (src[mine] // s) % k, (dst[mine] // s) % k)
                out[mine] = self._members(d, g, local)
        node = ~at_switch
        if node.any():
            a, b = cur[node], dst[node]
            ca, cb = self.coords(a), self.coords(b)
            diff = ca != cb
            d_first = np.argmax(diff, axis=1)
            res = np.empty_like(a)
            for d, dim in enumerate(self.dimensions):
                sel = d_first == d
                if not sel.any():
                    continue
                x, y, k = ca[sel, d], cb[sel, d], dim.size
                if dim.topology not in TOPOLOGIES:   # the kind's own next hop, in group-local ids
                    local = group_system(dim).next_hop(x, self.coords(src[node][sel])[:, d], y)
                    res[sel] = self._members(d, self.group_of(d, a[sel]), local)
                    continue
                if dim.topology == "switch":
                    res[sel] = self._switch_base[d] + self.group_of(d, a[sel])
                    continue
                if dim.topology == "full":
                    step = y
                elif dim.topology == "ring" and k > 2:
                    fwd = (y - x) % k
                    step = np.where(fwd <= k - fwd, (x + 1) % k, (x - 1) % k)
                else:
                    step = x + np.sign(y - x)
                res[sel] = self.with_coord(d, a[sel], step)
            out[node] = res
        return out

    GROUP_ROUTE_BYTES: ClassVar[int] = 48
    """Peak bytes per link of a route while a dimension's group is routed pair by pair (the network
    kind's ``BYTES_PER_ROUTE_ENTRY``)."""

    def group_exchange(self, d: int) -> tuple[int, float]:
        """The most pair routes sharing one directed link, and the largest route latency, when every
        member of one group of dimension ``d`` sends to every other (the group of node 0; all alike).

        Where the dimension's network kind declares translations that move its routes
        (:meth:`~collsim.kinds.network.network.Network.translation_radices`: a full fat tree), only
        member 0's ``k - 1`` routes are made: the group acts freely on the kind's links, so a link
        carries as many pair routes as member 0's routes have entries in its orbit (the orbit keyed
        by its image under the element taking its :meth:`link_anchors` anchor to member 0).  Otherwise
        every pair is routed, refused with the estimate where that would not fit.

        Examples
        --------
        >>> h = Hierarchical(nodes=64, dimensions="switch:4,fat-tree:16")
        >>> h.group_exchange(0)[0], h.group_exchange(1)[0]    # a member's uplink carries its k - 1 routes
        (3, 15)
        """
        from ...core.limits import check_memory
        from ...core.symmetry import Translations
        dim, k = self.dimensions[d], self.sizes[d]
        members = self.with_coord(d, np.zeros(k, np.int64), np.arange(k))
        kind = group_system(dim) if dim.topology not in TOPOLOGIES else None
        radices = kind.translation_radices() if kind is not None else None
        if radices is None:
            ptr, _ = self.route(np.full(k - 1, members[0]), members[1:])
            check_memory(k * int(ptr[-1]) * self.GROUP_ROUTE_BYTES,
                         f"routing every pair of a {dim.topology} group of {k} members (dimension {d}: "
                         f"{k * int(ptr[-1]):.3g} links on the routes)", "use a smaller dimension or ring stages (md-ring)")
            src, dst = (a.reshape(-1) for a in np.meshgrid(members, members, indexing="ij"))
            ptr, links = self.route(src[src != dst], dst[src != dst])
            load = int(np.bincount(links).max()) if len(links) else 1
        else:
            ptr, links = self.route(np.full(k - 1, members[0]), members[1:])
            lt = self.links
            base, per = self._switch_base[d], dim.switches_per_group()

            def local(v):   # a vertex of group 0 of dimension d as the kind numbers it
                return np.where(v < self.nodes, self.coord(d, np.minimum(v, self.nodes - 1)), k + (v - base) % per)

            u, w = local(lt.src[links].astype(np.int64)), local(lt.dst[links].astype(np.int64))
            back = Translations(tuple(radices)).inverse(kind.link_anchors(u, w))
            back = np.atleast_1d(back)
            key = kind.translate(back, u) * kind.vertices + kind.translate(back, w)
            load = int(np.unique(key, return_counts=True)[1].max()) if len(key) else 1
        lat = np.concatenate([[0.0], np.cumsum(self.links.latency_s[links])])
        return load, float((lat[ptr[1:]] - lat[ptr[:-1]]).max(initial=0.0))

    def cut_masks(self) -> list[np.ndarray]:
        """Vertex masks ``(K, V)`` of the per-dimension cuts (side A True), for :mod:`collsim.kinds.network.cuts`.

        For every proper non-empty set of dimensions, one *block*: the nodes sharing the
        other coordinates with node 0, with the switches of the block's own groups; and for
        every ``ring`` or ``line`` dimension the slabs ``coordinate d < p`` (with the switches of
        their groups).  The derivation is docs/derivations/hierarchical-bound.md.

        Returns
        -------
        list of numpy.ndarray
            Boolean ``(K, vertices)`` arrays: the network's (each switch with its end nodes,
            :meth:`Network.cut_masks <collsim.kinds.network.network.Network.cut_masks>`), then these.

        Examples
        --------
        >>> [m.shape for m in Hierarchical(nodes=8, dimensions="switch:4,switch:2").cut_masks()][-1]
        (2, 14)
        """
        n, sizes = self.nodes, self.sizes
        coords = self.coords(np.arange(n))
        node_masks = []
        for bits in range(1, (1 << len(sizes)) - 1):     # blocks: dims in the bit set free, the rest 0
            outside = [d for d in range(len(sizes)) if not bits >> d & 1]
            node_masks.append((coords[:, outside] == 0).all(axis=1))
        for d, dim in enumerate(self.dimensions):
            if dim.topology in ("ring", "line"):
                node_masks.extend(coords[:, d] < p for p in range(1, dim.size))
        if not node_masks:
            return super().cut_masks()
        nodes = np.array(node_masks)
        out = np.zeros((len(nodes), self.vertices), bool)
        out[:, :n] = nodes
        for d, base in enumerate(self._switch_base):      # a switch joins side A when its whole group is there
            if base >= 0:
                g = self.group_of(d, np.arange(n))
                whole = np.ones((len(nodes), n // sizes[d]), bool)
                np.logical_and.at(whole.T, g, nodes.T)
                per = self.dimensions[d].switches_per_group()
                out[:, base:base + n // sizes[d] * per] = np.repeat(whole, per, axis=1)
        return [*super().cut_masks(), out]

    def summary(self) -> dict[str, Any]:
        """Base counts plus the dimensions in their compact form."""
        return {**super().summary(), "dimensions": ",".join(d.text() for d in self.dimensions)}
