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

import dataclasses
import weakref

import numpy as np

from ...core.collective import make_collective
from ...core.collectives import CollectiveType
from ...core.csr import INDEX, permute_csr
from ...core.errors import InputError, UnsupportedError
from ...core.limits import memory_limit_bytes
from ...core.schedule import LogicalSchedule
from ...core.validate import optional_integer
from ...kinds.network.routes import LinkRoutes
from ..common import check_root
from ..registry import register
from .packing import Packing, pack, planned_roots
from .pipeline import Deliveries, transfer_columns
from .translations import translates
from .orbits import emit_representatives, expand, group_of
from .ordered import ordered_pool
from .plan import LAYERED_ITERATIONS, LAYERED_TOLERANCE, MAX_DELIVERIES, _physical_paths, _plan

MAX_END_NODES = 32
"""Largest network the packing is tried on without translations.  Each column-generation round
prices one arborescence per root on an ``N x N`` matrix and the rounds grow with ``N``: 2 s of CPU
for a 64-host fat tree, 4 s for an 8x8 mesh and 86 s for 128 GPUs in boxes of 8
(docs/synthesis.md), so larger networks are left to ``synth-matching`` until the pricing is
faster."""

MAX_TRANSLATED_END_NODES = 128
"""Largest network packed by translations (one root's trees moved to every root; its timing
programme a row per link orbit) whose kind does not accept them as a translation group (a
search found a regular group that is not abelian, or the translations keep bandwidths but not
latencies): the whole schedule is built, and beyond this the cap on chunk deliveries leaves a
block too few pieces (a 16x16 torus: 15, 0.93 of the bound).  Where the kind accepts the group,
:data:`MAX_SYMMETRIC_END_NODES` applies."""


MAX_SYMMETRIC_END_NODES = 2048
"""Largest network packed when its kind's translation group keeps every link alike
(:mod:`~collsim.algorithms.synth_trees.orbits`): one root's trees are built, moved so that node 0
receives, and verified and timed on their orbits.  A 32x64 torus's all-gather takes 19 s and
1.4 GB (docs/synthesis.md); the search for translations stops at 2,048 vertices
(:data:`collsim.core.automorphisms.MAX_VERTICES`)."""


def requires(system, collective: CollectiveType) -> str | None:
    """Why the packing cannot run here, or None.

    References
    ----------
    L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
    fabrics", arXiv 2402.06787, 2024.
    """
    from ..synth_matching.build import _unreachable
    if system.nodes > MAX_TRANSLATED_END_NODES and (system.nodes > MAX_SYMMETRIC_END_NODES or collective.rooted
                                                    or group_of(system) is None):
        why = ("above that" if system.nodes > MAX_SYMMETRIC_END_NODES else "a root's trees are not moved"
               if collective.rooted else "no such translations were found here")
        return (f"the tree packing takes about N^4 operations (N = {system.nodes} end nodes); "
                f"collsim packs trees on up to {MAX_END_NODES} end nodes, {MAX_TRANSLATED_END_NODES} "
                f"on networks whose translations keep their links, and {MAX_SYMMETRIC_END_NODES} where "
                f"they form a translation group keeping every link alike, its schedule verified and "
                f"timed on its orbits ({why})")
    if system.nodes > MAX_END_NODES and collective.rooted:
        return (f"a root's trees are packed on up to {MAX_END_NODES} end nodes (N = {system.nodes}): "
                f"translations do not move a rooted collective's trees")
    if system.nodes > MAX_END_NODES and planned_roots(system) > MAX_END_NODES:
        return (f"the tree packing takes about N^4 operations (N = {system.nodes} end nodes); "
                f"collsim packs trees on up to {MAX_END_NODES} end nodes of a network without "
                f"symmetries, {MAX_TRANSLATED_END_NODES} where they leave at most {MAX_END_NODES} "
                f"roots to plan (tori, hypercubes, circuit switches, meshes)")
    return _unreachable(system)


TIMINGS = ("auto", "pipeline", "timed")
"""The ``timing`` parameter's values."""


