"""An MPI job for tests/test_mpi.py: what collsim's executor really holds, beside what collsim.mpi.memory estimates.

    mpiexec -n P python tests/mpi_jobs/memory_peaks.py SIZE

For each (algorithm, collective, dtype) on a star of P ranks, of SIZE bytes: the peak of the memory
Python and numpy allocate (tracemalloc) during one ``run_schedule``, and ``rank_bytes`` of the same
schedule.  Rank 0 prints one JSON line per case: ``case``, ``peaks`` and ``estimates`` (bytes, per rank).
"""

from __future__ import annotations

import json
import sys
import tracemalloc

from mpi4py import MPI

import collsim
from collsim.mpi import run_schedule
from collsim.mpi.memory import rank_bytes

COMM = MPI.COMM_WORLD
CASES = [("ring", "allreduce"), ("recursive-doubling", "allreduce"), ("rabenseifner", "allreduce"),
         ("ring", "allgather"), ("bruck", "allgather"), ("pairwise", "alltoall"), ("bruck", "alltoall"),
         ("ring", "reducescatter"), ("binomial", "broadcast"), ("direct", "shift")]


def main(size: int) -> None:
    star = collsim.load_system("star", nodes=COMM.Get_size())
    for alg, coll in CASES:
        for dtype in ("int64", "int32", "float64"):
            sched = collsim.build(alg, star, coll, size, **({"shift": 1} if coll == "shift" else {}))
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            run_schedule(sched, COMM, iterations=1, warmup=0, dtype=dtype, verify=False)
            peak = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
            peaks = COMM.gather(peak)
            if COMM.Get_rank() == 0:
                print(json.dumps({"case": [alg, coll, dtype], "peaks": peaks,
                                  "estimates": rank_bytes(sched, dtype).tolist()}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
