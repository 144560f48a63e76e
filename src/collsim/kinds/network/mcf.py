"""The max-concurrent-flow bound of all-to-all on any electrical network, from an LP solved with HiGHS.

Every ordered pair ``(s, t)`` of end nodes must move one block of ``m`` bytes.  If all pairs
move their blocks at the same rate ``λ`` (bytes per second, a *concurrent* flow), the
largest ``λ`` the link capacities allow is the optimum of the max-concurrent-flow LP, and no
schedule finishes before ``m / λ*``: a schedule taking ``T`` seconds *is* a concurrent flow
of rate ``m / T`` averaged over time.

The LP is the edge formulation aggregated per source (one commodity per source node, whose
flow leaves the source at ``(N - 1) λ`` and is absorbed, ``λ`` each, at every other end node):

.. math::

   \\max λ \\quad\\text{s.t.}\\quad \\sum_{e \\in out(v)} f_{s,e} - \\sum_{e \\in in(v)} f_{s,e}
   = b_{s,v} λ, \\qquad \\sum_s f_{s,e} \\le c_e, \\qquad f \\ge 0,

``N L + 1`` variables and ``N V + L`` rows (``L`` directed links, ``V`` vertices).  Its dual
is the certificate: link lengths ``d_e >= 0`` with ``λ* = Σ c_e d_e / Σ_{s≠t} dist_d(s, t)``;
any schedule must move ``m Σ dist_d(s, t)`` length-bytes through links that carry at most
``Σ c_e d_e`` length-bytes per second.

References
----------
F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", Journal of the ACM 37(2),
1990; Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method",
Mathematical Programming Computation 10, 2018 (HiGHS).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import InputError, UnsupportedError
from ...core.limits import MemoryLimitError, check_memory

BYTES_PER_NONZERO = 600
"""Peak bytes per constraint-matrix nonzero while HiGHS solves the LP (interior point with
crossover; measured about 500 on tori, meshes and fat trees)."""
MAX_VARIABLES = 3_000_000
"""Largest LP (flow variables) solved by default: beyond it the solve takes many minutes."""
MAX_ROUNDS = 4
"""Restricted LPs tried before the full one (see :func:`solve_mcf`)."""
TIME_LIMIT_S = 600.0
"""HiGHS's time limit; an LP not solved by then is refused."""
MAX_CAPACITY_SPREAD = 1e12
"""Largest ratio of the fastest to the slowest link the LP is solved for: HiGHS's tolerances are relative
(measured on a star with one slow leg: exact up to 1e12, a rate of 0 at 1e15)."""


def lp_size(system) -> dict[str, int]:
    """Variables, rows and nonzeros of the max-concurrent-flow LP of a network, without building it.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """
    n, v = system.nodes, system.vertices
    links = system.link_count()
    links = len(system.links) if links is None else links
    nnz = 3 * n * links + n * v
    return {"variables": n * links + 1, "rows": n * v + links, "nonzeros": nnz, "bytes": nnz * BYTES_PER_NONZERO}


def check_lp_size(system, max_variables: int = MAX_VARIABLES) -> dict[str, int]:
    """Refuse, before building anything, an LP that would exceed memory or the variable limit.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """
    size = lp_size(system)
    what = (f"the all-to-all max-concurrent-flow LP of the {system.topology} network of {system.nodes} nodes has "
            f"{size['variables']:,} variables and {size['nonzeros']:,} nonzeros")
    if size["variables"] > max_variables:
        raise MemoryLimitError(f"{what} (about {size['bytes'] / 2**30:.0f} GiB to solve), above the limit of "
                         f"{max_variables:,} variables: use a network of at most a few hundred nodes")
    check_memory(size["bytes"], what, "use a smaller network")
    return size


@dataclass(frozen=True, eq=False)
class McfSolution:
    """An optimal max-concurrent flow of an all-to-all (see :func:`solve_mcf`).

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """

    throughput_bytes_per_s: float
    flow: np.ndarray = field(repr=False)
    length: np.ndarray = field(repr=False)
    solve_s: float
    size: dict


