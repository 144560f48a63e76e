"""Textbook (seed 002) and MPI-classic algorithms: build, verify, step counts, α–β == simulator.

The chapter's cost model is ``t_s + t_w m`` per uncongested message with no
per-hop term, so the simulator runs with ``startup_s = t_s`` and
``link_latency_s = 0``; on the uncongested configurations the simulated time
must equal each algorithm's ``alpha_beta`` closed form exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collsim
from collsim.algorithms import get_algorithm
from collsim.core.errors import InputError, UnsupportedError
from collsim.sim import simulate
from collsim.kinds.network.electrical import Line, Ring, Star
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.hypercube import Hypercube
from collsim.kinds.network.mesh_torus import Mesh, Torus

from collsim.algorithms.bruck import alltoall_blocks_per_round
from collsim.algorithms.common import halving_rounds
from collsim.algorithms.textbook_mesh import shift_rounds
from collsim.core.collective import collective_type


NEW = ("recursive-doubling", "bruck", "pairwise", "binomial", "ring-personalized", "ring-shift", "direct",
       "hypercube-personalized", "mesh", "rabenseifner")
TS, BW = 3e-6, 2e9  # t_s = 3 us, t_w = 0.5 ns per byte
NET = dict(startup_s=TS, link_latency_s=0.0, link_bandwidth_bytes_per_s=BW)


def _pow2(n):
    return n & (n - 1) == 0


def _log2(n):
    return (n - 1).bit_length()


# --- systems -------------------------------------------------------------------------------
def _generic_systems():
    """(label, system) for every node count used by the any-network algorithms."""
    out = []
    for n in (2, 3, 5, 6, 7, 8, 12, 16):
        out += [(f"ring{n}", Ring(nodes=n)), (f"star{n}", Star(nodes=n))]
    out += [("line6", Line(nodes=6)), ("ring-uni5", Ring(nodes=5, bidirectional=False))]
    out += [(f"hcube{n}", Hypercube(nodes=n)) for n in (2, 4, 8, 16)]
    out += [("mesh3x3", Mesh.from_dims((3, 3))), ("mesh2x4", Mesh.from_dims((2, 4))),
            ("torus4x4", Torus.from_dims((4, 4)))]
    out += [("fattree16", FatTree(nodes=16, k=4)), ("leafspine8", FatTree(nodes=8, k=4, levels=2)),
            ("fattree13", FatTree(nodes=13, k=4))]
    return out


SYSTEMS = _generic_systems()
GENERIC = [(name, coll) for name in NEW if name != "mesh" for coll in get_algorithm(name).collectives]


def _params(name, coll, n):
    """Parameter sets worth trying for one instance."""
    if coll in ("broadcast", "reduce", "scatter", "gather"):
        return [{"root": r} for r in sorted({0, n - 1, n // 2, 1 % n})]
    if coll == "shift":
        return [{"shift": q} for q in sorted({1, n - 1, n // 2 or 1, (n + 1) // 2})]
    if name == "pairwise":
        rng = np.random.default_rng(n)
        out = [{}, {"mapping": tuple(int(x) for x in rng.permutation(n))}]
        return out + ([{"exchange": "xor"}] if _pow2(n) else [])
    return [{}]


def _unsupported_reason(name, coll, system):
    spec = get_algorithm(name)
    return spec.requires(system, collective_type(coll)) if spec.requires else None


@pytest.mark.parametrize("name,coll", GENERIC)
def test_builds_and_verifies_or_refuses_with_reason(name, coll):
    for label, system in SYSTEMS:
        n = system.nodes
        reason = _unsupported_reason(name, coll, system)
        for params in _params(name, coll, n):
            if reason:
                with pytest.raises(UnsupportedError, match="power-of-two"):
                    collsim.build(name, system, coll, 4096, **params)
                continue
            sched = collsim.build(name, system, coll, 4096, **params)
            report = collsim.verify(sched)
            assert report.transfers >= 1, (label, params)


@pytest.mark.parametrize("coll", get_algorithm("mesh").collectives)
def test_mesh_builds_and_verifies_on_square_grids(coll):
    for a in (2, 3, 4, 5):
        for grid in (Mesh, Torus):
            system = grid.from_dims((a, a))
            p = a * a
            for params in _params("mesh", coll, p) if coll != "shift" else [{"shift": q} for q in range(1, p)]:
                collsim.verify(collsim.build("mesh", system, coll, 4 * p, **params))


def test_mesh_refuses_other_topologies_with_the_reason():
    bad = [(Ring(nodes=16), "2-D mesh or torus"), (Star(nodes=9), "2-D mesh or torus"),
           (Mesh.from_dims((2, 8)), "square"), (Mesh.from_dims((2, 2, 2)), "2-D mesh or torus")]
    bad.append((Hypercube(nodes=16), "2-D mesh or torus"))
    for system, why in bad:
        with pytest.raises(UnsupportedError, match=why):
            collsim.build("mesh", system, "broadcast", 1024)


@pytest.mark.parametrize("name,coll", [("recursive-doubling", "allgather"), ("hypercube-personalized", "alltoall")])
def test_power_of_two_algorithms_refuse_other_counts(name, coll):
    for n in (3, 6, 12):
        with pytest.raises(UnsupportedError, match=f"power-of-two node count, got {n}"):
            collsim.build(name, Star(nodes=n), coll, 64)


def test_pairwise_xor_refuses_non_powers_of_two_and_bad_mappings():
    with pytest.raises(UnsupportedError, match="power-of-two node count, got 6"):
        collsim.build("pairwise", Star(nodes=6), "alltoall", 64, exchange="xor")
    with pytest.raises(InputError, match="permutation"):
        collsim.build("pairwise", Star(nodes=4), "alltoall", 64, mapping=(0, 1, 1, 2))
    with pytest.raises(InputError, match="unknown exchange"):
        collsim.build("pairwise", Star(nodes=4), "alltoall", 64, exchange="ring")
    with pytest.raises(InputError, match="shift q"):
        collsim.build("ring-shift", Ring(nodes=4), "shift", 64, shift=4)


def test_pairwise_mapping_places_ranks_on_nodes():
    mapping = (3, 0, 2, 1)
    s = collsim.build("pairwise", Star(nodes=4), "alltoall", 64, mapping=mapping)
    collsim.verify(s)
    assert s.params["mapping"] == mapping
    first = s.step == 0   # phase 1: rank r -> rank r+1, i.e. node mapping[r] -> mapping[r+1]
    assert sorted(zip(s.src[first].tolist(), s.dst[first].tolist())) == sorted(
        (mapping[r], mapping[(r + 1) % 4]) for r in range(4))


# --- step counts, derived by hand ----------------------------------------------------------
def _expected_rounds(name, coll, n, params):
    lg, flo = _log2(n), n.bit_length() - 1
    if name == "recursive-doubling":
        if coll == "allreduce":
            return flo + (0 if _pow2(n) else 2)   # fold, log p', unfold
        return lg                                 # allgather (2^d), bcast, reduce, scatter, gather, scan
    if name in ("bruck", "binomial"):
        return lg
    if name == "pairwise":
        return n - 1
    if name == "ring-personalized":
        return n - 1
    if name == "ring-shift":
        q = params["shift"]
        return min(q, n - q)
    if name == "direct":
        return 1
    if name == "hypercube-personalized":
        return lg
    if name == "rabenseifner":
        if coll == "reducescatter":  # recursive halving alone: log2 p rounds (p a power of two)
            return flo
        return 2 * flo + (0 if _pow2(n) else 2)
    raise AssertionError(name)


@pytest.mark.parametrize("name,coll", GENERIC)
def test_round_counts(name, coll):
    for n in (2, 3, 4, 5, 7, 8, 9, 16, 17, 32):
        system = Star(nodes=n)
        if _unsupported_reason(name, coll, system):
            continue
        for params in _params(name, coll, n):
            s = collsim.build(name, system, coll, 1024, **params)
            assert s.num_steps == s.num_rounds == _expected_rounds(name, coll, n, params), (n, params)


def test_mesh_round_counts():
    for a in (2, 3, 4, 5, 8):
        system = Mesh.from_dims((a, a))
        want = {"broadcast": 2 * _log2(a), "reduce": 2 * _log2(a), "scatter": 2 * _log2(a),
                "gather": 2 * _log2(a), "allgather": 2 * (a - 1), "reducescatter": 2 * (a - 1),
                "allreduce": 4 * (a - 1), "alltoall": 2 * (a - 1)}
        for coll, rounds in want.items():
            assert collsim.build("mesh", system, coll, 64).num_steps == rounds, (a, coll)
        for q in range(1, a * a):
            steps = collsim.build("mesh", system, "shift", 64, shift=q).num_steps
            assert steps == sum(shift_rounds(a, q)) <= a + 1   # the chapter's bound sqrt(p) + 1
    assert shift_rounds(4, 5) == (1, 1, 1)   # the chapter's figure: 5-shift on a 4 x 4 mesh


def test_message_sizes_follow_the_chapter():
    m = 1000
    # ring all-to-all personalized: step i (1-based) carries m (p - i)
    s = collsim.build("ring-personalized", Ring(nodes=6), "alltoall", m)
    assert [int(s.size_bytes[s.step == k].max()) for k in range(5)] == [m * (6 - i) for i in range(1, 6)]
    # hypercube all-to-all broadcast: message doubles; scatter: halves
    s = collsim.build("recursive-doubling", Star(nodes=8), "allgather", m)
    assert [int(s.size_bytes[s.step == k].max()) for k in range(3)] == [m, 2 * m, 4 * m]
    s = collsim.build("recursive-doubling", Star(nodes=8), "scatter", m, root=3)
    assert [int(s.size_bytes[s.step == k].max()) for k in range(3)] == [4 * m, 2 * m, m]
    # dimension exchange: m p / 2 every step
    s = collsim.build("hypercube-personalized", Star(nodes=16), "alltoall", m)
    assert set(s.size_bytes.tolist()) == {8 * m}
    # Bruck: 1, 2, 4, ..., and N - 2^k blocks in the last round
    s = collsim.build("bruck", Star(nodes=11), "allgather", m)
    assert [int(s.size_bytes[s.step == k].max()) for k in range(4)] == [m, 2 * m, 4 * m, 3 * m]
    assert alltoall_blocks_per_round(11) == [5, 5, 4, 3]
    # binomial scatter: the root sends m (N - 1) in total on any N
    s = collsim.build("binomial", Star(nodes=11), "scatter", m, root=4)
    assert int(s.size_bytes[s.src == 4].sum()) == 10 * m
    # mesh all-to-all broadcast: m, then m sqrt(p)
    s = collsim.build("mesh", Mesh.from_dims((3, 3)), "allgather", m)
    assert [int(s.size_bytes[s.step == k].max()) for k in range(4)] == [m, m, 3 * m, 3 * m]


def test_halving_tree_is_the_hypercube_procedure_for_powers_of_two():
    for d in range(1, 6):
        n = 1 << d
        for root in range(n):
            for i, (own, to, _, _) in enumerate(halving_rounds(n, root)):
                assert (to == own ^ (1 << (d - 1 - i))).all()   # GENERAL_ONE_TO_ALL_BC partners


# --- α–β closed forms against the flow simulator --------------------------------------------
def _sim_equals_closed_form(name, system, coll, m, **params):
    s = collsim.build(name, system, coll, m, **params)
    collsim.verify(s)
    closed = get_algorithm(name).alpha_beta(s.system, collective_type(coll), m, dict(s.params))
    assert s.max_link_load() == 1, (name, system.topology, coll, params)
    assert simulate(s).total_time_s == pytest.approx(closed, rel=1e-9), (name, system.topology, coll, m, params)
    return closed


@pytest.mark.parametrize("m", [1000, 1 << 16])
def test_hypercube_summary_table(m):
    """The chapter's summary table, every row, on a hypercube."""
    for p in (4, 8, 16, 32):
        h = Hypercube(nodes=p, **NET)
        ts, tw, lg = TS, 1 / BW, math.log2(p)
        rows = [("recursive-doubling", "broadcast", {"root": p - 3}, (ts + tw * m) * lg),
                ("recursive-doubling", "reduce", {"root": 1}, (ts + tw * m) * lg),
                ("recursive-doubling", "allgather", {}, ts * lg + tw * m * (p - 1)),
                ("recursive-doubling", "allreduce", {}, (ts + tw * m) * lg),
                ("recursive-doubling", "scatter", {"root": 2}, ts * lg + tw * m * (p - 1)),
                ("recursive-doubling", "gather", {"root": p - 1}, ts * lg + tw * m * (p - 1)),
                ("recursive-doubling", "scan", {}, (ts + tw * m) * lg),
                ("hypercube-personalized", "alltoall", {}, (ts + tw * m * p / 2) * lg),
                ("pairwise", "alltoall", {"exchange": "xor"}, (ts + tw * m) * (p - 1)),
                ("rabenseifner", "allreduce", {}, 2 * ts * lg + 2 * tw * (m * p) * (p - 1) / p),
                ("bruck", "allgather", {}, ts * lg + tw * m * (p - 1)),
                ("bruck", "alltoall", {}, ts * lg + tw * m * p / 2 * lg)]
        for name, coll, params, formula in rows:
            size = m * p if name == "rabenseifner" else m
            assert _sim_equals_closed_form(name, h, coll, size, **params) == pytest.approx(formula, rel=1e-12)
        for q in range(1, p):  # circular shift with E-cube routing: t_s + t_w m for every q
            closed = _sim_equals_closed_form("direct", h, "shift", m, shift=q)
            assert closed == pytest.approx(ts + tw * m, rel=1e-12)


