"""Electrical (packet-switched) networks: a graph of directed, full-duplex links.

Vertices ``0..nodes-1`` are end nodes (ranks); ``nodes..nodes+switches-1`` are
switches.  Every topology supplies its edge list and a deterministic,
vectorised *next-hop* function; :meth:`Network.route` applies it to all
transfers at once, one hop per iteration, so routing N^2 pairs costs
``diameter`` numpy passes rather than N^2 Python calls.  Routes are CSR arrays
of link ids.  Each link has a bandwidth and a latency; ``startup_s`` is an
optional per-message start-up cost (the textbook's t_s when it is not the
per-hop latency).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.automorphisms import MAX_VERTICES, automorphism_group, numbered_translations, regular_translations
from .ecmp import ecmp_next_links, ecmp_routes, hop_tables, min_hop_links
from ...core.errors import InputError, RouteError, UnsupportedError
from ...core.limits import MemoryLimitError, check_memory
from ...core.link_table import LinkTable
from .routes import LinkRoutes
from ...core.system import System
from ...core.validate import physical


BYTES_PER_ROUTE_ENTRY = 48
"""Peak bytes per (transfer, link) entry while routes are computed and stored (the hop-by-hop
walk keeps row, hop and link per entry, then sorts them; arithmetic routes need less)."""

BYTES_PER_LINK = 112
"""Peak bytes per directed link while the link table is built: its four columns, the sort
keys of :meth:`LinkTable.index` and the topology's temporary edge arrays."""


NUMBERED_ENTRIES = 1 << 26
"""Largest ``end nodes x vertices`` table of translations kept (8 bytes an entry: 512 MiB)."""


