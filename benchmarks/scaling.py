"""How cost grows with the number of accelerators: time and peak memory against N, fitted exponents, a figure.

Run:  python benchmarks/scaling.py [--smoke] [--json] [--figure docs/figures/scaling.png] [--timeout 600]

Seven families, each point in its own interpreter (its peak resident memory is its own), build +
verify + time (the answer every command reports):

* ``ring-allreduce``: ring all-reduce on the optical ring (``paper``, w = 64), 1 MiB,
  N = 256 ... 65,536, built in full (:func:`collsim.build`);
* ``ring-allreduce-orbits``: the same through the ring's rotations (:func:`collsim.build_symmetric`:
  node 0's transfers and the group, verified and timed on the orbits);
* ``hier-allreduce``: ``hier-allreduce`` on boxes of 8 GPUs (NVSwitch, 300 GB/s) joined by a fat
  tree (50 GB/s), 256 MiB, N = 128 ... 65,536;
* ``hier-allreduce-orbits``: the same through the system's translation group (the transfers into its
  domain, verified on them and flow-simulated on the quotient network): the GPUs' coordinate (order 8)
  where the fat tree has empty ports, every GPU (a regular group) where it is full (N = 1,024,
  8,192 and 65,536: k = 8, 16, 32);
* ``hier-allreduce-orbits-full-tree``: the same on full fat trees alone (k = 4, 6, 8, 10, 12, 16, 20,
  24, 32: N = 128 ... 65,536), whose pods, edge switches and ports move too: one GPU's transfers;
* ``pairwise-alltoall``: pairwise all-to-all on a fat tree, 64 KiB a pair, N = 64 ... 4,096;
* ``ring-allreduce-repeated``: ring all-reduce, 256 MiB, on the boxes of 8 on a fat tree of
  ``hier-allreduce``, N = 128 ... 65,536, as repeated steps (:func:`collsim.build_repeated`: node 0's
  transfers under all N rotations, which the fat tree lacks, and one whole step of each of its two
  classes).

A point collsim refuses (memory or time estimated above its limits) is recorded with the first line
of the refusal, and the larger sizes of that family are not tried; a point that exceeds
``--timeout`` seconds of wall time is recorded as such.  Exponents are least-squares fits of
log(wall time) and log(peak memory) against log(N) over each family's points that ran (the
smallest point excluded: start-up dominates it).  No targets are asserted here;
docs/performance.md quotes the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

FAMILIES = {
    "ring-allreduce": [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
    "ring-allreduce-orbits": [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
    "hier-allreduce": [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
    "hier-allreduce-orbits": [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
    "hier-allreduce-orbits-full-tree": [8 * k ** 3 // 4 for k in (4, 6, 8, 10, 12, 16, 20, 24, 32)],
    "pairwise-alltoall": [64, 128, 256, 512, 1024, 2048, 4096],
    "ring-allreduce-repeated": [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536],
}
SMOKE = {"ring-allreduce": [16], "ring-allreduce-orbits": [16], "hier-allreduce": [16], "hier-allreduce-orbits": [16],
         "hier-allreduce-orbits-full-tree": [16],
         "pairwise-alltoall": [8], "ring-allreduce-repeated": [16]}

POINT = r'''
import json, resource, sys, time
t0 = time.perf_counter()
import collsim
from collsim.core.errors import CollsimError
family, n = sys.argv[1], int(sys.argv[2])
out = {"family": family, "nodes": n}
try:
    if family == "ring-allreduce-repeated":
        system = collsim.systems.load_system("hierarchical", dims=f"switch:8:300GB/s,fat-tree:{n // 8}:50GB/s")
        alg, coll, size = "ring", "allreduce", (256 << 20) // n * n
    elif family.startswith("ring-allreduce"):
        system, alg, coll, size = collsim.systems.load_system("paper", nodes=n, wavelengths=64), "ring", "allreduce", "1MiB"
    elif family.startswith("hier-allreduce"):
        system = collsim.systems.load_system("hierarchical", dims=f"switch:8:300GB/s,fat-tree:{n // 8}:50GB/s")
        alg, coll, size = "hier-allreduce", "allreduce", (256 << 20) // n * n   # blocks alike: N divides it
    else:
        system = collsim.systems.load_system("fat-tree", nodes=n)
        alg, coll, size = "pairwise", "alltoall", "64KiB"
    orbits = "-orbits" in family
    make = collsim.build_repeated if family.endswith("-repeated") else collsim.build_symmetric if orbits \
        else collsim.build
    s = make(alg, system, coll, size)
    t1 = time.perf_counter()
    report = collsim.verify(s)
    t2 = time.perf_counter()
    flow = getattr(s, "flow", s)     # repeated steps: their representatives' group and chunks
    out.update(transfers=report.transfers, deliveries=int(len(flow.reps.chunk_idx)) * flow.group.order
               if hasattr(flow, "reps") else int(len(s.chunk_idx)), data_flow=report.data_flow,
               time_s=report.time_s, build_s=t1 - t0, verify_and_time_s=t2 - t1)
except CollsimError as exc:
    out["refused"] = str(exc).splitlines()[0]
out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def run_point(family: str, n: int, timeout_s: float) -> dict:
    """One point in its own interpreter: its wall time, peak memory and what it built (or why not)."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", POINT, family, str(n)], capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"family": family, "nodes": n, "timeout_s": timeout_s}
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"family": family, "nodes": n, "failed": proc.stderr.strip().splitlines()[-1:]}
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    rec["wall_s"] = wall
    return rec


