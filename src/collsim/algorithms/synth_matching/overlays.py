"""Logical overlays of a switched network: end-node links whose concurrent use fits the switches.

The matching synthesizer (:mod:`collsim.algorithms.synth_matching.build`) plans on links
between end nodes.  A network whose end nodes meet only through switches (star,
fat tree, MLFM, custom graphs) has none, and its switches do not copy data: a
piece entering a switch leaves it once.  Collsim therefore lays a *circulant
overlay* over the end nodes, logical links ``i -> (i + s) mod N`` for a set of
shifts ``s``, each routed by the network's own rule (D-mod-k, ECMP, the MLFM
rule), and gives every logical link the bandwidth it keeps when all of them run
at once: with ``L_l`` the number of flows (an ECMP path is a flow of its own)
crossing physical link ``l``, a path's rate is at least the smallest
``capacity_l / L_l`` on it under max-min fair sharing, and a logical link's
bandwidth is the smallest such rate over its paths divided by the path's share.  No physical link is then
oversubscribed by any step of a plan on the overlay, so the plan's predicted time
is what the flow simulator measures when every logical link of a step is equally
loaded, and an upper bound otherwise.

The overlays tried are a ring (shift 1), the nearest shifts ``1..d``, doubling
shifts ``1, 2, 4, ...`` (a logarithmic diameter for small messages), and every
shift (direct exchange, one step).  On a k-ary fat tree routed D-mod-k every shift
is a permutation that loads no link twice [Zahavi10], so every one of these
overlays keeps the host links as the only bottleneck; on an oversubscribed
network the sparse overlays cross the bottleneck cut once per piece while direct
exchange crosses it once per receiver, and the size-aware search picks between
them.  This is not a tree packing: on graphs where neither kind of overlay fits,
the schedule can fall short of the cut bound (docs/synthesis.md says where).

References
----------
E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
life fat trees", CCIT report 776, Technion, 2010.
L. Zhao, S. Maleki, A. Shah, Z. Yang, H. Pourreza, A. Krishnamurthy, "ForestColl: Efficient
Collective Communications on Heterogeneous Network Fabrics", arXiv 2402.06787, 2024 (switch
removal by edge splitting: the exact construction collsim approximates with circulants).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError, RouteError
from ...core.csr import INDEX


@dataclass(frozen=True)
class OverlayLinks:
    """Directed logical links between end nodes (the columns :func:`match` reads).

    References
    ----------
    E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
    life fat trees", CCIT report 776, Technion, 2010.
    """

    src: np.ndarray
    dst: np.ndarray
    bandwidth_bytes_per_s: np.ndarray
    latency_s: np.ndarray


@dataclass(frozen=True)
class Overlay:
    """A circulant overlay of a switched network, planned on like a network of direct links.

    References
    ----------
    E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
    life fat trees", CCIT report 776, Technion, 2010.
    """

    nodes: int
    links: OverlayLinks
    startup_s: float
    name: str
    kind: str
    routes: object = None
    """The network's routes of the logical links, one row per link (None: not kept)."""

    def routes_of(self, src: np.ndarray, dst: np.ndarray):
        """The kept routes of transfers along logical links ``src -> dst``, one row per transfer.

        The network routes every pair the same way each time, so these rows are what routing the
        transfers again would give; the schedule carries them instead of routing its transfers twice.
        """
        key = self.links.src * self.nodes + self.links.dst
        order = np.argsort(key, kind="stable")
        want = np.asarray(src, INDEX) * self.nodes + np.asarray(dst, INDEX)
        at = np.searchsorted(key, want, sorter=order)
        rows = order[np.minimum(at, len(order) - 1)]
        if len(want) and not (key[rows] == want).all():
            raise ValueError("a transfer runs along no logical link of the overlay")
        return self.routes.take(rows)

    @property
    def vertices(self) -> int:
        """End nodes only: the overlay has no switches."""
        return self.nodes

    @property
    def direct(self) -> bool:
        """Whether every shift is present (one step carries a whole all-gather)."""
        return len(self.links.src) == self.nodes * (self.nodes - 1)


