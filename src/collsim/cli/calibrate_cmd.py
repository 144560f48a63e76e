"""``collsim calibrate``: measure communication between MPI ranks and write a calibrated system.

Run it under mpiexec (``mpiexec -n 2 collsim calibrate``): rank 0 prints and writes, the
other ranks print nothing, and an error every rank meets is printed once, by rank 0.  The
default model is ``loggp-piecewise`` (it predicts collectives best: docs/calibration.md);
``--model alpha-beta`` writes the ping-pong's line alone.  ``--refit`` fits the raw tables a
calibration wrote again (the file's model, or another statistic) without MPI
(:mod:`collsim.mpi.calibration_file` reads them).  The library is imported inside the
command (tests/test_startup.py); docs/calibration.md explains the measurements and the fits.
"""

from __future__ import annotations

import sys

import click

from .options import StrictCommand
from .output import Output, TableColumn, echo, emit, emit_json, output_options, print_table


@click.command("calibrate", cls=StrictCommand)
@click.option("--out", "-o", "out_path", default="calibrated.toml", show_default=True,
              type=click.Path(dir_okay=False), help="The system TOML to write: a star with one node per rank.")
@click.option("--sizes", default=None,
              help="Ping-pong message sizes, comma-separated (1B,1KiB,1MiB) [default: 1 B to 16 MiB, powers of 4].")
@click.option("--iterations", "-I", default=20, show_default=True, type=click.IntRange(min=1),
              help="Timed repetitions per size: round trips per pair of ranks; loggp-piecewise: exchange "
              "steps, copies and reductions too.")
@click.option("--warmup", "-W", default=3, show_default=True, type=click.IntRange(min=0),
              help="Untimed repetitions before them.")
@click.option("--statistic", type=click.Choice(["min", "median"]), default="min", show_default=True,
              help="The ping-pong's one-way time per size that the α–β line is fitted to (loggp-piecewise fits "
              "the exchange's median).")
@click.option("--name", default="calibrated", show_default=True, help="The system's name in the file.")
@click.option("--refit", "refit_path", default=None, type=click.Path(dir_okay=False),
              help="Fit the raw tables of a file calibrate wrote again, without measuring (no MPI).")
@click.option("--model", "model_name", type=click.Choice(["loggp-piecewise", "alpha-beta"]), default=None,
              help="loggp-piecewise (the default; with --refit: the file's model): the ping-pong, a two-way exchange "
              "of every rank at once fitted piecewise (breakpoints from the data), the per-message overhead and "
              "local copy and reduction costs, written as the system's model: it predicts collectives best "
              "(docs/calibration.md). alpha-beta: the ping-pong's one line only.")
@click.option("--exchange-sizes", default=None,
              help="loggp-piecewise: exchange and local sizes, comma-separated [default: 64 B to 16 MiB, powers of 2].")
@click.option("--dtype", default="int64", show_default=True,
              help="loggp-piecewise: element type of the measured reductions (int64, int32, float64, float32).")
@click.option("--op", default="sum", show_default=True,
              help="loggp-piecewise: the measured reduction (sum, prod, max, min, band, bor, bxor).")
@output_options()
def calibrate_cmd(out_path, sizes, iterations, warmup, statistic, name, refit_path, model_name, exchange_sizes,
                  dtype, op, out: Output) -> None:
    """Measure communication between MPI ranks, fit loggp-piecewise (or α–β), write a system TOML.

    By default (--model loggp-piecewise) rank 0 plays ping-pong with every other rank (1 B to
    16 MiB), then every rank at once runs two-way exchange steps through collsim's executor (64 B
    to 16 MiB), local copies and reductions; the exchange times are fitted piecewise, with the
    protocol switches found from the data, and written as the system's model beside the plain
    α–β line: the model that predicts collectives best (docs/calibration.md). --model alpha-beta
    writes the ping-pong's line alone: t(m) = α + m/β fitted to the one-way times (weighted by
    1/t), a star with startup_s + 2 link_latency_s = α and link_bandwidth = β. Both print the
    measured tables with the fit beside each point, R² and the largest error.

    \b
    Examples:
      mpiexec -n 2 collsim calibrate --out host.toml
      mpiexec -n 4 collsim calibrate --iterations 50 --dtype float64 --json
      collsim calibrate --refit host.toml --out again.toml
      collsim compare --system host.toml -c allreduce -s 1MiB
      mpiexec -n 2 collsim calibrate --model alpha-beta --sizes 1B,1KiB,1MiB,16MiB --out plain.toml
      collsim calibrate --model alpha-beta --refit plain.toml --statistic median --out plain-median.toml
    """
    from ..core.errors import CollsimError
    from .mpi_cmd import job_rank
    try:
        _calibrate(out, out_path, sizes, iterations, warmup, statistic, name, refit_path, model_name,
                   exchange_sizes, dtype, op)
    except CollsimError:
        if job_rank() != 0:  # every rank refused alike: rank 0 says it, once
            sys.exit(2)
        raise


