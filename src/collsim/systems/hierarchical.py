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
* ``full``: a link between every two nodes of the group.

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
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Mapping

import numpy as np

from ..core.errors import InputError
from ..core.network import LinkTable, Network
from ..core.system import register_system_kind
from ..core.units import format_bandwidth, parse_bandwidth, parse_time
from ..core.validate import is_integer

TOPOLOGIES = ("switch", "ring", "line", "full")
"""The topologies a dimension may have."""

DEFAULT_DIMS = ("switch:8:300GB/s", "switch:16:50GB/s")
"""The dimensions of ``--system hierarchical`` alone: 16 boxes of 8 (issue 23's system)."""


@dataclass(frozen=True)
class Dimension:
    """One dimension of a :class:`Hierarchical` system.

    Parameters
    ----------
    topology : str
        ``"switch"``, ``"ring"``, ``"line"`` or ``"full"``.
    size : int
        Nodes per group (>= 2).
    bandwidth_bytes_per_s : float
        Rate of each of the dimension's directed links.
    latency_s : float
        Latency of each of its links.

    Examples
    --------
    >>> Dimension.read("ring:4:100Gb/s:500ns", 1e9, 1e-6)
    Dimension(topology='ring', size=4, bandwidth_bytes_per_s=12500000000.0, latency_s=5e-07)
    >>> Dimension.read({"topology": "switch", "size": 8}, 1e9, 1e-6).text()
    'switch:8:1GB/s:1us'
    """

    topology: str
    size: int
    bandwidth_bytes_per_s: float
    latency_s: float

    @classmethod
    def read(cls, spec: Any, bandwidth_bytes_per_s: float, latency_s: float) -> "Dimension":
        """A dimension from ``topology:size[:bandwidth[:latency]]``, a mapping or a Dimension.

        Parameters
        ----------
        spec : str, Mapping or Dimension
            The text form, or a table with ``topology``, ``size`` and optionally ``bandwidth``
            (``bandwidth_bytes_per_s``) and ``latency`` (``latency_s``), read by :mod:`collsim.core.units`.
        bandwidth_bytes_per_s, latency_s : float
            Defaults (the system's link bandwidth and latency).

        Returns
        -------
        Dimension
            The dimension.

        Raises
        ------
        InputError
            An unknown topology, a size below 2, or a bad bandwidth or latency.
        """
        if isinstance(spec, Dimension):
            return spec
        if isinstance(spec, Mapping):
            bad = sorted(set(spec) - {"topology", "size", "bandwidth", "latency", "bandwidth_bytes_per_s",
                                      "latency_s"})
            if bad:
                raise InputError(f"hierarchical dimension: no key {', '.join(bad)} (topology, size, bandwidth, "
                                 "latency)")
            topo, size = spec.get("topology", "switch"), spec.get("size")
            bw = spec.get("bandwidth", spec.get("bandwidth_bytes_per_s"))
            lat = spec.get("latency", spec.get("latency_s"))
        elif isinstance(spec, str) or is_integer(spec):
            parts = [p.strip() for p in str(spec).split(":")]
            parts = ["switch", *parts] if len(parts) == 1 else parts
            if len(parts) > 4:
                raise InputError(f"hierarchical dimension {spec!r}: use topology:size[:bandwidth[:latency]]")
            topo, size, bw, lat = (parts + [None, None])[:4]
        else:
            raise InputError(f"hierarchical dimension: expected topology:size[:bandwidth[:latency]] or a table, "
                             f"got {spec!r}")
        topo = str(topo).strip().lower()
        if topo not in TOPOLOGIES:
            raise InputError(f"hierarchical dimension: topology must be one of {', '.join(TOPOLOGIES)}, "
                             f"got {topo!r}")
        if isinstance(size, str) and size.isdigit():
            size = int(size)
        if not is_integer(size) or int(size) < 2:
            raise InputError(f"hierarchical dimension: size must be an integer >= 2, got {size!r}")
        bw = float(bandwidth_bytes_per_s) if bw in (None, "") else parse_bandwidth(bw)
        lat = float(latency_s) if lat in (None, "") else parse_time(lat)
        if not bw > 0 or not lat >= 0:
            raise InputError(f"hierarchical dimension: bandwidth must be > 0 and latency >= 0, got {bw}, {lat}")
        return cls(topo, int(size), float(bw), float(lat))

    def text(self) -> str:
        """The compact form ``topology:size:bandwidth:latency`` (what ``-S dims=`` reads)."""
        bw = format_bandwidth(self.bandwidth_bytes_per_s)
        return f"{self.topology}:{self.size}:{bw}:{self.latency_s * 1e6:g}us".replace(" ", "")

    __str__ = text

    def links_per_group(self) -> int:
        """Directed links of one group."""
        k = self.size
        return {"switch": 2 * k, "ring": 2 if k == 2 else 2 * k, "line": 2 * (k - 1), "full": k * (k - 1)}[
            self.topology]


