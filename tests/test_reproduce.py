"""The papers' tables, regenerated: collsim's values beside the printed ones.

Each assertion pins a value collsim computes and, where it differs from the paper,
the documented reason (docs/papers/discrepancies.md).
"""

from __future__ import annotations

import json

import pytest

from collsim.experiments.papers import tables as papers, reproduce


@pytest.fixture(scope="module")
def table1():
    return {r["algorithm"]: r for r in papers.optree_table1()}


def test_table1_formulas_and_the_inconsistent_osm_entry(table1):
    # every printed value matches its own formula except OSM: ceil(1024^2 / (8*64)) = 2048, printed 128
    assert {a for a, r in table1.items() if not r["formula_matches_paper"]} == {"osm"}
    assert table1["osm"]["formula"] == 2048 and table1["osm"]["explicit_steps"] == 2048


def test_table1_explicit_schedules(table1):
    assert table1["ring"]["explicit_steps"] == 1023 and table1["ne"]["explicit_steps"] == 512
    # NE's 512 steps carry 2d after the first: 1023 blocks of time, like Ring
    assert table1["ne"]["explicit_d_steps"] == 1023
    # OpTree: Theorem 1 assumes a continuous radix (about 2.69); 1024 only has radices 2 and 4
    assert table1["optree"]["formula"] == 70 and table1["optree"]["explicit_steps"] == 72
    # WRHT all-gather: the last broadcast level alone needs N-1 blocks through one link
    assert table1["wrht"]["explicit_d_steps"] >= 1023 > table1["wrht"]["formula"]


def test_motivation_example():
    rows = {r["scheme"]: r for r in papers.optree_motivation()}
    assert rows["one-stage"]["explicit_steps"] == rows["one-stage"]["paper"] == 16
    assert rows["two-stage 4-ary"]["explicit_steps"] == rows["two-stage 4-ary"]["paper"] == 12
    # the paper's own per-stage expressions for the 3-ary tree add up to 22, not the printed 16
    assert rows["three-stage 3-ary"]["paper_expressions"] == 22 != rows["three-stage 3-ary"]["paper"]
    assert rows["three-stage 3-ary"]["explicit_steps"] == 22


def test_fig4_optimal_depths():
    rows = {r["nodes"]: r for r in papers.optree_fig4()}
    # Fig. 4's depths are Lemma 3 with nearest rounding; the printed ceiling differs at 1024 and 2048
    assert all(r["lemma3_round"] == r["paper_depth"] for r in rows.values())
    assert [rows[n]["lemma3_ceil"] for n in (512, 1024, 2048, 4096)] == [6, 7, 8, 8]
    # collsim's exact search agrees with Fig. 4 except at N=512, where depths 5..8 differ by a
    # single 25 us reconfiguration and depth 5 wins
    assert [rows[n]["search_depth"] for n in (512, 1024, 2048, 4096)] == [5, 6, 7, 8]
    t = rows[512]["time_by_depth_s"]
    assert t[5] < t[6] and t[6] - t[5] == pytest.approx(25e-6)


def test_wrht_allreduce_matches_seed_003():
    for r in papers.wrht_allreduce(nodes=(16, 64, 256, 1024)):
        assert r["explicit_steps"] == r["formula"], r


def test_mlfm_pattern_b_ratio():
    rows = [r for r in papers.mlfm_throughput() if r["scale"] == "24-B"]
    assert rows and all(abs(r["ratio"] - papers.MLFM_PAPER_RATIO_PATTERN_B) < 0.05 for r in rows)


def test_reproduce_cli(run_cli):
    listing = run_cli("reproduce", check=True).stdout
    assert all(name in listing for name in reproduce.EXPERIMENTS)
    rows = json.loads(run_cli("reproduce", "optree-motivation", "--json", check=True).stdout)
    assert len(rows) == 3
    proc = run_cli("reproduce", "nonesuch")
    assert proc.returncode == 2 and "unknown table" in proc.stderr
