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
    """Statistics of per-iteration times (seconds, each the maximum over ranks).

    Parameters
    ----------
    mean_s, median_s, min_s, max_s : float
        Over the timed iterations.
    times_s : tuple of float
        Every timed iteration, in order.

    Examples
    --------
    >>> s = stats(np.array([3.0, 1.0, 2.0]))
    >>> s.mean_s, s.median_s, s.min_s, s.max_s
    (2.0, 2.0, 1.0, 3.0)
    """

    mean_s: float
    median_s: float
    min_s: float
    max_s: float
    times_s: tuple[float, ...]


def stats(times_s: np.ndarray) -> Stats:
    """Summarise per-iteration times.

    Parameters
    ----------
    times_s : numpy.ndarray
        One time per timed iteration (at least one).

    Returns
    -------
    Stats
        Mean, median, minimum, maximum and the times.

    Examples
    --------
    >>> stats(np.array([1e-3])).mean_s
    0.001
    """
    t = np.asarray(times_s, dtype=np.float64)
    return Stats(float(t.mean()), float(np.median(t)), float(t.min()), float(t.max()), tuple(float(x) for x in t))


def max_over_ranks(comm: Any, times_s: np.ndarray) -> np.ndarray:
    """Elementwise maximum of every rank's per-iteration times (one ``MPI_Allreduce``).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    times_s : numpy.ndarray
        This rank's times (``float64``), the same length on every rank.

    Returns
    -------
    numpy.ndarray
        The maximum over ranks, on every rank.

    Examples
    --------
    >>> from mpi4py import MPI  # doctest: +SKIP
    >>> max_over_ranks(MPI.COMM_WORLD, np.array([1.0, 2.0]))  # doctest: +SKIP
    array([1., 2.])
    """
    from mpi4py import MPI
    local = np.ascontiguousarray(times_s, dtype=np.float64)
    out = np.empty_like(local)
    comm.Allreduce(local, out, op=MPI.MAX)
    return out


def time_iterations(comm: Any, run, *, iterations: int, warmup: int, reset=None, dog=None,
                    phase: str = "native") -> Stats:
    """Run ``run()`` ``warmup + iterations`` times, each after ``reset()`` and a barrier, and time it.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    run : callable
        One iteration of the collective on this rank.
    iterations, warmup : int
        Timed and untimed iterations.
    reset : callable, optional
        Restores the input before each iteration (not timed).
    dog : Watchdog, optional
        Told where the rank is (``phase`` while running, the barrier while waiting).
    phase : str, optional
        Name of the work for the watchdog's messages.

    Returns
    -------
    Stats
        Statistics of the timed iterations, each the maximum over ranks.

    Examples
    --------
    >>> from mpi4py import MPI  # doctest: +SKIP
    >>> time_iterations(MPI.COMM_WORLD, lambda: None, iterations=3, warmup=1).mean_s < 1  # doctest: +SKIP
    True
    """
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
    """One run of a schedule on MPI ranks: its times, MPI's own collective's, and the check.

    Parameters
    ----------
    algorithm, collective, system : str
        What ran.
    nodes : int
        Ranks (= the schedule's nodes).
    size_bytes, total_bytes : int
        collsim's size and nccl-tests' size (:mod:`collsim.core.totals`).
    dtype, op : str
        Element type and reduction operation.
    iterations, warmup : int
        Timed and untimed iterations.
    steps : int
        Steps of the schedule (one ``MPI_Waitall`` each).
    time_s, time_median_s, time_min_s, time_max_s : float
        The schedule's per-iteration time (maximum over ranks): mean, median, min, max.
    native : str
        MPI's collective (``MPI_Allgather`` ...).
    native_time_s, native_time_median_s : float
        Its mean and median time in the same run.
    ratio : float
        ``time_s / native_time_s`` (above 1: collsim is slower).
    algbw_bytes_per_s, busbw_bytes_per_s : float
        nccl-tests' algorithm and bus bandwidth of ``time_s``.
    checked : bool
        The result was compared with MPI's (bit-exact for integers, :func:`~collsim.mpi.buffers.tolerance`).
    times_s, native_times_s : tuple of float
        Every timed iteration.

    Examples
    --------
    >>> r = MpiResult("ring", "allgather", "ring", 2, 8, 16, "int64", "sum", 1, 0, 1, 1e-5, 1e-5, 1e-5, 1e-5,
    ...               "MPI_Allgather", 2e-5, 2e-5, 0.5, 1.6e6, 0.8e6, True, (1e-5,), (2e-5,))
    >>> r.to_json()["ratio"], "times_s" in r.to_json()
    (0.5, False)
    """

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
        """The row without the per-iteration times (JSON-able).

        Returns
        -------
        dict
            Every field but ``times_s`` and ``native_times_s``.
        """
        row = asdict(self)
        row.pop("times_s")
        row.pop("native_times_s")
        return row


__all__ = ["MpiResult", "Stats", "max_over_ranks", "stats", "time_iterations"]
