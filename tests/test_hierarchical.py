"""The hierarchical kind: the system, its algorithms, its bound and its loaders (issue 23, kind 2)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms.hier_lanes import integer_units, plan_lanes
from collsim.core.collective import make_collective
from collsim.core.errors import InputError
from collsim.kinds.network.cuts import cut_demand_bytes
from collsim.kinds.network.bound import network_lower_bound_s
from collsim.kinds import model_for
from collsim.kinds.hierarchical.model import dimension_bounds_s
from collsim.pipeline import run
from collsim.systems import load_system
from collsim.kinds.hierarchical.system import Hierarchical
from conftest import names

SYSTEMS = ["switch:4:300GB/s,switch:3:50GB/s", "ring:4,ring:3", "full:3,line:3:5GB/s", "ring:3,switch:2,full:2",
           "star:3:300GB/s,hypercube:4:50GB/s"]   # the last: network kinds as dimensions


def test_the_graph_has_one_topology_per_dimension():
    h = Hierarchical(nodes=12, dimensions="switch:4:300GB/s,ring:3:50GB/s")
    assert h.switches == 3 and len(h.links) == h.link_count() == 3 * 8 + 4 * 6
    bw = h.links.bandwidth_bytes_per_s
    assert set(bw[h.link_dimension == 0]) == {300e9} and set(bw[h.link_dimension == 1]) == {50e9}
    s, d = np.divmod(np.arange(144), 12)
    keep = s != d
    ptr, links = h.route(s[keep], d[keep])
    hops = np.diff(ptr)
    diff = (h.coords(s[keep]) != h.coords(d[keep]))
    # a switch dimension costs 2 hops, a ring of 3 one: every route is dimension-ordered and shortest
    assert (hops == 2 * diff[:, 0] + diff[:, 1]).all()


@pytest.mark.parametrize("dims", SYSTEMS)
def test_every_route_stays_in_the_dimensions_it_must_cross(dims):
    h = Hierarchical.from_options(dims=dims)
    n = h.nodes
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    s, d = s[keep], d[keep]
    ptr, links = h.route(s, d)
    owner = np.repeat(np.arange(len(s)), np.diff(ptr))
    crossed = h.coords(s) != h.coords(d)
    assert crossed[owner, h.link_dimension[links]].all()


def test_loaders_cli_form_toml_and_descriptions(tmp_path):
    a = load_system("hierarchical", dims=("switch:8:300GB/s", "switch:16:50GB/s"))
    f = tmp_path / "h.toml"
    f.write_text('[system]\nkind = "hierarchical"\n[[system.dimensions]]\ntopology = "switch"\nsize = 8\n'
                 'bandwidth = "300GB/s"\n[[system.dimensions]]\ntopology = "switch"\nsize = 16\nbandwidth = "50GB/s"\n')
    b = load_system(str(f))
    c = load_system("dgx-16x8")
    assert a.dimensions == b.dimensions == c.dimensions and a.nodes == 128
    assert load_system(c.describe()) == c
    assert load_system("hierarchical", nodes=12).sizes == (6, 2)
    assert load_system("hierarchical", dims="4x2").sizes == (4, 2)
    with pytest.raises(InputError, match="does not match"):
        load_system("hierarchical", nodes=10, dims="4x2")
    with pytest.raises(InputError, match="topology"):
        load_system("hierarchical", dims="donut:4")
    with pytest.raises(InputError, match="custom"):
        load_system("hierarchical", dims="switch:2,custom:4")


@pytest.mark.parametrize("dims", SYSTEMS)
@pytest.mark.parametrize("name,collective", [("hier-allreduce", "allreduce"), ("hier-allgather", "allgather"),
                                             ("hier-alltoall", "alltoall"), ("md-ring", "allreduce"),
                                             ("md-ring", "allgather")])
@pytest.mark.parametrize("orders", ["all", "inner", "outer"])
def test_every_algorithm_verifies_on_every_topology_and_order(dims, name, collective, orders):
    system = Hierarchical.from_options(dims=dims)
    sched = collsim.build(name, system, collective, 1000, orders=orders)
    report = collsim.verify(sched)
    assert report.transfers >= 1


def test_network_algorithms_run_on_the_kind():
    system = load_system("hierarchical", nodes=8)
    for name, coll in [("ring", "allreduce"), ("bruck", "allgather"), ("pairwise", "alltoall")]:
        assert collsim.verify(collsim.build(name, system, coll, 4096)).transfers >= 1


def test_the_lane_plan_balances_two_orders_and_rounds_to_whole_units():
    x, t = plan_lanes([[(0, 1.0), (1, 6.0)], [(1, 6.0), (0, 1.0)]], 1, 2)
    assert x.sum() == pytest.approx(1.0) and t == pytest.approx(6.0)   # one order alone: 7
    units = integer_units(np.array([0.26, 0.26, 0.48]), 7)
    assert units.sum() == 7 and (units >= 0).all()


@pytest.mark.parametrize("dims", SYSTEMS + ["switch:2,switch:2,switch:2"])
@pytest.mark.parametrize("collective", ["allreduce", "allgather", "reducescatter", "alltoall", "broadcast"])
def test_the_per_dimension_cuts_are_cuts(dims, collective):
    """Every term is a real cut's demand over its capacity: the brute force over every vertex set agrees."""
    system = Hierarchical.from_options(dims=dims)
    c = make_collective(collective, system.nodes, 1000)
    terms = dimension_bounds_s(system, c)
    lt = system.links
    bw = lt.bandwidth_bytes_per_s
    v = system.vertices
    if v <= 16:   # every cut: the per-dimension terms never exceed the best cut
        codes = np.arange(1, (1 << v) - 1)
        masks = ((codes[:, None] >> np.arange(v)) & 1).astype(bool)
        ms, md = masks[:, lt.src], masks[:, lt.dst]
        ab, ba = cut_demand_bytes(c, masks[:, :system.nodes])
        cab, cba = (ms & ~md) @ bw, (~ms & md) @ bw
        best = max(np.divide(ab, cab, out=np.zeros(len(ab)), where=cab > 0).max(),
                   np.divide(ba, cba, out=np.zeros(len(ba)), where=cba > 0).max())
        assert max(terms.values()) <= best * (1 + 1e-12)
    bound = model_for(system).lower_bound_s(system, c)
    assert bound >= network_lower_bound_s(system, c) * (1 - 1e-12)
    assert bound >= max(terms.values())


