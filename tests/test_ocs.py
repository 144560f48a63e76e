"""The optical circuit switch kind (``ocs``): system, phases, verification, time, bound, algorithms, CLI."""

from __future__ import annotations

import heapq
import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

from collsim.algorithms.ocs import candidate_times, crossovers, logical_time_s, pairwise_relay
from collsim.cli.main import cli
from collsim.core.collective import make_collective
from collsim.core.errors import InputError, ResourceError, UnsupportedError
from collsim.kinds import model_for, require
from collsim.kinds.ocs.model import (OCSModel, bound_terms, moore_diameter, moore_distance_sum, ocs_bound,
                               ocs_lower_bound_s, spread_rounds)
from collsim.pipeline import build, run
from collsim.systems import load_system
from collsim.kinds.ocs.system import OCS, circuit_ids, group_phases, ocs_time_s
from conftest import names, raises_naming

RUNS = [("ring", "allgather"), ("recursive-doubling", "allgather"), ("bruck", "allgather"),
        ("ring", "reducescatter"), ("rabenseifner", "reducescatter"), ("ring", "allreduce"),
        ("rabenseifner", "allreduce"), ("recursive-doubling", "allreduce"), ("pairwise", "alltoall"),
        ("bruck", "alltoall"), ("ring-personalized", "alltoall"), ("pairwise-relay", "alltoall"),
        ("bruck-multiport", "allgather"), ("bruck-multiport", "alltoall"), ("ring-multiport", "allgather"),
        ("ring-multiport", "reducescatter"), ("ring-multiport", "allreduce"), ("ocs-auto", "alltoall"),
        ("ocs-auto", "allgather"), ("ocs-auto", "allreduce")]


# --- the system ------------------------------------------------------------------------------------
def test_loads_by_name_toml_and_options(tmp_path):
    f = tmp_path / "sw.toml"
    f.write_text('[system]\nkind = "ocs"\nnodes = 8\nports = 2\nport_bandwidth_bytes_per_s = "400Gb/s"\n'
                 'reconfiguration_s = "20us"\nrelay_latency_s = "50ns"\n')
    sw = load_system(f)
    assert (sw.topology, sw.nodes, sw.ports, sw.port_bandwidth_bytes_per_s) == ("ocs", 8, 2, 50e9)
    assert sw.reconfiguration_s == pytest.approx(20e-6) and sw.hop_latency_s == pytest.approx(550e-9)
    assert load_system("ocs").nodes == 16 and load_system("OCS", nodes=4, ports=3).ports == 3
    assert model_for(sw).name == "ocs" and model_for(sw).accepts == ("ocs", "network")


@pytest.mark.parametrize("options, words", [({"ports": 0}, "ports must be"), ({"nodes": 4, "ports": 4}, "nodes - 1"),
                                            ({"reconfiguration_s": -1}, "reconfiguration_s"),
                                            ({"port_bandwidth_bytes_per_s": 1e9, "link_bandwidth_bytes_per_s": 2e9},
                                             "not both")])
def test_bad_options_are_refused(options, words):
    with pytest.raises(InputError, match=words):
        load_system("ocs", **options)


def test_links_are_every_circuit_with_a_hop_latency():
    sw = OCS(nodes=5, ports=2, link_latency_s=1e-6, relay_latency_s=2e-7)
    lt = sw.links
    assert len(lt) == 20 and not (lt.src == lt.dst).any()
    assert np.array_equal(circuit_ids(lt.src, lt.dst, 5), np.arange(20))
    assert np.allclose(lt.latency_s, 1.2e-6) and sw.alpha_s == pytest.approx(1.2e-6)


# --- phases and verification ---------------------------------------------------------------------------
def _fewest_phases(step_circuits, nodes, ports):
    """Exact minimum number of phases over every split of the steps into consecutive runs (DP)."""
    def fits(run):
        circ = set().union(*run)
        out = np.bincount([u for u, _ in circ], minlength=nodes)
        inn = np.bincount([v for _, v in circ], minlength=nodes)
        return out.max(initial=0) <= ports and inn.max(initial=0) <= ports
    best = [0] + [10 ** 9] * len(step_circuits)
    for j in range(1, len(step_circuits) + 1):
        for i in range(j):
            if fits(step_circuits[i:j]):
                best[j] = min(best[j], best[i] + 1)
    return best[-1]


