"""``synth-trees``: arborescences packed at the cut bound's rate (issue 32), checked against brute force.

* the pricing's minimum arborescence against networkx's on random digraphs;
* the packing's rate against the cut bound found by enumerating every vertex set of random
  networks of up to 10 vertices (switches, one-way and heterogeneous links), and every tree a
  spanning arborescence whose arcs are paths through switches, within every link's capacity;
* the schedules of every collective verify, are never faster than their bound, and on the
  issue's network classes reach the efficiency docs/synthesis.md reports.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms.synth_trees import min_arborescence, pack
from collsim.core.errors import InputError
from collsim.experiments.network_families import FAMILIES, dragonfly, hetero_mesh, one_way, rail_boxes


def _tree_cost(cost, parent):
    return sum(cost[p, v] for v, p in enumerate(parent) if p >= 0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 8), seed=st.integers(0, 10**6), density=st.floats(0.3, 1.0))
@example(n=7, seed=42446, density=0.3046875)
def test_the_minimum_arborescence_is_networkx_s(n, seed, density):
    rng = np.random.default_rng(seed)
    cost = np.where(rng.random((n, n)) < density, rng.integers(1, 20, (n, n)).astype(float), np.inf)
    root = int(rng.integers(n))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    # networkx's minimum_spanning_arborescence (3.6) reports none for some graphs that have one
    # (n=7, seed=42446, density=0.3046875 is such a graph); its minimum branching with every
    # weight lowered by M takes the most arcs it can, so it spans whenever the root reaches all
    big = 1e4
    g.add_weighted_edges_from((u, v, cost[u, v] - big) for u in range(n) for v in range(n)
                              if u != v and v != root and np.isfinite(cost[u, v]))
    if len(nx.descendants(g, root)) < n - 1:  # no spanning arborescence: some node is unreachable
        with pytest.raises(InputError, match="cannot be reached"):
            min_arborescence(cost, root)
        return
    ref = nx.minimum_branching(g)
    assert ref.number_of_edges() == n - 1
    parent = min_arborescence(cost, root)
    assert parent[root] == -1 and (parent[np.arange(n) != root] >= 0).all()
    for v in range(n):                    # every node reaches the root
        seen, u = set(), v
        while u != root:
            assert u not in seen
            seen.add(u)
            u = int(parent[u])
    assert _tree_cost(cost, parent) == pytest.approx(ref.size(weight="weight") + big * (n - 1))


def test_an_arborescence_whose_cycles_nest_a_thousand_deep_takes_one_matrix():
    """Costs whose every contraction closes exactly one new cycle with the next vertex: 1 <-> 2, then
    {1, 2} <-> 3, ... 1,498 contractions deep.  The recursive form held a matrix a level (and passed
    Python's recursion limit here; a 1,024-node hypercube's pricing held 10 GB that way).  The optimum
    is known: one arc from the root (100) and every other vertex entered at cost 1."""
    n = 1500
    cost = np.full((n, n), 2.0)
    cost[0, :] = 100.0
    cost[np.arange(1, n - 1), np.arange(2, n)] = 1.0       # v - 1 -> v
    cost[2, 1] = 1.0
    parent = min_arborescence(cost, 0)
    assert parent[0] == -1 and (parent[1:] >= 0).all()
    for v in range(1, n):                   # every vertex reaches the root
        u, steps = v, 0
        while u != 0:
            u, steps = int(parent[u]), steps + 1
            assert steps < n
    assert _tree_cost(cost, parent) == 100.0 + (n - 2)


def _brute_ratio(net, direction="in", roots=None):
    """max over vertex sets S of (blocks that must enter S) / (bandwidth entering S), by enumeration."""
    lk = net.links
    src, dst, bw = np.asarray(lk.src), np.asarray(lk.dst), np.asarray(lk.bandwidth_bytes_per_s)
    if direction == "out":
        src, dst = dst, src
    n, v = net.nodes, net.vertices
    roots = range(n) if roots is None else roots
    best = 0.0
    for k in range(1, v + 1):
        for side in itertools.combinations(range(v), k):
            inside = np.zeros(v, bool)
            inside[list(side)] = True
            if not inside[:n].any():
                continue
            demand = sum(1 for r in roots if not inside[r])   # trees rooted outside must enter S
            if demand == 0:
                continue
            cap = bw[~inside[src] & inside[dst]].sum()
            best = max(best, demand / cap)
    return best


def _random_small(seed):
    rng = np.random.default_rng(seed)
    pick = seed % 4
    if pick == 0:
        return one_way(int(rng.integers(3, 8)), seed)
    if pick == 1:
        return hetero_mesh(2, int(rng.integers(2, 5)), float(rng.choice([1, 2, 4, 8])))
    if pick == 2:
        return FAMILIES["random-switched"](rng, 0)
    return FAMILIES["fat-tree-oversubscribed"](rng, 0)


def _check_trees(net, p, reverse=False):
    """Every tree spans the end nodes from its root, its arcs are paths through switches, loads fit."""
    n = net.nodes
    lk = net.links
    src, dst = np.asarray(lk.src), np.asarray(lk.dst)
    if reverse:
        src, dst = dst, src
    for t in range(len(p.root)):
        parent = p.parent[t]
        assert parent[p.root[t]] == -1 and (np.delete(parent, p.root[t]) >= 0).all()
        depth = p.depth()[t]
        assert (depth >= 0).all() and depth.max() < n
        for w in range(n):
            if parent[w] < 0:
                continue
            links = p.link_ids[p.paths[p.path[t, w]]]
            hops = [(int(src[i]), int(dst[i])) for i in links]
            assert hops[0][0] == parent[w] and hops[-1][1] == w
            assert all(a[1] == b[0] and a[1] >= n for a, b in zip(hops[:-1], hops[1:]))
    for r in np.unique(p.root):
        assert p.weight[p.root == r].sum() == pytest.approx(1.0)
    cap = np.asarray(lk.bandwidth_bytes_per_s)[p.link_ids]
    assert ((p.weight @ p.load) <= cap * p.z * (1 + 1e-6)).all()


@settings(max_examples=24, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_the_packing_s_rate_is_the_cut_bound_of_every_vertex_set(seed):
    net = _random_small(seed)
    if net.vertices > 11:
        return
    for reverse, direction in ((False, "in"), (True, "out")):
        p = pack(net, reverse=reverse)
        _check_trees(net, p, reverse)
        assert p.z == pytest.approx(_brute_ratio(net, direction), rel=1e-6)


@settings(max_examples=16, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_a_broadcast_packing_runs_at_the_root_s_min_cut(seed):
    net = _random_small(seed)
    root = seed % net.nodes
    p = pack(net, [root])
    _check_trees(net, p)
    assert p.z == pytest.approx(_brute_ratio(net, "in", roots=[root]), rel=1e-6)


def test_timed_rounds_reach_a_ring_s_cut_bound_in_its_diameter_s_rounds():
    """A 4-ring of unit links: every node takes 3 blocks over 2 links, so 1.5 block times is the
    bound; the per-arc programme reaches it in 3 rounds, the per-level one cannot (every arc into
    a tree's second level moves together; 2.0 on the mirror-image trees, 1.67 on the trees the
    ring's rotations give: a 3-hop chain beside a 2-level tree)."""
    from collsim.algorithms.synth_trees import timing
    from collsim.systems import load_system
    p = pack(load_system("ring", nodes=4, link_bandwidth_bytes_per_s=1.0))
    assert timing.timed(p, np.ones(8), 1.0, 3).bandwidth_s == pytest.approx(1.5, rel=1e-6)
    assert timing.timed(p, np.ones(8), 1.0, 3, by_level=True).bandwidth_s > 1.6


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), extra=st.integers(0, 3))
def test_timed_rounds_never_beat_the_packing_and_their_pieces_stay_behind_their_tails(seed, extra):
    """The programme's rounds carry at least the packing's link time (the cut bound); per level is
    a restriction of per arc; whole pieces never reach a node before its parent has them."""
    from collsim.algorithms.synth_trees import timing
    net = _random_small(seed)
    p = pack(net)
    cap = np.asarray(net.links.bandwidth_bytes_per_s, float)[p.link_ids]
    depth = p.depth().max(axis=1)
    s = int(max(depth[p.root == r].min() for r in np.unique(p.root))) + extra
    arc = timing.timed(p, cap, 1e3, s)
    level = timing.timed(p, cap, 1e3, s, by_level=True)
    assert arc.bandwidth_s >= p.z * 1e3 * (1 - 1e-6)
    assert level.bandwidth_s >= arc.bandwidth_s * (1 - 1e-6)
    n = net.nodes
    d = timing.deliveries(p, arc, 16, np.arange(n) * 16)
    have = {(v, c): -1 for v in range(n) for c in range(16 * v, 16 * v + 16)}   # held from the start
    for i in np.argsort(d.round, kind="stable"):
        for c in d.chunk_idx[d.chunk_ptr[i]:d.chunk_ptr[i + 1]]:
            assert have.get((int(d.src[i]), int(c)), d.rounds) < d.round[i]
            assert (int(d.dst[i]), int(c)) not in have          # every piece reaches a node once
            have[(int(d.dst[i]), int(c))] = int(d.round[i])
    assert len(have) == n * n * 16                               # and every node gets every piece


