"""The microbenchmarks of ``collsim calibrate --model loggp-piecewise`` (docs/calibration.md).

* :func:`exchange_samples`: **every rank at once** sends a message to rank ``r + 1`` and
  receives one from rank ``r − 1`` (on 2 ranks: both directions of one pair at once), run by
  collsim's own executor as a one-step schedule (``direct`` shift on a star, through
  :func:`~collsim.mpi.executor.run_schedule`: persistent requests, ``MPI_Startall``,
  ``MPI_Waitall``, received in place, the buffer restored before every iteration and the
  watchdog running, exactly as a collective's step).  Each iteration starts after a barrier
  and its time is the maximum over ranks, so a sample is what one step of a collective
  costs on these ranks, with both directions, every rank and the executor's per-step work
  in it.  The sizes are measured in ``passes`` rounds (every size once per round), so
  that a burst of load from elsewhere lands on a few samples of every size rather than on
  all the samples of one.
* :func:`exchange_samples` with ``reduce=True``: the same step with a reduction, a ring
  reduce-scatter (``P − 1`` steps in which every rank sends a block to ``r + 1`` and reduces the
  block it receives from ``r − 1``, received into a staging buffer and combined after the wait,
  as the executor does); a sample is an iteration's time over ``P − 1``.  What a reduction adds
  to a step is the difference of the two medians (:func:`reduction_samples`): on this machine
  2.5–4 times what the same ufunc costs on buffers that stay in the caches.
* :func:`local_samples`: every rank at once copies and reduces (``--op``, ``--dtype``) buffers
  of each size in a loop; per size the median over ranks of each rank's median (the copies'
  cost; the reductions' is reported beside the one above).

Both return :class:`~collsim.mpi.calibrate.Sample` rows (median, minimum and quartiles).
mpi4py is imported by the functions, never when the module is loaded.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from .calibrate import Sample

__all__ = ["DEFAULT_EXCHANGE_SIZES_BYTES", "exchange_samples", "local_samples", "microbench_bytes", "reduction_samples",
           "sample_of", "step_samples"]

DEFAULT_EXCHANGE_SIZES_BYTES: tuple[int, ...] = tuple(2**k for k in range(6, 25))
"""Message sizes of the exchange and local microbenchmarks: powers of 2 from 64 B to 16 MiB (19 sizes),
fine enough to place a protocol switch between two neighbouring sizes."""


def sample_of(size_bytes: int, times_s: Sequence[float]) -> Sample:
    """A table row of one size's times: count, median, minimum and quartiles."""
    t = np.asarray(times_s, dtype=float)
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return Sample(int(size_bytes), len(t), float(med), float(t.min()), float(q1), float(q3))


def _schedules(comm: Any, sizes_bytes: Sequence[int], reduce: bool) -> dict[int, Any]:
    from ..pipeline import build
    from ..kinds.network.electrical import Star
    star = Star(nodes=comm.Get_size())
    return {int(s): build("ring", star, "reducescatter", int(s)) if reduce
            else build("direct", star, "shift", int(s), shift=1) for s in sizes_bytes}


def microbench_bytes(comm: Any, size_bytes: int, dtype: str) -> float:
    """Bytes this rank holds in the largest microbenchmark at one size (:mod:`collsim.mpi.memory`).

    The exchange step and the reducing step (collsim's executor beside MPI's collective:
    :func:`collsim.mpi.memory.rank_bytes`) and the local copy and reduction (two buffers).
    """
    from .memory import rank_bytes
    rank = comm.Get_rank()
    steps = [_schedules(comm, [size_bytes], reduce)[int(size_bytes)] for reduce in (False, True)]
    return max(2.0 * size_bytes, *(float(rank_bytes(s, dtype)[rank]) for s in steps))


def _one_pass(comm: Any, scheds: dict[int, Any], times: dict[int, list[float]], per_pass: int, warmup: int,
              dtype: str, op: str, steps: int) -> None:
    from .executor import run_schedule
    for size, sched in scheds.items():
        result = run_schedule(sched, comm, iterations=per_pass, warmup=warmup, dtype=dtype, op=op, verify=False)
        times[size] += [t / steps for t in result.times_s]


