"""Synthesized all-gather, reduce-scatter and all-reduce against the bound and TACOS.

Usage: python benchmarks/synthesis.py [--collectives allgather,reducescatter,allreduce] [case ...]

Cases are TACOS's own test topologies (W. Won et al., arXiv 2304.05301), a 64-node
hypercube and switched networks (a 64-host star, a 1024-host fat tree, MLFM at
d = 6, with their kinds' default links).  All-gather and reduce-scatter move 1 GiB of total output (collsim's size is one
node's block: 1 GiB / N); all-reduce reduces a 1 GiB vector.  Each schedule is synthesized,
verified and flow-simulated (bulk mode, the time collsim reports); the TACOS column is the
figure TACOS's paper publishes for all-gather, cited, not measured here.  Prints one JSON
object per (case, collective).
"""

from __future__ import annotations

import argparse
import json
import time

GIB = 2 ** 30
CASES = {  # name: (kind, options, link bandwidth B/s, link latency s, TACOS all-gather µs as published)
    "mesh5x5": ("mesh", {"dims": (5, 5)}, 50 * GIB, 0.5e-6, 9606),
    "mesh10x10": ("mesh", {"dims": (10, 10)}, 100 * GIB, 1e-6, 5049),
    "mesh16x16": ("mesh", {"dims": (16, 16)}, 50 * GIB, 0.5e-6, 10064),
    "mesh32x32": ("mesh", {"dims": (32, 32)}, 50 * GIB, 0.5e-6, 10256),
    "mesh64x64": ("mesh", {"dims": (64, 64)}, 50 * GIB, 0.5e-6, None),
    "torus3x3x3": ("torus", {"dims": (3, 3, 3)}, 50 * GIB, 0.5e-6, 3706),
    "torus10x10": ("torus", {"dims": (10, 10)}, 100 * GIB, 1e-6, 2626),
    "hypercube64": ("hypercube", {"nodes": 64}, 50 * GIB, 0.5e-6, None),
    "star64": ("star", {"nodes": 64}, None, None, None),
    "fattree1024": ("fat-tree", {"nodes": 1024}, None, None, None),
    "mlfm6": ("mlfm", {"d": 6}, None, None, None),
}
SWITCHED = ("star64", "fattree1024", "mlfm6")
SMALL = ("mesh5x5", "torus3x3x3", "torus10x10", "mesh10x10", "mesh16x16", "hypercube64")


def _system(name: str):
    from collsim.systems import load_system
    kind, opts, bw, lat, _ = CASES[name]
    links = {} if bw is None else {"link_bandwidth_bytes_per_s": bw, "link_latency_s": lat}
    return load_system(kind, **links, **opts)


def small(name: str, collective: str, size_bytes: int = 1024) -> dict:
    """The synthesized schedule against the best registered textbook algorithm at a small size."""
    from collsim.experiments.compare import compare
    from collsim.synthesis import SYNTHESIZERS, synthesize
    system = _system(name)
    out = synthesize(system, collective, size_bytes)
    rows, _ = compare(system, collective, size_bytes)
    others = [r for r in rows if r.algorithm not in SYNTHESIZERS and r.verified]
    best = min(others, key=lambda r: r.time_s)
    return {"case": name, "collective": collective, "size_bytes": size_bytes,
            "synthesized_us": out.result.time_s * 1e6, "best_textbook": best.algorithm,
            "best_textbook_us": best.time_s * 1e6, "not_slower": out.result.time_s <= best.time_s * (1 + 1e-9)}


def run(name: str, collective: str) -> dict:
    from collsim.synthesis import synthesize
    system = _system(name)
    tacos_us = CASES[name][4]
    size = GIB if collective == "allreduce" else GIB // system.nodes
    t0 = time.perf_counter()
    out = synthesize(system, collective, size)
    took = time.perf_counter() - t0
    r = out.result
    return {"case": name, "collective": collective, "nodes": system.nodes, "algorithm": out.schedule.algorithm,
            "size_bytes": size,
            "params": {k: v for k, v in out.schedule.params.items() if k != "predicted_time_s"},
            "simulated_us": r.time_s * 1e6, "predicted_us": (out.predicted_time_s or 0) * 1e6,
            "bound_us": r.lower_bound_s * 1e6, "efficiency": r.lower_bound_s / r.time_s, "verified": r.verified,
            "synthesize_and_check_s": took,
            "tacos_allgather_us_published": tacos_us if collective == "allgather" else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", default=list(SMALL))
    ap.add_argument("--collectives", default="allgather,reducescatter,allreduce")
    ap.add_argument("--small", action="store_true", help="1 KiB per node against the best textbook algorithm")
    a = ap.parse_args()
    for name in a.cases:
        for coll in a.collectives.split(","):
            print(json.dumps(small(name, coll) if a.small else run(name, coll)), flush=True)


if __name__ == "__main__":
    main()
