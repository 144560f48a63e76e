"""``collsim validate``: calibrate (or read a calibration), run collectives for real, judge the predictions.

Run it under mpiexec (``mpiexec -n 2 collsim validate``): every rank measures and runs, rank 0
prints, writes the figure and fills the results store.  The library (:mod:`collsim.mpi.validate`,
:mod:`collsim.mpi.validate_report`, mpi4py, matplotlib) is imported inside the command
(tests/test_startup.py); docs/calibration.md explains the model and shows the figures measured here.
"""

from __future__ import annotations

import sys

import click

from .options import StrictCommand
from .output import Output, TableColumn, echo, emit, emit_json, output_options, print_table


@click.command("validate", cls=StrictCommand)
@click.option("--calibration", "calibration_path", default=None, type=click.Path(dir_okay=False),
              help="A file `collsim calibrate` wrote with its default model, loggp-piecewise, on as many ranks "
              "[default: calibrate now].")
@click.option("--out", "-o", "out_path", default="calibrated.toml", show_default=True,
              type=click.Path(dir_okay=False), help="Without --calibration: the system file the calibration writes.")
@click.option("--rows", "pairs", default=None,
              help="ALGORITHM:COLLECTIVE pairs, comma-separated [default: ring, recursive-doubling and rabenseifner "
                   "all-reduce; ring, bruck and recursive-doubling all-gather].")
@click.option("--sizes", default="1KiB,16KiB,256KiB,4MiB", show_default=True, help="Sizes, comma-separated.")
@click.option("--iterations", "-I", default=20, show_default=True, type=click.IntRange(min=1),
              help="Timed iterations per row (each the maximum over ranks).")
@click.option("--warmup", "-W", default=5, show_default=True, type=click.IntRange(min=0),
              help="Untimed iterations before them.")
@click.option("--calibration-iterations", default=50, show_default=True, type=click.IntRange(min=1),
              help="Without --calibration: repetitions per size of each microbenchmark.")
@click.option("--dtype", default="int64", show_default=True, help="Element type (as collsim mpi).")
@click.option("--op", default="sum", show_default=True, help="Reduction (as collsim mpi).")
@click.option("--figure", "figure_path", default=None, type=click.Path(dir_okay=False),
              help="Write the log-log predicted-against-measured figure (PNG) with the ±15 % band.")
@click.option("--store", "store_path", default=None, type=click.Path(dir_okay=False),
              help="Record every row in this results store (SQLite; collsim results reads it).")
@output_options()
def validate_cmd(calibration_path, out_path, pairs, sizes, iterations, warmup, calibration_iterations, dtype, op,
                 figure_path, store_path, out: Output) -> None:
    """Calibrate loggp-piecewise, run collectives for real, and compare predicted with measured.

    For every (algorithm, collective, size): collsim's executor and MPI's own collective run in
    the same job; the loggp-piecewise model (closed form and flow simulator) and the plain α–β
    model (the baseline) predict it; errors are against the median iteration.  Prints the
    table and, per model, the geometric-mean and largest error against the targets (15 %,
    40 %), unless the calibration's ping-pong is too noisy to judge.

    \b
    Examples:
      mpiexec -n 2 collsim validate --out host2.toml --figure validate2.png --store results.sqlite
      mpiexec -n 4 collsim validate --calibration host4.toml --json
      mpiexec -n 2 collsim validate --rows ring:allreduce --sizes 1KiB,4MiB -I 50
    """
    from ..core.errors import CollsimError
    from ..core.files import writable_file
    from .mpi_cmd import job_rank
    for path, what in ((figure_path, "the figure"), (store_path, "the results store")):
        if path is not None:
            writable_file(path, what)
    if calibration_path is None:
        writable_file(out_path, "the system file")
    try:
        from ..mpi.validate import parse_pairs
        chosen = parse_pairs(pairs)
        size_list = _sizes(sizes)
        if calibration_path is not None and out_path != "calibrated.toml":
            raise click.UsageError("--out is where a new calibration goes; --calibration reads one: give one of them")
        result = _run(calibration_path, out_path, chosen, size_list, iterations, warmup, calibration_iterations,
                      dtype, op)
    except CollsimError:
        if job_rank() != 0:  # every rank raised the same error: rank 0 prints it
            sys.exit(2)
        raise
    if result is None:
        return
    rows, summary, system, calibration_id = result
    if figure_path is not None:
        from ..mpi.validate_report import plot
        plot(rows, figure_path, f"collsim validate: {system.nodes} MPI ranks, system {system.name!r} (loggp-piecewise)")
    if store_path is not None:
        from ..mpi.validate_report import store_rows
        store_rows(rows, store_path, calibration_id, system.name)
    _report(out, rows, summary, figure_path, store_path)


def _sizes(text: str) -> list[int]:
    from ..core.errors import InputError
    from ..core.units import parse_size
    items = [s.strip() for s in text.split(",")]
    if not all(items):
        raise InputError(f"--sizes is a comma-separated list of sizes (1KiB,4MiB), not {text!r}")
    return [parse_size(s) for s in items]


