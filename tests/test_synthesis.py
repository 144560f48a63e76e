"""Synthesized schedules (issue 22): they verify, the simulator agrees with the synthesizer's
prediction, no schedule beats the bound, and the TACOS instances reach the bound.

The golden bounds are derived here, not copied: on a mesh the corner node has two in-links and
must receive the other N-1 blocks, so an all-gather of 1 GiB total output takes at least
(N-1)/N GiB / (2 B); on a torus every node has 2d in-links.  TACOS's published figures
(W. Won et al., arXiv 2304.05301) appear only in docs/synthesis.md, beside ours.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms import get_algorithm
from collsim.core.errors import CollsimError
from collsim.synthesis import synthesize
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork

GIB = 2 ** 30


def _tacos(kind, dims, bw_gib, lat_s):
    return load_system(kind, dims=dims, link_bandwidth_bytes_per_s=bw_gib * GIB, link_latency_s=lat_s)


@pytest.mark.parametrize("kind,dims,bw_gib,lat_s,in_links,synthesizer", [
    ("mesh", (5, 5), 50, 0.5e-6, 2, "synth-matching"),
    # the torus's trees, packed once and moved by its shifts, in timed rounds
    ("torus", (3, 3, 3), 50, 0.5e-6, 6, "synth-trees"),
])
def test_tacos_instances_reach_the_bound(kind, dims, bw_gib, lat_s, in_links, synthesizer):
    """``synthesize`` returns ``rotated-dims`` (every dimension at once: the bound plus a latency a
    step), and the synthesizer alone also reaches 0.99, its prediction the simulated time."""
    system = _tacos(kind, dims, bw_gib, lat_s)
    n = system.nodes
    size = GIB // n  # collsim's all-gather size is one node's block
    derived_s = (n - 1) * size / (in_links * bw_gib * GIB)  # the node with fewest in-links
    out = synthesize(system, "allgather", size)
    r = out.result
    assert r.verified and out.schedule.algorithm == "rotated-dims"
    assert r.lower_bound_s == pytest.approx(derived_s, rel=1e-3)  # the reported bound adds a latency
    assert r.time_s >= r.lower_bound_s
    assert r.lower_bound_s / r.time_s >= 0.99
    assert out.certificate is not None and len(out.certificate.side) >= 1
    own = collsim.build(synthesizer, system, "allgather", size)
    mine = collsim.evaluate(own)
    assert mine.verified and mine.lower_bound_s / mine.time_s >= 0.99 and mine.time_s >= r.time_s
    # one flow per link per step; synth-trees predicts every piece as block / pieces, the chunks
    # are whole bytes (39,768,215 B in 512 pieces)
    assert own.params["predicted_time_s"] == pytest.approx(mine.time_s, rel=1e-5)


@pytest.mark.parametrize("collective", ["reducescatter", "allreduce"])
def test_reduce_scatter_and_all_reduce_verify_and_agree_with_the_prediction(collective):
    system = _tacos("torus", (3, 3, 3), 50, 0.5e-6)
    s = collsim.build("synth-matching", system, collective, "27MiB")
    r = collsim.evaluate(s)
    assert r.verified and r.time_s >= r.lower_bound_s
    assert s.params["predicted_time_s"] == pytest.approx(r.time_s, rel=1e-6)
    assert bool(s.reduce.any())


def test_reduce_scatter_is_the_reversed_all_gather():
    system = _tacos("mesh", (3, 4), 50, 0.5e-6)
    ag = collsim.build("synth-matching", system, "allgather", "1MiB", chunks=2, capacity=1, seed=1)
    rs = collsim.build("synth-matching", system, "reducescatter", "12MiB", chunks=2, capacity=1, seed=1)
    assert ag.num_steps == rs.num_steps and len(ag) == len(rs)
    assert rs.reduce.all() and not ag.reduce.any()
    ag_edges = sorted(zip(ag.src.tolist(), ag.dst.tolist()))
    assert sorted(zip(rs.src.tolist(), rs.dst.tolist())) != [] and len(ag_edges) == len(rs)


def test_a_fixed_choice_is_kept_and_recorded():
    system = _tacos("mesh", (4, 4), 50, 0.5e-6)
    s = collsim.build("synth-matching", system, "allgather", "1MiB", chunks=3, capacity=2, seed=2)
    assert (s.params["chunks"], s.params["capacity"], s.params["seed"]) == (3, 2, 2)
    assert s.collective.split == 3
    assert collsim.verify(s).transfers == len(s)


def test_small_messages_flood_and_beat_the_textbook():
    """At 1 KiB per node latency dominates: never slower than the best textbook algorithm."""
    system = _tacos("mesh", (5, 5), 50, 0.5e-6)
    out = synthesize(system, "allgather", 1024)
    textbook = []
    for name in ("mesh", "bruck", "ring", "recursive-doubling"):
        spec = get_algorithm(name)
        if spec.refusal(system, "allgather") is None:
            textbook.append(collsim.evaluate(collsim.build(name, system, "allgather", 1024)).time_s)
    assert textbook and out.result.time_s <= min(textbook) * (1 + 1e-9)
    assert out.schedule.num_steps <= 12  # far fewer than the 12 block-steps of the bandwidth-bound plan + fill


@pytest.mark.parametrize("kind,options,hosts_per_edge", [
    ("star", {"nodes": 8}, 8),
    ("fat-tree", {"nodes": 16, "k": 4}, 2),
    ("mlfm", {"d": 3}, 3),
])
@pytest.mark.parametrize("collective", ["allgather", "reducescatter", "allreduce"])
def test_switched_networks_reach_the_host_link_bound(kind, options, hosts_per_edge, collective):
    """Through switches the synthesizer plans on overlays; these networks are host-link bound.

    Derivation (all-gather, block b per node, host links of B each way): a host must receive
    the other N-1 blocks over its one down-link, so T >= (N-1) b / B; reduce-scatter is the
    reverse (its up-link); all-reduce of M bytes needs 2 (N-1)/N M / B (reduce-scatter then
    all-gather of M/N blocks).  A switch does not copy data, so no cut of these non-blocking
    networks is tighter: the bound collsim reports must equal the derived one.
    """
    system = load_system(kind, **options)
    n, bw = system.nodes, float(system.links.bandwidth_bytes_per_s.min())
    size = 64 << 20
    s = collsim.build("synth-matching", system, collective, size)
    r = collsim.evaluate(s)
    derived = (2 * (n - 1) / n * size if collective == "allreduce" else (n - 1) * size) / bw
    assert r.verified
    assert r.lower_bound_s == pytest.approx(derived, rel=1e-3)
    assert r.lower_bound_s / r.time_s >= 0.99
    assert s.params["overlay"] in ("ring", "doubling", "direct") or s.params["overlay"].startswith("near-")
    assert s.params["predicted_time_s"] >= r.time_s * (1 - 1e-9)  # the overlay's shares are guaranteed


def test_an_overlay_can_be_fixed_and_its_routes_go_through_the_switch():
    system = load_system("star", nodes=6)
    s = collsim.build("synth-matching", system, "allgather", "1MiB", overlay="ring")
    assert s.params["overlay"] == "ring"
    assert collsim.evaluate(s).verified
    assert set(np.unique(s.hops).tolist()) == {2}  # host -> switch -> host
    assert s.num_steps == 5  # the ring's N-1 steps, one block per link each
    with pytest.raises(CollsimError, match="overlay must be"):
        collsim.build("synth-matching", system, "allgather", "1MiB", overlay="near-9")
    with pytest.raises(CollsimError, match="networks with switches"):
        collsim.build("synth-matching", _tacos("mesh", (2, 2), 50, 0.5e-6), "allgather", "1MiB", overlay="ring")


def test_disconnected_graphs_are_refused_naming_the_nodes():
    """A custom graph is checked when it is read; the synthesizer checks again for any other network."""
    from collsim.algorithms.synth_matching import requires
    with pytest.raises(CollsimError, match="n2 cannot be reached from n0"):
        CustomNetwork(nodes=4, switches=1, link=((0, "s0"), (1, "s0"), (2, 3)))
    with pytest.raises(CollsimError, match="n1 cannot reach n0"):  # one-way links leave node 0 only
        CustomNetwork(nodes=3, link=((0, 1, None, None, False), (0, 2, None, None, False)))
    ring = load_system("ring", nodes=6)
    half = ring.links.src < 3  # a network whose links were lost: the synthesizer names the nodes
    broken = type("Broken", (), {"nodes": 6, "vertices": 6, "kind": "ring", "configurations": lambda self: None,
                                 "links": type(ring.links)(
        ring.links.src, ring.links.dst, np.where(half, ring.links.bandwidth_bytes_per_s, 0.0), ring.links.latency_s,
        6)})()
    assert "cannot be reached from node 0" in requires(broken, "allgather")
    one_way = CustomNetwork(nodes=3, link=((0, 1, None, None, False), (1, 2, None, None, False),
                                           (2, 0, None, None, False)))
    s = collsim.build("synth-matching", one_way, "allgather", "1KiB")  # a one-way cycle is strongly connected
    assert collsim.evaluate(s).verified


@st.composite
def _graphs(draw):
    """Strongly connected graphs of end nodes: a one-way Hamiltonian cycle plus random extra links."""
    n = draw(st.integers(3, 9))
    perm = draw(st.permutations(range(n)))
    links = [(perm[i], perm[(i + 1) % n], f"{draw(st.sampled_from([10, 25, 50]))}GB/s", "1us", False)
             for i in range(n)]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.booleans()), max_size=12))
    used = {(a, b) for a, b, *_ in links}
    for a, b, duplex in extra:
        pairs = {(a, b), (b, a)} if duplex else {(a, b)}
        if a != b and not pairs & used:
            used |= pairs
            links.append((a, b, "20GB/s", "500ns", duplex))
    return CustomNetwork(nodes=n, link=tuple(links))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs(), st.sampled_from(["allgather", "reducescatter", "allreduce"]), st.sampled_from([1024, 64 << 20]))
def test_property_every_synthesized_schedule_verifies_and_respects_the_bound(system, collective, size):
    s = collsim.build("synth-matching", system, collective, size)
    r = collsim.evaluate(s)
    assert r.verified
    assert r.time_s >= r.lower_bound_s * (1 - 1e-9)
    assert s.params["predicted_time_s"] == pytest.approx(r.time_s, rel=1e-6)


@st.composite
def _switched_graphs(draw):
    """Connected graphs of end nodes and switches: every end node on a switch, the switches joined
    by a random tree, and random extra links, some one-way, some between end nodes."""
    n, sw = draw(st.integers(2, 8)), draw(st.integers(1, 3))
    rate = st.sampled_from(["10GB/s", "25GB/s", "50GB/s"])
    links = [(i, f"s{draw(st.integers(0, sw - 1))}", draw(rate), "1us", True) for i in range(n)]
    links += [(f"s{j}", f"s{draw(st.integers(0, j - 1))}", draw(rate), "1us", True) for j in range(1, sw)]
    used = {(a, b) for a, b, *_ in links} | {(b, a) for a, b, *_ in links}
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.booleans()), max_size=4))
    for a, b, duplex in extra:
        if a != b and (a, b) not in used and (b, a) not in used:
            used |= {(a, b), (b, a)}
            links.append((a, b, "20GB/s", "500ns", duplex))
    return CustomNetwork(nodes=n, switches=sw, link=tuple(links))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_switched_graphs(), st.sampled_from(["allgather", "reducescatter", "allreduce", "broadcast"]),
       st.sampled_from([1024, 64 << 20]))
def test_property_through_switches_schedules_verify_and_the_prediction_is_an_upper_bound(system, collective, size):
    """Overlay links get the share max-min fairness guarantees them, so the flow simulator is never
    slower than the synthesizer's prediction; equal when every link of a step is equally loaded."""
    s = collsim.build("synth-matching", system, collective, size)
    r = collsim.evaluate(s)
    assert r.verified
    assert r.time_s >= r.lower_bound_s * (1 - 1e-9)
    assert s.params["predicted_time_s"] >= r.time_s * (1 - 1e-9)


