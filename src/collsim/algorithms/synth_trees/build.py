"""Synthesized collectives from packed spanning trees (``synth-trees``), after ForestColl.

* **All-gather**: every end node roots arborescences carrying its block, packed at the exact cut
  bound's rate (:mod:`~collsim.algorithms.synth_trees.packing`), pipelined in rounds
  (:mod:`~collsim.algorithms.synth_trees.pipeline`).
* **Reduce-scatter**: the all-gather packed on the reversed links and run backwards in time with
  ``reduce = true``: every tree becomes an in-tree, and a node sends a piece to its parent once,
  after all its children have sent theirs, so every contribution is combined exactly once.
* **All-reduce**: that reduce-scatter, then the all-gather.
* **Broadcast**: arborescences from the root alone, at the root's min-cut rate (Edmonds);
  **reduce** is the reversed broadcast.

The number of pieces and rounds is chosen per size: the bandwidth time falls as ``1 / rounds``
of the packing's and each round adds the step latency, plus one round per tree level for the
pipeline to fill, so ``rounds`` near ``sqrt(depth x bandwidth time / latency)`` is best; a few
choices around it are timed exactly (per round: the most loaded link's bytes over its
bandwidth, plus the slowest path's latency and the start-up) and the fastest is kept.

References
----------
L. Zhao, S. Maleki, Z. Yang, H. Pourreza, A. Shah, C. Hwang, A. Krishnamurthy, "ForestColl:
Efficient collective communications on heterogeneous network fabrics", arXiv 2402.06787, 2024;
J. Edmonds, "Edge-disjoint branchings", Combinatorial Algorithms, 1973.
"""

from __future__ import annotations

import numpy as np

from ...core.collective import SPECS, canonical_collective, make_collective
from ...core.errors import InputError
from ...core.routes import INDEX, LinkRoutes
from ...core.schedule import LogicalSchedule
from ...core.validate import optional_integer
from ..common import check_root
from ..registry import register
from .packing import Packing, pack, translated
from . import timing
from .pipeline import Deliveries, per_round, pipeline

MAX_DELIVERIES = 1_000_000
"""Most chunk deliveries a synthesized schedule may hold (each costs about 64 bytes to build and
verify): the pieces per block are capped so that ``N x pieces x (N - 1)`` stays below it."""

MAX_END_NODES = 32
"""Largest network the packing is tried on without translations.  Each column-generation round
prices one arborescence per root on an ``N x N`` matrix and the rounds grow with ``N``: 2 s of CPU
for a 64-host fat tree, 4 s for an 8x8 mesh and 86 s for 128 GPUs in boxes of 8
(docs/synthesis.md), so larger networks are left to ``synth-matching`` until the pricing is
faster."""

MAX_TRANSLATED_END_NODES = 128
"""Largest network packed by translations (one root's trees moved to every root; its timing
programme a row per link orbit): the 10x10 torus's all-gather builds in 4 s.  Beyond, the cap on
chunk deliveries leaves a block too few pieces (a 16x16 torus: 15, 0.93 of the bound)."""


def requires(system, collective) -> str | None:
    """Why the packing cannot run here, or None.

    Parameters
    ----------
    system : Network
        The network.
    collective : str
        The collective (every supported one has the same needs).

    Returns
    -------
    str or None
        More than :data:`MAX_END_NODES` end nodes (:data:`MAX_TRANSLATED_END_NODES` where the
        packing moves one root's trees by translations), or end nodes that cannot reach each
        other (named); None when the packing applies.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> requires(load_system("mesh", dims=(3, 3)), "allgather") is None
    True
    """
    from ..synth_matching.build import _unreachable
    if system.nodes > MAX_TRANSLATED_END_NODES:
        return (f"the tree packing takes about N^4 operations (N = {system.nodes} end nodes); "
                f"collsim packs trees on up to {MAX_END_NODES} end nodes, {MAX_TRANSLATED_END_NODES} "
                f"on networks whose translations keep their links")
    if system.nodes > MAX_END_NODES and SPECS[canonical_collective(collective)].rooted:
        return (f"a root's trees are packed on up to {MAX_END_NODES} end nodes (N = {system.nodes}): "
                f"translations do not move a rooted collective's trees")
    if system.nodes > MAX_END_NODES and not translated(system):
        return (f"the tree packing takes about N^4 operations (N = {system.nodes} end nodes); "
                f"collsim packs trees on up to {MAX_END_NODES} end nodes of a network without "
                f"translations (tori, hypercubes and circuit switches have them: up to "
                f"{MAX_TRANSLATED_END_NODES})")
    return _unreachable(system)