@pytest.mark.parametrize("m", [1000, 1 << 16])
def test_ring_rows(m):
    """Ring (linear array) rows: broadcast, all-to-all broadcast, scatter, personalized, shift."""
    for p in (4, 5, 8, 11):
        ring = Ring(nodes=p, **NET)
        ts, tw, lg = TS, 1 / BW, _log2(p)
        assert _sim_equals_closed_form("recursive-doubling", ring, "broadcast", m) == pytest.approx(
            (ts + tw * m) * lg)
        assert _sim_equals_closed_form("recursive-doubling", ring, "reduce", m) == pytest.approx((ts + tw * m) * lg)
        assert _sim_equals_closed_form("recursive-doubling", ring, "scatter", m) == pytest.approx(
            ts * lg + tw * m * (p - 1))
        assert _sim_equals_closed_form("binomial", ring, "gather", m) == pytest.approx(ts * lg + tw * m * (p - 1))
        assert _sim_equals_closed_form("ring-personalized", ring, "alltoall", m) == pytest.approx(
            (ts + tw * m * p / 2) * (p - 1))
        for q in range(1, p):
            assert _sim_equals_closed_form("ring-shift", ring, "shift", m, shift=q) == pytest.approx(
                (ts + tw * m) * min(q, p - q))
        # all-to-all broadcast on a ring, (t_s + t_w m)(p-1), and the ML slides' ring all-reduce
        s = collsim.build("ring", ring, "allgather", m)
        assert simulate(s).total_time_s == pytest.approx((ts + tw * m) * (p - 1), rel=1e-9)
        s = collsim.build("ring", ring, "allreduce", m * p)
        assert simulate(s).total_time_s == pytest.approx(2 * (p - 1) * (ts + tw * m), rel=1e-9)
        if _pow2(p):  # the chapter's hypercube broadcast on a ring is the same tree (8-node figure)
            s = collsim.build("recursive-doubling", Line(nodes=p, **NET), "broadcast", m)
            assert simulate(s).total_time_s == pytest.approx((ts + tw * m) * lg, rel=1e-9)


