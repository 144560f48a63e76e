"""``collsim calibrate --model loggp-piecewise`` and ``collsim validate`` (issue 25, docs/calibration.md).

The fits are checked on synthetic tables with a known answer (breakpoints, segments, local costs);
the MPI jobs check what a run must give whatever the machine (the structure of the file, the
table, the figure, the store, the refusal to judge a noisy machine), never a timing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from collsim.core.errors import InputError, UnsupportedError
from collsim.mpi.calibrate import Sample, calibration_from
from collsim.mpi.loggp_calibrate import loggp_calibration_from, samples_from_table, spread_of
from collsim.mpi.loggp_fit import fit_linear, fit_piecewise
from collsim.mpi.validate import ValidationRow, parse_pairs, summarize
from collsim.systems import load_system
from conftest import collsim_exe, names, refusal
from test_mpi_calibrate import run_mpi

pytestmark = pytest.mark.schedule_first(28)  # about 28 s of work: handed out early (tests/conftest.py)

SIZES = [2**k for k in range(6, 25)]


def _protocol(m):
    """Three regimes, as MPICH on shared memory: eager, a middle range, rendezvous out of the caches."""
    m = np.asarray(m, dtype=float)
    return np.where(m <= 4096, 3e-6 + m / 4e9, np.where(m <= 524288, 5e-6 + m / 1.1e10, 2e-6 + m / 6e9))


def test_piecewise_fit_finds_the_protocol_switches():
    f = fit_piecewise(SIZES, _protocol(SIZES))
    assert f.breakpoints_bytes == (4096, 524288)
    assert f.alpha_s == pytest.approx((3e-6, 5e-6, 2e-6), rel=1e-6)
    assert f.beta_bytes_per_s == pytest.approx((4e9, 1.1e10, 6e9), rel=1e-6)
    assert f.max_relative_error < 1e-6


def test_piecewise_fit_of_a_noisy_line_predicts_the_line():
    # whether the criterion keeps one segment or buys one on the noise, the predictions stay on the line
    m = np.array(SIZES, dtype=float)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        t = (2e-6 + m / 1e10) * (1 + 0.03 * rng.standard_normal(len(m)))
        f = fit_piecewise(m, t)
        off = np.abs(f.predict_s(m) / (2e-6 + m / 1e10) - 1).max()
        assert off < np.abs(t / (2e-6 + m / 1e10) - 1).max() and off < 0.07, (seed, f)   # never worse than the data


def test_piecewise_fit_through_noise():
    rng = np.random.default_rng(11)
    t = _protocol(SIZES) * (1 + 0.05 * rng.standard_normal(len(SIZES)))
    f = fit_piecewise(SIZES, t)
    assert f.breakpoints_bytes == (4096, 524288)
    assert f.max_relative_error < 0.2


def test_one_size_measured_during_a_burst_does_not_drag_its_segment():
    t = _protocol(SIZES)
    t[-1] *= 3                      # 16 MiB measured while another job ran
    f = fit_piecewise(SIZES, t)
    assert f.breakpoints_bytes == (4096, 524288)
    assert f.beta_bytes_per_s[2] == pytest.approx(6e9, rel=0.05)   # nnls alone on the segment: 6.85 GB/s


def test_fits_refuse_bad_tables():
    with pytest.raises(UnsupportedError):
        fit_piecewise([1, 2], [1e-6, 2e-6])
    with pytest.raises(UnsupportedError):
        fit_piecewise([1, 2, 3], [1e-6, 0.0, 2e-6])
    with pytest.raises(UnsupportedError):
        fit_linear([1, 1], [1e-6, 2e-6])


def _calibration():
    ping = [Sample(m, 20, 1.5e-6 + m / 1.2e10, 1.2e-6 + m / 1.3e10, 1.4e-6 + m / 1.2e10, 1.6e-6 + m / 1.2e10)
            for m in (1, 1024, 2**20, 2**24)]
    plain = calibration_from(ping, 7e-7, ranks=2, iterations=20)
    exchange = [Sample(m, 50, float(t), float(t) * 0.9, float(t) * 0.95, float(t) * 1.05)
                for m, t in zip(SIZES, _protocol(SIZES))]
    copies = [Sample(m, 50, 2e-7 + m / 5e10, 2e-7) for m in SIZES]
    reductions = [Sample(m, 50, 3e-7 + m / 4e10, 3e-7) for m in SIZES]
    return loggp_calibration_from(plain, exchange, copies, reductions, "int64", "sum")


def test_the_file_carries_the_model_and_refits_to_the_same(tmp_path):
    cal = _calibration()
    path = tmp_path / "host.toml"
    cal.write(path)
    star = load_system(str(path))
    assert star.model == cal.model() and star.model.breakpoints_bytes == (4096, 524288)
    assert star.link_bandwidth_bytes_per_s == cal.plain.fit.beta_bytes_per_s   # the plain model, as before
    assert star.model.reduce_time_s(2**20) == pytest.approx(3e-7 + 2**20 / 4e10, rel=1e-6)
    out = tmp_path / "again.toml"
    done = subprocess.run([collsim_exe(), "calibrate", "--model", "loggp-piecewise", "--refit", str(path),
                           "--out", str(out), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["model"]["breakpoints_bytes"] == [4096, 524288] and doc["pingpong_spread"] == pytest.approx(
        spread_of(cal.plain.samples))
    assert load_system(str(out)).model == star.model


def test_refit_without_the_exchange_table_is_one_line_and_exit_2(tmp_path):
    plain = _calibration().plain
    path = tmp_path / "plain.toml"
    plain.write(path)
    done = subprocess.run([collsim_exe(), "calibrate", "--model", "loggp-piecewise", "--refit", str(path),
                           "--out", str(tmp_path / "x.toml")], capture_output=True, text=True, timeout=120)
    assert done.stdout == ""
    names(refusal(done), "plain.toml", "alpha-beta", "loggp-piecewise")   # the file, what it is, what is needed
    assert not (tmp_path / "x.toml").exists()
    with pytest.raises(InputError, match="malformed"):
        samples_from_table({"exchange": {"size_bytes": [1]}, "local": {}}, "f.toml")


def test_refit_fits_the_model_the_file_carries_by_default(tmp_path, run_cli):
    _calibration().write(tmp_path / "host.toml")              # run_cli runs in tmp_path
    _calibration().plain.write(tmp_path / "plain.toml")
    doc = json.loads(run_cli("calibrate", "--refit", "host.toml", "--out", "a.toml", "--json", check=True).stdout)
    assert doc["model"]["model"] == "loggp-piecewise" and load_system(str(tmp_path / "a.toml")).model is not None
    doc = json.loads(run_cli("calibrate", "--refit", "plain.toml", "--out", "b.toml", "--json", check=True).stdout)
    assert "model" not in doc and load_system(str(tmp_path / "b.toml")).model is None


def _row(median, *preds):
    return ValidationRow("ring", "allgather", 2, 1024, median, median, median, 0.1, median, *preds)


def test_summary_is_the_geometric_mean_and_the_largest_error():
    rows = [_row(1e-5, 1.1e-5, 0.9e-5, 0.5e-5, 0.5e-5), _row(1e-3, 0.99e-3, 1.05e-3, 0.2e-3, 0.2e-3)]
    s = summarize(rows, 0.05)
    closed = s["models"]["loggp_closed"]
    assert closed["geomean_error"] == pytest.approx((0.1 * 0.01) ** 0.5)
    assert closed["max_error"] == pytest.approx(0.1) and closed["meets_targets"]
    assert s["models"]["plain_closed"]["max_error"] == pytest.approx(0.8)
    assert not s["models"]["plain_closed"]["meets_targets"]


def test_summary_refuses_to_judge_a_noisy_or_unknown_machine():
    rows = [_row(1e-5, 1e-5, 1e-5, 1e-5, 1e-5)]
    for spread in (0.3, None):
        s = summarize(rows, spread)
        assert not s["judged"] and all("meets_targets" not in m for m in s["models"].values())
    assert "too noisy" in summarize(rows, 0.3)["reason"]


def test_summary_refuses_to_judge_a_machine_that_moved_since_its_calibration():
    from collsim.mpi.validate import drift
    cal = [Sample(1024, 50, 3e-6, 2e-6), Sample(65536, 50, 1e-5, 9e-6), Sample(2**20, 50, 1e-4, 9e-5)]
    moved = drift(cal, {1024: [9e-6, 9e-6], 65536: [3e-5], 2**20: [1.05e-4]})   # 3x, 3x and +5 %
    assert moved == pytest.approx(2.0)
    s = summarize([_row(1e-5, 1e-5, 1e-5, 1e-5, 1e-5)], 0.05, drift_since_calibration=moved)
    assert not s["judged"] and "load changed since the calibration" in s["reason"]
    assert summarize([_row(1e-5, 1e-5, 1e-5, 1e-5, 1e-5)], 0.05, drift_since_calibration=0.1)["judged"]


def test_rows_option():
    assert parse_pairs(None)[0] == ("ring", "allreduce") and len(parse_pairs(None)) == 6
    with pytest.raises(InputError, match="ALGORITHM:COLLECTIVE"):
        parse_pairs("ring")


def test_validate_job_writes_the_table_figure_and_store(tmp_path: Path):
    """A short real 2-rank job: structure only (the machine's times are what they are)."""
    done = run_mpi(2, "validate", "--out", "host.toml", "--rows", "ring:allreduce,bruck:allgather", "--sizes",
                   "1KiB,64KiB", "-I", "5", "-W", "1", "--calibration-iterations", "5", "--figure", "v.png",
                   "--store", "r.sqlite", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)        # one report: rank 0's
    rows = doc["rows"]
    assert [(r["algorithm"], r["size_bytes"]) for r in rows] == [("ring", 1024), ("ring", 65536), ("bruck", 1024),
                                                                  ("bruck", 65536)]
    for r in rows:
        assert 0 < r["min_s"] <= r["median_s"] and r["native_median_s"] > 0
        assert r["loggp_closed_s"] > 0 and r["plain_closed_s"] > 0
        assert r["loggp_closed_error_pct"] == pytest.approx(      # rounded to 6 decimals
            100 * (r["loggp_closed_s"] - r["median_s"]) / r["median_s"], abs=1e-6)
    assert set(doc["summary"]["models"]) == {"loggp_closed", "loggp_sim", "plain_closed", "plain_sim"}
    assert (tmp_path / "v.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    star = load_system(str(tmp_path / "host.toml"))
    assert star.nodes == 2 and star.model is not None
    from collsim.experiments.sweep.store import Store
    stored = Store(str(tmp_path / "r.sqlite")).records()
    assert sorted((r["result"]["algorithm"], r["result"]["size_bytes"]) for r in stored) == \
        sorted((r["algorithm"], r["size_bytes"]) for r in rows)
    again = run_mpi(2, "validate", "--calibration", "host.toml", "--rows", "ring:allgather", "--sizes", "1KiB",
                    "-I", "2", "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(json.loads(again.stdout)["rows"]) == 1


def test_validate_refuses_a_calibration_of_another_rank_count(tmp_path: Path):
    _calibration().write(tmp_path / "host.toml")          # 2 ranks
    done = run_mpi(4, "validate", "--calibration", "host.toml", "--sizes", "1KiB", cwd=tmp_path)
    assert done.stdout == ""
    names(refusal(done), "host.toml", "mpiexec -n 2", "4")           # the file, the ranks it calibrated, the job's


CUSTOM_RING6 = "[system]\nkind = \"custom\"\nnodes = 6\n" + "".join(
    f"\n[[system.link]]\na = {i}\nb = {(i + 1) % 6}\n" for i in range(6))


def test_validate_says_what_a_file_that_is_not_its_calibration_is(tmp_path: Path):
    (tmp_path / "ring6.toml").write_text(CUSTOM_RING6)    # a custom network: a system file, no calibration
    _calibration().plain.write(tmp_path / "plain.toml")     # a plain alpha-beta calibration of 2 ranks
    done = run_mpi(2, "validate", "--calibration", "ring6.toml", "--sizes", "1KiB", cwd=tmp_path)
    names(refusal(done), "ring6.toml", "custom", "[calibration]")       # what the file is, what it lacks
    done = run_mpi(2, "validate", "--calibration", "plain.toml", "--sizes", "1KiB", cwd=tmp_path)
    names(refusal(done), "plain.toml", "alpha-beta", "loggp-piecewise")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.toml", "ring6.toml"]   # nothing measured or written


def test_validate_refuses_an_unknown_row_before_it_calibrates(tmp_path: Path):
    done = run_mpi(2, "validate", "--rows", "rnig:allreduce", "--out", "host.toml", cwd=tmp_path)
    names(refusal(done), "rnig")
    assert not (tmp_path / "host.toml").exists()          # refused before a minute of calibration, not after


def test_prediction_benchmark_smoke_run(tmp_path: Path):
    """benchmarks/prediction_bench.py --smoke: a small calibration and one validated row, whose record must
    agree with its own row: each model's errors are that row's, the targets are judged from them, and on a
    star the closed form and the flow simulator predict alike (one message per rank and step)."""
    import sys
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "prediction_bench.py"
    done = subprocess.run([sys.executable, str(script), "--smoke", "--json"], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rec = json.loads(done.stdout)
    assert rec["name"] == "predict-calibrated" and len(rec["runs"]) == 1
    run = rec["runs"][0]
    (row,) = run["rows"]
    assert (run["ranks"], row["nodes"], row["algorithm"], row["collective"], row["size_bytes"]) == \
        (2, 2, "ring", "allreduce", 1024)
    assert 0 < row["min_s"] <= row["median_s"] and isinstance(run["judged"], bool) and run["reason"]
    for m in ("loggp_closed", "loggp_sim", "plain_closed", "plain_sim"):
        error = abs(row[f"{m}_s"] - row["median_s"]) / row["median_s"]
        assert row[f"{m}_s"] > 0 and abs(row[f"{m}_error_pct"]) == pytest.approx(100 * error, abs=1e-5)
        assert run[m]["geomean_error"] == pytest.approx(error) and run[m]["max_error"] == pytest.approx(error)
        assert run[m]["meets_targets"] == (error <= 0.15 and error <= 0.40) == rec["targets_met"]["2"][m]
    for model in ("loggp", "plain"):
        assert row[f"{model}_sim_s"] == pytest.approx(row[f"{model}_closed_s"], rel=1e-9)