@st.composite
def _even_graphs(draw):
    """Strongly connected graphs of end nodes, every link 25 GB/s and 1 us, some one-way."""
    g = draw(_graphs())
    return CustomNetwork(nodes=g.nodes, link=tuple((a, b, "25GB/s", "1us", d) for a, b, _, _, d in g.link))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_even_graphs(), st.sampled_from(["allgather", "reducescatter"]))
def test_property_equal_links_come_close_to_the_bound_at_large_sizes(system, collective):
    """With equal links the matching is near the exact cut bound at 64 MiB per node, but not always
    at the issue's 0.99: over 450 graphs of this strategy 98-100 % reached 0.99 (minimum 0.947);
    other draws found 0.815 and 0.70 (a node whose two in-neighbours are fed late; the greedy has no
    lookahead, docs/synthesis.md).  The assertion guards against a broken matching (a serial one
    stays near 1/degree), not the 0.99 target, which is reported as missed on such graphs."""
    r = collsim.evaluate(collsim.build("synth-matching", system, collective, 64 << 20))
    assert r.verified and r.lower_bound_s / r.time_s >= 0.6


def test_cli_synthesize_prints_time_bound_and_certificate(run_cli, tmp_path):
    proc = run_cli("synthesize", "--system", "mesh", "-S", "dims=3,3", "-s", "1MiB", "--json", "-o", "s.json",
                   check=True)
    rec = json.loads(proc.stdout)
    assert rec["algorithm"] in ("synth-matching", "synth-trees") and rec["verified"] is True
    assert rec["time_s"] >= rec["lower_bound_s"] > 0
    assert rec["certificate"]["side"] and rec["efficiency"] == pytest.approx(rec["lower_bound_s"] / rec["time_s"])
    assert "synthesized in" in proc.stderr
    check = run_cli("verify", "s.json", check=True)
    assert "valid" in check.stdout.lower() or "verified" in check.stdout.lower()