@pytest.mark.parametrize("dims", SYSTEMS)
@pytest.mark.parametrize("name,collective", [("hier-allreduce", "allreduce"), ("hier-alltoall", "alltoall"),
                                             ("md-ring", "allgather"), ("ring", "allreduce")])
def test_no_schedule_beats_the_bound(dims, name, collective):
    system = Hierarchical.from_options(dims=dims)
    for size in (64, 1 << 16, 1 << 22):
        row = run(name, system, collective, size)
        assert row.verified and row.time_s >= row.lower_bound_s * (1 - 1e-9)


def test_the_part_names_the_binding_dimension():
    narrow = Hierarchical.from_options(dims="switch:4:300GB/s,switch:4:1GB/s")
    row = run("hier-alltoall", narrow, "alltoall", 1 << 16)
    assert row.part.bottleneck == "dim 1" and row.to_json()["hierarchy"].startswith("switch:4:300GB/s")
    assert row.part.busiest_dimension == 1 and run("hier-alltoall", narrow.__class__.from_options(
        dims="switch:4:1GB/s,switch:4:300GB/s"), "alltoall", 1 << 16).part.busiest_dimension == 0
    assert model_for(narrow).name == "hierarchical"


def test_pipelined_lanes_beat_one_lane_when_the_dimensions_differ():
    system = Hierarchical.from_options(dims="switch:4:300GB/s,switch:4:50GB/s")
    one = run("hier-allreduce", system, "allreduce", 1 << 26, pieces=1, orders="inner")
    lanes = run("hier-allreduce", system, "allreduce", 1 << 26, pieces=8)
    assert lanes.time_s < 0.7 * one.time_s   # measured 0.64


def test_the_synthesizer_runs_on_a_small_hierarchical_system():
    system = Hierarchical.from_options(dims="switch:2:100GB/s,switch:2:25GB/s")
    row = run("synth-matching", system, "allgather", 4096)
    assert row.verified and row.time_s >= row.lower_bound_s * (1 - 1e-9)


def test_bad_parameters_are_refused():
    system = load_system("hierarchical", nodes=8)
    with pytest.raises(InputError, match="pieces"):
        collsim.build("hier-allreduce", system, "allreduce", 1024, pieces=0)
    with pytest.raises(InputError, match="orders"):
        collsim.build("hier-allreduce", system, "allreduce", 1024, orders="sideways")
    assert list(itertools.islice(collsim.algorithms.get_algorithm("hier-allreduce").candidates(
        system, "allreduce", 1024), 1)) == [{"pieces": 1, "orders": "all"}]


