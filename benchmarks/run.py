"""Benchmarks: wall time and peak memory of collsim's reference workloads.

Run all:        python benchmarks/run.py
Run some:       python benchmarks/run.py osm-1024 ring-4096
List:           python benchmarks/run.py --list
Smoke test:     python benchmarks/run.py --smoke   (every workload at a small size; exit 1 if any fails;
                                                    the test suite runs it, so no workload silently breaks;
                                                    without the [mpi] extra, no mpiexec or mpi4py, the MPI
                                                    workloads are skipped and the run says so)
Untuned malloc: python benchmarks/run.py --no-malloc-tuning   (see src/collsim/_malloc.py)
Repeat:         python benchmarks/run.py --repeat 5 optree-4096   (median, min and max wall time)
Before/after:   python benchmarks/run.py --against 8db759e [--repeat 3] [workloads]
                (each workload run alternately on a worktree of that revision, with that revision's own
                workload code, and on this tree; the medians side by side and their ratio, and exit 1 if
                any workload is more than 10 % slower: one run, so both sides see the same machine load)

Each workload runs in its own interpreter so that its peak resident memory
(ru_maxrss) is its own; a smoke run, whose figures mean nothing, runs them all in one.  Targets (this 2-core machine): default
compare < 15 s; OSM at N=1024 (about a million lightpaths) < 20 s and 2 GiB;
cost growing no faster than lightpaths x log.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

WORKLOADS: dict[str, tuple[str, str]] = {}
NEEDS: dict[str, tuple[str, ...]] = {}
"""What a workload needs besides collsim: ``mpiexec`` and ``mpi4py`` come with the ``[mpi]`` extra."""


def workload(name: str, target: str, needs: tuple[str, ...] = ()):
    def deco(fn):
        WORKLOADS[name] = (fn.__name__, target)
        NEEDS[name] = needs
        return fn
    return deco


def _which(tool: str) -> str | None:
    """A program next to this interpreter (a virtual environment's bin) or on the PATH, or None."""
    import shutil
    here = Path(sys.executable).parent / tool
    return str(here) if here.exists() else shutil.which(tool)


def _importable(module: str) -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def unavailable(name: str) -> str | None:
    """Why a workload cannot run on this install (a missing ``mpiexec`` or ``mpi4py``), or None."""
    missing = [n for n in NEEDS.get(name, ()) if not (_importable(n) if n == "mpi4py" else _which(n))]
    if not missing:
        return None
    return f"{' and '.join(missing)} not found (install collsim[mpi]: pip install 'collsim[mpi]')"


SMOKE = False  # set by --smoke: every workload at a small size


def _n(full: int, small: int) -> int:
    return small if SMOKE else full


def _build_verify(alg: str, n: int, coll: str = "allgather", w: int = 64, **params) -> dict:
    import collsim
    from collsim.pipeline import schedule_time_s
    n = _n(n, 16)
    t0 = time.perf_counter()
    s = collsim.build(alg, "paper", coll, "4MiB", nodes=n, wavelengths=w, **params)
    t1 = time.perf_counter()
    rep = collsim.verify(s)
    t2 = time.perf_counter()
    schedule_time_s(s, report=rep)
    t3 = time.perf_counter()
    return {"transfers": rep.transfers, "steps": rep.steps, "build_s": t1 - t0, "verify_s": t2 - t1,
            "time_model_s": t3 - t2}


@workload("compare-default", "< 15 s")
def compare_default() -> dict:
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    proc = subprocess.run(cmd + ["compare", "--json"] + (["--nodes", "16"] if SMOKE else []), capture_output=True,
                          text=True, check=True)
    rows = json.loads(proc.stdout)
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"algorithms": [r["algorithm"] for r in rows], "verified": all(r["verified"] for r in rows),
            "child_peak_rss_mib": child / 1024}


@workload("osm-1024", "< 20 s, < 2 GiB")
def osm_1024() -> dict:
    return _build_verify("osm", 1024)


@workload("ring-4096", "-")
def ring_4096() -> dict:
    return _build_verify("ring", 4096)


@workload("ne-4096", "-")
def ne_4096() -> dict:
    return _build_verify("ne", 4096)


@workload("wrht-4096", "< 3 s")
def wrht_4096() -> dict:
    return {"allreduce": _build_verify("wrht", 4096, "allreduce"), "allgather": _build_verify("wrht", 4096)}


@workload("optree-4096", "< 5 s incl. exact search")
def optree_4096() -> dict:
    return _build_verify("optree", 4096)


@workload("compare-2048", "< 30 s, every optical algorithm")
def compare_2048() -> dict:
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    proc = subprocess.run(cmd + ["compare", "--nodes", str(_n(2048, 32)), "--json"], capture_output=True, text=True,
                          check=True)
    rows = json.loads(proc.stdout)
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"algorithms": [r["algorithm"] for r in rows], "steps": {r["algorithm"]: r["steps"] for r in rows},
            "child_peak_rss_mib": child / 1024}


def _simulate(alg: str, system, collective: str, size: str) -> dict:
    """Build, verify and simulate (each phase timed)."""
    import collsim
    from collsim.sim import simulate
    t0 = time.perf_counter()
    s = collsim.build(alg, system, collective, size)
    t1 = time.perf_counter()
    rep = collsim.verify(s, answer=False)  # verification alone: the simulation is timed below
    t2 = time.perf_counter()
    r = simulate(s, report=rep)
    t3 = time.perf_counter()
    return {"transfers": len(s), "steps": s.num_steps, "build_s": t1 - t0, "verify_s": t2 - t1,
            "simulate_s": t3 - t2, "simulated_time_s": r.total_time_s, "max_link_load": r.max_link_load}


@workload("sim-ne-ring-1024", "< 5 s")
def sim_ne_ring() -> dict:
    from collsim.kinds.network.electrical import Ring
    return _simulate("ne", Ring(nodes=_n(1024, 16)), "allgather", "1MiB")


@workload("sim-ne-ring-2048", "build + verify + simulate < 1.5 s, < 300 MiB")
def sim_ne_ring_2048() -> dict:
    from collsim.kinds.network.electrical import Ring
    return _simulate("ne", Ring(nodes=_n(2048, 16)), "allgather", "1MiB")


@workload("trace-ne-ring-1024", "simulate + --trace of NE all-gather, Ring(1024), 1 MiB: trace < 10 s, < 512 MiB")
def trace_ne_ring() -> dict:
    import tempfile

    import collsim
    from collsim.interop.trace.network import write_simulation_trace
    from collsim.sim import simulate
    from collsim.kinds.network.electrical import Ring
    s = collsim.build("ne", Ring(nodes=_n(1024, 16)), "allgather", "1MiB")
    rep = collsim.verify(s, answer=False)  # verification alone: the simulation is timed below
    t0 = time.perf_counter()
    r = simulate(s, report=rep)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        out = write_simulation_trace(Path(d) / "ne.json", s, r)
    t2 = time.perf_counter()
    return {"transfers": len(s), "simulate_s": t1 - t0, "trace_s": t2 - t1, "events": out.events,
            "file_mib": out.size_bytes / 2**20}