def test_cli_synthesize_refuses_a_disconnected_graph_in_one_line(run_cli, tmp_path):
    (tmp_path / "cut.toml").write_text('[system]\nkind = "custom"\nnodes = 3\nswitches = 1\n'
                                       '[[system.link]]\na = 0\nb = "s0"\n[[system.link]]\na = 1\nb = "s0"\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("synthesize", "--system", str(tmp_path / "cut.toml"), "-s", "1MiB", "-o", str(tmp_path / "s.json"))
    assert proc.returncode in (1, 2)
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "n2 cannot be reached from n0" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_memory_refusal_before_starting(monkeypatch):
    from collsim.core import limits
    # 5 MiB: above the 4 MiB every explicit all-gather on 256 nodes needs, below the synthesizer's own estimate
    monkeypatch.setattr(limits, "memory_limit_bytes", lambda: 5 << 20)
    with pytest.raises(CollsimError, match="synthesizing on"):
        collsim.build("synth-matching", _tacos("mesh", (16, 16), 50, 0.5e-6), "allgather", "1MiB")


def test_overlays_whose_schedule_cannot_fit_are_left_out_before_planning(monkeypatch):
    """32 GPUs in 4 boxes on a fat tree, all-gather: 992 deliveries.  The ring overlay's routes
    average 2.375 links (992 x (114 + 8 x 2.375) = 131,936 bytes), the direct one's 4.387
    (147,904).  Between the two, the builder plans only on the overlays that fit; below every
    overlay it refuses with the least estimate, before any plan is made."""
    from collsim.algorithms.synth_matching import build as sm_build
    from collsim.algorithms.synth_matching.effort import schedule_floor_bytes
    from collsim.core.collective import collective_type
    from collsim.core.limits import MemoryLimitError
    system = load_system("hierarchical", dims="switch:8:300GB/s,fat-tree:4:50GB/s")
    ag = collective_type("allgather")
    assert schedule_floor_bytes(32, ag, 2.375) == (992, 992 * 114 + 992 * 8 * 2.375)
    monkeypatch.setattr(sm_build, "memory_limit_bytes", lambda: 135_000)
    s = collsim.build("synth-matching", system, "allgather", "1MiB")
    kept = dict(sm_build._networks(system, None))[s.params["overlay"]]
    assert schedule_floor_bytes(32, ag, sm_build._route_hops(kept))[1] <= 135_000
    assert s.params["overlay"] != "direct" and collsim.verify(s).transfers > 0

    def no_planning(*args, **kwargs):
        raise AssertionError("planned although no overlay fits")
    monkeypatch.setattr(sm_build, "_best_over", no_planning)
    monkeypatch.setattr(sm_build, "memory_limit_bytes", lambda: 100_000)
    with pytest.raises(MemoryLimitError, match=r"992 chunk deliveries.*routed over 2\.38 links"):
        collsim.build("synth-matching", system, "allgather", "1MiB")


@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_broadcast_and_reduce_pipeline_from_the_root(collective):
    """The root's pieces leave on every one of its links (each link of a step picks a different piece)."""
    system = _tacos("mesh", (4, 4), 50, 0.5e-6)
    s = collsim.build("synth-matching", system, collective, "64MiB", root=5)
    r = collsim.evaluate(s)
    assert r.verified and r.time_s >= r.lower_bound_s
    assert s.params["root"] == 5 and s.params["predicted_time_s"] == pytest.approx(r.time_s, rel=1e-6)
    binomial = collsim.evaluate(collsim.build("binomial", system, collective, "64MiB", root=5)).time_s
    assert r.time_s < binomial / 2  # the root's 4 links in use, pipelined
    assert r.lower_bound_s / r.time_s >= 0.9


def test_all_reduce_on_a_mesh_leaves_more_of_the_vector_on_the_corners():
    """Derivation (5x5 mesh, links B each way, vector M): a node keeping a share w of the result
    sends (1 - w) M in the reduce-scatter and receives as much in the all-gather, over its own links
    (2 at a corner, 3 on an edge, 4 inside).  Water-filling gives the four corners 1/4 each and
    nobody else anything, so any reduce-scatter-then-all-gather needs 2 x (3/4) M / (2 B) = 0.75 M/B;
    with equal shares the corner needs 2 x (24/25) M / (2 B) = 0.96 M/B.  collsim's all-reduce bound
    is lower still, 2 (N-1) M / (sum of link bandwidths) = 48 M / (80 B) = 0.6 M/B (every link busy
    all the time), which no reduce-scatter-then-all-gather reaches (docs/synthesis.md)."""
    from collsim.algorithms.synth_matching import owner_weights
    system = _tacos("mesh", (5, 5), 50, 0.5e-6)
    w = owner_weights(system)
    assert w[[0, 4, 20, 24]] == pytest.approx([0.25] * 4) and w.sum() == pytest.approx(1.0)
    size, bw = GIB, 50 * GIB
    weighted = collsim.build("synth-matching", system, "allreduce", size)
    uniform = collsim.build("synth-matching", system, "allreduce", size, ownership="uniform")
    rw, ru = collsim.evaluate(weighted), collsim.evaluate(uniform)
    assert weighted.params["ownership"] == "weighted" and rw.verified and ru.verified
    assert ru.time_s >= 0.96 * size / bw and rw.time_s >= 0.75 * size / bw  # the limits derived above
    assert rw.time_s <= 0.75 * size / bw / 0.95 < ru.time_s  # within 5 % of its limit, and faster
    assert rw.lower_bound_s == pytest.approx(0.6 * size / bw, rel=1e-3)


@pytest.mark.parametrize("base_bytes_per_s", [1e6, 50e9, 1e13])
def test_owner_weights_do_not_depend_on_the_bandwidths_unit(base_bytes_per_s):
    """A 3x4 mesh with rows 8x faster: a corner's two links carry 9 units, an edge's three 10 or 17,
    an inner node's four 18, so water-filling ``w_v = 1 - tau c_v`` over the nodes at 9 and 10 units
    (4 corners and 2 edge nodes of the short sides) gives ``4 (1 - 9 tau) + 2 (1 - 10 tau) = 1``,
    ``tau = 5/56``: corners 11/56, those edge nodes 6/56.  The shares depend on bandwidth ratios alone;
    at 400 GB/s the root-finding's absolute tolerance was once above 1/c and every share came out 0
    (the all-reduce then failed)."""
    from collsim.algorithms.synth_matching import owner_weights
    from collsim.experiments.network_families import hetero_mesh
    net = hetero_mesh(3, 4, 8.0, bandwidth_bytes_per_s=base_bytes_per_s)
    w = owner_weights(net)
    assert w[[0, 3, 8, 11]] == pytest.approx([11 / 56] * 4) and w[[4, 7]] == pytest.approx([6 / 56] * 2)
    assert w.sum() == pytest.approx(1.0) and (w >= 0).all()
    s = collsim.build("synth-matching", net, "allreduce", 2**20, ownership="weighted")
    assert collsim.verify(s).transfers == len(s)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 200), data=st.data())