def _tune(system, collective: CollectiveType, size_bytes):
    """Both plans: the prediction behind ``auto`` bounds the simulated time from above (every round at
    its most loaded link plus its slowest latency), but a round's short paths finish early, so the
    plan predicted slower can simulate faster (a 16-host dragonfly: pipeline 0.894, timed 0.886 of
    the bound); ``synthesize`` and ``tune`` time each."""
    return [{"timing": "pipeline"}, {"timing": "timed"}]


def _emit(system, packing, plan: Deliveries, reverse: bool, offset: int):
    """Columns (round, src, dst, chunk_ptr, chunk_idx, reduce, route_ptr, route_links) of one phase.

    A transfer whose path crosses a switch is sent as one transfer per piece: the flow simulator
    shares a link max-min fairly among flows, not bytes, and a flow's rate is at least the least
    of ``bandwidth / flows`` over its links, so when every flow through a switch is one piece
    each round ends within its prediction (the most loaded link's bytes over its bandwidth).  A
    one-link transfer keeps its pieces together: it is held back only by its own link, which
    then never idles while it sends."""
    paths = _physical_paths(system, packing, reverse)
    rnd, src, dst = plan.round, plan.src, plan.dst
    if reverse:
        rnd, src, dst = plan.rounds - 1 - rnd, dst, src
    return transfer_columns(rnd, src, dst, plan, paths, reverse, offset)


def _logical(coll, phases) -> LogicalSchedule:
    """One logical schedule from phases' columns, sorted by round (CSR payloads and routes kept aligned)."""
    rnd, src, dst, red = (np.concatenate([p[i] for p in phases]) for i in (0, 1, 2, 5))
    lengths = [np.concatenate([np.diff(p[i]) for p in phases]) for i in (3, 6)]
    order = np.argsort(rnd, kind="stable")
    cptr, cidx = permute_csr(lengths[0], np.concatenate([p[4] for p in phases]).astype(INDEX), order)
    rptr, rlinks = permute_csr(lengths[1], np.concatenate([p[7] for p in phases]).astype(INDEX), order)
    return LogicalSchedule(coll, rnd[order].astype(INDEX), src[order].astype(INDEX), dst[order].astype(INDEX),
                           cptr, cidx, red[order], routes=LinkRoutes(rptr, rlinks))


EXPANDED_DELIVERY_BYTES = 64
"""Bytes a chunk delivery of an explicit schedule costs to build and verify (:data:`MAX_DELIVERIES`)."""

EXPLICIT_DELIVERIES = 16 * MAX_DELIVERIES
"""Most chunk deliveries of an explicit ``synth-trees`` schedule expanded from its representatives
(``build``, ``-o``): beyond, the explicit schedule is planned within :data:`MAX_DELIVERIES` as on a
network without translations (up to :data:`MAX_TRANSLATED_END_NODES` end nodes; refused above, with
this estimate), and ``compare``, ``run`` and ``synthesize`` use the representatives."""


def _orbits(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, rounds: int | None = None,
            root: int = 0, timing: str = "auto"):
    """The transfers into node 0 on a network with a translation group
    (:mod:`~collsim.algorithms.synth_trees.orbits`); None elsewhere (a rooted collective's trees
    belong to its root, a circuit switch's configurations are chosen one by one)."""
    if collective.rooted or system.configurations() is not None:
        return None
    group = group_of(system)
    if group is None:
        return None
    _check(pieces, rounds, timing)
    n = system.nodes
    probe = make_collective(collective, n, size_bytes, split=n if collective.composed_of else 1)
    sizes = probe.chunk_bytes
    if (sizes != sizes[0]).any():   # known before planning: the representatives could not stand for every node
        raise InputError(f"{probe.name}'s chunk sizes differ between nodes ({int(sizes.min())} to "
                         f"{int(sizes.max())} bytes): its transfers are not all alike")
    logical, params = _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, None, group=group)[:2]
    return logical, params, group


def _check(pieces, rounds, timing) -> None:
    if timing not in TIMINGS:
        raise InputError(f"synth-trees: timing must be one of {', '.join(TIMINGS)}, not {timing!r}")
    optional_integer("synth-trees: pieces", pieces, lo=1)
    optional_integer("synth-trees: rounds", rounds, lo=1)