@workload("sim-pairwise-fattree-1024", "build + verify + simulate < 5 s")
def sim_pairwise_fattree() -> dict:
    from collsim.kinds.network.fat_tree import FatTree
    return _simulate("pairwise", FatTree.from_options(nodes=_n(1024, 16)), "alltoall", "64KiB")


@workload("sim-pairwise-fattree-4096", "build + verify + simulate < 60 s, < 8 GiB")
def sim_pairwise_fattree_4096() -> dict:
    from collsim.kinds.network.fat_tree import FatTree
    return _simulate("pairwise", FatTree.from_options(nodes=_n(4096, 32)), "alltoall", "64KiB")


@workload("msccl-alltoall-64", "pairwise all-to-all, 64 ranks on a star: MSCCL XML export + import + verify")
def msccl_alltoall_64() -> dict:
    import os
    import tempfile

    import collsim
    from collsim.interop.msccl.files import export_msccl, import_msccl
    n = _n(64, 8)
    s = collsim.build("pairwise", "star", "alltoall", "64KiB", nodes=n)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a2a.xml")
        t0 = time.perf_counter()
        algo = export_msccl(s, path)
        t1 = time.perf_counter()
        got = import_msccl(path, size_bytes=s.collective.size_bytes)
        t2 = time.perf_counter()
        size = os.path.getsize(path)
    return {"nodes": n, "transfers": len(s), "msccl_steps": algo.num_steps(), "xml_bytes": size,
            "export_s": t1 - t0, "import_verify_s": t2 - t1, "imported_steps": got.schedule.num_steps}


@workload("osm-4096", "build + verify < 30 s")
def osm_4096() -> dict:
    return _build_verify("osm", 4096)


@workload("ring-stripe-1024", "ring -p stripe=64, N=1024, w=64: build + verify < 5 s")
def ring_stripe_1024() -> dict:
    return _build_verify("ring", 1024, stripe=64)


@workload("striped-allgather-4096", "striped-ring all-gather, N=4096, w=64: build + verify < 30 s")
def striped_allgather_4096() -> dict:
    return _build_verify("striped-ring", 4096)


@workload("striped-stages-4096", "striped-stages all-gather (default radices), N=4096, w=64: build + verify < 30 s")
def striped_stages_4096() -> dict:
    return _build_verify("striped-stages", 4096)


def _cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``collsim *args`` in its own process; (result, wall seconds).  Peak memory: child_peak_rss_mib."""
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + list(args), capture_output=True, text=True)
    return proc, time.perf_counter() - t0


@workload("compare-allreduce-4096", "collsim compare -n 4096 -c allreduce: completes, < 4 GiB")
def compare_allreduce_4096() -> dict:
    proc, wall = _cli("compare", "-n", str(_n(4096, 16)), "-c", "allreduce", "--json")
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    rows = json.loads(proc.stdout)
    return {"wall_s": wall, "algorithms": [r["algorithm"] for r in rows],
            "verified": all(r["verified"] for r in rows),
            "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("striped-billion-wavelengths", "collsim compare -n 16 -w 1000000000: < 2 s, < 100 MiB")
def striped_billion_wavelengths() -> dict:
    proc, wall = _cli("compare", "-n", "16", "-w", "1000000000", "--json")
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    rows = json.loads(proc.stdout)
    return {"wall_s": wall, "wavelengths_used": {r["algorithm"]: r["wavelengths_used"] for r in rows
                                                 if r["algorithm"].startswith("striped")},
            "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("msccl-refuse-5000", "export msccl ring, star, N=5000, all-reduce: refused naming --max-steps, < 2 s")
def msccl_refuse_5000() -> dict:
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        proc, wall = _cli("export", "msccl", "ring", "--system", "star", "-n", str(_n(5000, 100)), "-c", "allreduce",
                          "--out", str(Path(d) / "big.xml"))
    if proc.returncode != 2 or "--max-steps" not in proc.stderr:
        raise RuntimeError(f"not refused: {proc.returncode} {proc.stderr.strip()}")
    return {"wall_s": wall, "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("torus-64x64", "torus-striped all-gather on a 64x64 optical torus (4096 nodes), w=64: build + verify")
def torus_64x64() -> dict:
    import collsim
    from collsim.systems import load_system
    side = _n(64, 4)
    t0 = time.perf_counter()
    s = collsim.build("torus-striped", load_system("optical-torus", rows=side, cols=side, wavelengths=64),
                      "allgather", "4MiB")
    t1 = time.perf_counter()
    rep = collsim.verify(s)
    t2 = time.perf_counter()
    return {"nodes": side * side, "transfers": rep.transfers, "steps": rep.steps, "build_s": t1 - t0,
            "verify_s": t2 - t1}


@workload("ring-alltoall-512", "striped-relay-alltoall, N=512, w=64, 4 MiB: build + verify, at the bisection bound")
def ring_alltoall_512() -> dict:
    import collsim
    from collsim.pipeline import evaluate
    n = _n(512, 16)
    t0 = time.perf_counter()
    s = collsim.build("striped-relay-alltoall", "paper", "alltoall", "4MiB", nodes=n, wavelengths=64)
    t1 = time.perf_counter()
    rep = collsim.verify(s)
    t2 = time.perf_counter()
    row = evaluate(s, report=rep)
    return {"nodes": n, "build_s": t1 - t0, "verify_s": t2 - t1, "efficiency": row.efficiency,
            "feasible": row.feasible}


@workload("tune-paper-64", "collsim tune, paper N=64 all-gather, 32KB..4GiB x4: fresh store < 60 s, rerun from the store")
def tune_paper_64() -> dict:
    import tempfile
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    n, end = ("16", "1MiB") if SMOKE else ("64", "4GiB")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        args = cmd + ["tune", "--system", "paper", "-n", n, "-c", "allgather", "-b", "32KB", "-e", end, "-f", "4",
                      "--store", str(Path(tmp) / "t.sqlite"), "--rules", str(Path(tmp) / "r.json"), "--json"]
        for run in ("first", "second"):
            t0 = time.perf_counter()
            proc = subprocess.run(args, capture_output=True, text=True, check=True)
            out[f"{run}_run_s"] = time.perf_counter() - t0
        rows = json.loads(proc.stdout)
        out["winners"] = sorted({r["algorithm"] for r in rows})
        out["min_efficiency"] = min(r["efficiency"] for r in rows)
    return out


@workload("reproduce-beyond", "collsim reproduce beyond --jobs 2: best feasible schedule >= 5x OpTree at every seed-004 grid point, all-reduce efficiency >= 0.83; peak <= 4 GiB, every build in a process of its own")
def reproduce_beyond() -> dict:
    import csv
    import tempfile
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    with tempfile.TemporaryDirectory() as tmp:
        args = cmd + ["reproduce", "beyond", "--out", tmp, "--jobs", "2", "--json"] + (["--quick"] if SMOKE else [])
        t0 = time.perf_counter()
        subprocess.run(args, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        with open(Path(tmp) / "beyond-best.csv") as fh:
            best = list(csv.DictReader(fh))
        with open(Path(tmp) / "beyond-allreduce.csv") as fh:
            ar = list(csv.DictReader(fh))
    speed = [float(r["speedup_vs_optree"]) for r in best if r["speedup_vs_optree"]]
    per_size: dict = {}
    for r in ar:
        if r["feasible"] == "True":
            per_size[r["size_bytes"]] = max(per_size.get(r["size_bytes"], 0.0), float(r["efficiency"]))
    return {"run_s": wall, "points": len(best), "min_speedup_vs_optree": min(speed),
            "points_below_5x": sum(x < 5 for x in speed), "min_allreduce_efficiency": min(per_size.values()),
            "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("mpi-ring-8", "collsim mpi ring all-gather and all-reduce, 8 ranks: ratio to MPICH <= 1.5 at 16 MiB",
          needs=("mpiexec", "mpi4py"))
def mpi_ring_8() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mpi_bench import mpi_ring_ratios
    return mpi_ring_ratios(smoke=SMOKE)


@workload("mpi-refuse-64gib", "mpiexec -n 2 collsim mpi -s 64GiB, validate --sizes 64GiB, calibrate beyond "
                             "COLLSIM_MEMORY_LIMIT: each refused with its estimate, < 2 s, < 300 MiB a rank",
          needs=("mpiexec", "mpi4py"))
def mpi_refuse_64gib() -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mpi_bench import memory_refusals
    return memory_refusals()


@workload("predict-calibrated", "after collsim calibrate --model loggp-piecewise: median-iteration prediction error "
                               "<= 15 % geometric mean, <= 40 % largest, over 24 rows on 2 and 4 ranks",
          needs=("mpiexec", "mpi4py"))
def predict_calibrated() -> dict:
    """``benchmarks/prediction_bench.py``: collsim validate on 2 and 4 ranks, 3 runs each (smoke: 1 row, 2 ranks)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from prediction_bench import prediction_errors
    rec = prediction_errors(smoke=SMOKE)
    for r in rec["runs"]:
        r.pop("rows")  # the per-row figures are in the validate store; the record keeps the summaries
    return rec


