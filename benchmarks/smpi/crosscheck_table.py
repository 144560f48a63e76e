"""The cross-check table of docs/flow-simulator.md: collsim's flow simulator against SimGrid's SMPI.

The workloads of tests/test_smpi_crosscheck.py (16 or 8 ranks, 4 KiB and 1 MiB), or, with
``--nodes N``, the symmetric ones on N ranks.  Each is exported (platform, host file, per-rank
replay files), replayed by ``smpirun`` with collsim.interop.simgrid_replay.SMPI_CONFIG and compared
with ``simulate(mode="rank")`` and bulk.  Prints a Markdown table, or JSON with ``--json``.

    python benchmarks/smpi/crosscheck_table.py [--nodes 64] [--json]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import collsim
from collsim.interop.simgrid import write_platform
from collsim.interop.simgrid_replay import PROGRAM_SOURCE, program_source, run_smpi, write_replay
from collsim.sim import simulate
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork


def slow_star() -> CustomNetwork:
    links = []
    for i in range(8):
        links += [(i, "s0", 12.5e9, 1e-6, False), ("s0", i, 12.5e9, 1e-5 if i in (3, 6) else 1e-6, False)]
    return CustomNetwork(nodes=8, switches=1, link=tuple(links))


def workloads(n: int | None) -> list[tuple[str, str, object, str]]:
    m = n or 16
    out = [(f"NE all-gather, ring {m}", "ne", load_system("ring", nodes=m), "allgather"),
           (f"recursive doubling all-gather, hypercube {m}", "recursive-doubling", load_system("hypercube", nodes=m),
            "allgather"),
           (f"pairwise all-to-all, fat tree {m} (startup 2 us)", "pairwise",
            load_system("fat-tree", nodes=m, link_latency_s=0.0, startup_s=2e-6), "alltoall"),
           (f"ring all-reduce, ring {m}", "ring", load_system("ring", nodes=m), "allreduce"),
           (f"binomial broadcast, ring {m}", "binomial", load_system("ring", nodes=m), "broadcast"),
           (f"Bruck all-to-all, ring {m}", "bruck", load_system("ring", nodes=m), "alltoall")]
    if n is None:
        out.append(("binomial broadcast, slow star 8", "binomial", slow_star(), "broadcast"))
    return out


def rows(n: int | None = None, sizes: tuple[int, ...] = (4096, 1 << 20)) -> list[dict]:
    """One record per workload and size: times, relative difference, wall times."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        prog = Path(tmp) / "replay"
        (Path(tmp) / PROGRAM_SOURCE).write_bytes(program_source())
        subprocess.run(["smpicc", "-O2", "-o", str(prog), str(Path(tmp) / PROGRAM_SOURCE)], check=True,
                       capture_output=True)
        for label, alg, system, coll in workloads(n):
            for size in sizes:
                s = collsim.build(alg, system, coll, size)
                folder = Path(tmp) / f"{alg}-{coll}-{size}"
                write_platform(system, folder)
                write_replay(s, folder)
                t0 = time.perf_counter()
                rank = simulate(s, mode="rank").total_time_s
                t1 = time.perf_counter()
                smpi = float(run_smpi(folder, system.nodes, program=prog).max())
                t2 = time.perf_counter()
                out.append({"workload": label, "size_bytes": size, "collsim_rank_s": rank,
                            "collsim_bulk_s": simulate(s).total_time_s, "smpi_s": smpi,
                            "rel_diff": (smpi - rank) / rank, "collsim_wall_s": t1 - t0, "smpirun_wall_s": t2 - t1})
    return out


def main(argv: list[str]) -> None:
    n = int(argv[argv.index("--nodes") + 1]) if "--nodes" in argv else None
    got = rows(n)
    if "--json" in argv:
        print(json.dumps(got, indent=1))
        return
    print("| workload | size | collsim rank (bulk) | SMPI | rel. diff |")
    print("|---|---|---|---|---|")
    for r in got:
        size = "4 KiB" if r["size_bytes"] == 4096 else f"{r['size_bytes'] >> 20} MiB"
        print(f"| {r['workload']} | {size} | {r['collsim_rank_s'] * 1e6:.4f} µs ({r['collsim_bulk_s'] * 1e6:.4f}) "
              f"| {r['smpi_s'] * 1e6:.4f} µs | {r['rel_diff']:.1e} |")


if __name__ == "__main__":
    main(sys.argv[1:])
