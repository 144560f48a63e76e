"""collsim tune's outputs: the figure, the command's rules, tables, CSV and JSON, and the MPICH rules file.

The pick per size, the rules and the store are tests/test_tune.py's.
"""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess

import pytest

from collsim.experiments.tune.figure import plot_tuning
from collsim.experiments.tune.run import tune

from conftest import collsim_exe, names


def test_the_figure_is_a_png_or_an_svg(tmp_path):
    result = tune("ring", "allreduce", [64, 4096, 1 << 20], nodes=8,
                  algorithms=["ring", "recursive-doubling", "rabenseifner"])
    png = plot_tuning(result, tmp_path / "t.png")
    svg = plot_tuning(result, tmp_path / "t.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in svg.read_bytes()[:400]
    assert plot_tuning(result, tmp_path / "u.png").read_bytes() == png.read_bytes()


# ------------------------------------------------------------------------------------- the command

def _tune(tmp_path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([collsim_exe(), "tune", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "100",
                                            "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_command_writes_identical_rules_and_figures_and_reuses_its_store(tmp_path):
    args = ["--system", "paper", "-n", "16", "-w", "8", "-b", "32KB", "-e", "4GiB", "-f", "16",
            "--rules", "r1.json", "--figure", "f1.png"]
    first = _tune(tmp_path, *args)
    again = _tune(tmp_path, *args[:-4], "--rules", "r2.json", "--figure", "f2.png")
    names(first.stderr, "built and verified", "0 read")   # a first run reads nothing from its store
    summary = again.stderr.strip().splitlines()[-1]
    assert summary.startswith("tune: ") and ": 0 built and verified" in summary, summary
    assert (tmp_path / "cache" / "collsim" / "tune.sqlite").exists()  # the default store
    r1, r2 = (tmp_path / "r1.json").read_bytes(), (tmp_path / "r2.json").read_bytes()
    assert r1 == r2 and (tmp_path / "f1.png").read_bytes() == (tmp_path / "f2.png").read_bytes()
    doc = json.loads(r1)
    assert doc["collective"] == "allgather" and doc["system"]["nodes"] == 16
    assert doc["rules"][0]["min_bytes"] == 32000 and doc["rules"][-1]["max_bytes"] == 4 << 30
    assert (tmp_path / "f1.png").read_bytes()[:4] == b"\x89PNG"
    assert "best" in first.stdout and "runner-up" in first.stdout and "32kB" in first.stdout


@pytest.mark.parametrize("columns", [100, 80])
def test_the_table_fits_the_terminal_and_keeps_every_number_whole(tmp_path, columns):
    import test_output as out  # its pseudo-terminal helpers (a module attribute: nothing collected twice)
    args = ["tune", "--system", "paper", "-n", "64", "-a", "ring,striped-ring,striped-stages,optree", "-b", "32KB",
            "-e", "4GiB", "-f", "4", "--store", "t.sqlite"]  # long choices ("striped-stages radices=64 ...")
    code, text = out.run_tty(*args, columns=columns, cwd=tmp_path, env={"COLLSIM_PROGRESS_DELAY": "600"})
    assert code == 0, text
    lines = out.screen(text)
    table = lines[:next(i for i, line in enumerate(lines) if line.startswith(("never picked", "tune:")))]
    assert max(len(line) for line in table) <= columns, "\n".join(lines)
    assert "\u2026" not in text and "..." not in text
    docs = json.loads(out.run_pipe(*args, "--json", cwd=tmp_path).stdout)
    shown = "\n".join(lines)
    for d in docs:  # every size and every time, whole
        from collsim.core.units import format_size, format_time
        assert format_size(d["size_bytes"]) in shown and format_time(d["time_s"]) in shown


def test_the_command_prints_csv_and_json_rows(tmp_path):
    common = ["--system", "ring", "-n", "8", "-c", "allreduce", "-a", "ring,recursive-doubling", "-b", "64", "-e",
              "1MiB", "-f", "16"]
    rows = list(csv.DictReader(_tune(tmp_path, *common, "--format", "csv").stdout.splitlines()))
    docs = json.loads(_tune(tmp_path, *common, "--json", "--no-store").stdout)
    assert [int(r["size_bytes"]) for r in rows] == [d["size_bytes"] for d in docs] == [64, 1024, 16384, 262144]
    assert [r["algorithm"] for r in rows] == [d["algorithm"] for d in docs]
    assert {docs[0]["algorithm"], docs[-1]["algorithm"]} == {"recursive-doubling", "ring"}
    for d in docs:
        assert 0 < d["efficiency"] <= 1 + 1e-9 and math.isclose(d["efficiency"], d["lower_bound_s"] / d["time_s"])
        assert d["runner_up_time_s"] >= d["time_s"]
    trials = json.loads(_tune(tmp_path, *common, "--json", "--trials").stdout)
    assert len(trials) == sum(d["tried"] for d in docs) and {"eligible", "params", "error"} <= set(trials[0])


def test_the_command_counts_trials_that_could_not_be_built_as_such(tmp_path):
    args = ["--system", "ocs", "-n", "8", "-c", "alltoall", "-b", "1KiB", "-e", "4KiB", "-f", "4", "-a",
            "pairwise,synth-alltoall", "--no-store"]
    summary = _tune(tmp_path, *args).stderr.strip().splitlines()[-1]
    trials = json.loads(_tune(tmp_path, *args, "--trials", "--json").stdout)
    unbuilt = sum(t["time_s"] is None for t in trials)
    verified = sum(bool(t["verified"]) for t in trials)
    assert unbuilt and verified and unbuilt + verified == len(trials)
    assert summary.startswith(f"tune: {len(trials)} trials: ") and "no store" in summary, summary
    assert f"{verified} built and verified" in summary and f"{unbuilt} could not be built" in summary, summary


def test_the_command_refuses_an_instance_no_schedule_fits_in_memory(tmp_path):
    proc = subprocess.run([collsim_exe(), "tune", "--system", "ring", "-n", "3000000", "-b", "1B", "-e", "2B",
                           "--no-store"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "memory limit" in lines[0] and "TiB" in lines[0], proc.stderr  # the estimate


def test_the_mpich_rules_file(tmp_path):
    _tune(tmp_path, "--system", "torus", "-n", "16", "-c", "allreduce", "-b", "64", "-e", "4KiB", "-f", "4",
          "--rules", "sel.json", "--rules-format", "mpich", "--no-store",
          "-a", "ring,recursive-doubling,rabenseifner,mesh")  # the file's form is the subject: no synth-matching
    doc = json.loads((tmp_path / "sel.json").read_text())
    assert list(doc) == ["collective=allreduce"]
    assert list(doc["collective=allreduce"]["comm_type=intra"]) == ["comm_size<=16"]
    assert not (tmp_path / "cache").exists()  # --no-store writes no store
