"""The ping-pong microbenchmark under MPI that :mod:`collsim.mpi.calibrate` fits.

Rank 0 plays **ping-pong** with each other rank in turn (the others wait in a barrier that
sleeps, leaving the cores to the pair); a sample is half a timed round trip, and per size
the table keeps the median and the minimum over every pair's samples.  A **burst** of
:data:`BURST` messages posted back to back measures the per-message overhead o.  The
table and o go to :func:`collsim.mpi.calibrate.calibration_from` for the fit.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np

from ..core.errors import InputError
from .calibrate import Calibration, Sample, calibration_from

__all__ = ["BURST", "DEFAULT_SIZES_BYTES", "check_sizes", "measure", "require_ranks"]

DEFAULT_SIZES_BYTES: tuple[int, ...] = tuple(4**k for k in range(13))
"""Message sizes measured by default: powers of 4 from 1 B to 16 MiB (13 sizes)."""
MAX_SIZE_BYTES = 2**30
"""Largest message measured (1 GiB): each of the pair holds one buffer of it."""
BURST = 16
"""Messages in the burst that measures the per-message overhead."""


def check_sizes(sizes_bytes: Sequence[int]) -> tuple[int, ...]:
    """Sizes to measure, sorted and without repeats; at least two, each 1 B .. 1 GiB."""
    out = sorted(set(int(s) for s in sizes_bytes))
    bad = [s for s in out if not 1 <= s <= MAX_SIZE_BYTES]
    if bad:
        raise InputError(f"a calibration message size must be 1 B to 1 GiB, not {bad[0]} bytes")
    if len(out) < 2:
        raise InputError(f"calibration fits a line: it needs at least two different sizes, got {len(out)}")
    return tuple(out)


def require_ranks(comm: Any) -> int:
    """The rank count of ``comm``, refused below two: a calibration measures between ranks."""
    ranks = comm.Get_size()
    if ranks < 2:
        raise InputError("calibration measures between MPI ranks: run it under mpiexec with at least 2 ranks "
                         f"(mpiexec -n 2 collsim calibrate); this world has {ranks}")
    return ranks


def _quiet_barrier(comm: Any) -> None:
    """A barrier that sleeps while it waits, leaving the cores to the ranks at work."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(2e-4)


def _rounds(comm: Any, peer: int, size: int, count: int, answer: int, rounds: int, warmup: int,
            lead: bool) -> list[float]:
    """Times of rounds: ``count`` messages of ``size`` bytes posted back to back, then ``answer`` bytes back."""
    from mpi4py import MPI
    bufs = [np.ones(size, dtype=np.uint8) for _ in range(count)]
    back = np.ones(answer, dtype=np.uint8)
    out = []
    for _ in range(warmup + rounds):
        t0 = time.perf_counter()
        if lead:
            MPI.Request.Waitall([comm.Isend(b, dest=peer, tag=1) for b in bufs])
            comm.Recv(back, source=peer, tag=2)
        else:
            MPI.Request.Waitall([comm.Irecv(b, source=peer, tag=1) for b in bufs])
            comm.Send(back, dest=peer, tag=2)
        out.append(time.perf_counter() - t0)
    return out[warmup:]


def measure(comm: Any = None, sizes_bytes: Sequence[int] = DEFAULT_SIZES_BYTES, iterations: int = 20,
            warmup: int = 3, statistic: str = "min") -> Calibration | None:
    """Measure ping-pong times between rank 0 and every other rank, and fit them (collective call)."""
    sizes = check_sizes(sizes_bytes)
    if iterations < 1 or warmup < 0:
        raise InputError(f"iterations must be at least 1 and warmup at least 0, not {iterations} and {warmup}")
    if statistic not in ("median", "min"):
        raise InputError(f"the statistic to fit is median or min, not {statistic!r}")
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    ranks, rank = require_ranks(comm), comm.Get_rank()
    from ..core.units import format_size
    from .memory import check_job_memory
    check_job_memory(2.0 * sizes[-1], f"a ping-pong of messages up to {format_size(sizes[-1])} on {ranks} MPI ranks",
                     comm)  # each of a pair holds a message and its answer
    times: dict[int, list[float]] = {s: [] for s in sizes}
    overheads = []
    for peer in range(1, ranks):
        if rank in (0, peer):
            other = peer if rank == 0 else 0
            lead = rank == 0
            for size in sizes:  # a ping-pong: one message, the same size back; one way is half of it
                times[size] += [t / 2 for t in _rounds(comm, other, size, 1, size, iterations, warmup, lead)]
            single, many = (min(_rounds(comm, other, sizes[0], k, 0, iterations, max(warmup, 2), lead))
                            for k in (1, BURST))
            overheads.append(max(many - single, 0.0) / (BURST - 1))
        _quiet_barrier(comm)
    if rank != 0:
        return None
    samples = [Sample(s, len(ts), float(np.median(ts)), float(np.min(ts)), float(np.percentile(ts, 25)),
                      float(np.percentile(ts, 75))) for s, ts in times.items()]
    return calibration_from(samples, float(np.median(overheads)), ranks, iterations, statistic)