@workload("osm-1024-npz", "save + load + verify of the .npz file < 3 s; <= 24 bytes a transfer in the file")
def osm_1024_npz() -> dict:
    import tempfile

    import collsim
    from collsim.core.serialize import load, save
    s = collsim.build("osm", "paper", "allgather", "4MiB", nodes=_n(1024, 16))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "osm.npz"
        t0 = time.perf_counter()
        save(s, path)
        t1 = time.perf_counter()
        again = load(path)
        t2 = time.perf_counter()
        collsim.verify(again)
        t3 = time.perf_counter()
        size = path.stat().st_size
    # the file's columns are narrowed and its one-entry pointers left out (collsim.core.binary); in memory
    # every transfer keeps its int64 columns
    return {"transfers": len(s), "file_mib": size / 2**20, "file_bytes_per_transfer": size / len(s),
            "memory_bytes_per_transfer": s.nbytes() / len(s), "save_s": t1 - t0, "load_s": t2 - t1,
            "verify_s": t3 - t2, "save_load_verify_s": t3 - t0}


@workload("hier-8192-compact-file", "hier-allreduce on 8,192 GPUs as a version-4 file: save + load + verify + "
                                   "simulate < 60 s, < 4 GiB; the file < 1 % of the explicit schedule's 68 B a transfer")
def hier_8192_compact_file() -> dict:
    """Representatives and their group written, read back, verified on the orbits and simulated
    (docs/schedule-format.md, "Representatives and their group"; smoke: 32 GPUs)."""
    import tempfile

    from collsim.core.serialize import load, save
    from collsim.pipeline import build_symmetric, simulate_compact, verify
    dims = f"switch:8:300GB/s,fat-tree:{_n(1024, 4)}:50GB/s"
    t0 = time.perf_counter()
    sym = build_symmetric("hier-allreduce", "hierarchical", "allreduce", "256MiB", system_options={"dims": dims})
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "hier.npz"
        save(sym, path, expand=False)
        t2 = time.perf_counter()
        back = load(path, expand=False)
        t3 = time.perf_counter()
        report = verify(back)
        t4 = time.perf_counter()
        sim = simulate_compact(back, report=report)
        t5 = time.perf_counter()
        size = path.stat().st_size
    assert report.transfers == sym.transfers and sim.verified
    return {"gpus": sym.system.nodes, "transfers": sym.transfers, "representatives": len(sym.reps),
            "file_mib": size / 2**20, "file_fraction_of_explicit": size / (68 * sym.transfers),
            "build_s": t1 - t0, "save_s": t2 - t1, "load_s": t3 - t2, "verify_s": t4 - t3, "simulate_s": t5 - t4,
            "simulated_time_s": sim.total_time_s}


@workload("cli-version", "collsim --version whole process < 0.25 s")
def cli_version() -> dict:
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    walls = []
    for _ in range(1 if SMOKE else 9):
        t0 = time.perf_counter()
        subprocess.run(cmd + ["--version"], capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    walls.sort()
    return {"median_s": walls[len(walls) // 2], "min_s": walls[0], "max_s": walls[-1]}


@workload("mlfm-congestion-2-8", "< 60 s")
def mlfm_table() -> dict:
    from collsim.experiments.papers.mlfm.congestion import congestion_table
    rows = congestion_table(range(2, _n(9, 4)))
    return {"selections": sum(r["checked"] for r in rows),
            "congestion_free_iff_corrected": all(r["ok_iff_correct"] for r in rows)}


@workload("mlfm-d18", "< 60 s")
def mlfm_d18() -> dict:
    from collsim.experiments.papers.mlfm.congestion import check_selection
    d = _n(18, 3)
    r = check_selection(d, d, d + 1, d)
    return {"selection": [d, d + 1, d], "servers": d * (d + 1) * d, "max_link_load": r.max_link_load,
            "congestion_free": r.congestion_free}


@workload("optree-search-4096", "OpTree's tree search alone, N=4096, w=64, 4 MiB: < 3 s, 352 steps")
def optree_search_4096() -> dict:
    from collsim.algorithms.optree import search_tree
    from collsim.kinds.optical_ring import OpticalRing
    n = _n(4096, 64)
    t0 = time.perf_counter()
    best, _ = search_tree(OpticalRing(nodes=n, wavelengths=64), 4 << 20)
    return {"nodes": n, "steps": best.steps, "search_s": time.perf_counter() - t0}


@workload("duplicates-1m", "first_duplicate over 1M transfers with out-of-order payloads: < 10 s (a Python loop takes minutes)")
def duplicates_1m() -> dict:
    import numpy as np
    from collsim.core.wellformed import first_duplicate
    n = _n(1_000_000, 10_000)
    rng = np.random.default_rng(0)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(2, 8, n))])
    idx = rng.permutation(int(ptr[-1]))
    t0 = time.perf_counter()
    clean = first_duplicate(ptr, idx)
    at = 7 * n // 10
    idx[ptr[at] + 1] = idx[ptr[at]]
    found = first_duplicate(ptr, idx)
    return {"transfers": n, "both_scans_s": time.perf_counter() - t0, "clean": clean is None,
            "found": found == (at, int(idx[ptr[at]]))}


