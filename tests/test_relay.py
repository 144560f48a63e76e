"""Hop-bounded (relayed) variants of OSM, OpTree and WRHT (issue #13): verified, feasible, slot formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim import build, verify
from collsim.algorithms import build_logical, get_algorithm
from collsim.algorithms.relay import default_max_hops, relay_logical
from collsim.core.errors import InputError, UnsupportedError, VerificationError
from collsim.kinds.optical_ring.cost import step_times
from collsim.kinds.optical_ring.physical import PhysicalParams, max_feasible_hops
from collsim.pipeline import run
from collsim.kinds.optical_ring import OpticalRing
from conftest import raises_naming

BASES = [("osm", "allgather"), ("osm", "alltoall"), ("osm", "broadcast"), ("optree", "allgather"),
         ("wrht", "allgather")]


def step_max_hops(s) -> np.ndarray:
    """Longest lightpath of every slot of a realised schedule."""
    out = np.zeros(s.num_steps, np.int64)
    np.maximum.at(out, s.step, s.hops)
    return out


def expected_slots(base, h: int) -> list[tuple[int, int, int]]:
    """Per base round: (A, B, busy index) of docs/derivations/hop-bounded.md, written with plain loops.

    A = sum over the round's slots of ceil(h_s / H) (segments on their parent's channel);
    B = sum over sub-rounds j of the larger direction's ceil(colours / cap), colours = sum over start
    classes of the most segments starting at one position of the class (the packed layout).
    """
    n, w, f = base.system.nodes, base.system.wavelengths, base.system.fibers
    out = []
    for r in range(base.num_rounds):
        rows = np.flatnonzero(base.round == r)
        a = sum(-(-int(base.hops[rows][base.step[rows] == st].max()) // h) for st in np.unique(base.step[rows]))
        segs: dict = {}
        for t in rows.tolist():
            hops, d, src, band = int(base.hops[t]), int(base.direction[t]), int(base.src[t]), int(base.band[t])
            k = -(-hops // h)
            for j in range(k):
                lo, hi = j * hops // k, (j + 1) * hops // k
                pos = (src + lo) % n if d > 0 else (-(src - lo)) % n
                segs.setdefault((j, d), []).append((pos, hi - lo, band))
        b = 0
        for j in range(max(j for j, _ in segs) + 1):
            need = 0
            for d in (1, -1):
                arcs = segs.get((j, d), [])
                if not arcs:
                    continue
                longest, width = max(x[1] for x in arcs), max(x[2] for x in arcs)
                per = n // longest
                bases = [i * n // per for i in range(per)] if per else []
                starts: dict = {}
                for pos, _, _ in arcs:
                    starts[pos] = starts.get(pos, 0) + 1
                classes: dict = {}
                for pos, cnt in starts.items():
                    cls = pos - max(x for x in bases if x <= pos) if per else pos
                    classes[cls] = max(classes.get(cls, 0), cnt)
                need = max(need, -(-sum(classes.values()) // (f * (w // width))))
            b += need
        out.append((a, b))
    return out


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(BASES), n=st.one_of(st.integers(2, 70), st.sampled_from([2, 3, 5, 7, 31, 64])),
       w=st.integers(1, 16), f=st.integers(1, 2), h=st.integers(1, 30), size=st.integers(1, 1 << 20))
def test_relayed_schedules_verify_respect_the_bound_and_count_slots(case, n, w, f, h, size):
    base, collective = case
    system = OpticalRing(nodes=n, wavelengths=w, fibers=f)
    original = build(base, system, collective, size)
    relayed = build("relay", system, collective, size, base=base, max_hops=h)
    report = verify(relayed)
    assert report.max_hops <= h and (relayed.hops <= h).all()
    # docs/derivations/hop-bounded.md: every base round takes min(A, B) slots
    per_round = expected_slots(original, h)
    assert report.steps == sum(min(a, b) for a, b in per_round)
    # never more than relaying slot by slot, never fewer than the longest chain of every round
    assert report.steps <= int(sum(-(-x // h) for x in step_max_hops(original).tolist()))
    for r in range(original.num_rounds):
        assert min(per_round[r]) >= -(-int(original.hops[original.round == r].max()) // h)
    # the relay moves each base transfer over exactly its own arc: as many link crossings as before
    assert int(relayed.hops.sum()) == int(original.hops.sum())
    assert set(relayed.band.tolist()) <= set(original.band.tolist())
    # time: a slot is at most as busy as the busiest slot of its base round, and reconfigures at most once
    base_t = step_times(original)
    busy = base_t.step_time_s - base_t.reconfigured * system.mrr_reconfig_s - system.slot_latency_s
    most = [float(busy[np.unique(original.step[original.round == r])].max()) for r in range(original.num_rounds)]
    bound = sum(min(a, b) * (m + system.mrr_reconfig_s + system.slot_latency_s) for (a, b), m in zip(per_round, most))
    assert step_times(relayed).total_s <= bound * (1 + 1e-12)
    if h >= original.hops.max():                    # nothing to relay: never more slots than the base
        assert report.steps <= original.num_steps and len(relayed) == len(original)


@pytest.mark.parametrize("base", ["osm", "optree", "wrht"])
def test_default_bound_is_the_physical_layer_and_makes_long_rings_feasible(base):
    system = OpticalRing(nodes=96, wavelengths=8)
    assert default_max_hops(system) == max_feasible_hops(PhysicalParams()) == 25
    original = run(base, system, "allgather", 4096)
    relayed = run("relay", system, "allgather", 4096, base=base)
    assert relayed.verified and relayed.part.feasible and relayed.params["max_hops"] == 25
    assert relayed.part.max_feasible_hops == 25
    assert not original.part.feasible             # 96 nodes: some lightpath of the base is > 25 hops
    assert relayed.time_s >= original.time_s        # sub-round 0 of every slot is as busy as the slot


def test_a_stricter_physical_layer_lowers_the_default():
    weak = PhysicalParams(laser_power_dbm=PhysicalParams().laser_power_dbm - 3.0)
    system = OpticalRing(nodes=64, wavelengths=4, physical=weak)
    h = max_feasible_hops(weak)
    assert 1 <= h < 25
    s = build("relay", system, "allgather", 1000)
    assert verify(s).max_hops <= h and s.params["max_hops"] == h and s.params["base"] == "optree"


def test_no_feasible_hop_is_refused():
    system = OpticalRing(nodes=8, physical=PhysicalParams(laser_power_dbm=-30.0))
    with pytest.raises(UnsupportedError, match="no lightpath is feasible"):
        build("relay", system, "allgather", 1000)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "5"])
def test_bad_max_hops(bad):
    with pytest.raises(InputError, match="max_hops"):
        build("relay", OpticalRing(nodes=8), "allgather", 1000, max_hops=bad)


@pytest.mark.parametrize("collective", ["reducescatter", "allreduce", "reduce"])
def test_reductions_are_refused(collective):
    system = OpticalRing(nodes=12, wavelengths=2)
    logical, _ = build_logical("osm", system, collective, 1200)
    with pytest.raises(UnsupportedError, match="overwrites"):
        relay_logical(system, logical, 2)
    with pytest.raises(UnsupportedError):
        build("relay", system, collective, 1200)


def test_segments_are_balanced_and_keep_their_direction():
    system = OpticalRing(nodes=40, wavelengths=4, fibers=2)
    s = build("relay", system, "alltoall", 100, max_hops=7)
    verify(s)
    # a 20-hop lightpath becomes 3 segments of 6, 7, 7 hops (balanced), not 7, 7, 6
    assert set(np.unique(s.hops).tolist()) <= set(range(1, 8))
    blocks = s.chunk_idx[s.chunk_ptr[:-1]]          # one block per transfer in OSM's all-to-all
    a, b = blocks // 40, blocks % 40
    for blk in np.unique(blocks)[:200]:
        rows = np.flatnonzero(blocks == blk)
        assert len(set(s.direction[rows].tolist())) == 1          # one direction along the chain
        hops = s.hops[rows]
        assert hops.max() - hops.min() <= 1
        assert int(s.src[rows[0]]) == a[rows[0]] and int(s.dst[rows[-1]]) == b[rows[0]]
        assert (np.diff(s.step[rows]) >= 1).all()                 # a relay forwards in a later slot
        assert (s.src[rows[1:]] == s.dst[rows[:-1]]).all()        # ... what it received


def test_packing_beats_relaying_slot_by_slot():
    # OSM's one round fills 2048 slots at N = 1024; here 16: relayed slot by slot, each of them would take
    # ceil(h_s / 5) slots, packed afresh the round takes about its link load over the channels instead
    system = OpticalRing(nodes=64, wavelengths=8)
    original = build("osm", system, "allgather", 1000)
    relayed = build("relay", system, "allgather", 1000, base="osm", max_hops=5)
    per_slot = int(sum(-(-x // 5) for x in step_max_hops(original).tolist()))
    assert verify(relayed).steps < per_slot // 2
    (a, b), = expected_slots(original, 5)
    assert a == per_slot and relayed.num_steps == b < a


def test_dropping_a_first_segment_starves_the_relay():
    s = build("relay", OpticalRing(nodes=30, wavelengths=4), "allgather", 1000, max_hops=4)
    first = int(np.flatnonzero(s.hops == 4)[0])      # a segment whose chain continues
    with pytest.raises(VerificationError):
        verify(s.take(np.delete(np.arange(len(s)), first)))


def test_registration_and_tune_hook():
    system = OpticalRing(nodes=64, wavelengths=8)
    spec = get_algorithm("relay")
    assert get_algorithm("hop-bounded") is spec and spec.systems == ("optical-ring",)
    assert spec.collectives == ("allgather", "alltoall", "broadcast")
    assert {"base", "max_hops"} <= set(spec.params) and spec.parameters()["max_hops"] is None
    assert {"Chlamtac92", "OpTree24", "WRHT23"} <= {c.key for c in spec.citations}
    cands = spec.candidates(system, "allgather", 4096)
    assert {c["base"] for c in cands} == {"optree", "wrht", "osm"} and all(c["max_hops"] == 25 for c in cands)
    assert len({tuple(sorted((k, str(v)) for k, v in c.items())) for c in cands}) == len(cands)
    assert {2, 3, 4} <= {c.get("k") for c in cands if c["base"] == "optree"}
    assert {c["base"] for c in spec.candidates(system, "alltoall", 4096)} == {"osm"}
    for c in cands[:4]:                              # every candidate builds and stays within the bound
        assert verify(build("relay", system, "allgather", 4096, **c)).max_hops <= 25


def test_base_defaults_and_parameter_checks():
    system = OpticalRing(nodes=40, wavelengths=4)
    assert build("relay", system, "allgather", 100).params["base"] == "optree"
    assert build("relay", system, "alltoall", 100).params["base"] == "osm"
    assert build("relay", system, "allgather", 100, base="wrht", m=5).params["m"] == 5
    with pytest.raises(InputError, match="base=osm takes no parameter"):
        build("relay", system, "allgather", 100, base="osm", k=2)
    with pytest.raises(InputError, match="unknown base"):
        build("relay", system, "allgather", 100, base="ring")
    with pytest.raises(UnsupportedError, match="cannot relay optree for alltoall"):
        build("relay", system, "alltoall", 100, base="optree")


def test_any_non_reducing_schedule_with_mixed_bands():
    from collsim.core.schedule import LogicalBuilder
    from collsim.pipeline import realize

    system = OpticalRing(nodes=30, wavelengths=7, fibers=2)
    shift, _ = build_logical("direct", system, "shift", 1000, shift=13)
    i = np.arange(30)
    b = LogicalBuilder(shift.collective)            # every node shifts its block 13 hops, bands of 2 and 3
    b.add(0, i, (i + 13) % 30, i[:, None], direction=1, band=np.where(i % 2, 3, 2))
    logical = b.build()
    for h in (1, 4, 5, 13):
        s = realize(system, relay_logical(system, logical, h))
        report = verify(s)
        assert report.max_hops <= h and sorted(set(s.band.tolist())) == [2, 3]


def test_relaying_more_segments_than_memory_allows_is_refused_before_they_exist(monkeypatch):
    """OSM on 64 nodes has 4032 lightpaths of up to 32 hops; at max_hops=1 each becomes one segment per hop."""
    from collsim.core.limits import ENV_VAR, MemoryLimitError
    from collsim.pipeline import build as build_schedule
    from collsim.systems import load_system
    monkeypatch.setenv(ENV_VAR, "1MiB")
    with raises_naming(MemoryLimitError, "4032 lightpaths", "64 nodes", "1 MiB"):   # the work, and the limit
        build_schedule("relay", load_system("paper", nodes=64, wavelengths=64), "allgather", 1024, base="osm",
                       max_hops=1)


def test_optree_offers_other_depths_only_where_one_could_be_feasible():
    """Every OpTree's stage 1 spans about N/2 hops: beyond twice the physical reach only the search's tree."""
    from collsim.algorithms import get_algorithm
    from collsim.systems import load_system
    spec = get_algorithm("optree")
    assert spec.candidates(load_system("paper", nodes=1024), "allgather", 1024) == [{}]
    small = spec.candidates(load_system("paper", nodes=32), "allgather", 1024)
    assert small == [{"k": k} for k in range(1, len(small) + 1)] and len(small) >= 4
