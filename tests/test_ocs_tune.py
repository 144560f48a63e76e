"""``collsim tune --system ocs`` prints, per size, which algorithm wins as r grows from 4 ns to 10 ms
through the generic hooks of a kind's view, ``KindView.tune_notes`` and ``tune_fields``.

The console script is run as installed (a subprocess), and its lines are checked against
:func:`collsim.algorithms.ocs.crossovers` over the rows of :func:`collsim.pipeline.run`; a second run
reads every trial from the store and prints the same; a network's tune output carries nothing new.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collsim.algorithms import get_algorithm
from collsim.algorithms.ocs import crossovers
from collsim.core.units import format_size, format_time
from collsim.experiments.tune.run import Choice, Trial, tunable
from collsim.kinds.view import KindView, view_for
from collsim.pipeline import run
from collsim.systems import load_system
from conftest import names

COLLSIM = shutil.which("collsim") or str(Path(sys.executable).with_name("collsim"))
NOTE = re.compile(r"^fastest as r grows from 4 ns to 10 ms \((\S+?)(?: to (\S+))?\): (.*)$")


def _tune(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "200"}
    done = subprocess.run([COLLSIM, "tune", *args], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def _expected(collective: str, nodes: int, sizes: list[int]) -> dict[int, list[tuple[float, float, str]]]:
    """Per size, the crossovers among every eligible (algorithm, parameters) tune tries, from pipeline.run."""
    system = load_system("ocs", nodes=nodes)
    names, _ = tunable(system, collective)
    out = {}
    for size in sizes:
        lines = []
        for name in names:
            if name == "ocs-auto":  # itself a choice among the others
                continue
            for params in get_algorithm(name).candidates(system, collective, size):
                try:
                    row = run(name, system, collective, size, **params)
                except Exception:  # noqa: BLE001 - cannot build on this switch: tune's note says why
                    continue
                if row.verified and row.time_s is not None and getattr(row, "feasible", None) is not False:
                    label = " ".join([name, *(f"{k}={v}" for k, v in sorted(params.items()))])
                    lines.append({"algorithm": label, "params": {}, "reconfigurations": row.part.reconfigurations,
                                  "comm_s": row.time_s - row.part.reconfiguration_time_s})
        out[size] = crossovers(lines)
    return out


def _words(spans) -> str:
    if len(spans) == 1:
        return f"{spans[0][2]} throughout"
    return ", ".join(f"{label} to r = {format_time(hi)}" for _, hi, label in spans[:-1]) + f", then {spans[-1][2]}"


def _per_size(stdout: str, sizes: list[int]) -> dict[int, str]:
    """The crossover note of every size (a note over a range of sizes covers each size in it)."""
    named = {format_size(s): s for s in sizes}
    said: dict[int, str] = {}
    for line in stdout.splitlines():
        m = NOTE.match(line.strip())
        if m:
            lo, hi = named[m.group(1)], named[m.group(2) or m.group(1)]
            for s in sizes:
                if lo <= s <= hi:
                    assert s not in said, f"{format_size(s)} in two notes"
                    said[s] = m.group(3)
    return said


@pytest.mark.parametrize("collective, end, factor", [("allgather", "64KiB", "8"), ("alltoall", "1MiB", "4")])
def test_tune_prints_the_crossovers_of_pipeline_rows_and_the_same_from_the_store(tmp_path, collective, end, factor):
    args = ["--system", "ocs", "-n", "8", "-c", collective, "-b", "1KiB", "-e", end, "-f", factor,
            "--store", str(tmp_path / "tune.sqlite")]
    first = _tune(tmp_path, *args)
    rows = json.loads(_tune(tmp_path, *args, "--json").stdout)
    sizes = [r["size_bytes"] for r in rows]
    expected = _expected(collective, 8, sizes)
    assert _per_size(first.stdout, sizes) == {s: _words(spans) for s, spans in expected.items()}, first.stdout
    for r in rows:  # --json: the same crossovers, a key per size
        got = r["crossovers"]
        want = expected[r["size_bytes"]]
        assert [g[2] for g in got] == [w[2] for w in want]
        assert [x for g in got for x in g[:2]] == pytest.approx([x for w in want for x in w[:2]], rel=1e-9)
    again = _tune(tmp_path, *args)
    assert "0 built and verified" in again.stderr and again.stdout == first.stdout


def test_tune_on_alltoall_names_where_each_algorithm_wins(tmp_path):
    done = _tune(tmp_path, "--system", "ocs", "-n", "16", "-c", "alltoall", "-b", "256KiB", "-e", "256KiB",
                 "--no-store")
    names(" ".join(done.stdout.split()), "256KiB", "pairwise", "r = 7.503 µs", "bruck", "r = 156 µs",
          "ring-personalized")  # the crossovers, as compare prints them (docs/systems.md)


def test_a_network_tune_has_no_kind_notes_nor_keys(tmp_path):
    args = ["--system", "ring", "-n", "8", "-c", "allgather", "-b", "1KiB", "-e", "64KiB", "-f", "8", "--no-store",
            "-a", "ring,recursive-doubling,bruck"]  # the kind is the subject, not the pick: no synth-matching
    table = _tune(tmp_path, *args).stdout
    assert "fastest as r grows" not in table
    rows = json.loads(_tune(tmp_path, *args, "--json").stdout)
    t = Trial("ring", {}, 1024, 2e-3, 1e-3, 0.5, True, True, None)
    assert all(set(r) == set(Choice(1024, 8192, t, t, 1, 1).to_json()) for r in rows)
    trials = json.loads(_tune(tmp_path, *args, "--trials", "--json").stdout)
    assert all(set(r) == set(t.to_json()) for r in trials)  # a trial's kind part stays out of its JSON
    system = load_system("ring", nodes=8)
    assert view_for(system).tune_notes(system, []) == [] and view_for(system).tune_fields(system, []) == {}
    assert KindView().tune_notes(system, []) == [] and KindView().tune_fields(system, []) == {}


def test_trials_keep_their_kind_part_through_the_store(tmp_path):
    from collsim.experiments.sweep.store import Store
    from collsim.experiments.tune.run import tune
    store = Store(tmp_path / "s.sqlite")
    try:
        fresh = tune("ocs", "alltoall", [4096], nodes=8, algorithms=["pairwise", "bruck"], store=store)
        cached = tune("ocs", "alltoall", [4096], nodes=8, algorithms=["pairwise", "bruck"], store=store)
    finally:
        store.close()
    assert cached.from_store == len(cached.trials) and [t.part for t in cached.trials] == [t.part for t in fresh.trials]
    by = {t.algorithm: t.part for t in fresh.trials}
    assert by["pairwise"]["reconfigurations"] == 6 and by["bruck"]["reconfigurations"] == 2
    assert view_for(fresh.system).tune_notes(fresh.system, cached.trials) == \
        view_for(fresh.system).tune_notes(fresh.system, fresh.trials)