def dfs_order(system) -> np.ndarray:
    """End nodes in depth-first order over the network's graph from node 0 (links as undirected).

    A ring in this order crosses every link of a tree network twice, once each way, whatever
    the end nodes' numbering; on fat trees and MLFM it is close to the numbering itself.

    References
    ----------
    R. Tarjan, "Depth-first search and linear graph algorithms", SIAM Journal on Computing 1(2),
    1972, pp. 146-160.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import depth_first_order
    lk, v = system.links, system.vertices
    g = coo_matrix((np.ones(len(lk.src)), (lk.src, lk.dst)), shape=(v, v)).tocsr()
    order = depth_first_order(g, 0, directed=False, return_predecessors=False)
    return np.asarray(order[order < system.nodes], INDEX)


def overlay(system, shifts, name: str, order: np.ndarray | None = None) -> Overlay:
    """The overlay of logical links ``i -> (i + s) mod N`` for ``s`` in ``shifts``, routed by the network.

    References
    ----------
    E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
    life fat trees", CCIT report 776, Technion, 2010.
    """
    n = system.nodes
    s = np.unique(np.asarray(list(shifts), INDEX) % n)
    s = s[s > 0]
    src = np.repeat(np.arange(n, dtype=INDEX), len(s))
    dst = (src + np.tile(s, n)) % n
    if order is not None:
        src, dst = order[src], order[dst]
    try:
        routes = system.routes(src, dst)
    except RouteError as exc:
        raise InputError(f"synth-matching: {exc}") from exc
    lk = system.links
    weight = routes.weights
    # max-min fairness gives every (sub-)flow at least capacity / flows on each of its links; the
    # flow simulator shares links among ECMP sub-flows as whole flows, so each path counts once
    load = np.bincount(routes.route_links, minlength=len(lk.src)).astype(float)
    share = np.divide(lk.bandwidth_bytes_per_s, load, out=np.full(len(load), np.inf), where=load > 0)
    starts = routes.route_ptr[:-1]
    nonempty = routes.path_hops > 0
    path_bw = np.full(routes.paths, np.inf)
    path_lat = np.zeros(routes.paths)
    if routes.route_links.size:
        path_bw[nonempty] = np.minimum.reduceat(share[routes.route_links], starts[nonempty])
        path_lat[nonempty] = np.add.reduceat(lk.latency_s[routes.route_links], starts[nonempty])
    owner = routes.path_owner
    # a transfer split over paths finishes with its slowest path: share w at rate r takes w S / r
    rate = np.full(len(src), np.inf)
    np.minimum.at(rate, owner, path_bw / weight)
    lat = np.zeros(len(src))
    np.maximum.at(lat, owner, path_lat)
    bad = ~np.isfinite(rate) | (rate <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"synth-matching: no route with positive bandwidth from node {int(src[i])} to node "
                         f"{int(dst[i])} on this {system.topology} network")
    startup = float(getattr(system, "startup_s", None) or 0.0)
    return Overlay(n, OverlayLinks(src, dst, rate, lat), startup, name, system.topology, routes)


def shift_sets(n: int) -> list[tuple[str, tuple[int, ...]]]:
    """The overlays worth trying on ``n`` end nodes: ring, nearest shifts, doubling, direct.

    References
    ----------
    E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
    life fat trees", CCIT report 776, Technion, 2010.
    """
    if n < 2:
        return []
    out: list[tuple[str, tuple[int, ...]]] = [("ring", (1,))]
    near = (2, 4, 8) if n <= 256 else ()
    out += [(f"near-{d}", tuple(range(1, d + 1))) for d in near if d < n - 1]
    doubling = tuple(1 << j for j in range(int(np.log2(n - 1)) + 1) if (1 << j) < n)
    if len(doubling) > 1 and doubling != tuple(range(1, n)):
        out.append(("doubling", doubling))
    out.append(("direct", tuple(range(1, n))))
    seen: set[tuple[int, ...]] = set()
    return [(name, s) for name, s in out if not (s in seen or seen.add(s))]


def by_name(n: int, name: str) -> tuple[int, ...]:
    """The shifts of the overlay called ``name`` (``ring``, ``near-d``, ``doubling``, ``direct``).

    References
    ----------
    E. Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on real
    life fat trees", CCIT report 776, Technion, 2010.
    """
    if name == "ring":
        return (1,)
    if name == "direct":
        return tuple(range(1, n))
    if name == "doubling":
        return tuple(1 << j for j in range(max(int(np.log2(max(n - 1, 1))) + 1, 1)) if (1 << j) < n)
    if name.startswith("near-"):
        try:
            d = int(name[5:])
        except ValueError:
            d = 0
        if 1 <= d <= n - 1:
            return tuple(range(1, d + 1))
    raise InputError(f"synth-matching: overlay must be ring, near-d (1 <= d <= {n - 1}), doubling or direct, "
                     f"got {name!r}")
