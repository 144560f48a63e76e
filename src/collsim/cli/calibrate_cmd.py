"""``collsim calibrate``: measure point-to-point times between MPI ranks and write a calibrated system.

Run it under mpiexec (``mpiexec -n 2 collsim calibrate``): rank 0 prints and writes, the
other ranks print nothing.  ``--refit`` fits the raw table a calibration wrote again
(another statistic) without MPI.  The library is imported inside the command
(tests/test_startup.py); docs/calibration.md explains the measurement and the fit.
"""

from __future__ import annotations

import click

from .options import StrictCommand
from .output import Output, TableColumn, echo, emit, emit_json, output_options, print_table


@click.command("calibrate", cls=StrictCommand)
@click.option("--out", "-o", "out_path", default="calibrated.toml", show_default=True,
              type=click.Path(dir_okay=False), help="The system TOML to write: a star with one node per rank.")
@click.option("--sizes", default=None,
              help="Message sizes, comma-separated (1B,1KiB,1MiB) [default: 1 B to 16 MiB, powers of 4].")
@click.option("--iterations", "-I", default=20, show_default=True, type=click.IntRange(min=1),
              help="Timed round trips per size and pair of ranks.")
@click.option("--warmup", "-W", default=3, show_default=True, type=click.IntRange(min=0),
              help="Untimed round trips before them.")
@click.option("--statistic", type=click.Choice(["min", "median"]), default="min", show_default=True,
              help="The one-way time per size that the fit uses.")
@click.option("--name", default="calibrated", show_default=True, help="The system's name in the file.")
@click.option("--refit", "refit_path", default=None, type=click.Path(dir_okay=False),
              help="Fit the raw table of a file calibrate wrote, without measuring (no MPI).")
@output_options()
def calibrate_cmd(out_path, sizes, iterations, warmup, statistic, name, refit_path, out: Output) -> None:
    """Measure point-to-point latency and bandwidth between MPI ranks, fit α–β, write a system TOML.

    Rank 0 plays ping-pong with every other rank over message sizes from 1 B to
    16 MiB, fits t(m) = α + m/β to the one-way times (weighted by 1/t), measures
    the per-message overhead with a burst of messages, and writes a star system
    (startup_s + 2 link_latency_s = α, link_bandwidth = β) that --system reads.
    Prints the raw table with the fit beside each point, R² and the largest error.

    \b
    Examples:
      mpiexec -n 2 collsim calibrate --out host.toml
      mpiexec -n 4 collsim calibrate --sizes 1B,1KiB,1MiB,16MiB --iterations 50 --json
      collsim calibrate --refit host.toml --statistic median --out host-median.toml
      collsim compare --system host.toml -c allreduce -s 1MiB
    """
    from ..core.errors import InputError
    from ..core.units import parse_size
    from ..mpi.pingpong import DEFAULT_SIZES_BYTES, check_sizes
    if not name.strip():
        raise InputError("--name is the system's name in the file; it cannot be empty")
    from ..core.files import writable_file
    writable_file(out_path, "the system file")  # before MPI measures anything: a read-only folder, a long name
    if refit_path is not None:
        if sizes is not None:
            raise click.UsageError("--sizes measures; --refit fits a table already measured: give one of them")
        cal = _read_calibration(refit_path, statistic)
    else:
        items = [s.strip() for s in sizes.split(",")] if sizes is not None else []
        if sizes is not None and not all(items):
            raise InputError(f"--sizes is a comma-separated list of sizes (1B,1KiB,1MiB), not {sizes!r}")
        chosen = check_sizes([parse_size(s) for s in items] if items else DEFAULT_SIZES_BYTES)
        from ..mpi.pingpong import measure
        cal = measure(sizes_bytes=chosen, iterations=iterations, warmup=warmup, statistic=statistic)
        if cal is None:  # not rank 0: it measured, rank 0 reports
            return
    cal.write(out_path, name)
    _report(out, cal, out_path)
    from ..mpi.calibrate import fit_warning
    warning = fit_warning(cal.fit)
    if warning:  # written all the same: the raw table is in it, and --refit can fit it again
        echo(f"collsim: {warning}", err=True)


def _read_calibration(path: str, statistic: str):
    """The calibration of the raw table in a file ``collsim calibrate`` wrote, fitted again."""
    import tomllib

    from ..core.errors import InputError
    from ..core.reading import read_bytes
    from ..mpi.calibrate import Sample, calibration_from
    data = read_bytes(path, name=f"calibration file {path}")  # a regular file, never a device (core.files)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    table = doc.get("calibration")
    keys = ("size_bytes", "count", "median_s", "min_s")
    if not isinstance(table, dict) or not all(isinstance(table.get(k), list) for k in keys):
        raise InputError(f"{path}: no [calibration] table with the raw table ({', '.join(keys)}); "
                         "collsim calibrate --out writes one")
    try:
        samples = [Sample(int(s), int(c), float(md), float(mn))
                   for s, c, md, mn in zip(*(table[k] for k in keys), strict=True)]
        overhead, ranks, iterations = float(table["overhead_s"]), int(table["ranks"]), int(table["iterations"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: the [calibration] table is malformed: it needs ranks, iterations, "
                         f"overhead_s and lists of numbers of one length ({', '.join(keys)}), as collsim "
                         "calibrate writes them") from None
    return calibration_from(samples, overhead, ranks, iterations, statistic)


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
