"""Golden numbers derived by hand (docs/derivations/) and the papers' closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from collsim import build, verify
from collsim.algorithms import get_algorithm
from collsim.kinds.optical_ring.cost import paper_time_s, step_times
from collsim.pipeline import lower_bound_s, schedule_time_s
from collsim.kinds.optical_ring.cost import transfer_time_s
from collsim.kinds.optical_ring.alltoall import uniform_alltoall_wavelengths
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing
from collsim.core.collective import collective_type


@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17, 64, 100])
def test_ring_allgather_takes_n_minus_1_steps(n):
    s = build("ring", OpticalRing(nodes=n, wavelengths=1), "allgather", 4096)
    assert verify(s).steps == n - 1
    assert s.wavelengths_used() == 1


@pytest.mark.parametrize("n", [2, 4, 6, 16, 64, 100])
def test_ne_allgather_takes_n_over_2_steps(n):
    s = build("ne", OpticalRing(nodes=n, wavelengths=1), "allgather", 4096)
    assert verify(s).steps == n // 2
    # every step but the first carries two blocks (2d), as seed 004 §IV-A.2 says
    assert (s.size_bytes[s.step == 0] == 4096).all()
    assert (s.size_bytes[s.step > 0] == 8192).all()


@pytest.mark.parametrize("n", range(3, 65))
def test_one_hop_alltoall_uses_the_optimal_wavelength_count(n):
    # Opatrny's optimum per direction: ceil(floor(N^2/4)/2); with enough wavelengths the
    # one-stage round fits in one step and uses exactly that many wavelengths.
    expected = math.ceil((n * n // 4) / 2)
    assert uniform_alltoall_wavelengths(n) == expected
    s = build("osm", OpticalRing(nodes=n, wavelengths=expected), "alltoall", 64)
    report = verify(s)
    assert report.steps == 1 and report.wavelengths_used == expected


@pytest.mark.parametrize("n,w,f", [(16, 2, 1), (64, 8, 1), (64, 8, 2), (100, 3, 2), (1024, 64, 1)])
def test_osm_steps_come_from_the_assignment(n, w, f):
    s = build("osm", OpticalRing(nodes=n, wavelengths=w, fibers=f), "allgather", 64)
    assert s.num_steps == math.ceil(uniform_alltoall_wavelengths(n) / (w * f))


def test_osm_table1_value_is_inconsistent_with_its_formula():
    # Seed 004 Table 1 prints 128 steps for OSM at N=1024, w=64, but its own formula
    # ceil(N^2/(8w)) gives 2048 (docs/papers/optree-table1.md).  collsim's explicit
    # schedule needs 2048 steps too: 131072 wavelengths per direction / 64.
    printed_in_paper = 128
    system = OpticalRing(nodes=1024, wavelengths=64)
    formula = get_algorithm("osm").paper_steps(system, collective_type("allgather"), {})
    assert formula == 2048 != printed_in_paper
    assert math.ceil(uniform_alltoall_wavelengths(1024) / 64) == formula


def test_motivation_example_one_stage():
    # Seed 004 §III-C: N=16, w=2, one-stage routing needs ceil(16^2/8) = 32 wavelengths and
    # 16 steps; the explicit optimal assignment agrees.
    s = build("osm", OpticalRing(nodes=16, wavelengths=2), "allgather", 64)
    assert verify(s).steps == 16


def test_paper_presets_match_the_papers_setup():
    paper = load_system("paper")
    assert (paper.nodes, paper.wavelengths, paper.fibers) == (1024, 64, 1)
    assert paper.bandwidth_bytes_per_s == 40e9 / 8 and paper.mrr_reconfig_s == 25e-6
    assert (paper.flit_bytes, paper.packet_bytes, paper.oeo_cycles_per_flit) == (32, 128, 1.0)
    assert load_system("terarack").fibers == 2


def test_ring_time_model_by_hand():
    # Every ring step carries d on one wavelength and keeps the same lightpaths, so only the
    # first step reconfigures: T = (N-1) * (d/B + ceil(d/32) * 1ns) + 25us.
    n, d = 32, 4 * 1024 * 1024
    sysm = OpticalRing(nodes=n)
    s = build("ring", sysm, "allgather", d)
    per = d / 5e9 + (d // 32) * 1e-9
    assert schedule_time_s(s) == pytest.approx((n - 1) * per + 25e-6, rel=1e-12)
    st = step_times(s)
    assert st.reconfigured[0] and not st.reconfigured[1:].any()


def test_ne_time_model_by_hand():
    # NE alternates partners, so every step reconfigures; step 0 carries d, the rest 2d.
    n, d = 16, 1 << 20
    s = build("ne", OpticalRing(nodes=n), "allgather", d)
    t1 = d / 5e9 + (d // 32) * 1e-9
    expected = t1 + (n // 2 - 1) * 2 * t1 + (n // 2) * 25e-6
    assert schedule_time_s(s) == pytest.approx(expected, rel=1e-12)


def test_packet_padding():
    sysm = OpticalRing(nodes=2)
    # 129 bytes occupy two 128-byte packets on the wire and five 32-byte flits
    assert transfer_time_s(sysm, np.array([129]))[0] == pytest.approx(256 / 5e9 + 5e-9)


def test_paper_model_eq3():
    # T = S (d/B + a), a = t_reconf + O/E/O of d (seed 004 eq. 3; our reading of 'a')
    sysm = OpticalRing(nodes=8)
    d = 1 << 20
    a = 25e-6 + (d // 32) * 1e-9
    assert paper_time_s(sysm, d, 7) == pytest.approx(7 * (d / 5e9 + a))
    assert paper_time_s(sysm, d, None) is None


@pytest.mark.parametrize("alg,coll,n,w", [
    (alg, coll, n, w)
    for alg, coll in [("ring", "allgather"), ("ne", "allgather"), ("osm", "allgather"), ("ring", "allreduce"),
                      ("osm", "allreduce"), ("osm", "alltoall"), ("ring", "reducescatter"), ("osm", "broadcast"),
                      ("ring", "reduce")]
    for n, w in [(8, 1), (16, 4), (33, 2), (64, 64)]
    if not (alg == "ne" and n % 2)])  # NE needs an even N: no case of it on 33 nodes
def test_lower_bound_never_exceeds_the_schedule_time(alg, coll, n, w):
    s = build(alg, OpticalRing(nodes=n, wavelengths=w), coll, 1 << 16)
    assert lower_bound_s(s.system, s.collective) <= schedule_time_s(s) * (1 + 1e-12)


def test_osm_alltoall_meets_the_link_load_bound_up_to_overheads():
    # The optimal one-hop all-to-all is link-load tight: with O/E/O and reconfiguration set
    # to zero and packets of one byte, its time equals the bound exactly.
    n, w = 16, 4
    sysm = OpticalRing(nodes=n, wavelengths=w, mrr_reconfig_s=0.0, oeo_cycles_per_flit=0.0, packet_bytes=1)
    s = build("osm", sysm, "alltoall", 5000)
    assert schedule_time_s(s) == pytest.approx(lower_bound_s(sysm, s.collective))


@pytest.mark.parametrize("n", [3, 5, 7, 9, 15, 33, 63, 1023])
def test_lemma1_overcounts_odd_rings(n):
    # Seed 004 Lemma 1 says ceil(N^2/8); for odd N = 2k+1 the busiest link carries only
    # k(k+1)/2 one-hop lightpaths per direction and the explicit schedule uses exactly
    # that many wavelengths: one fewer than Lemma 1 (docs/papers/discrepancies.md).
    k = (n - 1) // 2
    lemma1 = math.ceil(n * n / 8)
    assert uniform_alltoall_wavelengths(n) == k * (k + 1) // 2 == lemma1 - 1
    if n <= 63:
        s = build("osm", OpticalRing(nodes=n, wavelengths=lemma1), "allgather", 64)
        assert verify(s).wavelengths_used == lemma1 - 1


@pytest.mark.parametrize("n", [4, 6, 8, 10, 64, 1024])
def test_lemma1_is_exact_for_even_rings(n):
    assert uniform_alltoall_wavelengths(n) == math.ceil(n * n / 8)
