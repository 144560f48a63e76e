"""Rounds timed by a linear programme: how much of every tree each arc carries in each round.

The uniform pipeline (:mod:`~collsim.algorithms.synth_trees.pipeline`) sends every tree's
batches one round apart, so a tree of depth ``D`` adds ``D - 1`` rounds in which the links near
its root idle at the end and the links near its leaves idle at the start; with ``K`` rounds that
costs ``(D - 1) / K`` of the bandwidth time, and more rounds cost a step latency each.  Here the
number of rounds ``S`` is small (the trees' depth and a few more) and a linear programme decides,
for every arc of every tree, what share of the tree's data it has delivered by the end of every
round (``h[a, j]``, non-decreasing, at most what the arc's tail held a round earlier, the tree's
whole weight at the end), and the trees' weights (each root's sum to 1).  A round lasts as long
as its most loaded link needs; the programme minimises the rounds' sum.  Arcs near the root may
run ahead and arcs near the leaves catch up, and links idle in one tree's fill carry another
tree's data, so the fill is shared out instead of paid per tree.  It is solved by HiGHS's
dual simplex where it is small and per arc (:data:`SIMPLEX_VARIABLES`), else by its interior-point
method (on the dual programme where that is faster: per arc, every root's trees); the shares are then rounded to whole pieces (to the nearest, or down), which
keeps every arc behind its tail (rounding is monotone, and an arc and its tail share a tree's piece
count).

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024 (the trees); L. R. Ford, D. R. Fulkerson, "Constructing
maximal dynamic flows from static flows", Operations Research 6(3), 1958 (time-expanded flows);
Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Mathematical
Programming Computation 10, 2018 (HiGHS).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from .packing import Packing
from .pipeline import Deliveries, merge_ranges, shares
from .translations import stabilisers

ARC_VARIABLES = 12_000
"""Largest per-arc timing programme solved (arc-round unknowns): with :data:`IPM_OPTIONS`, 3–8 s
of HiGHS's interior point and crossover at the cap on this machine.  The time grows faster than the size (17 s for 21,714 unknowns, which
a 30-host dragonfly needs to reach 0.991 of the bound in 13 rounds; 10 s for 20,290 of a 5x5
mesh), and ``synthesize`` and the test suite build many networks, so the cap is a compromise."""

LARGE_NODES = 512
"""Above this many end nodes (networks packed through their translation group, one root's trees
with a row per link orbit) the per-arc programmes are capped at :data:`LARGE_ARC_VARIABLES`.  At 256
end nodes the cap would cost a hypercube 0.0006 of the bound (0.9986 to 0.9980) for 2 s."""

LARGE_ARC_VARIABLES = 8_000
"""Largest per-arc timing programme on a network of more than :data:`LARGE_NODES` end nodes: its
programmes near :data:`ARC_VARIABLES` took 2–3 s each (1,024 GPUs in boxes of 8 on a full fat tree,
NVSwitch 300 GB/s and NICs 50 GB/s: 24 s of which 15 s in HiGHS for an all-reduce), and the per-level
programmes above the cap are tiny.  Measured there: all-reduce of 256 MiB 0.896 of the bound in
10–12 s instead of 0.902 in 24 s.  A cap of 4,000 cost 32 boxes of 8 on 2 rails its 0.991 (0.982);
at 8,000 it keeps it."""

LEVEL_VARIABLES = 5_000
"""Largest per-level programme solved (``by_level``): about 2 s for 4,607 unknowns (a 32-host
dragonfly in 14 rounds; 10,854 of a 30-host one took 25 s); larger instances keep the uniform
pipeline."""

EXTENDED_LEVEL_VARIABLES = 7_000
"""Largest per-level programme solved for a round count beyond three times the trees' depth, which
is tried only while the count before it gave the best plan (``plan._timed_plan``): there the plan is
still gaining with more rounds, and the fill of deep trees is what it loses.  The 6x8 mesh with rows
8x faster (48 end nodes, all-gather of 1 GiB of output) had stopped at 36 rounds (3,868 unknowns) on
its shallowest trees, 0.9369 of the bound in 11.7 s of CPU; 54 rounds (6,064 unknowns, 2.6 s of
HiGHS) reach 0.9633 in 14.2 s.  A cap of 12,000 adds 81 rounds for 0.9635 and costs 32 s."""

ROOTED_VARIABLES = 5_000
"""Largest programme (per arc, or per level) solved for one root's trees (broadcast, reduce):
Edmonds' packing from one root has deep trees, and in the families benchmark no programme above
6,000 unknowns moved a broadcast (rails 0.780, dragonflies 0.895 with caps of 6,000 and of 24,000,
measured with at most 64 pieces a round)."""

IPM_OPTIONS = {"ipm_optimality_tolerance": 1e-6}
"""HiGHS's interior point to a relative gap of 1e-6 (the default is 1e-8), then crossover to a
vertex.  Crossover costs time (3.5 s of the 8.7 s a 20-host dragonfly's programme of 10,604
unknowns took), but a vertex has few fractional shares, and the shares are rounded to whole
pieces: without it the 10x10 torus's all-gather fell from 0.9911 to 0.9822 of the bound (101
pieces a block, the cap on deliveries)."""


SIMPLEX_VARIABLES = 4_000
"""Per-arc programmes up to this many unknowns are tried first by HiGHS's dual simplex (a vertex, no
crossover needed) within :data:`SIMPLEX_ITERATIONS_PER_UNKNOWN`; larger ones and every per-level
programme go to its interior point.  Measured on the 8x8 torus with rows 4x faster: 2,268 unknowns
in 0.13 s by the simplex against 0.33 s by the interior point, 1,762 in 0.07 s against 0.12 s; but
6,114 (the 8x8 mesh at 14 rounds) in 0.45 s against 0.35 s, and per-level programmes take the
simplex ten times its iterations per unknown (2,553 unknowns of the same mesh at 28 rounds: 25,880
iterations and 5.2 s against 0.26 s)."""

SIMPLEX_ITERATIONS_PER_UNKNOWN = 1.0
"""The simplex's iterations at most, per unknown, before the programme goes to the interior point
(and so do the packing's later programmes, :data:`_SIMPLEX_SLOW`).  On the families benchmark's
networks the simplex was the faster wherever it needed at most about one iteration per unknown
(random connected graphs: 0.25–0.28, 3,832 unknowns in 0.05 s against 0.27 s) and the slower from
about 1.2 (a 45-host dragonfly: 3.1 an unknown, 2.2 s against 1.0 s; a 24-node heterogeneous mesh:
2.3, 1.35 s against 0.62 s).  The limit counts iterations, not seconds, so plans stay deterministic."""

SIMPLEX_ITERATIONS = 1_000
"""The simplex's iterations allowed on any programme, however small: a programme of a few hundred
unknowns can take more iterations than unknowns (a 64-host leaf-spine's 81 at 2 rounds: 82) and
is solved in milliseconds either way; cutting it off would send the packing's later, larger
programmes, on which the simplex wins, to the interior point."""

_SIMPLEX_SLOW: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Per packing, whether a programme on it ran out of simplex iterations: its programmes grow with
the rounds and their iterations per unknown with them (a 24-node heterogeneous mesh: 0.5 at 8
rounds, 1.2 at 12, 2.5 at 32), so the later ones skip the simplex."""


class RoundingError(ValueError):
    """Whole pieces could not follow the programme's shares (an arc left behind its tail): the
    caller drops that plan.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, Operations Research 6(3), 1958 (the time-expanded flow rounded).
    """


class ProgrammeError(RuntimeError):
    """HiGHS did not solve a timing programme to optimality, at :data:`IPM_OPTIONS` nor at its
    defaults: the caller drops that plan (the uniform pipeline always remains).

    References
    ----------
    Q. Huangfu, J. A. J. Hall, Mathematical Programming Computation 10, 2018 (HiGHS).
    """


@dataclass(frozen=True, eq=False)
class Timing:
    """The programme's answer: cumulative shares per arc and round, and the trees' weights.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Constructing maximal dynamic flows from static flows", Operations
    Research 6(3), 1958 (time-expanded flows).
    """

    tree: np.ndarray
    node: np.ndarray
    first: np.ndarray
    cumulative: np.ndarray
    weight: np.ndarray
    bandwidth_s: float

    @property
    def rounds(self) -> int:
        """Rounds ``S``."""
        return int(self.cumulative.shape[1])


def variables(packing: Packing, rounds: int, *, by_level: bool = False) -> int:
    """Unknowns of the timing programme with ``rounds`` rounds (trees deeper are left out).

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Constructing maximal dynamic flows from static flows", Operations
    Research 6(3), 1958 (time-expanded flows).
    """
    packing = packing.base()
    depth = packing.depth()
    ok = depth.max(axis=1) <= rounds
    if by_level:
        d = np.concatenate([np.arange(1, int(x) + 1) for x in depth[ok].max(axis=1)]) if ok.any() else np.zeros(0)
    else:
        d = depth[ok][packing.parent[ok] >= 0]
    return int(np.maximum(rounds - d + 1, 0).sum())


_SOLVED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""Per packing, the programmes solved on it: an all-reduce plans its reduce-scatter, its all-gather
and their split on one packing with the same rounds, block and bandwidths (on 1,024 GPUs of boxes on
a fat tree, twelve programmes three times over, 21 s of HiGHS instead of 7)."""


def timed(packing: Packing, bandwidth_bytes_per_s: np.ndarray, block_bytes: float, rounds: int, *,
          by_level: bool = False) -> Timing:
    """Solve the timing programme with ``rounds`` rounds (once per packing and arguments).

    References
    ----------
    L. R. Ford, D. R. Fulkerson, Operations Research 6(3), 1958 (time-expanded flows).
    """
    bw = np.asarray(bandwidth_bytes_per_s, float)
    key = (int(rounds), bool(by_level), float(block_bytes), bw.tobytes())
    solved = _SOLVED.setdefault(packing, {})
    if key not in solved:
        try:
            solved[key] = _timed(packing, bw, block_bytes, rounds, by_level=by_level)
        except ProgrammeError as exc:
            solved[key] = exc
    out = solved[key]
    if isinstance(out, ProgrammeError):
        raise out
    return out


def _timed(packing: Packing, bandwidth_bytes_per_s: np.ndarray, block_bytes: float, rounds: int, *,  # noqa: PLR0915
           by_level: bool = False) -> Timing:
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, hstack
    s = int(rounds)
    full = packing
    packing = full.base()              # by a group: the planned roots' trees alone, a row per link orbit
    row_of, reps, copies = full.link_rows()
    depth = packing.depth()
    keep = np.flatnonzero(depth.max(axis=1) <= s)
    roots = np.unique(packing.root)
    if len(np.unique(packing.root[keep])) < len(roots):
        raise InputError(f"synth-trees: some root has no tree of depth at most {s} rounds")
    tk, vk = np.nonzero(packing.parent[keep] >= 0)
    tree = keep[tk]
    node = vk
    na, nt = len(tree), len(keep)
    level = depth[tree, node]
    if by_level:      # every arc into depth d of tree T delivers the same share by each round
        ukey, unit_of = np.unique(tk * (s + 1) + level, return_inverse=True)
        unit_of = unit_of.ravel()
        utree, ulevel = ukey // (s + 1), ukey % (s + 1)
        uparent = np.where(ulevel > 1, np.arange(len(ukey)) - 1, -1)   # a tree's levels are consecutive
    else:             # every arc its own shares
        unit_of = np.arange(na)
        utree, ulevel = tk, level
        arc_of = np.full(packing.parent.shape, -1, np.int64)
        arc_of[tree, node] = np.arange(na)
        par = packing.parent[tree, node]
        uparent = np.where(level > 1, arc_of[tree, np.where(level > 1, par, 0)], -1)
    nu = len(utree)
    first = ulevel - 1
    width = s - first                              # variables h[u, first..s-1]
    off = np.r_[0, np.cumsum(width)]
    nh = int(off[-1])
    w0, tau0 = nh, nh + nt
    nv = tau0 + s
    u_of = np.repeat(np.arange(nu), width)
    j_of = np.arange(nh) - off[u_of] + first[u_of]  # the round of every variable
    rows, cols, vals = [], [], []
    nrow = 0
    # non-decreasing: h[u, j-1] - h[u, j] <= 0
    later = np.flatnonzero(j_of > first[u_of])
    r = nrow + np.arange(len(later))
    nrow += len(later)
    rows += [r, r]
    cols += [later - 1, later]
    vals += [np.ones(len(later)), -np.ones(len(later))]
    # behind the tail: h[u, j] - h[tail's unit, j - 1] <= 0
    va = np.flatnonzero(ulevel[u_of] > 1)
    up = uparent[u_of[va]]
    uvar = off[up] + (j_of[va] - 1 - first[up])
    r = nrow + np.arange(len(va))
    nrow += len(va)
    rows += [r, r]
    cols += [va, uvar]
    vals += [np.ones(len(va)), -np.ones(len(va))]
    # link loads: sum over arcs crossing l of (h[u, j] - h[u, j-1]) x block / bandwidth <= tau_j
    # (translated: every translate of the arcs crossing the orbit's representative)
    nl = len(reps)
    path = packing.path[tree, node]
    hops = np.array([len(packing.paths[p]) for p in path], np.int64)
    link = np.concatenate([packing.paths[p] for p in path]) if na else np.zeros(0, np.int64)
    coef_unit = unit_of[np.repeat(np.arange(na), hops)]
    bw = np.asarray(bandwidth_bytes_per_s, float)
    # in units of a block over the slowest link (HiGHS's tolerances are absolute); by a group: each
    # of the planned root's images carries a 1 / |stabiliser| share
    stab = np.ones(packing.parent.shape[1]) if full.group is None else stabilisers(full.group)[1]
    coef = bw.min() / bw[link] * copies[link] / np.repeat(stab[packing.root[tree]], hops)
    rep = width[coef_unit]
    var = np.repeat(off[coef_unit], rep) + _ranges(rep)
    vlink = np.repeat(row_of[link], rep)
    vcoef = np.repeat(coef, rep)
    base = nrow
    nrow += s * nl
    rows.append(base + j_of[var] * nl + vlink)
    cols.append(var)
    vals.append(vcoef)
    prev = j_of[var] > first[u_of[var]]
    rows.append(base + j_of[var[prev]] * nl + vlink[prev])
    cols.append(var[prev] - 1)
    vals.append(-vcoef[prev])
    rows.append(base + np.arange(s * nl))
    cols.append(tau0 + np.repeat(np.arange(s), nl))
    vals.append(-np.ones(s * nl))
    a_ub = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(nrow, nv)).tocsr()
    # the last variable of every unit is its tree's weight; each root's weights sum to 1
    root_row = np.searchsorted(roots, packing.root[keep])
    eq_rows = [np.arange(nu), np.arange(nu), nu + root_row]
    eq_cols = [off[1:] - 1, w0 + utree, w0 + np.arange(nt)]
    eq_vals = [np.ones(nu), -np.ones(nu), np.ones(nt)]
    a_eq = coo_matrix((np.concatenate(eq_vals), (np.concatenate(eq_rows), np.concatenate(eq_cols))),
                      shape=(nu + len(roots), nv)).tocsr()
    cost = np.zeros(nv)
    cost[tau0:] = 1.0
    # at the looser gap the interior point's status can end "unknown": then its defaults
    methods = [("highs-ipm", IPM_OPTIONS), ("highs-ipm", {})]
    simplex = not by_level and nv <= SIMPLEX_VARIABLES and not _SIMPLEX_SLOW.get(full, False)
    if simplex:
        methods.insert(0, ("highs-ds", {"maxiter": max(SIMPLEX_ITERATIONS, int(SIMPLEX_ITERATIONS_PER_UNKNOWN * nv))}))
    b_eq = np.r_[np.zeros(nu), np.ones(len(roots))]
    # per arc, of several roots (or a group's), the interior point solves the dual programme, the shares
    # its multipliers: 0.6-0.75 of the primal's time on the same programmes (a 24-node heterogeneous mesh,
    # 1,352-7,190 unknowns, 4.9 s against 7.8 s), but 1.0-1.4 times per level and 0.8-1.2 for one root's trees
    dual = not by_level and (len(roots) > 1 or full.group is not None)
    for method, options in methods:
        if method == "highs-ipm" and dual:    # the interior point on the dual programme, its multipliers the shares
            res = linprog(np.r_[np.zeros(nrow), -b_eq], A_ub=hstack([a_ub.T, a_eq.T]).tocsr(), b_ub=cost,
                          bounds=[(None, 0.0)] * nrow + [(None, None)] * len(b_eq), method=method, options=options)
            x = None if res.status != 0 else -res.ineqlin.marginals
        else:
            res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(nrow), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method=method,
                          options=options)
            x = res.x
        if res.status == 0:
            break
        if method == "highs-ds":     # past its iterations: this packing's larger programmes go to the interior point
            _SIMPLEX_SLOW[full] = True
    else:
        raise ProgrammeError(f"synth-trees: the timing programme with {s} rounds failed: {res.message}")
    cum = np.zeros((nu, s))
    cum[u_of, j_of] = x[:nh]
    cum = np.maximum.accumulate(np.maximum(cum, 0.0), axis=1)
    weight = np.zeros(len(packing.root))
    weight[keep] = np.maximum(x[w0:tau0], 0.0)
    first_arc, cum = level - 1, cum[unit_of]
    if full.group is not None and full.expanded:   # every image of the planned roots' arcs, with their shares
        g = len(full.group)
        tree = (np.arange(g)[:, None] * len(packing.root) + tree[None, :]).ravel()
        node = full.group[:, node].ravel()
        first_arc, cum, weight = np.tile(first_arc, g), np.tile(cum, (g, 1)), np.tile(weight, g)
    return Timing(tree=tree, node=node, first=first_arc, cumulative=cum, weight=weight,
                  bandwidth_s=float(x[tau0:].sum()) * block_bytes / float(bw.min()))


def _ranges(lengths: np.ndarray) -> np.ndarray:
    """``0..n-1`` for every ``n`` in ``lengths``, concatenated."""
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total) - starts


ROUNDINGS = (0.5, 1e-3)
"""What :func:`deliveries` adds to a share of pieces before taking its floor: to the nearest piece,
or down (a piece within 1e-3 of being delivered counts as delivered: the interior point's shares
are accurate to about 1e-7 of a block).  Neither is always better, so plans try both: rounding down
leaves up to a piece per arc and round for the last round (a 7x6 torus with rows 8x faster: 0.9695
of the bound, to the nearest 0.9716), rounding to the nearest can overload the first of two rounds
(a 48-node circuit switch with 46 ports: 0.973 down, 0.951 to the nearest)."""


def deliveries(packing: Packing, timing: Timing, pieces: int, chunk_base: np.ndarray,
               rounding: float = ROUNDINGS[0]) -> Deliveries:
    """Whole pieces of the timed shares: the transfers of every arc and round.

    Every root's ``pieces`` are shared among its trees (largest remainder); an arc has delivered
    ``floor(pieces_T x h / weight_T + rounding)`` of its tree's pieces by the end of each round,
    which is never more than its tail held a round earlier (rounding is monotone, and an arc and
    its tail share their tree's piece count), and all of them after the last round.

    References
    ----------
    L. R. Ford, D. R. Fulkerson, "Constructing maximal dynamic flows from static flows", Operations
    Research 6(3), 1958 (time-expanded flows).
    """
    t_all = len(packing.root)
    count = np.zeros(t_all, np.int64)
    first_piece = np.zeros(t_all, np.int64)
    for r in np.unique(packing.root):
        trees = np.flatnonzero(packing.root == r)
        count[trees] = shares(timing.weight[trees], pieces) if timing.weight[trees].sum() > 0 else 0
        first_piece[trees] = np.r_[0, np.cumsum(count[trees])[:-1]]
    w = timing.weight[timing.tree]
    c = count[timing.tree]
    frac = np.where(w[:, None] > 0, timing.cumulative / np.where(w > 0, w, 1.0)[:, None], 0.0)
    got = np.minimum(np.floor(frac * c[:, None] + rounding).astype(np.int64), c[:, None])
    got[:, -1] = c
    # keep every arc behind its tail a round earlier (top-down by depth), then check the end
    arc_of = np.full(packing.parent.shape, -1, np.int64)
    arc_of[timing.tree, timing.node] = np.arange(len(timing.tree))
    par = packing.parent[timing.tree, timing.node]
    inner = par != packing.root[timing.tree]
    up = np.where(inner, arc_of[timing.tree, np.where(inner, par, 0)], -1)
    inner_arcs = np.flatnonzero(up >= 0)
    by_level = inner_arcs[np.argsort(timing.first[inner_arcs], kind="stable")]
    cuts = np.flatnonzero(np.diff(timing.first[by_level])) + 1
    for level in np.split(by_level, cuts):   # a level at a time: every tail is one level up, done before
        got[level, 1:] = np.minimum(got[level, 1:], got[up[level], :-1])
        got[level, 0] = 0
    if (got[:, -1] != c).any():
        raise RoundingError("synth-trees: the timed rounds' pieces fell behind after rounding")
    new = np.diff(np.concatenate([np.zeros((len(got), 1), np.int64), got], axis=1), axis=1)
    arc, rnd = np.nonzero(new > 0)
    n_new = new[arc, rnd]
    lo = got[arc, rnd] - n_new
    t = timing.tree[arc]
    src = packing.parent[t, timing.node[arc]]
    dst = timing.node[arc]
    path = packing.path[t, dst]
    return merge_ranges(rnd, src, dst, path, chunk_base[packing.root[t]] + first_piece[t] + lo, n_new, timing.rounds)