def test_every_algorithm_that_accepts_the_kind_builds_or_refuses_in_words():
    """A square hierarchy is no mesh: algorithms that read a grid's ``dims`` refuse it (nothing crashes)."""
    rows, skipped = collsim.compare(Hierarchical.from_options(dims="ring:3,ring:3"), "allreduce", 4096)
    assert {r.algorithm for r in rows} >= {"hier-allreduce", "md-ring", "ring"} and all(r.verified for r in rows)
    assert sorted(note.algorithm for note in skipped) == ["mesh", "rotated-dims"]
    for note in skipped:
        names(str(note), note.algorithm, "allreduce", "dims")   # who is skipped, for what, and what it needs
        assert not note.failed


def test_md_ring_uses_every_ring_both_ways_on_a_torus_of_rings():
    torus = Hierarchical.from_options(dims="ring:4:50GB/s,ring:4:50GB/s,ring:4:50GB/s")
    one = run("md-ring", torus, "allreduce", 1 << 24, orders="inner", pieces=1)   # one order, both ways
    every = run("md-ring", torus, "allreduce", 1 << 24)
    assert "-@" in every.params["lanes"]   # some lanes run the rings the other way
    assert every.time_s < 0.45 * one.time_s and every.efficiency > 0.8   # measured 0.38 and 0.84


def test_fewer_units_give_fewer_chunks():
    system = load_system("hierarchical", nodes=8)
    few = collsim.build("hier-allreduce", system, "allreduce", 1 << 20, units=2, pieces=1)
    assert few.params["units"] == 2 and few.collective.split == 2 * 8
    with pytest.raises(InputError, match="units"):
        collsim.build("hier-allreduce", system, "allreduce", 1024, units=0)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_schedule_files_keep_the_dimensions(tmp_path, suffix):
    from collsim.core import serialize
    system = Hierarchical.from_options(dims="switch:4:300GB/s,ring:3:50GB/s:500ns")
    sched = collsim.build("hier-allreduce", system, "allreduce", 1 << 20)
    path = tmp_path / f"s{suffix}"
    serialize.save(sched, path)
    back = serialize.load(path)
    assert back.system == system and collsim.verify(back).transfers == len(sched)


_DIMENSION = st.builds(lambda topo, k, bw: f"{topo}:{k}:{bw}GB/s",
                       st.sampled_from(["switch", "ring", "line", "full", "star"]),   # star: a network kind
                       st.integers(2, 4), st.sampled_from([1, 50, 300]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=st.lists(_DIMENSION, min_size=1, max_size=3),
       case=st.sampled_from([("hier-allreduce", "allreduce"), ("hier-allgather", "allgather"),
                             ("hier-alltoall", "alltoall"), ("md-ring", "allreduce"), ("md-ring", "allgather")]),
       size=st.integers(1, 1 << 20), pieces=st.sampled_from([None, 1, 3]))
def test_random_hierarchies_verify_and_respect_the_bound(dims, case, size, pieces):
    system = Hierarchical.from_options(dims=",".join(dims))
    row = run(case[0], system, case[1], size, pieces=pieces)
    assert row.verified and row.time_s >= row.lower_bound_s * (1 - 1e-9)
    assert 0 <= row.part.busiest_dimension < len(dims)


@pytest.mark.parametrize("name,collective,dims", [("hier-allreduce", "allreduce", "switch:4:300GB/s,switch:3:50GB/s"),
                                                  ("md-ring", "allreduce", "ring:4,ring:3"),
                                                  ("hier-alltoall", "alltoall", "full:3,switch:2")])
def test_the_closed_form_is_the_lane_plan_and_the_simulator_agrees(name, collective, dims):
    row = run(name, Hierarchical.from_options(dims=dims), collective, 1 << 20)
    assert row.time_model == "alpha-beta (closed form)"
    assert row.alpha_beta_time_s == pytest.approx(row.time_s, rel=1e-3)   # whole bytes per chunk: within 0.1 %


def test_a_dimension_can_be_another_network_kind():
    """Boxes on a fat tree per rail: the kind's graph on every group, its own switches, its routes."""
    h = Hierarchical.from_options(dims="switch:4:300GB/s,fat-tree:16:50GB/s")
    assert h.switches == 16 + 4 * 20 and len(h.links) == 16 * 8 + 4 * 96
    n = h.nodes
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    ptr, links = h.route(s[keep], d[keep])
    owner = np.repeat(np.arange(int(keep.sum())), np.diff(ptr))
    assert (h.coords(s[keep]) != h.coords(d[keep]))[owner, h.link_dimension[links]].all()
    assert set(h.links.bandwidth_bytes_per_s[h.link_dimension == 1]) == {50e9}
    for name, coll in [("hier-allreduce", "allreduce"), ("md-ring", "allgather"), ("pairwise", "alltoall")]:
        row = run(name, h, coll, 1 << 16)
        assert row.verified and row.time_s >= row.lower_bound_s * (1 - 1e-9)
