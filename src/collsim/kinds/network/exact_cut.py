"""Exact all-gather / reduce-scatter cut bound on any network (docs/derivations/lower-bounds.md).

An all-gather cut with receiving side ``S`` (a vertex set holding ``e(S)`` end nodes,
``1 <= e(S) <= N - 1``) needs the ``N - e(S)`` blocks from outside to enter ``S``
(:func:`collsim.kinds.network.cuts.cut_demand_bytes`), so no schedule is faster than

    max over S of  (N - e(S)) m / c_in(S),

``c_in(S)`` the summed bandwidth of the links entering ``S``.  Reduce-scatter is the
mirror (links leaving ``S``).  :func:`allgather_certificate` finds the maximum over
*every* vertex set, switches included, with a parametric max-flow (Dinkelbach):
for a ratio ``r`` (blocks per byte/s) no set beats ``r`` iff, for every end node
``t``, ``min over S containing t of e(S) + r c_in(S) >= N`` -- a minimum cut in the
graph with a super source feeding one block into every end node and link ``l`` of
capacity ``r bw_l``.  End nodes are taken as sinks one after another; a checked sink
joins the source (every set containing it is already cleared, for every larger ``r``
too), the flow is kept across sinks and ratios (capacities only grow with ``r``, so
it stays feasible: the warm start of Gallo, Grigoriadis & Tarjan's parametric flow),
and a cut short of ``N`` raises ``r`` to that cut's own ratio, the Dinkelbach step.  The answer is therefore
the ratio of an actual cut, returned as its certificate.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ...core.collective import Collective
from ...core.errors import InputError
from .network import Network
from .cut_families import WorkLimitError, family_cut, work_budget

_REL_TOL = 1e-12
"""A cut counts as short of ``N`` when its value is below ``N (1 - _REL_TOL)``."""


@dataclass(frozen=True)
class CutCertificate:
    """The cut that attains the exact all-gather / reduce-scatter cut bound.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of
    Mathematics 8, 1956 (no schedule moves more than a cut's capacity across it).
    """

    bound_s: float
    side: tuple[int, ...]
    end_nodes_inside: int
    capacity_bytes_per_s: float
    demand_bytes: float
    direction: str


def _graph(system: Network, reverse: bool) -> tuple[int, int, list[int], list[int], list[float]]:
    """Nodes, vertices and the links of positive bandwidth (reversed for reduce-scatter)."""
    lt = system.links
    bw = np.asarray(lt.bandwidth_bytes_per_s, dtype=float)
    if (bw < 0).any() or not np.isfinite(bw).all():
        raise InputError("link bandwidths must be finite and non-negative")
    keep = bw > 0                                     # a zero-bandwidth link carries nothing
    src, dst = lt.src[keep].tolist(), lt.dst[keep].tolist()
    if reverse:
        src, dst = dst, src
    return int(system.nodes), int(system.vertices), src, dst, bw[keep].tolist()


def _check_reachable(n: int, v: int, src: list[int], dst: list[int]) -> None:
    """Raise InputError unless every end node reaches, and is reached from, end node 0."""
    out_adj: list[list[int]] = [[] for _ in range(v)]
    in_adj: list[list[int]] = [[] for _ in range(v)]
    for a, b in zip(src, dst):
        out_adj[a].append(b)
        in_adj[b].append(a)
    for adj, what in ((out_adj, "cannot be reached from end node 0"), (in_adj, "cannot reach end node 0")):
        seen = bytearray(v)
        seen[0] = 1
        todo = [0]
        while todo:
            x = todo.pop()
            for y in adj[x]:
                if not seen[y]:
                    seen[y] = 1
                    todo.append(y)
        bad = [i for i in range(n) if not seen[i]]
        if bad:
            shown = ", ".join(map(str, bad[:10])) + (f" (and {len(bad) - 10} more)" if len(bad) > 10 else "")
            raise InputError(f"end node{'s' if len(bad) > 1 else ''} {shown} {what} over links of "
                             "positive bandwidth: no collective can complete")


def _sink_order(n: int, v: int, src: list[int], dst: list[int], first: int = 0) -> list[int]:
    """End nodes in breadth-first order from ``first`` (undirected), so each sink is near cleared ones."""
    adj: list[list[int]] = [[] for _ in range(v)]
    for a, b in zip(src, dst):
        adj[a].append(b)
        adj[b].append(a)
    seen = bytearray(v)
    seen[first] = 1
    order, todo = [], deque([first])
    while todo:
        x = todo.popleft()
        if x < n:
            order.append(x)
        for y in adj[x]:
            if not seen[y]:
                seen[y] = 1
                todo.append(y)
    return order


class _Flow:
    """A flow on the links, kept across sinks: end nodes draw on a super source, cleared sinks are sources."""

    def __init__(self, n: int, v: int, src: list[int], dst: list[int], bw: list[float], unit: float) -> None:
        self.n, self.src, self.dst, self.bw, self.unit = n, src, dst, bw, unit
        self.in_links: list[list[int]] = [[] for _ in range(v)]
        self.out_links: list[list[int]] = [[] for _ in range(v)]
        for e, (a, b) in enumerate(zip(src, dst)):
            self.out_links[a].append(e)
            self.in_links[b].append(e)
        self.flow = [0.0] * len(src)
        self.supply = [unit] * n       # residual of the super source's edge into each end node
        self.source = bytearray(v)     # cleared sinks: unlimited supply
        self.work, self.max_work = 0, None   # links scanned by the searches, and a cap on them

    def capacity_into(self, side: list[int]) -> float:
        """Summed bandwidth of the links entering ``side``."""
        inside = set(side)
        return sum(self.bw[e] for x in side for e in self.in_links[x] if self.src[e] not in inside)

    def push(self, t: int, need: float, scale: float, eps: float) -> list[int] | None:
        """Raise the net inflow of ``t`` to ``need`` (link capacities ``scale * bw``; residuals below
        ``eps`` are rounding noise): None once it is within ``eps``, else the sorted smallest sink side of a
        minimum cut (every vertex that still reaches ``t`` in the residual graph)."""
        n, src, dst, bw, flow, supply, source = self.n, self.src, self.dst, self.bw, self.flow, self.supply, self.source
        in_links, out_links = self.in_links, self.out_links
        supply[t] = 0.0                                # the super source's own block for t
        inflow = self.unit + sum(flow[e] for e in in_links[t]) - sum(flow[e] for e in out_links[t])
        while need - inflow > eps:
            # Backward breadth-first search from t over residual edges; it stops expanding at
            # sources (cleared sinks, end nodes with supply left) and after the layer of the first.
            par: dict[int, tuple[int, int]] = {t: (-1, 0)}
            dist = {t: 0}
            todo, hits, limit = deque([t]), [], len(source) + 1
            while todo:
                x = todo.popleft()
                if dist[x] >= limit:
                    break
                self.work += len(in_links[x]) + len(out_links[x])
                for e in in_links[x]:                  # link y -> x with room
                    y = src[e]
                    if y not in par and scale * bw[e] - flow[e] > eps:
                        par[y] = (e, 1)
                        dist[y] = dist[x] + 1
                        if source[y] or (y < n and supply[y] > eps):
                            hits.append(y)
                            limit = min(limit, dist[y])
                        else:
                            todo.append(y)
                for e in out_links[x]:                 # flow x -> y to cancel
                    y = dst[e]
                    if y not in par and flow[e] > eps:
                        par[y] = (e, -1)
                        dist[y] = dist[x] + 1
                        if source[y] or (y < n and supply[y] > eps):
                            hits.append(y)
                            limit = min(limit, dist[y])
                        else:
                            todo.append(y)
            if self.max_work is not None and self.work > self.max_work:
                raise WorkLimitError(f"exact cut search stopped after scanning {self.work} links "
                                     f"(max_work={self.max_work})")
            if not hits:
                return sorted(par)
            for hit in hits:                           # augment along the search tree, hit by hit
                amount = need - inflow
                if amount <= eps:
                    break
                if not source[hit]:
                    amount = min(amount, supply[hit])
                x, path = hit, []
                while x != t:                          # walk from the source end to t
                    e, sign = par[x]
                    path.append((e, sign))
                    amount = min(amount, scale * bw[e] - flow[e] if sign > 0 else flow[e])
                    x = dst[e] if sign > 0 else src[e]
                if amount <= eps:
                    continue
                for e, sign in path:
                    flow[e] += amount * sign
                if not source[hit]:
                    supply[hit] -= amount
                inflow += amount
        return None


def max_cut_ratio(system: Network, direction: str = "in",
                  max_work: int | None = None) -> tuple[float, tuple[int, ...], int, float]:
    """Exact ``max over S of (N - e(S)) / c(S)`` with ``c`` the bandwidth into (or out of) ``S``.

    References
    ----------
    W. Dinkelbach, "On nonlinear fractional programming", Management Science 13(7), 1967;
    G. Gallo, M. D. Grigoriadis, R. E. Tarjan, "A fast parametric maximum flow algorithm and
    applications", SIAM Journal on Computing 18(1), 1989.
    """
    if direction not in ("in", "out"):
        raise InputError(f"direction must be 'in' or 'out', not {direction!r}")
    n, v, src, dst, bw = _graph(system, reverse=direction == "out")
    if n < 2:
        raise InputError("a cut bound needs at least two end nodes")
    _check_reachable(n, v, src, dst)
    fl = _Flow(n, v, src, dst, bw, 1.0)
    fl.max_work = max_work
    # Start from the best single-node cut: S = {t}, (N - 1) / c_in(t).
    t0 = min(range(n), key=lambda t: fl.capacity_into([t]))
    best = ((n - 1) / fl.capacity_into([t0]), (t0,), 1, fl.capacity_into([t0]))
    r = best[0]
    eps = 1e-14 * n                                    # in blocks
    goal = n * (1.0 - _REL_TOL)
    for t in _sink_order(n, v, src, dst):
        while (side := fl.push(t, float(n), r, eps)) is not None:
            e_s = sum(1 for x in side if x < n)
            cap = fl.capacity_into(side)
            if e_s + r * cap >= goal:                  # the flow is N up to rounding: t is cleared
                break
            r = (n - e_s) / cap                        # Dinkelbach: the short cut's own ratio
            best = (r, tuple(side), e_s, cap)
        fl.source[t] = 1
    return best


def min_cut(system: Network, first: int = 0, direction: str = "in",
            max_work: int | None = None) -> tuple[float, tuple[int, ...], int]:
    """Exact smallest capacity into (or out of) a vertex set ``S`` without ``first`` and with an end node.

    Notes
    -----
    The all-gather search with no super source: sinks in breadth-first order from ``first`` join
    the source once the flow into them reaches the smallest capacity found so far; a flow that stops
    short gives a smaller cut (Hao and Orlin's order of sinks, with augmenting paths).

    References
    ----------
    J. Hao, J. B. Orlin, "A faster algorithm for finding the minimum cut in a directed graph",
    Journal of Algorithms 17(3), 1994; L. R. Ford, D. R. Fulkerson, "Maximal flow through a
    network", Canadian Journal of Mathematics 8, 1956.
    """
    if direction not in ("in", "out"):
        raise InputError(f"direction must be 'in' or 'out', not {direction!r}")
    n, v, src, dst, bw = _graph(system, reverse=direction == "out")
    if n < 2:
        raise InputError("a cut bound needs at least two end nodes")
    if not 0 <= first < n:
        raise InputError(f"first must be an end node 0..{n - 1}, not {first}")
    _check_reachable(n, v, src, dst)
    fl = _Flow(n, v, src, dst, bw, 0.0)
    fl.max_work = max_work
    order = _sink_order(n, v, src, dst, first)
    t0 = min(order[1:], key=lambda t: fl.capacity_into([t]))
    best = (fl.capacity_into([t0]), (t0,), 1)
    fl.source[first] = 1
    for t in order[1:]:
        side = fl.push(t, best[0], 1.0, 1e-13 * best[0])
        if side is not None:
            cap = fl.capacity_into(side)
            if cap < best[0] * (1.0 - _REL_TOL):
                best = (cap, tuple(side), sum(1 for x in side if x < n))
        fl.source[t] = 1
    return best


def allgather_certificate(system: Network, collective: Collective) -> CutCertificate:
    """Exact cut bound of an all-gather or reduce-scatter on any network, with the cut attaining it.

    Notes
    -----
    Parametric max-flow with warm starts (module docstring): one augmenting-path max-flow per
    end node, each starting from the previous flow, and a Dinkelbach step whenever a cut falls
    short.  It stops when every end node receives ``N`` blocks at the current ratio, which
    proves that no cut has a larger ratio (max-flow min-cut), up to a relative ``1e-12``.
    Rings, lines and stars need no flow: their closed-form cuts attain the maximum
    (:func:`collsim.kinds.network.cut_families.family_cut`).  Elsewhere the search has the bounds' budget (:func:`work_budget`);
    beyond it the certificate is the best closed-form or single-node cut, the cut that
    :func:`collsim.kinds.network.cuts.cut_bound_s` then takes the bound over.

    References
    ----------
    W. Dinkelbach, "On nonlinear fractional programming", Management Science 13(7), 1967;
    G. Gallo, M. D. Grigoriadis, R. E. Tarjan, "A fast parametric maximum flow algorithm and
    applications", SIAM Journal on Computing 18(1), 1989; J. Hao, J. B. Orlin, "A faster
    algorithm for finding the minimum cut in a directed graph", Journal of Algorithms 17(3),
    1994 (sinks joining the source one by one); L. Zhao et al., "ForestColl: Efficient
    collective communications on heterogeneous network fabrics", arXiv 2402.06787, 2024 (the
    same optimum as the all-gather throughput of spanning-tree packings).
    """
    kind = collective.name
    if collective.type.exact_cut != "ratio":
        raise InputError(f"the exact cut certificate covers allgather and reducescatter, not {kind}")
    if collective.nodes != system.nodes:
        raise InputError(f"collective has {collective.nodes} nodes, the network {system.nodes}")
    direction = collective.type.direction   # all-gather: into every node set; reduce-scatter: out of it
    if getattr(system, "cuts_are_exact", False):   # rings, lines, stars: their cut families attain the maximum
        ratio, side, inside, cap = family_cut(system, direction)
    else:
        try:
            ratio, side, inside, cap = max_cut_ratio(system, direction, work_budget(system))
        except WorkLimitError:              # the cut the bound is then taken over (cost.cuts.cut_bound_s)
            ratio, side, inside, cap = family_cut(system, direction)
    m = float(collective.size_bytes)
    demand = (system.nodes - inside) * m
    return CutCertificate(bound_s=demand / cap, side=side, end_nodes_inside=inside,
                          capacity_bytes_per_s=cap, demand_bytes=demand, direction=direction)


__all__ = ["CutCertificate", "WorkLimitError", "allgather_certificate", "max_cut_ratio", "min_cut", "work_budget"]
