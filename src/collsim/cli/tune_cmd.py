"""``collsim tune``: the fastest feasible, verified schedule per size, a rules file and a figure.

The engine is :mod:`collsim.experiments.tune.run` (figure: :mod:`collsim.experiments.tune.figure`);
docs/tune.md describes the table, the rules file and the store.  Everything that can be
wrong with the input is checked before any work is done or any file is opened, so a bad
command line writes nothing.  The library is imported inside the command (tests/test_startup.py).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from .options import StrictCommand, load, system_options
from .tables import text_width, wrap_text
from .output import Output, ProgressBar, TableColumn, echo, emit, output_options, print_table


def default_store() -> Path:
    """Where ``collsim tune`` keeps its results store unless told otherwise.

    ``$XDG_CACHE_HOME/collsim/tune.sqlite``, or ``~/.cache/collsim/tune.sqlite`` when
    ``XDG_CACHE_HOME`` is not set or not absolute (the XDG spec ignores a relative one): a
    cache, safe to delete (the next run rebuilds it).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is invalid and ignored
        home = os.environ.get("HOME")
        if home is not None and not os.path.isabs(home):  # HOME="" (expanduser would say "/"): no home
            return Path(".cache") / "collsim" / "tune.sqlite"  # relative: the cache is not used
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "collsim" / "tune.sqlite"


def _writable(path: str, what: str) -> Path:
    """Refuse, before any work, a file that cannot be written: a folder, a missing or read-only folder,
    a name too long (``core.files.writable_file`` tries a file in the folder: as root, ``os.access``
    says yes to ``/sys``)."""
    from ..core.files import writable_file
    return writable_file(path, what)


class _Cache:
    """The default results store, a cache: when the machine refuses it (an unwritable or full cache folder,
    ``$HOME`` or ``$XDG_CACHE_HOME`` on a read-only or missing file system), tune says so in one line
    and goes on without it, building what it would have read.  An explicit ``--store`` that fails is an
    error instead (exit 2, naming it)."""

    def __init__(self, store, where: Path) -> None:
        self.store, self.where = store, where

    @classmethod
    def open(cls, where: Path):
        """The cache at ``where``, or None (said on stderr) if it cannot be opened."""
        from ..core.errors import InputError
        from ..core.files import os_reason
        from ..experiments.sweep.store import Store
        if not where.is_absolute():  # no home folder: a cache in whatever folder tune runs in would be litter
            cls._warn(where, "no home folder to keep it in: set HOME or XDG_CACHE_HOME")
            return None
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            return cls(Store(where), where)
        except (InputError, OSError) as exc:  # Store says what SQLite refused; mkdir, what the folder did
            cls._warn(where, os_reason(exc) if isinstance(exc, OSError) else str(exc))
            return None

    @staticmethod
    def _warn(where: Path, reason: str) -> None:
        echo(f"tune: not using the cache {where} ({reason}); tuning without it "
             "(--store FILE keeps the trials elsewhere, --no-store says you want none)", err=True)

    def _call(self, name: str, *args):
        from ..core.files import environment_error
        if self.store is None:
            return None
        try:
            return getattr(self.store, name)(*args)
        except Exception as exc:  # noqa: BLE001 - a cache that fails midway is left, not fatal
            reason = environment_error(exc, self.where, "the tune cache")
            if reason is None:
                raise
            self._warn(self.where, reason)
            self.close()
            return None

    def get(self, point):
        return self._call("get", point)

    def put(self, point, row):
        return self._call("put", point, row)

    def close(self) -> None:
        if self.store is not None:
            store, self.store = self.store, None
            store.close()


def _ratio(best, other) -> str:
    if best is None or other is None:
        return "-"
    return f"{other.choice} \u00d7{other.time_s / best.time_s:.2f}"


@click.command("tune", cls=StrictCommand)
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to tune.")
@click.option("--min-size", "--begin", "-b", "min_size", required=True, metavar="SIZE",
              help="Smallest size (as nccl-tests -b; collsim's size unless --total; 32KB = 32000 B, 32KiB = 32768 B).")
@click.option("--max-size", "--end", "-e", "max_size", required=True, metavar="SIZE",
              help="Largest size (as nccl-tests -e); the rules cover sizes up to it.")
@click.option("--step-factor", "--factor", "-f", "factor", type=int, default=None,
              help="Multiply the size by this factor each step (as nccl-tests -f; default 2).")
@click.option("--step-bytes", "-i", "step", default=None, metavar="SIZE",
              help="Add this size each step instead (as nccl-tests -i).")