@pytest.mark.parametrize("m", [1000, 1 << 14])
def test_mesh_rows(m):
    for a in (2, 3, 4, 5):
        p = a * a
        ts, tw = TS, 1 / BW
        for grid in (Mesh, Torus):
            g = grid.from_dims((a, a), **NET)
            lg = 2 * _log2(a)   # log p for a power-of-two side
            rows = [("broadcast", {"root": p - 1}, (ts + tw * m) * lg),
                    ("reduce", {"root": a + 1}, (ts + tw * m) * lg),
                    ("scatter", {"root": 0}, ts * lg + tw * m * (p - 1)),
                    ("gather", {"root": 0}, ts * lg + tw * m * (p - 1)),
                    ("allgather", {}, 2 * ts * (a - 1) + tw * m * (p - 1)),
                    ("reducescatter", {}, 2 * ts * (a - 1) + tw * m * (p - 1)),
                    ("alltoall", {}, (2 * ts + tw * m * p) * (a - 1))]
            for coll, params, formula in rows:
                assert _sim_equals_closed_form("mesh", g, coll, m, **params) == pytest.approx(formula, rel=1e-12)
            # all-reduce: all-to-all reduction + all-to-all broadcast of p blocks of m/p
            assert _sim_equals_closed_form("mesh", g, "allreduce", m * p) == pytest.approx(
                2 * (2 * ts * (a - 1) + tw * m * (p - 1)), rel=1e-12)
            for q in range(1, p):
                closed = _sim_equals_closed_form("mesh", g, "shift", m, shift=q)
                assert closed <= (ts + tw * m) * (a + 1) * (1 + 1e-12)   # the chapter's upper bound