@workload("cli-coverage", "tests/test_cli_coverage.py's in-process run of every CLI case under coverage: < 30 s")
def cli_coverage() -> dict:
    import tempfile
    script = Path(__file__).resolve().parents[1] / "tests" / "test_cli_coverage.py"
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, str(script), "--json"] + (["--smoke"] if SMOKE else []), cwd=cwd,
                              capture_output=True, text=True, check=True)
    rep = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"cases": rep["cases"], "failed": len(rep["failures"]), "run_s": rep["seconds"]}


@workload("reproduce-all", "collsim reproduce all at default settings (--jobs = cores available): first run <= 5 min "
                          "and <= 4 GiB, a second run into the same folder <= 30 s (idle 2-core machine)")
def reproduce_all_papers() -> dict:
    """Both runs of ``collsim reproduce all`` at its defaults (whole process), into one folder; ``--quick`` when smoke.

    ``child_peak_rss_mib`` is the largest resident set of any one process the runs started (the
    builds run one per process); ``load_average_1min`` is read before each run, since the machine
    is shared and the wall times depend on it.
    """
    import os
    import tempfile
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        args = cmd + ["reproduce", "all", "--out", tmp, "--json"] + (["--quick"] if SMOKE else [])
        for run in ("first",) if SMOKE else ("first", "second"):
            out[f"{run}_load_average_1min"] = os.getloadavg()[0]
            t0 = time.perf_counter()
            proc = subprocess.run(args, capture_output=True, text=True, check=True)
            out[f"{run}_run_s"] = time.perf_counter() - t0
        rows = json.loads(proc.stdout)
        out["papers"] = {r["paper"]: {"printed_numbers": r["numbers_compared"], "reproduced": r["agree"],
                                      "not_reproduced": r["differ"], "formulas": r.get("formulas", 0)}
                         for r in rows}
        out["report_mib"] = (Path(tmp) / "report.html").stat().st_size / 2**20
    out["child_peak_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


@workload("sweep-grid", "a 120-point sweep into a fresh store, --jobs 2; the rerun skips every point")
def sweep_grid() -> dict:
    """``collsim sweep`` of a 120-point grid (2 systems x 2 N x 4 sizes x 2 collectives x algorithms), twice."""
    import tempfile
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    nodes = "[16]" if SMOKE else "[128, 512]"
    grid = (f"[sweep]\nsystems = [\"paper\", \"ring\"]\nnodes = {nodes}\n"
            f"sizes = [\"1KiB\", \"64KiB\", \"1MiB\", \"4MiB\"]\ncollectives = [\"allgather\", \"allreduce\"]\n")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        toml = Path(tmp) / "grid.toml"
        toml.write_text(grid)
        for run in ("first", "second"):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd + ["sweep", str(toml), "--store", str(Path(tmp) / "s.sqlite"), "--jobs", "2"],
                                  capture_output=True, text=True, check=True)
            out[f"{run}_run_s"] = time.perf_counter() - t0
            out[f"{run}_summary"] = (proc.stdout.strip().splitlines() or [""])[-1]
    return out


@workload("osm-scaling", "time/(T log T) roughly flat")
def osm_scaling() -> dict:
    import math
    out = {}
    for n in ((16, 32) if SMOKE else (128, 256, 512, 1024)):
        t0 = time.perf_counter()
        r = _build_verify("osm", n)
        dt = time.perf_counter() - t0
        t = r["transfers"]
        out[str(n)] = {"transfers": t, "total_s": round(dt, 3), "ns_per_T_log2T": round(1e9 * dt / (t * math.log2(t)), 2)}
    return out


# SimGrid's network model made equal to collsim's flow model: no MPI-calibration factors on
# bandwidth or latency ("0:1": factor 1 from 0 bytes up; a bare "1" crashes SimGrid 3.32), no reverse
# (ACK) cross-traffic, no simulated compute time, no time charged for MPI_Wtime.
SMPI_CFG = ["--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1", "--cfg=network/crosstraffic:0",
            "--cfg=smpi/simulate-computation:no", "--cfg=smpi/wtime:0"]


