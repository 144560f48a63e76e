"""Multi-layer full mesh (MLFM): [MLFM16] §1–§2, Fig. 2 (details: docs/mlfm.md).

Hardware (2d-port switches): ``d`` layers of ``d + 1`` leaves; leaf ``(i, j)``
(layer i, column j) has ``d`` servers ``(i, j, k)``; spine ``{j0, j1}`` (one per
pair of columns) joins leaf ``(i, j0)`` and leaf ``(i, j1)`` in every layer.
Every port is used: a leaf has d servers and d spines, a spine 2 leaves per
layer.  ``last_layer_servers = 2`` with ``d = 3`` is the §3 test bed (32 servers).
``selection = (n, l, m)`` makes the end nodes the servers with ``i < n, j < l,
k < m``; all switches and leaf–spine links remain, the idle servers are left out.

Vertex numbering: end nodes ``0..nodes-1`` are the servers in ``(i, j, k)``
lexicographic order (with a selection ``(i*l + j)*m + k``; on the full machine
``(i*(d+1) + j)*d + k``); leaf ``(i, j)`` is ``nodes + i*(d+1) + j``; spine
``{j0 < j1}`` is ``nodes + d(d+1) + p`` with ``p`` its rank in lexicographic order
of pairs.  Link ids (``E = nodes``, ``U = d*d*(d+1)``, ``slot(j, c) = c if c < j
else c - 1``): ``r`` server r -> leaf, ``E + r`` leaf -> server r,
``2E + (i*(d+1) + j)*d + slot(j, c)`` leaf (i, j) -> spine {j, c}, and ``U`` more
for spine {j, c} -> leaf (i, j).

Routing: server -> leaf -> server within a leaf, else server -> leaf (i, j) ->
spine {j, c} -> leaf (i', j') -> server, with ``c = j'`` between columns.  Between
leaves of one column the algorithm names the spine (:meth:`MLFM.route_via`); the
default (:meth:`MLFM.next_hop`, :meth:`MLFM.route`) is the paper's same-column
rule ``{j, (j + k + 1) mod L}`` (k: the source's index on its leaf; L: the
selection's l, or d + 1), written ``c = (j + 1 + (k mod (L-1))) mod L`` so that it
never names the non-existent spine ``{j, j}``; both agree whenever ``k <= L-2``,
i.e. on every selection the ``mlfm`` algorithm accepts.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError, RouteError
from .network import Network
from ...core.system import register_system_kind
from ...core.validate import integer
from .switch_counts import compare_with_fat_tree, fat_tree_counts, mlfm_counts

I64 = np.int64


def _int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """:func:`collsim.core.validate.integer` with the ``mlfm:`` prefix on the name."""
    return integer(f"mlfm: {name}", value, lo=lo, hi=hi)


def _selection(sel: Any) -> tuple:
    """``(n, l, m)`` as a tuple of integers >= 1 (the ranges are checked with ``d`` by :class:`MLFM`)."""
    if isinstance(sel, list):
        sel = tuple(sel)
    if not isinstance(sel, tuple) or len(sel) != 3:
        shown = ",".join(map(str, sel)) if isinstance(sel, tuple) else sel
        raise InputError(f"mlfm: selection must be three integers n,l,m (e.g. 2,4,3), got {shown!r}")
    return tuple(_int(f"selection {what}", v, 1) for what, v in zip(("n (layers)", "l (columns)", "m (servers per leaf)"), sel))


@register_system_kind
@dataclass(frozen=True)
class MLFM(Network):
    """Multi-layer full mesh of 2d-port switches ([MLFM16]), optionally a selected sub-box.

    Parameters
    ----------
    nodes : int
        End nodes; must equal the server count (of the selection, if any):
        :meth:`from_options` computes it.
    name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    d : int
        Half the switch radix: d layers, d + 1 columns, d servers per leaf.
    last_layer_servers : int or None
        Servers per leaf in the last layer (the §3 test bed has 2 with d = 3); None = d.
    selection : tuple of int or None
        ``(n, l, m)``: the end nodes are the servers with ``i < n, j < l, k < m``.
        None: every server is an end node.

    Examples
    --------
    >>> net = MLFM.from_options(d=3)
    >>> net.nodes, net.switches
    (36, 18)
    >>> net.server_id(1, 2, 0), net.server_coords([22])
    (18, (array([1]), array([3]), array([1])))
    >>> sel = MLFM.from_options(d=3, last_layer_servers=2, selection=(2, 4, 3))
    >>> sel.nodes, sel.structure()["servers"]
    (24, 32)
    """

    topology: ClassVar[str] = "mlfm"
    route_hints: ClassVar[bool] = True  # algorithms name same-column spines per transfer (via)
    d: int = 2
    last_layer_servers: int | None = None
    selection: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        d = _int("d", self.d, 1)
        q = None if self.last_layer_servers is None else _int("last_layer_servers", self.last_layer_servers, 1, d)
        object.__setattr__(self, "d", d)                      # plain ints (numpy integers are accepted)
        object.__setattr__(self, "last_layer_servers", q)
        if self.selection is not None:
            sel = self.selection
            if isinstance(sel, (str, bytes)) or not hasattr(sel, "__len__") or len(sel) != 3:
                raise InputError(f"mlfm: selection must be (n, l, m), got {sel!r}")
            n = _int("selection n (layers)", sel[0], 1, d)
            l = _int("selection l (columns)", sel[1], 1, d + 1)
            per_leaf = d if (q is None or n < d) else q
            m = _int(f"selection m (servers per leaf; layers 0..{n - 1} have {per_leaf})", sel[2], 1, per_leaf)
            object.__setattr__(self, "selection", (n, l, m))
        expected = self.expected_nodes(d, q, self.selection)
        if self.nodes != expected:
            raise InputError(f"mlfm: the {'selection' if self.selection else 'machine'} has {expected} servers, "
                             f"so nodes must be {expected} (got {self.nodes}); MLFM.from_options computes it")

    @staticmethod
    def expected_nodes(d: int, last_layer_servers: int | None = None, selection=None) -> int:
        """Number of end nodes: ``n*l*m`` with a selection, else every server."""
        return int(np.prod(selection)) if selection is not None else mlfm_counts(d, last_layer_servers)["servers"]

    @classmethod
    def from_options(cls, nodes: int | None = None, radix: int | None = None, d: int | None = None,
                     select=None, **opts: Any) -> "MLFM":
        """Build from ``d``, ``radix`` (= 2d) or ``nodes`` (default d = 2).

        Parameters
        ----------
        nodes : int, optional
            End nodes (``n*l*m`` with a selection, else the server count, from which
            ``d`` is found if neither ``d`` nor ``radix`` is given).
        radix, d : int, optional
            Switch port count (even) or half of it.
        select : tuple of int, optional
            Alias of ``selection``: ``(n, l, m)`` (the CLI's ``--select``).
        **opts
            ``last_layer_servers``, ``selection``, ``name``, link
            bandwidth/latency; None values are ignored.

        Returns
        -------
        MLFM
            The network (``InputError`` for inconsistent sizes or unknown options).

        Examples
        --------
        >>> MLFM.from_options(radix=6).nodes, MLFM.from_options(nodes=32, last_layer_servers=2).d
        (36, 3)
        """
        opts = {k: v for k, v in opts.items() if v is not None}
        if select is not None:
            if opts.get("selection") not in (None, select):
                raise InputError(f"mlfm: select={select} and selection={opts['selection']} disagree")
            opts["selection"] = select
        bad = sorted(set(opts) - {f.name for f in fields(cls)} - {"nodes", "d"})
        if bad:
            raise InputError(f"mlfm systems have no parameter {', '.join(bad)}")
        sel, q = opts.get("selection"), opts.get("last_layer_servers")
        if sel is not None:
            opts["selection"] = sel = _selection(sel)
        if q is not None:
            q = _int("last_layer_servers", q, 1)
        if radix is not None:
            r = _int("radix (switch ports, 2d)", radix, 2)
            if r % 2:
                raise InputError(f"mlfm: radix (switch ports, 2d) must be an even integer >= 2, got {r}")
            if d is not None and d != r // 2:
                raise InputError(f"mlfm: radix={r} means d={r // 2}, but d={d} was given")
            d = r // 2
        if d is None and nodes is not None:
            if sel is not None:
                raise InputError("mlfm: with a selection give d (or radix), not only nodes")
            cands = [x for x in range(1, 128) if (q is None or q <= x) and cls.expected_nodes(x, q) == nodes]
            if not cands:
                sizes = ", ".join(str(cls.expected_nodes(x)) for x in range(1, 8))
                raise InputError(f"mlfm: no d gives {nodes} servers (d²(d+1) = {sizes}, ...); give d or radix")
            d = cands[0]
        d = _int("d", 2 if d is None else d, 1)
        expected = cls.expected_nodes(d, q, sel)
        if nodes is not None and nodes != expected:
            raise InputError(f"mlfm: d={d}" + (f", selection={sel}" if sel is not None else "")
                             + f" has {expected} end nodes, but nodes={nodes} was given")
        return cls(nodes=expected, d=d, **opts)

    columns = property(lambda self: self.d + 1, doc="Leaf switches per layer, d + 1.")
    leaves = property(lambda self: self.d * (self.d + 1), doc="Leaf switches, d(d+1).")
    spines = property(lambda self: self.d * (self.d + 1) // 2, doc="Spine switches, d(d+1)/2.")
    switches = property(lambda self: self.leaves + self.spines, doc="Leaves plus spines.")

    def structure(self) -> dict[str, int]:
        """Counts of the whole machine (see :func:`mlfm_counts`) plus ``end_nodes``."""
        out = mlfm_counts(self.d, self.last_layer_servers)
        out["end_nodes"] = self.nodes
        return out

    def servers_per_leaf(self) -> np.ndarray:
        """Servers on each leaf of each layer of the whole machine, shape (d,)."""
        per = np.full(self.d, self.d, dtype=I64)
        if self.last_layer_servers is not None:
            per[-1] = self.last_layer_servers
        return per

    def _leaf_first(self) -> np.ndarray:
        """First end-node id of each leaf (i*(d+1)+j), and a sentinel at the end."""
        C = self.columns
        if self.selection is not None:
            n, l, m = self.selection
            cnt = np.zeros((self.d, C), dtype=I64)
            cnt[:n, :l] = m
        else:
            cnt = np.repeat(self.servers_per_leaf()[:, None], C, axis=1)
        first = np.zeros(self.d * C + 1, dtype=I64)
        np.cumsum(cnt.ravel(), out=first[1:])
        return first

    def server_id(self, i, j, k):
        """End-node id of server ``(i, j, k)``, vectorised; InputError if it is not an end node."""
        i, j, k = (np.asarray(x, dtype=I64) for x in (i, j, k))
        scalar = i.ndim == 0 and j.ndim == 0 and k.ndim == 0
        i, j, k = np.broadcast_arrays(np.atleast_1d(i), np.atleast_1d(j), np.atleast_1d(k))
        first = self._leaf_first()
        C = self.columns
        ok = (i >= 0) & (i < self.d) & (j >= 0) & (j < C) & (k >= 0)
        leaf = np.where(ok, i * C + j, 0)
        ok &= k < first[leaf + 1] - first[leaf]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            raise InputError(f"mlfm: server ({int(i[b])}, {int(j[b])}, {int(k[b])}) is not an end node of this "
                             + ("selection" if self.selection is not None else "machine"))
        out = first[leaf] + k
        return int(out[0]) if scalar else out

    def server_coords(self, ids) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(i, j, k)`` arrays of end-node ids (inverse of :meth:`server_id`)."""
        ids = np.atleast_1d(np.asarray(ids, dtype=I64))
        if ((ids < 0) | (ids >= self.nodes)).any():
            raise InputError(f"mlfm: end-node ids must be in 0..{self.nodes - 1}")
        first = self._leaf_first()
        leaf = np.searchsorted(first, ids, side="right") - 1
        return leaf // self.columns, leaf % self.columns, ids - first[leaf]

    @cached_property
    def _leaf_k(self) -> tuple[np.ndarray, np.ndarray]:
        """Each end node's leaf and its index there (memoised as the other kinds memoise derived arrays)."""
        i, j, k = self.server_coords(np.arange(self.nodes))
        return i * self.columns + j, k

    def _node_leaf_k(self) -> tuple[np.ndarray, np.ndarray]:
        return self._leaf_k

    def leaf_id(self, i, j):
        """Vertex number of leaf ``(i, j)``."""
        return self.nodes + np.asarray(i, dtype=I64) * self.columns + np.asarray(j, dtype=I64)

    def spine_index(self, j0, j1) -> np.ndarray:
        """Index 0..d(d+1)/2-1 of spine ``{j0, j1}`` (order-free; -1 if j0 == j1)."""
        a = np.minimum(np.asarray(j0, dtype=I64), np.asarray(j1, dtype=I64))
        b = np.maximum(np.asarray(j0, dtype=I64), np.asarray(j1, dtype=I64))
        C = self.columns
        return np.where(a == b, -1, a * (2 * C - a - 1) // 2 + b - a - 1)

    def spine_id(self, j0, j1):
        """Vertex number of spine ``{j0, j1}``."""
        return self.nodes + self.leaves + self.spine_index(j0, j1)

    def spine_pair(self, vertices) -> tuple[np.ndarray, np.ndarray]:
        """Columns ``(j0 < j1)`` of spine vertices."""
        a_all, b_all = np.triu_indices(self.columns, 1)
        p = np.asarray(vertices, dtype=I64) - self.nodes - self.leaves
        return a_all[p], b_all[p]

    def vertex_name(self, v: int) -> str:
        """``srv(i,j,k)``, ``leaf(i,j)`` or ``spine{j0,j1}``."""
        v = int(v)
        if v < self.nodes:
            i, j, k = (int(x[0]) for x in self.server_coords([v]))
            return f"srv({i},{j},{k})"
        if v < self.nodes + self.leaves:
            i, j = divmod(v - self.nodes, self.columns)
            return f"leaf({i},{j})"
        a, b = self.spine_pair([v])
        return f"spine{{{int(a[0])},{int(b[0])}}}"

    def uplink_id(self, i, j, c):
        """Link id of leaf ``(i, j)`` -> spine ``{j, c}`` (``c != j``)."""
        i, j, c = (np.asarray(x, dtype=I64) for x in (i, j, c))
        return 2 * self.nodes + (i * self.columns + j) * self.d + np.where(c < j, c, c - 1)

    def downlink_id(self, i, j, c):
        """Link id of spine ``{j, c}`` -> leaf ``(i, j)`` (``c != j``)."""
        return self.uplink_id(i, j, c) + self.d * self.d * self.columns

    def link_count(self) -> int:
        """``2E`` access links and ``2 d^2 C`` leaf-spine links."""
        return 2 * self.nodes + 2 * self.d * self.d * self.columns

    def edges(self):
        """Access links (up, then down), leaf -> spine, spine -> leaf, in link-id order."""
        E, C, d = self.nodes, self.columns, self.d
        r = np.arange(E, dtype=I64)
        leaf_of = E + self._node_leaf_k()[0]
        i, j, s = np.meshgrid(np.arange(d), np.arange(C), np.arange(d), indexing="ij")
        i, j, s = i.ravel(), j.ravel(), s.ravel()
        c = np.where(s < j, s, s + 1)                        # inverse of slot
        leaf = E + i * C + j
        spine = self.spine_id(j, c)
        return (np.concatenate([r, leaf_of, leaf, spine]), np.concatenate([leaf_of, r, spine, leaf]))

    def _default_L(self) -> int:
        if self.selection is not None and self.selection[1] >= 2:
            return self.selection[1]
        return self.columns

    def default_spine_column(self, j, k):
        """Default same-column spine ``{j, c}`` of a source ``(., j, k)``: ``c = (j+1+(k mod (L-1))) mod L``."""
        L = self._default_L()
        j = np.asarray(j, dtype=I64)
        k = np.asarray(k, dtype=I64)
        return (j + 1 + k % (L - 1)) % L

    def next_hop(self, cur, src, dst):
        """Server -> leaf -> (spine -> leaf) -> server; see the module docstring for the spine."""
        cur, src, dst = (np.asarray(x, dtype=I64) for x in (cur, src, dst))
        E, C = self.nodes, self.columns
        node_leaf, node_k = self._node_leaf_k()
        dleaf = node_leaf[dst]
        out = np.empty_like(cur)
        is_srv = cur < E
        out[is_srv] = E + node_leaf[cur[is_srv]]
        is_leaf = (cur >= E) & (cur < E + self.leaves)
        if is_leaf.any():
            cl, dl = cur[is_leaf] - E, dleaf[is_leaf]
            jc, jd = cl % C, dl % C
            c = np.where(jd != jc, jd, self.default_spine_column(jc, node_k[src[is_leaf]]))
            out[is_leaf] = np.where(cl == dl, dst[is_leaf], self.spine_id(jc, c))
        is_sp = cur >= E + self.leaves
        out[is_sp] = E + dleaf[is_sp]
        return out

    def route_via(self, src, dst, via=None) -> tuple[np.ndarray, np.ndarray]:
        """CSR routes ``(ptr, links)`` with an explicit spine per transfer (arithmetic, no walking).

        Parameters
        ----------
        src, dst : array_like
            End nodes (``src == dst`` gives an empty route).
        via : array_like, optional
            Per transfer between two leaves of one column ``j``: the other column ``c`` of
            the spine ``{j, c}``, or -1 for the default; ignored otherwise.  ``RouteError``
            if the spine does not exist.
        """
        src = np.asarray(src, dtype=I64).reshape(-1)
        dst = np.asarray(dst, dtype=I64).reshape(-1)
        t = len(src)
        if t == 0:
            return np.zeros(1, I64), np.zeros(0, I64)
        E, C = self.nodes, self.columns
        node_leaf, node_k = self._node_leaf_k()
        sl, dl = node_leaf[src], node_leaf[dst]
        si, sj = np.divmod(sl, C)
        di, dj = np.divmod(dl, C)
        c = np.where(sj != dj, dj, self.default_spine_column(sj, node_k[src]))
        if via is not None:
            via = np.broadcast_to(np.asarray(via, dtype=I64), (t,))
            use = (sj == dj) & (sl != dl) & (via >= 0)
            c = np.where(use, via, c)
            bad = (sj == dj) & (sl != dl) & ((c == sj) | (c >= C) | (c < 0))
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                raise RouteError(f"mlfm: spine {{{int(sj[b])},{int(c[b])}}} does not exist "
                                 f"(transfer {b}: {self.vertex_name(int(src[b]))} -> {self.vertex_name(int(dst[b]))})")
        same_leaf = sl == dl
        hops = np.where(src == dst, 0, np.where(same_leaf, 2, 4))
        ptr = np.zeros(t + 1, dtype=I64)
        np.cumsum(hops, out=ptr[1:])
        other = sj + c - dj                     # the spine's column that is not dj
        cand = np.stack([src, self.uplink_id(si, sj, np.where(same_leaf, sj + 1, c)),
                         self.downlink_id(di, dj, np.where(same_leaf, dj + 1, other)), E + dst], axis=1)
        keep = (hops[:, None] == 4) | ((hops[:, None] == 2) & np.array([True, False, False, True]))
        return ptr, cand[keep]

    def route(self, src, dst, via=None):
        """Arithmetic routes; ``via`` (per transfer, or None) names same-column spines: :meth:`route_via`."""
        return self.route_via(src, dst, via)

    def summary(self) -> dict[str, Any]:
        """Base counts plus the MLFM structure; diameter 4 when two leaves exist."""
        out = super().summary() if self.nodes <= 1024 else {
            "kind": self.topology, "nodes": self.nodes, "switches": self.switches,
            "links": 2 * self.nodes + 2 * self.leaves * self.d,  # access links, then leaf <-> spine
            "node_degree": 1, "switch_radix": 2 * self.d, "diameter": 4}
        out.update({f"machine_{k}": v for k, v in self.structure().items()})
        out["selection"] = list(self.selection) if self.selection is not None else None
        out["fat_tree_comparison"] = compare_with_fat_tree(2 * self.d)
        return out


__all__ = ["MLFM", "compare_with_fat_tree", "fat_tree_counts", "mlfm_counts"]
