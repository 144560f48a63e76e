"""``collsim calibrate`` (docs/calibration.md): real mpiexec jobs of 2 and 4 ranks, and the fit's arithmetic.

The MPI jobs check what a calibration must give whatever the machine: one report (rank 0's),
a TOML that ``load_system`` reads as a star of one node per rank, positive and sane
parameters that add up to the fitted α, and a fit that reproduces the measured points within
the error it reports, itself within the documented bound (every point within a factor of
two: relative error < 100 %; and R² > 0, the line explains the times better than their mean).  mpi4py and mpiexec come with the
``[mpi]`` extra: missing, these tests fail, never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import mpi4py  # noqa: F401  (the [mpi] extra: a missing mpi4py fails here)
import numpy as np
import pytest

from collsim.core.errors import InputError, UnsupportedError
from collsim.mpi.calibrate import OVERHEAD_SHARE, Calibration, Fit, Sample, calibration_from, fit_alpha_beta
from collsim.mpi.pingpong import BURST, DEFAULT_SIZES_BYTES, check_sizes
from collsim.systems import load_system
from conftest import collsim_exe, mpiexec, names




def run_mpi(ranks: int, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([mpiexec(), "-n", str(ranks), collsim_exe(), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=240, env={**os.environ, "COLUMNS": "200"})


def check_calibration(path: Path, doc: dict, ranks: int, sizes: list[int], iterations: int) -> None:
    system = load_system(str(path))
    assert (system.topology, system.nodes) == ("star", ranks)
    alpha, beta = doc["alpha_s"], doc["beta_bytes_per_s"]
    assert 1e-8 < alpha < 1e-3, alpha                  # 10 ns .. 1 ms: a message between processes
    assert 1e7 < beta < 1e12, beta                     # 10 MB/s .. 1 TB/s: a copy through memory
    assert system.link_bandwidth_bytes_per_s == beta
    startup = system.startup_s or 0.0
    assert system.link_latency_s >= 0 and 0 <= startup <= alpha
    assert startup + 2 * system.link_latency_s == pytest.approx(alpha, rel=1e-12)
    assert (system.startup_s is not None) == (doc["overhead_s"] >= OVERHEAD_SHARE * alpha)
    rows = doc["rows"]
    assert [r["size_bytes"] for r in rows] == sizes
    assert all(r["count"] == iterations * (ranks - 1) for r in rows)
    assert all(0 < r["min_s"] <= r["median_s"] for r in rows)
    m = np.array(sizes, dtype=float)
    t = np.array([r["min_s"] for r in rows])
    fitted = alpha + m / beta
    assert np.allclose([r["fit_s"] for r in rows], fitted, rtol=1e-12)
    errors = np.abs(fitted - t) / t
    assert errors.max() == pytest.approx(doc["max_relative_error"], rel=1e-9)
    assert doc["max_relative_error"] < 1.0, rows        # the documented bound: within a factor of two
    r2 = 1 - ((t - fitted) ** 2).sum() / ((t - t.mean()) ** 2).sum()
    assert doc["r_squared"] == pytest.approx(r2, rel=1e-9) and doc["r_squared"] > 0, rows
    table = tomllib.loads(path.read_text())["calibration"]   # the file keeps the raw table
    assert table["size_bytes"] == sizes and table["min_s"] == [r["min_s"] for r in rows]
    assert table["alpha_s"] == alpha and table["ranks"] == ranks


def test_two_ranks_write_a_system_that_load_system_reads(tmp_path):
    proc = run_mpi(2, "calibrate", "--model", "alpha-beta", "--out", "host.toml", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)                      # one document: rank 1 prints nothing
    assert doc["ranks"] == 2 and doc["statistic"] == "min" and doc["out"] == "host.toml"
    check_calibration(tmp_path / "host.toml", doc, 2, list(DEFAULT_SIZES_BYTES), 20)
    # the file feeds the models: a compare on the calibrated system runs
    out = subprocess.run([collsim_exe(), "compare", "--system", "host.toml", "-c", "allreduce", "-s", "1MiB",
                          "-a", "ring", "--json"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    row = json.loads(out.splitlines()[0]) if out.lstrip().startswith("{") else json.loads(out)[0]
    assert row["time_s"] > 0


def test_the_default_model_is_loggp_piecewise(tmp_path):
    """calibrate's default writes the model that predicts collectives best (docs/calibration.md), small sizes here."""
    proc = run_mpi(2, "calibrate", "--out", "host.toml", "--sizes", "1B,1KiB,64KiB", "--exchange-sizes",
                   "64B,1KiB,16KiB,64KiB", "-I", "3", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    star = load_system(str(tmp_path / "host.toml"))
    assert star.model is not None and doc["model"]["model"] == "loggp-piecewise"
    assert [r["size_bytes"] for r in doc["exchange"]["rows"]] == [64, 1024, 16384, 65536]
    assert star.link_bandwidth_bytes_per_s == doc["beta_bytes_per_s"]   # the plain line is still the star's links


def test_four_ranks_measure_every_pair_and_print_once(tmp_path):
    sizes = ["1B", "64B", "4KiB", "256KiB", "4MiB"]
    proc = run_mpi(4, "calibrate", "--model", "alpha-beta", "--out", "four.toml", "--sizes", ",".join(sizes),
                   "--iterations", "10", "--name", "four", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("one-way times") == 1          # one report: rank 0's
    names(proc.stdout, "four.toml", "4 nodes")
    path = tmp_path / "four.toml"
    assert load_system(str(path)).name == "four"
    doc = tomllib.loads(path.read_text())["calibration"]
    rows = [dict(zip(("size_bytes", "count", "median_s", "min_s", "fit_s"), v))
            for v in zip(*(doc[k] for k in ("size_bytes", "count", "median_s", "min_s", "fit_s")))]
    check_calibration(path, {**doc, "rows": rows}, 4, [1, 64, 4096, 262144, 4194304], 10)


def test_the_refit_of_a_written_table_is_the_fit_of_the_library(tmp_path, run_cli):
    samples = [Sample(1, 10, 2.5e-6, 2.001e-6), Sample(1000, 10, 3.5e-6, 3e-6), Sample(10**6, 10, 1.5e-3, 1.002e-3)]
    cal = calibration_from(samples, overhead_s=1e-6, ranks=2, iterations=10)
    cal.write(tmp_path / "c.toml")                     # run_cli runs in this test's tmp_path
    proc = run_cli("calibrate", "--refit", "c.toml", "--statistic", "median", "--out", "m.toml", "--json", check=True)
    doc = json.loads(proc.stdout)
    again = calibration_from(samples, 1e-6, 2, 10, "median")
    assert doc["alpha_s"] == again.fit.alpha_s and doc["beta_bytes_per_s"] == again.fit.beta_bytes_per_s
    assert load_system(str(tmp_path / "m.toml")).link_bandwidth_bytes_per_s == again.fit.beta_bytes_per_s


def test_the_fit_recovers_alpha_and_beta_and_weighs_relative_errors():
    m = np.array(DEFAULT_SIZES_BYTES, dtype=float)
    fit = fit_alpha_beta(m, 2e-6 + m / 5e9)
    assert fit.alpha_s == pytest.approx(2e-6, rel=1e-9) and fit.beta_bytes_per_s == pytest.approx(5e9, rel=1e-9)
    assert fit.r_squared == pytest.approx(1.0) and fit.max_relative_error < 1e-9
    # 10 % noise on the large messages only: the small ones still give α (an unweighted fit would not)
    noisy = (2e-6 + m / 5e9) * np.where(m >= 2**20, 1.1, 1.0)
    assert fit_alpha_beta(m, noisy).alpha_s == pytest.approx(2e-6, rel=0.05)
    with pytest.raises(UnsupportedError, match="do not grow"):
        fit_alpha_beta([1, 1000, 10**6], [3e-3, 2e-3, 1e-3])
    with pytest.raises(UnsupportedError, match="at least two points"):
        fit_alpha_beta([1], [1e-6])


def test_the_overhead_is_asked_for_at_a_tenth_of_alpha():
    samples = [Sample(1, 1, 3e-6, 2.001e-6), Sample(10**6, 1, 2e-3, 1.002e-3)]     # α = 2 µs, β = 1 GB/s
    below = calibration_from(samples, OVERHEAD_SHARE * 2e-6 * 0.99, 2, 1)
    at = calibration_from(samples, OVERHEAD_SHARE * 2e-6 * 1.01, 2, 1)
    assert below.startup_s is None and below.link_latency_s == pytest.approx(1e-6)
    assert at.startup_s == pytest.approx(2.02e-7) and at.link_latency_s == pytest.approx((2e-6 - 2.02e-7) / 2)
    huge = calibration_from(samples, 1.0, 2, 1)                    # never more than α: latency >= 0
    assert huge.startup_s == pytest.approx(2e-6) and huge.link_latency_s == pytest.approx(0, abs=1e-15)
    assert BURST >= 2


def test_the_toml_reads_back_with_and_without_startup(tmp_path):
    for startup in (None, 5e-7):
        cal = Calibration(3, "min", 4, (Sample(1, 8, 2e-6, 1e-6),), Fit(1e-6, 2e9, 0.9, 0.1), 5e-7, startup)
        path = tmp_path / f"s{startup}.toml"
        cal.write(path, name='odd "name"')
        system = load_system(str(path))
        assert (system.name, system.nodes, system.startup_s) == ('odd "name"', 3, startup)
        assert system.link_bandwidth_bytes_per_s == 2e9


@pytest.mark.parametrize("sizes, words", [([1], "at least two"), ([0, 4], "1 B to 1 GiB"), ([1, 2**31], "1 GiB")])
def test_bad_sizes_are_refused(sizes, words):
    with pytest.raises(InputError, match=words):
        check_sizes(sizes)


def test_bad_statistic_is_refused():
    with pytest.raises(InputError, match="median or min"):
        calibration_from([Sample(1, 1, 1e-6, 1e-6), Sample(2, 1, 2e-6, 2e-6)], 0.0, 2, 1, "mean")
