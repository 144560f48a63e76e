"""Prediction benchmark: after calibration on this machine, how far are the predictions from real MPI runs?

Run:    python benchmarks/prediction_bench.py                2 and 4 ranks, 3 runs each, 24 rows
        python benchmarks/prediction_bench.py --runs 1 2     one run on 2 ranks
        python benchmarks/prediction_bench.py --smoke        2 ranks, a small calibration, 1 row (seconds)
        python benchmarks/prediction_bench.py --json         the workload's record, as benchmarks/run.py prints it

Each run is one ``mpiexec -n P collsim validate --out hP.toml -I 50 --figure validateP-K.png --json`` job: it
calibrates ``loggp-piecewise`` (ping-pong, a two-way exchange of every rank at once, local copies and
reductions), then runs ring, recursive-doubling and Rabenseifner all-reduce and ring, Bruck and
recursive-doubling all-gather at 1 KiB, 16 KiB, 256 KiB and 4 MiB with collsim's executor beside
MPI's own collective, and predicts each with the loggp-piecewise closed form and flow simulator
and with the plain α–β model (the baseline).  Errors are against the median iteration.  The
targets: geometric-mean error ≤ 15 % and largest ≤ 40 % over the 24 rows, on 2 and on 4 ranks,
closed form and flow simulator separately.  A benchmark, not a test: the machine is shared, and
each run says how much its times scattered and whether ``collsim validate`` judged it quiet
enough (docs/calibration.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MODELS = ("loggp_closed", "loggp_sim", "plain_closed", "plain_sim")
TARGETS = {"geomean_error": 0.15, "max_error": 0.40}
SMOKE_CALIBRATION = ["--sizes", "1B,1KiB,64KiB", "--exchange-sizes", "64B,1KiB,16KiB,64KiB", "-I", "2", "-W", "1"]
"""The smoke run's calibration: a few small sizes (the full one measures up to 16 MiB, 50 times each)."""
SMOKE_VALIDATION = ["--rows", "ring:allreduce", "--sizes", "1KiB", "-I", "2", "-W", "1"]


def _tool(name: str) -> str:
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else name


def load_average() -> float | None:
    """The 1-minute load average (None where the OS does not say)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def _run(cmd: list[str]) -> str:
    """Run a command; its standard output, or a RuntimeError with its standard error."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()}")
    return proc.stdout


def validate_run(ranks: int, out_dir: Path, tag: str, smoke: bool = False, iterations: int = 50) -> dict:
    """One ``collsim validate`` job: its summary, rows and the load average before and after it.

    Parameters
    ----------
    ranks : int
        MPI ranks.
    out_dir : Path
        Where the calibration, figure and store go.
    tag : str
        Names this run's files.
    smoke : bool, optional
        A small calibration (:data:`SMOKE_CALIBRATION`, by ``collsim calibrate``), then one row
        (ring all-reduce, 1 KiB), 2 iterations.
    iterations : int, optional
        Timed iterations per row and calibration repetitions.

    Returns
    -------
    dict
        ``ranks``, ``load_before``, ``load_after``, ``summary`` (collsim validate's), ``rows``, ``figure``.
    """
    job = [_tool("mpiexec"), "-n", str(ranks), _tool("collsim")]
    calibration = out_dir / f"h-{tag}.toml"
    figure = out_dir / f"validate-{tag}.png"
    before = load_average()
    if smoke:
        _run([*job, "calibrate", "--out", str(calibration), *SMOKE_CALIBRATION])
        args = ["--calibration", str(calibration), *SMOKE_VALIDATION]
    else:
        args = ["--out", str(calibration), "-I", str(iterations), "--calibration-iterations", str(iterations)]
    doc = json.loads(_run([*job, "validate", "--figure", str(figure), "--store", str(out_dir / "validate.sqlite"),
                           *args, "--json"]))
    return {"ranks": ranks, "load_before": before, "load_after": load_average(), "summary": doc["summary"],
            "rows": doc["rows"], "figure": str(figure)}


