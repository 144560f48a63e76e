"""Flow-level simulator: closed forms, max-min fairness by hand, congestion, dataflow."""

from __future__ import annotations

import json

import numpy as np
import pytest

import collsim
from collsim.algorithms import REGISTRY
from collsim.core.collective import make_collective, collective_type
from collsim.core.errors import InputError, UnsupportedError
from collsim.core.schedule import LogicalBuilder
from collsim.cost import alpha_beta_time_s
from collsim.pipeline import realize
from collsim.sim import check_max_min, max_min_rates, simulate
from collsim.kinds.network.electrical import Line, Ring, Star

REL = 1e-12
B = 1e9  # bytes/s
LAT = 1e-6  # s


def csr(rows):
    """CSR (ptr, links) from a list of link lists."""
    ptr = np.zeros(len(rows) + 1, np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    return ptr, np.array([x for r in rows for x in r], np.int64)


def naive_max_min(rows, cap):
    """Textbook progressive filling with Python loops (independent reference)."""
    rate = [0.0] * len(rows)
    rem = list(map(float, cap))
    todo = set(range(len(rows)))
    while todo:
        share = {l: rem[l] / sum(1 for f in todo if l in rows[f])
                 for l in range(len(cap)) if any(l in rows[f] for f in todo)}
        lvl = min(share.values())
        hit = {f for f in todo if any(share.get(l, np.inf) <= lvl * (1 + 1e-12) for l in rows[f])}
        for f in hit:
            rate[f] = lvl
            for l in rows[f]:
                rem[l] -= lvl
        todo -= hit
    return rate


def by_hand(system, kind, n, size, rounds, split=1):
    """Schedule from ``rounds``: list of (src list, dst list, chunk rows); partial, so simulated with check=False."""
    b = LogicalBuilder(make_collective(kind, n, size, split=split))
    for r, (s, d, ch) in enumerate(rounds):
        b.add(r, s, d, ch)
    return realize(system, b.build())


# --- max-min fairness -------------------------------------------------------------------

def test_two_flows_share_one_link_half_each():
    ptr, links = csr([[0], [0]])
    assert max_min_rates(ptr, links, np.array([10.0])).tolist() == [5.0, 5.0]


def test_flow_crossing_two_bottlenecks():
    # link A (cap 1): f0, f1.  link B (cap 1): f0, f2, f3.
    # B's share 1/3 < A's 1/2, so f0, f2, f3 freeze at 1/3 (f0's bottleneck is B);
    # A keeps 1 - 1/3 = 2/3 for f1 alone.
    ptr, links = csr([[0, 1], [0], [1], [1]])
    r = max_min_rates(ptr, links, np.array([1.0, 1.0]))
    assert r == pytest.approx([1 / 3, 2 / 3, 1 / 3, 1 / 3], rel=REL)
    assert check_max_min(ptr, links, np.array([1.0, 1.0]), r)


def test_classic_three_link_example():
    # l0 (cap 1): f0 f1 f2   l1 (cap 1): f0 f3   l2 (cap 1): f3 f4
    # shares: l0 1/3, l1 1/2, l2 1/2 -> level 1/3: f0, f1, f2 frozen (bottleneck l0).
    # l1 keeps 2/3 for f3; l2 keeps 1 for f3 and f4 -> share 1/2 < 2/3: f3, f4 frozen at 1/2
    # (bottleneck l2); l1 is left with 1/6 unused.
    rows = [[0, 1], [0], [0], [1, 2], [2]]
    ptr, links = csr(rows)
    cap = np.array([1.0, 1.0, 1.0])
    r = max_min_rates(ptr, links, cap)
    assert r == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1 / 2, 1 / 2], rel=REL)
    assert check_max_min(ptr, links, cap, r)


def test_long_flow_and_different_capacities():
    # f0 crosses l0 (1), l1 (2), l2 (3); f1, f2, f3 cross one each.
    # l0 share 1/2 is smallest: f0 = f1 = 1/2; then f2 = 2 - 1/2, f3 = 3 - 1/2 (alone).
    ptr, links = csr([[0, 1, 2], [0], [1], [2]])
    r = max_min_rates(ptr, links, np.array([1.0, 2.0, 3.0]))
    assert r == pytest.approx([0.5, 0.5, 1.5, 2.5], rel=REL)