def _run(calibration_path, out_path, pairs, sizes, iterations, warmup, calibration_iterations, dtype, op):
    """Check, calibrate or read, then run the rows; on rank 0 ``(rows, summary, system, calibration id)``, else None.

    Everything that can be refused is refused before anything is measured: the calibration file (what it
    is, its model, its rank count) and the memory every row will need.
    """
    import os

    from mpi4py import MPI

    from ..core.errors import UnsupportedError
    from ..mpi.buffers import check_data
    from ..mpi.calibration_file import read_calibration
    from ..mpi.loggp_calibrate import measure_loggp, samples_from_table, spread_of
    from ..mpi.validate import (REFERENCE_SIZES_BYTES, check_rows_memory, drift, run_rows, summarize,
                                validation_calibration)
    check_data(op, dtype)
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        raise UnsupportedError("validation runs collectives between MPI ranks: start it under mpiexec with at least "
                               "2 ranks (mpiexec -n 2 collsim validate); this world has 1")
    source = validation_calibration(calibration_path, comm.Get_size()) if calibration_path is not None else None
    check_rows_memory(pairs, sizes, dtype, comm)
    if source is None:
        cal = measure_loggp(comm, iterations=calibration_iterations, dtype=dtype, op=op)
        if comm.Get_rank() == 0:
            cal.write(out_path)
        comm.Barrier()
        source = read_calibration(out_path)
    system = source.system()
    reference: dict[int, list[float]] = {size: [] for size in REFERENCE_SIZES_BYTES}
    rows = run_rows(system, pairs, sizes, iterations=iterations, warmup=warmup, dtype=dtype, op=op, comm=comm,
                    reference=reference)
    if rows is None:
        return None
    exchange = samples_from_table(source.table, source.path)[0]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    summary = summarize(rows, spread_of(source.plain("min").samples), exchange_spread=spread_of(exchange),
                        ranks=comm.Get_size(), cores=cores, drift_since_calibration=drift(exchange, reference))
    return rows, summary, system, source.digest


def _report(out: Output, rows, summary, figure_path, store_path) -> None:
    from ..core.units import format_size, format_time
    from ..mpi.validate import MODELS

    def pct(value: float) -> str:
        return f"{100 * value:+.0f}%"

    def table() -> None:
        print_table(f"predicted against measured on {rows[0].nodes} MPI ranks (median iteration of collsim's executor)", [
            TableColumn("algorithm", [r.algorithm for r in rows]),
            TableColumn("collective", [r.collective for r in rows]),
            TableColumn("size", [format_size(r.size_bytes) for r in rows]),
            TableColumn("median", [format_time(r.median_s) for r in rows]),
            TableColumn("mean", [format_time(r.mean_s) for r in rows], drop=3),
            TableColumn("MPI", [format_time(r.native_median_s) for r in rows], drop=2),
            TableColumn("loggp", [format_time(r.loggp_closed_s) for r in rows]),
            TableColumn("err", [pct(r.error("loggp_closed")) for r in rows]),
            TableColumn("sim", [format_time(r.loggp_sim_s) for r in rows], drop=4),
            TableColumn("err", [pct(r.error("loggp_sim")) for r in rows]),
            TableColumn("α–β", [format_time(r.plain_closed_s) for r in rows]),
            TableColumn("err", [pct(r.error("plain_closed")) for r in rows]),
            TableColumn("α–β sim", [pct(r.error("plain_sim")) for r in rows], drop=1)],
            caption=["loggp: loggp-piecewise closed form; sim: its flow simulator; α–β: the plain model "
                     "(closed form; α–β sim: its flow simulator's error); MPI: MPI's own collective, median"])
        names = {"loggp_closed": "loggp-piecewise closed form", "loggp_sim": "loggp-piecewise flow simulator",
                 "plain_closed": "plain α–β closed form", "plain_sim": "plain α–β flow simulator"}
        for m in MODELS:
            e = summary["models"][m]
            verdict = ""
            if summary["judged"]:
                verdict = ": meets the targets" if e["meets_targets"] else ": misses the targets"
            echo(f"{names[m]}: geometric-mean error {100 * e['geomean_error']:.1f}%, largest "
                 f"{100 * e['max_error']:.1f}% ({e['worst']}){verdict}")
        spread = summary["median_iteration_spread"]
        moved = summary["drift_since_calibration"]
        moved_text = "" if moved is None else f"; the exchange step runs {100 * moved:.0f}% off its calibrated time"
        echo(f"targets: geometric mean ≤ {100 * summary['targets']['geomean_error']:.0f}%, largest ≤ "
             f"{100 * summary['targets']['max_error']:.0f}%; {summary['reason']}; iterations scatter by "
             f"{100 * spread:.0f}% (IQR / median, median over rows){moved_text}")
        if figure_path:
            echo(f"wrote {figure_path}")
        if store_path:
            echo(f"recorded {len(rows)} rows in {store_path} (collsim results --store {store_path})")

    if out.format == "json":
        emit_json({"rows": [r.to_json() for r in rows], "summary": summary, "figure": figure_path,
                   "store": store_path})
    else:
        emit(out, [r.to_json() for r in rows], table)


ALL = [validate_cmd]
