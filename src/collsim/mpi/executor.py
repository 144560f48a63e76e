"""Run a schedule on real MPI ranks, check its result against MPI's own collective, and time both.

One rank per node of the schedule; each rank runs the plan :mod:`collsim.mpi.plan` made for it
once (its buffer and, per step, persistent MPI requests on fixed buffers): per step it packs,
starts every receive and send, waits for all of them (``MPI_Waitall``), then unpacks.  An
iteration does no Python work per chunk.  mpi4py is imported by the functions that need it,
never when this module is loaded.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..core.errors import UnsupportedError
from ..core.plugins import require
from ..core.schedule import Schedule
from ..core.schedule_file import load_schedule  # the one loader; collsim.mpi.executor.load_schedule is kept
from ..cost import bus_bandwidth
from .buffers import check_data, layout
from .faults import Fault, Watchdog, fault_from_env
from .memory import check_job_memory, rank_bytes, run_label
from .native import check_result, native_for
from .plan import RankPlan, pack, plan_rank, unpack
from .timing import MpiResult, time_iterations


def run_plan(plan: RankPlan, dog: Watchdog | None = None, fault: Fault | None = None) -> None:
    """Run one iteration of a rank's plan (its buffer must hold ``plan.start``)."""
    from mpi4py import MPI
    for st in plan.steps:
        if dog is not None:
            dog.enter(st.step)
        if fault is not None:
            fault.fire(plan.rank, st.step)
        pack(plan, st)
        MPI.Prequest.Startall(st.requests)
        if dog is not None:
            dog.enter(st.step, st.peers)
        MPI.Request.Waitall(st.requests)
        unpack(plan, st)


def check_ranks(schedule: Schedule, ranks: int) -> None:
    """Refuse a job whose rank count is not the schedule's node count."""
    n = schedule.collective.nodes
    if ranks != n:
        hint = " (was it started without mpiexec?)" if ranks == 1 else ""
        raise UnsupportedError(f"the schedule has {n} nodes but this MPI job has {ranks} rank"
                               f"{'s' if ranks != 1 else ''}{hint}: run it as mpiexec -n {n} ..., one rank per node")


def run_schedule(schedule: Schedule | str | os.PathLike, comm: Any = None, *, iterations: int = 10,
                 warmup: int = 2, op: str = "sum", dtype: str = "int64", timeout_s: float = 60.0,
                 verify: bool = True, fault: Fault | None = None) -> MpiResult:
    """Run a schedule on the ranks of ``comm``, check it against MPI's collective, and time both.

    Every rank must call it with the same arguments.  Errors are agreed by all ranks (each
    raises the same one); a rank that fails or hangs inside the timed loops aborts the whole
    job instead, with a line naming the rank and the step (:mod:`collsim.mpi.faults`).
    """
    from ..core.errors import InputError
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a whole number >= 1, got {iterations!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise InputError(f"warmup must be a whole number >= 0, got {warmup!r}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
        raise InputError(f"the timeout must be a positive number of seconds, got {timeout_s!r}")
    op, np_dtype = check_data(op, dtype)
    sched = load_schedule(schedule)
    require(sched.system, "mpi", "running a schedule over MPI")
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    check_ranks(sched, comm.Get_size())
    check_job_memory(float(rank_bytes(sched, np_dtype)[comm.Get_rank()]), run_label(sched, np_dtype.name), comm)
    if verify:
        from ..pipeline import verify as verify_schedule
        verify_schedule(sched)
    fault = fault if fault is not None else fault_from_env()
    rank, c = comm.Get_rank(), sched.collective
    lay = layout(c, np_dtype)
    label = f"{sched.algorithm} {c.name}"
    with Watchdog(comm, timeout_s, label) as dog:
        try:
            plan = plan_rank(sched, rank, np_dtype, op, comm)
            native = native_for(comm, lay, op)
            mine = time_iterations(comm, lambda: run_plan(plan, dog, fault), iterations=iterations, warmup=warmup,
                                   reset=lambda: np.copyto(plan.buffer, plan.start), dog=dog, phase="step")
            got = plan.buffer[plan.post_index]
            theirs = time_iterations(comm, native.run, iterations=iterations, warmup=warmup, dog=dog,
                                     phase=native.name)
        except Exception as exc:  # noqa: BLE001 - the other ranks would wait for this one forever
            step = dog.where[0]
            at = f"step {step}" if isinstance(step, int) else str(step)
            dog.abort(f"rank {rank} failed in {at} of {label}: {type(exc).__name__}: {exc}")
            raise
        for st in plan.steps:
            for req in st.requests:
                req.Free()
    check_result(comm, lay, rank, plan.post_chunks, plan.last_step, got, native, op)
    algbw, busbw = bus_bandwidth(c, mine.mean_s)
    from ..core.totals import total_bytes
    return MpiResult(sched.algorithm, c.name, sched.system.name, c.nodes, c.size_bytes,
                     total_bytes(c.name, c.nodes, c.size_bytes), np_dtype.name, op, iterations, warmup,
                     sched.num_steps, mine.mean_s, mine.median_s, mine.min_s, mine.max_s, native.name,
                     theirs.mean_s, theirs.median_s, mine.mean_s / theirs.mean_s if theirs.mean_s > 0 else float("inf"),
                     algbw, busbw, True, mine.times_s, theirs.times_s)


__all__ = ["MpiResult", "check_ranks", "load_schedule", "run_plan", "run_schedule"]
