"""The lower bound of a collective on an electrical network: every bound collsim knows, in one function.

:func:`network_bound` takes the largest of the node, total-link, cut and (for all-to-all) the
max-concurrent-flow bounds and the hop chain, says which one binds, and :func:`bound_certificate`
gives that one's certificate.  Every command reads it through the kind's ``lower_bound_s``
(``compare``, ``tune``, ``sweep``, ``reproduce``, ``synthesize``, ``verify``, ``simulate``), so they
all print the same bound for the same instance (derivations: docs/derivations/lower-bounds.md).

Every bandwidth term is linear in the message size, so the terms are computed once per
(network, collective type, node count, root, shift) for one byte and scaled
(:func:`network_bound`'s notes); the hop chain does not depend on the size.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from ...core.collective import Collective
from ...core.errors import CollsimError
from .network import Network
from ...core.units import format_bandwidth, format_time
from .mcf import McfSolution, lp_size, mcf_bound, solve_mcf
from ...cost.bounds import traffic_bound
from .cuts import cut_bound_s, cut_certificate

MCF_BOUND_MAX_VARIABLES = 20_000
"""Largest max-concurrent-flow LP (flow variables ``N L + 1``) the all-to-all bound solves.

Measured (HiGHS on this 2-core machine, shared): 16,385 variables 0.5-0.6 s and about 40 MB,
35,801 variables 6.6 s, 65,537 variables 16 s (docs/derivations/lower-bounds.md, section (d)).
Larger networks keep the cheaper bounds, which on every built-in topology already equal it."""

TERMS = ("cut", "max-concurrent flow", "link crossings", "receive", "send")
"""The bandwidth terms, in the order that breaks ties (within :data:`TIE`): a cut is the plainest certificate."""
TIE = 1e-9
"""Terms within this relative distance of the largest count as equal (the LP's optimum carries rounding)."""


@dataclass(frozen=True)
class NetworkBound:
    """A collective's lower bound on a network, term by term (see :func:`network_bound`).

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication: theory,
    practice, and experience", Concurrency and Computation: Practice and Experience 19(13), 2007;
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990.
    """

    time_s: float
    binding: str
    startup_s: float
    latency_s: float
    chain_s: float
    load_s: dict = field(default_factory=dict)

    @property
    def bandwidth_s(self) -> float:
        """The largest bandwidth term (seconds of link time)."""
        return max(self.load_s.values(), default=0.0)


@dataclass(frozen=True)
class TermCertificate:
    """Why a node, total-link or hop-chain term bounds every schedule, in words.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (latency per message); E. Chan et al., Concurrency and Computation:
    Practice and Experience 19(13), 2007 (per-node and total-link bounds).
    """

    bound_s: float
    term: str
    certificate: str


class _PerByte(NamedTuple):
    """The size-independent parts of :func:`network_bound`: loads of one byte, the chain and its ends."""

    load: dict
    chain_s: float
    chain_pair: tuple[int, int]
    latency_s: float
    startup_s: float
    words: dict
    mcf: McfSolution | None


def network_bound(system: Network, collective: Collective) -> NetworkBound:
    """Every lower bound collsim knows for a collective on a network, and which one binds.

    Notes
    -----
    All-to-all and shift cross at least their routes' hops (each pair's block, at least its hop
    distance: every network's routes are shortest, ``N (N-1) <= 1.1e6`` i.e. ``N <= 1049``;
    one crossing per pair above).

    The max-concurrent-flow rule: the LP is solved only when the routing's own flow does not
    already reach the cheaper bound and the LP has at most :data:`MCF_BOUND_MAX_VARIABLES` flow
    variables.  The network's routing carries every pair's block at the same rate, a concurrent
    flow, so ``m / λ*`` is at most its busiest link's ``load / bandwidth``; when that equals the
    cheaper bound (every built-in topology: rings, meshes, tori, hypercubes, fat trees, MLFM,
    stars), no LP can raise it.  An LP that HiGHS does not solve leaves the cheaper bounds.
    Every term is computed for one byte once per (network, collective type, nodes, root,
    shift) and scaled by the size: the bound is affine in ``m`` (``latency + k m``) wherever the
    bandwidth terms bind.

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007 (bandwidth lower bounds); R. W. Hockney, "The communication
    challenge for MPP: Intel Paragon and Meiko CS-2", Parallel Computing 20(3), 1994 (the
    latency term); F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", Journal
    of the ACM 37(2), 1990.
    """
    k = _per_byte(system, collective)
    m = float(collective.size_bytes)
    load = {name: per * m for name, per in k.load.items()}
    top = max(load.values(), default=0.0)
    if k.chain_s > k.latency_s + top:
        binding = "hop chain"
    else:
        binding = next(name for name in TERMS if name in load and load[name] >= top * (1 - TIE))
    time_s = k.startup_s + max(k.latency_s + top, k.chain_s)
    return NetworkBound(float(time_s), binding, k.startup_s, k.latency_s, k.chain_s, load)


def network_lower_bound_s(system: Network, collective: Collective) -> float:
    """Lower bound on the time of a collective on an electrical network: :func:`network_bound`'s time.

    References
    ----------
    E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
    theory, practice, and experience", Concurrency and Computation: Practice and
    Experience 19(13), 2007.
    """
    return network_bound(system, collective).time_s


def bound_certificate(system: Network, collective: Collective) -> Any:
    """The certificate of the term that binds :func:`network_bound`.

    References
    ----------
    F. Shahrokhi, D. W. Matula, "The maximum concurrent flow problem", JACM 37(2), 1990; L. R.
    Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of Mathematics 8, 1956.
    """
    bound = network_bound(system, collective)
    if bound.binding == "max-concurrent flow":
        k = _per_byte(system, collective)
        return mcf_bound(system, collective.size_bytes, solution=k.mcf)
    if bound.binding == "cut":
        return cut_certificate(system, collective)
    k = _per_byte(system, collective)
    m = float(collective.size_bytes)
    if bound.binding == "hop chain":
        u, v = k.chain_pair
        text = (f"{system.vertex_name(u)}'s data must reach {system.vertex_name(v)}, and the cheapest route "
                f"between them has {format_time(k.chain_s)} of link latency: every chain of messages that "
                f"carries it pays that" + (f", plus a start-up of {format_time(k.startup_s)}" if k.startup_s else ""))
    else:
        amount, capacity, words = k.words[bound.binding]
        text = words.format(a=f"{amount * m:.6g}", c=format_bandwidth(capacity))
    return TermCertificate(bound.time_s, bound.binding, text)


_CACHE: OrderedDict = OrderedDict()
_CACHED = 16
"""Networks and collective types whose per-byte terms are kept (least recently used dropped)."""


def _per_byte(system: Network, collective: Collective) -> _PerByte:
    """:func:`network_bound`'s terms for a 1-byte message, computed once per network and collective type."""
    key = (system, collective.name, collective.nodes, collective.root, collective.shift)
    try:
        hit = _CACHE.get(key)
    except TypeError:                       # an unhashable system: no cache
        return _terms(system, replace(collective, size_bytes=1))
    if hit is None:
        hit = _CACHE[key] = _terms(system, replace(collective, size_bytes=1))
        while len(_CACHE) > _CACHED:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    return hit


def _terms(system: Network, c: Collective) -> _PerByte:
    """:func:`network_bound`'s terms of ``c``, a 1-byte message (every bandwidth term is linear in m)."""
    n = c.nodes
    lt = system.links
    bw = lt.bandwidth_bytes_per_s
    out_bw = float(np.bincount(lt.src, weights=bw, minlength=system.vertices)[:n].max())
    in_bw = float(np.bincount(lt.dst, weights=bw, minlength=system.vertices)[:n].max())
    total_bw = float(bw.sum())
    t = traffic_bound(c)
    crossings, routed = t.hop_bytes_ring, False
    if c.type.point_to_point:  # each block crosses its route (shortest on every network)
        s, d = c.type.endpoints(n, c.shift)
        routed = len(s) <= 1_100_000
        crossings = float(np.diff(system.route(s, d)[0]).sum()) if routed else float(len(s))
    load = {"cut": cut_bound_s(system, c), "link crossings": crossings / total_bw,
            "receive": t.recv_bytes / in_bw, "send": t.send_bytes / out_bw}
    words = {"link crossings": (crossings, total_bw, "{a} B must cross links in all (each block at least its "
                                                     "route's hops), over links of {c} in all"),
             "receive": (t.recv_bytes, in_bw, "{a} B must reach some node, and no node has more than {c} of "
                                              "links into it"),
             "send": (t.send_bytes, out_bw, "{a} B must leave some node, and no node has more than {c} of "
                                            "links out of it")}
    solution = None
    if c.type.per_pair and routed:
        solution = _flow_lp(system, c, max(load.values()))
        if solution is not None:
            load["max-concurrent flow"] = 1.0 / solution.throughput_bytes_per_s
    chain_s, pair = _chain(system, c)
    return _PerByte(load, chain_s, pair, float(lt.latency_s.min()), float(system.startup_s or 0.0), words, solution)


def _flow_lp(system: Network, c: Collective, cheap_per_byte: float) -> McfSolution | None:
    """The all-to-all LP's optimum when it may raise the cheaper bound and is small enough (else None).

    The routing's flow, one byte per ordered pair (ECMP paths by their shares), loads link ``e``
    with ``load_e``; it is a concurrent flow of rate ``1 / max_e(load_e / c_e)``, so ``1 / λ* <=
    max_e(load_e / c_e)``.
    """
    if lp_size(system)["variables"] > MCF_BOUND_MAX_VARIABLES:
        return None
    routes = system.routes(*c.type.endpoints(c.nodes, c.shift))
    bw = system.links.bandwidth_bytes_per_s
    per_entry = np.repeat(routes.weights, routes.path_hops)
    load = np.bincount(routes.route_links, weights=per_entry, minlength=len(bw))
    if float((load / bw).max(initial=0.0)) <= cheap_per_byte * (1 + 1e-12):
        return None
    try:
        return solve_mcf(system)
    except CollsimError:                    # not solved (or refused): the cheaper bounds stand
        return None


def _latencies_from(system: Network, source: int, *, reverse: bool = False) -> np.ndarray:
    """Smallest summed link latency from ``source`` to every vertex (to it, if ``reverse``).

    Bellman-Ford relaxations over the whole link table at once; it stops when nothing
    improves, after at most the hop diameter of the network rounds.
    """
    lt = system.links
    a, b = (lt.dst, lt.src) if reverse else (lt.src, lt.dst)
    dist = np.full(system.vertices, np.inf)
    dist[source] = 0.0
    for _ in range(system.vertices):
        new = dist.copy()
        np.minimum.at(new, b, dist[a] + lt.latency_s)
        if np.array_equal(new, dist):
            break
        dist = new
    return dist


def _chain(system: Network, collective: Collective) -> tuple[float, tuple[int, int]]:
    """:func:`latency_chain_s` and the pair ``(from, to)`` that sets it."""
    n = system.nodes
    t = collective.type
    root = int(collective.root or 0)
    if t.shifted:
        q = (collective.shift or 1) % n
        return float(_latencies_from(system, 0)[q]), (0, q)
    if t.rooted and t.direction == "out":   # reduce, gather: into the root
        dist = _latencies_from(system, root, reverse=True)[:n]
        far = int(np.argmax(dist))
        return float(dist[far]), (far, root)
    start = root if t.rooted else 0
    dist = _latencies_from(system, start)[:n]
    far = int(np.argmax(dist))
    return float(dist[far]), (start, far)


def latency_chain_s(system: Network, collective: Collective) -> float:
    """Route latency some required delivery pays: the farthest pair a collective must connect.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (latency per message); E. Chan, M. Heimlich,
    A. Purkayastha, R. van de Geijn, "Collective communication: theory, practice, and
    experience", Concurrency and Computation: Practice and Experience 19(13), 2007
    (the log p and p-1 latency lower bounds this hop chain complements).
    """
    return _chain(system, collective)[0]


__all__ = ["MCF_BOUND_MAX_VARIABLES", "TERMS", "TIE", "NetworkBound", "TermCertificate", "bound_certificate",
           "latency_chain_s", "network_bound", "network_lower_bound_s"]