def test_timed_rounds_are_chosen_where_they_beat_the_pipeline_and_verify():
    """Two 8-GPU boxes on rails at 1 GiB: the uniform pipeline needs 74 rounds (predicted 0.909 of
    the bound); timed rounds need 8 (predicted 0.978)."""
    net = rail_boxes(2, gpus=8, rails=2)
    s = collsim.build("synth-trees", net, "allgather", "64MiB")
    assert s.params["rounds"] <= 12
    bound = collsim.lower_bound_s(net, s.collective)
    assert bound / s.params["predicted_time_s"] >= 0.95
    assert collsim.verify(s).transfers > 0


@pytest.mark.parametrize("family", ["rail-boxes", "dragonfly", "fat-tree-oversubscribed", "random-switched"])
@pytest.mark.parametrize("timing_mode", ["pipeline", "timed"])
def test_through_switches_each_round_ends_within_its_prediction(family, timing_mode):
    """A flow through a switch is one piece, so max-min sharing gives every flow at least
    ``bandwidth / flows`` of each link it crosses and no round outlasts its most loaded link's bytes
    over its bandwidth plus the slowest latency (before: rails predicted 0.978, simulated 0.859)."""
    net = FAMILIES[family](np.random.default_rng(5), 0)
    s = collsim.build("synth-trees", net, "allgather", "4MiB", timing=timing_mode)
    through = np.diff(s.routes.route_ptr) > 1
    assert through.any()
    assert (np.diff(s.chunk_ptr)[through] == 1).all()            # every flow through a switch is one piece
    sim = collsim.simulate(s)
    whole_bytes = 1 + s.params["pieces"] / 2**22   # the prediction takes a piece as block / pieces
    assert sim.total_time_s <= s.params["predicted_time_s"] * whole_bytes
    assert sim.total_time_s >= collsim.lower_bound_s(net, s.collective) * (1 - 1e-9)