def _link_arrays(system):
    lk = system.links
    return (np.asarray(lk.bandwidth_bytes_per_s, float), np.asarray(lk.latency_s, float),
            float(getattr(system, "startup_s", None) or 0.0))


def _physical_paths(system, packing: Packing, reverse: bool) -> list[np.ndarray]:
    """Link ids of every path, parent to child in the packing's direction (reversed: child to parent)."""
    keep = packing.link_ids
    return [keep[p][::-1] if reverse else keep[p] for p in packing.paths]


def _round_times(d: Deliveries, paths: list[np.ndarray], bw, lat, startup, piece_bytes) -> np.ndarray:
    """Each round's time: most loaded link's bytes over its bandwidth, plus the slowest latency."""
    hops = np.array([len(p) for p in paths], np.int64)
    plat = np.array([float(lat[p].sum()) for p in paths])
    nbytes = np.diff(d.chunk_ptr).astype(float) * piece_bytes
    per = hops[d.path]
    links = np.concatenate([paths[p] for p in d.path]) if len(d.path) else np.zeros(0, np.int64)
    rnd = np.repeat(d.round, per)
    load = np.bincount(rnd * len(bw) + links, weights=np.repeat(nbytes, per), minlength=d.rounds * len(bw))
    busy = (load.reshape(d.rounds, len(bw)) / bw[None, :]).max(axis=1)
    wait = np.zeros(d.rounds)
    np.maximum.at(wait, d.round, plat[d.path])
    return busy + wait + startup


MAX_PER_ROUND = 64
"""Most pieces a root sends a round (``m``): its trees' shares are rounded to multiples of ``1 / m``."""