def test_inactive_and_linkless_flows():
    ptr, links = csr([[0], [0], []])
    r = max_min_rates(ptr, links, np.array([4.0]), active=np.array([True, False, True]))
    assert r.tolist() == [4.0, 0.0, np.inf]


@pytest.mark.parametrize("seed", range(20))
def test_random_incidences_match_naive_filling(seed):
    rng = np.random.default_rng(seed)
    nl, nf = int(rng.integers(1, 8)), int(rng.integers(1, 12))
    rows = [sorted(rng.choice(nl, size=int(rng.integers(1, nl + 1)), replace=False).tolist())
            for _ in range(nf)]
    cap = rng.integers(1, 5, nl).astype(float)
    ptr, links = csr(rows)
    r = max_min_rates(ptr, links, cap)
    assert r == pytest.approx(naive_max_min(rows, cap), rel=1e-9)
    assert check_max_min(ptr, links, cap, r)


@pytest.mark.parametrize("seed", range(10))
def test_copies_equal_listing_every_copy(seed):
    """A row with ``copies=k`` gets the rate each of k listed identical flows gets."""
    rng = np.random.default_rng(seed)
    nl, nf = int(rng.integers(1, 6)), int(rng.integers(1, 8))
    rows = [sorted(rng.choice(nl, size=int(rng.integers(1, nl + 1)), replace=False).tolist())
            for _ in range(nf)]
    copies = rng.integers(1, 4, nf)
    cap = rng.integers(1, 5, nl).astype(float)
    expanded = [r for r, c in zip(rows, copies) for _ in range(c)]
    listed = max_min_rates(*csr(expanded), cap)
    r = max_min_rates(*csr(rows), cap, copies=copies)
    assert np.repeat(r, copies) == pytest.approx(listed, rel=1e-9)
    assert listed == pytest.approx(naive_max_min(expanded, cap), rel=1e-9)


@pytest.mark.parametrize("mode", ["bulk", "dataflow"])
def test_identical_flows_simulated_as_copies_time_alike(mode, monkeypatch):
    """One-piece flows through switches (synth-trees splits them) merge into copies in the engine;
    the times are those of simulating every flow on its own."""
    from collsim.experiments.network_families import rail_boxes
    from collsim.sim import flow

    s = collsim.build("synth-trees", rail_boxes(2, gpus=4), "allgather", 1 << 16, pieces=8)
    routes = s.routes
    assert flow._repeats(routes.route_ptr, routes.route_links, s.size_bytes).sum() > len(s.src) // 2  # merged
    merged = simulate(s, mode=mode, check=False)
    monkeypatch.setattr(flow, "_repeats", lambda ptr, *a: np.zeros(len(ptr) - 1, bool))
    alone = simulate(s, mode=mode, check=False)
    assert merged.transfer_finish_s == pytest.approx(alone.transfer_finish_s, rel=1e-9)
    assert merged.peak_link_flows == alone.peak_link_flows


# --- uncongested schedules equal the α–β closed form -----------------------------------

@pytest.mark.parametrize("p", [3, 4, 8, 16])
@pytest.mark.parametrize("m", [1, 1000, 1 << 20])
@pytest.mark.parametrize("mode", ["bulk", "dataflow"])
def test_ring_allgather_is_textbook(p, m, mode):
    s = collsim.build("ring", Ring(nodes=p, link_latency_s=LAT, link_bandwidth_bytes_per_s=B), "allgather", m)
    r = simulate(s, mode=mode)
    assert r.total_time_s == pytest.approx((p - 1) * (LAT + m / B), rel=REL)  # (t_s + t_w m)(p - 1)
    assert r.total_time_s == pytest.approx(alpha_beta_time_s(s), rel=REL)
    assert r.max_link_load == 1


@pytest.mark.parametrize("h", [1, 2, 5])
def test_single_flow_over_h_hops(h):
    m = 12345
    s = by_hand(Line(nodes=h + 1, link_latency_s=LAT, link_bandwidth_bytes_per_s=B), "allgather", h + 1, m,
                [([0], [h], [[0]])])
    r = simulate(s, check=False)
    assert r.total_time_s == pytest.approx(h * LAT + m / B, rel=REL)  # cut-through: latency sum + m/B
    assert r.link_busy_s.max() == pytest.approx(m / B, rel=REL)


