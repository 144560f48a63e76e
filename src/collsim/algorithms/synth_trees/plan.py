"""How ``synth-trees`` sends its packed trees: pieces, rounds and their timing, chosen per size.

The uniform pipeline (:mod:`~collsim.algorithms.synth_trees.pipeline`) for every count of pieces a
round with its best count of rounds, and rounds timed by a linear programme
(:mod:`~collsim.algorithms.synth_trees.timing`) on the packing and on the shallowest trees; each
plan predicted per round (the most loaded link's bytes over its bandwidth, plus the slowest path's
latency and the start-up) and the fastest kept.

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024; L. R. Ford, D. R. Fulkerson, "Constructing maximal dynamic flows
from static flows", Operations Research 6(3), 1958.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from . import timing
from .packing import Packing
from .pipeline import Deliveries, depth_loads, per_round, pipeline, pipeline_round_times

MAX_DELIVERIES = 1_000_000
"""Most chunk deliveries a synthesized schedule may hold (each costs about 64 bytes to build and
verify): the pieces per block are capped so that ``N x pieces x (N - 1)`` stays below it."""


LARGE_DELIVERIES = 8_000_000
"""Most chunk deliveries of a schedule built as its transfers into node 0 on more than
:data:`~collsim.algorithms.synth_trees.timing.LARGE_NODES` end nodes (its representatives, checked
on their orbits and never expanded there): :data:`MAX_DELIVERIES` left 1,024 GPUs in boxes of 8 on
one rail 977 pieces a block, and rounding the timed shares to so few cost 0.977 of the bound against
0.981 with 5,888 pieces (1.4 GB and 12 s of CPU for the all-gather, build and check)."""


def _link_arrays(system):
    lk = system.links
    return (np.asarray(lk.bandwidth_bytes_per_s, float), np.asarray(lk.latency_s, float),
            float(getattr(system, "startup_s", None) or 0.0))


def _physical_paths(system, packing: Packing, reverse: bool) -> list[np.ndarray]:
    """Link ids of every path, parent to child in the packing's direction (reversed: child to parent)."""
    keep = packing.link_ids
    return [keep[p][::-1] if reverse else keep[p] for p in packing.paths]


def _round_times(d: Deliveries, paths: list[np.ndarray], bw, lat, startup, piece_bytes,
                 orbit_of: np.ndarray | None = None) -> np.ndarray:
    """Each round's time: most loaded link's bytes over its bandwidth, plus the slowest latency.

    ``orbit_of`` (link id to its orbit's representative): ``d`` holds the planned root's deliveries
    alone (:func:`link_orbits_of`), and a link carries its orbit's pieces from them."""
    hops = np.array([len(p) for p in paths], np.int64)
    plat = np.array([float(lat[p].sum()) for p in paths])
    pieces = np.diff(d.chunk_ptr).astype(float)       # whole pieces: sums exact in any order
    per = hops[d.path]
    links = np.concatenate([paths[p] for p in d.path]) if len(d.path) else np.zeros(0, np.int64)
    if orbit_of is not None:
        links = orbit_of[links]
    rnd = np.repeat(d.round, per)
    load = np.bincount(rnd * len(bw) + links, weights=np.repeat(pieces, per), minlength=d.rounds * len(bw))
    busy = (load.reshape(d.rounds, len(bw)) * piece_bytes / bw[None, :]).max(axis=1)
    wait = np.zeros(d.rounds)
    np.maximum.at(wait, d.round, plat[d.path])
    return busy + wait + startup


def link_orbits_of(system, packing: Packing) -> np.ndarray | None:
    """Every link's orbit representative (a link id) when ``packing`` is the planned root's trees
    alone (not expanded), else None."""
    if packing.expanded or packing.link_group is None:
        return None
    row_of, reps, _ = packing.link_rows()
    out = np.arange(len(system.links.src), dtype=np.int64)
    out[packing.link_ids] = packing.link_ids[reps[row_of]]
    return out


MAX_PER_ROUND = 64
"""Every count of pieces a root sends a round (``m``) up to this one is tried; its trees' shares are
rounded to multiples of ``1 / m``."""

