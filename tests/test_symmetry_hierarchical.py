"""Symmetric schedules on hierarchical systems: translations of coordinates (kinds/hierarchical/symmetry.py).

The representatives' expansion must be the schedule the algorithm builds in full, and the two must
verify and simulate alike: the orbit verifier's verdict is the expansion's, and the flow simulation
on the quotient network (every link replaced by its orbit's representative) gives the expansion's
row, time and link loads.  The golden counts here are derived: a group of order ``|G|`` acting
freely has ``L / |G|`` orbits of links and ``T / |G|`` representatives.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim.pipeline as pipeline
from collsim.verify import orbits
from collsim import build, build_symmetric, evaluate, verify
from collsim.algorithms import REGISTRY
from collsim.core.errors import VerificationError
from collsim.core.symmetry import SymmetricSchedule
from collsim.experiments.compare import compare
from collsim.kinds.hierarchical import symmetry
from collsim.kinds.hierarchical.system import Hierarchical
from collsim.sim.flow import simulate

from conftest import rows_alike, acts_freely_on_links, is_its_full_build, ring_is_its_full_build_under_rotations, quotient_is_expansion, rejected_alike, representative_mutants

HIER = sorted(name for name, spec in REGISTRY.items() if spec.orbits is not None and "hierarchical" in spec.systems)
SIZES = {"switch": [2, 3, 4], "ring": [3, 4, 5], "full": [2, 3], "line": [2, 3], "fat-tree": [16]}


def test_the_hierarchical_symmetric_algorithms():
    assert set(HIER) == {"hier-allreduce", "hier-allgather", "md-ring"}
    # an all-to-all's blocks belong to pairs, which translating anchors does not carry: no orbits declared
    assert REGISTRY["hier-alltoall"].orbits is None and "hierarchical" in REGISTRY["hier-alltoall"].systems


def _rows(s):
    """Every transfer as a sortable tuple: step, ends, reduction, its chunks as a set, its route."""
    cp, rp = s.chunk_ptr, s.routes.route_ptr
    return sorted((int(s.step[t]), int(s.src[t]), int(s.dst[t]), bool(s.reduce[t]),
                   tuple(sorted(s.chunk_idx[cp[t]:cp[t + 1]].tolist())),
                   tuple(s.routes.route_links[rp[t]:rp[t + 1]].tolist())) for t in range(len(s)))


@st.composite
def _systems(draw, sizes=None, most=64):
    """A random hierarchical system of two or three dimensions (topologies and sizes from ``sizes``,
    default :data:`SIZES`), at most ``most`` nodes."""
    sizes = SIZES if sizes is None else sizes
    dims = []
    for _ in range(draw(st.integers(2, 3))):
        topo = draw(st.sampled_from(sorted(sizes)))
        dims.append((topo, draw(st.sampled_from(sizes[topo]))))
    if np.prod([k for _, k in dims]) > most:
        dims = dims[:2]
    if np.prod([k for _, k in dims]) > most:
        dims = [("switch", 2), dims[1]]
    n = int(np.prod([k for _, k in dims]))
    return Hierarchical(nodes=n, dimensions=",".join(f"{t}:{k}" for t, k in dims))


@st.composite
def _cases(draw):
    system = draw(_systems())
    name = draw(st.sampled_from(HIER))
    coll = draw(st.sampled_from(REGISTRY[name].collectives))
    units = draw(st.sampled_from([1, 2, 4]))
    pieces = draw(st.sampled_from([None, 1, 2]))
    unit_bytes = draw(st.integers(1, 64)) * 8
    size = unit_bytes * units * (system.nodes if coll == "allreduce" else 1)
    return system, name, coll, size, {"units": units, "pieces": pieces}


@settings(max_examples=25, deadline=None)
@given(case=_cases())
def test_symmetric_equals_expanded_and_full_build(case):
    system, name, coll, size, params = case
    group = symmetry.translation_group(system, cyclic=name == "md-ring")   # ring stages: whole coordinates
    sym = build_symmetric(name, system, coll, size, **params) if group is not None else None
    if sym is None:
        return     # no coordinate moves (lines of three, fat trees with empty ports): nothing to compare
    assert sym.group == group
    full = build(name, system, coll, size, **params)
    assert sym.transfers == len(full) == len(sym.reps) * group.order
    assert _rows(sym.expand()) == _rows(full)
    a, b = verify(sym), verify(full)
    assert a.data_flow == "orbits" and b.data_flow != "orbits"
    assert (a.steps, a.rounds, a.transfers, a.max_hops, a.time_s, a.closed_form_time_s) == \
        (b.steps, b.rounds, b.transfers, b.max_hops, b.time_s, b.closed_form_time_s)
    ra, rb = evaluate(sym, report=a), evaluate(full, report=b)
    assert ra.verified and rb.verified
    assert ra.to_json() == rb.to_json()


@pytest.mark.parametrize("dims", ["ring:5,switch:2", "ring:4,ring:3", "switch:3,full:3,ring:3"])
def test_quotient_simulation_is_the_expansions(dims):
    """Routes of two or more hops in one ring cross two links of one orbit: the quotient counts both."""
    n = int(np.prod([int(d.split(":")[1]) for d in dims.split(",")]))
    system = Hierarchical(nodes=n, dimensions=dims)
    sym = build_symmetric("hier-allgather", system, "allgather", 4096, pieces=2)   # direct: 2 hops in a ring
    assert (sym.reps.routes.path_hops > 1).any()
    quotient_is_expansion(sym, symmetry)


@pytest.mark.parametrize("dims, order, moving", [
    ("switch:8,switch:4", 32, (True, True)),          # boxes on rails: a regular group
    ("switch:4,fat-tree:16", 64, (True, True, True, True)),   # a full fat tree: pods, edges, ports move
    ("switch:4,fat-tree:12", 4, (False, True)),       # empty ports: the fat tree's coordinate stays
    ("ring:4,switch:2,line:3", 8, (False, True, True)),
    ("full:3,ring:5", 15, (True, True)),
])
def test_translation_group_acts_freely_on_links(dims, order, moving):
    n = int(np.prod([int(d.split(":")[1]) for d in dims.split(",")]))
    system = Hierarchical(nodes=n, dimensions=dims)
    g = symmetry.translation_group(system)
    assert g.order == order and g.moving == moving
    assert symmetry.maps_links(system, g) and pipeline.model_for(system).accepts_group(system, g)
    acts_freely_on_links(system, g, symmetry)


def test_no_group_without_a_translated_coordinate():
    system = Hierarchical(nodes=48, dimensions="line:3,fat-tree:16")     # a full fat tree moves ...
    assert symmetry.translation_group(system).moving == (True, True, True, False)
    system = Hierarchical(nodes=36, dimensions="line:3,fat-tree:12")     # ... one with empty ports does not
    assert symmetry.translation_group(system) is None
    assert build_compact_is_full(system)


def build_compact_is_full(system) -> bool:
    return not isinstance(pipeline.build_compact("hier-allreduce", system, "allreduce", system.nodes * 64),
                          SymmetricSchedule)


@settings(max_examples=20, deadline=None)
@given(system=_systems(), coll=st.sampled_from(["allreduce", "allgather"]), seed=st.integers(0, 2**32 - 1))
def test_mutants_rejected_alike(system, coll, seed):
    """A mutant of the representatives fails on its orbits iff its expansion fails, in the same way."""
    if symmetry.translation_group(system) is None:
        return
    name = "hier-allreduce" if coll == "allreduce" else "hier-allgather"
    sym = build_symmetric(name, system, coll, 64 * (system.nodes if coll == "allreduce" else 1), units=1)
    rng = np.random.default_rng(seed)
    assert rejected_alike(sym, representative_mutants(sym.reps, rng)) >= 3      # the chunk, the dropped transfer, the route


@pytest.mark.parametrize("block", [1, 7, 1 << 22])
@pytest.mark.parametrize("method", ["fingerprint", "exact"])
def test_fingerprints_on_the_orbits(monkeypatch, block, method):
    """Fingerprints and exact sets on the orbits reject a dropped transfer and a lost reduction,
    with the deliveries' indices computed at once or in blocks of a few (each step then alone)."""
    system = Hierarchical(nodes=32, dimensions="switch:8,switch:4")
    sym = build_symmetric("hier-allreduce", system, "allreduce", 32 * 64, units=2)
    monkeypatch.setattr(orbits, "_FORCE_METHOD", method)
    monkeypatch.setattr(orbits, "_BLOCK_DELIVERIES", block)
    assert verify(sym).data_flow == ("orbits, fingerprint" if method == "fingerprint" else "orbits")
    dropped = SymmetricSchedule(sym.reps.take(np.arange(1, len(sym.reps))), sym.group, sym.interleaved)
    with pytest.raises(VerificationError):
        verify(dropped)
    flipped = sym.reps.reduce.copy()
    flipped[flipped.argmax()] = False       # a reduction turned into a copy: contributions lost
    with pytest.raises(VerificationError):
        verify(SymmetricSchedule(sym.reps.replace(reduce=flipped), sym.group, sym.interleaved))


