"""The striped bidirectional ring (issue #13): verified, one reconfiguration, its closed form, its efficiency."""

from __future__ import annotations

import numpy as np
import pytest

from collsim import build, verify
from collsim.core.collectives import TYPES
from collsim.algorithms import get_algorithm
from collsim.algorithms.striped_ring import striped_ring_band, striped_ring_time_s
from collsim.pipeline import run
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing

COLLECTIVES = ("allgather", "reducescatter", "allreduce")


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("n,w,f", [(2, 1, 1), (3, 4, 1), (5, 8, 2), (8, 64, 1), (9, 3, 2), (16, 16, 2), (31, 64, 1)])
@pytest.mark.parametrize("size", [1, 1000, 1_048_583])
def test_builds_verifies_and_matches_the_closed_form(collective, n, w, f, size):
    system = OpticalRing(nodes=n, wavelengths=w, fibers=f)
    s = build("striped-ring", system, collective, size)
    rep = verify(s)
    slots = 2 * (n - 1) if collective == "allreduce" else n - 1
    assert rep.steps == slots and rep.max_hops == 1
    assert rep.transfers == slots * 2 * n * f                  # 2F pieces per node per slot
    assert (s.band == w).all() and (s.wavelength == 0).all()
    assert sorted(set(s.fiber.tolist())) == list(range(f))
    assert sorted(set(s.direction.tolist())) == [-1, 1]
    r = run("striped-ring", system, collective, size)
    assert r.part.reconfigurations == 1 and r.part.feasible
    assert r.time_s == pytest.approx(striped_ring_time_s(system, TYPES[collective], size), rel=1e-12)
    assert r.time_s >= r.lower_bound_s * (1 - 1e-12)


def test_closed_form_with_a_per_slot_latency():
    system = OpticalRing(nodes=9, wavelengths=8, fibers=2, slot_latency_s=1e-6)
    for collective in COLLECTIVES:
        r = run("striped-ring", system, collective, 123_457)
        assert r.time_s == pytest.approx(striped_ring_time_s(system, TYPES[collective], 123_457), rel=1e-12)


def test_lightpaths_are_fixed_for_the_whole_collective():
    s = build("striped-ring", OpticalRing(nodes=7, wavelengths=4, fibers=2), "allreduce", 4096)
    cols = [np.asarray(getattr(s, c)) for c in ("src", "dst", "direction", "fiber", "wavelength", "band")]
    per_step = [set(zip(*(c[s.step == k].tolist() for c in cols))) for k in range(s.num_steps)]
    assert all(p == per_step[0] for p in per_step) and len(per_step[0]) == 2 * 7 * 2


def test_transceiver_limits_lower_the_band_and_still_verify():
    system = OpticalRing(nodes=6, wavelengths=16, fibers=2, max_tx_channels=9, max_rx_channels=9)
    assert striped_ring_band(system) == 2
    s = build("striped-ring", system, "allgather", 10_000)
    verify(s)
    assert (s.band == 2).all() and s.num_steps == 5
    tiny = OpticalRing(nodes=5, wavelengths=8, max_tx_channels=1, max_rx_channels=1)
    verify(build("striped-ring", tiny, "allreduce", 999))   # slots split by the transceiver limit


def test_registration():
    spec = get_algorithm("striped-ring")
    assert spec.collectives == COLLECTIVES and spec.systems == ("optical-ring",) and spec.params == ()
    assert {c.key for c in spec.citations} == {"Patarasuk09", "OpTree24"}
    assert "collsim's own" in spec.reference


@pytest.mark.parametrize("collective", ["allgather", "allreduce"])
@pytest.mark.parametrize("size", ["4MiB", "64MiB"])
def test_efficiency_at_the_papers_scale(collective, size):
    """Issue #13's target: time <= 1.2 x the lower bound at N=1024, w=64, F=1."""
    r = run("striped-ring", load_system("paper", nodes=1024, wavelengths=64), collective,
            4 * 2**20 if size == "4MiB" else 64 * 2**20)
    assert r.verified and r.part.feasible and r.part.reconfigurations == 1
    assert r.efficiency >= 0.83


def _builder_reference(system, collective, size):
    """The construction before issue 21, through LogicalBuilder: the in-place build must equal it."""
    from collsim.core.collective import make_collective
    from collsim.core.schedule import LogicalBuilder
    n, f = system.nodes, system.fibers
    band = striped_ring_band(system)
    i, fib = np.arange(n), np.tile(np.arange(f), n)
    src, k = np.repeat(i, f), 2 * f
    b = LogicalBuilder(make_collective(collective, n, size, split=k * n if collective == "allreduce" else k))

    def add(rnd, cw_block, ccw_block, reduce):
        for dst, chunk, d in (((src + 1) % n, np.repeat(cw_block, f) * k + fib, 1),
                              ((src - 1) % n, np.repeat(ccw_block, f) * k + f + fib, -1)):
            b.add(rnd, src, dst, chunk[:, None], reduce=reduce, direction=d,
                  color=fib * (system.wavelengths // band), band=band)

    first = 0
    if collective != "allgather":
        for r in range(n - 1):
            add(r, (i - 1 - r) % n, (i + 1 + r) % n, True)
        first = n - 1
    if collective != "reducescatter":
        for r in range(n - 1):
            add(first + r, (i - r) % n, (i + r) % n, False)
    return b.build()


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("n,w,f,tx", [(2, 1, 1, None), (3, 4, 1, None), (5, 8, 2, None), (9, 3, 3, None),
                                      (8, 64, 3, 20), (16, 64, 1, None)])
def test_logical_schedule_equals_the_builder_construction(collective, n, w, f, tx):
    from collsim.algorithms import build_logical
    system = OpticalRing(nodes=n, wavelengths=w, fibers=f, max_tx_channels=tx)
    got, _ = build_logical("striped-ring", system, collective, 1000)
    want = _builder_reference(system, collective, 1000)
    for attr in ("name", "nodes", "chunks", "split", "size_bytes"):
        assert getattr(got.collective, attr) == getattr(want.collective, attr), attr
    for name in ("round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce", "direction", "color", "band", "via"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