def test_synthesize_simulates_both_timings_and_keeps_the_faster():
    """The prediction bounds the simulated time from above but can miss by a round's latency spread,
    so synthesize times the uniform pipeline and the timed rounds by simulation; neither beats it."""
    net = rail_boxes(2, gpus=4, rails=2)
    best = collsim.synthesize(net, "allgather", "16MiB", registered=False)
    for mode in ("pipeline", "timed"):
        s = collsim.build("synth-trees", net, "allgather", "16MiB", timing=mode)
        assert s.params["timing"] == mode
        assert best.result.time_s <= collsim.evaluate(s).time_s * (1 + 1e-12)


@pytest.fixture
def fresh_plans(monkeypatch):
    """No packing or timing programme remembered from another test: a test that watches HiGHS's calls
    must see every programme solved (equal systems share their remembered packings)."""
    import weakref

    from collsim.algorithms.synth_trees import build as build_mod
    from collsim.algorithms.synth_trees import timing
    monkeypatch.setattr(build_mod, "_PACKINGS", weakref.WeakKeyDictionary())
    monkeypatch.setattr(timing, "_SOLVED", weakref.WeakKeyDictionary())
    monkeypatch.setattr(timing, "_SIMPLEX_SLOW", weakref.WeakKeyDictionary())
    return monkeypatch


def test_a_timing_programme_unsolved_at_the_looser_gap_is_solved_at_the_defaults(monkeypatch, fresh_plans):
    """HiGHS's interior point can end with an unknown status (a random 3-regular graph did without
    crossover): the programme is solved again at HiGHS's defaults, and the timed plan still wins."""
    import scipy.optimize

    from collsim.algorithms.synth_trees import timing
    real = scipy.optimize.linprog
    calls = []

    def flaky(*args, options=None, method=None, **kw):
        calls.append((method, dict(options or {})))
        res = real(*args, options=options, method=method, **kw)
        if options == timing.IPM_OPTIONS or method == "highs-ds":   # the simplex too (small programmes)
            res.status = 4
        return res
    monkeypatch.setattr(scipy.optimize, "linprog", flaky)
    s = collsim.build("synth-trees", hetero_mesh(3, 4, 4.0), "allgather", "256MiB", timing="timed")
    assert s.params["timing"] == "timed" and ("highs-ipm", {}) in calls and collsim.verify(s).transfers > 0
    assert any(method == "highs-ds" for method, _ in calls)    # the small programmes tried by the simplex first


def test_a_timing_programme_never_solved_leaves_the_pipeline(monkeypatch, fresh_plans):
    import scipy.optimize
    real = scipy.optimize.linprog

    def failing(*args, **kw):
        res = real(*args, **kw)
        res.status = 4
        return res
    monkeypatch.setattr(scipy.optimize, "linprog", lambda *a, **kw: failing(*a, **kw) if kw.get("method") in
                        ("highs-ipm", "highs-ds") else real(*a, **kw))
    s = collsim.build("synth-trees", hetero_mesh(3, 4, 4.0), "allgather", "256MiB", timing="timed")
    assert s.params["timing"] == "pipeline" and collsim.verify(s).transfers > 0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), extra=st.integers(0, 3))
def test_the_simplex_and_the_interior_point_reach_one_optimum(seed, extra):
    """Small per-arc programmes go to HiGHS's dual simplex, the rest to its interior point, which
    solves every root's per-arc programme in its dual form and reads the shares from its multipliers:
    both solve the same programme, so their optima agree (their vertices may differ), and both
    answers are shares of it (every arc's last share its tree's weight, each planned root's weights
    summing to 1).  Per-level programmes always go to the interior point."""
    from collsim.algorithms.synth_trees import timing
    net = _random_small(seed)
    p = pack(net)
    cap = np.asarray(net.links.bandwidth_bytes_per_s, float)[p.link_ids]
    depth = p.depth().max(axis=1)
    s = int(max(depth[p.root == r].min() for r in np.unique(p.root))) + extra
    optima = []
    for limit in (10**9, 0):          # every per-arc programme by the simplex, then none
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(timing, "SIMPLEX_VARIABLES", limit)
            t = timing._timed(p, cap, 1e3, s)
        optima.append(t.bandwidth_s)
        assert np.allclose(t.cumulative[:, -1], t.weight[t.tree], atol=1e-6)
        base = p.base()                   # the planned roots' trees (moved by a group, their weights repeat)
        for r in np.unique(base.root):
            assert t.weight[:len(base.root)][base.root == r].sum() == pytest.approx(1.0, abs=1e-6)
    assert optima[0] == pytest.approx(optima[1], rel=1e-6)
    assert min(optima) >= p.z * 1e3 * (1 - 1e-6)