def test_startup_with_zero_link_latency_is_ts_plus_twm():
    ts, m, p = 5e-6, 4096, 8
    ring = Ring(nodes=p, link_latency_s=0.0, startup_s=ts, link_bandwidth_bytes_per_s=B)
    r = simulate(collsim.build("ring", ring, "allgather", m))
    assert r.total_time_s == pytest.approx((p - 1) * (ts + m / B), rel=REL)


@pytest.mark.parametrize("system", [Ring(nodes=8), Star(nodes=8), Line(nodes=6), Ring(nodes=7, bidirectional=False),
                                    Ring(nodes=6, startup_s=3e-6)], ids=lambda s: f"{s.topology}{s.nodes}")
def test_every_network_algorithm_against_alpha_beta(system):
    """One flow per link per step: simulation == α–β; otherwise never faster."""
    for name, spec in REGISTRY.items():
        if not spec.runs_on(system):
            continue
        for coll in spec.collectives:
            if spec.requires and spec.requires(system, collective_type(coll)):
                continue
            s = collsim.build(name, system, coll, 3000)
            r = simulate(s)
            if s.max_link_load() == 1:
                assert r.total_time_s == pytest.approx(alpha_beta_time_s(s), rel=REL), (name, coll)
            else:
                assert r.total_time_s >= alpha_beta_time_s(s) * (1 - REL), (name, coll)


def test_zero_byte_transfers_take_only_latency():
    star = Star(nodes=4, link_latency_s=LAT, startup_s=2e-6, link_bandwidth_bytes_per_s=B)
    s = by_hand(star, "allgather", 4, 100, [([0, 1], [2, 3], [np.zeros(0, np.int64), np.zeros(0, np.int64)])])
    assert s.size_bytes.tolist() == [0, 0]
    r = simulate(s, check=False)
    assert r.total_time_s == pytest.approx(2e-6 + 2 * LAT, rel=REL)
    assert r.link_bytes.sum() == 0 and r.link_busy_s.sum() == 0


# --- sharing and congestion -------------------------------------------------------------

def test_rates_are_recomputed_when_a_flow_finishes():
    # Two flows into node 2 on a star share the downlink s->n2: B/2 each until the
    # small one (m1) has sent everything at 2 m1 / B, then the big one gets B alone:
    # its last byte leaves at 2 m1/B + (m2 - m1)/B = (m1 + m2)/B.
    m1, m2 = 1000, 3000  # node 0 sends one third of its block, node 1 all of its block
    star = Star(nodes=3, link_latency_s=LAT, link_bandwidth_bytes_per_s=B)
    s = by_hand(star, "allgather", 3, m2, [([0, 1], [2, 2], [[0], [3, 4, 5]])], split=3)
    assert s.size_bytes.tolist() == [m1, m2]
    r = simulate(s, check=False)
    assert r.transfer_finish_s.tolist() == pytest.approx([2 * m1 / B + 2 * LAT, (m1 + m2) / B + 2 * LAT], rel=REL)
    assert r.max_link_load == 2 and r.peak_link_flows == 2


def naive_alltoall(system, m):
    """All-to-all personalized in ONE step: every node sends block (s, d) to every d."""
    n = system.nodes
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    b = LogicalBuilder(make_collective("alltoall", n, m))
    b.add(0, s[keep], d[keep], (s * n + d)[keep][:, None])
    return realize(system, b.build())


def shift_alltoall(system, m):
    """The same blocks as a shift: phase q, rank r -> (r + q) mod N, q = 1..N-1."""
    n = system.nodes
    r = np.arange(n)
    b = LogicalBuilder(make_collective("alltoall", n, m))
    for q in range(1, n):
        b.add(q - 1, r, (r + q) % n, (r * n + (r + q) % n)[:, None])
    return realize(system, b.build())


