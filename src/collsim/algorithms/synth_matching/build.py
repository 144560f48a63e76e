"""Synthesized all-gather, reduce-scatter and all-reduce: link-chunk matching over time.

The synthesizer builds an explicit schedule from the network's graph alone, in the
spirit of TACOS's greedy link-chunk matching over a time-expanded network [TACOS23]:

* each node's block is cut into ``chunks`` pieces; a link may carry up to
  ``capacity`` pieces per step, scaled by its bandwidth relative to the slowest
  link, so that every link's step takes about the same time;
* step by step, every link ``u -> v`` picks pieces that ``u`` holds and ``v`` lacks
  and that no other link brings to ``v`` in that step, rarest piece first (fewest
  holders), ties broken by a seeded permutation; the pieces it picks travel as one
  transfer, so within a step every link carries at most one flow and the flow
  simulator's time equals the synthesizer's prediction;
* several seeds and piece/capacity choices are tried and the schedule with the
  smallest predicted time is kept (size-aware: a small message takes few pieces
  and unlimited capacity, i.e. flooding in as many steps as the graph's radius).

Reduce-scatter is the time-reversed all-gather on the reversed graph: every
piece's dissemination tree is an arborescence, so reversing it combines each
contribution exactly once on its way to the owner.  All-reduce is reduce-scatter
followed by all-gather.

Through switches the plan is made on circulant overlays of logical links between end
nodes (:mod:`collsim.algorithms.synth_matching.overlays`).  The matching itself is in
:mod:`collsim.algorithms.synth_matching.step`, the search over its choices in
:mod:`collsim.algorithms.synth_matching.search`; docs/synthesis.md.

References
----------
W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301,
2023 (greedy link-chunk matching over a time-expanded network).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.collective import make_collective
from ...core.collectives import CollectiveType
from ...core.errors import InputError
from ...core.limits import limit_error, memory_limit_bytes
from ...core.schedule import LogicalBuilder, LogicalSchedule
from ...core.time_limit import TimeLimitError
from ...core.validate import optional_integer
from ..common import check_root
from ..registry import register
from .effort import early_reason, schedule_floor_bytes
from .overlays import Overlay
from .search import _best_over, _choices, _floor_s, _networks, _once, best_plan
from .step import PREFERENCES, Plan, _direct_links


def _unreachable(system) -> str | None:
    """Why some end node cannot reach, or be reached from, node 0 over the network's links, or None."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order
    lk = system.links
    keep = lk.bandwidth_bytes_per_s > 0
    v, n = system.vertices, system.nodes
    g = coo_matrix((np.ones(int(keep.sum())), (lk.src[keep], lk.dst[keep])), shape=(v, v)).tocsr()
    for graph, word in ((g, "from"), (g.T.tocsr(), "to")):
        seen = np.zeros(v, bool)
        seen[breadth_first_order(graph, 0, directed=True, return_predecessors=False)] = True
        if not seen[:n].all():
            bad = np.flatnonzero(~seen[:n])
            names = ", ".join(str(x) for x in bad[:8]) + (" ..." if len(bad) > 8 else "")
            return (f"node(s) {names} cannot be reached from node 0" if word == "from"
                    else f"node(s) {names} cannot reach node 0")
    return None


def requires(system, collective: CollectiveType) -> str | None:
    """Why the matching cannot run here: end nodes not strongly connected, too many of them, or links
    the network cannot hold all at once.

    Even the cheapest plan is estimated from closed forms first (:func:`.effort.early_reason`):
    a network where it would exceed collsim's time limit is refused before its links are built.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.
    """
    if system.configurations() is not None:
        return ("the matching may use any link in any step, and this network holds only some of its links at "
                "once (synth-trees packs one configuration)")
    return early_reason(system, collective) or _unreachable(system)