def test_a_simplex_out_of_iterations_hands_the_packing_to_the_interior_point(monkeypatch, fresh_plans):
    """The simplex runs within an iteration budget: past it the programme is solved by the interior
    point, and so are that packing's later programmes (each packing tries the simplex once)."""
    import scipy.optimize

    from collsim.algorithms.synth_trees import timing
    monkeypatch.setattr(timing, "SIMPLEX_ITERATIONS", 1)
    monkeypatch.setattr(timing, "SIMPLEX_ITERATIONS_PER_UNKNOWN", 1e-6)
    real, calls = scipy.optimize.linprog, []

    def spy(*args, method=None, **kw):
        res = real(*args, method=method, **kw)
        calls.append((method, res.status))
        return res
    monkeypatch.setattr(scipy.optimize, "linprog", spy)
    s = collsim.build("synth-trees", hetero_mesh(3, 4, 4.0), "allgather", "256MiB", timing="timed")
    simplex = [status for method, status in calls if method == "highs-ds"]
    timed = [status for method, status in calls if method == "highs-ipm"]
    assert simplex and all(status != 0 for status in simplex)        # every try ran out of iterations
    assert len(simplex) <= 2 < len(timed)          # once per packing (the trees and the shallowest trees)
    assert s.params["timing"] == "timed" and collsim.verify(s).transfers > 0


def _programmes(monkeypatch):
    """Record whether each timing programme solved is per level."""
    from collsim.algorithms.synth_trees import timing
    real, seen = timing._timed, []

    def spy(*args, by_level=False, **kw):
        seen.append(by_level)
        return real(*args, by_level=by_level, **kw)
    monkeypatch.setattr(timing, "_timed", spy)
    return seen