@pytest.mark.parametrize("p", [5, 9, 15])
def test_one_step_alltoall_on_ring_is_congested_by_the_derived_factor(p):
    # Odd p = 2k+1, shortest-path routing: each node sends to distances 1..k each way.
    # Clockwise link i->i+1 carries the flows from i-j (j = 0..k-1) to distance d > j:
    # sum_{d=1..k} d = k(k+1)/2 = (p^2 - 1)/8 flows, on EVERY link (symmetric), so every
    # link is a bottleneck at level B / ((p^2-1)/8) and all flows finish together:
    # T_sim = k t_link + m (p^2-1)/(8B).  α–β counts the same load: the longest route (k links)
    # pays k t_link, and its busiest link carries (p^2-1)/8 blocks, so it gives T_sim exactly
    # (before issue 31 it charged one message, k t_link + m/B, (p^2-1)/8 times too little).
    k, m = (p - 1) // 2, 8000
    s = naive_alltoall(Ring(nodes=p, link_latency_s=LAT, link_bandwidth_bytes_per_s=B), m)
    collsim.verify(s)
    load = (p * p - 1) // 8
    r = simulate(s)
    assert r.max_link_load == load > 1
    assert r.total_time_s == pytest.approx(k * LAT + m * load / B, rel=REL)
    assert alpha_beta_time_s(s) == pytest.approx(k * LAT + m * load / B, rel=REL)


@pytest.mark.parametrize("p", [4, 9])
def test_shift_alltoall_on_star_is_uncongested(p):
    s = shift_alltoall(Star(nodes=p, link_latency_s=LAT, link_bandwidth_bytes_per_s=B), 8000)
    collsim.verify(s)
    r = simulate(s)
    assert r.max_link_load == 1
    assert r.total_time_s == pytest.approx((p - 1) * (2 * LAT + 8000 / B), rel=REL)
    assert r.total_time_s == pytest.approx(alpha_beta_time_s(s), rel=REL)


# --- bulk vs dataflow ------------------------------------------------------------------

def dataflow_deadlines(s, finish):
    """Latest finish of an earlier-step delivery of any carried chunk to the sender (brute force)."""
    need = np.zeros(len(s))
    for t in range(len(s)):
        mine = set(s.chunks_of(t).tolist())
        for u in range(len(s)):
            if s.step[u] < s.step[t] and s.dst[u] == s.src[t] and mine & set(s.chunks_of(u).tolist()):
                need[t] = max(need[t], finish[u])
    return need


def schedules_for_dataflow():
    ring, line, star = (Ring(nodes=8, link_latency_s=LAT, link_bandwidth_bytes_per_s=B),
                        Line(nodes=6, link_latency_s=LAT, link_bandwidth_bytes_per_s=B),
                        Star(nodes=6, startup_s=2e-6, link_bandwidth_bytes_per_s=B))
    out = [collsim.build(a, sy, c, 5000) for a, sy, c in
           [("ring", ring, "allgather"), ("ne", ring, "allgather"), ("ring", ring, "allreduce"),
            ("ring", line, "allgather"), ("ring", line, "allreduce"), ("ne", line, "allgather"),
            ("ring", star, "reducescatter"), ("ring", star, "broadcast")]]
    out.append(naive_alltoall(Ring(nodes=5), 1000))
    out.append(shift_alltoall(Line(nodes=5), 1000))
    return out


@pytest.mark.parametrize("idx", range(10))
def test_dataflow_respects_data_and_is_not_slower(idx):
    s = schedules_for_dataflow()[idx]
    bulk, flow = simulate(s), simulate(s, mode="dataflow")
    assert flow.total_time_s <= bulk.total_time_s * (1 + REL)
    need = dataflow_deadlines(s, flow.transfer_finish_s)
    assert (flow.transfer_start_s >= need * (1 - REL)).all()  # never before its data is there
    assert flow.transfer_start_s == pytest.approx(need, rel=REL, abs=1e-18)  # and as soon as it is
    assert flow.step_time_s[-1] <= flow.total_time_s
    # bulk: steps back to back, each starts when the previous one has finished
    starts = np.cumsum(np.concatenate([[0.0], bulk.step_time_s[:-1]]))
    assert bulk.transfer_start_s == pytest.approx(starts[s.step], rel=REL, abs=1e-18)
    assert bulk.total_time_s == pytest.approx(bulk.step_time_s.sum(), rel=REL)