def read_dims(dims: Any, bandwidth_bytes_per_s: float, latency_s: float) -> tuple[Dimension, ...]:
    """Dimensions from text (``"switch:8:300GB/s,switch:16:50GB/s"``, ``"8x16"``), a list or tables.

    Parameters
    ----------
    dims : str, sequence or Mapping
        Comma-separated dimensions (``8x16``: switches of 8 and 16 at the default bandwidth), or a
        sequence of text forms, tables or :class:`Dimension`.
    bandwidth_bytes_per_s, latency_s : float
        Defaults for dimensions that give none.

    Returns
    -------
    tuple of Dimension
        Inner to outer.

    Raises
    ------
    InputError
        No dimension, or a bad one.

    Examples
    --------
    >>> [d.size for d in read_dims("8x16", 1e9, 1e-6)]
    [8, 16]
    """
    if isinstance(dims, str):
        items = [p for p in re.split(r"[,;\s]+", dims.strip()) if p]
        if len(items) == 1 and ":" not in items[0] and re.fullmatch(r"\d+([x×]\d+)+", items[0]):
            items = re.split(r"[x×]", items[0])
        dims = items
    elif isinstance(dims, Mapping) or isinstance(dims, Dimension) or is_integer(dims):
        dims = [dims]
    if not isinstance(dims, (list, tuple)) or not dims:
        raise InputError(f"hierarchical: dims must list at least one dimension, got {dims!r}")
    return tuple(Dimension.read(d, bandwidth_bytes_per_s, latency_s) for d in dims)


