"""Timing on MPI ranks: per-iteration times as the maximum over ranks, and their statistics.

Each iteration starts after a barrier; each rank times it with ``MPI.Wtime`` and the
iteration's time is the largest over ranks (the collective is done when its last rank is).
The first ``warmup`` iterations are run and dropped.  Statistics follow nccl-tests: the
reported time is the mean over the timed iterations; median, minimum and maximum are given
beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Stats:
    """Statistics of per-iteration times (seconds, each the maximum over ranks)."""

    mean_s: float
    median_s: float
    min_s: float
    max_s: float
    times_s: tuple[float, ...]


def stats(times_s: np.ndarray) -> Stats:
    """Summarise per-iteration times."""
    t = np.asarray(times_s, dtype=np.float64)
    return Stats(float(t.mean()), float(np.median(t)), float(t.min()), float(t.max()), tuple(float(x) for x in t))


def max_over_ranks(comm: Any, times_s: np.ndarray) -> np.ndarray:
    """Elementwise maximum of every rank's per-iteration times (one ``MPI_Allreduce``)."""
    from mpi4py import MPI
    local = np.ascontiguousarray(times_s, dtype=np.float64)
    out = np.empty_like(local)
    comm.Allreduce(local, out, op=MPI.MAX)
    return out


def time_iterations(comm: Any, run, *, iterations: int, warmup: int, reset=None, dog=None,
                    phase: str = "native") -> Stats:
    """Run ``run()`` ``warmup + iterations`` times, each after ``reset()`` and a barrier, and time it."""
    from mpi4py import MPI
    times = np.empty(iterations, np.float64)
    for i in range(warmup + iterations):
        if reset is not None:
            reset()
        if dog is not None:
            dog.enter("the barrier before an iteration", ())
        comm.Barrier()
        if dog is not None:
            dog.enter(phase, ())
        t0 = MPI.Wtime()
        run()
        t1 = MPI.Wtime()
        if i >= warmup:
            times[i - warmup] = t1 - t0
    if dog is not None:
        dog.enter("collecting the times", ())
    return stats(max_over_ranks(comm, times))


@dataclass(frozen=True)
class MpiResult:
    """One run of a schedule on MPI ranks: its times, MPI's own collective's, and the check."""

    algorithm: str
    collective: str
    system: str
    nodes: int
    size_bytes: int
    total_bytes: int
    dtype: str
    op: str
    iterations: int
    warmup: int
    steps: int
    time_s: float
    time_median_s: float
    time_min_s: float
    time_max_s: float
    native: str
    native_time_s: float
    native_time_median_s: float
    ratio: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    checked: bool
    times_s: tuple = ()
    native_times_s: tuple = ()

    def to_json(self) -> dict:
        """The row without the per-iteration times (JSON-able)."""
        row = asdict(self)
        row.pop("times_s")
        row.pop("native_times_s")
        return row


__all__ = ["MpiResult", "Stats", "max_over_ranks", "stats", "time_iterations"]