@register(
    "synth-trees", aliases=("forestcoll-like",),
    collectives=("allgather", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("network",), params=("pieces", "rounds", "root", "timing"), requires=requires, tune=_tune,
    orbits=_orbits,
    constraints=f"end nodes strongly connected; up to {MAX_END_NODES} end nodes ({MAX_TRANSLATED_END_NODES} with "
                f"translations, {MAX_SYMMETRIC_END_NODES} where they keep every link alike)",
    reference="[ForestColl24] (spanning-tree packing at the cut bound's rate); [Edmonds73] (arborescence "
              "packing); [BangJensen95] (splitting off at switches); [DantzigWolfe60] (column generation); "
              "[ChuLiu65], [Edmonds67] (the pricing's minimum arborescence); [FordFulkerson58] (rounds timed "
              "by a time-expanded programme); [SaadSchultz89] (trees along one dimension at a time); [ImaseItoh83], [ReddyPradhanKuhl80] (circuit configurations); "
              "collsim's pricing through the switches, translations and round pipelining (docs/synthesis.md)",
    summary="synthesized from the graph: spanning trees packed at the cut bound's rate, pipelined",
)
def synth_trees(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, rounds: int | None = None,
                root: int = 0, timing: str = "auto"):
    """Synthesize a collective from arborescences packed at the optimal rate.

    Parameters
    ----------
    system : Network
        Any network of up to :data:`MAX_END_NODES` end nodes, :data:`MAX_TRANSLATED_END_NODES`
        where translations keep its links, :data:`MAX_SYMMETRIC_END_NODES` where its kind accepts
        them as its translation group (built as its transfers into node 0, moved by every
        translation: :mod:`~collsim.algorithms.synth_trees.orbits`) (switches, one-way and
        heterogeneous links included; on a reconfigurable one, each configuration it offers
        is packed and the fastest kept).
    collective : CollectiveType
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
        the candidate (:meth:`~collsim.kinds.network.network.Network.configurations`) whose packing
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
    _check(pieces, rounds, timing)
    if collective.rooted:
        root = check_root(root, system.nodes)
    configs = system.configurations()
    group = group_of(system) if configs is None and not collective.rooted else None
    if group is not None:     # its transfers into node 0, moved by every translation, where they fit
        logical, params = _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, None,
                                       group=group)[:2]
        need = _expanded_bytes(system, logical)
        if need <= memory_limit_bytes() and system.nodes * len(logical.chunk_idx) <= EXPLICIT_DELIVERIES:
            return expand(system, group, logical), params
        few = _explicit_pieces(system, collective)
        if system.nodes > MAX_TRANSLATED_END_NODES and pieces is None and rounds is None and few:
            # every root's trees are not packed here: the representatives again, with as few pieces a
            # block as an expansion within the explicit cap holds
            fewer, fewer_params = _synthesized(system, collective, size_bytes, few, None, root, timing, None,
                                               group=group)[:2]
            if _expanded_bytes(system, fewer) <= memory_limit_bytes() \
                    and system.nodes * len(fewer.chunk_idx) <= EXPLICIT_DELIVERIES:
                return expand(system, group, fewer), fewer_params
        if system.nodes > MAX_TRANSLATED_END_NODES:
            # an explicit schedule would pack every root's trees: on 2,000 GPUs on a fat tree 4,000 trees
            # of 2,000 nodes (3 min, 10.9 GB, 0.677 of the bound), on a 1,024-node hypercube 20 % in 11.7 GB
            raise UnsupportedError(
                f"synth-trees: its schedule on {system.nodes} end nodes is {len(logical.src):,} transfers into "
                f"node 0 moved by {system.nodes} translations; expanded it makes "
                f"{system.nodes * len(logical.chunk_idx):,} chunk deliveries (about {need / 2**30:,.1f} GiB; "
                f"at most {EXPLICIT_DELIVERIES:,} within {memory_limit_bytes() / 2**30:,.1f} GiB), and an "
                f"explicit schedule packing every root's trees is built on up to {MAX_TRANSLATED_END_NODES} "
                f"end nodes. compare, run and synthesize check the representatives on their orbits, where "
                f"every node's chunks are alike: a size that divides evenly among the {system.nodes} nodes")
        # else an explicit schedule is planned within the explicit cap (compare, run and synthesize
        # check the representatives' on their orbits)
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
    if best is None:
        raise UnsupportedError(f"synth-trees: none of the network's {len(configs)} configurations can be packed "
                               f"on {system.nodes} end nodes (without translations: up to {MAX_END_NODES})")
    return best[:2]


def _expanded_bytes(system, logical: LogicalSchedule) -> int:
    """Bytes the representatives ``logical`` take to expand to every node and verify (an estimate)."""
    return system.nodes * (EXPANDED_DELIVERY_BYTES * len(logical.chunk_idx) + 128 * len(logical.src))


def _explicit_pieces(system, collective: CollectiveType) -> int:
    """The most pieces a block an explicit schedule holds within :data:`EXPLICIT_DELIVERIES`, each of
    the ``N - 1`` other blocks reaching every node once per phase (0: not even one)."""
    phases = 2 if collective.composed_of else 1
    return EXPLICIT_DELIVERIES // (system.nodes * max(system.nodes - 1, 1) * phases)


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


def _floor_s(system, collective: CollectiveType, size_bytes, links) -> float:
    """No schedule on ``links`` beats this: the blocks into (all-gather, broadcast) or out of
    (reduce-scatter, reduce) the end node with the least bandwidth that way; all-reduce both."""
    n, lk = system.nodes, system.links
    bw = np.asarray(lk.bandwidth_bytes_per_s, float)[links]
    into = np.bincount(lk.dst[links], weights=bw, minlength=system.vertices)[:n]
    out = np.bincount(lk.src[links], weights=bw, minlength=system.vertices)[:n]
    if collective.composed_of:
        block = float(make_collective("allreduce", n, size_bytes, split=n).bytes_of(np.arange(n)).mean())
        return (n - 1) * block * (1 / out.min() + 1 / into.min())
    probe = make_collective(collective, n, size_bytes, split=1, **({"root": 0} if collective.rooted else {}))
    block = float(probe.bytes_of([0])[0])
    blocks = 1 if collective.rooted else n - 1
    return blocks * block / (out.min() if collective.reduction else into.min())


def _ordered(system, packing: Packing, reverse: bool) -> Packing | None:
    """The ordered trees (:func:`~collsim.algorithms.synth_trees.ordered.ordered_pool`) beside ``packing``:
    root 0's alone where the packing is, else moved to every root as the packing's trees are, so that
    the whole schedule and its representatives choose the same plan."""
    if packing.group is None:
        return None
    if not packing.expanded:
        return ordered_pool(system, packing, reverse)
    view = dataclasses.replace(packing.base(), group=packing.group, link_group=packing.link_group, expanded=False)
    pool = ordered_pool(system, view, reverse)
    if pool is None:
        return None
    paths = list(pool.paths)
    path_ids = {tuple(int(x) for x in p): i for i, p in enumerate(paths)}
    parent, path, load, root, weight = translates(packing.group, packing.link_group, pool.parent, pool.path,
                                                  pool.load, pool.weight, paths, path_ids)
    return Packing(root=root, parent=parent, path=path, weight=weight, paths=tuple(paths), z=pool.z, iterations=0,
                   load=load, link_ids=pool.link_ids, group=packing.group, link_group=packing.link_group,
                   expanded=True)


_PACKINGS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Per system, the packings made on it (and their pools of shallow and ordered trees), by roots,
direction, links and form: ``build_compact`` builds a network's representatives and then, where they
are few, the whole schedule, and ``synthesize`` builds each timing; a packing made again would solve
its timing programmes again (they are remembered per packing, ``timing.timed``)."""


def _packings(system) -> dict:
    """This system's remembered packings (a fresh dictionary where the system cannot be weakly referenced)."""
    try:
        return _PACKINGS.setdefault(system, {})
    except TypeError:
        return {}


def _synthesized(system, collective, size_bytes, pieces, rounds, root, timing, links, beat_s=np.inf, group=None):
    """The schedule packed on ``links`` (None: every link), its parameters and predicted time
    (rounds timed only where they could beat ``beat_s``, :func:`_plan`).  ``group``: the network's
    translation group, and the schedule is its transfers into node 0
    (:mod:`~collsim.algorithms.synth_trees.orbits`)."""
    n = system.nodes
    expand = group is None

    def packed(roots, reverse):
        key = (None if roots is None else tuple(int(r) for r in roots), bool(reverse),
               None if links is None else np.asarray(links).tobytes(), expand)
        memo = _packings(system)
        if key not in memo:
            memo[key] = _packed(roots, reverse)
        return memo[key]

    def _packed(roots, reverse):
        packing = pack(system, roots, reverse=reverse, links=links, expand=expand)
        if roots is not None:      # a root's shallowest trees all take its every link: one tree's rate
            return packing, (None, None)
        made: list[Packing] = []

        def layered() -> Packing:  # made when first needed, then kept: an all-reduce plans twice on it
            if not made:
                made.append(pack(system, roots, reverse=reverse, links=links, layered=True, target_z=packing.z,
                                 rel_tol=LAYERED_TOLERANCE, max_iterations=LAYERED_ITERATIONS, expand=expand))
            return made[0]
        ordered_made: list = []

        def ordered() -> Packing | None:   # trees along one translation at a time (ordered.py), where there are
            if not ordered_made:
                ordered_made.append(_ordered(system, packing, reverse))
            return ordered_made[0]
        return packing, (layered, ordered)

    def emit(packing, plan, reverse, offset, per_anchor):
        if group is None:
            return _emit(system, packing, plan, reverse, offset)
        return emit_representatives(system, group, plan, _physical_paths(system, packing, reverse), reverse,
                                    offset, per_anchor)

    if collective.rooted:
        reverse = collective.reduction
        packing, pools = packed([root], reverse)
        probe = make_collective(collective, n, size_bytes, split=1, root=root)
        plan, p, k, time_s, chosen, packing = _plan(system, packing, reverse, float(probe.bytes_of([0])[0]), pieces,
                                                    rounds, np.zeros(n, np.int64), timing, beat_s, *pools)
        coll = make_collective(collective, n, size_bytes, split=p, root=root)
        logical = _logical(coll, [_emit(system, packing, plan, reverse, 0)])
        params = {"root": root}
    elif collective.composed_of:
        rs_pack, rs_pools = packed(None, True)
        ag_pack, ag_pools = packed(None, False)
        probe = make_collective("allreduce", n, size_bytes, split=n)
        block = float(probe.bytes_of(np.arange(n)).mean())
        base = np.arange(n, dtype=np.int64)
        rs, p, k, t_rs, chosen, rs_pack = _plan(system, rs_pack, True, block, pieces, rounds, base, timing,
                                                layered=rs_pools[0], ordered=rs_pools[1])
        if group is not None and pieces is None and size_bytes % n == 0 and (size_bytes // n) % p:
            # every node's block cut alike (a symmetric schedule's chunks are equal at every anchor):
            # the most pieces up to the plan's that divide the block
            d = np.arange(1, p + 1)
            p = int(d[(size_bytes // n) % d == 0].max())
            rs, p, k, t_rs, chosen, rs_pack = _plan(system, rs_pack, True, block, p, rounds, base, timing,
                                                    layered=rs_pools[0], ordered=rs_pools[1])
        ag, _, _, t_ag, chosen_ag, ag_pack = _plan(system, ag_pack, False, block, p, rounds, base, timing,
                                                   layered=ag_pools[0], ordered=ag_pools[1])
        chosen = chosen if chosen == chosen_ag else "mixed"
        coll = make_collective("allreduce", n, size_bytes, split=n * p, explicit=expand)
        logical = _logical(coll, [emit(rs_pack, rs, True, 0, p), emit(ag_pack, ag, False, rs.rounds, p)])
        packing, time_s = ag_pack, t_rs + t_ag
        params = {}
    else:
        reverse = collective.reduction
        packing, pools = packed(None, reverse)
        probe = make_collective(collective, n, size_bytes, split=1)
        plan, p, k, time_s, chosen, packing = _plan(system, packing, reverse, float(probe.bytes_of([0])[0]), pieces,
                                                    rounds, np.arange(n, dtype=np.int64), timing, beat_s, *pools)
        coll = make_collective(collective, n, size_bytes, split=p, explicit=expand)
        logical = _logical(coll, [emit(packing, plan, reverse, 0, p)])
        params = {}
    trees = len(packing.root) * (1 if packing.expanded else len(packing.group))
    params.update(pieces=p, rounds=k, trees=int(trees), predicted_time_s=time_s, timing=chosen)
    return logical, params, time_s