@workload("startup-vs-smpi", "collsim simulate (16 nodes) faster than smpirun -np 16")
def startup_vs_smpi() -> dict:
    """Whole-process wall time, median of 5 (interleaved): NE all-gather of 1 MiB on a 16-node ring.

    SMPI runs benchmarks/smpi/ne_allgather.c (compiled once with smpicc, not timed) on
    benchmarks/smpi/ring16.xml; collsim runs ``collsim simulate ne --system ring -n 16 -s 1MiB``.
    Also the start-up of ``collsim --version`` and ``--help``.
    """
    import re
    import shutil
    import statistics
    import tempfile
    here = Path(__file__).parent / "smpi"
    exe = Path(sys.executable).parent / "collsim"
    collsim_cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    simulate = collsim_cmd + ["simulate", "ne", "--system", "ring", "-n", "16", "-s", "1MiB"]

    def wall(cmd: list[str]) -> tuple[float, str]:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return time.perf_counter() - t0, proc.stdout

    out: dict = {}
    runs: dict[str, list[float]] = {"collsim_version": [], "collsim_help": [], "collsim_simulate": []}
    smpi = shutil.which("smpicc") and shutil.which("smpirun")
    with tempfile.TemporaryDirectory() as tmp:
        if smpi:
            prog = Path(tmp) / "ne_allgather"
            subprocess.run(["smpicc", "-O2", "-o", str(prog), str(here / "ne_allgather.c")], check=True,
                           capture_output=True)
            smpirun = ["smpirun", "-np", "16", "-platform", str(here / "ring16.xml"), "-hostfile",
                       str(here / "ring16.hosts")]  # (smpirun 3.32 mis-parses its -tmpdir option)
            runs["smpirun"] = []
        else:
            out["smpi_skipped"] = "smpicc/smpirun not found (apt-get install simgrid libsimgrid-dev)"
        for _ in range(1 if SMOKE else 5):  # interleaved, so that load on the machine hits both alike
            runs["collsim_version"].append(wall(collsim_cmd + ["--version"])[0])
            runs["collsim_help"].append(wall(collsim_cmd + ["--help"])[0])
            runs["collsim_simulate"].append(wall(simulate)[0])
            if smpi:
                dt, text = wall(smpirun + SMPI_CFG + [str(prog), str(1 << 20)])
                runs["smpirun"].append(dt)
        for key, walls in runs.items():
            out[f"{key}_wall_s"] = statistics.median(walls)
            out[f"{key}_wall_min_max_s"] = [min(walls), max(walls)]
        out["collsim_simulated_s"] = json.loads(wall(simulate + ["--json"])[1])["total_time_s"]
        if smpi:
            out["smpi_simulated_s"] = float(re.search(r"simulated_s=(\S+)", text).group(1))
            _, default = wall(smpirun + [str(prog), str(1 << 20)])  # SimGrid's default SMPI calibration
            out["smpi_default_model_simulated_s"] = float(re.search(r"simulated_s=(\S+)", default).group(1))
            out["collsim_faster"] = out["collsim_simulate_wall_s"] < out["smpirun_wall_s"]
    return out


@workload("smpi-crosscheck-64", "collsim simulate(mode='rank') within 0.1 % of SMPI, 64 ranks, 4 KiB and 1 MiB")
def smpi_crosscheck_64() -> dict:
    """The symmetric workloads of tests/test_smpi_crosscheck.py on 64 ranks (benchmarks/smpi/crosscheck_table.py)."""
    import shutil
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        return {"smpi_skipped": "smpicc/smpirun not found (apt-get install simgrid libsimgrid-dev)"}
    sys.path.insert(0, str(Path(__file__).parent / "smpi"))
    from crosscheck_table import rows
    got = rows(_n(64, 16), sizes=(4096,) if SMOKE else (4096, 1 << 20))
    return {"cases": len(got), "max_rel_diff": max(abs(r["rel_diff"]) for r in got),
            "collsim_simulate_wall_s": sum(r["collsim_wall_s"] for r in got),
            "smpirun_wall_s": sum(r["smpirun_wall_s"] for r in got), "within_0.1%": all(abs(r["rel_diff"]) <= 1e-3
                                                                                    for r in got)}


@workload("synth-tacos", "all-gather >= 0.99 of the bound (32x32 mesh >= 0.98), faster than TACOS; <= 1 s up to 64 "
                         "nodes, 32x32 <= 10 s")
def synth_tacos() -> dict:
    """``collsim.synthesize`` on TACOS's test topologies (benchmarks/synthesis.py; smoke: the 3x3x3 torus, packed
    by its translations in about 1 s: the 5x5 mesh's timing programmes take 8-20 s)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from synthesis import SMALL, run
    cases = ("torus3x3x3",) if SMOKE else SMALL + ("mesh32x32",)
    got = [run(c, coll) for c in cases for coll in (("allgather",) if SMOKE or c == "mesh32x32"
                                                     else ("allgather", "reducescatter", "allreduce"))]
    return {"cases": got, "min_allgather_efficiency": min(r["efficiency"] for r in got
                                                           if r["collective"] == "allgather"),
            "all_verified": all(r["verified"] for r in got)}


@workload("synth-switched", "all-gather, reduce-scatter >= 0.99 and all-reduce >= 0.97 of the bound on a star, a "
                            "1024-host fat tree and MLFM d = 6")
def synth_switched() -> dict:
    """``benchmarks/synthesis.py`` on the switched networks (overlays; smoke: the 64-host star's all-gather)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from synthesis import SWITCHED, run
    got = [run(c, coll) for c in (("star64",) if SMOKE else SWITCHED)
           for coll in (("allgather",) if SMOKE else ("allgather", "reducescatter", "allreduce"))]
    return {"cases": got, "min_efficiency": min(r["efficiency"] for r in got), "all_verified": all(r["verified"] for r in got)}


@workload("synth-small", "at 1 KiB per node never slower than the best textbook algorithm")
def synth_small() -> dict:
    """``benchmarks/synthesis.py --small``: every case and collective (smoke: the 3x3x3 torus's all-gather)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from synthesis import SMALL, SWITCHED, small
    got = [small(c, coll) for c in (("torus3x3x3",) if SMOKE else SMALL + SWITCHED)
           for coll in (("allgather",) if SMOKE else ("allgather", "reducescatter", "allreduce"))]
    return {"cases": got, "not_slower": sum(r["not_slower"] for r in got), "of": len(got)}


@workload("synth-4096", "64x64 mesh all-gather synthesized in <= 120 s and < 8 GiB")
def synth_4096() -> dict:
    """``benchmarks/synthesis.py mesh64x64`` in its own process (smoke: the 3x3x3 torus, same code path)."""
    return _script("synthesis.py", "--collectives", "allgather", "torus3x3x3" if SMOKE else "mesh64x64")


def _script(name: str, *args: str) -> dict:
    """Run ``benchmarks/<name>`` in its own process; its printed lines and wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / name), *args], capture_output=True,
                          text=True, check=True)
    return {"lines": proc.stdout.strip().splitlines(), "script_wall_s": time.perf_counter() - t0}


@workload("exact-cut", "exact all-gather cut bound with certificate: 64x64 mesh and 16^3 torus < 1 s")
def exact_cut() -> dict:
    """``benchmarks/exact_cut.py``: every instance (smoke: those up to 100 vertices, once each)."""
    return _script("exact_cut.py", *(["--smoke"] if SMOKE else []))


@workload("synth-alltoall", "all-to-all >= 0.95 of the max-concurrent-flow bound")
def synth_alltoall() -> dict:
    """``benchmarks/synth_alltoall.py``: 8x8 and 4x4x4 tori, 128-host fat tree (smoke: a 16-node ring)."""
    return _script("synth_alltoall.py", *(("ring16",) if SMOKE else ("torus8x8", "torus4x4x4", "fattree128")))


@workload("synth-trees-families", "synth-trees on seeded random networks of every class of docs/synthesis.md: all-gather "
          "and reduce-scatter >= 0.99 of the bound, all-reduce >= 0.97, broadcast >= 0.97")