@dataclass(frozen=True)
class McfBound:
    """The all-to-all max-concurrent-flow lower bound (see :func:`mcf_bound`).

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """

    time_s: float
    bandwidth_time_s: float
    latency_s: float
    throughput_bytes_per_s: float
    certificate: str
    solve_s: float


def _matrices(system, s: np.ndarray, e: np.ndarray):
    """Equality and capacity rows of the LP over the flow variables ``(source s, link e)`` and λ (last)."""
    import scipy.sparse as sp
    lt = system.links
    n, nv, nl = system.nodes, system.vertices, len(lt)
    k = len(s)
    col = np.arange(k, dtype=np.int64)
    b = np.zeros((n, nv))
    b[:, :n] = -1.0
    b[np.arange(n), np.arange(n)] = n - 1
    rows = np.concatenate([s * nv + lt.src[e], s * nv + lt.dst[e], np.arange(n * nv)])
    cols = np.concatenate([col, col, np.full(n * nv, k)])
    vals = np.concatenate([np.ones(k), -np.ones(k), -b.reshape(-1)])
    a_eq = sp.csr_matrix((vals, (rows, cols)), shape=(n * nv, k + 1))
    a_ub = sp.csr_matrix((np.ones(k), (e, col)), shape=(nl, k + 1))
    return a_eq, a_ub


def _distances(system, length: np.ndarray) -> np.ndarray:
    """Shortest-path distances ``[end node, vertex]`` under link lengths (a tiny floor keeps zero-length links)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path
    lt = system.links
    nv = system.vertices
    w = length + max(float(length.max()), 1e-300) * 1e-9
    key = lt.src * nv + lt.dst
    order = np.lexsort((w, key))                         # parallel links: the shortest one
    first = np.ones(len(key), bool)
    first[1:] = key[order][1:] != key[order][:-1]
    keep = order[first]
    g = sp.csr_matrix((w[keep], (lt.src[keep], lt.dst[keep])), shape=(nv, nv))
    return shortest_path(g, directed=True, indices=np.arange(system.nodes))


def _check_reachable(system) -> None:
    """Raise InputError naming an end node that cannot reach, or be reached from, end node 0 over the links."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order
    lt = system.links
    g = sp.csr_matrix((np.ones(len(lt)), (lt.src, lt.dst)), shape=(system.vertices, system.vertices))
    for graph, what in ((g, "cannot be reached from n0"), (g.T.tocsr(), "cannot reach n0")):
        seen = np.zeros(system.vertices, bool)
        seen[breadth_first_order(graph, 0, directed=True, return_predecessors=False)] = True
        lost = np.flatnonzero(~seen[:system.nodes])
        if lost.size:
            raise InputError(f"{system.topology}: end node n{int(lost[0])} {what} over the links "
                             f"({lost.size} such end node{'s' if lost.size > 1 else ''}): no all-to-all can complete")


