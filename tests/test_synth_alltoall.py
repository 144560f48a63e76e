"""synth-alltoall: the all-to-all from the max-concurrent-flow LP (issue 22) and its bound."""

from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pytest

import collsim
from collsim.algorithms.synth_alltoall import round_shares
from collsim.core.errors import InputError
from collsim.core.limits import ENV_VAR, MemoryLimitError
from collsim.kinds.network.mcf import check_lp_size, lp_size, mcf_bound, solve_mcf
from collsim.sim.flow import simulate
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork
from collsim.kinds.network.electrical import Ring, Star

GB = 1e9


def _custom():
    """Three hosts on two switches, a slow inter-switch link, and a fast one-way link n0 -> n1."""
    return CustomNetwork(nodes=3, switches=2, link=(
        (0, 3, None, None, None), (1, 3, None, None, None), (2, 4, None, None, None),
        (3, 4, 5e9, 2e-7, None), (0, 1, 4e10, 1e-7, False)))


SYSTEMS = {
    "ring": lambda: Ring(nodes=5),
    "star": lambda: Star(nodes=4),
    "mesh": lambda: load_system("mesh", dims=(3, 3)),
    "torus": lambda: load_system("torus", dims=(3, 4)),
    "hypercube": lambda: load_system("hypercube", nodes=8),
    "fat-tree": lambda: load_system("fat-tree", nodes=16),
    "custom": _custom,
}


@pytest.mark.parametrize("kind", sorted(SYSTEMS))
def test_verifies_and_is_never_faster_than_the_bound(kind):
    system = SYSTEMS[kind]()
    size = 1 << 20
    sched = collsim.build("synth-alltoall", system, "alltoall", size, split=4)
    report = collsim.verify(sched)
    assert report.transfers == system.nodes * (system.nodes - 1) and report.steps == 1
    sim = simulate(sched, report=report)
    bound = mcf_bound(system, size)
    assert sim.total_time_s >= bound.time_s * (1 - 1e-9)
    assert sched.params["bound_s"] == pytest.approx(bound.bandwidth_time_s)
    # the bandwidth time of the rounded routes is the simulated time, less the path latency
    lat = float(sim.transfer_finish_s.max()) - sched.params["congestion_s"]
    assert 0 <= lat <= 10 * system.links.latency_s.max() * system.vertices + (system.startup_s or 0)


def test_custom_graph_uses_its_one_way_link():
    system = _custom()
    sched = collsim.build("synth-alltoall", system, "alltoall", 1 << 20, split=8)
    one_way = int(system.links.index([0], [1])[0])
    assert one_way >= 0 and one_way in set(sched.routes.route_links.tolist())
    assert int(system.links.index([1], [0])[0]) == -1


def test_efficiency_on_a_small_torus():
    system = load_system("torus", dims=(4, 4))
    size = 64 << 20
    sched = collsim.build("synth-alltoall", system, "alltoall", size)
    sim = simulate(sched)
    assert mcf_bound(system, size).time_s / sim.total_time_s >= 0.95


def test_bound_on_a_ring_and_a_star_matches_the_hand_derivation():
    # ring of 5, both ways: a source sends to 2 nodes at 1 hop and 2 at 2 hops, 6 link-crossings per
    # source, 6N in all over 2N links of capacity c: λ* = c / 3, attained by the shortest ways
    ring = Ring(nodes=5, link_bandwidth_bytes_per_s=1 * GB, link_latency_s=0)
    assert solve_mcf(ring).throughput_bytes_per_s == pytest.approx(GB / 3, rel=1e-7)
    # star of N hosts: each host's one uplink carries its N - 1 blocks: λ* = c / (N - 1)
    star = Star(nodes=6, link_bandwidth_bytes_per_s=2 * GB, link_latency_s=0)
    b = mcf_bound(star, 1000)
    assert b.throughput_bytes_per_s == pytest.approx(2 * GB / 5, rel=1e-7)
    assert b.time_s == pytest.approx(1000 / (2 * GB / 5), rel=1e-7) and b.latency_s == 0
    assert "λ*" in b.certificate and "n" in b.certificate


def test_the_dual_lengths_certify_the_bound():
    # Σ c_e d_e = 1 and the dual lengths' pair distances sum to 1/λ* (strong duality)
    system = load_system("mesh", dims=(2, 3))
    sol = solve_mcf(system)
    lt = system.links
    assert float(lt.bandwidth_bytes_per_s @ sol.length) == pytest.approx(1.0, rel=1e-6)
    n, nv = system.nodes, system.vertices
    dist = np.full((nv, nv), np.inf)
    np.fill_diagonal(dist, 0)
    np.minimum.at(dist, (lt.src, lt.dst), sol.length)
    for k in range(nv):                                  # Floyd-Warshall on 6 vertices
        dist = np.minimum(dist, dist[:, [k]] + dist[[k], :])
    assert dist[:n, :n].sum() == pytest.approx(1 / sol.throughput_bytes_per_s, rel=1e-5)


def test_round_shares_keeps_the_split():
    assert round_shares(np.array([1 / 3, 1 / 3, 1 / 3]), 16).tolist() == [6, 5, 5]
    assert round_shares(np.array([1.0]), 7).tolist() == [7]


def test_too_large_an_lp_is_refused_before_it_starts():
    mesh = load_system("mesh", dims=(64, 64))
    with pytest.raises(InputError, match=r"66,060,289 variables .* above the limit"):
        check_lp_size(mesh)
    with pytest.raises(InputError, match=r"variables.*above the limit of 100 variables"):
        collsim.build("synth-alltoall", Ring(nodes=8), "alltoall", 1024, max_variables=100)
    # 64 KiB: above the 6 KiB every explicit all-to-all on 8 nodes needs, below the LP's 262 KiB
    with mock.patch.dict(os.environ, {ENV_VAR: "64KiB"}):
        with pytest.raises(MemoryLimitError, match=r"max-concurrent-flow LP .* nonzeros needs about"):
            collsim.build("synth-alltoall", Ring(nodes=8), "alltoall", 1024)
    assert lp_size(Ring(nodes=8))["variables"] == 8 * 16 + 1


def test_bad_split_is_refused():
    with pytest.raises(InputError, match="split must be an integer"):
        collsim.build("synth-alltoall", Ring(nodes=4), "alltoall", 1024, split=0)


def test_paths_longer_than_minimum_hop_are_used_when_they_carry_more():
    # n0 - n1 directly at 0.1 GB/s, or through s0 at 10 GB/s: the restricted (minimum-hop) LP alone
    # would give 0.1 GB/s; its dual shows the longer way is shorter in length, which is then added
    net = CustomNetwork(nodes=2, switches=1, link=((0, 1, 1e8, None, None), (0, 2, 1e10, None, None),
                                                   (2, 1, 1e10, None, None)))
    assert solve_mcf(net).throughput_bytes_per_s == pytest.approx(1.01e10, rel=1e-7)
    sched = collsim.build("synth-alltoall", net, "alltoall", 1 << 20, split=101)
    assert simulate(sched).total_time_s >= mcf_bound(net, 1 << 20).time_s * (1 - 1e-9)


@pytest.mark.parametrize("kind", ["mesh", "custom", "fat-tree"])
def test_restricted_lp_reaches_the_full_optimum(kind):
    system = SYSTEMS[kind]()
    with mock.patch("collsim.kinds.network.mcf.MAX_ROUNDS", 0):     # the full LP straight away
        full = solve_mcf(system).throughput_bytes_per_s
    assert solve_mcf(system).throughput_bytes_per_s == pytest.approx(full, rel=1e-6)
