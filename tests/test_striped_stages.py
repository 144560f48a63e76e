"""Striped multi-stage schedules (issue #13): verified, slot counts, closed form, bound, mutations.

Golden numbers come from the formulas of docs/derivations/striped-stages.md, evaluated
here independently of the module's code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collsim import build, verify
from collsim.algorithms import get_algorithm
from collsim.algorithms.striped_stages import (arc_colours, choose_radices, ordered_factorisations, parse_radices,
                                               plan_stages, striped_stages_candidates, striped_stages_time_s)
from collsim.core.errors import (DoubleCountError, InputError, MissingDataError, PostconditionError,
                                 UnsupportedError, VerificationError)
from collsim.kinds.optical_ring.bound import optical_lower_bound_s
from collsim.core.collective import make_collective
from collsim.pipeline import run
from collsim.kinds.optical_ring import OpticalRing

COLLECTIVES = ("allgather", "reducescatter", "allreduce")
MODES = ("pipeline", "direct")


def expected_slots(n, f, w, radices, mode, collective):
    """Slots from the derivation: pipeline floor(r_j/2) rounds x ceil(d_j/(Fw)) sub-steps;
    direct one round x ceil(d_j C_j/(Fw)), C_j = sum_{t<=b_j} ceil(P_j/floor(P_j/t))."""
    total, prod = 0, 1
    for r in radices:
        prod *= r
        d = n // prod
        if mode == "pipeline":
            total += (r // 2) * max(1, -(-d // (f * w)))
        else:
            b = r - 1 - (r - 1) // 2
            c = d * sum(-(-prod // (prod // t)) for t in range(1, b + 1))
            total += max(1, -(-c // (f * w)))
    return 2 * total if collective == "allreduce" else total


def check(system, collective, size, radices, mode):
    """Build, verify and time one instance against the closed form and the slot formula."""
    r = run("striped-stages", system, collective, size, radices=radices, stage=mode)
    assert r.verified
    rad = parse_radices(system.nodes, radices)
    assert r.slots == expected_slots(system.nodes, system.fibers, system.wavelengths, rad, mode, collective)
    assert r.time_s == pytest.approx(striped_stages_time_s(system, collective, size, rad, mode), rel=1e-12)
    assert r.time_s >= r.lower_bound_s * (1 - 1e-12)
    return r


@pytest.mark.parametrize("n,w,f", [(12, 4, 1), (16, 8, 2), (18, 3, 1), (24, 64, 1), (8, 1, 3)])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_every_factorisation_verifies_and_meets_its_closed_form(n, w, f, mode, collective):
    system = OpticalRing(nodes=n, wavelengths=w, fibers=f, slot_latency_s=2e-6)
    for rad in ordered_factorisations(n, 3):
        for size in (1, 100_003):
            check(system, collective, size, rad, mode)


@pytest.mark.parametrize("n", [2, 3, 5, 7, 11, 13, 31, 64])
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_single_stage_is_a_bidirectional_ring_with_half_the_slots(n, collective):
    """radices (N,): ceil((N-1)/2) slots, lightpaths one hop, one reconfiguration (two for
    reduce-scatter + all-gather would be 2, but the middle slots share their lightpaths)."""
    system = OpticalRing(nodes=n, wavelengths=8, fibers=2)
    r = check(system, collective, 4096 * 8, (n,), "pipeline")
    assert r.slots == (2 if collective == "allreduce" else 1) * -(-(n - 1) // 2)
    assert r.part.reconfigurations == 1 and r.part.feasible
    s = build("striped-stages", system, collective, 4096 * 8, radices=(n,))
    assert int(s.hops.max()) == 1


def test_bandwidth_term_equals_the_derivation_and_the_bound():
    """No latency terms (t_r = t_slot = t_oeo = 0), pieces whole packets: the time is
    N m/(2FwB) * sum_j e_j, e_j = (r_j-1)/r_j (stage 1, or r_j odd), 1 (r_j even, j >= 2)."""
    for f in (1, 2):
        system = OpticalRing(nodes=64, wavelengths=16, fibers=f, mrr_reconfig_s=0, oeo_cycles_per_flit=0)
        m = 1 << 20
        unit = 64 * m / (2 * f * 16 * system.bandwidth_bytes_per_s)
        for rad in [(64,), (16, 4), (4, 16), (8, 8), (2, 32), (4, 4, 4), (16, 2, 2)]:
            e = sum((r - 1) / r if (j == 0 or r % 2) else 1.0 for j, r in enumerate(rad))
            t = striped_stages_time_s(system, "allgather", m, rad)
            assert t == pytest.approx(unit * e, rel=1e-12), rad
        bound = optical_lower_bound_s(system, make_collective("allgather", 64, m))
        assert striped_stages_time_s(system, "allgather", m, (64,)) == pytest.approx(bound, rel=1e-12)
        assert striped_stages_time_s(system, "allgather", m, (8, 8)) > 1.5 * bound


def test_golden_times_at_the_papers_scale():
    """N=1024, w=64, 4 MiB all-gather; derivation in docs/derivations/striped-stages.md."""
    ring = OpticalRing(nodes=1024, wavelengths=64)
    # (1024,): 511 rounds of 4 MiB over 64 wavelengths, one of 2 MiB, one reconfiguration
    full = 4 * 2**20 / (64 * 5e9) + 2**17 / 64 * 1e-9
    half = 2 * 2**20 / (64 * 5e9) + 2**16 / 64 * 1e-9
    assert striped_stages_time_s(ring, "allgather", 4 * 2**20, (1024,)) == pytest.approx(
        511 * full + half + 25e-6, rel=1e-12)
    # (32, 32): stage 1 stride 32, band 2: 15 rounds of 4 MiB and one of 2 MiB; stage 2 stride 1,
    # band 64: 16 rounds of 128 MiB; three reconfigurations (two stages, stage 2's one-way tail)
    s1 = 15 * (4 * 2**20 / (2 * 5e9) + 2**17 / 2 * 1e-9) + (2 * 2**20 / (2 * 5e9) + 2**16 / 2 * 1e-9)
    s2 = 16 * (128 * 2**20 / (64 * 5e9) + 2**22 / 64 * 1e-9)
    assert striped_stages_time_s(ring, "allgather", 4 * 2**20, "32x32") == pytest.approx(
        s1 + s2 + 3 * 25e-6, rel=1e-12)
    slow = OpticalRing(nodes=1024, wavelengths=64, slot_latency_s=10e-6)
    assert striped_stages_time_s(slow, "allgather", 4 * 2**20, "32x32") == pytest.approx(
        s1 + s2 + 3 * 25e-6 + 32 * 10e-6, rel=1e-12)


def test_a_papers_scale_schedule_matches_its_closed_form():
    ring = OpticalRing(nodes=1024, wavelengths=64, slot_latency_s=10e-6)
    r = run("striped-stages", ring, "allgather", 32 * 1024, radices="32x32")
    assert r.verified and r.slots == 32 and r.part.reconfigurations == 3 and not r.part.feasible
    assert r.time_s == pytest.approx(striped_stages_time_s(ring, "allgather", 32 * 1024, "32x32"), rel=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_longest_lightpath(mode):
    ring = OpticalRing(nodes=60, wavelengths=16)
    for rad in [(4, 15), (5, 3, 4), (60,), (2, 30)]:
        s = build("striped-stages", ring, "allgather", 999, radices=rad, stage=mode)
        strides = [60 // math.prod(rad[:j + 1]) for j in range(len(rad))]
        ahead = [r - 1 - (r - 1) // 2 for r in rad]
        want = strides[0] if mode == "pipeline" else max(d * b for d, b in zip(strides, ahead))
        assert int(s.hops.max()) == want == plan_stages(ring, "allgather", 999, rad, mode).max_hops


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("mode", MODES)
def test_dropping_any_transfer_is_rejected(collective, mode):
    s = build("striped-stages", OpticalRing(nodes=12, wavelengths=4), collective, 1000, radices=(3, 4), stage=mode)
    verify(s)
    for i in np.linspace(0, len(s) - 1, 7).astype(int):
        with pytest.raises(VerificationError):
            verify(s.take(np.delete(np.arange(len(s)), i)))


def test_a_repeated_reduction_is_double_counted():
    s = build("striped-stages", OpticalRing(nodes=12, wavelengths=4), "reducescatter", 1000, radices=(4, 3))
    rows = np.arange(len(s))
    last = int(np.flatnonzero(s.step == s.step.max())[0])
    twice = s.take(np.append(rows, last), step=np.append(s.step, s.step.max() + 1))
    with pytest.raises(DoubleCountError):
        verify(twice)
    with pytest.raises((MissingDataError, PostconditionError)):
        verify(s.take(rows[s.step < s.step.max()]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rad=st.lists(st.integers(2, 6), min_size=1, max_size=3), w=st.integers(1, 16), f=st.integers(1, 2),
       mode=st.sampled_from(MODES), collective=st.sampled_from(COLLECTIVES), size=st.integers(1, 1 << 18),
       latency=st.sampled_from([0.0, 1e-6]))
def test_hypothesis_over_radices(rad, w, f, mode, collective, size, latency):
    n = math.prod(rad)  # >= 2: every radix is
    check(OpticalRing(nodes=n, wavelengths=w, fibers=f, slot_latency_s=latency), collective, size, tuple(rad), mode)


def test_transceiver_limits():
    roomy = OpticalRing(nodes=16, wavelengths=16, fibers=2, max_tx_channels=8, max_rx_channels=8)
    for mode in MODES:
        for c in COLLECTIVES:
            r = check(roomy, c, 5000, (4, 4), mode)
            assert r.verified
    tight = OpticalRing(nodes=16, wavelengths=16, max_tx_channels=1, max_rx_channels=1)
    for mode in MODES:
        verify(build("striped-stages", tight, "allreduce", 5000, radices=(4, 4), stage=mode))
        assert not plan_stages(tight, "allreduce", 5000, (4, 4), mode).exact
        with pytest.raises(UnsupportedError, match="transceiver"):
            striped_stages_time_s(tight, "allreduce", 5000, (4, 4), mode)


def test_reduce_scatter_reverses_the_all_gather():
    ring = OpticalRing(nodes=24, wavelengths=8, slot_latency_s=1e-6)
    for rad in [(4, 6), (6, 2, 2), (3, 8)]:
        ag, rs, ar = (run("striped-stages", ring, c, 4096, radices=rad) for c in COLLECTIVES)
        assert ag.slots == rs.slots and ag.part.reconfigurations == rs.part.reconfigurations
        assert ar.part.reconfigurations == 2 * ag.part.reconfigurations - 1   # the middle slots share lightpaths


def test_reconfigurations_per_stage_and_group():
    """N=24, w=2, F=1, radices (3, 8): stage 1 has stride 8 > Fw = 2, so its 8 classes run in
    4 groups of 2, each its own one-round pipeline (4 reconfigurations); stage 2 (stride 1,
    window [-3, 4]) pays one, and one more when its counter-clockwise tail starts."""
    ring = OpticalRing(nodes=24, wavelengths=2)
    r = check(ring, "allgather", 4096, (3, 8), "pipeline")
    assert r.slots == 4 + 4 and r.part.reconfigurations == 4 + 2
    d = check(ring, "allgather", 4096, (3, 8), "direct")      # every direct slot changes its lightpaths
    assert d.part.reconfigurations == d.slots == 4 + -(-1 * (1 + 2 + 3 + 4) // 2)


def test_default_radices_are_the_fastest_feasible_closed_form():
    for slot in (0.0, 10e-6):
        ring = OpticalRing(nodes=48, wavelengths=8, slot_latency_s=slot)
        for size in (1024, 1 << 20):
            best = choose_radices(ring, "allgather", size)
            times = {rad: striped_stages_time_s(ring, "allgather", size, rad) for rad in ordered_factorisations(48, 4)
                     if 48 // rad[0] <= 25}
            assert striped_stages_time_s(ring, "allgather", size, best) == pytest.approx(min(times.values()))
            s = build("striped-stages", ring, "allgather", size)
            assert s.params["radices"] == "x".join(map(str, best))


def test_tune_hook_offers_both_modes_and_they_verify():
    ring = OpticalRing(nodes=36, wavelengths=8)
    spec = get_algorithm("striped-stages")
    cands = spec.candidates(ring, "allreduce", 10_000)
    assert 1 <= len(cands) <= 12 and {c["stage"] for c in cands} == set(MODES)
    assert cands == striped_stages_candidates(ring, "allreduce", 10_000)
    for c in cands:
        assert math.prod(c["radices"]) == 36 and len(c["radices"]) <= 3
        verify(build("striped-stages", ring, "allreduce", 10_000, **c))


def test_arc_colouring_is_proper_and_optimal_per_length():
    for p in (5, 10, 12, 17, 32):
        off, col, total = arc_colours(p, p // 2)
        for t in range(1, p // 2 + 1):
            k = -(-p // (p // t))
            assert col[t - 1].max() + 1 == k and (t > 1 or k == 1)
            for c in range(k):
                starts = np.flatnonzero(col[t - 1] == c)
                gaps = np.diff(np.append(starts, starts[0] + p))
                assert (gaps >= t).all()          # arcs of one colour do not overlap
        assert total == sum(-(-p // (p // t)) for t in range(1, p // 2 + 1))


def test_bad_input_and_registration():
    ring = OpticalRing(nodes=12, wavelengths=4)
    for bad in ("5x2", (1, 12), "x", (2.5, 4.8), (0, 12)):
        with pytest.raises(InputError):
            build("striped-stages", ring, "allgather", 100, radices=bad)
    with pytest.raises(InputError, match="stage"):
        build("striped-stages", ring, "allgather", 100, stage="ring")
    assert parse_radices(12, "3x4") == parse_radices(12, (3, 4)) == parse_radices(12, "3,4") == (3, 4)
    spec = get_algorithm("striped-stages")
    assert spec.params == ("radices", "stage") and spec.collectives == COLLECTIVES
    assert {"OpTree24", "Patarasuk09", "Bruck97"} <= {c.key for c in spec.citations}