def _plan(system, packing: Packing, reverse: bool, block_bytes: float, pieces: int | None,
          rounds: int | None, chunk_base: np.ndarray, mode: str = "auto", beat_s: float = np.inf,
          layered=None) -> tuple[Deliveries, int, int, float, str, Packing]:
    """The fastest plan: deliveries, pieces, rounds, predicted time, timing and the trees it uses.

    The uniform pipeline's (pieces a round ``m``, rounds ``K``):
    A full round takes ``max over links of (pieces crossing it) x piece / bandwidth`` plus the
    slowest path's latency and the start-up, the same every round; ``K + depth - 1`` rounds
    (:mod:`~collsim.algorithms.synth_trees.pipeline`).  Each ``m`` has its best ``K`` in closed
    form (``sqrt((depth - 1) x bandwidth time / latency)``), capped by :data:`MAX_DELIVERIES`.
    Timed rounds are sought on ``packing`` and on the shallowest trees (``layered()``, a
    packing made only when needed), and in ``auto`` mode only where they could beat both the
    pipeline and ``beat_s`` (another configuration's plan).
    """
    bw, lat, startup = _link_arrays(system)
    n = system.nodes
    paths = _physical_paths(system, packing, reverse)
    cap_bw = bw[packing.link_ids]
    alpha = max(float(lat[p].sum()) for p in paths) + startup
    receivers = max(n - 1, 1) * len(np.unique(packing.root))
    cap = max(1, MAX_DELIVERIES // receivers)
    depth = packing.depth().max(axis=1)
    fixed = (pieces or 0) or (rounds or 0)
    if fixed * receivers > 16 * MAX_DELIVERIES:
        raise InputError(f"synth-trees: {fixed} pieces per block make at least {fixed * receivers:.3g} chunk "
                         f"deliveries (about {fixed * receivers * 64 / 2**30:.3g} GiB to build and verify); "
                         f"at most {16 * MAX_DELIVERIES // receivers} here")
    if pieces is not None and rounds is not None and pieces % rounds:
        raise InputError(f"synth-trees: pieces ({pieces}) must be a multiple of rounds ({rounds}): every "
                         f"round carries the same pieces")
    if pieces is not None and rounds is not None:
        ms = [pieces // rounds]
    elif pieces is not None:
        ms = [m for m in range(1, min(MAX_PER_ROUND, pieces) + 1) if pieces % m == 0]
    else:
        ms = range(1, min(MAX_PER_ROUND, cap) + 1)
    best = None
    for m in ms:
        per = per_round(packing, m)
        link_s = float(((per @ packing.load) / cap_bw).max()) * block_bytes / m   # a round's bytes x K
        d = int(depth[per > 0].max())
        if pieces is not None:
            ks = [pieces // m]
        elif rounds is not None:
            ks = [int(rounds)]
        else:
            kstar = np.sqrt(max(d - 1, 0) * link_s / alpha) if alpha > 0 else cap // m
            hi = max(1, cap // m)
            ks = sorted({int(np.clip(np.floor(kstar), 1, hi)), int(np.clip(np.ceil(kstar), 1, hi))})
        for k in ks:
            t = (k + d - 1) * (link_s / k + alpha)
            if best is None or t < best[0]:
                best = (t, m, k, per)
    _, m, k, per = best
    plan = pipeline(packing, per, k, chunk_base * (k * m))
    time_s = float(_round_times(plan, paths, bw, lat, startup, block_bytes / (k * m)).sum())
    best = (time_s, plan, k * m, k, "pipeline", packing)
    if rounds is None and mode != "pipeline":
        limit = np.inf if mode == "timed" else min(time_s, beat_s)
        if packing.z * block_bytes + startup >= limit:   # no plan on these links can beat it: no more packing
            layered = None
        for pool in ([] if layered is None else [layered]) + [packing]:   # the shallow trees first: cheaper
            pool = pool if isinstance(pool, Packing) else pool()
            paths = _physical_paths(system, pool, reverse)
            alpha = max(float(lat[p].sum()) for p in paths) + startup
            timed_best = _timed_plan(pool, cap_bw, paths, (bw, lat, startup), block_bytes, pieces, cap, alpha,
                                     chunk_base, limit, floor_z=packing.z)
            if timed_best is not None and (best[4] == "pipeline" and mode == "timed" or timed_best[0] < best[0]):
                best = (*timed_best, "timed", pool)
                limit = min(limit, timed_best[0])
    time_s, plan, p, k, chosen, used = best
    return plan, p, k, time_s, chosen, used


LAYERED_TOLERANCE = 1e-4
"""The shallowest trees' packing stops within this share of the unrestricted packing's rate: on
dense networks its column generation meets many equally cheap trees and converges slowly."""

LAYERED_ITERATIONS = 300
"""Column-generation rounds at most for the shallowest trees (a pool for timed rounds, not a
certificate): on a 16-node circuit switch with 14 ports a Kautz-like configuration had not
converged after 500 (5 s); the circulant took 209."""


TIMINGS = ("auto", "pipeline", "timed")
"""The ``timing`` parameter's values."""


def _tune(system, collective, size_bytes):
    """Both plans: the prediction behind ``auto`` counts link loads, while through switches the
    flow simulator shares links max-min fairly, so ``synthesize`` and ``tune`` time each."""
    return [{"timing": "pipeline"}, {"timing": "timed"}]


TIMED_PIECES_PER_ROUND = 128
"""Pieces per block and round of a timed plan: rounding the programme's shares to whole pieces
moves at most one piece per arc and round."""


def _timed_plan(packing, cap_bw, paths, links, block_bytes, pieces, cap, alpha, chunk_base, beat_s, floor_z=None):
    """The fastest timed-rounds plan (:mod:`~collsim.algorithms.synth_trees.timing`) that can beat ``beat_s``.

    Rounds from the least every root's trees need upward, each solved per arc while the programme
    stays within :data:`~collsim.algorithms.synth_trees.timing.ARC_VARIABLES`, else per tree level
    within :data:`~collsim.algorithms.synth_trees.timing.LEVEL_VARIABLES`, else skipped; so is a
    count at which even a plan at the packing's rate (or ``floor_z``, a lower rate bound) would not beat the
    best so far.  Returns ``(time_s, deliveries, pieces, rounds)`` or None.
    """
    bw, lat, startup = links
    depth = packing.depth().max(axis=1)
    s0 = int(max(depth[packing.root == r].min() for r in np.unique(packing.root)))
    floor_s = max(packing.z if floor_z is None else floor_z, 0.0) * block_bytes
    best = None
    for s in sorted({s0, s0 + 1, s0 + 2, s0 + 4, 2 * s0, 3 * s0}):
        limit = beat_s if best is None else min(beat_s, best[0])
        if floor_s + s * alpha >= limit:
            continue
        if timing.variables(packing, s) <= timing.ARC_VARIABLES:
            t = timing.timed(packing, cap_bw, block_bytes, s)
        elif timing.variables(packing, s, by_level=True) <= timing.LEVEL_VARIABLES:
            t = timing.timed(packing, cap_bw, block_bytes, s, by_level=True)
        else:
            continue
        if t.bandwidth_s + s * alpha >= limit:
            continue
        p = pieces or min(cap, TIMED_PIECES_PER_ROUND * s)
        plan = timing.deliveries(packing, t, p, chunk_base * p)
        time_s = float(_round_times(plan, paths, bw, lat, startup, block_bytes / p).sum())
        if time_s < limit:
            best = (time_s, plan, p, s)
    return best


def _emit(system, packing, plan: Deliveries, reverse: bool, offset: int):
    """Columns (round, src, dst, chunk_ptr, chunk_idx, reduce, route_ptr, route_links) of one phase."""
    paths = _physical_paths(system, packing, reverse)
    rnd, src, dst = plan.round, plan.src, plan.dst
    if reverse:
        rnd, src, dst = plan.rounds - 1 - rnd, dst, src
    hops = np.array([len(p) for p in paths], np.int64)[plan.path]
    route_links = np.concatenate([paths[p] for p in plan.path]).astype(INDEX)
    route_ptr = np.r_[0, np.cumsum(hops)].astype(INDEX)
    return (rnd + offset, src, dst, plan.chunk_ptr, plan.chunk_idx, np.full(len(src), reverse),
            route_ptr, route_links)


def _logical(coll, phases) -> LogicalSchedule:
    """One logical schedule from phases' columns, sorted by round (CSR payloads and routes kept aligned)."""
    rnd = np.concatenate([p[0] for p in phases])
    src = np.concatenate([p[1] for p in phases])
    dst = np.concatenate([p[2] for p in phases])
    red = np.concatenate([p[5] for p in phases])
    chunks, routes = [], []
    for p in phases:
        ptr, idx, rptr, rl = p[3], p[4], p[6], p[7]
        chunks += np.split(idx, ptr[1:-1])
        routes += np.split(rl, rptr[1:-1])
    order = np.argsort(rnd, kind="stable")
    chunks = [chunks[i] for i in order]
    routes = [routes[i] for i in order]
    cptr = np.r_[0, np.cumsum([len(c) for c in chunks])].astype(INDEX)
    rptr = np.r_[0, np.cumsum([len(r) for r in routes])].astype(INDEX)
    return LogicalSchedule(coll, rnd[order].astype(INDEX), src[order].astype(INDEX), dst[order].astype(INDEX),
                           cptr, np.concatenate(chunks).astype(INDEX), red[order],
                           routes=LinkRoutes(rptr, np.concatenate(routes).astype(INDEX)))


@register(
    "synth-trees", aliases=("forestcoll-like",),
    collectives=("allgather", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("network",), params=("pieces", "rounds", "root", "timing"), requires=requires, tune=_tune,
    constraints=f"end nodes strongly connected; up to {MAX_END_NODES} end nodes ({MAX_TRANSLATED_END_NODES} with "
                f"translations)",
    reference="[ForestColl24] (spanning-tree packing at the cut bound's rate); [Edmonds73] (arborescence "
              "packing); [BangJensen95] (splitting off at switches); [DantzigWolfe60] (column generation); "
              "[ChuLiu65], [Edmonds67] (the pricing's minimum arborescence); [FordFulkerson58] (rounds timed "
              "by a time-expanded programme); collsim's pricing through the switches and round pipelining "
              "(docs/synthesis.md)",
    summary="synthesized from the graph: spanning trees packed at the cut bound's rate, pipelined",
)
def synth_trees(system, collective, size_bytes, *, pieces: int | None = None, rounds: int | None = None,
                root: int = 0, timing: str = "auto"):
    """Synthesize a collective from arborescences packed at the optimal rate.

    Parameters
    ----------
    system : Network
        Any network of up to :data:`MAX_END_NODES` end nodes, :data:`MAX_TRANSLATED_END_NODES`
        where translations keep its links (switches, one-way and
        heterogeneous links included; on a reconfigurable one, each configuration it offers
        is packed and the fastest kept).
    collective : str
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast`` or ``reduce``.
    size_bytes : int
        Message size (collsim's meaning per collective).
    pieces : int, optional
        Chunks per root's block (a multiple of ``rounds``); chosen per size when not given.
    rounds : int, optional
        Rounds every root sends pieces in (its trees' batches); chosen per size when not given.
    root : int, optional
        Root of a broadcast or reduce.
    timing : {"auto", "pipeline", "timed"}, optional
        The uniform pipeline, rounds timed by the linear programme
        (:mod:`~collsim.algorithms.synth_trees.timing`; the pipeline where the programme is too
        large), or the one predicted faster (default).

    Returns
    -------
    tuple
        ``(LogicalSchedule with explicit routes, params)``: ``pieces``, ``rounds``, ``trees``,
        ``predicted_time_s`` and ``timing`` (the plan used: ``pipeline``, ``timed``, or for an
        all-reduce whose phases differ ``mixed``); on a network that cannot hold all its links
        at once (an optical circuit switch with fewer ports than ``N - 1``), ``configuration``:
        the candidate (:meth:`~collsim.core.network.Network.configurations`) whose packing
        predicts fastest, held throughout.

    References
    ----------
    L. Zhao et al., "ForestColl", arXiv 2402.06787, 2024; J. Edmonds, "Edge-disjoint
    branchings", 1973.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("synth-trees", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)})
    >>> collsim.verify(s).steps > 0
    True
    """
    if timing not in TIMINGS:
        raise InputError(f"synth-trees: timing must be one of {', '.join(TIMINGS)}, not {timing!r}")
    optional_integer("synth-trees: pieces", pieces, lo=1)
    optional_integer("synth-trees: rounds", rounds, lo=1)
    if collective in SPECS and SPECS[collective].rooted:
        root = check_root(root, system.nodes)
    configs = system.configurations()
    if configs is None:
        return _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, None)[:2]
    best = None
    for name, links in configs:
        if best is not None and _floor_s(system, collective, size_bytes, links) >= best[2]:
            continue
        if (system.nodes > MAX_END_NODES or best is not None and system.nodes * len(links) > ASYMMETRIC_PACKING) \
                and not _symmetric(system, links):
            continue
        logical, params, time_s = _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, links,
                                               np.inf if best is None else best[2])
        if best is None or time_s < best[2]:
            best = (logical, {**params, "configuration": name}, time_s)
    return best[:2]


ASYMMETRIC_PACKING = 4096
"""Largest ``N x links`` of a configuration packed without translations (a root's trees standing
for every root's): a 32-node circuit switch's Kautz-like configuration of 16 ports took 51 s,
its circulants 0.1 s."""


def _symmetric(system, links) -> bool:
    """Whether the network's translations map ``links`` onto themselves."""
    trans = system.translations()
    if trans is None:
        return False
    lk = system.links
    ids = lk.index(trans[:, lk.src[links]], trans[:, lk.dst[links]])
    return bool(np.isin(ids, links).all())


def _floor_s(system, collective: str, size_bytes, links) -> float:
    """No schedule on ``links`` beats this: the blocks into (all-gather, broadcast) or out of
    (reduce-scatter, reduce) the end node with the least bandwidth that way; all-reduce both."""
    n, lk = system.nodes, system.links
    bw = np.asarray(lk.bandwidth_bytes_per_s, float)[links]
    into = np.bincount(lk.dst[links], weights=bw, minlength=system.vertices)[:n]
    out = np.bincount(lk.src[links], weights=bw, minlength=system.vertices)[:n]
    t = SPECS[collective]
    if t.composed_of:
        block = float(make_collective("allreduce", n, size_bytes, split=n).bytes_of(np.arange(n)).mean())
        return (n - 1) * block * (1 / out.min() + 1 / into.min())
    probe = make_collective(collective, n, size_bytes, split=1, **({"root": 0} if t.rooted else {}))
    block = float(probe.bytes_of([0])[0])
    blocks = 1 if t.rooted else n - 1
    return blocks * block / (out.min() if t.reduction else into.min())


def _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, links, beat_s=np.inf):
    """The schedule packed on ``links`` (None: every link), its parameters and predicted time
    (rounds timed only where they could beat ``beat_s``, :func:`_plan`)."""
    n = system.nodes
    t = SPECS[collective]

    def packed(roots, reverse):
        packing = pack(system, roots, reverse=reverse, links=links)
        return (packing,
                lambda: pack(system, roots, reverse=reverse, links=links, layered=True, target_z=packing.z,
                             rel_tol=LAYERED_TOLERANCE, max_iterations=LAYERED_ITERATIONS))

    if t.rooted:
        reverse = t.reduction
        packing, layered = packed([root], reverse)
        probe = make_collective(collective, n, size_bytes, split=1, root=root)
        plan, p, k, time_s, chosen, packing = _plan(system, packing, reverse, float(probe.bytes_of([0])[0]), pieces,
                                                    rounds, np.zeros(n, np.int64), timing, beat_s, layered)
        coll = make_collective(collective, n, size_bytes, split=p, root=root)
        logical = _logical(coll, [_emit(system, packing, plan, reverse, 0)])
        params = {"root": root}
    elif t.composed_of:
        rs_pack, rs_layered = packed(None, True)
        ag_pack, ag_layered = packed(None, False)
        probe = make_collective("allreduce", n, size_bytes, split=n)
        block = float(probe.bytes_of(np.arange(n)).mean())
        base = np.arange(n, dtype=np.int64)
        rs, p, k, t_rs, chosen, rs_pack = _plan(system, rs_pack, True, block, pieces, rounds, base, timing,
                                                layered=rs_layered)
        ag, _, _, t_ag, chosen_ag, ag_pack = _plan(system, ag_pack, False, block, p, rounds, base, timing,
                                                   layered=ag_layered)
        chosen = chosen if chosen == chosen_ag else "mixed"
        coll = make_collective("allreduce", n, size_bytes, split=n * p)
        logical = _logical(coll, [_emit(system, rs_pack, rs, True, 0), _emit(system, ag_pack, ag, False, rs.rounds)])
        packing, time_s = ag_pack, t_rs + t_ag
        params = {}
    else:
        reverse = t.reduction
        packing, layered = packed(None, reverse)
        probe = make_collective(collective, n, size_bytes, split=1)
        plan, p, k, time_s, chosen, packing = _plan(system, packing, reverse, float(probe.bytes_of([0])[0]), pieces,
                                                    rounds, np.arange(n, dtype=np.int64), timing, beat_s, layered)
        coll = make_collective(collective, n, size_bytes, split=p)
        logical = _logical(coll, [_emit(system, packing, plan, reverse, 0)])
        params = {}
    params.update(pieces=p, rounds=k, trees=int(len(packing.root)), predicted_time_s=time_s, timing=chosen)
    return logical, params, time_s