def test_the_bitset_pick_takes_each_rows_first_candidates_in_column_order(rows, cols, data):
    """The matching keeps candidates as 64-bit words; each row's first ``cap`` set columns are the
    picks, whatever the width (the first-bit scans up to 8, the word counts above)."""
    from collsim.algorithms.synth_matching.step import _pack, _pick_in_order, _unpack
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    cand = rng.random((rows, cols)) < data.draw(st.sampled_from([0.02, 0.3, 0.9]), label="density")
    cap = rng.integers(1, data.draw(st.sampled_from([2, 9, 70, cols + 2]), label="widest"), rows)
    words = _pack(cand)
    assert (_unpack(words, cols) == cand).all() and words.shape == (rows, -(-cols // 64))
    r, c = _pick_in_order(words.copy(), cap, cols)
    want = [(i, j) for i in range(rows) for j in np.flatnonzero(cand[i])[: cap[i]]]
    assert list(zip(r.tolist(), c.tolist())) == want


@pytest.mark.parametrize("kind, options", [("fat-tree", {"nodes": 16, "k": 4}), ("mlfm", {"d": 3}),
                                           ("star", {"nodes": 5})])
def test_an_overlays_kept_routes_are_the_networks_routes(kind, options):
    """synth-matching hands its overlay's routes to the schedule instead of routing every transfer again:
    row for row they are the network's own routes of the same pairs."""
    from collsim.algorithms.synth_matching.overlays import by_name, overlay
    net = load_system(kind, **options)
    n = net.nodes
    for name in ("ring", "doubling", "direct"):
        ov = overlay(net, by_name(n, name), name)
        rng = np.random.default_rng(len(name))
        rows = rng.integers(0, len(ov.links.src), 40)
        src, dst = ov.links.src[rows], ov.links.dst[rows]
        kept, fresh = ov.routes_of(src, dst), net.routes(src, dst)
        for col in fresh.columns():
            assert np.array_equal(getattr(kept, col), getattr(fresh, col)), (name, col)
    with pytest.raises(ValueError, match="no logical link"):
        overlay(net, by_name(n, "ring"), "ring").routes_of(np.array([0]), np.array([2]))
    s = collsim.build("synth-matching", kind, "allgather", "64KiB", system_options=options)
    assert collsim.verify(s).transfers > 0


@pytest.mark.parametrize("chunks, capacity", [(1, 1), (2, 3), (3, 12), (1, 64)])
def test_the_matching_plans_the_same_with_its_sets_as_bits_or_as_booleans(monkeypatch, chunks, capacity):
    """From ``BITS_FROM_PIECES`` pieces the matching keeps its node x piece sets as 64-bit words; either
    form picks the same pieces on the same links in the same steps."""
    from collsim.algorithms.synth_matching import step
    from collsim.experiments.network_families import hetero_mesh
    net = hetero_mesh(5, 6, 4.0, torus=True)
    plans = []
    for threshold in (1, 10**9):
        monkeypatch.setattr(step, "BITS_FROM_PIECES", threshold)
        for reverse in (False, True):
            p = step.match(net, chunks, capacity, 3, 1e6, reverse=reverse)
            plans.append((p.step.tolist(), p.src.tolist(), p.dst.tolist(), p.piece.tolist(), p.predicted_time_s))
    assert plans[:2] == plans[2:] and plans[0][0]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graphs(), st.sampled_from([None, 0]), st.booleans(), st.sampled_from([(1, 1), (2, 3), (4, 2)]),
       st.integers(0, 3), st.sampled_from([1024, 64 << 20]))
def test_a_run_gives_up_only_when_it_cannot_end_within_its_limit(system, root, reverse, choice, seed, size):
    """The matching gives up on a run as soon as what its nodes still lack needs more than the time left
    (``step._Lookahead``): a run ending exactly at its limit is kept, with the plan it makes unlimited, and
    one that ends beyond it is not."""
    from collsim.algorithms.synth_matching import step
    k, q = choice
    whole = step.match(system, k, q, seed, size, reverse=reverse, root=root)
    t = whole.predicted_time_s
    for limit in (t, t * (1 + 1e-12), 2 * t):
        kept = step.match(system, k, q, seed, size, reverse=reverse, root=root, stop_after_s=limit)
        assert kept is not None and kept.predicted_time_s == t and kept.steps == whole.steps
        assert np.array_equal(kept.piece, whole.piece) and np.array_equal(kept.dst, whole.dst)
    assert step.match(system, k, q, seed, size, reverse=reverse, root=root, stop_after_s=t * (1 - 1e-6)) is None


# instances on which trying the other orders on the best two choices only was 3.5 %, 0.19 % and 0.006 % above
# the best of them all
@pytest.mark.parametrize("family,scale,seed", [("random-regular", 1, 8), ("random-connected", 0, 11),
                                               ("one-way", 0, 3)])
def test_the_default_search_is_the_best_over_every_choice_and_tie_break_order(family, scale, seed):
    """On small graphs (``_ALL_SEEDS_NODES``) the search's pruning (floors, runs that give up once slower
    than the best) loses nothing: its plan's predicted time is the least of every (chunks, capacity,
    preference) choice in every seeded order, each planned in full here, and the choice it records
    builds that plan again."""
    from collsim.algorithms.synth_matching import search
    from collsim.algorithms.synth_matching.step import BITS_FROM_PIECES, PREFERENCES, _direct_links
    from collsim.experiments.network_families import FAMILIES
    net = FAMILIES[family](np.random.default_rng(seed), scale)
    assert net.nodes <= search._ALL_SEEDS_NODES
    block = GIB // net.nodes
    src = _direct_links(net)[0]
    degree = int(np.bincount(src, minlength=net.nodes).max())
    every = {(k, q, s, prefer): search._once(net, k, q, s, block, prefer=prefer).predicted_time_s
             for k, q in search._choices(net.nodes, degree) for s in range(search._SEEDS)
             for prefer in (PREFERENCES if net.nodes * k < BITS_FROM_PIECES else ("rarest",))}
    plan, chosen = search.best_plan(net, block)
    assert plan.predicted_time_s == min(every.values())
    assert every[chosen["chunks"], chosen["capacity"], chosen["seed"], chosen["prefer"]] == plan.predicted_time_s
    assert len(set(every.values())) > 1   # the choices and orders differ: the search had something to choose
    s = collsim.build("synth-matching", net, "allgather", block)
    assert s.params["predicted_time_s"] == pytest.approx(min(every.values()), rel=1e-6)  # whole bytes a piece
    assert collsim.evaluate(s).verified
    # the recorded choice builds the same schedule again
    again = collsim.build("synth-matching", net, "allgather", block,
                          **{k: s.params[k] for k in ("chunks", "capacity", "seed", "prefer")})
    assert again.params["predicted_time_s"] == s.params["predicted_time_s"] and len(again) == len(s)


def test_a_fixed_preference_is_kept_and_a_wrong_one_refused():
    system = _tacos("mesh", (3, 4), 50, 0.5e-6)
    for prefer in ("rarest", "fresh"):
        s = collsim.build("synth-matching", system, "allgather", "1MiB", prefer=prefer)
        assert s.params["prefer"] == prefer and collsim.evaluate(s).verified
    with pytest.raises(CollsimError, match="prefer"):
        collsim.build("synth-matching", system, "allgather", "1MiB", prefer="newest")
    with pytest.raises(CollsimError, match="prefer"):
        collsim.build("synth-matching", system, "broadcast", "1MiB", prefer="fresh")
    assert collsim.build("synth-matching", system, "broadcast", "1MiB").params["prefer"] == "rarest"


def test_fresh_pieces_first_keep_a_dense_cluster_from_importing_duplicates():
    """A 32-node random 4-regular graph (seed 19 of the wide run) holds a 4-node clique with 4 links in.
    Every node needs 31 x 4 pieces over 4 in-links (31 steps at one piece a link); rarest first sends the
    same rare pieces into the clique over several entry links at once, crossing its cut more often than the
    112 pieces it needs, and ends more than half as many steps late; ``prefer="fresh"`` does not."""
    from collsim.algorithms.synth_matching.step import match
    from collsim.experiments.network_families import FAMILIES
    net = FAMILIES["random-regular"](np.random.default_rng(19), 2)
    n, k = net.nodes, 4
    inside = {int(v) for v in range(n) if np.bincount(net.links.dst[np.isin(net.links.src, [6, 8, 14, 15])],
                                                      minlength=n)[v] >= 3}
    assert inside == {6, 8, 14, 15}            # the clique: each of its nodes has 3 of its 4 in-links from it
    ideal = (n - 1) * k * n // len(net.links.src)
    assert ideal == 31

    def crossings(plan):
        into = ~np.isin(plan.src, sorted(inside)) & np.isin(plan.dst, sorted(inside))
        return int(into.sum())
    rarest = [match(net, k, 1, s, GIB / n) for s in range(4)]
    fresh = [match(net, k, 1, s, GIB / n, prefer="fresh") for s in range(4)]
    assert min(p.steps for p in rarest) >= 1.5 * ideal
    assert max(p.steps for p in fresh) <= 1.25 * ideal
    assert min(crossings(p) for p in rarest) > 1.5 * (n - 4) * k      # the clique needs (n - 4) k pieces
    assert max(crossings(p) for p in fresh) < min(crossings(p) for p in rarest)