def test_levels_first_settles_a_bandwidth_bound_mesh_without_per_arc_programmes(monkeypatch, fresh_plans):
    """The 8x8 mesh at 1 GiB (per-arc programmes of 6,090 unknowns at its 14 rounds): the per-level
    programme at twice the depth reaches the packing's rate, and its 28 rounds of latency are below
    0.1 % of the time, so no per-arc programme is solved; the plan is timed and near the bound."""
    seen = _programmes(monkeypatch)
    net = collsim.load_system("mesh", dims=(8, 8))
    s = collsim.build("synth-trees", net, "allgather", 2**30 // 64, timing="timed")
    assert seen and all(seen)
    assert collsim.lower_bound_s(net, s.collective) / s.params["predicted_time_s"] >= 0.99
    assert collsim.verify(s).transfers > 0


def test_levels_first_still_solves_per_arc_where_rounds_cost_latency(monkeypatch, fresh_plans):
    """At 64 KiB on a 3x4 mesh a round's latency is a large share of the time, so fewer rounds can
    gain: with every programme counted large, the per-arc ones are solved after the levels'."""
    from collsim.algorithms.synth_trees import plan as plan_mod
    monkeypatch.setattr(plan_mod, "LEVELS_FIRST_VARIABLES", 0)
    seen = _programmes(monkeypatch)
    s = collsim.build("synth-trees", hetero_mesh(3, 4, 4.0), "allgather", "64KiB", timing="timed")
    assert True in seen and False in seen and seen.index(True) < seen.index(False)
    assert collsim.verify(s).transfers > 0


def test_rounds_beyond_three_times_the_depth_stop_where_their_latency_outweighs_the_gain(monkeypatch, fresh_plans):
    """A 3x4 mesh with rows 8x faster, 1 GiB of all-gather output: on the shallowest trees (5
    deep) the plan in 15 rounds, three times the depth, is the best so far, but the next count, 22,
    would add 7 rounds of latency, more than the 15-round plan is above the rate (less 0.1 %), so
    its programme is not solved."""
    from collsim.algorithms.synth_trees import plan as plan_mod
    from collsim.algorithms.synth_trees import timing
    real, counts = timing.timed, []

    def spy(packing, bw, block, rounds, **kw):
        counts.append(int(rounds))
        return real(packing, bw, block, rounds, **kw)
    monkeypatch.setattr(timing, "timed", spy)
    net = hetero_mesh(3, 4, ratio=8.0)
    s = collsim.build("synth-trees", net, "allgather", 2**30 // 12)
    rate_s = collsim.lower_bound_s(net, s.collective)        # the packing's rate is the cut bound
    alpha_s = float(np.min(net.links.latency_s)) + float(net.startup_s or 0.0)
    assert s.params["timing"] == "timed" and s.params["rounds"] == 15 and 15 in counts
    assert 22 not in counts and max(counts) < 22      # (the packing's own trees, 6 deep, stop at 18)
    best_s = s.params["predicted_time_s"]
    assert best_s - (rate_s + 22 * alpha_s) <= plan_mod.BANDWIDTH_RTOL * best_s     # 22 rounds could not gain
    assert best_s - (rate_s + 15 * alpha_s) > 0                                     # the premise is not vacuous
    assert collsim.verify(s).transfers > 0


def test_counts_beyond_three_times_the_depth_may_solve_larger_per_level_programmes(fresh_plans):
    """A 4x6 torus with rows 8x faster, 1 GiB of all-gather output, with the caps lowered so that per
    arc only up to 15 rounds fit (700 unknowns) and per level none (0): on the trees moved by the
    translations (5 deep) the plan in 15 rounds is the best so far, so 22 rounds are solved per level
    under ``EXTENDED_LEVEL_VARIABLES``, and with that cap at 0 they are not.  Below three times the
    depth the per-level cap holds either way, and the larger programmes never give a slower plan."""
    import weakref

    from collsim.algorithms.synth_trees import build as build_mod
    from collsim.algorithms.synth_trees import timing
    real, solved = timing.timed, []

    def spy(packing, bw, block, rounds, by_level=False):
        solved.append((int(rounds), by_level, timing.variables(packing, rounds, by_level=by_level),
                       int(packing.depth().max(axis=1).min())))
        return real(packing, bw, block, rounds, by_level=by_level)
    fresh_plans.setattr(timing, "timed", spy)
    fresh_plans.setattr(timing, "ARC_VARIABLES", 700)
    fresh_plans.setattr(timing, "LEVEL_VARIABLES", 0)
    predicted, caps = {}, (timing.EXTENDED_LEVEL_VARIABLES, 0)
    for extended_cap in caps:
        fresh_plans.setattr(timing, "EXTENDED_LEVEL_VARIABLES", extended_cap)
        for memo in ((build_mod, "_PACKINGS"), (timing, "_SOLVED"), (timing, "_SIMPLEX_SLOW")):
            fresh_plans.setattr(*memo, weakref.WeakKeyDictionary())
        solved.clear()
        net = hetero_mesh(4, 6, ratio=8.0, torus=True)
        s = collsim.build("synth-trees", net, "allgather", 2**30 // net.nodes)
        per_level = [(r, v, d) for r, by_level, v, d in solved if by_level]
        assert all(v <= 700 for r, by_level, v, d in solved if not by_level)
        assert all(r > 3 * d and v <= extended_cap for r, v, d in per_level)     # only beyond 3x the depth
        assert ((22, 5) in {(r, d) for r, v, d in per_level}) == (extended_cap > 0)
        assert collsim.verify(s).transfers > 0
        predicted[extended_cap] = s.params["predicted_time_s"]
    assert predicted[caps[0]] <= predicted[0] * (1 + 1e-12)


def test_no_timed_plan_holds_more_arcs_x_rounds_than_the_cap(fresh_plans):
    """A timed plan holds arrays of arcs x rounds (its programme's answer, remembered, and its
    rounding): counts whose cells exceed ``TIMED_CELLS`` are not solved, so a packing expanded to
    every root on many end nodes cannot grow past its memory (2,000 GPUs on a fat tree held 13.7 GB at
    14 rounds and were killed at 24 GB).  A 16-host dragonfly (its packing expanded to every root),
    with the cap at the median of the cells its programmes hold without it: every programme solved is
    within the cap and the plan verifies; with the cap below the least of them no round is timed."""
    import weakref

    from collsim.algorithms.synth_trees import build as build_mod
    from collsim.algorithms.synth_trees import plan as plan_mod
    from collsim.algorithms.synth_trees import timing
    real, solved = timing.timed, []

    def spy(packing, bw, block, rounds, **kw):
        solved.append(int((packing.parent >= 0).sum()) * int(rounds))
        return real(packing, bw, block, rounds, **kw)
    fresh_plans.setattr(timing, "timed", spy)
    net = dragonfly(4, 2, hosts=2)
    size = 2**30 // net.nodes
    free = collsim.build("synth-trees", net, "allgather", size, timing="timed")
    assert free.params["timing"] == "timed" and solved
    cells = sorted(solved)
    cap = cells[len(cells) // 2]             # about half the programmes solved without the cap are above it
    assert cells[-1] > cap
    for limit, timed in ((cap, True), (min(cells) - 1, False)):
        fresh_plans.setattr(plan_mod, "TIMED_CELLS", limit)
        for memo in ((build_mod, "_PACKINGS"), (timing, "_SOLVED"), (timing, "_SIMPLEX_SLOW")):
            fresh_plans.setattr(*memo, weakref.WeakKeyDictionary())
        solved.clear()
        s = collsim.build("synth-trees", net, "allgather", size)
        assert all(c <= limit for c in solved) and bool(solved) == timed
        assert (s.params["timing"] == "timed") == timed
        assert collsim.verify(s).transfers > 0


@pytest.mark.parametrize("retry", [True, False])
def test_a_whole_schedule_that_rounding_to_few_pieces_slows_is_timed_again_with_more(monkeypatch, fresh_plans, retry):
    """A dragonfly of 16 hosts (its packing expanded to every root) with the cap on deliveries
    lowered to 5,000 leaves 20 pieces a block: rounding the timed shares to so few costs more than
    0.5 % of the plan, so its trees are timed again with up to the larger cap, and the plan kept has
    more pieces and is at least 0.2 % faster (``LARGE_GAIN``); without the retry it keeps 20."""
    from collsim.algorithms.synth_trees import plan as plan_mod
    monkeypatch.setattr(plan_mod, "MAX_DELIVERIES", 5_000)
    monkeypatch.setattr(plan_mod, "LARGE_DELIVERIES", 1_000_000)
    if not retry:
        monkeypatch.setattr(plan_mod, "ROUNDING_ABOVE", np.inf)
    net = dragonfly(4, 2, hosts=2)
    s = collsim.build("synth-trees", net, "allgather", 2**30 // net.nodes)
    base = 5_000 // (net.nodes * (net.nodes - 1))
    efficiency = collsim.lower_bound_s(net, s.collective) / s.params["predicted_time_s"]
    assert s.params["timing"] == "timed"
    if retry:
        assert base < s.params["pieces"] <= 1_000_000 // (net.nodes * (net.nodes - 1)) and efficiency >= 0.998
    else:
        assert s.params["pieces"] <= base and efficiency < 0.998 * (1 - plan_mod.LARGE_GAIN)
    assert collsim.verify(s).transfers > 0


def test_an_unknown_timing_is_refused_naming_the_parameter():
    with pytest.raises(InputError, match="timing"):
        collsim.build("synth-trees", rail_boxes(2, gpus=2, rails=1), "allgather", "1MiB", timing="fastest")


COLLECTIVES = ["allgather", "reducescatter", "allreduce", "broadcast", "reduce"]


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("size", ["1KiB", "64MiB"])
def test_every_collective_verifies_and_is_never_below_its_bound(collective, size):
    net = rail_boxes(2, gpus=4, rails=2)
    s = collsim.build("synth-trees", net, collective, size)
    report = collsim.verify(s)                  # raises on any violation
    row = collsim.evaluate(s, report=report)
    assert row.time_s >= row.lower_bound_s * (1 - 1e-9) > 0
    sim = collsim.simulate(s)
    assert sim.total_time_s >= row.lower_bound_s * (1 - 1e-9)


def test_the_prediction_is_the_simulated_time_on_direct_links():
    """Without switches every logical link is a physical one: the round times are exact (up to the
    chunks' whole bytes: the prediction takes every piece as block / pieces)."""
    s = collsim.build("synth-trees", hetero_mesh(3, 4, 4.0), "allgather", "256MiB")
    assert collsim.simulate(s).total_time_s == pytest.approx(s.params["predicted_time_s"],
                                                             rel=s.params["pieces"] / 2**28)


# The efficiency docs/synthesis.md reports for each class at 1 GiB of all-gather output (the worst
# of the seeds measured there, floored): the target is 0.99 everywhere, not met (docs).
FLOOR = {"hetero-mesh": 0.96, "hetero-torus": 0.96, "random-regular": 0.95, "random-connected": 0.95,
         "one-way": 0.95}


@pytest.mark.parametrize("family", sorted(FLOOR))
def test_direct_network_classes_reach_the_reported_efficiency(family):
    net = FAMILIES[family](np.random.default_rng(11), 0)
    s = collsim.build("synth-trees", net, "allgather", "1GiB")
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.lower_bound_s / row.time_s >= FLOOR[family]


def test_boxes_on_rails_beat_the_greedy_by_far():
    """Two 8-GPU boxes on two rails: the issue measured synth-matching at 0.133 of the bound."""
    net = rail_boxes(2, gpus=8, rails=2)
    trees = collsim.evaluate(collsim.build("synth-trees", net, "allgather", "1GiB"))
    greedy = collsim.evaluate(collsim.build("synth-matching", net, "allgather", "1GiB"))
    assert trees.lower_bound_s / trees.time_s >= 0.97   # 0.981 measured (docs/synthesis.md)
    assert trees.time_s < greedy.time_s / 2


def test_a_dragonfly_schedule_verifies():
    net = dragonfly(3, 2, hosts=1)
    s = collsim.build("synth-trees", net, "allreduce", "4MiB")
    assert collsim.verify(s).transfers > 0


@pytest.mark.parametrize("system,options,collective", [("hypercube", {"nodes": 16}, "allreduce"),
                                                      ("mesh", {"dims": (4, 4)}, "allgather")])
def test_synthesize_is_never_slower_than_the_best_compared_row_and_names_it(system, options, collective):
    """Issue 32: at 1 KiB recursive doubling beat every synthesizer on the hypercube; synthesize now
    tries the registered algorithms too."""
    rows, _ = collsim.compare(system, collective, "1KiB", **options)
    best = min(rows, key=lambda r: r.time_s)
    out = collsim.synthesize(system, collective, "1KiB", system_options=options)
    assert out.result.time_s <= best.time_s * (1 + 1e-9)
    assert out.schedule.algorithm == out.result.algorithm
    alone = collsim.synthesize(system, collective, "1KiB", system_options=options, registered=False)
    assert alone.schedule.algorithm.startswith("synth-") and alone.result.time_s >= out.result.time_s


def test_the_command_line_can_leave_the_registered_algorithms_out(tmp_path):
    import json
    import subprocess
    from conftest import collsim_exe
    args = [collsim_exe(), "synthesize", "--system", "hypercube", "-n", "16", "-c", "allreduce", "-s", "1KiB",
            "--json"]
    both = json.loads(subprocess.run(args, capture_output=True, text=True, check=True, cwd=tmp_path).stdout)
    alone = json.loads(subprocess.run(args + ["--synthesizers-only"], capture_output=True, text=True, check=True,
                                      cwd=tmp_path).stdout)
    assert alone["algorithm"].startswith("synth-") and not both["algorithm"].startswith("synth-")
    assert both["time_s"] < alone["time_s"] and both["verified"] and alone["verified"]


def test_pieces_that_cannot_fit_or_do_not_fill_every_round_are_refused():
    with pytest.raises(InputError, match="deliveries"):
        collsim.build("synth-trees", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)}, pieces=10**8)
    with pytest.raises(InputError, match="multiple of rounds"):
        collsim.build("synth-trees", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)}, pieces=12,
                      rounds=5)
    s = collsim.build("synth-trees", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)}, pieces=12,
                      rounds=4)
    assert (s.params["pieces"], s.params["rounds"]) == (12, 4) and collsim.verify(s).transfers > 0