@pytest.mark.parametrize("seed", range(12))
def test_greedy_phases_are_the_fewest(seed):
    rng = np.random.default_rng(seed)
    nodes, ports = int(rng.integers(3, 6)), int(rng.integers(1, 3))
    steps = []
    for _ in range(int(rng.integers(2, 7))):  # each step a random partial matching (fits alone)
        perm = rng.permutation(nodes)
        keep = [(int(u), int(v)) for u, v in zip(range(nodes), perm) if u != v and rng.random() < 0.7]
        steps.append(set(keep) or {(0, 1)})
    step = np.concatenate([[s] * len(c) for s, c in enumerate(steps)])
    u = np.array([a for c in steps for a, _ in c])
    v = np.array([b for c in steps for _, b in c])
    phase = group_phases(step, circuit_ids(u, v, nodes), nodes, ports)
    assert phase[-1] + 1 == _fewest_phases(steps, nodes, ports)
    assert (np.diff(phase) >= 0).all()


def test_a_step_beyond_the_ports_is_a_resource_error_naming_phase_node_and_count():
    good = build("pairwise", OCS(nodes=4, ports=1), "alltoall", 64)
    crowded = good.replace(step=np.zeros(len(good), np.int64))  # every transfer in one step
    with raises_naming(ResourceError, "phase 0", "step 0", "node 0", "3 outgoing circuits", "1 port"):
        OCSModel().check_resources(crowded)
    with raises_naming(UnsupportedError, "ocs", "1 port"):
        build("synth-alltoall", OCS(nodes=4, ports=1), "alltoall", 64)


def test_reconfiguration_is_charged_between_phases_that_change_circuits():
    sw = OCS(nodes=8, ports=1, reconfiguration_s=1e-3)
    ring = run("ring", sw, "allgather", 2 ** 16)
    rd = run("recursive-doubling", sw, "allgather", 2 ** 16)
    assert (ring.part.phases, ring.part.reconfigurations) == (1, 0)
    assert (rd.part.phases, rd.part.reconfiguration_time_s) == (3, pytest.approx(2e-3))
    s = build("recursive-doubling", sw, "allgather", 2 ** 16)
    model = model_for(sw)
    flow = model_for(OCS(nodes=8, ports=1, reconfiguration_s=0)).answer_time_s(
        s.replace(system=OCS(nodes=8, ports=1, reconfiguration_s=0)), None)
    assert rd.time_s == pytest.approx(flow + 2e-3)
    assert model.realised_facts(s) == {"steps": 3, "reconfigurations": 2}
    wide = run("recursive-doubling", OCS(nodes=8, ports=3, reconfiguration_s=1e-3), "allgather", 2 ** 16)
    assert wide.part.phases == 1  # 3 ports hold all three matchings at once


