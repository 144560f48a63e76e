"""``simulate(mode="rank")``: MPI ranks without barriers (collsim.sim.ranks)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms import REGISTRY
from collsim.core.collective import make_collective
from collsim.core.schedule import LogicalBuilder
from collsim.pipeline import realize
from collsim.sim import MODES, simulate
from collsim.sim.ranks import rank_dependencies
from collsim.kinds.network.custom import CustomNetwork
from collsim.kinds.network.electrical import Line, Ring, Star
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.hypercube import Hypercube
from collsim.kinds.network.mesh_torus import Mesh

REL = 1e-9
B = 1e9


def rank_deadlines(s, finish: np.ndarray) -> np.ndarray:
    """Plain Python: latest finish of an earlier-step transfer touching either endpoint."""
    need = np.zeros(len(s))
    for t in range(len(s)):
        ends = {int(s.src[t]), int(s.dst[t])}
        for u in range(len(s)):
            if s.step[u] < s.step[t] and ends & {int(s.src[u]), int(s.dst[u])}:
                need[t] = max(need[t], finish[u])
    return need


def naive_edges(s) -> set[tuple[int, int]]:
    """Plain Python: every (u, t) with u in t's endpoints' previous active step."""
    edges = set()
    for t in range(len(s)):
        for v in (int(s.src[t]), int(s.dst[t])):
            earlier = [int(s.step[u]) for u in range(len(s)) if s.step[u] < s.step[t] and v in (s.src[u], s.dst[u])]
            if earlier:
                last = max(earlier)
                edges |= {(u, t) for u in range(len(s)) if s.step[u] == last and v in (s.src[u], s.dst[u])}
    return edges


def slow_star(nodes: int = 8, slow_in: int = 6, slow_out: int = 3) -> CustomNetwork:
    """A star whose link into ``slow_in`` and out of the switch to ``slow_out`` take 10 us."""
    links = []
    for i in range(nodes):
        links.append((i, "s0", B, 1e-6, False))
        links.append(("s0", i, B, 1e-5 if i in (slow_in, slow_out) else 1e-6, False))
    return CustomNetwork(nodes=nodes, switches=1, link=tuple(links))


def test_mode_is_listed():
    assert "rank" in MODES


@pytest.mark.parametrize("n", [4, 8, 16])
@pytest.mark.parametrize("size", [100, 1 << 20])
def test_neighbour_exchange_on_ring_rank_equals_bulk(n, size):
    """Every step's flows start together and take the same time: rank == bulk exactly."""
    s = collsim.build("ne", Ring(nodes=n, link_bandwidth_bytes_per_s=B), "allgather", size)
    bulk, rank = simulate(s), simulate(s, mode="rank")
    assert rank.total_time_s == bulk.total_time_s
    assert np.array_equal(rank.transfer_start_s, bulk.transfer_start_s)
    assert np.array_equal(rank.transfer_finish_s, bulk.transfer_finish_s)


def test_binomial_broadcast_rank_beats_bulk_when_latencies_differ():
    """Slow links into node 6 (step 1) and to node 3 (step 2): bulk pays both, each rank only one."""
    s = collsim.build("binomial", slow_star(), "broadcast", 1000)
    bulk, rank = simulate(s), simulate(s, mode="rank")
    fast, slow, data = 2e-6, 1.1e-5, 1000 / B
    assert bulk.total_time_s == pytest.approx(fast + 2 * slow + 3 * data, rel=REL)
    assert rank.total_time_s == pytest.approx(fast + slow + fast + 3 * data, rel=REL)
    assert rank.total_time_s < bulk.total_time_s


def test_binomial_broadcast_on_uniform_network_rank_equals_bulk():
    s = collsim.build("binomial", Star(nodes=8), "broadcast", 4096)
    assert simulate(s, mode="rank").total_time_s == pytest.approx(simulate(s).total_time_s, rel=REL)