def synth_trees_families() -> dict:
    """``benchmarks/synth_trees.py --json`` (smoke: one instance per class, all-gather): the worst per class."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--json"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout)
    table = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--issue-table"]
                           + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    found = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--translated", "--json"]
                           + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    translated = json.loads(found.stdout)
    fast = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--speed", "--json"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    speed = {c["network"]: round(c["total_cpu_s"], 2) for c in json.loads(fast.stdout)["cases"]}
    filled = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--fill", "--json"]
                            + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    fill = json.loads(filled.stdout)
    big = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--large", "--json"]
                         + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    large = json.loads(big.stdout)
    return {"cases": len(rec["cases"]), "worst": rec["worst"], "min_efficiency": min(rec["worst"].values()),
            "large_worst": large["worst"], "large_cases": len(large["cases"]),
            "large_refused": sum("refused" in c for c in large["cases"]),
            "large_all_verified_on_orbits": all(c["verified"] and c["symmetric"] for c in large["cases"]
                                                if "refused" not in c),
            "bulk_synchronous_ceiling": round(fill["best_efficiency"], 4),
            "issue_table": table.stdout.strip().splitlines(),
            "translated_worst": translated["worst"], "translated_cases": len(translated["cases"]),
            "translated_all_verified": all(c["verified"] and c["translated"] for c in translated["cases"]),
            "cpu_s": speed}


@workload("synth-trees-wide", "all-gather on seeds of every class never tuned on, up to 64 end nodes: synth-trees "
          "alone and synthesize, >= 0.99 of the bound")
def synth_trees_wide() -> dict:
    """``benchmarks/synth_trees.py --wide --json`` (smoke: one 20-host dragonfly): the worst per class."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--wide", "--json"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout)
    return {"cases": len(rec["cases"]), "worst": rec["worst"],
            "winners": sorted({c["winner"] for c in rec["cases"]})}


@workload("synth-wide-regular", "all-gather on seeds 10-29 of random regular graphs (12, 16 and 32 nodes, "
          "60 instances): synthesize >= 0.99 of the bound on the worst")
def synth_wide_regular() -> dict:
    """``benchmarks/synth_trees.py --wide --classes random-regular --seeds 10-29 --json`` (smoke: one 12-node
    graph): the wide run's three seeds a scale are too few to find a class's worst instance."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--wide", "--json",
                           "--classes", "random-regular", "--seeds", "10-29"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout)
    below = [c for c in rec["cases"] if c["synthesize"] < 0.99]
    return {"cases": len(rec["cases"]), "worst": rec["worst"], "below_0.99": len(below),
            "below_0.99_by_nodes": {str(n): sum(c["nodes"] == n for c in below)
                                    for n in sorted({c["nodes"] for c in rec["cases"]})},
            "winners": sorted({c["winner"] for c in rec["cases"]})}


def _synth_trees_compact(system, collective: str, size) -> dict:
    """``synth-trees`` built as ``compare`` builds it (``build_compact``), verified and simulated."""
    from collsim.pipeline import build_compact, evaluate
    t0 = time.perf_counter()
    s = build_compact("synth-trees", system, collective, size)
    t1 = time.perf_counter()
    row = evaluate(s)
    t2 = time.perf_counter()
    assert row.verified
    return {"nodes": s.system.nodes, "form": type(s).__name__, "pieces": s.params["pieces"],
            "efficiency": row.lower_bound_s / row.time_s, "build_s": t1 - t0, "verify_simulate_s": t2 - t1}


@workload("synth-trees-hypercube-2048", "synth-trees' all-reduce of 1 GiB on a 2,048-node hypercube as representatives: "
          "built, verified and simulated in about a minute and < 4 GiB (at 1000 MB it ran out of 16 GB before the "
          "in-place arborescence)")
def synth_trees_hypercube_2048() -> dict:
    """The packing's pricing on a network whose dual prices close one cycle at a time (smoke: 64 nodes)."""
    from collsim.systems import load_system
    return _synth_trees_compact(load_system("hypercube", nodes=_n(2048, 64)), "allreduce", "1GiB")


@workload("synth-trees-unequal-2000", "synth-trees' all-reduce of 256 MiB on 2,000 GPUs on a full fat tree (chunks "
          "unequal: expanded with few pieces): answered, not killed, < 12 GiB (killed at 24 GB before)")
def synth_trees_unequal_2000() -> dict:
    """A size that leaves every node's chunks unequal, above 128 end nodes (smoke: 32 GPUs, 16 boxes of 2)."""
    from collsim.systems import load_system
    dims = "switch:8:300GB/s,fat-tree:250:50GB/s" if not SMOKE else "switch:2:300GB/s,fat-tree:16:50GB/s"
    return _synth_trees_compact(load_system("hierarchical", dims=dims), "allreduce", "256MiB")


@workload("synth-trees-ocs", "synth-trees' all-gather of 1 MiB a node on circuit switches of 8-32 nodes and every "
          "port count: >= 0.9 of the reconfiguration-aware bound")