def _pipelined(net, roots, expand=True):
    from collsim.algorithms.synth_trees import plan as plan_mod
    p = pack(net, roots, expand=expand)
    bw, lat, startup = plan_mod._link_arrays(net)
    paths = plan_mod._physical_paths(net, p, False)
    return p, bw, lat, startup, paths


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), per=st.integers(1, 40), rounds=st.integers(1, 30), largest_remainder=st.booleans())
def test_a_pipeline_s_rounds_are_timed_exactly_without_building_it(seed, per, rounds, largest_remainder):
    """pipeline_round_times, which the choice of pieces and rounds ranks by, is the built
    pipeline's own per-round time (the most loaded link plus the slowest arc), round for round;
    networks with switches, one-way and heterogeneous links, broadcasts and all-gathers."""
    from collsim.algorithms.synth_trees import plan as plan_mod
    from collsim.algorithms.synth_trees.pipeline import depth_loads, per_round, pipeline, pipeline_round_times
    net = _random_small(seed)
    roots = [int(seed % net.nodes)] if seed % 3 == 0 else None
    p, bw, lat, startup, paths = _pipelined(net, roots)
    shares_ = per_round(p, per) if largest_remainder else per_round(p, per, bw[p.link_ids])
    built = pipeline(p, shares_, rounds, np.arange(net.nodes) * per * rounds)
    piece = 1e6 / (per * rounds)
    want = plan_mod._round_times(built, paths, bw, lat, startup, piece)
    loads = depth_loads(p, np.array([lat[x].sum() for x in paths]))
    got = pipeline_round_times(loads, shares_, rounds, bw[p.link_ids], piece, startup)
    assert len(got) == len(want) == built.rounds
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_depth_loads_fold_onto_link_orbits_as_the_packing_does():
    """On a packing built as its planned root's trees (a torus's translations), the depth loads sum
    to Packing.link_load, and so does the folded load matrix."""
    from collsim.algorithms.synth_trees.pipeline import depth_loads
    net = hetero_mesh(4, 4, 4.0, torus=True)
    p = pack(net, None, expand=False)
    assert not p.expanded and p.link_group is not None
    per = np.random.default_rng(0).integers(0, 5, len(p.root))
    np.testing.assert_allclose(per @ p.folded_load(), p.link_load(per))
    loads = depth_loads(p, np.ones(len(p.paths)))
    np.testing.assert_allclose(loads.per_depth(per).sum(axis=0), p.link_load(per))
    assert (loads.latency_s[0] == 0).all() and (loads.latency_s[1:].max(axis=0) == 1).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), per=st.integers(1, 300))