def small_schedules():
    ring, line = Ring(nodes=6, link_bandwidth_bytes_per_s=B), Line(nodes=5, link_bandwidth_bytes_per_s=B)
    out = [collsim.build(a, sy, c, 3000) for a, sy, c in
           [("ring", ring, "allreduce"), ("ne", ring, "allgather"), ("binomial", ring, "broadcast"),
            ("pairwise", line, "alltoall"), ("bruck", line, "allgather"), ("binomial", slow_star(), "broadcast"),
            ("recursive-doubling", Hypercube(nodes=8), "allreduce"), ("pairwise", FatTree(nodes=8, k=4), "alltoall")]]
    b = LogicalBuilder(make_collective("alltoall", 4, 1000))  # steps a node skips, several flows per node
    b.add(0, np.array([0, 1]), np.array([3, 2]), np.array([[3], [6]]))
    b.add(2, np.array([0, 3, 2]), np.array([1, 0, 1]), np.array([[1], [12], [9]]))
    b.add(3, np.array([1]), np.array([3]), np.array([[7]]))
    out.append(realize(Line(nodes=4, link_bandwidth_bytes_per_s=B), b.build()))
    return out


@pytest.mark.parametrize("idx", range(9))
def test_starts_are_the_latest_earlier_finish_touching_either_end(idx):
    s = small_schedules()[idx]
    r = simulate(s, mode="rank", check=False)  # the last is a partial all-to-all, by hand
    need = rank_deadlines(s, r.transfer_finish_s)
    assert r.transfer_start_s == pytest.approx(need, rel=REL, abs=1e-18)
    assert r.total_time_s == pytest.approx(r.transfer_finish_s.max(), rel=REL)
    assert r.step_time_s[-1] <= r.total_time_s


@pytest.mark.parametrize("idx", range(9))
def test_dependencies_match_plain_python(idx):
    s = small_schedules()[idx]
    ptr, tgt, indeg = rank_dependencies(s)
    got = {(u, int(t)) for u in range(len(s)) for t in tgt[ptr[u]:ptr[u + 1]]}
    assert got == naive_edges(s)
    assert indeg.tolist() == np.bincount(tgt, minlength=len(s)).tolist()
    assert (np.diff(ptr) >= 0).all() and ptr[-1] == tgt.size


def test_empty_schedule_dependencies():
    empty = np.zeros(0, np.int64)
    ptr, tgt, indeg = rank_dependencies(SimpleNamespace(src=empty, dst=empty, step=empty))
    assert ptr.tolist() == [0] and tgt.size == 0 and indeg.size == 0


SYSTEMS = [Ring(nodes=6), Line(nodes=5), Star(nodes=6, startup_s=2e-6), Hypercube(nodes=8), FatTree(nodes=8, k=4),
           Mesh.from_dims((3, 3))]  # the textbook mesh algorithms need a square 2-D grid
ALGOS = sorted(name for name, spec in REGISTRY.items() if "network" in spec.systems)


def _accepted(name: str, system) -> list[str]:
    """The collectives the algorithm declares it can build on the system."""
    spec = REGISTRY[name]
    return [c for c in spec.collectives if spec.refusal(system, c) is None] \
        if spec.runs_on(system) else []


PAIRS = [(name, system) for name in ALGOS for system in SYSTEMS if _accepted(name, system)]


def test_every_network_algorithm_has_a_system_here():
    assert {name for name, _ in PAIRS} == set(ALGOS) and len(ALGOS) >= 10


@settings(max_examples=40)
@given(st.sampled_from(PAIRS), st.data(), st.integers(1, 1 << 16))
def test_registry_schedules_rank_mode_properties(pair, data, size):
    """Starts are exactly the rank deadlines; without any link shared, never slower than bulk."""
    name, system = pair  # only what the registry declares supported is drawn: every draw builds
    coll = data.draw(st.sampled_from(_accepted(name, system)), label="collective")
    s = collsim.build(name, system, coll, size)
    # the plain-Python reference is quadratic in the transfers, and rank mode's dependencies refuse
    # (MemoryLimitError) what would not fit: synth-trees may cut 64 KiB into 57,344 transfers on 8 nodes
    assume(len(s) <= 1500)
    r = simulate(s, mode="rank")
    need = rank_deadlines(s, r.transfer_finish_s)
    assert r.transfer_start_s == pytest.approx(need, rel=REL, abs=1e-18)
    assert (r.transfer_finish_s >= r.transfer_start_s).all()
    if r.peak_link_flows <= 1:  # no flow ever shared a link: removing barriers delays nothing
        assert r.total_time_s <= simulate(s).total_time_s * (1 + REL)