def test_dataflow_overlaps_independent_chains():
    # Step 0: 0->1 carries a big chunk, 2->3 a small one; step 1: 3->4 forwards the small
    # chunk.  Bulk waits for the big transfer; dataflow starts 3->4 when 2->3 is done.
    line = Line(nodes=5, link_latency_s=LAT, link_bandwidth_bytes_per_s=B)
    s = by_hand(line, "allgather", 5, 100_000,
                [([0, 2], [1, 3], [list(range(100)), [200]]), ([3], [4], [[200]])], split=100)
    assert s.size_bytes.tolist() == [100_000, 1000, 1000]
    bulk, flow = simulate(s, check=False), simulate(s, mode="dataflow", check=False)
    assert bulk.total_time_s == pytest.approx((LAT + 1e-4) + (LAT + 1e-6), rel=REL)
    assert flow.transfer_start_s[2] == pytest.approx(LAT + 1e-6, rel=REL)
    assert flow.total_time_s == pytest.approx(LAT + 1e-4, rel=REL)
    assert flow.step_time_s.tolist() == pytest.approx([LAT + 1e-4, 2 * (LAT + 1e-6)], rel=REL)


def test_dataflow_arrival_recomputes_rates_by_hand():
    # Line 0-1-2, B = 1 GB/s, 1 us per link.  Step 0: big 0->2 (3000 B, links a=0->1, b=1->2)
    # and small 0->1 (1000 B, link a).  Step 1: 1->2 forwards the small chunk (1000 B, link b).
    # Both: a is shared, B/2 each until the small one's last byte at 2 us (big sent 1000).
    # Dataflow: big alone until the small one finishes at 3 us (sent 1000 more); then the
    # forward starts and shares b: 1000 B each at B/2 -> both last bytes at 5 us; finish
    # forward 6 us, big 5 + 2 = 7 us.  Bulk: big alone from 2 us, last byte at 4 us, finish
    # 6 us; the forward then runs 6..8 us.
    line = Line(nodes=3, link_latency_s=LAT, link_bandwidth_bytes_per_s=B)
    s = by_hand(line, "allgather", 3, 3000, [([0, 0], [2, 1], [[0, 1, 2], [0]]), ([1], [2], [[0]])], split=3)
    assert s.size_bytes.tolist() == [3000, 1000, 1000]
    flow, bulk = simulate(s, mode="dataflow", check=False), simulate(s, check=False)
    assert flow.transfer_start_s.tolist() == pytest.approx([0, 0, 3e-6], rel=REL)
    assert flow.transfer_finish_s.tolist() == pytest.approx([7e-6, 3e-6, 6e-6], rel=REL)
    assert bulk.transfer_finish_s.tolist() == pytest.approx([6e-6, 3e-6, 8e-6], rel=REL)
    assert flow.link_busy_s[line.links.index(np.array([1]), np.array([2]))[0]] == pytest.approx(5e-6, rel=REL)


# --- accounting and output -------------------------------------------------------------

@pytest.mark.parametrize("idx", range(10))
def test_link_bytes_sum_to_size_times_hops(idx):
    s = schedules_for_dataflow()[idx]
    for mode in ("bulk", "dataflow"):
        r = simulate(s, mode=mode)
        assert r.link_bytes.sum() == int((s.size_bytes * s.hops).sum())
        # a link is busy at least as long as it takes to send its bytes at full rate
        bw = s.system.links.bandwidth_bytes_per_s
        assert (r.link_busy_s >= r.link_bytes / bw * (1 - 1e-9)).all()
        assert (r.link_busy_s <= r.total_time_s * (1 + REL)).all()


def test_to_json_names_links():
    s = collsim.build("ring", Ring(nodes=4, link_latency_s=LAT, link_bandwidth_bytes_per_s=B), "allgather", 1000)
    out = simulate(s).to_json()
    json.dumps(out)
    assert out["mode"] == "bulk" and out["steps"] == 3 and out["transfers"] == 12
    assert len(out["step_time_s"]) == 3
    names = {d["link"] for d in out["links"]}
    assert "n0->n1" in names and len(out["links"]) == 4  # ring all-gather uses the clockwise links
    for d in out["links"]:
        assert d["bytes"] == 3000
        assert d["busy_s"] == pytest.approx(3e-6, rel=REL)
        assert d["utilisation"] == pytest.approx(3000 / (B * out["total_time_s"]), rel=REL)


def test_optical_schedules_and_bad_modes_are_refused():
    opt = collsim.build("ring", "paper", "allgather", "1KiB", nodes=8)
    with pytest.raises(UnsupportedError):
        simulate(opt)
    s = collsim.build("ring", Ring(nodes=4), "allgather", 1000)
    with pytest.raises(InputError):
        simulate(s, mode="eager")