@dataclass(frozen=True)
class Network(System):
    """Base class of electrical networks.

    Topologies (:mod:`collsim.systems`) subclass it and supply :meth:`edges` and
    :meth:`next_hop`.

    Parameters
    ----------
    nodes, name
        As for :class:`~collsim.core.system.System`.
    link_bandwidth_bytes_per_s : float
        Rate of every link (100 Gb/s = 12.5e9 bytes/s by default).
    link_latency_s : float
        Latency of every link (1 µs by default).
    startup_s : float or None
        Per-message start-up cost; None means the textbook's t_s is the per-hop
        link latency and no extra start-up is charged.

    Examples
    --------
    >>> from collsim.kinds.network.electrical import Ring
    >>> ring = Ring(nodes=4, link_bandwidth_bytes_per_s=1e9)
    >>> ring.vertices, ring.link_bandwidth_bytes_per_s, ring.link_latency_s, ring.startup_s
    (4, 1000000000.0, 1e-06, None)
    """

    topology: ClassVar[str] = "network"
    Routes: ClassVar[type] = LinkRoutes
    ROUTINGS: ClassVar[tuple[str, ...]] = ()
    """Values of the kind's ``routing`` field, default first (empty: the kind has one routing)."""
    ROUTING_ALIASES: ClassVar[dict[str, str]] = {}
    """Other accepted spellings of ``routing`` values (``"single-path"`` for a fat tree's D-mod-k)."""
    route_hints: ClassVar[bool] = False
    """Whether algorithms choose routes per transfer (``via``) on this kind."""
    cuts_are_exact: ClassVar[bool] = False
    """Whether :meth:`cut_masks` and the single-node cuts attain every cut's maximum (rings, lines and
    stars: docs/derivations/lower-bounds.md), so :func:`collsim.kinds.network.cuts.cut_bound_s` skips its exact
    searches."""
    link_bandwidth_bytes_per_s: float = 12.5e9
    link_latency_s: float = 1e-6
    startup_s: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, positive in (("link_bandwidth_bytes_per_s", True), ("link_latency_s", False),
                               ("startup_s", False)):
            value = getattr(self, name)
            if value is None and name == "startup_s":
                continue
            checked = physical(name, value, rate=positive)
            if type(value) not in (int, float):      # numpy scalars: store a plain float
                object.__setattr__(self, name, checked)
        if self.ROUTINGS:
            value = getattr(self, "routing", None)
            value = self.ROUTING_ALIASES.get(value, value) if isinstance(value, str) else value
            if value not in self.ROUTINGS:
                known = ", ".join(f'"{r}"' for r in (*self.ROUTINGS, *self.ROUTING_ALIASES))
                raise InputError(f"{self.topology}: routing must be one of {known}, got {value!r}")
            object.__setattr__(self, "routing", value)

    def cut_masks(self) -> list[np.ndarray]:
        """The topology's closed-form cut families for :func:`collsim.kinds.network.cuts.cut_bound_s`.

        Returns
        -------
        list of numpy.ndarray
            Vertex masks ``(K, V)``, side A True.  Here: each switch with the end nodes linked
            to it (none without switches); topologies add their own (ring arcs, grid slabs,
            sub-cubes, fat-tree pods).

        Examples
        --------
        >>> from collsim.kinds.network.fat_tree import FatTree
        >>> [m.shape for m in Network.cut_masks(FatTree(nodes=16, k=4, levels=3))]   # 8 edge switches
        [(1, 36), (1, 36), (1, 36), (1, 36), (1, 36), (1, 36), (1, 36), (1, 36)]
        """
        n, v, lt = self.nodes, self.vertices, self.links
        if not self.switches:
            return []
        host = lt.src < n
        sw = np.full(n, -1)
        sw[lt.src[host]] = np.where(lt.dst[host] >= n, lt.dst[host], -1)
        masks = []
        for s in np.unique(sw[sw >= 0]):
            mk = np.zeros(v, bool)
            mk[s] = True
            mk[:n] = sw == s
            masks.append(mk[None, :])
        return masks

    # --- to be provided by each topology -------------------------------------------
    @property
    def switches(self) -> int:
        """Number of switch vertices."""
        return 0

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Directed edges ``(u, v)`` of the topology (both directions listed)."""
        raise NotImplementedError

    def next_hop(self, cur: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Deterministic next vertex from ``cur`` towards ``dst`` for a flow from ``src``."""
        raise NotImplementedError

    def distance(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
        """Hops of the routes from ``src`` to ``dst`` from a closed form, or None if unknown.

        Parameters
        ----------
        src, dst : numpy.ndarray
            End nodes.

        Returns
        -------
        numpy.ndarray or None
            Hops per pair; topologies with a closed form override this (the base class
            knows none), and realisation checks the routes' memory against it.
        """
        return None

    def link_count(self) -> int | None:
        """Number of directed links, from a closed form (None: not known without building them).

        Returns
        -------
        int or None
            What ``len(self.links)`` will be; the link table's memory is checked against
            it before anything is allocated.
        """
        return None

    def configurations(self) -> tuple[tuple[str, np.ndarray], ...] | None:
        """``(name, link ids)`` of each set of links the network can hold at once, for synthesis to
        plan on, when it cannot hold them all together (a circuit switch); None: every link at once."""
        return None

    def translations(self) -> np.ndarray | None:
        """``(N, V)`` vertex permutations keeping the links, row ``g`` taking node 0 to end node ``g``
        (a torus's shifts), for synthesis to plan one node's part and move it; None: none found.

        Topologies with a closed form override this; the base class tries the translations of the
        end nodes' own numbering (:func:`collsim.core.automorphisms.numbered_translations`), then
        searches the link table for such a group once
        (:func:`collsim.core.automorphisms.regular_translations`, up to
        :data:`~collsim.core.automorphisms.MAX_VERTICES` vertices).

        Examples
        --------
        >>> from collsim.kinds.network.electrical import Ring
        >>> Ring(nodes=4).translations()[1].tolist()          # one place round the ring
        [1, 2, 3, 0]
        """
        return self._found_translations

    def symmetries(self) -> np.ndarray | None:
        """``(G, V)`` a group of link-keeping vertex permutations, row 0 the identity: the
        :meth:`translations` if any, else a group with fewer orbits of end nodes than end nodes
        (a mesh's reflections), for synthesis to plan one end node of each orbit; None: none found.

        Examples
        --------
        >>> from collsim.systems import load_system
        >>> load_system("mesh", dims=(2, 3)).symmetries().tolist()   # the identity and 3 mirror images
        [[0, 1, 2, 3, 4, 5], [2, 1, 0, 5, 4, 3], [3, 4, 5, 0, 1, 2], [5, 4, 3, 2, 1, 0]]
        """
        found = self.translations()
        if found is not None or self.vertices > MAX_VERTICES:
            return found
        return self._found_group

    def translation_radices(self) -> tuple[int, ...] | None:
        """Radices of a translation group the topology declares in closed form, or None (the default).

        Radices ``(r_1, ..., r_k)`` declare that adding digit by digit, in the end nodes' own
        mixed-radix numbering (:class:`~collsim.core.symmetry.Translations`), with the switches
        moved by :meth:`translate`, maps the links *and every route* onto themselves, and that
        :meth:`link_anchors` moves with the links.  A hierarchical system moves such a dimension's
        coordinate with its group, so that boxes on a full fat tree have a group acting regularly.
        Unlike :meth:`translations` nothing is searched and no table is made: the group is the
        topology's own.

        Examples
        --------
        >>> from collsim.kinds.network.fat_tree import FatTree
        >>> FatTree(nodes=16, k=4).translation_radices(), FatTree(nodes=12, k=4).translation_radices()
        ((4, 2, 2), None)
        """
        return None

    def binary_translations(self) -> bool:
        """Whether XOR of the end nodes' numbers (every radix of :meth:`translation_radices` a power
        of two, each digit XORed) with the switches moved by ``translate(..., xor=True)`` maps the
        links and every route onto themselves, :meth:`link_anchors` moving with them (default False).

        Examples
        --------
        >>> from collsim.kinds.network.fat_tree import FatTree
        >>> FatTree(nodes=16, k=4).binary_translations(), FatTree(nodes=54, k=6).binary_translations()
        (True, False)
        """
        return False

    def translate(self, elements, vertices, xor: bool = False) -> np.ndarray:
        """Images of vertices (end nodes or switches) under elements of :meth:`translation_radices`'s
        group (both arrays, broadcast; an element is named by the end node it takes node 0 to);
        ``xor``: under the XORs of :meth:`binary_translations` instead.

        Examples
        --------
        >>> from collsim.kinds.network.fat_tree import FatTree
        >>> FatTree(nodes=8, k=4, levels=2).translate(3, [0, 8, 12]).tolist()   # (1, 1): host, leaf, spine
        [3, 9, 13]
        """
        raise UnsupportedError(f"a {self.topology} declares no translations in closed form")

    def link_anchors(self, src, dst) -> np.ndarray:
        """An end node for every link, which every element of :meth:`translation_radices`'s group moves
        with the link: its end-node endpoint; between two switches a topology with that group names
        one (-1 here).

        Examples
        --------
        >>> from collsim.kinds.network.electrical import Ring
        >>> Ring(nodes=4).link_anchors([0, 3], [1, 0]).tolist()
        [0, 3]
        """
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        n = self.nodes
        return np.where(src < n, src, np.where(dst < n, dst, -1))

    @cached_property
    def _found_group(self) -> np.ndarray | None:
        lk = self.links
        return automorphism_group(self.nodes, self.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lk.latency_s)

    @cached_property
    def _found_translations(self) -> np.ndarray | None:
        # the topology's own closed form first (a full fat tree), then the numbering's own translations
        # (boxes on rails, tori), then the search
        if self.nodes * self.vertices > NUMBERED_ENTRIES:
            return None
        if self.translation_radices() is not None:
            return self.translate(np.arange(self.nodes)[:, None], np.arange(self.vertices)[None, :])
        lk = self.links
        found = numbered_translations(self.nodes, self.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s,
                                      lk.latency_s)
        if found is not None or self.vertices > MAX_VERTICES:
            return found
        return regular_translations(self.nodes, self.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s,
                                    lk.latency_s)

    # --- shared machinery -----------------------------------------------------------
    @property
    def vertices(self) -> int:
        """End nodes plus switches."""
        return self.nodes + self.switches

    @property
    def alpha_s(self) -> float:
        """The α–β model's t_s: ``startup_s`` if set, else the per-hop link latency."""
        return self.link_latency_s if self.startup_s is None else self.startup_s

    def check_tables(self) -> None:
        """:meth:`System.check_tables`: the link table, from :meth:`link_count` (nothing built)."""
        count = self.link_count()
        if count is not None:
            check_memory(count * BYTES_PER_LINK, f"the link table of a {self.topology} network with {self.vertices} "
                         f"vertices and {count} directed links", "use a smaller network")

    @cached_property
    def links(self) -> LinkTable:
        """The directed link table (built once; refused up front if it would not fit in memory)."""
        self.check_tables()
        u, v = self.edges()
        u = np.asarray(u, dtype=np.int64)
        return LinkTable(u, np.asarray(v, dtype=np.int64), np.full(len(u), float(self.link_bandwidth_bytes_per_s)),
                         np.full(len(u), float(self.link_latency_s)), self.vertices)

    def vertex_name(self, v: int) -> str:
        """Name of vertex ``v``: ``n3`` for end node 3, ``s0`` for switch 0."""
        return f"n{v}" if v < self.nodes else f"s{v - self.nodes}"

    def link_name(self, link: int) -> str:
        """Name of directed link ``link``, e.g. ``n3->s0``."""
        lt = self.links
        return f"{self.vertex_name(int(lt.src[link]))}->{self.vertex_name(int(lt.dst[link]))}"

    def route(self, src: np.ndarray, dst: np.ndarray, via: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Deterministic routes of many transfers at once.

        Parameters
        ----------
        src, dst : numpy.ndarray
            End-node endpoints (distinct per transfer).
        via : numpy.ndarray, optional
            Per-transfer route hints; this base routing takes none (every entry must be
            -1).  Topologies with a choice of paths (MLFM) override :meth:`route`.

        Returns
        -------
        tuple of numpy.ndarray
            ``(ptr, links)``: transfer ``t`` crosses ``links[ptr[t]:ptr[t+1]]`` in order.

        Raises
        ------
        RouteError
            If the next-hop function leaves the graph or does not reach ``dst``.
        UnsupportedError
            If a route hint is given.
        """
        if via is not None and (np.asarray(via) >= 0).any():
            raise UnsupportedError(f"{self.topology} networks take no route hints (via)")
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        t = len(src)
        lt = self.links
        cur = src.copy()
        active = np.flatnonzero(cur != dst)
        rows, hops, found = [], [], []
        h = 0
        while active.size:
            if h > self.vertices:
                raise RouteError(f"{self.topology}: routing from {int(src[active[0]])} to {int(dst[active[0]])} loops")
            nxt = self.next_hop(cur[active], src[active], dst[active])
            link = lt.index(cur[active], nxt)
            if (link < 0).any():
                i = int(active[np.flatnonzero(link < 0)[0]])
                raise RouteError(f"{self.topology}: no link {self.vertex_name(int(cur[i]))}->"
                                 f"{self.vertex_name(int(nxt[np.flatnonzero(link < 0)[0]]))}")
            rows.append(active)
            hops.append(np.full(active.size, h))
            found.append(link)
            cur[active] = nxt
            active = active[nxt != dst[active]]
            h += 1
        if not rows:
            return np.zeros(t + 1, np.int64), np.zeros(0, np.int64)
        rows_a, hops_a, links_a = np.concatenate(rows), np.concatenate(hops), np.concatenate(found)
        order = np.lexsort((hops_a, rows_a))
        ptr = np.zeros(t + 1, np.int64)
        np.cumsum(np.bincount(rows_a, minlength=t), out=ptr[1:])
        return ptr, links_a[order]

    @property
    def ecmp(self) -> bool:
        """Whether transfers are split over every minimum-hop path (``routing = "ecmp"``)."""
        return getattr(self, "routing", None) == "ecmp"

    @cached_property
    def hop_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(next_hop, dist)`` over all vertex pairs (:func:`collsim.kinds.network.ecmp.hop_tables`; built once)."""
        return hop_tables(self.links, self.vertices)

    def routes(self, src: np.ndarray, dst: np.ndarray, via: np.ndarray | None = None) -> LinkRoutes:
        """Routes of many transfers under the network's routing: ECMP multipath or single path.

        Parameters
        ----------
        src, dst : numpy.ndarray
            End-node endpoints.
        via : numpy.ndarray, optional
            Per-transfer route hints (single-path routings that take them: MLFM).

        Returns
        -------
        LinkRoutes
            With ``routing = "ecmp"``, every transfer split evenly, hop by hop, over its
            minimum-hop paths (:func:`collsim.kinds.network.ecmp.ecmp_routes`); otherwise the one
            path of :meth:`route`.

        Raises
        ------
        UnsupportedError
            Route hints on an ECMP network.

        References
        ----------
        C. Hopps, "Analysis of an Equal-Cost Multi-Path Algorithm", RFC 2992, IETF, 2000.
        """
        if not self.ecmp:
            return LinkRoutes(*self.route(src, dst, via))
        if via is not None and (np.asarray(via) >= 0).any():
            raise UnsupportedError(f"{self.topology} networks with ECMP routing take no route hints (via)")
        return ecmp_routes(self.links, self.hop_table[1], src, dst, name=self.vertex_name, topology=self.topology,
                           table=self.ecmp_table)

    @cached_property
    def ecmp_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The equal-cost next links towards every end node (:func:`collsim.kinds.network.ecmp.ecmp_next_links`)."""
        return ecmp_next_links(self.links, self.hop_table[1], self.nodes)

    def idle_resources(self, max_nodes: int = 1024) -> dict[str, Any] | None:
        """Switches and links that minimum-hop paths between end nodes cross but no route uses.

        Every ordered pair of end nodes is routed with the network's routing; a link on some
        minimum-hop path between two end nodes (what ECMP would use) that none of these routes
        crosses carries no traffic in any collective, and neither does such a switch.

        Parameters
        ----------
        max_nodes : int, optional
            Networks with more end nodes (or whose hop tables or routes would not fit) are
            not checked.

        Returns
        -------
        dict or None
            ``switches`` and ``links`` (names of the idle ones), ``switches_on_paths`` and
            ``links_on_paths`` (how many could carry traffic); None when not checked.

        Examples
        --------
        >>> from collsim.kinds.network.custom import CustomNetwork
        >>> two = ((0, 2), (0, 3), (1, 2), (1, 3))          # two hosts, two switches between them
        >>> CustomNetwork(nodes=2, switches=2, link=two, routing="single-path").idle_resources()["switches"]
        ['s1']
        >>> CustomNetwork(nodes=2, switches=2, link=two).idle_resources()["switches"]
        []
        """
        n = self.nodes
        if n < 2 or n > max_nodes or self.route_hints:
            return None
        try:
            lt = self.links
            could = min_hop_links(lt, self.hop_table[1], n)
            if self.ecmp:  # ECMP uses every link on a minimum-hop path: nothing to route
                used = could
            else:
                s, d = np.divmod(np.arange(n * n), n)
                keep = s != d
                used = np.zeros(len(lt), bool)
                used[self.routes(s[keep], d[keep]).route_links] = True
        except MemoryLimitError:
            return None
        v = self.vertices
        sw_could = np.zeros(v, bool)
        sw_used = np.zeros(v, bool)
        sw_could[lt.src[could]] = sw_could[lt.dst[could]] = True
        sw_used[lt.src[used]] = sw_used[lt.dst[used]] = True
        idle_sw = np.flatnonzero(sw_could & ~sw_used)
        idle_sw = idle_sw[idle_sw >= n]
        return {"switches": [self.vertex_name(int(x)) for x in idle_sw],
                "switches_on_paths": int(np.count_nonzero(sw_could[n:])),
                "links": [self.link_name(int(x)) for x in np.flatnonzero(could & ~used)],
                "links_on_paths": int(np.count_nonzero(could))}

    def summary(self) -> dict[str, Any]:
        """Counts for ``collsim topology``: nodes, switches, links, radix, diameter."""
        lt = self.links
        deg = np.bincount(lt.src, minlength=self.vertices)
        sw = deg[self.nodes:]
        n = self.nodes
        if n <= 1024:
            s, d = np.divmod(np.arange(n * n), n)
            keep = s != d
            ptr, _ = self.route(s[keep], d[keep])
            diameter = int(np.diff(ptr).max())
        else:
            diameter = None
        return {"kind": self.topology, "nodes": n, "switches": self.switches, "links": len(lt),
                "node_degree": int(deg[:n].max()), "switch_radix": int(sw.max()) if sw.size else None,
                "diameter": diameter}