def test_link_aware_shares_give_every_root_its_pieces(seed, per):
    from collsim.algorithms.synth_trees.pipeline import per_round
    net = _random_small(seed)
    p, bw, *_ = _pipelined(net, None)
    got = per_round(p, per, bw[p.link_ids])
    assert (got >= 0).all()
    for r in np.unique(p.root):
        assert got[p.root == r].sum() == per
        exact = p.weight[p.root == r] * per
        assert (got[p.root == r] >= np.floor(exact - 1e-9)).all()      # never below its share rounded down


def test_many_small_trees_are_rounded_to_a_balanced_load():
    """A broadcast on 32 GPUs in 4 boxes on one rail packs 78 trees: rounded by largest remainder to
    64 pieces a round, its most loaded link carries 1.13 times its share (measured when this was
    written).  Link by link the rounding carries no more at any count tried and less at most,
    and wider counts carry less still."""
    from collsim.algorithms.synth_trees.pipeline import per_round
    from collsim.algorithms.synth_trees.plan import MAX_PER_ROUND, _per_round_counts
    net = FAMILIES["rail-boxes"](np.random.default_rng(0), 1)
    p = pack(net, [0])
    cap = np.asarray(net.links.bandwidth_bytes_per_s, float)[p.link_ids]

    def excess(m, aware):
        shares_ = per_round(p, m, cap if aware else None)
        return float((p.link_load(shares_) / cap).max()) / (m * p.z)    # the most loaded link over its share

    counts = (16, 32, 76, 128, 181, 255, 511)
    plain, aware = np.array([excess(m, False) for m in counts]), np.array([excess(m, True) for m in counts])
    assert len(p.root) > 64 and excess(64, False) > 1.1
    assert (aware <= plain + 1e-12).all() and (aware < plain - 0.01).sum() >= 4
    assert excess(4096, True) < 1.01
    counts = _per_round_counts(32_000)
    assert counts[:MAX_PER_ROUND] == list(range(1, MAX_PER_ROUND + 1)) and 16_000 < counts[-1] <= 32_000
    assert _per_round_counts(5) == [1, 2, 3, 4, 5]