def synth_trees_ocs() -> dict:
    """``benchmarks/synth_trees.py --ocs --json`` (smoke: 8 nodes, 2 ports): the worst efficiency."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "synth_trees.py"), "--ocs", "--json"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout)
    return {"cases": len(rec["cases"]), "worst": rec["worst"],
            "all_verified": all(c["verified"] for c in rec["cases"])}


@workload("hier-allreduce-16x8", ">= 0.95 of the bound at 256 MiB on 16 boxes of 8 (300/50 GB/s), flat ring "
          "beside it")
def hier_allreduce_16x8() -> dict:
    """hier-allreduce and the flat ring on the ``dgx-16x8`` preset (smoke: 2 boxes of 4, 1 MiB)."""
    from collsim.pipeline import run
    from collsim.systems import load_system
    system = load_system("hierarchical", dims="switch:4:300GB/s,switch:2:50GB/s") if SMOKE else load_system("dgx-16x8")
    size = (1 << 20) if SMOKE else (256 << 20)
    out = {}
    for alg in ("hier-allreduce", "ring"):
        t0 = time.perf_counter()
        row = run(alg, system, "allreduce", size)
        out[alg] = {"time_s": row.time_s, "lower_bound_s": row.lower_bound_s, "efficiency": row.efficiency,
                    "verified": row.verified, "wall_s": time.perf_counter() - t0}
    return out


def _compare_hier(boxes: int, size: str) -> dict:
    """``collsim compare`` of every applicable all-reduce on ``boxes`` boxes of 8 GPUs on a fat tree."""
    proc, wall = _cli("compare", "--system", "hierarchical", "-S", f"dims=switch:8:300GB/s,fat-tree:{boxes}:50GB/s",
                      "-c", "allreduce", "-s", size, "--json")
    out = json.loads(proc.stdout)
    rows = [r for r in out if r["verification"] != "not run"]  # skipped rows say why
    best = max(rows, key=lambda r: r["efficiency"])
    return {"wall_s": wall, "rows": len(rows), "verified": all(r["verified"] for r in rows),
            "algorithms": sorted(r["algorithm"] for r in rows),
            "not_run": sorted(r["algorithm"] for r in out if r["verification"] == "not run"),
            "best": best["algorithm"], "best_efficiency": best["efficiency"],
            "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("compare-hier-1024", "collsim compare, 1,024 GPUs (boxes of 8 on a 128-port fat tree), all-reduce 256 MiB: "
          "every applicable algorithm, hier-allreduce included, verified and simulated in <= 30 s and <= 4 GiB")
def compare_hier_1024() -> dict:
    """The command of the 1,024-GPU target (smoke: 4 boxes of 8, 1 MiB)."""
    return _compare_hier(*((4, "1MiB") if SMOKE else (128, "256MiB")))


@workload("compare-hier-8192", "collsim compare, 8,192 GPUs (1,024 boxes of 8 on a fat tree), all-reduce 256 MiB: "
          "<= 5 min and <= 8 GiB; hier-allreduce, md-ring, Rabenseifner and ring on their orbits, the rest run or refused "
          "with estimates")
def compare_hier_8192() -> dict:
    """The command of the 8,192-GPU target (smoke: 2 boxes of 8, 1 MiB)."""
    return _compare_hier(*((2, "1MiB") if SMOKE else (1024, "256MiB")))


@workload("compare-hier-65536", "collsim compare, 65,536 GPUs (8,192 boxes of 8 on a full fat tree, k = 32), all-reduce "
          "256 MiB: hier-allreduce, Rabenseifner and ring verified in <= 10 min and <= 16 GiB, through symmetry")
def compare_hier_65536() -> dict:
    """The command of the 65,536-GPU target (smoke: 16 boxes of 8 on a full fat tree of k = 4, 1 MiB: hier-allreduce
    on its group of 128, Rabenseifner on the XOR group, when compare switches to orbits)."""
    return _compare_hier(*((16, "1MiB") if SMOKE else (8192, "256MiB")))


@workload("compare-ring-65536", "collsim compare -n 65536 -c allreduce -s 256MiB (optical ring): ring, striped-ring and "
          "striped-stages verified and timed through the ring's rotations, the others built in full or refused")
def compare_ring_65536() -> dict:
    """65,536 nodes on the optical ring (smoke: the three symmetric algorithms on 2,048 nodes, 8.4 M to 16.8 M
    transfers each: on their orbits too)."""
    extra = ["-n", "2048", "-a", "ring,striped-ring,striped-stages"] if SMOKE else ["-n", "65536"]
    proc, wall = _cli("compare", *extra, "-c", "allreduce", "-s", "256MiB", "--json")
    rows = [r for r in json.loads(proc.stdout) if r["verification"] != "not run"]
    ring = next(r for r in rows if r["algorithm"] == "ring")
    return {"wall_s": wall, "rows": len(rows), "verified": all(r["verified"] for r in rows),
            "algorithms": sorted(r["algorithm"] for r in rows), "ring_transfers": ring["transfers"],
            "ring_efficiency": ring["efficiency"],
            "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


@workload("scaling", "time and peak memory against N: ring all-reduce (optical ring, 256-65,536), hier-allreduce "
          "(boxes of 8, 128-65,536), pairwise all-to-all (fat tree, 64-4,096); fitted exponents")
def scaling() -> dict:
    """``benchmarks/scaling.py --json`` (smoke: one small point a family); ``scaling.py --figure`` draws the figure."""
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "scaling.py"), "--json"]
                          + (["--smoke"] if SMOKE else []), capture_output=True, text=True, check=True)
    rec = json.loads(proc.stdout)
    return {"fits": rec["fits"], "points": len(rec["points"]),
            "refused": [f"{p['family']} N={p['nodes']}" for p in rec["points"] if "refused" in p]}


def _command(args: list[str], expect: int) -> dict:
    """The console script on ``args`` in its own process: its exit status, last line, wall time and peak memory."""
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + args, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != expect:
        sys.exit(f"collsim {' '.join(args)}: exit {proc.returncode}, expected {expect}: {proc.stderr.strip()[-300:]}")
    lines = (proc.stderr if expect else proc.stdout).strip().splitlines()
    return {"child_wall_s": wall, "child_peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "last_line": lines[-1] if lines else ""}


REFUSALS = {
    "refuse-synth-mesh-3163": ["synthesize", "--system", "mesh", "-S", "dims=3163,3163", "-s", "1KiB"],
    "refuse-synth-hier-1000": ["synthesize", "--system", "hierarchical", "-S", "dims=switch:1000,switch:1000",
                               "-s", "1B"],
    "refuse-compare-hier-64cubed": ["compare", "--system", "hierarchical", "-S", "dims=switch:64,switch:64,switch:64",
                                    "-s", "1B", "-a", "hier-allgather"],
    "refuse-synth-bcast-mesh-3163": ["synthesize", "--system", "mesh", "-S", "dims=3163,3163", "-c", "broadcast",
                                     "-s", "1KiB"],
    "refuse-synth-ring-10000": ["synthesize", "--system", "ring", "-n", "10000", "-s", "1KiB"],
    "refuse-rd-scan-torus-3163": ["schedule", "recursive-doubling", "--system", "torus", "-S", "dims=3163,3163", "-c",
                                  "scan", "-s", "1KiB", "-o", "x.json"],
}
"""Instances refused from estimates before anything is built: the same at every size, smoke too."""


def _refusal_workload(name: str, args: list[str]) -> None:
    def fn() -> dict:
        return _command(args, 2)
    fn.__name__ = "refusal_" + name.replace("-", "_")
    globals()[fn.__name__] = fn
    workload(name, "refused in < 2 s and < 300 MB, the estimate in one line")(fn)


for _name, _args in REFUSALS.items():
    _refusal_workload(_name, _args)


@workload("synth-ring-2000", "runs (it was killed at 180 s and 1.2 GB: the certificate's flow); about "
          "50 s of CPU, < 1 GiB")
def synth_ring_2000() -> dict:
    """``collsim synthesize --system ring -n 2000 -s 1KiB`` (smoke: 64 nodes)."""
    return _command(["synthesize", "--system", "ring", "-n", str(_n(2000, 64)), "-s", "1KiB"], 0)


def _measured(name: str, tuned: bool, smoke: bool = False) -> dict:
    """Run workload ``name`` in this interpreter: its wall time, this process's peak memory, its figures."""
    global SMOKE
    SMOKE = smoke
    why = unavailable(name)
    if why is not None:
        sys.exit(f"{name} cannot run here: {why}")
    if tuned:  # as the CLI does (src/collsim/_malloc.py); --no-malloc-tuning measures without it
        from collsim._malloc import tune_malloc
        tune_malloc()
    fn = globals()[WORKLOADS[name][0]]
    t0 = time.perf_counter()
    info = fn()
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"name": name, "wall_s": wall, "peak_rss_mib": peak, "target": WORKLOADS[name][1], **info}