def test_star_and_fat_tree_any_n_algorithms_are_congestion_free():
    """Shift-type patterns (pairwise, Bruck) and binomial trees load no link twice on a star or fat tree."""
    systems = [Star(nodes=7, **NET), Star(nodes=12, **NET), FatTree(nodes=16, k=4, **NET),
               FatTree(nodes=8, k=4, levels=2, **NET)]
    for system in systems:
        p, lg = system.nodes, _log2(system.nodes)
        for m in (1000, 1 << 16):
            tw = 1 / BW
            assert _sim_equals_closed_form("pairwise", system, "alltoall", m) == pytest.approx((TS + tw * m) * (p - 1))
            assert _sim_equals_closed_form("bruck", system, "allgather", m) == pytest.approx(TS * lg + tw * m * (p - 1))
            assert _sim_equals_closed_form("bruck", system, "alltoall", m) == pytest.approx(
                TS * lg + tw * m * sum(alltoall_blocks_per_round(p)))
            for coll in ("broadcast", "reduce"):
                assert _sim_equals_closed_form("binomial", system, coll, m, root=3) == pytest.approx(
                    (TS + tw * m) * lg)
            for coll in ("scatter", "gather"):
                assert _sim_equals_closed_form("binomial", system, coll, m, root=3) == pytest.approx(
                    TS * lg + tw * m * (p - 1))


