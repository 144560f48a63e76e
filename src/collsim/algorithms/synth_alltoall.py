"""All-to-all synthesized from the max-concurrent-flow LP: every pair's block split over the LP's paths.

1. Solve the all-to-all max-concurrent-flow LP of the network (:func:`collsim.kinds.network.mcf.solve_mcf`,
   HiGHS): per-source link flows at the optimal common rate ``λ*``.
2. Decompose each source's flow into paths, one set per destination (walk back from the
   destination along links that still carry flow; flow cycles are cancelled on the way).
3. Cut every block into ``split`` equal *sub-flows* and give each LP path a whole number of
   them, as close to its LP share as the rounding allows (largest remainders).
4. Emit one step: one transfer per ordered pair, whose route is its ``split`` sub-flow paths
   (a path given ``k`` sub-flows appears ``k`` times, each carrying ``1/split`` of the block).

Why equal sub-flows: collsim's flow simulator shares links max-min fairly between flows, not in
proportion to their size.  With every flow the same size ``δ`` and at most ``c_e T / δ`` flows
on each link ``e``, the water level ``δ / T`` fills no link, so every flow always gets at least
``δ / T`` and all of them finish by ``T``: the simulated time is the rounded LP's congestion
``T = max_e (flows on e) δ / c_e`` plus the longest path's latency.  One big step with flows of
unequal size would instead let short flows take fair shares a critical link needs.

References
----------
F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990;
Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Mathematical
Programming Computation 10, 2018 (HiGHS); D. Bertsekas, R. Gallager, "Data Networks", 2nd ed.,
1992, ch. 6 (max-min fairness).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.csr import INDEX
from ..core.errors import InputError
from ..core.schedule import LogicalSchedule
from ..kinds.network.mcf import MAX_VARIABLES, McfSolution, solve_mcf
from ..kinds.network.routes import LinkRoutes
from .registry import register

DEFAULT_SPLIT = 16
"""Sub-flows per block: enough that rounding the LP's path shares costs a few per cent."""


def flow_paths(system, solution: McfSolution, tol: float = 1e-6) -> list[list[tuple[list[int], float]]]:
    """Decompose every source's LP flow into paths to each destination.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, *Flows in Networks*, Princeton University Press, 1962 (flow
    decomposition into paths and cycles).
    """
    lt = system.links
    n, nv = system.nodes, system.vertices
    src, dst = lt.src, lt.dst
    inc: list[list[int]] = [[] for _ in range(nv)]
    for e in np.argsort(dst, kind="stable").tolist():
        inc[int(dst[e])].append(e)
    out: list[list[tuple[list[int], float]]] = [[] for _ in range(n * n)]
    srcl = src.tolist()
    for s in range(n):
        g = (solution.flow[s] / solution.throughput_bytes_per_s).tolist()
        g = [x if x > tol else 0.0 for x in g]
        for t in range(n):
            if t == s:
                continue
            rem, found = 1.0, []
            while rem > tol:
                path, seen, v = [], {t: 0}, t
                while v != s:
                    best, e = 0.0, -1
                    for x in inc[v]:
                        if g[x] > best:
                            best, e = g[x], x
                    if e < 0:
                        break
                    u = srcl[e]
                    if u in seen:                        # a flow cycle: cancel it and go on from u
                        cyc = path[seen[u]:] + [e]
                        low = min(g[x] for x in cyc)
                        for x in cyc:
                            g[x] = g[x] - low if g[x] - low > tol else 0.0
                        for x in path[seen[u]:]:
                            seen.pop(srcl[x], None)
                        del path[seen[u]:]
                        seen[u] = len(path)
                        v = u
                        continue
                    path.append(e)
                    seen[u] = len(path)
                    v = u
                if v != s:
                    if rem > 1e-3:
                        raise InputError(f"{system.topology}: the LP flow of n{s} cannot be traced back from "
                                         f"n{t} ({rem:.3g} of the block left)")
                    break
                amount = min(rem, min(g[x] for x in path))
                for x in path:                           # what solver noise leaves below tol is dropped
                    g[x] = g[x] - amount if g[x] - amount > tol else 0.0
                rem -= amount
                found.append((path[::-1], amount))
            total = sum(w for _, w in found)
            out[s * n + t] = [(p, w / total) for p, w in found]
    return out


def round_shares(shares: np.ndarray, split: int) -> np.ndarray:
    """Whole numbers of sub-flows summing to ``split``, closest to ``split * shares`` (largest remainders).

    References
    ----------
    M. L. Balinski, H. P. Young, *Fair Representation*, Yale University Press, 1982 (Hamilton's
    largest-remainder apportionment).
    """
    want = shares * split
    k = np.floor(want + 1e-9).astype(INDEX)
    extra = split - int(k.sum())
    if extra > 0:
        k[np.argsort(-(want - k), kind="stable")[:extra]] += 1
    return k