@pytest.mark.parametrize("dims", ["switch:8,switch:4", "ring:4,fat-tree:8", "switch:2,ring:3,line:2"])
def test_the_quotient_routes_from_a_table_of_every_link_equal_those_computed_entry_by_entry(dims):
    """Where the routes hold more entries than the system has links, each link's representative is
    looked up in a table computed once: the same routes as computing every entry's."""
    from collsim.core.symmetry import quotient_routes
    from collsim.kinds.hierarchical import symmetry as hs
    system = Hierarchical(nodes=int(np.prod([int(d.split(":")[1]) for d in dims.split(",")])), dimensions=dims)
    sym = build_symmetric("hier-allreduce", system, "allreduce", 4096 * system.nodes, pieces=4)
    reps = sym.reps
    def rep(links):
        return hs.orbit_representatives(system, sym.group, links)
    links = len(system.links.src)
    assert len(reps.routes.route_links) > links   # the table is used
    a = quotient_routes(reps.routes, rep, links).route_links
    b = quotient_routes(reps.routes, rep).route_links
    assert a.dtype == b.dtype and np.array_equal(a, b)
    assert np.array_equal(rep(a), a)     # a representative is its orbit's own


def test_compare_switches_to_orbits_with_the_same_rows(monkeypatch):
    kw = dict(dims="switch:4:300GB/s,fat-tree:16:50GB/s")
    algs = "hier-allreduce,md-ring,rabenseifner,ring"
    rows_full, _ = compare("hierarchical", "allreduce", 64 * 64, algorithms=algs, **kw)
    monkeypatch.setattr(pipeline, "SYMMETRIC_ABOVE_TRANSFERS", 1)
    monkeypatch.setattr(pipeline, "REPEATED_ABOVE_TRANSFERS", 1)
    built, repeated = [], []
    real, real_repeated = pipeline.build_symmetric, pipeline.build_repeated
    monkeypatch.setattr(pipeline, "build_symmetric", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(pipeline, "build_repeated", lambda *a, **k: repeated.append(a[0]) or real_repeated(*a, **k))
    rows_sym, _ = compare("hierarchical", "allreduce", 64 * 64, algorithms=algs, **kw)
    assert {getattr(s, "name", s) for s in built} == {"hier-allreduce", "rabenseifner"}   # XOR: 64 = 2^6
    # the ring's data flow under all 64 rotations, md-ring's under the coordinates' translations, which the
    # fat tree lacks: their steps repeat (collsim.core.repeated), and their times agree to rounding
    assert {getattr(s, "name", s) for s in repeated} == {"md-ring", "ring"}
    assert [r.algorithm for r in rows_full] == [r.algorithm for r in rows_sym]
    for a, b in zip(rows_full, rows_sym):
        assert a.to_json() == b.to_json() if a.algorithm not in ("md-ring", "ring") else rows_alike(b, a) is None


@settings(max_examples=40, deadline=None)
@given(system=_systems(), coll=st.sampled_from(["allreduce", "allgather", "alltoall"]), ring=st.booleans(),
       pick=st.integers(0, 50))
def test_the_domain_s_moves_are_every_node_s_moves_into_the_domain(system, coll, ring, pick):
    """stage_moves with the group starts from the domain's holdings alone; round by round its moves
    are exactly those of every node's whose destination is in the domain (as multisets), and the
    rounds' costs (the busiest node's sends and receives) are the same."""
    from collsim.algorithms.hier_stages import round_costs, stage_moves, templates
    from collsim.core.collective import collective_type
    group = symmetry.translation_group(system, cyclic=ring)
    if group is None:
        return
    ct = collective_type(coll)
    temps = templates(system, ct, "all", ring)
    t = temps[pick % len(temps)]
    full, reps = stage_moves(system, ct, t), stage_moves(system, ct, t, group)
    domain = np.zeros(system.nodes, bool)
    domain[group.domain()] = True
    assert [len(r) for r in full] == [len(r) for r in reps]
    for whole, mine in zip(full, reps):
        for (s1, d1, b1, red1), (s2, d2, b2, red2) in zip(whole, mine):
            keep = domain[d1]
            assert red1 == red2 and domain[d2].all()
            assert sorted(zip(s1[keep].tolist(), d1[keep].tolist(), b1[keep].tolist())) == \
                sorted(zip(s2.tolist(), d2.tolist(), b2.tolist()))
    assert round_costs(system, ct, t, full) == round_costs(system, ct, t, reps, group)


def test_compare_checks_a_symmetric_algorithm_s_share_of_deliveries(monkeypatch):
    """compare refuses up front what cannot fit, but an algorithm built on its orbits needs a
    1 / order share of its deliveries (hier-allreduce on 8 boxes of 4: 64 per element of 4 GPU
    translations); built in full, the whole count is checked."""
    from collsim.algorithms import get_algorithm
    from collsim.algorithms.hier_lanes import lane_deliveries
    from collsim.algorithms.placement import check_fits
    from collsim.core import limits
    from collsim.core.collective import BYTES_PER_DELIVERY, collective_type
    system = Hierarchical(nodes=32, dimensions="switch:4,fat-tree:8")
    spec, ar = get_algorithm("hier-allreduce"), collective_type("allreduce")
    group = symmetry.translation_group(system)
    assert group.order == 4
    made = lane_deliveries(system, ar, {})
    monkeypatch.setattr(limits, "memory_limit_bytes", lambda: made * BYTES_PER_DELIVERY // 2)
    check_fits(spec, system, ar, {}, orbits=True)
    with pytest.raises(limits.MemoryLimitError, match=re.escape(f"({made:.3g} chunk deliveries)")):
        check_fits(spec, system, ar, {})
    # below the orbits' share too: refused on the orbits, the message naming the whole count and the share
    monkeypatch.setattr(limits, "memory_limit_bytes", lambda: made * BYTES_PER_DELIVERY // 8)
    with pytest.raises(limits.MemoryLimitError,
                       match=re.escape(f"({made:.3g} chunk deliveries, 1/4 of them: its orbits' share)")):
        check_fits(spec, system, ar, {}, orbits=True)


def test_what_a_large_group_would_need_is_refused_before_it_is_made(monkeypatch):
    """Routing every pair of a dimension's group, and the lanes' programme, are checked against the
    memory limit before they are made: with a symmetric system's orbits, a large ring dimension is
    reached (a ring of 8,192 boxes exhausted 23 GiB in the lanes' dense programme before this).
    Here a 1 MiB limit: a ring group of 64 members routes 64 x 1,024 links (one member's 63 routes
    cross 2 x (1 + ... + 31) + 32 of them; 3 MiB at 48 bytes a link), and 16 lanes of 140 rounds
    make a 310 x 171 programme (1.2 MiB, held three times)."""
    from collsim.algorithms.hier_lanes import plan_lanes
    from collsim.algorithms.hier_stages import dimension_rates
    from collsim.core import limits
    system = Hierarchical(nodes=512, dimensions="switch:8,ring:64")
    monkeypatch.setattr(limits, "memory_limit_bytes", lambda: 1 << 20)
    assert np.isnan(dimension_rates(system, {0})[1]) and dimension_rates(system, {0})[0] > 0   # the switch alone
    with pytest.raises(limits.MemoryLimitError, match="routing every pair of a ring group of 64 members"):
        dimension_rates(system, {1})
    costs = [[((0,), 1.0)] * 140]
    with pytest.raises(limits.MemoryLimitError, match="planning 16 lanes over 155 rounds"):
        plan_lanes(costs, 16, 2)


@pytest.mark.parametrize("name, coll", [("hier-allreduce", "allreduce"), ("hier-allgather", "allgather"),
                                        ("md-ring", "allreduce"), ("md-ring", "allgather")])
def test_boxes_on_a_full_fat_tree_are_symmetric_under_its_pods_edges_and_ports(name, coll):
    """2 boxes of 4 on a k = 4 fat tree (16 hosts): the direct stages keep the group of 64 (regular);
    md-ring's ring stages only the boxes' coordinate (the fat tree's digits fixed: order 4)."""
    system = Hierarchical(nodes=64, dimensions="switch:4,fat-tree:16")
    size = 64 * 256 if coll == "allreduce" else 256
    sym = build_symmetric(name, system, coll, size, pieces=2)
    assert sym.group.order == (4 if name == "md-ring" else 64)
    assert sym.group.regular == (name != "md-ring")
    full = build(name, system, coll, size, pieces=2)
    assert len(sym.reps) * sym.group.order == len(full)
    assert _rows(sym.expand()) == _rows(full)
    a, b = verify(sym), verify(full)
    assert a.data_flow == "orbits" and (a.time_s, a.transfers) == (b.time_s, b.transfers)
    assert evaluate(sym, report=a).to_json() == evaluate(full, report=b).to_json()
    quotient_is_expansion(sym, symmetry)


@settings(max_examples=20, deadline=None)
@given(system=_systems(), coll=st.sampled_from(["allreduce", "allgather", "reducescatter"]), seed=st.integers(0, 2**32 - 1))
def test_ring_under_the_rotations_of_the_leading_coordinate_is_its_full_build(system, coll, seed):
    """The ring's rotations by multiples of D = N / n_1 where the system's group translates its
    leading digit n_1 (the last dimension, or a fat tree's pods): the schedule built as its
    transfers into nodes 0..D-1 is the full build, verifies and simulates alike, and its mutants
    fail alike.  Where the leading dimension does not move (a line), the ring is built in full."""
    from collsim.algorithms.ring import rotations
    full_group = symmetry.translation_group(system)
    group = rotations(system)
    if full_group is None or not full_group.moving[0]:
        assert group is None
        return
    ring_is_its_full_build_under_rotations(system, full_group.radices[0], coll, seed, symmetry, _rows)


def test_ring_on_8192_gpus_is_refused_by_its_share_before_it_is_made(monkeypatch):
    """1,024 boxes of 8 on a k = 16 fat tree: 16 pods, so the ring's rotations by 512 (order 16) keep
    2 x 8,191 x 512 = 8,387,584 representatives of its 134 M transfers.  With a 64 MiB limit they are
    refused before any is made, with their count in the message."""
    from collsim.core import limits
    system = Hierarchical(nodes=8192, dimensions="switch:8,fat-tree:1024")
    monkeypatch.setattr(limits, "memory_limit_bytes", lambda: 64 << 20)
    with pytest.raises(limits.MemoryLimitError, match=r"8387584 transfers into 512 nodes, under 16 rotations"):
        build_symmetric("ring", system, "allreduce", 8192 * 64)


# --- XOR of the node ids' bits (binary_group): Rabenseifner's recursive halving and doubling
BINARY = {"switch": [2, 4, 8], "full": [2, 4], "line": [2], "fat-tree": [16]}
"""Dimensions XOR maps onto itself with their routes (powers of two; a full fat tree of k = 4)."""


@settings(max_examples=25, deadline=None)
@given(system=_systems(BINARY, 128), coll=st.sampled_from(["allreduce", "reducescatter"]), seed=st.integers(0, 2**32 - 1))
def test_rabenseifner_under_xor_is_its_full_build_and_mutants_fail_alike(system, coll, seed):
    group = symmetry.binary_group(system)
    assert group is not None and group.order == system.nodes and group.radices == (2,) * (system.nodes.bit_length() - 1)
    assert pipeline.model_for(system).accepts_group(system, group)
    acts_freely_on_links(system, group, symmetry)
    size = 64 * system.nodes
    sym, full = build_symmetric("rabenseifner", system, coll, size), build("rabenseifner", system, coll, size)
    assert sym.group == group
    is_its_full_build(sym, full, symmetry, seed, _rows)


@pytest.mark.parametrize("dims", ["ring:8,switch:4", "switch:3,switch:4", "switch:2,fat-tree:54", "line:4,switch:2"])
def test_no_xor_group_where_xor_breaks_a_link_or_a_route(dims):
    """A ring of 8 or a line of 4 (XOR of the low bit swaps 1 and 2's neighbours), three boxes, a fat
    tree of k = 6: no XOR group, and Rabenseifner is built in full."""
    n = int(np.prod([int(d.split(":")[1]) for d in dims.split(",")]))
    system = Hierarchical(nodes=n, dimensions=dims)
    assert symmetry.binary_group(system) is None
    assert pipeline.build_orbits("rabenseifner", system, "allreduce", 64 * n) is None


def test_synth_trees_plans_one_gpu_of_boxes_on_a_full_fat_tree():
    """128 GPUs in boxes of 8 on a full fat tree (k = 4): the kind's translation group, in closed form,
    lets synth-trees plan GPU 0's trees, verified on their orbits, at the cut bound's rate (measured
    0.9993 of the bound for 1 GiB of all-gather output; the pipeline's rounds cost the rest)."""
    from collsim.pipeline import build_compact
    system = Hierarchical(nodes=128, dimensions="switch:8,fat-tree:16")
    sym = build_compact("synth-trees", system, "allgather", 2**30 // 128)
    assert isinstance(sym, SymmetricSchedule) and sym.group.order == 128 and (sym.reps.dst == 0).all()
    row = evaluate(sym)
    assert row.verified and row.verification == "passed"
    assert 0.99 <= row.efficiency <= 1.0
