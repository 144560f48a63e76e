"""``collsim sweep`` and ``collsim results``: run a grid of points into a results store, and read it back.

The library is imported inside the commands (tests/test_startup.py); docs/sweeps.md has
the file format and the store's schema.
"""

from __future__ import annotations

import time

import click

from .options import StrictCommand
from .output import Output, ProgressBar, TableColumn, echo, emit, output_options, print_table

DEFAULT_STORE = "collsim-results.sqlite"


@click.command("sweep", cls=StrictCommand)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--store", "store_path", default=DEFAULT_STORE, show_default=True,
              type=click.Path(dir_okay=False), help="The results store (an SQLite file; created if missing).")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1),
              help="Worker processes.")
@click.option("--executor", type=click.Choice(["local", "mpi"]), default="local", show_default=True,
              help="local: --jobs processes here; mpi: the ranks of mpiexec -n P (rank 0 writes the store).")
@click.option("--max-points", default=100_000, show_default=True, type=click.IntRange(min=1),
              help="Refuse a grid of more points (counted before any runs).")
def sweep_cmd(file, store_path, jobs, executor, max_points) -> None:
    """Run a sweep file's grid of points into a results store, skipping finished points.

    FILE is TOML with a [sweep] table of lists (docs/sweeps.md): systems, nodes,
    wavelengths, fibers, link_bandwidths, link_latencies, sizes, collectives,
    algorithms, and [sweep.params].  Each point is built, verified and timed once;
    a point that fails is recorded with its error and the sweep goes on.  Rerun the
    same file to finish an interrupted sweep.  System files are read from the sweep
    file's folder, and a point is keyed by the file's content: edit it, and its points
    run again.  A grid of more than --max-points points, or points that would not fit
    in memory (--jobs of them at once), is refused before anything runs.

    \b
    Examples:
      collsim sweep examples/sweep-small.toml
      collsim sweep grid.toml --store results.sqlite --jobs 4
      mpiexec -n 4 collsim sweep grid.toml --executor mpi
      collsim results --store results.sqlite --format csv
    """
    if executor == "mpi":
        if jobs != 1:
            raise click.UsageError("--jobs is for --executor local; with --executor mpi the MPI ranks are the workers")
        from ..mpi.distributed import mpi_executor
        with mpi_executor() as pool:
            if pool is not None:  # rank 0; the other ranks have run points until it was done
                _sweep(file, store_path, jobs, pool, max_points)
        return
    _sweep(file, store_path, jobs, None, max_points)


def _sweep(file, store_path, jobs, pool, max_points: int = 100_000) -> None:
    from ..core.files import naming, writable_file
    from ..experiments.sweep.store import Store
    from ..experiments.sweep.run import run_sweep
    from ..experiments.sweep.grid import read_sweep
    from ..experiments.sweep.limits import check_sweep
    from .progress import progress_enabled
    grid = read_sweep(file, max_points=max_points)
    check_sweep(grid, jobs if pool is None else 1)  # before the store is opened: bad input changes nothing
    writable_file(store_path, "the results store")  # a read-only folder, a name too long: before any point
    # the store is opened before anything is said: an error (not a database, a read-only file system) comes
    # first, in one line naming the store; a full disk later keeps every point committed before
    with naming(store_path), Store(store_path) as store:
        if grid.skipped:
            from ..core.wording import counted
            echo(f"left out {counted(len(grid.skipped), 'kind')} of combination that "
                 f"{'does' if len(grid.skipped) == 1 else 'do'} not apply:", err=True)
            for reason in grid.skipped:
                echo(f"  skipped: {reason}", err=True)
        t0 = time.monotonic()
        with ProgressBar("sweep", total=len(grid)) as bar:
            def progress(done: int, total: int, record: dict | None) -> None:
                if done == 0 and not progress_enabled():  # no bar: say once what is about to run
                    echo(f"sweep: {len(grid)} points, {len(grid) - total} finished before, {total} to run into "
                         f"{store_path}", err=True)
                rate = done / max(time.monotonic() - t0, 1e-9)
                bar.update(done, total=total, description=f"sweep ({rate:.1f} points/s)")
            summary = run_sweep(grid, store, jobs=jobs, progress=progress, executor=pool)
    click.echo(f"{summary['points']} points: {summary['run']} run, {summary['finished']} skipped as finished, "
               f"{summary['failed']} failed; store {store_path}")


_SHOWN = (("algorithm", "algorithm"), ("system", "system"), ("collective", "collective"), ("nodes", "N"),
          ("size_bytes", "size"), ("slots", "slots"), ("time_s", "time"), ("simulated_time_s", "simulated"),
          ("efficiency", "efficiency"), ("status", "status"))


@click.command("results", cls=StrictCommand)
@click.option("--store", "store_path", default=DEFAULT_STORE, show_default=True,
              type=click.Path(dir_okay=False), help="The results store collsim sweep wrote.")
@click.option("--system", default=None, help="Only this system (as the sweep file names it).")
@click.option("--collective", "-c", default=None, help="Only this collective.")
@click.option("--algorithms", "--algorithm", "-a", "algorithm", default=None,
              help="Only these algorithms (comma-separated; --algorithm is the same).")
@click.option("--nodes", "-n", type=int, default=None, help="Only this node count.")
@click.option("--status", type=click.Choice(["ok", "error"]), default=None, help="Only finished or failed points.")
@output_options()
def results_cmd(store_path, system, collective, algorithm, nodes, status, out: Output) -> None:
    """Show the results a sweep stored, one row per point, in a fixed order.

    JSON and CSV rows hold every key of the point's result (as collsim compare
    --json prints it) plus key, status and error; a failed point has its error and
    the point's own keys.

    \b
    Examples:
      collsim results
      collsim results --system ring --collective allgather --format csv
      collsim results --store results.sqlite --status error --json
    """
    from ..algorithms import get_algorithm
    from ..core.collective import canonical_collective
    from ..core.units import format_size, format_time
    from ..experiments.sweep.store import Store, flat_record
    from ..systems import PRESETS, kind_names
    if system is not None and system.strip().lower() in (*PRESETS, *kind_names()):
        system = system.strip().lower()  # as the sweep stored it (a TOML file's path is kept as written)
    filters = {"system": system, "nodes": nodes, "status": status,
               "collective": canonical_collective(collective) if collective else None,
               "algorithm": None}
    names = [get_algorithm(a.strip()).name for a in (algorithm or "").split(",") if a.strip()]
    if len(names) == 1:
        filters["algorithm"] = names[0]
    with Store(store_path, create=False) as store:
        rows = [flat_record(r) for r in store.records(**filters) if len(names) < 2 or r["algorithm"] in names]

    def cell(key: str, value) -> str:
        if value is None:
            return "-"
        if key == "size_bytes":
            return format_size(value)
        if key.endswith("time_s"):
            return format_time(value)
        if key == "efficiency":
            return f"{100 * value:.3g}%"
        return str(value)

    def table() -> None:
        if not rows:
            echo(f"no results in {store_path}" + (" match" if any(filters.values()) else ""))
            return
        failed = [r for r in rows if r["status"] == "error"]
        print_table(f"{len(rows)} results in {store_path}", [
            TableColumn(head, [cell(key, r.get(key)) for r in rows], left=key in ("algorithm", "system", "collective"))
            for key, head in _SHOWN], caption=[f"{r['algorithm']} on {r['system']}: {r['error']}" for r in failed])
    emit(out, rows, table)


ALL = [results_cmd, sweep_cmd]