def _routes(paths, n: int, split: int) -> tuple[np.ndarray, np.ndarray, LinkRoutes]:
    """Transfers (s, t) in order and their routes: ``split`` sub-flow paths each."""
    pairs = [(s, t) for s in range(n) for t in range(n) if s != t]
    links: list[int] = []
    lengths: list[int] = []
    for s, t in pairs:
        found = paths[s * n + t]
        counts = round_shares(np.array([w for _, w in found]), split)
        for (p, _), k in zip(found, counts.tolist()):
            for _ in range(k):
                links.extend(p)
                lengths.append(len(p))
    ptr = np.zeros(len(lengths) + 1, INDEX)
    np.cumsum(np.asarray(lengths, INDEX), out=ptr[1:])
    path_ptr = np.arange(len(pairs) + 1, dtype=INDEX) * split
    weight = np.full(len(lengths), 1.0 / split)
    s, t = (np.array(c, dtype=INDEX) for c in zip(*pairs)) if pairs else (np.zeros(0, INDEX),) * 2
    return s, t, LinkRoutes(ptr, np.asarray(links, INDEX), path_ptr, weight)


def congestion_s(system, routes: LinkRoutes, size_bytes: int) -> float:
    """The most any link must carry, in seconds at its bandwidth: ``max_e bytes_e / c_e``.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990 (the
    congestion of a routing, whose inverse is its concurrent-flow rate).
    """
    lt = system.links
    per_path = np.repeat(routes.weights, routes.path_hops) * float(size_bytes)
    load = np.bincount(routes.route_links, weights=per_path, minlength=len(lt))
    return float((load / lt.bandwidth_bytes_per_s).max()) if len(load) else 0.0


def _requires(system, collective: CollectiveType) -> str | None:
    if system.nodes < 2:
        return "needs at least two end nodes"
    return None


@register(
    "synth-alltoall", aliases=("mcf-alltoall",), collectives=("alltoall",), systems=("network",),
    params=("split", "max_variables"), requires=_requires,
    constraints="any connected network of at least 2 end nodes; the LP must fit (N x links variables)",
    reference="[Shahrokhi90] (max-concurrent-flow LP); [Huangfu18] (HiGHS); [Bertsekas92] ch. 6 "
              "(max-min fairness: why equal sub-flows)",
    summary="one step; each pair's block split over the paths of the max-concurrent-flow LP (HiGHS)",
)
def synth_alltoall(system, collective: CollectiveType, size_bytes, *, split: int = DEFAULT_SPLIT,
                   max_variables: int = MAX_VARIABLES):
    """Build the all-to-all from the network's max-concurrent-flow LP.

    Parameters
    ----------
    system : Network
        Any electrical network (switches, heterogeneous and one-way links included).
    collective : CollectiveType
        ``"alltoall"``.
    size_bytes : int
        Each (source, destination) block.
    split : int, optional
        Equal sub-flows per block (default 16); more follow the LP more closely and cost more
        paths to route and simulate.
    max_variables : int, optional
        Refuse LPs with more flow variables (:func:`collsim.kinds.network.mcf.check_lp_size`).

    Returns
    -------
    tuple
        ``(LogicalSchedule with explicit routes, params)``; params record ``split``, the LP's
        ``throughput_bytes_per_s`` (λ*), ``bound_s`` (block / λ*), ``congestion_s`` (the rounded
        schedule's bandwidth time); no wall-clock time (a schedule file is the same on every run).

    Raises
    ------
    InputError
        A bad ``split``, an LP too large (with its estimate), or an unsolvable LP.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990;
    Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Mathematical
    Programming Computation 10, 2018.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Ring
    >>> s = collsim.build("synth-alltoall", Ring(nodes=4), "alltoall", "1MiB", split=2)
    >>> collsim.verify(s).transfers, s.routes.paths, s.params["split"]
    (12, 24, 2)
    """
    if isinstance(split, bool) or not isinstance(split, (int, np.integer)) or not 1 <= split <= 1024:
        raise InputError(f"split must be an integer 1..1024, got {split!r}")
    split = int(split)
    n = system.nodes
    sol = solve_mcf(system, max_variables=int(max_variables))
    paths = flow_paths(system, sol)
    s, t, routes = _routes(paths, n, split)
    coll = make_collective("alltoall", n, size_bytes)
    count = len(s)
    logical = LogicalSchedule(coll, np.zeros(count, INDEX), s, t, np.arange(count + 1, dtype=INDEX),
                              s * n + t, np.zeros(count, bool), routes=routes)
    params = {"split": split, "throughput_bytes_per_s": sol.throughput_bytes_per_s,
              "bound_s": float(size_bytes) / sol.throughput_bytes_per_s,
              "congestion_s": congestion_s(system, routes, size_bytes)}
    return logical, params


__all__ = ["DEFAULT_SPLIT", "congestion_s", "flow_paths", "round_shares", "synth_alltoall"]
