"""Measure synth-alltoall against the max-concurrent-flow bound (targets: docs/synthesis.md).

Usage: python benchmarks/synth_alltoall.py [--split K] [--per-node] [case ...]
Cases: torus8x8, torus4x4x4, mesh16x16, fattree128 (default: all).  The size is 64 MiB per
(source, destination) block, collsim's all-to-all size; --per-node makes it 64 MiB per node's
send buffer (block = 64 MiB / N).  Each schedule is verified, then flow-simulated (bulk mode).
"""

from __future__ import annotations

import argparse
import time

import collsim
from collsim.sim.flow import simulate
from collsim.systems import load_system

CASES = {"torus8x8": ("torus", {"dims": (8, 8)}), "torus4x4x4": ("torus", {"dims": (4, 4, 4)}),
         "mesh16x16": ("mesh", {"dims": (16, 16)}), "fattree128": ("fat-tree", {"nodes": 128}),
         "ring16": ("ring", {"nodes": 16}), "hypercube64": ("hypercube", {"nodes": 64}),
         "mesh8x8": ("mesh", {"dims": (8, 8)}), "mesh12x12": ("mesh", {"dims": (12, 12)})}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=["torus8x8", "torus4x4x4", "mesh16x16", "fattree128"])
    ap.add_argument("--split", type=int, default=16)
    ap.add_argument("--per-node", action="store_true")
    a = ap.parse_args()
    for name in a.cases:
        kind, opts = CASES[name]
        system = load_system(kind, **opts)
        size = (64 << 20) // system.nodes if a.per_node else 64 << 20
        t0 = time.perf_counter()
        sched = collsim.build("synth-alltoall", system, "alltoall", size, split=a.split)
        build_s = time.perf_counter() - t0
        report = collsim.verify(sched)
        t1 = time.perf_counter()
        sim = simulate(sched, report=report)
        sim_s = time.perf_counter() - t1
        p = sched.params
        lat = (system.startup_s or 0.0) + float(system.links.latency_s.min())
        bound_s = p["bound_s"] + lat
        print(f"{name}: N={system.nodes} block={size} B split={a.split} "
              f"build (LP included) {build_s:.2f} s sim {sim_s:.2f} s ({sim.events} events) | bound {bound_s * 1e3:.4f} ms "
              f"rounded congestion {p['congestion_s'] * 1e3:.4f} ms simulated {sim.total_time_s * 1e3:.4f} ms "
              f"efficiency {bound_s / sim.total_time_s:.4f}", flush=True)


if __name__ == "__main__":
    main()