def solve_mcf(system, *, max_variables: int = MAX_VARIABLES, time_limit_s: float = TIME_LIMIT_S) -> McfSolution:
    """Solve the all-to-all max-concurrent-flow LP of a network with HiGHS (``scipy.optimize.linprog``).

    Notes
    -----
    The LP is first solved with each source's flow restricted to its minimum-hop links (a
    smaller, acyclic LP: half the variables on a mesh).  Its dual link lengths ``d`` bound the
    full LP: ``λ* <= Σ c_e d_e / Σ dist_d(s, t)``.  When the restricted optimum meets that bound
    (within 1e-6) it is the full optimum; otherwise the links on shortest ``d``-paths are
    added and the LP solved again, up to :data:`MAX_ROUNDS` times, then the full LP.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990;
    Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Mathematical
    Programming Computation 10, 2018.
    """
    from scipy.optimize import linprog
    n = system.nodes
    if n < 2:
        raise InputError("an all-to-all needs at least two end nodes")
    size = check_lp_size(system, max_variables)
    lt = system.links
    nl = len(lt)
    scale = float(lt.bandwidth_bytes_per_s.max())
    slowest = float(lt.bandwidth_bytes_per_s.min())
    if not slowest > 0 or scale / slowest > MAX_CAPACITY_SPREAD:
        raise UnsupportedError(f"the max-concurrent-flow LP is not solved for link bandwidths from {slowest:g} to "
                               f"{scale:g} B/s: they span more than {MAX_CAPACITY_SPREAD:g} times, beyond the "
                               f"solver's relative tolerances")
    cap = lt.bandwidth_bytes_per_s / scale
    hops = system.hop_table[1][:n]                      # hops from each end node to every vertex
    allowed = (hops[:, lt.src] >= 0) & (hops[:, lt.dst] == hops[:, lt.src] + 1)
    t0 = time.perf_counter()
    for attempt in range(MAX_ROUNDS + 1):
        if attempt == MAX_ROUNDS:
            allowed[:] = True                            # the full LP: optimal by construction
        s, e = np.nonzero(allowed)
        a_eq, a_ub = _matrices(system, s, e)
        c = np.zeros(a_eq.shape[1])
        c[-1] = -1.0
        left = max(1.0, float(time_limit_s) - (time.perf_counter() - t0))
        res = linprog(c, A_ub=a_ub, b_ub=cap, A_eq=a_eq, b_eq=np.zeros(a_eq.shape[0]), bounds=(0, None),
                      method="highs-ipm", options={"time_limit": left})
        if res.status != 0 or res.x is None:
            raise UnsupportedError(f"the max-concurrent-flow LP ({len(s) + 1:,} of {size['variables']:,} variables) "
                                   f"was not solved: {res.message.strip()}")
        lam = float(res.x[-1])
        if lam <= 0:
            _check_reachable(system)
            raise UnsupportedError(f"the max-concurrent-flow LP gave every pair a rate of 0 although every end node "
                                   f"reaches every other (link bandwidths {slowest:g} to {scale:g} B/s)")
        length = np.maximum(-np.asarray(res.ineqlin.marginals, float), 0.0)
        if allowed.all():
            break
        dist = _distances(system, length)                # the dual's bound on λ over every path, not just these
        upper = float(cap @ length) / float(dist[:, :n].sum())
        if np.isfinite(upper) and lam >= upper * (1 - 1e-6):
            break
        slack = dist[:, lt.src] + length[None, :] - dist[:, lt.dst]
        allowed |= slack <= 1e-9 * max(float(length.max()), 1e-300)   # links on shortest d-paths
    solve_s = time.perf_counter() - t0
    total = float(cap @ length)
    length = length / total if total > 0 else length
    flow = np.zeros((n, nl))
    flow[s, e] = np.maximum(res.x[:-1], 0.0) * scale
    return McfSolution(lam * scale, flow, length / scale, solve_s, size)


def mcf_bound(system, size_bytes: int, *, solution: McfSolution | None = None) -> McfBound:
    """The max-concurrent-flow lower bound on the time of an all-to-all of ``size_bytes`` per pair.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """
    sol = solve_mcf(system) if solution is None else solution
    lt = system.links
    bw_time = float(size_bytes) / sol.throughput_bytes_per_s
    latency = float((system.startup_s or 0.0) + lt.latency_s.min())
    top = np.argsort(-sol.length, kind="stable")[:4]
    named = ", ".join(f"{system.link_name(int(i))} {sol.length[i] * lt.bandwidth_bytes_per_s[i]:.3g}"
                      for i in top if sol.length[i] > 0)
    cert = (f"dual link lengths d with sum of c_e d_e = 1 (largest shares c_e d_e: {named}): every pair's "
            f"block crosses links of total length >= its d-distance, and by LP duality the pairs' "
            f"d-distances sum to 1/λ*, so no schedule moves every pair faster than "
            f"λ* = {sol.throughput_bytes_per_s:.6g} B/s")
    return McfBound(bw_time + latency, bw_time, latency, sol.throughput_bytes_per_s, cert, sol.solve_s)


__all__ = ["McfBound", "McfSolution", "check_lp_size", "lp_size", "mcf_bound", "solve_mcf"]