def _one(name: str, tuned: bool, smoke: bool = False) -> None:
    print(json.dumps(_measured(name, tuned, smoke)))


def _smoke_in_one_process(name: str, tuned: bool) -> dict:
    """A smoke run of ``name`` in this interpreter, beside the others: a smoke run's figures mean nothing,
    so it is spared an interpreter (and collsim's imports) per workload; a failure ends the run, naming it."""
    import traceback
    try:
        return _measured(name, tuned, smoke=True)
    except Exception:  # noqa: BLE001 - every failure is reported with its workload
        sys.exit(f"{name} failed:\n{traceback.format_exc()}")


SLOWER = 1.10
"""A workload more than 10 % slower than on the ``--against`` revision is a regression."""


def _run_one(script: Path, name: str, flags: list[str], src: Path | None) -> dict | str:
    """One run of a workload in a fresh interpreter: its JSON line, or why it failed.

    ``src`` puts another revision's ``src`` first on the path (its ``collsim`` is imported, by this
    interpreter and by the console scripts the workloads start).
    """
    import os
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.run([sys.executable, str(script), "--one", name, *flags], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def against(rev: str, names: list[str], flags: list[str], repeat: int) -> int:
    """Run ``names`` on revision ``rev`` and on this tree, alternately; print both medians and the ratio.

    Returns 1 if a workload is more than :data:`SLOWER` times slower here (or fails here but ran
    there), else 0.  Workloads the old revision does not have are run here only.
    """
    import tempfile
    here = Path(__file__).resolve()
    root = here.parent.parent
    bad = []
    with tempfile.TemporaryDirectory(prefix="collsim-against-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            old_script = tree / "benchmarks" / "run.py"
            listed = subprocess.run([sys.executable, str(old_script), "--list"], capture_output=True, text=True,
                                    env={**__import__("os").environ, "PYTHONPATH": str(tree / "src")})
            old_names = set(listed.stdout.split())
            print(f"{'workload':24s} {rev[:12]:>12s} {'this tree':>12s} {'ratio':>7s}", flush=True)
            for name in names:
                old, new = [], []
                for _ in range(repeat):  # alternate, so both sides see the same load
                    if name in old_names:
                        old.append(_run_one(old_script, name, flags, tree / "src"))
                    new.append(_run_one(here, name, flags, None))
                fails = [r for r in new if isinstance(r, str)]
                old_ok = sorted(r["wall_s"] for r in old if not isinstance(r, str))
                new_ok = sorted(r["wall_s"] for r in new if not isinstance(r, str))
                o = old_ok[len(old_ok) // 2] if old_ok else None
                n = new_ok[len(new_ok) // 2] if new_ok else None
                ratio = n / o if o and n else None
                text = "-" if ratio is None else f"{ratio:.2f}"
                print(f"{name:24s} {('%.2f s' % o) if o else 'n/a':>12s} {('%.2f s' % n) if n else 'FAILED':>12s} "
                      f"{text:>7s}" + (f"  {fails[0]}" if fails else ""), flush=True)
                if fails and old_ok or (ratio is not None and ratio > SLOWER):
                    bad.append(name)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=False)
    print(f"{len(bad)} workload(s) more than {round((SLOWER - 1) * 100)} % slower or failing"
          + (f": {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


def main(argv: list[str]) -> None:
    tuned = "--no-malloc-tuning" not in argv
    smoke = "--smoke" in argv
    argv = [a for a in argv if a not in ("--no-malloc-tuning", "--smoke")]
    repeat = 1
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if argv[:1] == ["--one"]:
        _one(argv[1], tuned, smoke)
        return
    if "--against" in argv:
        i = argv.index("--against")
        rev, names = argv[i + 1], argv[:i] + argv[i + 2:]
        unknown = [n for n in names if n not in WORKLOADS]
        if unknown:
            sys.exit(f"unknown workload {unknown[0]!r}; see --list")
        flags = ([] if tuned else ["--no-malloc-tuning"]) + (["--smoke"] if smoke else [])
        names = [n for n in (names or list(WORKLOADS)) if unavailable(n) is None]
        sys.exit(against(rev, names, flags, repeat))
    if argv[:1] == ["--list"]:
        print("\n".join(WORKLOADS))
        return
    names = argv or list(WORKLOADS)
    results = []
    skipped = []
    for name in names:
        if name not in WORKLOADS:
            sys.exit(f"unknown workload {name!r}; see --list")
        why = unavailable(name)
        if why is not None:  # an install without the [mpi] extra: the MPI workloads are left out, and said so
            skipped.append(name)
            print(f"{name:16s} skipped: {why}", flush=True)
            continue
        flags = ([] if tuned else ["--no-malloc-tuning"]) + (["--smoke"] if smoke else [])
        runs = []
        for _ in range(repeat):
            if smoke:
                runs.append(_smoke_in_one_process(name, tuned))
                continue
            proc = subprocess.run([sys.executable, __file__, "--one", name, *flags], capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"{name} failed:\n{proc.stderr}")
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        walls = sorted(r["wall_s"] for r in runs)
        res = runs[0]
        if repeat > 1:
            res = {**res, "wall_s": walls[len(walls) // 2], "wall_min_s": walls[0], "wall_max_s": walls[-1]}
            if all("build_s" in r and "verify_s" in r for r in runs):
                bv = sorted(r["build_s"] + r["verify_s"] for r in runs)
                res["build_verify_median_s"] = bv[len(bv) // 2]
                res["build_verify_min_max_s"] = [bv[0], bv[-1]]
        results.append(res)
        extra = {k: v for k, v in res.items() if k not in ("name", "wall_s", "peak_rss_mib", "target")}
        print(f"{name:16s} wall {res['wall_s']:7.2f} s  peak {res['peak_rss_mib']:7.0f} MiB  "
              f"target {res['target']:<28s} {json.dumps(extra)}", flush=True)
    if smoke:  # a smoke run proves the workloads run; its figures mean nothing
        print(f"smoke: {len(results)} workloads ran" + (f", {len(skipped)} skipped ({', '.join(skipped)})"
                                                         if skipped else ""))
        return
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    from collsim.core.files import atomic_write  # a failed write keeps the previous results whole
    text = json.dumps(results, indent=1).encode()
    atomic_write(out / "latest.json", lambda fh: fh.write(text))


if __name__ == "__main__":
    main(sys.argv[1:])