def _calibrate(out: Output, out_path, sizes, iterations, warmup, statistic, name, refit_path, model_name,
               exchange_sizes, dtype, op) -> None:
    from ..core.errors import InputError
    from ..core.files import writable_file
    from ..mpi.calibration_file import MODELS, read_calibration
    if not name.strip():
        raise InputError("--name is the system's name in the file; it cannot be empty")
    writable_file(out_path, "the system file")  # before MPI measures anything: a read-only folder, a long name
    source = read_calibration(refit_path) if refit_path is not None else None
    model_name = model_name or (source.model if source is not None else MODELS[0])
    if model_name == "loggp-piecewise":
        return _loggp(out, out_path, sizes, exchange_sizes, iterations, warmup, statistic, name, source, dtype, op)
    if exchange_sizes is not None:
        raise click.UsageError("--exchange-sizes is for --model loggp-piecewise")
    if source is not None:
        if sizes is not None:
            raise click.UsageError("--sizes measures; --refit fits a table already measured: give one of them")
        cal = source.plain(statistic)
    else:
        from ..mpi.pingpong import DEFAULT_SIZES_BYTES, check_sizes, measure
        chosen = check_sizes(_size_list(sizes, "--sizes") or DEFAULT_SIZES_BYTES)
        cal = measure(sizes_bytes=chosen, iterations=iterations, warmup=warmup, statistic=statistic)
        if cal is None:  # not rank 0: it measured, rank 0 reports
            return
    cal.write(out_path, name)
    _report(out, cal, out_path)
    from ..mpi.calibrate import fit_warning
    warning = fit_warning(cal.fit)
    if warning:  # written all the same: the raw table is in it, and --refit can fit it again
        echo(f"collsim: {warning}", err=True)


def _size_list(text: str | None, option: str):
    from ..core.errors import InputError
    from ..core.units import parse_size
    if text is None:
        return None
    items = [s.strip() for s in text.split(",")]
    if not all(items):
        raise InputError(f"{option} is a comma-separated list of sizes (1B,1KiB,1MiB), not {text!r}")
    return [parse_size(s) for s in items]


def _loggp(out: Output, out_path, sizes, exchange_sizes, iterations, warmup, statistic, name, source,
           dtype, op) -> None:
    """``--model loggp-piecewise``: measure (or refit the file ``source``) and write the system with its model."""
    from ..mpi.buffers import check_data
    from ..mpi.calibrate import fit_warning
    from ..mpi.loggp_calibrate import loggp_calibration_from, loggp_warning, measure_loggp, samples_from_table
    from ..mpi.pingpong import check_sizes
    op, np_dtype = check_data(op, dtype)
    if source is not None:
        if sizes is not None or exchange_sizes is not None:
            raise click.UsageError("--sizes and --exchange-sizes measure; --refit fits tables already measured")
        source.require("loggp-piecewise", "--refit --model loggp-piecewise")
        exchange, copies, reductions, dtype, op = samples_from_table(source.table, source.path)
        cal = loggp_calibration_from(source.plain(statistic), exchange, copies, reductions, dtype, op)
    else:
        ping = _size_list(sizes, "--sizes")
        ex = _size_list(exchange_sizes, "--exchange-sizes")
        cal = measure_loggp(sizes_bytes=check_sizes(ping) if ping else None,
                            exchange_sizes_bytes=check_sizes(ex) if ex else None, iterations=iterations,
                            warmup=warmup, statistic=statistic, dtype=np_dtype.name, op=op)
        if cal is None:  # not rank 0
            return
    cal.write(out_path, name)
    _report_loggp(out, cal, out_path)
    for warning in (fit_warning(cal.plain.fit), loggp_warning(cal)):
        if warning:
            echo(f"collsim: {warning}", err=True)


