"""``collsim mpi``: run an algorithm's schedule (or a schedule file) for real on MPI ranks.

Run it under ``mpiexec -n P`` with P the schedule's node count (docs/mpi.md).  Every rank
builds the same schedule and runs its part; rank 0 prints.  An error every rank agrees on
(a rank count that does not fit, a result that differs from MPI's own collective) is printed
once, by rank 0, and every rank exits with its status.  The library (:mod:`collsim.mpi`,
mpi4py) is imported inside the command (tests/test_startup.py).
"""

from __future__ import annotations

import os
import sys

import click

from .options import StrictCommand, checked, given_options, parse_params, system_options
from .output import Output, TableColumn, emit, output_options, print_table
from .sizes import size_options

RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID")


def job_rank() -> int:
    """This process's rank in the MPI job: from MPI once it runs, else from the launcher's environment."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        return mpi.COMM_WORLD.Get_rank()
    for name in RANK_VARIABLES:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def _pct(predicted, measured: float):
    return None if predicted is None or not measured > 0 else 100.0 * (predicted - measured) / measured


def predictions(sched, measured_s: float, simulate: bool) -> dict:
    """The model's times for a schedule beside a measured one."""
    from ..core.plugins import supports
    from ..pipeline import verify
    report = verify(sched, answer=False)  # the closed form; the kind's answer is not needed here
    closed = report.closed_form_time_s
    if not simulate:
        return {"predicted_time_s": closed}
    sim = None
    if supports(sched.system, "flow-simulation"):  # the kind says whether it simulates, not a probe of its row
        from ..sim import simulate as flow
        sim = float(flow(sched, report=report).total_time_s)
    return {"predicted_time_s": closed, "simulated_time_s": sim,
            "predicted_error_pct": _pct(closed, measured_s), "simulated_error_pct": _pct(sim, measured_s)}


@click.command("mpi", cls=StrictCommand)
@click.argument("target", metavar="ALGORITHM|FILE")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to run.")
@size_options()
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value.")
@click.option("--iterations", "-I", type=click.IntRange(min=1), default=20, show_default=True,
              help="Timed iterations (each the maximum over ranks).")
@click.option("--warmup", "-W", type=click.IntRange(min=0), default=5, show_default=True,
              help="Untimed iterations before them.")
@click.option("--op", default="sum", show_default=True,
              help="Reduction operation: sum, prod, max, min, band, bor, bxor.")
@click.option("--dtype", default="int64", show_default=True,
              help="Element type: int64 or int32 (checked bit-exact), float64 or float32 (within a tolerance).")
@click.option("--timeout", "timeout", default="60s", show_default=True,
              help="Abort the job when a rank stays this long in one step (1s, 500ms, seconds).")
@click.option("--predict", is_flag=True,
              help="Also the flow-simulated time and the models' errors in per cent against the measurement.")
@output_options(wide=True)
def mpi_cmd(target, system, collective, sizes, params, iterations, warmup, op, dtype, timeout, predict,
            out: Output) -> None:
    """Run a schedule for real on MPI ranks, checked and timed against MPI's own collective.

    Start it with one rank per node: mpiexec -n P collsim mpi ... (P = the system's node
    count); python -m collsim.mpi is the same command.  Every rank checks its result against
    MPI's collective on the same input (bit-exact for integers) and the times are the
    maximum over ranks per iteration, after the warm-up.

    \b
    Examples:
      mpiexec -n 8 collsim mpi ring --system ring -n 8 -c allreduce -s 1MiB
      mpiexec -n 8 collsim mpi ring --system ring -n 8 -c allgather -b 64KiB -e 16MiB -f 4 --format csv
      mpiexec -n 16 collsim mpi osm --system paper -n 16 -c alltoall -s 64KiB --json
      mpiexec -n 4 collsim mpi sched.json --iterations 50
      mpiexec -n 8 collsim mpi ring --system calibrated.toml -c allreduce -s 4MiB --predict
    """
    from ..core.errors import CollsimError, VerificationError
    try:
        rows = _run(target, system, collective, sizes, params, iterations, warmup, op, dtype, timeout, predict)
    except CollsimError as exc:
        if job_rank() != 0:  # every rank raised the same error: rank 0 prints it
            sys.exit(1 if isinstance(exc, VerificationError) else 2)
        raise
    if job_rank() == 0:
        _print(rows, out, predict)


