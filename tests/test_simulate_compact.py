"""``simulate`` on the forms ``compare`` times: symmetric schedules and steps that repeat.

``collsim.pipeline.simulate_compact`` (and ``collsim simulate`` in bulk mode) simulates a
symmetric schedule through its representatives and a schedule whose steps repeat one whole step a
class.  Its answer must be the whole schedule's: the total, every step's time, every link's bytes
and busy time, the most flows on a link.  These tests compare it with the flow simulation of the
expansion, transfer by transfer, on random instances of each form.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsim
from collsim.core.errors import PostconditionError, UnsupportedError
from collsim.pipeline import build, build_compact, build_repeated, build_symmetric, simulate_compact, verify

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same_as_expansion(compact, form: str) -> None:
    full = compact.expand()
    got = simulate_compact(compact)
    want = collsim.simulate(full)
    assert got.form == form and want.form == "explicit"
    assert got.verified and got.transfers == len(full)
    assert got.total_time_s == pytest.approx(want.total_time_s, rel=1e-12)
    np.testing.assert_allclose(got.step_time_s, want.step_time_s, rtol=1e-9, atol=1e-18)
    np.testing.assert_array_equal(got.link_bytes, want.link_bytes)
    np.testing.assert_allclose(got.link_busy_s, want.link_busy_s, rtol=1e-9, atol=1e-18)
    assert (got.max_link_load, got.peak_link_flows) == (want.max_link_load, want.peak_link_flows)
    doc = got.to_json()
    assert doc["transfers"] == len(full) and doc["form"] == form and doc["steps"] == full.num_steps
    assert doc["total_link_bytes"] == int(want.link_bytes.sum())


@SETTINGS
@given(nodes=st.integers(3, 12), chunk_bytes=st.sampled_from([64, 4096, 1 << 18]),
       collective=st.sampled_from(["allgather", "reducescatter", "allreduce"]))
def test_a_ring_on_a_ring_simulated_on_its_orbits_is_its_expansion(nodes, chunk_bytes, collective):
    size = chunk_bytes * (nodes if collective == "allreduce" else 1)       # chunks alike on every node
    _same_as_expansion(build_symmetric("ring", "ring", collective, size, nodes=nodes), "symmetric")


@SETTINGS
@given(box=st.sampled_from([2, 4]), k=st.sampled_from([4]), size=st.sampled_from(["64KiB", "1MiB"]))
def test_hier_allreduce_on_boxes_on_a_fat_tree_simulated_on_its_orbits_is_its_expansion(box, k, size):
    dims = f"switch:{box}:300GB/s,fat-tree:{k ** 3 // 4}:50GB/s"
    sym = build_symmetric("hier-allreduce", "hierarchical", "allreduce", size, system_options={"dims": dims})
    _same_as_expansion(sym, "symmetric")


@SETTINGS
@given(box=st.sampled_from([2, 4]), boxes=st.sampled_from([4, 16]), size=st.sampled_from(["64KiB", "1MiB"]),
       collective=st.sampled_from(["allgather", "allreduce"]))
def test_a_ring_on_boxes_whose_steps_repeat_is_its_expansion(box, boxes, size, collective):
    dims = f"switch:{box}:300GB/s,fat-tree:{boxes}:50GB/s"
    rep = build_repeated("ring", "hierarchical", collective, size, system_options={"dims": dims})
    _same_as_expansion(rep, "repeated")


def test_synth_trees_on_a_torus_simulated_on_its_orbits_is_its_expansion():
    sym = build_symmetric("synth-trees", "torus", "allgather", "4MiB", system_options={"dims": (3, 4)})
    _same_as_expansion(sym, "symmetric")


def test_an_explicit_schedule_is_simulated_as_before_and_a_broken_one_is_refused():
    s = build("ring", "ring", "allgather", "1MiB", nodes=6)
    got, want = simulate_compact(s), collsim.simulate(s)
    assert got.form == "explicit" and got.total_time_s == want.total_time_s and got.to_json()["transfers"] == len(s)
    with pytest.raises(PostconditionError):
        simulate_compact(s.take(range(len(s) - 1)))


def test_a_compact_schedule_is_verified_or_says_it_was_not():
    sym = build_symmetric("ring", "ring", "allgather", "1MiB", nodes=8)
    assert simulate_compact(sym, report=verify(sym)).verified
    assert not simulate_compact(sym, check=False).verified


def test_optical_schedules_have_no_flow_simulation():
    with pytest.raises(UnsupportedError, match="flow simulator"):
        simulate_compact(build_compact("ring", "paper", "allgather", "1MiB", nodes=8))


def test_weighted_steps_carry_their_weight_in_link_bytes_and_busy_time():
    rep = build_repeated("ring", "hierarchical", "allgather", "1MiB", system_options={"dims": "switch:4,fat-tree:4"})
    weights = rep.steps.step_weight
    assert weights.max() > 1               # some class stands for several steps
    alone = collsim.simulate(rep.steps, check=False)
    full = collsim.simulate(rep.expand())
    np.testing.assert_array_equal(alone.link_bytes, full.link_bytes)
    assert alone.total_time_s == pytest.approx(full.total_time_s, rel=1e-12)


def _cli_json(*args: str) -> dict:
    out = subprocess.run(["collsim", "simulate", *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_cli_simulates_1024_gpus_ring_allreduce_as_repeated_steps_with_compares_answer():
    dims = "dims=switch:8:300GB/s,fat-tree:128:50GB/s"
    doc = _cli_json("ring", "--system", "hierarchical", "-S", dims, "-c", "allreduce", "-s", "1MiB")
    n = 1024
    assert doc["form"] == "repeated" and doc["verified"]
    assert doc["steps"] == len(doc["step_time_s"]) == 2 * (n - 1)          # reduce-scatter, then all-gather
    assert doc["transfers"] == 2 * (n - 1) * n                               # every node sends once a step
    row = collsim.run("ring", collsim.load_system("hierarchical", dims="switch:8:300GB/s,fat-tree:128:50GB/s"),
                      "allreduce", 1 << 20)
    assert row.verified and doc["total_time_s"] == pytest.approx(row.time_s, rel=1e-12)
    assert sum(doc["step_time_s"]) == pytest.approx(doc["total_time_s"], rel=1e-9)
    # every byte crosses at least one link: each of the 2n(n-1) transfers carries 1 MiB / n
    assert doc["total_link_bytes"] >= 2 * (n - 1) * n * (1 << 20) // n


def test_the_cli_keeps_the_explicit_schedule_where_a_mode_needs_every_transfer():
    dims = "dims=switch:2,fat-tree:4"
    doc = _cli_json("ring", "--system", "hierarchical", "-S", dims, "-c", "allreduce", "-s", "1MiB",
                    "--mode", "dataflow")
    assert doc["form"] == "explicit" and doc["transfers"] == 2 * 7 * 8