def test_congestion_where_the_chapter_says_it_appears():
    m = 1 << 16
    # all-to-all personalized with a naive direct mapping on a ring and a mesh: each phase's
    # messages share links, so the simulator is slower than (t_s + t_w m)(p-1)
    for system in (Ring(nodes=8, **NET), Mesh.from_dims((4, 4), **NET)):
        p = system.nodes
        s = collsim.build("pairwise", system, "alltoall", m)
        collsim.verify(s)
        assert s.max_link_load() > 1
        closed = get_algorithm("pairwise").alpha_beta(system, collective_type("alltoall"), m, dict(s.params))
        assert simulate(s).total_time_s > 1.2 * closed
        assert closed == pytest.approx((TS + m / BW) * (p - 1))
    # the textbook's ring algorithm avoids it
    s = collsim.build("ring-personalized", Ring(nodes=8, **NET), "alltoall", m)
    assert s.max_link_load() == 1
    # a one-step q-shift on a ring loads a link with min(q, p-q) messages: t_s + t_w m q
    for q in (2, 3):
        s = collsim.build("direct", Ring(nodes=8, **NET), "shift", m, shift=q)
        assert s.max_link_load() == q
        assert simulate(s).total_time_s == pytest.approx(TS + q * m / BW, rel=1e-9)
    # recursive doubling on a line: exchanges at distance 2^i overlap (load 2^i)
    s = collsim.build("recursive-doubling", Line(nodes=8, **NET), "allgather", m)
    assert s.max_link_load() == 4
    assert simulate(s).total_time_s > get_algorithm("recursive-doubling").alpha_beta(
        s.system, s.collective.type, m, {})


# --- registry metadata --------------------------------------------------------------------
@pytest.mark.parametrize("name", NEW)
def test_registry_entries_are_complete(name):
    spec = get_algorithm(name)
    assert spec.reference and spec.summary and spec.constraints and spec.alpha_beta is not None
    assert "network" in spec.systems
    doc = spec.builder.__doc__
    assert "References" in doc and "Examples" in doc and ">>>" in doc and ".num_steps" in doc


def test_aliases():
    assert get_algorithm("rd").name == "recursive-doubling"
    assert get_algorithm("shift-exchange").name == "pairwise"


def test_ring_algorithms_also_verify_on_the_optical_ring():
    for n in (2, 5, 8, 13):
        ring = collsim.OpticalRing(nodes=n, wavelengths=2)
        collsim.verify(collsim.build("ring-personalized", ring, "alltoall", 4096))
        for q in range(1, n):
            collsim.verify(collsim.build("ring-shift", ring, "shift", 4096, shift=q))
            collsim.verify(collsim.build("direct", ring, "shift", 4096, shift=q))


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
@pytest.mark.parametrize("m", [1000, 4096])
def test_all_to_all_reduction_on_a_hypercube_matches_the_chapter(p, m):
    # seed 002: all-to-all reduction (the dual of all-to-all broadcast) on a hypercube costs
    # t_s log p + t_w m (p-1); collsim builds it as recursive halving (rabenseifner's first half)
    import math

    import collsim
    from collsim.algorithms import get_algorithm
    from collsim.sim import simulate
    from collsim.kinds.network.hypercube import Hypercube
    ts, bw = 2e-6, 1e9
    h = Hypercube(nodes=p, link_latency_s=0.0, startup_s=ts, link_bandwidth_bytes_per_s=bw)
    s = collsim.build("rabenseifner", h, "all-to-all-reduction", m)
    assert collsim.verify(s).steps == int(math.log2(p)) and s.max_link_load() == 1
    chapter = ts * math.log2(p) + (m / bw) * (p - 1)
    rs = collective_type("reducescatter")
    assert get_algorithm("rabenseifner").alpha_beta(h, rs, m, {}) == pytest.approx(chapter)
    assert simulate(s).total_time_s == pytest.approx(chapter, rel=1e-9)
