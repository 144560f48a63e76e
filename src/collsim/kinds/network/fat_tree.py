"""k-ary fat trees (folded Clos networks) of k-port switches, up/down D-mod-k routed.

Two shapes, with ``m = k/2`` (``k`` even):

* ``levels=3`` — Al-Fares et al.: ``k`` pods of ``m`` edge and ``m`` aggregation
  switches, ``m**2`` core switches; ``k**3/4`` hosts, ``5 k**2/4`` switches.
* ``levels=2`` — leaf–spine: ``k`` leaf switches with ``m`` hosts and ``m``
  uplinks each, ``m`` spines of ``k`` ports; ``k**2/2`` hosts, ``3k/2`` switches.

Vertex numbering (``N = nodes`` hosts first, then switches by level, bottom
up), for ``k=4, levels=3`` (N=16)::

    core         32  33  34  35                   core c joins aggregation c // m of every pod
    aggregation  24 25 | 26 27 | 28 29 | 30 31    pod p: N + k*m + p*m + j
    edge         16 17 | 18 19 | 20 21 | 22 23    pod p: N + p*m + e
    hosts        0..3  | 4..7  | 8..11 | 12..15   host h on edge switch h // m

(leaf–spine: leaves ``N..N+k-1``, spines ``N+k..N+k+m-1``).  Routing goes up
only to the lowest common ancestor level and chooses uplinks by destination
(D-mod-k): an edge/leaf switch takes uplink ``dst mod m``, an aggregation switch
takes uplink ``(dst // m) mod m``; the way down is unique.  With every host
present, a shift permutation ``i -> i+c mod N`` loads no link with two flows.
``routing = "ecmp"`` splits every transfer evenly over all its up/down paths instead
(:meth:`collsim.kinds.network.network.Network.routes`).

References: E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift
permutations on real life fat trees", CCIT report 776, Technion, 2010; C. Gómez et al.,
"Deterministic versus adaptive routing in fat-trees", IPDPS 2007.

>>> FatTree(nodes=16, k=4).switches
20
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError, UnsupportedError
from .network import Network
from ...core.system import MAX_NODES, register_system_kind
from ...core.validate import integer


def fat_tree_capacity(k: int, levels: int) -> int:
    """Number of hosts of a full fat tree."""
    return k * k // 2 if levels == 2 else k ** 3 // 4


def _ports(name: str, value: Any) -> int:
    """An even switch port count >= 2, or InputError naming ``name``."""
    k = integer(f"fat-tree: {name}", value, lo=2, what="an even integer")
    if k % 2:
        raise InputError(f"fat-tree: {name} must be an even integer >= 2, got {k}")
    return k


def _smallest_k(nodes: int, levels: int) -> int:
    k = 2
    while fat_tree_capacity(k, levels) < nodes:
        k += 2
    return k


@register_system_kind
@dataclass(frozen=True)
class FatTree(Network):
    """A k-ary fat tree; ``nodes`` hosts (at most the capacity) on the first host ports.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    k : int or None
        Ports per switch, even >= 2; None picks the smallest k whose tree holds ``nodes``.
    levels : int
        2 (leaf–spine) or 3 (pods, Al-Fares).
    routing : {"d-mod-k", "ecmp"}
        ``"d-mod-k"`` (default; ``"single-path"`` is accepted for it): one up/down path,
        uplinks chosen by destination.  ``"ecmp"``: every transfer split evenly over its
        up/down paths at every switch on the way up (:meth:`Network.routes`).

    Notes
    -----
    ``nodes`` below the capacity uses hosts ``0..nodes-1``; every switch of the
    full tree is still present (and counted), the other host ports are empty.

    Examples
    --------
    >>> t = FatTree(nodes=16, k=4, levels=3)
    >>> ptr, links = t.route(np.array([0]), np.array([15]))
    >>> [t.link_name(int(x)) for x in links]  # up to core, uplinks by destination
    ['n0->s0', 's0->s9', 's9->s19', 's19->s15', 's15->s7', 's7->n15']
    """

    topology: ClassVar[str] = "fat-tree"
    ROUTINGS: ClassVar[tuple[str, ...]] = ("d-mod-k", "ecmp")
    ROUTING_ALIASES: ClassVar[dict[str, str]] = {"single-path": "d-mod-k"}
    k: int | None = None
    levels: int = 3
    routing: str = "d-mod-k"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "levels", integer("fat-tree: levels", self.levels, lo=2, hi=3))
        if self.k is None:
            object.__setattr__(self, "k", _smallest_k(self.nodes, self.levels))
        k = integer("fat-tree: k (switch ports)", self.k, lo=2, what="an even integer")
        if k % 2:
            raise InputError(f"fat-tree: k (switch ports) must be an even integer >= 2, got {k}")
        object.__setattr__(self, "k", k)
        if self.nodes > self.capacity:
            good = _smallest_k(self.nodes, self.levels)
            raise InputError(f"fat-tree: k={k}, levels={self.levels} holds at most {self.capacity} hosts, "
                             f"got nodes={self.nodes}; use k>={good} "
                             f"({fat_tree_capacity(good, self.levels)} hosts)")

    @classmethod
    def from_options(cls, nodes: int | None = None, k: int | None = None, levels: int | None = None,
                     radix: int | None = None, **opts: Any) -> "FatTree":
        """Build for the CLI.

        Parameters
        ----------
        nodes : int, optional
            Hosts; default the capacity of ``k`` if given, else 16.
        k : int, optional
            Switch ports; default the smallest even k whose tree holds ``nodes``.
        levels : int, optional
            2 or 3 (default 3).
        radix : int, optional
            Alias of ``k`` (the CLI's ``--radix``); both must agree if both are given.
        **opts
            Other fields; None values are ignored.

        Returns
        -------
        FatTree
            The fat tree.

        Raises
        ------
        InputError
            If ``nodes`` exceeds the capacity, naming the smallest k that fits.
        """
        if radix is not None:
            radix = _ports("radix (switch ports k)", radix)
            if k is not None and k != radix:
                raise InputError(f"fat-tree: k={k} and radix={radix} disagree")
            k = radix
        elif k is not None:
            k = _ports("k (switch ports)", k)
        levels = 3 if levels is None else integer("fat-tree: levels", levels, lo=2, hi=3)
        if k is not None and fat_tree_capacity(k, levels) > MAX_NODES:
            raise InputError(f"fat-tree: k={k}, levels={levels} would hold {fat_tree_capacity(k, levels)} hosts, "
                             f"more than collsim's limit of 2**40 nodes")
        if nodes is None:
            nodes = 16 if k is None else fat_tree_capacity(k, levels)
        opts = {name: v for name, v in opts.items() if v is not None}
        bad = sorted(set(opts) - {f.name for f in fields(cls)})
        if bad:
            raise InputError(f"fat-tree systems have no parameter {', '.join(bad)}")
        return cls(nodes=nodes, k=k, levels=levels, **opts)

    # --- structure ----------------------------------------------------------------------
    @property
    def hosts_per_leaf(self) -> int:
        """Hosts (and uplinks) per edge/leaf switch: ``k/2``."""
        return self.k // 2

    @property
    def capacity(self) -> int:
        """Hosts of the full tree."""
        return fat_tree_capacity(self.k, self.levels)

    @property
    def switches_per_level(self) -> dict[str, int]:
        """Switch count per level, bottom up."""
        k, m = self.k, self.k // 2
        if self.levels == 2:
            return {"leaf": k, "spine": m}
        return {"edge": k * m, "aggregation": k * m, "core": m * m}

    @property
    def switches(self) -> int:
        """``3k/2`` (2 levels) or ``5k**2/4`` (3 levels)."""
        return sum(self.switches_per_level.values())

    def cut_masks(self) -> list[np.ndarray]:
        """Each edge switch with its hosts, and (3 levels) the first p pods with their switches.

        Returns
        -------
        list of numpy.ndarray
            Vertex masks (:meth:`Network.cut_masks`).

        Examples
        --------
        >>> [m.shape for m in FatTree(nodes=16, k=4, levels=3).cut_masks()][-1]
        (3, 36)
        """
        masks = super().cut_masks()
        if self.levels == 3:
            k, m = self.k, self.k // 2
            pod_host = np.arange(self.nodes) // (m * m)
            pod_sw = np.concatenate([np.arange(k * m) // m, np.arange(k * m) // m, np.full(m * m, k)])
            pod = np.concatenate([pod_host, pod_sw])
            masks.append(pod[None, :] < np.arange(1, k)[:, None])
        return masks

    def link_count(self) -> int:
        """``2 (N + k m)`` (2 levels) or ``2 (N + 2 k m^2)`` (3 levels), ``m = k/2``."""
        k, m = self.k, self.k // 2
        return 2 * (self.nodes + (k * m if self.levels == 2 else 2 * k * m * m))

    def edges(self):
        """Host links, then edge–aggregation (leaf–spine), then aggregation–core; both ways."""
        n, k, m = self.nodes, self.k, self.k // 2
        h = np.arange(n)
        up_u, up_v = [h], [n + h // m]
        if self.levels == 2:
            leaf, spine = np.divmod(np.arange(k * m), m)
            up_u.append(n + leaf)
            up_v.append(n + k + spine)
        else:
            pod, e, j = np.unravel_index(np.arange(k * m * m), (k, m, m))
            up_u.append(n + pod * m + e)
            up_v.append(n + k * m + pod * m + j)
            pod, j, t = np.unravel_index(np.arange(k * m * m), (k, m, m))
            up_u.append(n + k * m + pod * m + j)
            up_v.append(n + 2 * k * m + j * m + t)
        u, v = np.concatenate(up_u), np.concatenate(up_v)
        return np.concatenate([u, v]), np.concatenate([v, u])

    def next_hop(self, cur, src, dst):
        """Up (D-mod-k) until the destination is below, then the unique way down."""
        n, k, m = self.nodes, self.k, self.k // 2
        cur = np.asarray(cur, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        rel, leaf_dst = cur - n, dst // m
        out = np.where(cur < n, n + cur // m, -1)
        if self.levels == 2:
            leaf = (cur >= n) & (rel < k)
            out = np.where(leaf, np.where(rel == leaf_dst, dst, n + k + dst % m), out)
            return np.where(rel >= k, n + leaf_dst, out)
        edge = (cur >= n) & (rel < k * m)
        out = np.where(edge, np.where(rel == leaf_dst, dst, n + k * m + (rel // m) * m + dst % m), out)
        agg = (rel >= k * m) & (rel < 2 * k * m)
        a = rel - k * m
        down = n + leaf_dst
        up = n + 2 * k * m + (a % m) * m + leaf_dst % m
        out = np.where(agg, np.where(a // m == dst // (m * m), down, up), out)
        c = rel - 2 * k * m
        return np.where(c >= 0, n + k * m + (dst // (m * m)) * m + c // m, out)

    def route(self, src, dst, via=None):
        """The up/down D-mod-k routes of :meth:`next_hop`, computed arithmetically.

        A route of LCA level ``L`` has ``2L`` links whose ids follow from the edge
        order of :meth:`edges` (up links first, then the same links downwards), so all
        routes are written in one pass per level, with no per-hop search.

        Parameters
        ----------
        src, dst : numpy.ndarray
            Distinct end-node endpoints.
        via : numpy.ndarray, optional
            Route hints; a fat tree takes none (every entry must be -1).

        Returns
        -------
        tuple of numpy.ndarray
            ``(ptr, links)``: transfer ``t`` crosses ``links[ptr[t]:ptr[t+1]]`` in order.

        Examples
        --------
        >>> t = FatTree(nodes=8, k=4, levels=2)
        >>> ptr, links = t.route(np.array([0, 0]), np.array([1, 5]))
        >>> ptr.tolist(), [t.link_name(int(x)) for x in links[ptr[1]:]]
        ([0, 2, 6], ['n0->s0', 's0->s5', 's5->s2', 's2->n5'])
        """
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        if (via is not None and (np.asarray(via) >= 0).any()) or (src == dst).any():
            return super().route(src, dst, via)  # refuses hints / zero-hop routes, as the base class
        n, k, m = self.nodes, self.k, self.k // 2
        up = n + (k * m if self.levels == 2 else 2 * k * m * m)  # down link of up link i is up + i
        level = self.lca_level(src, dst)
        ptr = np.zeros(len(src) + 1, np.int64)
        np.cumsum(2 * level, out=ptr[1:])
        links = np.empty(int(ptr[-1]), np.int64)
        for lv in range(1, self.levels + 1):
            rows = np.flatnonzero(level == lv)
            if not rows.size:
                continue
            s, d = src[rows], dst[rows]
            cols = [s]                                    # host -> its edge/leaf switch
            if lv >= 2:
                j = d % m                                 # edge/leaf uplink by destination
                cols.append(n + (s // m) * m + j)
            if lv == 3:
                t = (d // m) % m                          # aggregation uplink by destination
                cols.append(n + k * m * m + ((s // (m * m)) * m + j) * m + t)
                cols.append(up + n + k * m * m + ((d // (m * m)) * m + j) * m + t)
            if lv >= 2:
                cols.append(up + n + (d // m) * m + j)
            cols.append(up + d)                           # edge/leaf switch -> host
            start = ptr[rows]
            for h, col in enumerate(cols):
                links[start + h] = col
        return ptr, links

    # --- translations (a hierarchical system's fat-tree dimension moves with them) -----------
    def translation_radices(self) -> tuple[int, ...] | None:
        """``(k, m, m)`` (3 levels: pod, edge switch, port) or ``(k, m)`` (leaf, port) of a full tree.

        Adding digits of a host's number ``p m^2 + e m + j`` (3 levels) moves edge switch
        ``(p, e)`` to ``(p + g_p, e + g_e)``, aggregation switch ``(p, a)`` to
        ``(p + g_p, a + g_j)`` and core switch ``(a, t)`` to ``(a + g_j, t + g_e)``: links go to
        links (edge ``(p, e)`` joins every aggregation switch of pod ``p``; aggregation ``(p, a)``
        every core ``(a, t)``), and so do D-mod-k routes, whose uplinks are ``j`` of the
        destination at an edge switch and ``e`` at an aggregation switch, both moved by the same
        digits; ECMP's paths are every up/down path, mapped onto each other by any automorphism.
        A tree with empty host ports has no such group (its hosts are not all alike): None.

        Examples
        --------
        >>> FatTree(nodes=1024, k=16).translation_radices(), FatTree(nodes=32, k=8, levels=2).translation_radices()
        ((16, 8, 8), (8, 4))
        """
        if self.nodes != self.capacity:
            return None
        m = self.k // 2
        return (self.k, m) if self.levels == 2 else (self.k, m, m)

    def binary_translations(self) -> bool:
        """A full tree whose ``k`` is a power of two: XOR of each digit permutes its values as the
        additions do (any permutation of the pods, of the edge switches' indices and of the ports,
        applied to every pod and switch alike, keeps the links and the D-mod-k routes), so the XOR
        of the hosts' numbers is a symmetry too.

        Examples
        --------
        >>> FatTree(nodes=8192, k=32).binary_translations()
        True
        """
        return self.translation_radices() is not None and self.k & (self.k - 1) == 0

    def translate(self, elements, vertices, xor: bool = False) -> np.ndarray:
        """Images of hosts and switches under :meth:`translation_radices`'s digit-wise additions, or
        (``xor``) digit-wise XORs.

        Examples
        --------
        >>> t = FatTree(nodes=16, k=4)
        >>> t.translate(5, [0, 16, 24, 32]).tolist()   # (1, 0, 1): host, edge, aggregation, core
        [5, 18, 27, 34]
        >>> t.translate(5, [5, 18, 27, 34], xor=True).tolist()    # its own inverse
        [0, 16, 24, 32]
        """
        if self.translation_radices() is None or xor and not self.binary_translations():
            raise UnsupportedError(f"a fat tree of {self.nodes} hosts (k = {self.k}, capacity {self.capacity}) has "
                                   f"no {'XOR ' if xor else ''}translations")
        if xor:      # every radix a power of two: XOR digit by digit is XOR of the numbers' bit fields
            return self._translate(elements, vertices, np.bitwise_xor)
        return self._translate(elements, vertices, None)

    def _translate(self, elements, vertices, combine) -> np.ndarray:
        def add(a, b, r):
            return (a + b) % r if combine is None else combine(a, b)

        g, v = np.broadcast_arrays(np.asarray(elements, np.int64), np.asarray(vertices, np.int64))
        n, k, m = self.nodes, self.k, self.k // 2
        rel = v - n
        out = np.empty(v.shape, np.int64)
        host = v < n
        if self.levels == 2:
            gl, gj = np.divmod(g, m)
            leaf, j = np.divmod(v, m)
            out[host] = (add(leaf, gl, k) * m + add(j, gj, m))[host]
            sel = ~host & (rel < k)
            out[sel] = (n + add(rel, gl, k))[sel]
            sel = rel >= k
            out[sel] = (n + k + add(rel - k, gj, m))[sel]
            return out
        gp, ge, gj = np.unravel_index(g, (k, m, m))
        p, e, j = np.unravel_index(np.where(host, v, 0), (k, m, m))
        out[host] = (add(p, gp, k) * m * m + add(e, ge, m) * m + add(j, gj, m))[host]
        lo, hi = np.divmod(np.where(host, 0, rel) % (k * m), m)     # (pod, index) or, for a core, (a, t)
        sel = ~host & (rel < k * m)                                   # edge (p, e)
        out[sel] = (n + add(lo, gp, k) * m + add(hi, ge, m))[sel]
        sel = (rel >= k * m) & (rel < 2 * k * m)                      # aggregation (p, a)
        out[sel] = (n + k * m + add(lo, gp, k) * m + add(hi, gj, m))[sel]
        sel = rel >= 2 * k * m                                        # core (a, t)
        out[sel] = (n + 2 * k * m + add(lo, gj, m) * m + add(hi, ge, m))[sel]
        return out

    def link_anchors(self, src, dst) -> np.ndarray:
        """A host moving with each link: its host endpoint; edge ``(p, e)`` to aggregation ``(p, a)``:
        host ``(p, e, a)``; aggregation ``(p, a)`` to core ``(a, t)``: host ``(p, t, a)``; leaf
        ``l`` to spine ``s``: host ``(l, s)``.  Each moves as its link does (:meth:`translate`).

        Examples
        --------
        >>> FatTree(nodes=16, k=4).link_anchors([16, 26], [24, 33]).tolist()  # edge-agg, agg-core
        [0, 6]
        """
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        n, k, m = self.nodes, self.k, self.k // 2
        out = super().link_anchors(src, dst)
        inner = out < 0
        lo_v, hi_v = np.minimum(src, dst) - n, np.maximum(src, dst) - n   # the lower switch first
        if self.levels == 2:
            out[inner] = (lo_v * m + (hi_v - k))[inner]
            return out
        lower, upper = np.divmod(lo_v % (k * m), m), np.divmod(hi_v % (k * m), m)
        edge = inner & (lo_v < k * m)                 # edge (p, e) - aggregation (p, a)
        out[edge] = (lower[0] * m * m + lower[1] * m + upper[1])[edge]
        agg = inner & (lo_v >= k * m)                 # aggregation (p, a) - core (a, t)
        out[agg] = (lower[0] * m * m + upper[1] * m + lower[1])[agg]
        return out

    def lca_level(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Level of the lowest common ancestor switch (1 = edge/leaf, 2, 3 = core).

        Parameters
        ----------
        src, dst : numpy.ndarray
            Distinct hosts.

        Returns
        -------
        numpy.ndarray
            Level per pair; the route has ``2 * level`` hops.
        """
        m = self.k // 2
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        level = np.where(src // m == dst // m, 1, 2)
        if self.levels == 3:
            level = np.where(src // (m * m) == dst // (m * m), level, 3)
        return level

    def distance(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Hop count of the route, ``2 * lca_level``.

        Parameters
        ----------
        src, dst : numpy.ndarray
            Distinct hosts.

        Returns
        -------
        numpy.ndarray
            Hops per pair.
        """
        return 2 * self.lca_level(src, dst)

    def summary(self) -> dict[str, Any]:
        """Counts from closed forms (no link table is built): base fields plus k, levels,
        capacity and switches per level.  Every aggregation/spine and core switch uses all
        ``k`` ports, so the switch radix is ``k``; the diameter is ``2 x`` the LCA level of
        hosts 0 and N-1."""
        n = self.nodes
        out = {"kind": self.topology, "nodes": n, "switches": self.switches, "links": self.link_count(),
               "node_degree": 1, "switch_radix": self.k,
               "diameter": int(self.distance(np.array([0]), np.array([n - 1]))[0]) if n > 1 else 0}
        out.update({"k": self.k, "levels": self.levels, "capacity": self.capacity,
                    "hosts_per_leaf": self.hosts_per_leaf})
        out.update({f"{name}_switches": c for name, c in self.switches_per_level.items()})
        return out