def test_closed_form_counts_contention_and_relay_hops():
    sw = OCS(nodes=9, ports=2, link_bandwidth_bytes_per_s=1e9, link_latency_s=1e-6, relay_latency_s=0,
             reconfiguration_s=1.0)
    logical, params = pairwise_relay(sw, "alltoall", 1000)
    total, reconf = logical_time_s(sw, logical)
    b = params["base"]
    expect = sum(sum((k // b ** j) % b for j in range(2)) * 1e-6 + max((k // b ** j) % b for j in range(2)) * 1e-6
                 for k in range(1, 9))  # hops x 1 us + (load digit x 1000 B / 1 GB/s) per round
    assert (reconf, total) == (0, pytest.approx(expect))
    s = build("pairwise-relay", sw, "alltoall", 1000)
    assert model_for(sw).time(s).time_s == pytest.approx(expect)
    assert ocs_time_s(sw, s.step, s.src, s.dst, s.size_bytes, s.routes)[0] == pytest.approx(expect)


# --- the lower bound -------------------------------------------------------------------------------------
def _configurations(nodes, ports):
    """Every maximal configuration: circuit sets with each node at most ``ports`` out and in, none addable."""
    edges = np.array([(u, v) for u in range(nodes) for v in range(nodes) if u != v])
    if ports == 1:  # a partial permutation; maximal iff at most one node has neither an out nor an in circuit
        perms = [p for p in itertools.permutations(range(nodes)) if sum(i == x for i, x in enumerate(p)) <= 1]
        return [tuple((u, v) for u, v in enumerate(p) if u != v) for p in perms]
    masks = (np.arange(1 << len(edges))[:, None] >> np.arange(len(edges))) & 1  # every subset
    out = masks @ (edges[:, 0][:, None] == np.arange(nodes))
    inn = masks @ (edges[:, 1][:, None] == np.arange(nodes))
    ok = (out <= ports).all(1) & (inn <= ports).all(1)
    addable = (masks == 0) & (out[:, edges[:, 0]] < ports) & (inn[:, edges[:, 1]] < ports)
    return [tuple(map(tuple, edges[m.astype(bool)])) for m in masks[ok & ~addable.any(1)]]


def _exact_allgather(nodes, ports, hop, r):
    """Least time of an all-gather of negligible size: Dijkstra over (who holds what, configuration).

    A round forwards everything along every circuit of the configuration (costs ``hop``); changing the
    configuration costs ``r``; the first is free.  Sending more never hurts, so maximal configurations
    suffice, and with no start-up a relayed route costs what its hops cost as rounds.
    """
    configs = _configurations(nodes, ports)
    start = tuple(1 << i for i in range(nodes))
    full = (1 << nodes) - 1
    heap = [(0.0, start, c) for c in range(len(configs))]
    seen = {}
    while heap:
        t, hold, c = heapq.heappop(heap)
        if all(h == full for h in hold):
            return t
        if seen.get((hold, c), np.inf) <= t:
            continue
        seen[(hold, c)] = t
        for c2 in range(len(configs)):
            new = list(hold)
            for u, v in configs[c2]:
                new[v] |= hold[u]
            new = tuple(new)
            if new != hold:
                heapq.heappush(heap, (t + hop + (r if c2 != c else 0.0), new, c2))
    raise AssertionError("unreachable")


@pytest.mark.parametrize("nodes, ports, r", [(n, p, r) for n, p in ((3, 1), (4, 1), (4, 2))
                                             for r in (0.0, 0.5, 1.0, 5.0)]
                         + [(5, 1, 0.5), (5, 1, 5.0)])  # N=5: about 5 s each
def test_bound_is_never_above_the_brute_force_optimum_and_attained(nodes, ports, r):
    sw = OCS(nodes=nodes, ports=ports, link_bandwidth_bytes_per_s=1e30, link_latency_s=1.0, relay_latency_s=0,
             reconfiguration_s=r)
    exact = _exact_allgather(nodes, ports, 1.0, r)
    bound = ocs_lower_bound_s(sw, make_collective("allgather", nodes, 1))
    assert bound <= exact + 1e-9
    assert bound == pytest.approx(exact)  # and attained in every case drawn here (docs/derivations/ocs-bound.md)


def test_bound_terms():
    assert [moore_diameter(n, 2) for n in (1, 2, 3, 4, 7, 8)] == [0, 1, 1, 2, 2, 3]
    assert moore_distance_sum(8, 2) == 2 * 1 + 4 * 2 + 1 * 3 and spread_rounds(27, 2) == 3
    sw = OCS(nodes=16, ports=2, link_bandwidth_bytes_per_s=1e9, link_latency_s=1e-6, relay_latency_s=0,
             reconfiguration_s=1e-6)
    a2a = make_collective("alltoall", 16, 1000)
    one, many = bound_terms(sw, a2a, 1), bound_terms(sw, a2a, 8)
    assert (one.hops, many.hops) == (moore_diameter(16, 2), spread_rounds(16, 2))
    assert one.bandwidth_s == pytest.approx(1e-6 + 1000 * moore_distance_sum(16, 2) / 2e9)
    assert many.bandwidth_s == pytest.approx(1e-6 + 1000 * 15 / 2e9) and many.reconfiguration_s == pytest.approx(7e-6)
    assert ocs_bound(sw, a2a).time_s == min(bound_terms(sw, a2a, c).time_s for c in range(1, 16))


@pytest.mark.parametrize("ports", [1, 2])
@pytest.mark.parametrize("r", [4e-9, 1e-6, 1e-4, 1e-2])
@pytest.mark.parametrize("size", [64, 2 ** 20])
def test_no_algorithm_beats_the_bound(ports, r, size):
    sw = OCS(nodes=8, ports=ports, reconfiguration_s=r)
    for alg, coll in RUNS:
        res = run(alg, sw, coll, size)
        assert res.verified and res.time_s >= res.lower_bound_s * (1 - 1e-9), (alg, coll, res.time_s)


# --- algorithms -------------------------------------------------------------------------------------------
def test_relayed_pairwise_uses_one_configuration_and_checks_its_degree():
    sw = OCS(nodes=16, ports=2, reconfiguration_s=1e-3)
    res = run("pairwise-relay", sw, "alltoall", 4096)
    assert res.verified and res.part.phases == 1 and res.params["base"] == 4
    assert run("pairwise", sw, "alltoall", 4096).part.phases == 8  # (N-1)/p configurations, direct
    with raises_naming(InputError, "degree", "ports=2", "3"):
        build("pairwise-relay", sw, "alltoall", 64, degree=3)
    with pytest.raises(UnsupportedError):
        build("pairwise-relay", load_system("ring", nodes=8), "alltoall", 64)


def test_auto_follows_the_crossovers_from_4ns_to_10ms():
    base = OCS(nodes=16, ports=1)
    for coll, size in (("allgather", 2 ** 14), ("alltoall", 2 ** 12), ("allreduce", 2 ** 20)):
        rows = candidate_times(base, coll, size)
        spans = crossovers(rows)
        assert spans[0][0] == 4e-9 and spans[-1][1] == 1e-2
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        for lo, hi, label in spans:
            r = float(np.sqrt(lo * hi))
            sw = OCS(nodes=16, ports=1, reconfiguration_s=r)
            chosen = run("ocs-auto", sw, coll, size).params
            assert f"{chosen['choice']} degree={chosen['degree']}".startswith(label) if "degree" in chosen \
                else chosen["choice"] == label
    small = [s[2] for s in crossovers(candidate_times(base, "allgather", 2 ** 14))]
    assert small[0] == "recursive-doubling" and small[-1] == "ring"  # fast switches: log N rounds; slow: one config


def test_tune_lists_the_candidates():
    from collsim.algorithms import get_algorithm
    sw = OCS(nodes=8, ports=2)
    tried = get_algorithm("ocs-auto").candidates(sw, "alltoall", 64)
    assert {t["choice"] for t in tried} == {"pairwise", "bruck", "bruck-multiport", "ring-personalized",
                                            "pairwise-relay"}
    assert {t.get("degree") for t in tried if t["choice"] == "pairwise-relay"} == {1, 2}


# --- capabilities and the command line -------------------------------------------------------------------
def test_unsupported_exports_are_refused_by_the_generic_check():
    sw = OCS(nodes=4)
    require(sw, "flow-simulation", "simulate")
    for capability in ("msccl", "simgrid", "smpi-replay"):
        with pytest.raises(UnsupportedError, match="ocs"):
            require(sw, capability, "export")


def test_cli_compare_from_name_and_toml(tmp_path):
    runner = CliRunner()
    out = runner.invoke(cli, ["compare", "--system", "ocs", "-n", "8", "--collective", "allgather", "--size", "64KiB",
                              "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    rows = rows if isinstance(rows, list) else rows["results"]
    assert {"ring", "ocs-auto", "recursive-doubling"} <= {r["algorithm"] for r in rows}
    timed = [r for r in rows if r["time_s"] is not None]  # synth-matching's row says why it was skipped
    assert len(timed) >= 4 and all(r["phases"] >= 1 and r["time_s"] >= r["lower_bound_s"] * (1 - 1e-9) for r in timed)
    f = tmp_path / "sw.toml"
    f.write_text('[system]\nkind = "ocs"\nnodes = 8\nports = 2\nreconfiguration_s = "4ns"\n')
    out = runner.invoke(cli, ["compare", "--system", str(f), "--collective", "alltoall", "--size", "1KiB"])
    assert out.exit_code == 0 and "pairwise-relay" in out.output and "2 ports" in out.output, out.output
    out = runner.invoke(cli, ["compare", "--system", "ocs", "-n", "16", "--collective", "alltoall", "--size", "256KiB"])
    names(" ".join(out.output.split()), "256KiB", "pairwise", "r = 7.503 µs", "bruck", "r = 156 µs",
          "ring-personalized")  # the crossovers, as docs/systems.md's table


@pytest.mark.parametrize("nodes, ports", [(9, 2), (10, 2), (16, 3), (7, 6), (5, 1)])
def test_multiport_bruck_meets_the_spread_term_on_every_port(nodes, ports):
    sw = OCS(nodes=nodes, ports=ports, link_bandwidth_bytes_per_s=1e9, link_latency_s=1e-6, relay_latency_s=0,
             reconfiguration_s=0)
    for coll in ("allgather", "alltoall"):
        res = run("bruck-multiport", sw, coll, 1)  # latency-bound: the bound's spread term is attained
        assert res.verified and res.steps == spread_rounds(nodes, ports)
    big = run("bruck-multiport", sw, "allgather", 2 ** 20)
    assert big.part.phases == big.steps or ports >= nodes - 1  # a new configuration per round (k shifts each)
    if (ports + 1) ** spread_rounds(nodes, ports) == nodes:  # N = (k+1)^R: every port busy every round
        assert big.efficiency > 0.97, big.efficiency


@pytest.mark.parametrize("nodes, ports", [(16, 2), (9, 3), (7, 4)])
def test_multiport_ring_keeps_one_configuration_and_every_port_busy(nodes, ports):
    sw = OCS(nodes=nodes, ports=ports, reconfiguration_s=1e-2)
    for coll in ("allgather", "reducescatter", "allreduce"):
        res = run("ring-multiport", sw, coll, 2 ** 22)
        assert res.verified and res.part.phases == 1 and res.params["rings"] == ports
    gather = run("ring-multiport", sw, "allgather", 2 ** 22)
    assert gather.efficiency > 0.97 and gather.efficiency > 1.9 * run("ring", sw, "allgather", 2 ** 22).efficiency
    assert run("ocs-auto", sw, "allgather", 2 ** 22).params["choice"] == "ring-multiport"


def test_the_crossover_figure_script_runs_and_says_who_wins(tmp_path):
    """examples/ocs_crossover.py (docs/figures/ocs-crossover.png) at a small N: it writes a PNG and, per
    panel, ranges of r that tile 4 ns to 10 ms, each won by the algorithm crossovers() names."""
    import subprocess
    import sys
    from pathlib import Path
    script = Path(__file__).resolve().parents[1] / "examples" / "ocs_crossover.py"
    out = tmp_path / "ocs.png"
    proc = subprocess.run([sys.executable, str(script), "--nodes", "4", "--out", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panels = [line for line in proc.stdout.splitlines() if "(N=4, p=1):" in line]
    assert len(panels) == 9                               # 3 collectives x 3 sizes
    for line in panels:
        spans = line.split(": ", 1)[1].split("; ")
        assert spans[0].split(" from ")[1].startswith("4 ns") and spans[-1].endswith("to 10 ms"), line