def exchange_samples(comm: Any, sizes_bytes: Sequence[int], iterations: int, warmup: int,
                     dtype: str = "int64", passes: int = 5, reduce: bool = False, op: str = "sum") -> list[Sample]:
    """One-step ring exchanges on every rank at once, timed as collsim's executor times a schedule."""
    scheds = _schedules(comm, sizes_bytes, reduce)
    per_pass = max(1, -(-iterations // passes))
    times: dict[int, list[float]] = {s: [] for s in scheds}
    for _ in range(passes):
        _one_pass(comm, scheds, times, per_pass, warmup, dtype, op, comm.Get_size() - 1 if reduce else 1)
    return [sample_of(size, ts) for size, ts in times.items()]


def step_samples(comm: Any, sizes_bytes: Sequence[int], iterations: int, warmup: int, dtype: str = "int64",
                 op: str = "sum", passes: int = 5) -> tuple[list[Sample], list[Sample]]:
    """The plain and the reducing exchange steps measured together: every pass runs every size of
    both, so that the load a pass meets weighs on both alike (their difference is the reduction's
    cost, :func:`reduction_samples`).
    """
    plain, red = _schedules(comm, sizes_bytes, False), _schedules(comm, sizes_bytes, True)
    per_pass = max(1, -(-iterations // passes))
    t_plain: dict[int, list[float]] = {s: [] for s in plain}
    t_red: dict[int, list[float]] = {s: [] for s in red}
    for _ in range(passes):
        _one_pass(comm, plain, t_plain, per_pass, warmup, dtype, op, 1)
        _one_pass(comm, red, t_red, per_pass, warmup, dtype, op, comm.Get_size() - 1)
    return ([sample_of(size, ts) for size, ts in t_plain.items()],
            [sample_of(size, ts) for size, ts in t_red.items()])


def reduction_samples(exchange: Sequence[Sample], reducing: Sequence[Sample], floor: float = 0.02) -> list[Sample]:
    """What a reduction adds to a step, per size: the reducing step's median minus the plain exchange's."""
    out = []
    for e, r in zip(exchange, reducing, strict=True):
        if e.size_bytes != r.size_bytes:
            raise ValueError(f"the tables differ in size: {e.size_bytes} and {r.size_bytes}")
        diff = max(r.median_s - e.median_s, floor * e.median_s)
        out.append(Sample(e.size_bytes, min(e.count, r.count), diff, diff))
    return out


def local_samples(comm: Any, sizes_bytes: Sequence[int], iterations: int, dtype: str = "int64",
                  op: str = "sum") -> tuple[list[Sample], list[Sample]]:
    """Local copies and reductions of each size, every rank at once (as between a collective's steps)."""
    from .buffers import OPS, check_data
    op, np_dtype = check_data(op, dtype)
    ufunc = OPS[op]
    mine: list[list[float]] = []
    for size in sizes_bytes:
        count = max(1, -(-int(size) // np_dtype.itemsize))
        buf = np.ones(count, dtype=np_dtype)
        stage = np.ones(count, dtype=np_dtype)
        comm.Barrier()
        for kind in ("copy", "reduce"):
            times = []
            for i in range(iterations + 1):
                t0 = time.perf_counter()
                if kind == "copy":
                    buf[:] = stage
                else:
                    ufunc(buf, stage, out=buf)
                if i:
                    times.append(time.perf_counter() - t0)
            q1, med, q3 = np.percentile(times, [25, 50, 75])
            mine.append([float(med), float(np.min(times)), float(q1), float(q3)])
    table = np.asarray(comm.allgather(mine))           # (ranks, 2 * sizes, 4)
    median = np.median(table, axis=0)
    copies, reductions = [], []
    for j, size in enumerate(sizes_bytes):
        for kind, rows in ((0, copies), (1, reductions)):
            med, mn, q1, q3 = median[2 * j + kind]
            rows.append(Sample(int(size), iterations * comm.Get_size(), float(med), float(mn), float(q1), float(q3)))
    return copies, reductions
