"""Run schedules for real on MPI ranks (needs the ``[mpi]`` extra: mpi4py and an MPI library).

``mpiexec -n P collsim mpi ALGORITHM ...`` (or ``python -m collsim.mpi``) and
:func:`run_schedule` run a schedule with one rank per node, check each rank's result
against MPI's own collective on the same input, and time both (docs/mpi.md).

Importing this package imports neither mpi4py nor numpy: the names below are loaded on
first use, and MPI is initialised only when a run starts.

>>> import collsim.mpi
>>> sorted(collsim.mpi.__all__)[:3]
['MpiResult', 'ResultMismatchError', 'run_schedule']
"""

from __future__ import annotations

from importlib import import_module

_LAZY = {"run_schedule": ".executor", "MpiResult": ".timing", "ResultMismatchError": ".native"}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'collsim.mpi' has no attribute {name!r}")
