"""Sweeps over MPI ranks: mpi4py.futures runs the points, rank 0 alone writes the results store.

Launch every rank on the same command (``mpiexec -n P collsim sweep FILE --executor mpi``):
:func:`mpi_executor` splits the world with :class:`mpi4py.futures.MPICommExecutor` into
rank 0, which reads the sweep file, opens the store and hands points out, and P − 1
workers, which run :func:`collsim.experiments.sweep.run.run_point` and send each record back.
Rank 0 commits every record as it arrives (:func:`collsim.experiments.sweep.run.run_sweep`
with ``executor=``), so the store, the resume (points already stored are not sent out)
and the kill-safety (each finished point committed at once) are those of a local sweep,
and the records are the same, record for record.  ``mpiexec -n P python -m
mpi4py.futures "$(which collsim)" sweep FILE --executor mpi`` works too (there the workers
are mpi4py's own).  docs/sweeps.md has the commands and the measured speed-up.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..core.errors import InputError

__all__ = ["mpi_executor", "run_sweep_mpi"]


@contextmanager
def mpi_executor(comm: Any = None, root: int = 0) -> Iterator[Any]:
    """The MPI executor on the root rank; None on the workers, once the root is done with them.

    Every rank enters it.  The workers serve points inside ``__enter__`` until the root
    leaves; then they see None.  If the root leaves with an exception, the points not run
    yet are cancelled.
    """
    from mpi4py import MPI
    from mpi4py.futures import MPICommExecutor
    comm = MPI.COMM_WORLD if comm is None else comm
    if comm.Get_size() < 2:
        raise InputError("--executor mpi spreads points over MPI ranks: run it under mpiexec with at least 2 "
                         "ranks (mpiexec -n 4 collsim sweep FILE --executor mpi); this world has 1")
    with MPICommExecutor(comm, root=root) as pool:
        try:
            yield pool
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            raise


def run_sweep_mpi(points: Iterable[Mapping[str, Any]], store_path: str | os.PathLike,
                  progress: Callable[[int, int, dict | None], None] | None = None,
                  comm: Any = None) -> dict[str, Any] | None:
    """Run a sweep's points over MPI ranks into a store; every rank calls it, rank 0 writes."""
    from ..experiments.sweep.store import Store
    from ..experiments.sweep.run import run_sweep
    with mpi_executor(comm) as pool:
        if pool is None:
            return None
        with Store(store_path) as store:
            return run_sweep(points, store, progress=progress, executor=pool)