def test_a_broadcast_with_many_trees_gains_from_wider_rounds():
    """A 12-node torus with rows faster (the families' seed 1): its broadcast packs 33 trees; with
    at most 64 pieces a round it reached 0.889 of the bound (docs/synthesis.md); the wider counts
    and the pipeline timed round by round reach more."""
    net = FAMILIES["hetero-torus"](np.random.default_rng(1), 0)
    s = collsim.build("synth-trees", net, "broadcast", "1GiB")
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.lower_bound_s / row.time_s >= 0.91
    assert s.params["pieces"] // s.params["rounds"] > 64


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 40))
def test_merge_ranges_is_merge_of_every_piece(seed, rows):
    """Rows of consecutive pieces, merged by their first piece, give the deliveries that merging
    every piece gives (the timed plans build them so: ``timing.deliveries``)."""
    from collsim.algorithms.synth_trees.pipeline import merge, merge_ranges
    rng = np.random.default_rng(seed)
    count = rng.integers(1, 5, rows)
    first = np.r_[0, np.cumsum(count + rng.integers(0, 3, rows))][:rows]      # disjoint ranges
    shuffle = rng.permutation(rows)
    first, count = first[shuffle], count[shuffle]
    rnd, src, dst, path = (rng.integers(0, 3, rows) for _ in range(4))
    got = merge_ranges(rnd, src, dst, path, first, count, 3)
    every = np.repeat(first, count) + np.concatenate([np.arange(c) for c in count] + [np.zeros(0, int)])
    if rows == 0:          # merge itself needs a row; no transfers, no pieces
        assert len(got.round) == len(got.chunk_idx) == 0 and got.chunk_ptr.tolist() == [0]
        return
    want = merge(*(np.repeat(x, count) for x in (rnd, src, dst, path)), every, 3)
    for name in ("round", "src", "dst", "path", "chunk_ptr", "chunk_idx"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.rounds == want.rounds == 3


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(3, 6), cols=st.integers(3, 6), ratio=st.sampled_from([1.0, 2.0, 4.0, 8.0]),
       reverse=st.booleans())
def test_ordered_trees_span_a_torus_along_its_links_in_its_diameter(rows, cols, ratio, reverse):
    """Trees spreading along one translation at a time: spanning arborescences of root 0 over the
    torus's own links, as deep as its diameter, their loads within their rate, which is never
    better than the packing's (the cut bound)."""
    from collsim.algorithms.synth_trees.ordered import ordered_pool
    net = hetero_mesh(rows, cols, ratio, torus=True)
    p = pack(net, reverse=reverse, expand=False)
    o = ordered_pool(net, p, reverse)
    assert o is not None and len(o.root) >= 1 and (o.root == 0).all()
    _check_trees(net, o, reverse)
    assert (o.depth().max(axis=1) == rows // 2 + cols // 2).all()
    cap = np.asarray(net.links.bandwidth_bytes_per_s, float)[o.link_ids]
    assert (o.link_load(o.weight) <= cap * o.z * (1 + 1e-6)).all()
    assert o.z >= p.z * (1 - 1e-6)


def test_ordered_trees_need_links_between_end_nodes():
    """Through switches a translation is no link of its own: no ordered trees."""
    from collsim.algorithms.synth_trees.ordered import ordered_pool
    net = rail_boxes(4, gpus=4, rails=2)
    assert ordered_pool(net, pack(net, expand=False), False) is None


def test_ordered_trees_lift_a_torus_with_a_slow_dimension():
    """The families' worst heterogeneous torus (4x6, rows 8x faster, 1 GiB of all-gather output): the
    packing's trees (depth 6 and 12) reached 0.9717 of the bound in timed rounds; the trees that cross
    the slow dimension first reach 0.981 (docs/synthesis.md)."""
    from collsim import pipeline
    net = hetero_mesh(4, 6, 8.0, torus=True)
    s = pipeline.build_compact("synth-trees", net, "allgather", 2**30 // 24)
    row = collsim.evaluate(s)
    assert row.verified and row.lower_bound_s / row.time_s >= 0.98


def test_ordered_trees_are_not_sought_among_many_translation_classes():
    """A complete graph on 17 nodes, as a circulant, has 8 translation classes out of node 0 (a circuit
    switch with many ports is alike): no product of a few cycles, and its 2^8 tie-breaks times 8!
    orderings are not listed (listing the tie-breaks of 30 ports once exhausted the machine)."""
    from collsim.algorithms.synth_trees.ordered import MAX_CLASSES, ordered_pool
    from collsim.kinds.network.custom import CustomNetwork
    n = 17
    links = tuple((a, (a + g) % n, 50e9, 1e-6, False) for a in range(n) for g in range(1, n))
    net = CustomNetwork(nodes=n, link=links)
    p = pack(net, expand=False)
    assert p.group is not None and len(p.group) == n           # its rotations are a translation group
    assert (n - 1) // 2 > MAX_CLASSES and ordered_pool(net, p, False) is None