def _tune(system, collective: CollectiveType, size_bytes):
    n = system.nodes
    if system.vertices != system.nodes:  # through switches the choice that matters is the overlay
        return [{"overlay": name} for name, _ in _networks(system, None)]
    else:
        src, _, _, _ = _direct_links(system)
        degree = int(np.bincount(src, minlength=n).max())
    rooted = collective.rooted
    return [{"chunks": k, "capacity": q} for k, q in _choices(n, degree, rooted)]

def owner_weights(net) -> np.ndarray:
    """Shares of an all-reduce's vector to leave on each node after its reduce-scatter.

    A node owning a share ``w_v`` must receive the other ``1 - w_v`` of the result in the
    all-gather and send as much in the reduce-scatter, so each phase takes at least
    ``(1 - w_v) M / c_v`` with ``c_v`` the smaller of its in- and out-bandwidth.  Equalising
    that time over the nodes that own anything, ``w_v = max(0, 1 - tau c_v)`` with ``sum w = 1``
    (water-filling).  On a regular graph every share is ``1/N``; on a mesh the corners, with
    two links, keep the most.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2), 2009 (reduce-scatter then all-gather).
    """
    from scipy.optimize import brentq
    n = net.nodes
    src, dst, bw, _ = _direct_links(net)
    c = np.minimum(np.bincount(dst, weights=bw, minlength=n), np.bincount(src, weights=bw, minlength=n))
    if np.allclose(c, c[0]):
        return np.full(n, 1.0 / n)
    r = c / c.min()             # in units of the slowest node: brentq's tolerance is absolute, and
    #                             1 / c at 100 GB/s is 1e-11, below it (every share came out 0)
    tau = brentq(lambda x: np.maximum(0.0, 1.0 - x * r).sum() - 1.0, 0.0, 1.0, xtol=1e-15)
    w = np.maximum(0.0, 1.0 - tau * r)
    return w / w.sum()


def _ownerships(net, fixed: str | None) -> list[tuple[str, object]]:
    """(label, owners(chunks) or None) for an all-reduce: uniform, and weighted where it differs."""
    from ..synth_alltoall import round_shares
    if fixed not in (None, "uniform", "weighted"):
        raise InputError(f"synth-matching: ownership must be uniform or weighted, got {fixed!r}")
    w = owner_weights(net)
    weighted = lambda k: np.repeat(np.arange(net.nodes), round_shares(w, net.nodes * k))  # noqa: E731
    out = [("uniform", None)]
    if fixed == "weighted" or (fixed is None and not np.allclose(w, 1.0 / net.nodes)):
        out.append(("weighted", weighted))
    return [o for o in out if fixed is None or o[0] == fixed]