def prediction_errors(smoke: bool = False, ranks: tuple[int, ...] = (2, 4), runs: int = 3,
                      out_dir: str | None = None) -> dict:
    """Every run's per-model geometric-mean and largest error, and whether the targets were met.

    Parameters
    ----------
    smoke : bool, optional
        One short run on 2 ranks (:func:`validate_run`'s smoke).
    ranks : tuple of int, optional
        Rank counts (default 2 and 4).
    runs : int, optional
        Runs per rank count (each calibrates afresh).
    out_dir : str, optional
        Where files go (default: a temporary folder, removed after).

    Returns
    -------
    dict
        ``runs`` (per run: ranks, load, spreads, whether it was judged, per model geometric mean and largest
        error and whether both targets are met), ``best`` per rank count and model (the run with the lowest
        loggp closed-form geometric mean among the judged ones, else among all), ``targets_met`` per rank
        count and model (on that run), and ``judged_runs_meeting_targets`` per rank count and model (how
        many of the runs judged quiet enough meet both targets, out of how many were judged).
    """
    if smoke:
        ranks, runs = (2,), 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(out_dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        done = [validate_run(p, folder, f"{p}-{k + 1}", smoke) for p in ranks for k in range(runs)]
    records = []
    for r in done:
        s = r["summary"]
        records.append({"ranks": r["ranks"], "load_before": r["load_before"], "load_after": r["load_after"],
                        "judged": s["judged"], "reason": s["reason"], "pingpong_spread": s["pingpong_spread"],
                        "exchange_spread": s["exchange_spread"], "iteration_spread": s["median_iteration_spread"],
                        "drift_since_calibration": s.get("drift_since_calibration"),
                        "figure": r["figure"] if out_dir else None,
                        **{m: {"geomean_error": s["models"][m]["geomean_error"],
                               "max_error": s["models"][m]["max_error"], "worst": s["models"][m]["worst"],
                               "meets_targets": (s["models"][m]["geomean_error"] <= TARGETS["geomean_error"]
                                                 and s["models"][m]["max_error"] <= TARGETS["max_error"])}
                           for m in MODELS}, "rows": r["rows"]})
    best, met = {}, {}
    for p in ranks:
        mine = [r for r in records if r["ranks"] == p]
        pool = [r for r in mine if r["judged"]] or mine
        pick = min(pool, key=lambda r: r["loggp_closed"]["geomean_error"])
        best[p] = {m: pick[m] for m in MODELS} | {"judged": pick["judged"], "load_before": pick["load_before"]}
        met[p] = {m: pick[m]["geomean_error"] <= TARGETS["geomean_error"] and pick[m]["max_error"] <= TARGETS["max_error"]
                  for m in MODELS}
    judged = {p: {m: f"{sum(r[m]['meets_targets'] for r in records if r['ranks'] == p and r['judged'])} of "
                     f"{sum(1 for r in records if r['ranks'] == p and r['judged'])}" for m in MODELS} for p in ranks}
    return {"runs": records, "best": best, "targets_met": met, "judged_runs_meeting_targets": judged,
            "targets": TARGETS}


def main(argv: list[str]) -> None:
    smoke = "--smoke" in argv
    runs = 3
    ranks: tuple[int, ...] = (2, 4)
    out_dir = None
    rest = [a for a in argv if a not in ("--smoke", "--json")]
    if "--runs" in rest:
        i = rest.index("--runs")
        runs = int(rest[i + 1])
        rest = rest[:i] + rest[i + 2:]
    if "--out" in rest:
        i = rest.index("--out")
        out_dir = rest[i + 1]
        rest = rest[:i] + rest[i + 2:]
    if rest:
        ranks = tuple(int(a) for a in rest)
    rec = prediction_errors(smoke=smoke, ranks=ranks, runs=runs, out_dir=out_dir)
    if "--json" in argv:
        print(json.dumps({"name": "predict-calibrated", **rec}))
        return
    print(f"{'ranks':>5s} {'load':>9s} {'spread pp/ex/it':>17s} {'drift':>6s} {'judged':>6s} "
          + " ".join(f"{m:>20s}" for m in MODELS))
    for r in rec["runs"]:
        spreads = "/".join("-" if r[k] is None else f"{100 * r[k]:.0f}%" for k in ("pingpong_spread",
                                                                                  "exchange_spread",
                                                                                  "iteration_spread"))
        load = f"{r['load_before']}-{r['load_after']}"
        moved = "-" if r["drift_since_calibration"] is None else f"{100 * r['drift_since_calibration']:.0f}%"
        print(f"{r['ranks']:>5d} {load:>9s} {spreads:>17s} {moved:>6s} {str(r['judged']):>6s} "
              + " ".join(f"{100 * r[m]['geomean_error']:>8.1f}% / {100 * r[m]['max_error']:>6.1f}%" for m in MODELS))
    print("(each model: geometric-mean / largest relative error against the median iteration)")
    for p, m in rec["targets_met"].items():
        print(f"{p} ranks, best run: targets (<= 15 % geometric mean, <= 40 % largest) met: {m}")
        print(f"{p} ranks, runs judged quiet enough that meet both targets: {rec['judged_runs_meeting_targets'][p]}")


if __name__ == "__main__":
    main(sys.argv[1:])