def _default_dims(nodes: int) -> tuple[str, ...]:
    """Boxes of the largest divisor of ``nodes`` in 2..8 that leaves >= 2 boxes (else one switch)."""
    box = next((b for b in range(8, 1, -1) if nodes % b == 0 and nodes // b >= 2), None)
    if box is None:
        return (f"switch:{nodes}:300GB/s",)
    return (f"switch:{box}:300GB/s", f"switch:{nodes // box}:50GB/s")


@register_system_kind
@dataclass(frozen=True)
class Hierarchical(Network):
    """A multi-dimensional system: dimension ``d``'s topology joins every group differing only in coordinate ``d``.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.core.network.Network`; the link bandwidth and latency are the
        defaults of dimensions that give none.  ``nodes`` must be the product of the sizes.
    dimensions : tuple of Dimension
        Inner to outer; on input also text (``"switch:8:300GB/s,switch:16:50GB/s"``) or tables
        (:func:`read_dims`).

    Examples
    --------
    >>> h = Hierarchical(nodes=8, dimensions="ring:4,switch:2:1GB/s")
    >>> h.coords(np.array([5])).tolist(), h.vertices, len(h.links)
    ([[1, 1]], 12, 32)
    >>> ptr, links = h.route(np.array([0]), np.array([7]))   # ring hop(s), then through a switch
    >>> [h.link_name(int(x)) for x in links]
    ['n0->n3', 'n3->s3', 's3->n7']
    """

    kind: ClassVar[str] = "hierarchical"
    dimensions: tuple[Dimension, ...] = DEFAULT_DIMS

    def __post_init__(self) -> None:
        super().__post_init__()
        dims = read_dims(self.dimensions, self.link_bandwidth_bytes_per_s, self.link_latency_s)
        object.__setattr__(self, "dimensions", dims)
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
        dims : str, sequence, optional
            The same (``-S dims=switch:8:300GB/s,switch:16:50GB/s``); give one of the two.
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
            dims = _default_dims(int(nodes)) if nodes is not None else DEFAULT_DIMS
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

    @cached_property
    def _switch_base(self) -> tuple[int, ...]:
        """First switch vertex of each dimension (-1 for dimensions without switches)."""
        out, nxt = [], self.nodes
        for d in self.dimensions:
            out.append(nxt if d.topology == "switch" else -1)
            nxt += self.nodes // d.size if d.topology == "switch" else 0
        return tuple(out)

    @property
    def switches(self) -> int:
        """One switch per group of every ``switch`` dimension."""
        return sum(self.nodes // d.size for d in self.dimensions if d.topology == "switch")

    def link_count(self) -> int:
        """Sum over dimensions of groups x links per group."""
        return sum(self.nodes // d.size * d.links_per_group() for d in self.dimensions)

    def _dim_edges(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        dim, n = self.dimensions[d], self.nodes
        i = np.arange(n, dtype=np.int64)
        c = self.coords(i)[:, d]
        k = dim.size
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
        u, v = self.edges()
        dim = self.link_dimension
        bw = np.array([d.bandwidth_bytes_per_s for d in self.dimensions])[dim]
        lat = np.array([d.latency_s for d in self.dimensions])[dim]
        return LinkTable(u, v, bw, lat, self.vertices)

    def next_hop(self, cur, src, dst):
        """Dimension-ordered: in the innermost differing coordinate, one hop of that dimension's topology."""
        cur = np.asarray(cur, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        out = np.empty_like(cur)
        at_switch = cur >= self.nodes
        if at_switch.any():   # a switch of dimension d: down to the node with dst's coordinate d
            sw = cur[at_switch]
            for d, base in enumerate(self._switch_base):
                if base < 0:
                    continue
                mine = (sw >= base) & (sw < base + self.nodes // self.sizes[d])
                if mine.any():
                    g = sw[mine] - base
                    s, k = int(self.strides[d]), self.sizes[d]
                    member = g % s + (g // s) * s * k       # the group's node with coordinate 0
                    c = (dst[at_switch][mine] // s) % k
                    tmp = out[at_switch]
                    tmp[mine] = member + c * s
                    out[at_switch] = tmp
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

    def cut_masks(self) -> list[np.ndarray]:
        """Vertex masks ``(K, V)`` of the per-dimension cuts (side A True), for :mod:`collsim.cost.cuts`.

        For every proper non-empty set of dimensions, one *block*: the nodes sharing the
        other coordinates with node 0, with the switches of the block's own groups; and for
        every ``ring`` or ``line`` dimension the slabs ``coordinate d < p`` (with the switches of
        their groups).  The derivation is docs/derivations/hierarchical-bound.md.

        Returns
        -------
        list of numpy.ndarray
            Boolean ``(K, vertices)`` arrays: the network's (each switch with its end nodes,
            :meth:`Network.cut_masks <collsim.core.network.Network.cut_masks>`), then these.

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
                out[:, base:base + n // sizes[d]] = whole
        return [*super().cut_masks(), out]

    def summary(self) -> dict[str, Any]:
        """Base counts plus the dimensions in their compact form."""
        return {**super().summary(), "dimensions": ",".join(d.text() for d in self.dimensions)}