@register(
    "synth-matching", aliases=("tacos-like",), collectives=("allgather", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("network",), params=("chunks", "capacity", "seed", "prefer", "root", "overlay", "ownership"), requires=requires, tune=_tune,
    constraints="end nodes strongly connected (through switches: planned on circulant overlays)",
    reference="[TACOS23] (greedy link-chunk matching over a time-expanded network); collsim's rarest-first "
              "matching, seeded search, broadcast pipelined from the root, reversal for reduce-scatter "
              "and reduce, and circulant overlays of switched networks (docs/synthesis.md)",
    summary="synthesized from the graph: per step, each link carries pieces its head lacks, rarest first",
)
def synth_matching(system, collective: CollectiveType, size_bytes, *, chunks: int | None = None,
                   capacity: int | None = None, seed: int | None = None, prefer: str | None = None, root: int = 0,
                   overlay: str | None = None, ownership: str | None = None):
    """Synthesize an all-gather, reduce-scatter, all-reduce, broadcast or reduce for this network.

    Parameters
    ----------
    system : Network
        A network: end nodes joined by direct links, or through switches (then the plan is made
        on circulant overlays of logical links, :mod:`collsim.algorithms.synth_matching.overlays`).
    collective : CollectiveType
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast`` or ``reduce``.
    size_bytes : int
        Message size (collsim's meaning per collective: all-gather's total output).
    chunks, capacity, seed : int, optional
        Pieces per block, pieces per step on the slowest link, tie-break seed; searched
        (smallest predicted time) when not given.
    prefer : str, optional
        Which lacking pieces a link takes first (not for broadcast and reduce): ``rarest`` (the
        fewest holders) or ``fresh`` (those no other in-neighbour of its head holds or was
        brought this step, then the rarest; :func:`~collsim.algorithms.synth_matching.step.match`).
        Searched on networks of up to 32 end nodes when not given, ``rarest`` above.
    root : int, optional
        Root of a broadcast or reduce (default 0).
    overlay : str, optional
        On a switched network, fix the overlay (``ring``, ``near-d``, ``doubling`` or
        ``direct``) instead of searching it.
    ownership : str, optional
        All-reduce only: ``uniform`` (every node ends the reduce-scatter with ``1/N`` of the
        vector) or ``weighted`` (a node's share shrinks with its bandwidth, see
        :func:`owner_weights`); both are tried when not given.

    Returns
    -------
    tuple
        ``(LogicalSchedule, chosen parameters)`` with ``predicted_time_s``.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("synth-matching", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)})
    >>> collsim.verify(s).transfers > 0
    True
    >>> s = collsim.build("synth-matching", "star", "allgather", "1MiB", system_options={"nodes": 4})
    >>> s.params["overlay"], collsim.verify(s).transfers
    ('direct', 12)
    """
    n = system.nodes
    optional_integer("synth-matching: seed", seed, lo=0)  # numpy's generators take no negative seed
    if ownership is not None and not collective.composed_of:
        raise InputError(f"synth-matching: ownership applies to allreduce (who keeps which share between its "
                         f"reduce-scatter and all-gather), not to {collective.name}")
    nets = _fitting(_networks(system, None if overlay is None else str(overlay)), collective, n)
    if prefer is not None and prefer not in PREFERENCES:
        raise InputError(f"synth-matching: prefer must be one of {', '.join(PREFERENCES)}, not {prefer!r}")
    if prefer not in (None, "rarest") and collective.rooted:
        raise InputError(f"synth-matching: prefer={prefer} applies to all-gather, reduce-scatter and all-reduce; "
                         f"a {collective.name}'s links take the root's pieces in their own order")
    kw = dict(chunks=chunks, capacity=capacity, seed=seed, prefer=prefer)
    if collective.rooted:   # broadcast, or reduce (the broadcast reversed, reducing)
        root = check_root(root, n)
        sizes = lambda k: make_collective(collective, n, size_bytes, split=k, root=root).bytes_of(  # noqa: E731
            np.arange(k))
        plan, chosen, net = _best_over(nets, sizes, reverse=collective.reduction, root=root, **kw)
        b = LogicalBuilder(make_collective(collective, n, size_bytes, split=chosen["chunks"], root=root))
        _add(b, plan, reduce=collective.reduction, offset=0)
        chosen.update(root=root, predicted_time_s=plan.predicted_time_s)
        return _routed(b.build(), net), chosen
    if collective.composed_of:   # all-reduce: a reduce-scatter and an all-gather on one overlay
        block = lambda k: make_collective("allreduce", n, size_bytes, split=n * k).bytes_of(  # noqa: E731
            np.arange(n * k))
        best, refused = None, None
        direct_first = sorted(nets, key=lambda item: (not (isinstance(item[1], Overlay) and item[1].direct),))
        for name, net in direct_first:  # the reduce-scatter and all-gather share one overlay: judge them together
            if best is not None and name is not None and \
                    _floor_s(net, block, reverse=True) + _floor_s(net, block) >= best[0]:
                continue
            for label, owners in _ownerships(net, ownership):
                try:
                    rs, chosen = best_plan(net, block, reverse=True, owners=owners, **kw)
                except TimeLimitError as exc:  # this overlay's matching would take too long: the others may not
                    refused = refused or exc
                    continue
                ag = _once(net, chosen["chunks"], chosen["capacity"], chosen["seed"], block, owners=owners,
                           prefer=chosen["prefer"])
                if name is not None:
                    chosen["overlay"] = name
                chosen["ownership"] = label
                if best is None or rs.predicted_time_s + ag.predicted_time_s < best[0]:
                    best = (rs.predicted_time_s + ag.predicted_time_s, rs, ag, chosen, net)
        if best is None:
            raise refused
        _, rs, ag, chosen, net = best
        coll = make_collective("allreduce", n, size_bytes, split=n * chosen["chunks"])
        b = LogicalBuilder(coll)
        _add(b, rs, reduce=True, offset=0)
        _add(b, ag, reduce=False, offset=rs.steps)
        chosen["predicted_time_s"] = rs.predicted_time_s + ag.predicted_time_s
        return _routed(b.build(), net), chosen
    block = lambda k: make_collective(collective, n, size_bytes, split=k).bytes_of(np.arange(n * k))  # noqa: E731
    plan, chosen, net = _best_over(nets, block, reverse=collective.reduction, **kw)   # reduce-scatter: reversed
    coll = make_collective(collective, n, size_bytes, split=chosen["chunks"])
    b = LogicalBuilder(coll)
    _add(b, plan, reduce=collective.reduction, offset=0)
    chosen["predicted_time_s"] = plan.predicted_time_s
    return _routed(b.build(), net), chosen


def _route_hops(net) -> float:
    """Links on a logical link's route, on average (1 on a network of direct links)."""
    if not isinstance(net, Overlay) or net.routes is None or not len(net.routes):
        return 1.0
    return float(np.mean(net.routes.path_hops))


def _fitting(nets, collective: CollectiveType, n: int):
    """The candidate networks (or overlays) on which the collective's schedule can fit in memory
    (:func:`~collsim.algorithms.synth_matching.effort.schedule_floor_bytes`), refused with the
    least estimate before planning if none can."""
    floors = [schedule_floor_bytes(n, collective, _route_hops(net)) for _, net in nets]
    keep = [item for item, (_, need) in zip(nets, floors) if need <= memory_limit_bytes()]
    if not keep:
        i = min(range(len(nets)), key=lambda k: floors[k][1])
        deliveries, need = floors[i]
        raise limit_error(need, f"synth-matching's {collective.name} on {n} nodes (at least {deliveries:.3g} chunk "
                                f"deliveries, one transfer each, routed over {_route_hops(nets[i][1]):.3g} links on "
                                f"average)", "use fewer nodes or another algorithm")
    return keep


def _routed(logical: LogicalSchedule, net) -> LogicalSchedule:
    """The schedule with the routes its overlay already holds (a network of direct links: routed later)."""
    if not isinstance(net, Overlay) or net.routes is None:
        return logical
    return replace(logical, routes=net.routes_of(logical.src, logical.dst))


def _add(b: LogicalBuilder, plan: Plan, *, reduce: bool, offset: int) -> None:
    """One transfer per (step, link) carrying its pieces; reversed in time and direction if ``reduce``."""
    if not len(plan.piece):
        return
    step = plan.steps - 1 - plan.step if reduce else plan.step
    src, dst = (plan.dst, plan.src) if reduce else (plan.src, plan.dst)
    order = np.lexsort((plan.piece, dst, src, step))
    step, src, dst, piece = step[order], src[order], dst[order], plan.piece[order]
    new = np.flatnonzero(np.concatenate(([True], (step[1:] != step[:-1]) | (src[1:] != src[:-1])
                                         | (dst[1:] != dst[:-1]))))
    b.add(step[new] + offset, src[new], dst[new], piece, chunk_ptr=np.append(new, len(piece)), reduce=reduce)