def _run(target, system, collective, sizes, params, iterations, warmup, op, dtype, timeout, predict) -> list[dict]:
    from ..core.units import parse_time
    from ..mpi.buffers import check_data
    from .sizes import iter_schedules, schedule_facts
    check_data(op, dtype)
    timeout_s = parse_time(timeout)
    if not timeout_s > 0:
        raise click.UsageError("--timeout must be positive")
    from .resolve import resolve_target
    if resolve_target(target).is_file:  # the one rule of ALGORITHM|FILE (cli/resolve.py)
        if target == "-":
            raise click.UsageError("every rank reads the schedule: give a schedule file, not - (standard input)")
        if sizes.explicit:
            raise click.UsageError("a schedule file has its own size, root and shift: --size, --total-size, -b/-e, "
                                   "--root and --shift apply when running an algorithm")
        ignored = given_options(click.get_current_context(), exclude=(
            "target", "fmt", "as_json", "wide_table", "iterations", "warmup", "op", "dtype", "timeout", "predict"))
        if ignored:
            raise click.UsageError(f"a schedule file carries its own system, collective and algorithm; "
                                   f"{', '.join(ignored)} would be ignored")
        from ..mpi.executor import load_schedule
        scheds = [load_schedule(target)]
    else:
        def build_all():  # the scope is checked when an algorithm is built, not for a file
            return iter_schedules(target, checked(system), collective, sizes, params=parse_params(params))
        from mpi4py import MPI

        from ..mpi.memory import check_schedules_memory
        check_schedules_memory(build_all(), dtype, MPI.COMM_WORLD)  # a sweep is refused whole, before its first run
        scheds = build_all()
    from ..mpi.executor import run_schedule
    rows = []
    for sched in scheds:
        result = run_schedule(sched, iterations=iterations, warmup=warmup, op=op, dtype=dtype, timeout_s=timeout_s)
        row = {**schedule_facts(sched), **result.to_json()}
        if job_rank() == 0:
            row.update(predictions(sched, result.time_s, predict))
        rows.append(row)
    return rows


def _print(rows: list[dict], out: Output, predict: bool) -> None:
    from ..core.units import format_bandwidth, format_size, format_time

    def time(value) -> str:
        return "-" if value is None else format_time(value)

    def pct(value) -> str:
        return "-" if value is None else f"{value:+.1f} %"

    def table() -> None:
        first = rows[0]
        cols = [TableColumn("size", [format_size(r["size_bytes"]) for r in rows]),
                TableColumn("total", [format_size(r["total_bytes"]) for r in rows], drop=2),
                TableColumn("time", [time(r["time_s"]) for r in rows]),
                TableColumn("native", [time(r["native_time_s"]) for r in rows]),
                TableColumn("ratio", [f"{r['ratio']:.2f}" for r in rows]),
                TableColumn("algbw", [format_bandwidth(r["algbw_bytes_per_s"]) for r in rows], drop=4),
                TableColumn("busbw", [format_bandwidth(r["busbw_bytes_per_s"]) for r in rows], drop=3),
                TableColumn("predicted", [time(r["predicted_time_s"]) for r in rows], drop=5)]
        if predict:
            cols += [TableColumn("error", [pct(r["predicted_error_pct"]) for r in rows], drop=5),
                     TableColumn("simulated", [time(r["simulated_time_s"]) for r in rows], drop=1),
                     TableColumn("sim. error", [pct(r["simulated_error_pct"]) for r in rows], drop=1)]
        print_table(f"collsim mpi: {first['algorithm']} {first['collective']} on {first['nodes']} ranks "
                    f"({first['system']}), {first['dtype']}, op {first['op']}", cols,
                    caption=[f"time: mean over {first['iterations']} iterations after {first['warmup']} warm-up, each "
                             f"the maximum over ranks; native: {first['native']} in the same run; ratio: time / "
                             f"native; results checked against {first['native']}"])
    emit(out, rows, table)


__all__ = ["job_rank", "mpi_cmd", "predictions"]