@click.option("--total", is_flag=True, help="Read -b/-e/-i as nccl-tests total buffers.")
@click.option("--algorithms", "--algorithm", "-a", "algorithms", multiple=True,
              help="Only these algorithms, comma-separated or repeated (default: every one that applies).")
@click.option("--store", "store_path", default=None, type=click.Path(dir_okay=False),
              help="Results store (SQLite; default $XDG_CACHE_HOME/collsim/tune.sqlite): a rerun builds nothing.")
@click.option("--no-store", is_flag=True, help="Keep no results store: build everything, write no store.")
@click.option("--rules", "rules_path", default=None, type=click.Path(dir_okay=False),
              help="Write the decisions as a rules file (JSON: size ranges -> algorithm and parameters).")
@click.option("--rules-format", type=click.Choice(["collsim", "mpich"]), default="collsim", show_default=True,
              help="collsim's rules, or MPICH's nested collective-selection JSON (docs/tune.md).")
@click.option("--figure", "figure_path", default=None, type=click.Path(dir_okay=False),
              help="Write time against size for every algorithm, crossovers marked (.png or .svg).")
@click.option("--trials", "all_trials", is_flag=True,
              help="Print every trial (algorithm, parameters, size) instead of the pick per size.")
@output_options(wide=True)
def tune_cmd(system, collective, min_size, max_size, factor, step, total, algorithms, store_path,
             no_store, rules_path, rules_format, figure_path, all_trials, out: Output) -> None:
    """Pick the fastest feasible, verified algorithm and parameters per message size.

    Every applicable algorithm is built, verified and timed with every parameter set
    it offers (ring's band width, OpTree's depth, WRHT's group size ...) at every size
    of the sweep; on optical rings a schedule whose lightpaths the physical layer cannot
    carry is never picked.  Trials are kept in a results store, so a second run builds
    nothing.  The table gives, per size, the pick, its time, its efficiency against the
    lower bound and the fastest other algorithm (x its time over the pick's).

    \b
    Examples:
      collsim tune --system paper --nodes 64 -b 32KB -e 4GiB -f 4
      collsim tune --system torus -n 16 -c allreduce -b 64 -e 64MiB -f 4 --rules rules.json --figure tune.png
      collsim tune --system ring -n 8 -c broadcast -b 1KiB -e 1GiB -f 8 --format csv
      collsim tune --system paper -n 64 -a ring,optree -b 1MiB -e 1GiB -f 4 --rules-format mpich --rules sel.json
    """
    from ..core.collective import canonical_collective
    from ..core.errors import InputError
    from ..core.totals import total_bytes
    from ..core.units import format_size, format_time, parse_size
    from ..core.files import naming
    from ..experiments.sweep.store import Store
    from ..experiments.tune.run import tunable, tune
    from ..experiments.tune.rules import rules_document
    from ..core.wording import counted, format_number
    from ..kinds.view import view_for
    from .sizes import SizeRequest
    if no_store and store_path is not None:
        raise click.UsageError("--store and --no-store contradict each other")
    names = [a.strip() for arg in algorithms for a in arg.split(",") if a.strip()] if algorithms else None
    if names is not None and not names:
        raise click.BadParameter("--algorithm needs at least one name")
    sysm = load(system)
    coll = canonical_collective(collective)
    request = SizeRequest(min_size=min_size, max_size=max_size, factor=factor, step=step, total=total)
    sizes = request.sizes(coll, sysm.nodes)
    high = parse_size(max_size) // (total_bytes(coll, sysm.nodes, 1) if total else 1)
    tunable(sysm, coll, names)  # unknown, inapplicable or none at all: refused before the store is opened
    rules_file = rules_path and _writable(rules_path, "the rules file")
    figure_file = figure_path and _writable(figure_path, "the figure")
    if figure_file:
        from ..experiments.report.paperout import pyplot
        from ..experiments.tune.figure import FIGURE_SUFFIXES
        if figure_file.suffix.lower() not in FIGURE_SUFFIXES:
            raise InputError(f"the figure {figure_file} must end in .png or .svg (the suffix chooses the format)")
        pyplot()  # matplotlib missing: say so before the work
    where = None if no_store else Path(store_path) if store_path else default_store()
    store = None
    if where is not None and store_path is None:  # the default store is a cache: tune goes on without it
        store = _Cache.open(where)
        where = store and where
    elif where is not None:
        _writable(str(where), "the results store")  # a read-only folder, a name too long: one line naming it
        with naming(where):
            store = Store(where)
    try:
        with ProgressBar("tuning") as bar, naming(where) if where is not None else contextlib.nullcontext():
            result = tune(sysm, coll, sizes, algorithms=names, strategy=system.strategy, store=store,
                          progress=lambda done, n, label: bar.update(done, total=n, description=f"tuning {label}"))
    finally:
        if store is not None:
            store.close()
    if rules_file:
        import json

        from ..core.files import atomic_write
        doc = rules_document(result, sizes[0], max(high, sizes[-1]), form=rules_format)
        text = json.dumps(doc, indent=1, sort_keys=rules_format == "collsim") + "\n"  # MPICH's order matters
        atomic_write(rules_file, lambda fh: fh.write(text.encode()))
    if figure_file:
        from ..experiments.tune.figure import plot_tuning
        plot_tuning(result, figure_file)
    if all_trials:
        emit(out, [t.to_json() for t in result.trials])
    else:
        extra = view_for(result.system).tune_fields(result.system, result.trials)  # the kind's, per size
        rows = [{**c.to_json(), **extra.get(c.size_bytes, {})} for c in result.choices]

        def table() -> None:
            ch = result.choices
            cols = [TableColumn("size", [format_size(c.size_bytes) for c in ch]),
                    TableColumn("best", [c.best.choice if c.best else "none feasible" for c in ch], left=True,
                                wrap=True),
                    TableColumn("time", [format_time(c.best.time_s) if c.best else "-" for c in ch]),
                    TableColumn("effi-\nciency", [format_number(100 * c.best.efficiency, 3, strip=False) + "%"
                                                  if c.best else "-" for c in ch]),
                    TableColumn("runner-up (\u00d7 time)", [_ratio(c.best, c.runner_up) for c in ch], left=True,
                                wrap=True)]
            if out.wide:
                cols[1:1] = [TableColumn("total", [format_size(c.total_bytes) for c in ch])]
                cols += [TableColumn("lower\nbound", [format_time(c.best.lower_bound_s) if c.best else "-"
                                                      for c in ch]),
                         TableColumn("feasible /\ntried", [f"{c.eligible}/{c.tried}" for c in ch])]
            kind = "" if sysm.topology == sysm.name else f" ({sysm.topology})"
            print_table(f"collsim tune: {coll} on {sysm.name}{kind}, N={sysm.nodes}, {len(ch)} sizes", cols)
            for note in _notes(result, rules_file, figure_file):  # under the table, wrapped as prose
                echo(wrap_text(note, text_width()))
        emit(out, rows, table)
    echo(_summary(result, where, no_store), err=True)
    failed = [t for t in result.trials if t.outcome == "failed verification"]
    if failed:
        echo(f"collsim: {counted(len(failed), 'schedule')} failed verification, first {failed[0].choice} at "
             f"{failed[0].size_bytes} B: {failed[0].error}", err=True)
        sys.exit(1)