WIDE_PER_ROUND_STEP = 2 ** 0.25
"""Above :data:`MAX_PER_ROUND`, counts grow by this factor up to the cap on deliveries.  A root with
many trees of small weight needs them: a broadcast on 32 GPUs in 4 boxes on rails packs 78 trees,
and rounded to 64 pieces a round their most loaded link carries 1.13 times its share (1.03 at 512,
1.003 at 4,096), which held the broadcast at 0.780 of the bound (0.847 with the wider counts and
:func:`_pipeline_choice`'s round-by-round timing)."""


def _per_round_counts(cap: int) -> list[int]:
    """Pieces a round tried when not fixed: 1 to :data:`MAX_PER_ROUND`, then geometrically to ``cap``."""
    out = list(range(1, min(MAX_PER_ROUND, cap) + 1))
    m = float(MAX_PER_ROUND)
    while True:
        m *= WIDE_PER_ROUND_STEP
        if int(m) > cap:
            return out
        out.append(int(m))


def _plan(system, packing: Packing, reverse: bool, block_bytes: float, pieces: int | None,
          rounds: int | None, chunk_base: np.ndarray, mode: str = "auto", beat_s: float = np.inf,
          layered=None, ordered=None) -> tuple[Deliveries, int, int, float, str, Packing]:
    """The fastest plan: deliveries, pieces, rounds, predicted time, timing and the trees it uses.

    The uniform pipeline's (pieces a round ``m``, rounds ``K``):
    A full round takes ``max over links of (pieces crossing it) x piece / bandwidth`` plus the
    slowest path's latency and the start-up, the same every round; ``K + depth - 1`` rounds
    (:mod:`~collsim.algorithms.synth_trees.pipeline`).  Each ``m`` has its best ``K`` in closed
    form (``sqrt((depth - 1) x bandwidth time / latency)``), capped by :data:`MAX_DELIVERIES`.
    Timed rounds are sought on ``packing``, on the shallowest trees (``layered()``, a
    packing made only when needed) and on the trees along one translation at a time
    (``ordered()``, :mod:`~collsim.algorithms.synth_trees.ordered`, tried last and only where the
    best plan so far is more than :data:`ORDERED_ABOVE` slower than the packing's rate), and in ``auto`` mode only where they could beat both the
    pipeline and ``beat_s`` (another configuration's plan).
    """
    bw, lat, startup = _link_arrays(system)
    n = system.nodes
    paths = _physical_paths(system, packing, reverse)
    cap_bw = bw[packing.link_ids]
    alpha = max(float(lat[p].sum()) for p in paths) + startup
    receivers = max(n - 1, 1) * len(np.unique(packing.root))
    base = max(1, MAX_DELIVERIES // receivers)
    large = not packing.expanded and n > timing.LARGE_NODES
    cap = max(1, LARGE_DELIVERIES // receivers) if large else base
    orbit_of = link_orbits_of(system, packing)
    depth = packing.depth().max(axis=1)
    fixed = (pieces or 0) or (rounds or 0)
    if fixed * receivers > 16 * MAX_DELIVERIES:
        raise InputError(f"synth-trees: {fixed} pieces per block make at least {fixed * receivers:.3g} chunk "
                         f"deliveries (about {fixed * receivers * 64 / 2**30:.3g} GiB to build and verify); "
                         f"at most {16 * MAX_DELIVERIES // receivers} here")
    if pieces is not None and rounds is not None and pieces % rounds:
        raise InputError(f"synth-trees: pieces ({pieces}) must be a multiple of rounds ({rounds}): every "
                         f"round carries the same pieces")
    # built as representatives (a packing not expanded): a block may have N times the pieces, and
    # the plan within the whole schedule's cap is tried too, so that none is predicted slower
    caps = [cap] if packing.expanded else sorted({max(1, base // n), base, cap})
    loads = depth_loads(packing, np.array([float(lat[p].sum()) for p in paths]))
    best = None
    for c in (c for c in caps if c <= base):     # the large cap serves timed plans alone (LARGE_GAIN)
        m, k, per = _pipeline_choice(packing, depth, cap_bw, block_bytes, pieces, rounds, alpha, c, loads, startup)
        plan = pipeline(packing, per, k, chunk_base * (k * m))
        time_s = float(_round_times(plan, paths, bw, lat, startup, block_bytes / (k * m), orbit_of).sum())
        if best is None or time_s < best[0]:
            best = (time_s, plan, k * m, k, "pipeline", packing)
    time_s = best[0]
    if rounds is None and mode != "pipeline":
        limit = np.inf if mode == "timed" else min(time_s, beat_s)
        if packing.z * block_bytes + startup >= limit:   # no plan on these links can beat it: no more packing
            layered = ordered = None
        # the ordered trees, then the shallowest trees (cheaper than the packing's, and where their rounds
        # run at the rate nothing is left to gain), then the packing's own
        pools = [(p, "layered") for p in ([] if layered is None else [layered])] + [(packing, "packing")] + \
            [(p, "ordered") for p in ([] if ordered is None else [ordered])]
        for pool, kind in pools:
            if kind == "ordered" and best[0] <= packing.z * block_bytes * (1 + ORDERED_ABOVE):
                break                 # the packing's plan is near its rate: the ordered trees are for deep fills
            pool = pool if isinstance(pool, Packing) else pool()
            if pool is None:
                continue
            paths = _physical_paths(system, pool, reverse)
            alpha = max(float(lat[p].sum()) for p in paths) + startup
            timed_best = _timed_plan(pool, cap_bw, paths, (bw, lat, startup), block_bytes, pieces, caps, alpha,
                                     chunk_base, limit, floor_z=packing.z, orbit_of=link_orbits_of(system, pool),
                                     large_above=base if large else None)
            if timed_best is not None and (best[4] == "pipeline" and mode == "timed" or timed_best[0] < best[0]):
                best = (*timed_best[:4], "timed", pool)
                limit = min(limit, timed_best[0])
                programme = (timed_best[4], alpha, paths)
            if kind == "layered" and timed_best is not None and \
                    timed_best[4] - packing.z * block_bytes <= BANDWIDTH_RTOL * timed_best[0]:
                break                 # the shallow trees' rounds run at the packing's rate: nothing left to gain
        fine = max(1, LARGE_DELIVERIES // receivers)
        if best[4] == "timed" and packing.expanded and pieces is None and fine > base:
            bandwidth_s, alpha, paths = programme
            if best[0] - bandwidth_s - best[3] * alpha > ROUNDING_ABOVE * best[0]:
                # whole pieces lost more than the programme left above the rate: up to LARGE_DELIVERIES
                pool = best[5]
                finer = _timed_plan(pool, cap_bw, paths, (bw, lat, startup), block_bytes, None, [base, fine], alpha,
                                    chunk_base, np.inf, floor_z=packing.z, orbit_of=link_orbits_of(system, pool),
                                    large_above=base)
                if finer is not None and finer[0] < best[0]:
                    best = (*finer[:4], "timed", pool)
    time_s, plan, p, k, chosen, used = best
    return plan, p, k, time_s, chosen, used


def _pipeline_choice(packing: Packing, depth, cap_bw, block_bytes: float, pieces, rounds, alpha: float, cap: int,
                     loads, startup: float):
    """The uniform pipeline's pieces a round ``m``, rounds ``K`` and every tree's pieces a round, as
    :func:`_plan` predicts them best within ``cap`` pieces a block.

    Every ``m`` (:func:`_per_round_counts`), its trees' shares rounded by largest remainder and,
    on a packing without a group, link by link (:func:`~collsim.algorithms.synth_trees.pipeline.per_round`;
    with a group the link-by-link rounding would give translated roots different shares, and the
    representatives must expand to the whole schedule), is first ranked by
    the closed form ``(K + D - 1) x (bandwidth time / K + latency)`` at its best ``K``
    (``sqrt((D - 1) x bandwidth time / latency)``, ``D`` the deepest tree).  That form charges
    every fill round a full round, which trees shallower than ``D`` do not need, so the
    :data:`EXACT_CANDIDATES` best are then timed round by round
    (:func:`~collsim.algorithms.synth_trees.pipeline.pipeline_round_times`, what the built plan
    will take) at ``K`` times each of :data:`ROUND_FACTORS`, and the fewest pieces within
    :data:`BANDWIDTH_RTOL` of the fastest kept (more pieces cost transfers to build, verify and
    simulate for a gain below the model's resolution).
    """
    if pieces is not None and rounds is not None:
        ms = [pieces // rounds]
    elif pieces is not None:
        ms = [m for m in range(1, pieces + 1) if pieces % m == 0]
    else:
        ms = _per_round_counts(cap)
    ranked = []
    for m in ms:
        shares_of = [per_round(packing, m)]
        if packing.group is None:     # with a group, every root's shares stay its translates' (orbits.py)
            aware = per_round(packing, m, cap_bw)
            if not np.array_equal(aware, shares_of[0]):
                shares_of.append(aware)
        for per in shares_of:
            link_s = float((packing.link_load(per) / cap_bw).max()) * block_bytes / m   # a round's bytes x K
            d = int(depth[per > 0].max())
            if pieces is not None:
                k = pieces // m
            elif rounds is not None:
                k = int(rounds)
            else:
                kstar = np.sqrt(max(d - 1, 0) * link_s / alpha) if alpha > 0 else cap // m
                k = int(np.clip(round(kstar), 1, max(1, cap // m)))
            ranked.append(((k + d - 1) * (link_s / k + alpha), m, k, per))
    ranked.sort(key=lambda f: f[0])
    found = []
    for _, m, k, per in ranked[:EXACT_CANDIDATES]:
        hi = max(1, cap // m)
        ks = {k} if pieces is not None or rounds is not None else \
            {int(np.clip(round(k * f), 1, hi)) for f in ROUND_FACTORS}
        for kk in sorted(ks):
            t = float(pipeline_round_times(loads, per, kk, cap_bw, block_bytes / (kk * m), startup).sum())
            found.append((t, m, kk, per))
    fastest = min(f[0] for f in found)
    best = min((f for f in found if f[0] <= fastest * (1 + BANDWIDTH_RTOL)), key=lambda f: (f[1] * f[2], f[0]))
    return best[1], best[2], best[3]


EXACT_CANDIDATES = 8
"""Pieces-a-round choices (with their rounding) timed round by round after the closed form ranks them."""

ROUND_FACTORS = (0.35, 0.5, 0.7, 1.0, 1.4)
"""Round counts timed round by round, as multiples of the closed form's best: the form overcharges
the fill, so the best count is at most its own (a 48-node random 3-regular graph: 147 rounds of
3 pieces at 0.891 of the bound by the form's choice)."""


LAYERED_TOLERANCE = 1e-4
"""The shallowest trees' packing stops within this share of the unrestricted packing's rate: on
dense networks its column generation meets many equally cheap trees and converges slowly."""

LAYERED_ITERATIONS = 300
"""Column-generation rounds at most for the shallowest trees (a pool for timed rounds, not a
certificate): on a 16-node circuit switch with 14 ports a Kautz-like configuration had not
converged after 500 (5 s); the circulant took 209."""


TIMED_PIECES_PER_ROUND = (128, 256, 512)
"""Pieces per block and round a timed plan tries (within :data:`MAX_DELIVERIES`), keeping the
fewest within :data:`BANDWIDTH_RTOL` of the fastest (a 64-node hypercube's all-gather: 0.9982 of
the bound at 256 a round, built in 0.28 s of CPU, against 0.9991 at 512 in 1.1 s): rounding the programme's shares to whole pieces moves up to a piece per arc and round
between rounds, and how much that costs depends on the count, not monotonically (a
32-node circuit switch with 30 ports: 0.942 of the bound at 128, 0.967 at 512; 48 nodes with 46
ports: 0.972 at 128, 0.953 at 512)."""


def _timed_plan(packing, cap_bw, paths, links, block_bytes, pieces, caps, alpha, chunk_base, beat_s, floor_z=None,  # noqa: C901, PLR0915
                orbit_of=None, large_above=None):
    """The fastest timed-rounds plan (:mod:`~collsim.algorithms.synth_trees.timing`) that can beat ``beat_s``.

    Rounds from the least every root's trees need upward, each solved per arc while the programme
    stays within :data:`~collsim.algorithms.synth_trees.timing.ARC_VARIABLES`, else per tree level
    within :data:`~collsim.algorithms.synth_trees.timing.LEVEL_VARIABLES` (one root's trees: both
    :data:`~collsim.algorithms.synth_trees.timing.ROOTED_VARIABLES`), else skipped; so is a
    count at which even a plan at the packing's rate (or ``floor_z``, a lower rate bound) with the
    fewest rounds the trees need would not beat the best so far (rounding to whole pieces can leave
    rounds empty, so a larger count can end in fewer paid rounds).  Where the per-arc programme is
    large (above :data:`LEVELS_FIRST_VARIABLES` at the least count), the per-level programmes, far
    smaller, come first: twice the least count, and if that plan reaches the rate with rounds whose
    latency is below :data:`BANDWIDTH_RTOL` of its time beyond the least count's
    (:func:`_latency_gain_s`), nothing else; otherwise every count per level, then per arc only if
    fewer rounds could still save that much.  Beyond three times the least count, a count is
    solved only while the one before it gave the best plan and the rate plus that many rounds of
    the least latency a round with a transfer pays is more than :data:`BANDWIDTH_RTOL` below the
    best plan's time, per level up to
    :data:`~collsim.algorithms.synth_trees.timing.EXTENDED_LEVEL_VARIABLES` unknowns.  Each
    solution is rounded to every count of :data:`TIMED_PIECES_PER_ROUND`, and of the plans within
    :data:`BANDWIDTH_RTOL` of the fastest the one with the fewest pieces is kept; plans of more than
    ``large_above`` pieces (:data:`LARGE_DELIVERIES`) only if they beat every plan within it by
    :data:`LARGE_GAIN`.  Returns
    ``(time_s, deliveries, pieces, rounds, bandwidth_s)`` (``bandwidth_s``: the programme's optimum)
    or None.
    """
    bw, lat, startup = links
    depth = packing.depth().max(axis=1)
    roots = np.unique(packing.root)
    s0 = int(max(depth[packing.root == r].min() for r in roots))
    one_root = len(roots) == 1 and packing.expanded      # a broadcast's or a reduce's trees
    arc_cap, level_cap = ((timing.ROOTED_VARIABLES, timing.ROOTED_VARIABLES) if one_root
                          else (timing.ARC_VARIABLES, timing.LEVEL_VARIABLES))
    if packing.parent.shape[1] > timing.LARGE_NODES:    # large networks: many programmes, each costly
        arc_cap = min(arc_cap, timing.LARGE_ARC_VARIABLES)
    # beyond three times the depth (counts tried only while still gaining) per-level programmes may be
    # larger, except for one root's trees (no larger programme moved a broadcast, ROOTED_VARIABLES)
    extended_cap = level_cap if one_root else max(level_cap, timing.EXTENDED_LEVEL_VARIABLES)
    floor_s = max(packing.z if floor_z is None else floor_z, 0.0) * block_bytes
    alpha_min = min(float(lat[p].sum()) for p in paths) + startup     # the least a round with a transfer pays
    own_s = max(floor_s, packing.z * block_bytes)    # no rounds on these trees beat their own rate
    arcs = int((packing.parent >= 0).sum())          # a timed plan holds arrays of arcs x rounds (TIMED_CELLS)
    # the fastest plan, and every plan within BANDWIDTH_RTOL of the fastest so far; the same within large_above
    state = {"best": None, "found": [], "small": None, "found_small": []}
    # the depth and a few more, twice, two and a half times (a 10x10 torus with rows 8x faster: 0.9793
    # of the bound at 25 rounds, against 0.9755 at 30) and three times it; then by half while each beats
    # the last (from the same position in the list as before the half-way count was added) and its
    # rounds' latency leaves something to gain
    first = {s0, s0 + 1, s0 + 2, s0 + 4, 2 * s0, 3 * s0}
    between = (5 * s0) // 2
    free = 6 + (between not in first)
    counts = sorted(first | {between})
    counts += [c for c in (int(round(3 * s0 * 1.5 ** i)) for i in range(1, 20)) if counts[-1] < c <= MAX_TIMED_ROUNDS]

    def limit_s() -> float:
        best = state["best"]
        return beat_s if best is None else min(beat_s, best[0])

    def attempt(s: int, by_level: bool) -> bool:
        """Solve and round the programme with ``s`` rounds; True once more rounds cannot gain."""
        if floor_s + s0 * alpha >= limit_s() or arcs * s > TIMED_CELLS:
            return False
        try:
            t = timing.timed(packing, cap_bw, block_bytes, s, by_level=by_level)
        except timing.ProgrammeError:      # not solved to optimality: no plan from it
            return False
        if t.bandwidth_s + s0 * alpha >= limit_s():     # rounding can leave rounds empty: s0 of them pay latency
            return False
        piece_counts = sorted({pieces} if pieces else {min(c, m * s) for m in TIMED_PIECES_PER_ROUND for c in caps})
        for p, rounding in ((p, r) for p in piece_counts for r in timing.ROUNDINGS):
            try:
                plan = timing.deliveries(packing, t, p, chunk_base * p, rounding)
            except timing.RoundingError:
                continue
            time_s = float(_round_times(plan, paths, bw, lat, startup, block_bytes / p, orbit_of).sum())
            if time_s < (beat_s if state["best"] is None else limit_s() * (1 + BANDWIDTH_RTOL)):
                state["found"].append((time_s, plan, p, s, t.bandwidth_s))
                if state["best"] is None or time_s < state["best"][0]:
                    state["best"] = state["found"][-1]
            small = state["small"]
            if large_above is not None and p <= large_above and time_s < beat_s and \
                    (small is None or time_s < small[0] * (1 + BANDWIDTH_RTOL)):
                state["found_small"].append((time_s, plan, p, s, t.bandwidth_s))
                if small is None or time_s < small[0]:
                    state["small"] = state["found_small"][-1]
        # more rounds could gain at most this much bandwidth time, and add latency
        return t.bandwidth_s - own_s <= BANDWIDTH_RTOL * limit_s()

    def sweep(kinds) -> None:
        for i, s in enumerate(counts):
            best = state["best"]
            if i >= free and (best is None or best[3] != counts[i - 1]
                              or best[0] - (own_s + s * alpha_min) <= BANDWIDTH_RTOL * best[0]):
                break             # beyond 3 x the depth: only while each count beats the last, and while
                #                   the rate plus s rounds' least latency could still save BANDWIDTH_RTOL
            if best is not None and kinds == "arcs" and s >= best[3]:
                break             # the levels' sweep already reached the rate with no more rounds
            if kinds != "levels" and timing.variables(packing, s) <= arc_cap:
                by_level = False
            elif timing.variables(packing, s, by_level=True) <= (level_cap if i < free else extended_cap):
                by_level = True
            else:
                continue
            if kinds == "arcs" and by_level:
                continue
            if attempt(s, by_level):
                break

    def settled() -> bool:      # no plan with fewer rounds can save BANDWIDTH_RTOL of the best's time
        best = state["best"]
        return best is not None and _latency_gain_s(best[3], s0, alpha) <= BANDWIDTH_RTOL * best[0]

    if timing.variables(packing, s0) > LEVELS_FIRST_VARIABLES:
        # twice the depth first: where it reaches the rate and its rounds' latency is negligible, done
        probe = 2 * s0 <= MAX_TIMED_ROUNDS and timing.variables(packing, 2 * s0, by_level=True) <= level_cap
        if not (probe and attempt(2 * s0, True) and settled()):
            sweep("levels")
            if not settled():
                sweep("arcs")
    else:
        sweep("both")
    best, found = state["best"], state["found"]
    if best is None:
        return None
    small = state["small"]
    if small is not None and best[0] > small[0] * (1 - LARGE_GAIN):   # more pieces must pay for themselves
        best, found = small, state["found_small"]
    # the fewest pieces within BANDWIDTH_RTOL of the fastest, as the pipeline chooses (_pipeline_choice):
    # more pieces cost deliveries to build, verify and simulate for a gain below the model's resolution
    return min((f for f in found if f[0] <= best[0] * (1 + BANDWIDTH_RTOL)), key=lambda f: (f[2], f[0]))


ORDERED_ABOVE = 0.01
"""The trees along one translation at a time (:mod:`~collsim.algorithms.synth_trees.ordered`) are
tried only where the best plan on the packing's trees is this much slower than its rate: there the
packing's trees are deep and fill slowly (tori with a dimension 8x slower: 0.974 of the bound,
0.982 on the ordered trees).  Near the rate the pool only costs time (an 8x8 torus with rows 4x
faster: 0.25 s for 0.9953 instead of 0.9948), and its plan can even lose to rounding (the 10x10
torus: 0.9955 against 0.9992, its pieces shared among eight trees)."""

LARGE_GAIN = 2e-3
"""How much faster (a share of the time) a plan above :data:`MAX_DELIVERIES` must be than the best
within it to be kept (:data:`LARGE_DELIVERIES`): more pieces cost time to build and check, and the
prediction is an upper bound through switches, so a small predicted gain can simulate as a loss.
1,024 GPUs in boxes of 8 on one rail gain 0.4 % (kept); on boxes of 8 on a full fat tree with
NVSwitch 300 GB/s and NICs 50 GB/s the all-reduce of 256 MiB gained 0.12 % predicted with 2,048
pieces instead of 512, simulated 0.16 % slower, and cost 6 s more."""


ROUNDING_ABOVE = 5e-3
"""Where the best timed plan of a whole schedule (a packing expanded to every root) is this much of
its time slower than its programme's bandwidth time and its rounds' latencies, rounding the shares to
few whole pieces (:data:`MAX_DELIVERIES` over ``N x (N - 1)`` receivers, shared among many trees)
cost it, and its pool is timed again with up to :data:`LARGE_DELIVERIES`, kept where it is
:data:`LARGE_GAIN` faster: a dragonfly of 5 groups of 4 routers with 2 hosts each (2,112 trees, 641
pieces a block within the cap, 48 trees a root) rose from 0.963 to 0.993 of the bound with 4,096
pieces, at 8 s of CPU instead of 3 s."""


def _latency_gain_s(rounds: int, least_rounds: int, alpha_s: float) -> float:
    """The most a plan with fewer rounds than ``rounds`` (at least ``least_rounds``, the trees' depth)
    can gain over one in ``rounds`` whose bandwidth time is already the packing's rate: the latency of
    the rounds it saves (its bandwidth time is no less)."""
    return max(rounds - least_rounds, 0) * alpha_s


LEVELS_FIRST_VARIABLES = 3_000
"""Per-arc programmes above this many unknowns at the least round count are solved only after the
per-level ones (about a tenth of their unknowns, and a tenth of HiGHS's time or less), and only where
fewer rounds could still save :data:`BANDWIDTH_RTOL` of the plan's time.  On the 8x8 mesh (6,090
unknowns at 14 rounds) the per-arc programmes at 14 to 18 rounds took 2.7 s of its 3.3 s, and the
plan kept was the per-level one at 28 rounds."""


MAX_TIMED_ROUNDS = 96
"""Most rounds a timed plan tries.  Beyond three times the trees' depth, counts grow by half while
each beats the last and the rate plus the count's rounds of latency is more than
:data:`BANDWIDTH_RTOL` below the best plan (a 24-node mesh with rows 8x faster: 1.7 s of HiGHS
spent on 54 rounds after the best plan's 36, whose bandwidth was 0.37 % above the rate, which 18
more microseconds of latency outweigh) (small programmes, those a network's translations reduce to one root's arcs,
reach the rate only with many rounds: a 3x4 torus with rows 8x faster stops 2.3 % above it in 9)."""


TIMED_CELLS = 32_000_000
"""Most arcs x rounds of a timed plan: its programme's answer and its rounding hold several arrays of
that shape (8 bytes a cell, the answers remembered per packing).  Counts above it are skipped, as
programmes above the caps on unknowns are.  Only a packing expanded to every root on many end nodes
reaches it: 2,000 GPUs in boxes of 8 on a full fat tree, planned in full where a size left their
chunks unequal, packed 4,000 trees of 2,000 nodes (8 M arcs), and its counts up to 14 rounds held
13.7 GB, growing past 24 GB with more (such whole schedules are now refused above 128 end nodes,
``build.MAX_TRANSLATED_END_NODES``; the cap bounds those below it, none of which comes near it)."""


BANDWIDTH_RTOL = 1e-3
"""The search for more rounds stops once the programme's bandwidth time is within this share of
the best plan's time above the packing's rate: more rounds could gain at most that and add a
latency each.  A 30-host dragonfly at 1.0001 of the rate in 13 rounds then skips 29 s of larger
programmes, and a 1 KiB all-gather on a 5x5 mesh (bandwidth time 0.1 % of its 9 us) 17 s."""
