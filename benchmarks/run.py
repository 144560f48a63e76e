"""Benchmarks: wall time and peak memory of collsim's reference workloads.

Run all:        python benchmarks/run.py
Run some:       python benchmarks/run.py osm-1024 ring-4096
List:           python benchmarks/run.py --list
Untuned malloc: python benchmarks/run.py --no-malloc-tuning   (see src/collsim/_malloc.py)
Repeat:         python benchmarks/run.py --repeat 5 optree-4096   (median, min and max wall time)

Each workload runs in its own interpreter so that its peak resident memory
(ru_maxrss) is its own.  Targets (issue #2, this 2-core machine): default
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


def workload(name: str, target: str):
    def deco(fn):
        WORKLOADS[name] = (fn.__name__, target)
        return fn
    return deco


def _build_verify(alg: str, n: int, coll: str = "allgather", w: int = 64) -> dict:
    import collsim
    from collsim.cost import schedule_time_s
    t0 = time.perf_counter()
    s = collsim.build(alg, "paper", coll, "4MiB", nodes=n, wavelengths=w)
    t1 = time.perf_counter()
    rep = collsim.verify(s)
    t2 = time.perf_counter()
    schedule_time_s(s)
    t3 = time.perf_counter()
    return {"transfers": rep.transfers, "steps": rep.steps, "build_s": t1 - t0, "verify_s": t2 - t1,
            "time_model_s": t3 - t2}


@workload("compare-default", "< 15 s")
def compare_default() -> dict:
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    proc = subprocess.run(cmd + ["compare", "--json"], capture_output=True, text=True, check=True)
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


@workload("wrht-4096", "< 3 s (issue #3)")
def wrht_4096() -> dict:
    return {"allreduce": _build_verify("wrht", 4096, "allreduce"), "allgather": _build_verify("wrht", 4096)}


@workload("optree-4096", "< 5 s incl. exact search (issue #3)")
def optree_4096() -> dict:
    return _build_verify("optree", 4096)


@workload("compare-2048", "< 30 s, every optical algorithm (issue #3)")
def compare_2048() -> dict:
    exe = Path(sys.executable).parent / "collsim"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "collsim"]
    proc = subprocess.run(cmd + ["compare", "--nodes", "2048", "--json"], capture_output=True, text=True, check=True)
    rows = json.loads(proc.stdout)
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"algorithms": [r["algorithm"] for r in rows], "steps": {r["algorithm"]: r["steps"] for r in rows},
            "child_peak_rss_mib": child / 1024}


def _simulate(alg: str, system, collective: str, size: str) -> dict:
    import collsim
    from collsim.sim import simulate
    t0 = time.perf_counter()
    s = collsim.build(alg, system, collective, size)
    t1 = time.perf_counter()
    r = simulate(s)
    t2 = time.perf_counter()
    return {"transfers": len(s), "steps": s.num_steps, "build_s": t1 - t0, "simulate_s": t2 - t1,
            "simulated_time_s": r.total_time_s, "max_link_load": r.max_link_load}


@workload("sim-ne-ring-1024", "< 5 s (issue #4)")
def sim_ne_ring() -> dict:
    from collsim.systems.electrical import Ring
    return _simulate("ne", Ring(nodes=1024), "allgather", "1MiB")


@workload("sim-pairwise-fattree-1024", "< 60 s, < 2 GiB (issue #4)")
def sim_pairwise_fattree() -> dict:
    from collsim.systems.fat_tree import FatTree
    return _simulate("pairwise", FatTree.from_options(nodes=1024), "alltoall", "64KiB")


@workload("mlfm-congestion-2-8", "< 60 s (issue #5)")
def mlfm_table() -> dict:
    from collsim.experiments.mlfm_congestion import congestion_table
    rows = congestion_table(range(2, 9))
    return {"selections": sum(r["checked"] for r in rows),
            "congestion_free_iff_corrected": all(r["ok_iff_correct"] for r in rows)}


@workload("mlfm-d18", "< 60 s (issue #5)")
def mlfm_d18() -> dict:
    from collsim.experiments.mlfm_congestion import check_selection
    r = check_selection(18, 18, 19, 18)
    return {"selection": [18, 19, 18], "servers": 18 * 19 * 18, "max_link_load": r.max_link_load,
            "congestion_free": r.congestion_free}


@workload("osm-scaling", "time/(T log T) roughly flat")
def osm_scaling() -> dict:
    import math
    out = {}
    for n in (128, 256, 512, 1024):
        t0 = time.perf_counter()
        r = _build_verify("osm", n)
        dt = time.perf_counter() - t0
        t = r["transfers"]
        out[str(n)] = {"transfers": t, "total_s": round(dt, 3), "ns_per_T_log2T": round(1e9 * dt / (t * math.log2(t)), 2)}
    return out


def _one(name: str, tuned: bool) -> None:
    if tuned:  # as the CLI does (src/collsim/_malloc.py); --no-malloc-tuning measures without it
        from collsim import tune_malloc
        tune_malloc()
    fn = globals()[WORKLOADS[name][0]]
    t0 = time.perf_counter()
    info = fn()
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"name": name, "wall_s": wall, "peak_rss_mib": peak, "target": WORKLOADS[name][1], **info}))


def main(argv: list[str]) -> None:
    tuned = "--no-malloc-tuning" not in argv
    argv = [a for a in argv if a != "--no-malloc-tuning"]
    repeat = 1
    if "--repeat" in argv:
        i = argv.index("--repeat")
        repeat = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if argv[:1] == ["--one"]:
        _one(argv[1], tuned)
        return
    if argv[:1] == ["--list"]:
        print("\n".join(WORKLOADS))
        return
    names = argv or list(WORKLOADS)
    results = []
    for name in names:
        if name not in WORKLOADS:
            sys.exit(f"unknown workload {name!r}; see --list")
        flags = [] if tuned else ["--no-malloc-tuning"]
        runs = []
        for _ in range(repeat):
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
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