def fit_exponent(ns: list[int], ys: list[float]) -> float | None:
    """Slope of log(y) against log(N) by least squares (None with fewer than two points)."""
    import numpy as np
    if len(ns) < 2:
        return None
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0])


def fits(points: list[dict]) -> dict:
    """Per family: the exponents of wall time and peak memory (the smallest point excluded)."""
    out = {}
    for family in FAMILIES:
        ran = [p for p in points if p["family"] == family and "wall_s" in p and "refused" not in p][1:]
        out[family] = {"time_exponent": fit_exponent([p["nodes"] for p in ran], [p["wall_s"] for p in ran]),
                       "memory_exponent": fit_exponent([p["nodes"] for p in ran], [p["peak_rss_mib"] for p in ran]),
                       "largest_run": max((p["nodes"] for p in ran), default=None)}
    return out


def figure(points: list[dict], path: Path) -> None:
    """Wall time and peak memory against N, log-log; refused and timed-out points marked on the axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), constrained_layout=True)
    for (ax, key, label) in ((axes[0], "wall_s", "wall time (s)"), (axes[1], "peak_rss_mib", "peak memory (MiB)")):
        for family, marker in zip(FAMILIES, "o^sDvdP"):
            ran = [p for p in points if p["family"] == family and "wall_s" in p and "refused" not in p]
            line, = ax.plot([p["nodes"] for p in ran], [p[key] for p in ran], marker=marker, label=family)
            stop = [p for p in points if p["family"] == family and ("refused" in p or "timeout_s" in p)]
            if stop and ran:
                ax.plot([p["nodes"] for p in stop], [ran[-1][key]] * len(stop), marker="x", linestyle="none",
                        color=line.get_color())
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("accelerators N")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize=8,
               title="x: refused or over the time limit", title_fontsize=8)
    fig.suptitle("collsim: build + verify + time, 2-core machine")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110, metadata={"Software": None})
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="one small point a family")
    ap.add_argument("--json", action="store_true", help="print the points and fits as JSON")
    ap.add_argument("--figure", type=Path, help="draw the figure here (PNG)")
    ap.add_argument("--timeout", type=float, default=600.0, help="wall seconds allowed a point")
    ap.add_argument("--families", nargs="*", default=list(FAMILIES), choices=list(FAMILIES))
    args = ap.parse_args(argv)
    sizes = SMOKE if args.smoke else FAMILIES
    points = []
    for family in args.families:
        for n in sizes[family]:
            rec = run_point(family, n, args.timeout)
            points.append(rec)
            if not args.json:
                print(json.dumps(rec), flush=True)
            if "refused" in rec or "timeout_s" in rec or "failed" in rec:
                break
    result = {"points": points, "fits": fits(points)}
    if args.figure:
        figure(points, args.figure)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(json.dumps(result["fits"], indent=1))
    return 0 if not any("failed" in p for p in points) else 1


if __name__ == "__main__":
    sys.exit(main())