def _report_loggp(out: Output, cal, out_path: str) -> None:
    from ..core.units import format_size, format_time
    rows = cal.exchange_rows()
    doc = cal.to_json()

    def table() -> None:
        print_table(f"two-way exchange steps on {cal.plain.ranks} MPI ranks at once (maximum over ranks per "
                    f"iteration), {cal.exchange[0].count} iterations per size", [
                        TableColumn("size", [format_size(r["size_bytes"]) for r in rows]),
                        TableColumn("median", [format_time(r["median_s"]) for r in rows]),
                        TableColumn("min", [format_time(r["min_s"]) for r in rows]),
                        TableColumn("spread", [f"{100 * (r['q3_s'] - r['q1_s']) / r['median_s']:.0f}%" for r in rows]),
                        TableColumn("fit", [format_time(r["fit_s"]) for r in rows]),
                        TableColumn("error", [f"{r['error_percent']:+.1f}%" for r in rows])])
        f, m = cal.fit, cal.model()
        bounds = [0, *f.breakpoints_bytes]
        for i, (a, b) in enumerate(zip(f.alpha_s, f.beta_bytes_per_s)):
            upto = f"up to {format_size(f.breakpoints_bytes[i])}" if i < len(f.breakpoints_bytes) else "the rest"
            lo = f"above {format_size(bounds[i])}, " if i else ""
            echo(f"segment {i + 1} ({lo}{upto}): α = {format_time(a)}, β = {b / 1e9:.4g} GB/s")
        echo(f"piecewise fit of the median: R² = {f.r_squared:.4f}, largest error {100 * f.max_relative_error:.1f}%")
        def local(bps, fixed, rate):
            return "; ".join(f"{'≤ ' + format_size(b) if b else 'above'}: {format_time(a)} + m / {r / 1e9:.4g} GB/s"
                             for b, a, r in zip([*bps, None], fixed, rate))
        echo(f"per-message overhead o = {format_time(m.overhead_s)}")
        echo(f"local copy: {local(m.copy_breakpoints_bytes, m.copy_s, m.copy_bytes_per_s)}")
        echo(f"local reduction ({cal.op}, {cal.dtype}): "
             f"{local(m.reduce_breakpoints_bytes, m.reduce_s, m.reduce_bytes_per_s)}")
        spreads = [doc["pingpong_spread"], doc["exchange"]["spread"]]
        echo("spread of repeated measurements (median over sizes of IQR / median): ping-pong "
             + ", exchange ".join("n/a" if s is None else f"{100 * s:.0f}%" for s in spreads))
        p = cal.plain.fit
        echo(f"plain α–β (ping-pong {cal.plain.statistic}): α = {format_time(p.alpha_s)}, β = "
             f"{p.beta_bytes_per_s / 1e9:.4g} GB/s; R² = {p.r_squared:.4f}")
        echo(f"wrote {out_path}: a star of {cal.plain.ranks} nodes with model loggp-piecewise "
             f"(collsim compare --system {out_path} ...)")

    if out.format == "json":
        emit_json({**doc, "out": out_path})
    else:
        emit(out, rows, table)


def _report(out: Output, cal, out_path: str) -> None:
    from ..core.units import format_size, format_time
    rows = cal.rows()
    fit = cal.fit

    def table() -> None:
        print_table(f"one-way times between {cal.ranks} MPI ranks, {cal.iterations} round trips per size and pair", [
            TableColumn("size", [format_size(r["size_bytes"]) for r in rows]),
            TableColumn("median", [format_time(r["median_s"]) for r in rows]),
            TableColumn("min", [format_time(r["min_s"]) for r in rows]),
            TableColumn("fit", [format_time(r["fit_s"]) for r in rows]),
            TableColumn("error", [f"{r['error_percent']:+.1f}%" for r in rows])])
        echo(f"fit of the {cal.statistic}: α = {format_time(fit.alpha_s)}, β = {fit.beta_bytes_per_s / 1e9:.4g} "
             f"GB/s; R² = {fit.r_squared:.4f}, largest error {100 * fit.max_relative_error:.1f}%")
        share = f"{100 * cal.overhead_s / fit.alpha_s:.0f}% of α"
        if cal.startup_s is not None:
            echo(f"per-message overhead {format_time(cal.overhead_s)} ({share}): startup_s = "
                 f"{format_time(cal.startup_s)}, link_latency_s = {format_time(cal.link_latency_s)} per hop")
        else:
            echo(f"per-message overhead {format_time(cal.overhead_s)} ({share}, under 10%): no startup_s; "
                 f"link_latency_s = α/2 = {format_time(cal.link_latency_s)} per hop")
        echo(f"wrote {out_path}: a star of {cal.ranks} nodes (collsim compare --system {out_path} ...)")

    if out.format == "json":
        emit_json({**cal.to_json(), "out": out_path})
    else:
        emit(out, rows, table)


ALL = [calibrate_cmd]