def _summary(result, where, no_store: bool) -> str:
    """The line on standard error that counts what became of the trials: each is counted once, as built
    and verified, failed verification or could not be built now, or read from the store."""
    from ..core.wording import counted
    n = len(result.trials)
    parts = [f"{result.built} built and verified"]
    parts += [f"{k} {what}" for k, what in ((result.failed, "failed verification"),
                                            (result.unbuilt, "could not be built")) if k]
    if where is not None:
        parts.append(f"{result.from_store} read from the store {where}")
    else:
        parts.append("no store (--no-store)" if no_store else "no store (the cache could not be used)")
    return f"tune: {counted(n, 'trial')}: " + ", ".join(parts)


def _notes(result, rules_file, figure_file) -> list[str]:
    """Caption lines: the kind's (:meth:`~collsim.kinds.base.KindModel.tune_notes`), what was never eligible
    and why, what could not be built, the files written."""
    from ..core.wording import counted
    from ..kinds.view import view_for
    eligible = {t.algorithm for t in result.trials if t.eligible}
    infeasible = sorted({t.algorithm for t in result.trials if t.feasible is False} - eligible)
    notes = view_for(result.system).tune_notes(result.system, result.trials)
    if infeasible:
        notes.append(f"never picked, no physically feasible schedule under the device values: {', '.join(infeasible)}")
    unbuilt = [t for t in result.trials if t.outcome == "could not be built"]
    if unbuilt:
        notes.append(f"{counted(len(unbuilt), 'trial')} could not be built, e.g. {unbuilt[0].choice}: "
                     f"{unbuilt[0].error}")
    notes += [f"skipped: {why}" for why in result.skipped]
    notes += [f"wrote {p}" for p in (rules_file, figure_file) if p]
    return notes


ALL = [tune_cmd]
