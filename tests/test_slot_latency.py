"""The per-slot latency of optical rings (issue #13): default 0, linear in slots, crossovers, bad values."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess

import pytest

import collsim
from collsim.core.collective import make_collective
from collsim.core.errors import InputError
from collsim.kinds.optical_ring.bound import optical_lower_bound_s
from collsim.kinds.optical_ring.cost import paper_time_s, step_times
from collsim.experiments.papers.beyond.slot_latency import (crossovers, pair_crossovers, plot_slot_latency,
                                              slot_latency_crossover)
from collsim.pipeline import evaluate
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing

from conftest import collsim_exe

ALGS = ("ring", "ne", "osm", "wrht", "optree")


def test_default_is_zero_and_the_presets_keep_it():
    assert OpticalRing(nodes=4).slot_latency_s == 0.0
    assert load_system("paper").slot_latency_s == 0.0 and load_system("terarack").slot_latency_s == 0.0


def test_default_zero_changes_no_number():
    # The step model without the new term, by hand: busy + reconfigurations; and the known doctest value.
    t = step_times(collsim.build("ring", "paper", "allgather", 1024, nodes=4))
    assert round(t.total_s * 1e6, 3) == 25.71
    for alg in ALGS:
        plain = collsim.build(alg, OpticalRing(nodes=8, wavelengths=2), "allgather", "64KiB")
        zero = collsim.build(alg, OpticalRing(nodes=8, wavelengths=2, slot_latency_s=0.0), "allgather", "64KiB")
        a, b = evaluate(plain), evaluate(zero)
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        st = step_times(plain)
        busy = [max(plain.system.transfer_time_s(plain.size_bytes[plain.step == k]))
                for k in range(plain.num_steps)]
        assert st.total_s == pytest.approx(sum(busy) + st.reconfigured.sum() * 25e-6, rel=1e-12)


@pytest.mark.parametrize("alg", ALGS)
def test_time_grows_by_exactly_slots_times_latency(alg):
    lat = 2e-6
    base = collsim.build(alg, OpticalRing(nodes=16, wavelengths=4), "allgather", "32KiB")
    slow = collsim.build(alg, OpticalRing(nodes=16, wavelengths=4, slot_latency_s="2us"), "allgather", "32KiB")
    assert slow.num_steps == base.num_steps
    t0, t1 = step_times(base), step_times(slow)
    assert (t1.step_time_s - t0.step_time_s == pytest.approx(lat, rel=1e-9))
    assert t1.total_s == pytest.approx(t0.total_s + base.num_steps * lat, rel=1e-12)
    r0, r1 = evaluate(base), evaluate(slow)
    assert r1.time_s == pytest.approx(r0.time_s + r0.slots * lat, rel=1e-12)
    assert r1.paper_time_s == r0.paper_time_s            # eq. 3 has no slot latency
    assert r1.lower_bound_s == pytest.approx(r0.lower_bound_s + lat, rel=1e-12)
    assert r1.lower_bound_s <= r1.time_s


def test_paper_model_and_bound():
    ring = OpticalRing(nodes=4, slot_latency_s=1e-3)
    assert paper_time_s(ring, 5_000_000, 2) == paper_time_s(OpticalRing(nodes=4), 5_000_000, 2)
    c = make_collective("allgather", 4, 1000)
    assert optical_lower_bound_s(ring, c) == pytest.approx(optical_lower_bound_s(OpticalRing(nodes=4), c) + 1e-3)


def test_experiment_rows_match_schedules_built_at_each_latency():
    rows = slot_latency_crossover(8, 2, "64KiB", (0, 3e-6), ["ring", "wrht", "ne"])
    for r in rows:
        s = collsim.build(r["algorithm"], OpticalRing(nodes=8, wavelengths=2, slot_latency_s=r["latency_s"]),
                          "allgather", "64KiB")
        assert (s.num_steps, step_times(s).total_s) == (r["slots"], pytest.approx(r["time_s"], rel=1e-12))
    for lat in (0, 3e-6):
        at = [r for r in rows if r["latency_s"] == lat]
        assert [r["rank"] for r in at] == [1, 2, 3] and [r["best"] for r in at] == [True, False, False]
        assert [r["time_s"] for r in at] == sorted(r["time_s"] for r in at)


def test_crossover_detection_on_a_small_case(tmp_path):
    # Ring (7 slots) beats WRHT (3 slots) at 0; the lines meet where 4 L equals the time gap.
    lats = (0, 10e-6, 20e-6, 50e-6, 100e-6)
    rows = slot_latency_crossover(8, 2, "64KiB", lats, ["ring", "wrht"])
    t = {(r["algorithm"], r["latency_s"]): r["time_s"] for r in rows}
    x = (t["wrht", 0] - t["ring", 0]) / (7 - 3)
    (cx,) = crossovers(rows)
    assert (cx["before"], cx["after"]) == ("ring", "wrht")
    assert cx["latency_s"] == pytest.approx(x, rel=1e-12) and 20e-6 < x < 50e-6
    best = {r["latency_s"]: r["algorithm"] for r in rows if r["best"]}
    assert [best[v] for v in lats] == ["ring", "ring", "ring", "wrht", "wrht"]
    assert crossovers(rows, upto=20e-6) == []
    assert [(c["faster_below"], c["faster_above"]) for c in pair_crossovers(rows)] == [("ring", "wrht")]
    png, svg = plot_slot_latency(rows, tmp_path / "fig")
    assert png.read_bytes()[:4] == b"\x89PNG" and svg.exists()


def test_crossover_finds_the_whole_lower_envelope():
    # Three synthetic lines: a (many slots, fastest at 0), b (middle), c (flattest).
    rows = [{"latency_s": 0.0, "algorithm": a, "slots": s, "time_s": c} for a, s, c in
            (("a", 100, 1.0), ("b", 10, 2.0), ("c", 1, 3.0), ("d", 50, 10.0))]
    got = [(c["before"], c["after"], c["latency_s"]) for c in crossovers(rows, math.inf)]
    assert got == [("a", "b", pytest.approx(1 / 90)), ("b", "c", pytest.approx(1 / 9))]


@pytest.mark.parametrize("value", ["-1us", "abc", "-1", "nan"])
def test_bad_values_are_refused_with_one_line(value):
    proc = subprocess.run([collsim_exe(), "compare", "-n", "8", "-w", "2", "--size", "1KiB",
                           "-S", f"slot_latency_s={value}"], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "slot_latency_s" in lines[0], proc.stderr


def test_a_time_string_on_the_command_line():
    run = lambda *extra: json.loads(subprocess.run(
        [collsim_exe(), "compare", "-n", "8", "-w", "2", "--size", "1KiB", "--json", *extra],
        capture_output=True, text=True, check=True).stdout)
    base = {r["algorithm"]: r for r in run()}
    slow = {r["algorithm"]: r for r in run("-S", "slot_latency_s=2us")}
    for alg, r in slow.items():
        assert r["time_s"] == pytest.approx(base[alg]["time_s"] + base[alg]["slots"] * 2e-6, rel=1e-12)


@pytest.mark.parametrize("value", [-1.0, float("inf"), True, "2 parsecs"])
def test_bad_values_in_python(value):
    with pytest.raises(InputError, match="slot_latency_s"):
        OpticalRing(nodes=4, slot_latency_s=value)


@pytest.mark.parametrize("nodes,wavelengths,size", [(16, 2, 1024), (64, 4, 1 << 20), (96, 2, 1 << 16)])
def test_optree_search_charges_the_slot_latency(nodes, wavelengths, size):
    """The search scores a tree with the same model that times the built schedule.

    Every one of OpTree's S steps is a slot, so its time grows by exactly S * t_slot.
    """
    from collsim.algorithms.optree import search_tree
    from collsim.pipeline import run
    from collsim.systems import load_system
    base = load_system("paper", nodes=nodes, wavelengths=wavelengths)
    slow = load_system("paper", nodes=nodes, wavelengths=wavelengths, slot_latency_s=1e-5)
    b0, _ = search_tree(base, size)
    b1, _ = search_tree(slow, size)
    assert b1.time_s <= b0.time_s + b0.steps * 1e-5 + 1e-15
    r = run("optree", slow, "allgather", size)
    assert r.time_s == pytest.approx(b1.time_s, rel=1e-12) and r.slots == b1.steps


def test_the_title_names_the_fastest_as_the_rows_rank_it(tmp_path):
    """Issue 24: at a tie in time at latency 0 the line with fewer slots is fastest (the rows' rank and the
    crossovers say so); the title used to pick by name ("a-many" before "b-few")."""
    import re
    rows = []
    for lat in (0.0, 1e-6):
        for rank, (alg, slots) in enumerate((("b-few", 10), ("a-many", 20)), 1):  # same time at 0
            rows.append({"nodes": 8, "wavelengths": 2, "size_bytes": 1024, "latency_s": lat, "algorithm": alg,
                         "slots": slots, "time_s": 1e-3 + slots * lat, "rank": rank, "best": rank == 1,
                         "feasible": True})
    assert crossovers(rows) == []  # b-few is below a-many everywhere above 0: no change of the fastest
    png, svg = plot_slot_latency(rows, tmp_path, "tie")
    title = re.search(r"b-few stays fastest|a-many stays fastest", svg.read_text())
    assert title is not None and title.group(0) == "b-few stays fastest"


@pytest.mark.parametrize("alg, coll, params", [("ring", "allgather", {"stripe": 4}), ("optree", "allgather", {}),
                                               ("relay", "allgather", {"k": 2}), ("osm", "allgather", {}),
                                               ("striped-ring", "allreduce", {}), ("wrht", "allgather", {})])
@pytest.mark.parametrize("block", [1, 2, 7])
def test_step_times_in_blocks_of_steps_equal_the_whole_schedule_at_once(alg, coll, params, block, monkeypatch):
    """The optical model reads the steps in blocks (a block's lightpath keys, not the schedule's):
    every step's time and reconfiguration come out the same whatever the block, the step before a
    block's first carried across.  Each step's time is its slowest transfer plus, where its set of
    lightpaths differs from the step before, the reconfiguration delay."""
    import numpy as np
    from collsim.kinds.optical_ring import cost
    system = load_system("paper", nodes=24, wavelengths=4, slot_latency_s=1e-7)
    s = collsim.build(alg, system, coll, "64KiB", **params)
    whole = cost._step_times(s)
    monkeypatch.setattr(cost, "_BLOCK_TRANSFERS", block)
    parts = cost._step_times(s)
    assert np.array_equal(parts.step_time_s, whole.step_time_s)
    assert np.array_equal(parts.reconfigured, whole.reconfigured)
    paths = [sorted(zip(s.src[a:b].tolist(), s.dst[a:b].tolist(), s.direction[a:b].tolist(), s.fiber[a:b].tolist(),
                        s.wavelength[a:b].tolist(), s.band[a:b].tolist()))
             for a, b in zip(s.step_bounds[:-1], s.step_bounds[1:])]
    assert parts.reconfigured.tolist() == [True] + [p != q for p, q in zip(paths[1:], paths[:-1])]
    assert 0 < parts.reconfigured.sum() <= s.num_steps
