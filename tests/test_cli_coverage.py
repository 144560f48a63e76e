"""Line coverage of ``collsim.cli``, measured in-process (issue #10: tests that cannot pass vacuously).

tests/test_cli.py drives the installed console script in subprocesses, where no
coverage tool sees ``collsim/cli``.  Here every command is run in one Python
process under ``coverage.Coverage(source=["collsim.cli"])``: each through
:func:`collsim.cli.main.main` (what the ``collsim`` script calls: the lazy
``cli`` group plus the error handling that maps exceptions to exit codes and
one-line messages) inside click's :class:`~click.testing.CliRunner` isolation,
which captures stdout and stderr.  Each case checks its exit code and output:
happy paths, ``--json`` forms, ``schedule --out`` to a file then verified, and
for each command a bad input that must exit 2 with one line on stderr and no
traceback.  Then each module of ``collsim/cli`` must reach its threshold in
:data:`MIN_LINE_COVERAGE` (set a few points below the measured value: a new
command or branch without a case here lowers it and fails).

The measurement runs in a fresh interpreter (this file run as a script) so that

* the modules' import-time lines (imports, decorators, ``def``) are executed under
  the tracer: in a pytest process another test has usually imported
  ``collsim.cli.commands`` already, and they would count as missed;
* it is the same whether pytest runs under coverage or not: no tracer is nested in
  the pytest process.  If an outer coverage reaches the child too (coverage's
  subprocess support), coverage pauses the outer collector while ours runs and
  resumes it after (``data_file=None``: we write no data file, and
  ``config_file=False``: no project settings change the numbers).

``python tests/test_cli_coverage.py`` prints the per-module numbers and the lines
missed; ``--json`` prints them as JSON (what the test reads).  The run's wall time
(< 30 s) is benchmarks/run.py's cli-coverage workload, not a test: it depends on the machine.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable

import pytest

pytestmark = pytest.mark.schedule_first(25)  # about 25 s of work: handed out early (tests/conftest.py)

# Per module of collsim/cli (file name), the least line coverage in percent, a few points below
# what `python tests/test_cli_coverage.py` measured when they were set: __init__ 100 (no
# statements), commands 99.4 (169/170; missed: compare's exit 1 for an unverified row), main
# 86.5 (96/111; missed: click's Exit, which click returns rather than raises with
# standalone_mode=False, BrokenPipeError, which click handles itself, and what needs a real standard
# output: closed (>&-), or failing in the last flush; tests/test_environment_errors.py runs those
# through the console script), options 100 (52/52),
# sizes 100 (107/107),
# io 86.4 (19/22; missed: a reader that goes away while a schedule is written to standard output),
# output 97.5 (78/80; missed: a table of plain records), tables 92.9 (92/99; missed: JSON of numpy and
# set values in a cell), text 80 (28/35; missed: streams that cannot be reconfigured), columns 78.5
# (84/107; missed: legend_markdown, which tests/test_output.py runs, and the progress total, drawn
# only on a terminal), progress 65.0 (63/97; missed: drawing the bar, which needs a terminal:
# tests/test_output.py runs it in a pseudo-terminal), info 97.5 (153/157; missed: a
# system kind that cannot be built from its name alone, and unreachable docstring shapes), sweep_cmds 100
# (60/60), tune_cmd 96.7 (119/123; missed: a folder that is not writable, which root may write
# anyway, click's own refusal of a directory, and a schedule that fails verification), calibrate_cmd
# 97.3 (72/74; missed: the other ranks' quiet return after a measurement, which needs mpiexec:
# tests/test_mpi_calibrate.py runs it), sweep_cmds with --executor mpi 95.9 (71/74;
# missed: the ranks' sweep, which needs mpiexec: tests/test_mpi_sweep.py).
# mpi_cmd 65.2 (58/89; missed: everything after a run, the rows, predictions and table, and the other
# ranks' quiet exit, which need mpiexec: tests/test_mpi.py runs them in real jobs).
LEAF_SPINE = Path(__file__).resolve().parent / "data" / "custom" / "leaf-spine.toml"

MIN_LINE_COVERAGE: dict[str, float] = {
    "__init__.py": 100.0,
    "columns.py": 74.0,
    "output.py": 94.0,
    "progress.py": 61.0,
    "tables.py": 89.0,
    "text.py": 76.0,
    "commands.py": 96.0,
    "io.py": 85.0,
    "main.py": 84.0,  # 86.5 (96/111) when set: see the note above
    "options.py": 97.0,
    "sizes.py": 95.0,
    "info.py": 94.0,
    "sweep_cmds.py": 90.0,
    "paper_cmd.py": 80.0,
    "mpi_cmd.py": 61.0,
    "tune_cmd.py": 93.0,
    "calibrate_cmd.py": 92.0,
    "validate_cmd.py": 50.0,  # 52.2 (60/115): the run, report, figure and store need mpiexec (test_loggp_validate.py)
    "simgrid_cmd.py": 95.0,  # 100 (47/47) when set
    "export_cmd.py": 95.0,  # 100 (11/11) when set
    "msccl_cmd.py": 95.0,  # 100 (91/91) when set
    "routing_note.py": 95.0,  # 100 (31/31) when set
    "synth_cmd.py": 90.0,
    "resolve.py": 95.0,  # 100 (28/28) when set
}


class Case:
    """One command line run through ``main``, with its expected exit code and a check of its output."""

    def __init__(self, argv: list[str], code: int | tuple[int, ...] = 0, check: Callable[[str, str], object] | None = None,
                 env: dict[str, str | None] | None = None, raises: type[BaseException] | None = None,
                 stdin: Callable[[], bytes] | None = None, charset: str = "utf-8"):
        self.argv, self.code, self.check, self.env, self.raises = argv, code, check, env or {}, raises
        self.stdin = stdin  # standard input's bytes, read when the case runs
        self.charset = charset  # of the streams: "ascii" stands for a terminal without UTF-8

    def __str__(self) -> str:
        return "collsim " + " ".join(self.argv)


def _json(check: Callable[[object], object] | None = None) -> Callable[[str, str], object]:
    """A check that stdout is exactly one JSON document (and, optionally, more about it)."""
    def run(out: str, err: str) -> None:
        doc = json.loads(out)
        if check is not None:
            assert check(doc) is not False, f"unexpected JSON: {out[:300]}"
    return run


def _has(*needles: str, where: str = "out") -> Callable[[str, str], None]:
    def run(out: str, err: str) -> None:
        text = out if where == "out" else err
        for n in needles:
            assert n in text, f"{n!r} not in std{where}: {text[:400]!r}"
    return run


def _bad(needle: str) -> Callable[[str, str], None]:
    """Bad input: one line on stderr naming the problem, no traceback, nothing on stdout."""
    def run(out: str, err: str) -> None:
        lines = err.strip().splitlines()
        assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {err!r}"
        assert lines[0].startswith("collsim: ") and needle in lines[0], f"{needle!r} not in {lines[0]!r}"
        assert "Traceback" not in err and out == "", (out, err)
    return run


def _delimited(sep: str, check: Callable[[list[dict]], object]) -> Callable[[str, str], None]:
    """A check that stdout is CSV (or TSV): one header line, one line per row, raw values."""
    def run(out: str, err: str) -> None:
        import csv
        rows = list(csv.DictReader(out.splitlines(), delimiter=sep))
        assert rows and check(rows) is not False, f"unexpected rows: {out[:300]}"
    return run


def _fail(text: str) -> None:
    raise AssertionError(f"unexpected output: {text[:300]!r}")


def _quiet(out: str, err: str) -> None:
    assert not err.strip(), f"expected nothing on stderr, got {err!r}"


def _fails_verification(out: str, err: str) -> None:
    """A schedule that fails verification: exit 1 (checked by the case), one line, no traceback."""
    assert len(err.strip().splitlines()) == 1 and err.startswith("collsim: "), err
    assert "Traceback" not in err and out == "", (out, err)


def _file_ok(path: Path, doc_check: Callable[[dict], bool]) -> Callable[[str, str], None]:
    def run(out: str, err: str) -> None:
        assert path.exists(), f"{path} not written"
        if path.suffix == ".json":
            assert doc_check(json.loads(path.read_text())), f"unexpected content of {path}"
        else:
            assert path.stat().st_size > 0
        assert out.startswith(f"wrote {path}") and "verified" in out, out
    return run


def _failing_tables(failing: dict, *, add: bool) -> None:
    """Register (or remove) the test-only experiments that raise, for `collsim reproduce` to meet."""
    from collsim.experiments.papers import reproduce
    for name, fn in failing.items():
        if add:
            reproduce.EXPERIMENTS[name] = (fn, "raises (test only)")
        else:
            reproduce.EXPERIMENTS.pop(name)


def _write_calibrations(cal_big: Path, cal_small: Path, cal_broken: Path, cal_loggp: Path) -> None:
    """Calibration files for the cases: an overhead of half of α, none, a malformed one, and a LogGP one."""
    from collsim.mpi.calibrate import Sample, calibration_from
    from collsim.mpi.loggp_calibrate import loggp_calibration_from
    samples = [Sample(1, 10, 2.5e-6, 2.001e-6), Sample(10**6, 10, 1.5e-3, 1.002e-3)]
    calibration_from(samples, 1e-6, 2, 10).write(cal_big)          # an overhead of half of α
    calibration_from(samples, 1e-9, 2, 10).write(cal_small)        # none
    cal_broken.write_text(cal_small.read_text().replace("ranks = 2", 'ranks = "two"'))
    sizes = [2**k for k in range(6, 25)]
    quart = [Sample(1, 10, 2.5e-6, 2.0e-6, 2.4e-6, 2.6e-6), Sample(10**6, 10, 1.5e-3, 1.0e-3, 1.4e-3, 1.6e-3)]
    ex = []
    for m in sizes:   # two regimes: eager below 4 KiB, rendezvous above
        t = (3e-6 + m / 4e9) if m <= 4096 else (5e-6 + m / 1.1e10)
        ex.append(Sample(m, 50, t, 2e-6, t * 0.95, t * 1.05))
    local = [Sample(m, 50, 3e-7 + m / 4e10, 3e-7) for m in sizes]
    loggp_calibration_from(calibration_from(quart, 1e-6, 2, 10), ex, local, local, "int64", "sum").write(cal_loggp)


def cases(tmp: Path) -> list[Case | Callable[[], None]]:
    """The command lines, in order (later ones read files that earlier ones write).

    A plain callable in the list prepares files between cases.
    """
    import collsim
    ring = tmp / "ring.json"
    npz = tmp / "osm.npz"
    elec = tmp / "elec.json"
    bad = tmp / "bad.json"
    garbage = tmp / "garbage.json"

    def tamper() -> None:
        doc = json.loads(ring.read_text())
        doc["steps"][1]["transfers"].pop()  # drop one forward: a verification failure
        bad.write_text(json.dumps(doc))
        garbage.write_text('{"version":')

    def boom() -> list:
        raise RuntimeError("boom")

    def no_memory() -> list:
        raise MemoryError("test")

    def interrupted() -> list:
        raise KeyboardInterrupt

    def broken_pipe() -> list:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def disk_full() -> list:  # what the machine refuses (issue 21): one line naming the file, exit 2
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "out.json")

    def stdout_full() -> list:
        stream = sys.stdout  # noqa: F841 - the innermost frame holds standard output, as click's echo does
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def nameless_full() -> list:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def store_full() -> list:
        import sqlite3
        raise sqlite3.OperationalError("database or disk is full")

    def no_mpi4py() -> list:
        raise ModuleNotFoundError("No module named 'mpi4py'", name="mpi4py")

    def no_other() -> list:
        raise ModuleNotFoundError("No module named 'frob'", name="frob")

    failing = {"test-internal-error": boom, "test-no-memory": no_memory, "test-interrupt": interrupted,
               "test-broken-pipe": broken_pipe, "test-disk-full": disk_full, "test-stdout-full": stdout_full,
               "test-nameless-full": nameless_full, "test-store-full": store_full, "test-no-mpi4py": no_mpi4py,
               "test-no-other": no_other}

    def add_failing_tables() -> None:
        _failing_tables(failing, add=True)

    def remove_failing_tables() -> None:
        _failing_tables(failing, add=False)

    grid, grid_bad, db = tmp / "grid.toml", tmp / "grid-bad.toml", tmp / "results.sqlite"

    def write_sweep() -> None:
        grid.write_text('[sweep]\nsystems = ["torus", "paper"]\nnodes = [7, 16]\nwavelengths = [4]\n'
                        'sizes = ["1KiB"]\nalgorithms = ["ring"]\n')
        grid_bad.write_text('[sweep]\nsystems = ["ring"]\nsize = ["1KiB"]\n')

    cal_big, cal_small, cal_broken = tmp / "cal-big.toml", tmp / "cal-small.toml", tmp / "cal-broken.toml"
    cal_loggp = tmp / "cal-loggp.toml"

    def write_not_a_folder() -> None:  # tune's default store is a cache: where it cannot be, tune goes on
        (tmp / "not-a-folder").write_text("a file")
        (tmp / "folder-cache" / "collsim" / "tune.sqlite").mkdir(parents=True)

    real_put = []

    def fill_the_cache() -> None:  # a cache whose disk fills midway
        import sqlite3

        from collsim.experiments.sweep.store import Store
        real_put.append(Store.put)

        def put(self, point, result=None, *, error=None):
            raise sqlite3.OperationalError("database or disk is full")
        Store.put = put

    def empty_the_cache() -> None:
        from collsim.experiments.sweep.store import Store
        Store.put = real_put.pop()

    def write_calibrations() -> None:
        _write_calibrations(cal_big, cal_small, cal_broken, cal_loggp)

    return [
        # the group
        Case(["--help"], check=_has("Commands:", "compare", "reproduce")),
        Case(["--version"], check=_has(f"version {collsim.__version__}")),
        Case(["compare", "--help"], check=_has("--nodes", "--json")),
        Case(["frobnicate"], 2, _bad("No such command")),
        # algorithms
        Case(["algorithms"], check=_has("ring", "osm")),
        Case(["algorithms", "--json"], check=_json(lambda rows: {"ring", "ne", "osm"} <= {r["name"] for r in rows})),
        Case(["algorithms", "--bogus"], 2, _bad("No such option")),
        Case(["algorithms", "Ring"], check=_has("chunks", "stripe", "[OpTree24]", "IEEE Open Journal")),
        Case(["algorithms", "bruck"], check=_has("parameters:  none", "[Bruck97]")),
        Case(["algorithms", "optree", "--json"], check=_json(lambda d: d["name"] == "optree"
                                                             and d["parameters"][0]["default"] == "search")),
        Case(["algorithms", "wrht", "--format", "csv"], check=_delimited(",", lambda rows: rows[0]["parameter"] == "m")),
        Case(["algorithms", "optre"], 2, _bad("did you mean optree")),
        # systems
        Case(["systems"], check=_has("torus", "terarack", "optical-ring", "--system NAME")),
        Case(["systems", "Torus", "--json"], check=_json(lambda rows: rows[0]["name"] == "torus")),
        Case(["systems", "mlfm", "--format", "tsv"], check=_delimited("\t", lambda rows: rows[0]["system"] == "mlfm")),
        Case(["systems", "toruss"], 2, _bad("did you mean torus")),
        # compare
        Case(["compare", "-n", "16", "-w", "4", "-a", "ring,ne,osm"], check=_has("ring", "osm", "yes")),
        Case(["compare", "-n", "16", "-w", "4", "-a", "ring,osm", "-c", "allreduce", "-s", "32KB", "--json"],
             check=_json(lambda rows: {r["algorithm"] for r in rows} == {"osm", "ring"}
                         and all(r["verified"] and r["nodes"] == 16 and r["collective"] == "allreduce"
                                 for r in rows))),
        Case(["compare", "--system", "ring", "-n", "8", "-a", "ring,bruck", "--link-bandwidth", "100Gb/s",
              "--link-latency", "500ns", "--startup", "1us", "-s", "1KiB"], check=_has("ring", "bruck")),
        Case(["compare", "--system", "ring", "-n", "8", "-a", "ring", "-S", "link_latency_s=2.5e-7", "-s", "1KiB",
              "--json"], check=_json(lambda rows: rows[0]["link_latency_s"] == 2.5e-7)),
        Case(["compare", "--system", "fat-tree", "--radix", "4", "-c", "alltoall", "-s", "1KiB", "-a", "pairwise",
              "-S", "levels=2", "--json"], check=_json(lambda rows: rows[0]["system"] == "fat-tree")),
        Case(["compare", "-n", "9", "-w", "4", "-s", "1KiB", "--json"],
             check=lambda out, err: (_json(lambda rows: "ring" in {r["algorithm"] for r in rows if not r["skipped"]}
                                           and [r["algorithm"] for r in rows if r["skipped"]] == ["ne"])(out, err),
                                     _has("skipped: ne does not apply", where="err")(out, err))),
        # output formats (docs/output.md)
        Case(["compare", "-n", "9", "-w", "4", "-s", "1KiB", "--format", "csv"],
             check=_delimited(",", lambda rows: {r["algorithm"] for r in rows} >= {"ring", "ne"}
                              and float(rows[0]["time_s"]) > 0 and rows[0]["size_bytes"] == "1024")),
        Case(["compare", "--system", "ring", "-n", "8", "-s", "1KiB", "-a", "ring,bruck", "--format", "tsv",
              "--explain"], check=lambda out, err: (_delimited("\t", lambda rows: len(rows) == 2)(out, err),
                                                   _has("simulated_time_s", "What the columns", where="err")(out, err))),
        Case(["compare", "-n", "16", "-w", "4", "-a", "ring,osm", "--wide", "--explain"],
             check=_has("rounds", "reconf", "trans", "lower bound", "What the columns mean", "paper_time_s")),
        Case(["compare", "--json", "--format", "csv"], 2, _bad("contradicts --format csv")),
        # a terminal without UTF-8: ASCII names, laid out before the table is (docs/output.md)
        Case(["compare", "--system", "ring", "-n", "8", "-s", "1KiB", "-a", "ne", "--explain"], charset="ascii",
             check=lambda out, err: (_has("alpha-beta", " us ", "alpha-beta time (alpha_beta_time_s)")(out, err),
                                     out.isascii() or _fail(out))),
        Case(["compare", "--system", "ring", "--link-latency", "-1\u00b5s"], 2, _bad("invalid time"), charset="ascii"),
        # a terminal (rich takes FORCE_COLOR for one) 80 or 40 columns wide: columns dropped, then stacked parts
        Case(["compare", "-n", "64", "-a", "ring,osm,wrht"], env={"COLUMNS": "80", "FORCE_COLOR": "1"},
             check=_has("not shown at 80 columns", "--wide")),
        Case(["compare", "-n", "64", "-a", "ring,osm", "--wide"], env={"COLUMNS": "40", "FORCE_COLOR": "1"},
             check=_has("reconf", "verified")),
        Case(["compare", "-n", "16", "-w", "4", "-a", "optree", "-p", "radices=4,4", "--json"],
             check=_json(lambda rows: rows[0]["params"]["radices"] == [4, 4])),
        Case(["compare", "-s", "12XB"], 2, _bad("invalid size")),
        # sizes (docs/units.md): nccl-tests' total, sweeps, root and shift
        Case(["compare", "--system", "ring", "-n", "8", "-a", "ring", "--total-size", "8KiB", "--json"],
             check=_json(lambda rows: (rows[0]["size_bytes"], rows[0]["total_bytes"]) == (1024, 8192))),
        Case(["compare", "--system", "ring", "-n", "8", "-a", "ring", "-b", "1KiB", "-e", "4KiB", "--json"],
             check=_json(lambda rows: [r["size_bytes"] for r in rows] == [1024, 2048, 4096])),
        Case(["compare", "--system", "star", "-n", "8", "-c", "broadcast", "--root", "3", "--json"],
             check=_json(lambda rows: all(r["root"] == 3 for r in rows if not r["skipped"]))),
        Case(["compare", "-s", "1KiB", "--total-size", "8KiB"], 2, _bad("mutually exclusive")),
        Case(["compare", "-f", "2"], 2, _bad("needs a sweep")),
        Case(["compare", "-b", "1KiB"], 2, _bad("needs both")),
        Case(["compare", "-b", "1KiB", "-e", "2KiB", "-f", "2", "-i", "1KiB"], 2, _bad("mutually exclusive")),
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "2KiB", "--json"],
             check=_json(lambda docs: [d["size_bytes"] for d in docs] == [1024, 2048])),
        Case(["schedule", "ring", "-n", "8", "-f", "2", "--out", str(tmp / "never.json")], 2, _bad("-F or --fibers")),
        Case(["compare", "-a", ","], 2, _bad("--algorithms needs at least one name")),
        Case(["compare", "-n", "16", "-p", "foo"], 2, _bad("key=value")),
        Case(["compare", "--system", "ring", "-n", "8", "--link-latency", "3parsecs"], 2, _bad("invalid time")),
        # schedule (--out to files, then read back)
        Case(["schedule", "ring", "-n", "8", "--out", str(ring)],
             check=_file_ok(ring, lambda doc: "steps" in doc and len(doc["steps"]) == 7)),
        Case(["schedule", "osm", "-n", "16", "-w", "2", "-c", "alltoall", "-s", "1KiB", "--out", str(npz)],
             check=_file_ok(npz, bool)),
        Case(["schedule", "ne", "--system", "ring", "-n", "8", "-s", "1KiB", "--out", str(elec)],
             check=_file_ok(elec, lambda doc: "steps" in doc)),
        Case(["schedule", "ring", "-n", "8", "--out", "-"],
             check=lambda out, err: (_json(lambda doc: len(doc["steps"]) == 7)(out, err),
                                     _has("wrote standard output", where="err")(out, err))),
        Case(["schedule", "nonesuch", "-n", "8", "--out", str(tmp / "never.json")], 2, _bad("unknown algorithm")),
        Case(["schedule", "ring", "-n", "8"], 2, _bad("Missing option")),
        Case(["schedule", "ring", "-n", "8", "-p", "foo=bar", "--out", str(tmp / "never.json")], 2,
             _bad("takes no parameter")),
        # verify
        Case(["verify", str(ring)], check=_has("valid:", "7 steps")),
        Case(["verify", str(npz), "--json"],
             check=_json(lambda s: s["valid"] is True and s["nodes"] == 16 and s["collective"] == "alltoall")),
        tamper,
        Case(["verify", str(bad)], 1, _fails_verification),
        Case(["verify", str(bad), "--json"], 1,
             _json(lambda d: d["valid"] is False and d["error"].endswith("Error") and d["algorithm"] == "ring"
                   and {"step", "transfer", "link", "fiber", "wavelength", "node", "chunk"} <= set(d))),
        Case(["verify", str(garbage)], 2, _bad("not valid JSON")),
        Case(["verify", str(garbage), "--format", "csv"], 2,
             _delimited(",", lambda rows: rows[0]["valid"] == "false" and rows[0]["error"] == "ScheduleFormatError")),
        Case(["verify", str(ring), "--format", "tsv"], check=_delimited("\t", lambda rows: rows[0]["valid"] == "true")),
        Case(["verify", "-"], check=_has("valid:", "7 steps"), stdin=ring.read_bytes),
        Case(["verify", "-", "--json"], check=_json(lambda s: s["nodes"] == 16), stdin=npz.read_bytes),
        Case(["verify", "-"], 2, _bad("not UTF-8"), stdin=lambda: bytes([255])),
        Case(["verify", str(tmp / "missing.json")], 2, _bad("cannot read")),
        # topology
        Case(["topology"], check=_has("1024")),
        Case(["topology", "torus", "-S", "dims=4,4"], check=_has("16")),
        Case(["topology", "fat-tree", "-S", "k=4", "--json"], check=_json(lambda d: d["system"] and "nodes" in d)),
        Case(["topology", "mlfm", "--radix", "6", "--select", "2,3,2", "--json"],
             check=_json(lambda d: d["nodes"] == 12)),
        Case(["topology", "mlfm", "--radix", "6"], check=_has("fat tree comparison.")),
        Case(["topology", "mlfm", "--radix", "6", "--format", "csv"],
             check=_delimited(",", lambda rows: rows[0]["nodes"] == "36" and "fat_tree_comparison.radix" in rows[0])),
        Case(["topology", "paper", "-n", "8", "-w", "2", "-F", "1", "--json"], check=_json(lambda d: d["nodes"] == 8)),
        Case(["topology", "nonesuch"], 2, _bad("unknown system")),
        # issue 21: --system on topology; options refused on kinds they do not apply to
        Case(["topology", "--system", "torus", "-S", "dims=4,4"], check=_has("16")),
        Case(["topology", "ring", "--system", "torus"], 2, _bad("give --system only")),
        Case(["topology", "--system", str(LEAF_SPINE), "-w", "4"], 2,
             _bad("custom systems have no parameter wavelengths")),
        Case(["compare", "--system", "ring", "-n", "4", "--strategy", "best-fit"], 2,
             _bad("--strategy does not apply to ring")),
        Case(["topology", str(LEAF_SPINE), "-S", "routing=single-path"],   # issue 21: an idle spine
             check=_has("warning: 1 of 6 switches carries no traffic under its routing: s5", where="err")),
        Case(["compare", "--system", str(LEAF_SPINE), "-c", "alltoall", "-a", "pairwise", "-s", "4KiB",
              "-S", "routing=single-path", "--format", "csv"],
             check=_has("in this all-to-all: s5", where="err")),
        Case(["topology", "fat-tree", "-n", "10", "-S", "k=4"],              # D-mod-k on a partly filled tree
             check=_has("2 of 64 links on shortest paths carry no traffic", where="err")),
        # simulate
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB"], check=_has("simulated", "alpha-beta")),
        Case(["synthesize", "--system", "mesh", "-S", "dims=3,3", "-s", "1MiB", "-o", "syn.npz"],
             check=_has("synth-", "efficiency", "certificate: vertex set")),   # trees planned by the mesh's mirror images
        Case(["synthesize", "--system", "torus", "-S", "dims=3,3", "-c", "broadcast", "-s", "1MiB", "--json"],
             check=_has('"root": 0', '"verified": true')),
        Case(["synthesize", "--system", "star", "-n", "4", "-s", "1KiB"],
             check=_has("synth-", "1 step", "verified")),    # synth-trees' one-hop trees or the direct overlay
        Case(["synthesize", "--system", "star", "-n", "4", "-s", "1KiB", "-p", "overlay=near-7"], code=2,
             check=_has("overlay must be ring, near-d", where="err")),
        Case(["simulate", "pairwise", "--system", "fat-tree", "--radix", "4", "-c", "alltoall", "-s", "1KiB",
              "--json"], check=_json(lambda d: d["total_time_s"] > 0)),
        Case(["simulate", str(elec), "--mode", "dataflow"], check=_has("ne allgather", "dataflow")),
        Case(["simulate", str(elec), "-s", "1KiB"], 2, _bad("has its own size")),
        Case(["simulate", "-"], check=_has("ne allgather"), stdin=elec.read_bytes),  # ALGORITHM|FILE: cli/resolve.py
        Case(["simulate", "rnig"], 2, _bad("'rnig' is neither an algorithm nor a file that exists; did you mean ring")),
        Case(["simulate", str(elec), "-n", "16", "-p", "chunks=2"], 2, _bad("--nodes, --param would be ignored")),
        Case(["compare", "-n", "8", "-s", "1KiB", "-s", "2KiB"], 2, _bad("--size/-s was given 2 times")),
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB", "--format", "csv", "--explain"],
             check=lambda out, err: (_delimited(",", lambda rows: rows[0]["algorithm"] == "ne"
                                                and float(rows[0]["total_time_s"]) > 0)(out, err),
                                     _has("alpha_beta_time_s", where="err")(out, err))),
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB", "--explain"],
             check=_has("simulated", "What the fields mean", "total_time_s")),
        Case(["simulate", "ring", "-n", "8", "-s", "1KiB"], 2, _bad("not supported on optical-ring")),
        Case(["simulate", "ring", "--system", "ring", "-n", "8", "--mode", "bogus"], 2, _bad("Invalid value")),
        # timeline traces (docs/formats.md): simulate --trace, schedule --trace, and the refusals
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB", "--trace", str(tmp / "sim-trace.json")],
             check=lambda out, err: json.loads((tmp / "sim-trace.json").read_text())["traceEvents"]),
        Case(["schedule", "osm", "-n", "8", "-w", "2", "-s", "1KiB", "--out", str(tmp / "o8.json"), "--trace",
              str(tmp / "o8-trace.json")],
             check=lambda out, err: json.loads((tmp / "o8-trace.json").read_text())["otherData"]["slots"] == 4),
        Case(["simulate", "ne", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "2KiB", "--trace",
              str(tmp / "never.json")], 2, _bad("not a sweep")),
        Case(["simulate", str(tmp / "missing.json")], 2, _bad("does not exist")),
        # reproduce
        Case(["reproduce"], check=_has("optree-table1", "mlfm-throughput")),
        Case(["reproduce", "optree-motivation"], check=_has("three-stage 3-ary", "22")),
        Case(["reproduce", "wrht-allreduce", "--json"], check=_json(lambda rows: len(rows) == 5)),
        Case(["reproduce", "--json"], check=_json(lambda rows: rows[0]["name"] == "optree-table1")),
        Case(["reproduce", "mlfm-congestion", "--format", "tsv"],
             check=_delimited("\t", lambda rows: len(rows) == 7 and rows[0]["d"] == "2")),
        Case(["algorithms", "--format", "csv"], check=_delimited(",", lambda rows: "osm" in {r["name"] for r in rows})),
        Case(["reproduce", "nonesuch"], 2, _bad("unknown table")),
        # issue 24: distinct printed numbers (the 2.2x and the 3770 MiB/s), not the 9 rows comparing them
        Case(["reproduce", "mlfm", "--out", "rep-mlfm"],
             check=_has("mlfm: 1 figures", "2 distinct printed numbers (9 comparison rows)", "2 reproduced by some model")),
        Case(["reproduce", "mlfm", "--out", "rep-mlfm", "--json"],
             check=_json(lambda rows: (rows[0]["numbers_compared"], rows[0]["agree"], rows[0]["comparison_rows"])
                         == (2, 2, 9))),
        Case(["reproduce", "optree-table1", "--out", "x"], 2, _bad("apply to a paper")),
        Case(["reproduce", "mlfm", "--out", "rep-mlfm", "--quick"],
             check=_has("mlfm: 1 figures")),
        # main's last-resort handlers: an internal error is one line and exit 3, no traceback unless asked
        add_failing_tables,
        Case(["reproduce", "test-internal-error"], 3, _bad("internal error: RuntimeError: boom")),
        Case(["reproduce", "test-no-memory"], 2, _bad("not enough memory")),
        Case(["reproduce", "test-internal-error"], env={"COLLSIM_DEBUG": "1"}, raises=RuntimeError),
        Case(["reproduce", "test-interrupt"], 130, _has("collsim: aborted", where="err")),
        # A reader that goes away ends collsim quietly.  click handles EPIPE itself and exits 1, so
        # main's own BrokenPipeError handler (exit 1, as Python documents) is not reached from a command.
        Case(["reproduce", "test-broken-pipe"], (0, 1), _quiet),
        # what the machine refuses (issue 21): one line, exit 2; tests/test_environment_errors.py has the real ones
        Case(["reproduce", "test-disk-full"], 2, _bad("cannot write out.json: No space left on device; the disk")),
        Case(["reproduce", "test-stdout-full"], 2, _bad("cannot write standard output: No space left")),
        Case(["reproduce", "test-nameless-full"], 2, _bad("cannot write: No space left on device")),
        Case(["reproduce", "test-store-full"], 2, _bad("cannot write the results store: database or disk is full")),
        Case(["reproduce", "test-no-mpi4py"], 2, _bad("pip install 'collsim[mpi]'")),
        Case(["reproduce", "test-no-other"], 3, _has("internal error: ModuleNotFoundError", where="err")),
        remove_failing_tables,
        # sweep and results (docs/sweeps.md)
        write_sweep,
        Case(["sweep", str(grid), "--store", str(db)],
             check=_has("4 points: 4 run, 0 skipped as finished, 1 failed", "store")),
        Case(["sweep", str(grid), "--store", str(db), "--jobs", "2"], check=_has("0 run, 4 skipped as finished")),
        Case(["results", "--store", str(db)], check=_has("4 results in", "efficiency", "ring on torus:")),
        Case(["results", "--store", str(db), "--system", "torus", "-c", "allgather", "-a", "ring", "-n", "16",
              "--json"], check=_json(lambda rows: len(rows) == 1 and rows[0]["status"] == "ok")),
        Case(["results", "--store", str(db), "--status", "error", "--format", "csv"],
             check=_delimited(",", lambda rows: len(rows) == 1 and rows[0]["nodes"] == "7")),
        Case(["results", "--store", str(db), "--nodes", "99"], check=_has("no results in")),
        Case(["sweep", str(tmp / "missing.toml")], 2, _bad("cannot read sweep file")),
        Case(["sweep", str(grid_bad), "--store", str(db)], 2, _bad("did you mean sizes")),
        Case(["results", "--store", str(tmp / "none.sqlite")], 2, _bad("no results store")),
        # collsim mpi (docs/mpi.md): outside mpiexec the world has one rank, and every schedule has at least
        # two nodes, so each run is refused here; tests/test_mpi.py runs the command under mpiexec
        Case(["mpi", "--help"], check=_has("mpiexec -n P", "--timeout", "--predict")),
        Case(["mpi", "ring", "--system", "ring", "-n", "4", "-s", "1KiB", "-I", "1"], 2,
             _bad("the schedule has 4 nodes but this MPI job has 1 rank (was it started without mpiexec?)")),
        Case(["mpi", str(ring), "-I", "1"], 2, _bad("this MPI job has 1 rank")),
        Case(["mpi", "ring", "--op", "bxor", "--dtype", "float64"], 2, _bad("--op bxor needs integer data")),
        Case(["mpi", "ring", "--op", "avg"], 2, _bad("unknown reduction operation 'avg'")),
        Case(["mpi", "ring", "--timeout", "0"], 2, _bad("--timeout must be positive")),
        Case(["mpi", str(ring), "-s", "1KiB"], 2, _bad("a schedule file has its own size")),
        Case(["mpi", str(ring), "--system", "torus"], 2, _bad("--system would be ignored")),
        Case(["mpi", str(tmp / "missing.json")], 2, _bad("does not exist")),
        # sweep --executor mpi and calibrate (docs/calibration.md): outside mpiexec the world has one rank;
        # the measurement itself runs under mpiexec in tests/test_mpi_*.py, the report here from --refit
        Case(["sweep", str(grid), "--store", str(db), "--executor", "mpi"], 2, _bad("at least 2 ranks")),
        Case(["sweep", str(grid), "--executor", "mpi", "--jobs", "2"], 2, _bad("--jobs is for --executor local")),
        write_calibrations,
        Case(["calibrate", "--refit", str(cal_big), "--out", str(tmp / "host.toml")],
             check=_has("one-way times between 2 MPI ranks", "fit of the min", "startup_s =", "wrote")),
        Case(["calibrate", "--refit", str(cal_small), "--statistic", "median", "--out", str(tmp / "host.toml"),
              "--json"], check=_json(lambda d: d["startup_s"] is None and d["statistic"] == "median")),
        Case(["calibrate", "--refit", str(cal_small), "--out", str(tmp / "host.toml")], check=_has("no startup_s")),
        Case(["calibrate", "--refit", str(cal_small), "--out", str(tmp / "host.toml"), "--format", "csv"],
             check=_delimited(",", lambda rows: [r["size_bytes"] for r in rows] == ["1", "1000000"])),
        Case(["calibrate", "--out", str(tmp / "host.toml")], 2, _bad("at least 2 ranks")),
        Case(["calibrate", "--sizes", "1B,,4B"], 2, _bad("comma-separated")),
        Case(["calibrate", "--sizes", "1B"], 2, _bad("at least two different sizes")),
        Case(["calibrate", "--name", " "], 2, _bad("cannot be empty")),
        Case(["calibrate", "--out", str(tmp / "nodir" / "c.toml")], 2, _bad("does not exist")),
        Case(["calibrate", "--refit", str(cal_big), "--sizes", "1B,2B"], 2, _bad("give one of them")),
        Case(["calibrate", "--refit", str(tmp / "nowhere.toml")], 2, _bad("cannot read calibration file")),
        Case(["calibrate", "--refit", str(grid_bad)], 2, _bad("no [calibration] table")),
        Case(["calibrate", "--refit", str(cal_broken)], 2, _bad("malformed")),
        Case(["calibrate", "--refit", str(garbage)], 2, _bad("invalid TOML")),
        # calibrate --model loggp-piecewise (docs/calibration.md): the report from --refit; the measurement
        # itself runs under mpiexec in tests/test_loggp_validate.py
        Case(["calibrate", "--model", "loggp-piecewise", "--refit", str(cal_loggp), "--out", str(tmp / "lg.toml")],
             check=_has("two-way exchange steps on 2 MPI ranks", "segment 2 (above 4KiB", "local reduction (sum, int64)",
                        "ping-pong 11%, exchange 10%", "wrote")),
        Case(["calibrate", "--model", "loggp-piecewise", "--refit", str(cal_loggp), "--out", str(tmp / "lg.toml"),
              "--json"], check=_json(lambda d: d["model"]["breakpoints_bytes"] == [4096] and d["out"])),
        Case(["calibrate", "--model", "loggp-piecewise", "--refit", str(cal_small), "--out", str(tmp / "lg.toml")], 2,
             _bad("alpha-beta calibration")),
        Case(["calibrate", "--model", "loggp-piecewise", "--refit", str(cal_loggp), "--exchange-sizes", "1KiB,2KiB,4KiB"],
             2, _bad("--refit fits tables already measured")),
        Case(["calibrate", "--model", "loggp-piecewise", "--dtype", "int8"], 2, _bad("int8")),
        Case(["calibrate", "--model", "loggp-piecewise", "--exchange-sizes", "1KiB,,2KiB"], 2, _bad("comma-separated")),
        Case(["calibrate", "--model", "loggp-piecewise", "--exchange-sizes", "1KiB,2KiB"], 2,
             _bad("at least 3 exchange sizes")),
        Case(["calibrate", "--model", "loggp-piecewise", "--out", str(tmp / "lg.toml")], 2, _bad("at least 2 ranks")),
        Case(["calibrate", "--model", "alpha-beta", "--exchange-sizes", "1KiB,2KiB,4KiB"], 2,
             _bad("is for --model loggp-piecewise")),
        Case(["calibrate", "--model", "alpha-beta", "--out", str(tmp / "host.toml")], 2, _bad("at least 2 ranks")),
        # validate (docs/calibration.md): outside mpiexec the world has one rank; the rows run under mpiexec in
        # tests/test_loggp_validate.py
        Case(["validate", "--help"], check=_has("mpiexec -n 2 collsim validate", "--calibration", "--store")),
        Case(["validate", "--calibration", str(cal_loggp)], 2, _bad("at least 2 ranks")),
        Case(["validate", "--rows", "ring"], 2, _bad("ALGORITHM:COLLECTIVE")),
        Case(["validate", "--sizes", "1KiB,,4KiB"], 2, _bad("comma-separated")),
        Case(["validate", "--calibration", str(cal_loggp), "--out", str(tmp / "x.toml")], 2, _bad("give one of them")),
        Case(["validate", "--figure", str(tmp / "nodir" / "v.png")], 2, _bad("does not exist")),
        Case(["validate", "--op", "avg"], 2, _bad("unknown reduction operation 'avg'")),
        # tune (docs/tune.md): table, files, the store reused, csv/json/trials, bad input
        Case(["tune", "--system", "ring", "-n", "8", "-c", "allreduce", "-a", "ring,recursive-doubling", "-b", "64",
              "-e", "1MiB", "-f", "16",
              "--store", str(tmp / "tune.sqlite"), "--rules", str(tmp / "rules.json"), "--figure",
              str(tmp / "tune.png"), "--wide"],
             check=lambda out, err: (_has("recursive-doubling", "runner-up", "wrote", "feasible")(out, err),
                                     _has("0 read from the store", where="err")(out, err))),
        Case(["tune", "--system", "ring", "-n", "8", "-c", "allreduce", "-a", "ring,recursive-doubling", "-b", "64",
              "-e", "1MiB", "-f", "16",
              "--store", str(tmp / "tune.sqlite"), "--rules", str(tmp / "mpich.json"), "--rules-format", "mpich",
              "--format", "csv"],
             check=lambda out, err: (_delimited(",", lambda rows: rows[0]["algorithm"] == "recursive-doubling")(
                 out, err), _has(": 0 built", where="err")(out, err))),
        Case(["tune", "--system", "paper", "-n", "64", "-a", "optree,ne", "-b", "1KiB", "-e", "4KiB", "-f", "4",
              "--no-store"], check=_has("never picked", "optree")),
        Case(["tune", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "2KiB", "--no-store", "--json", "--trials"],
             check=_json(lambda rows: all("eligible" in r for r in rows))),
        Case(["tune", "--system", "paper", "-n", "8", "-w", "4", "-S", "max_tx_channels=1", "-a", "ring", "-b", "1KiB",
              "-e", "2KiB", "--no-store"], check=_has("ring stripe=1", "could not be built", "a band of 2")),
        Case(["tune", "--system", "ring", "-n", "4", "-b", "4KiB", "-e", "16KiB", "--total", "--json"],
             env={"XDG_CACHE_HOME": str(tmp / "cache")},
             check=lambda out, err: (_json(lambda rows: rows[0]["total_bytes"] == 4096)(out, err),
                                     _has(str(tmp / "cache" / "collsim" / "tune.sqlite"), where="err")(out, err))),
        write_not_a_folder,
        Case(["tune", "--system", "ring", "-n", "4", "-b", "1KiB", "-e", "1KiB", "--json"],
             env={"XDG_CACHE_HOME": str(tmp / "not-a-folder" / "cache")},
             check=_has("not using the cache", "Not a directory", "no store (the cache could not", where="err")),
        Case(["tune", "--system", "ring", "-n", "4", "-b", "1KiB", "-e", "1KiB", "--json"],
             env={"XDG_CACHE_HOME": str(tmp / "folder-cache")},
             check=_has("not using the cache", "is a directory", where="err")),
        fill_the_cache,
        Case(["tune", "--system", "ring", "-n", "4", "-b", "1KiB", "-e", "2KiB", "--json"],
             env={"XDG_CACHE_HOME": str(tmp / "full-cache")},
             check=_has("not using the cache", "database or disk is full", where="err")),
        empty_the_cache,
        Case(["tune", "-b", "1KiB", "-e", "2KiB", "--store", "x", "--no-store"], 2, _bad("contradict")),
        Case(["tune", "-b", "1KiB", "-e", "2KiB", "-a", ","], 2, _bad("at least one name")),
        Case(["tune", "-b", "1KiB", "-e", "2KiB", "--figure", str(tmp / "t.pdf")], 2, _bad(".png or .svg")),
        Case(["tune", "-b", "1KiB", "-e", "2KiB", "--rules", str(tmp / "nodir" / "r.json")], 2, _bad("does not exist")),
        # export simgrid (docs/formats.md, "SimGrid platforms"): a platform, a schedule to replay, refusals
        Case(["export", "simgrid", "--system", "fat-tree", "-n", "16", "--out", str(tmp / "sg1")],
             check=_has("platform.xml", "240 routes")),
        Case(["export", "simgrid", "--system", "ring", "-n", "6", "--schedule", "ne", "-s", "4KiB", "--out",
              str(tmp / "sg2"), "--json"], check=_json(lambda d: d["transfers"] == 18 and d["routes"] == 12)),
        Case(["export", "simgrid", "--schedule", str(elec), "--out", str(tmp / "sg3")],
             check=_has("ne allgather", "run.sh", "--mode rank")),
        Case(["export", "simgrid", "--schedule", str(elec), "-n", "4", "--out", str(tmp / "sg4")], 2,
             _bad("--nodes would be ignored")),
        Case(["export", "simgrid", "--out", str(tmp / "sg5")], 2, _bad("not supported on optical-ring")),
        Case(["export", "simgrid", "--system", "ring", "-n", "4096", "--out", str(tmp / "sg6")], 2,
             _bad("route entries")),
        Case(["export", "simgrid", "--system", "ring", "-n", "64", "--max-route-entries", "10", "--out",
              str(tmp / "sg6")], 2, _bad("above the limit of 10")),
        Case(["export", "simgrid", "--system", "ring", "-n", "4", "--out", os.devnull], 2, _bad("cannot create")),
        # export msccl / import msccl (docs/formats.md, "MSCCL algorithm XML")
        Case(["export", "msccl", "ring", "-n", "4", "-c", "allreduce", "--out", str(tmp / "ring.xml")],
             check=_has("wrote", "verified", "thread blocks")),
        Case(["export", "msccl", str(elec), "--out", str(tmp / "elec.xml"), "--proto", "LL", "--min-bytes", "1KiB"],
             check=_has("wrote", "allgather on 8 gpus")),
        Case(["export", "msccl", str(elec), "-n", "4", "--out", str(tmp / "never.xml")], 2, _bad("would be ignored")),
        Case(["export", "msccl", "ring", "--system", "paper", "-n", "4", "--out", str(tmp / "never.xml")], 2,
             _bad("not supported on optical-ring")),
        Case(["export", "msccl", "ring", "-n", "64", "-c", "allreduce", "--out", str(tmp / "never.xml")], 2,
             _bad("--max-steps")),
        Case(["import", "msccl", str(tmp / "ring.xml")], check=_has("valid: allreduce MSCCL XML on 4 gpus")),
        Case(["import", "msccl", str(tmp / "ring.xml"), "--system", "ring", "--json", "--out", str(tmp / "r.json")],
             check=_json(lambda d: d["valid"] and d["system"] == "ring" and d["steps"] == 6)),
        Case(["import", "msccl", str(tmp / "missing.xml")], 2, _bad("cannot read")),
        Case(["import", "msccl", str(ring), "--format", "csv"], 2,
             _delimited(",", lambda rows: rows[0]["error"] == "MscclFormatError")),
    ]


def run_case(case: Case) -> tuple[int | None, str, str, BaseException | None]:
    """Run one command line through ``collsim.cli.main.main`` inside a CliRunner isolation."""
    from click.testing import CliRunner

    from collsim.cli.main import main
    runner = CliRunner(charset=case.charset)
    env = {"COLUMNS": "200", "COLLSIM_DEBUG": None, **case.env}
    code: int | None = None
    raised = None
    with runner.isolation(input=case.stdin() if case.stdin else None, env=env) as (out, err, _):
        try:
            main(case.argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception as exc:  # noqa: BLE001 - recorded and judged by the case
            raised = exc
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return code, stdout, stderr, raised


def measure(tmp: Path, limit: int | None = None) -> dict:
    """Run every case under coverage (the first ``limit`` only, if given: a smoke run of the
    cli-coverage benchmark); per-module line coverage, missed lines, failed cases, wall time."""
    import coverage
    cov = coverage.Coverage(source=["collsim.cli"], data_file=None, config_file=False, branch=False)
    t0 = time.perf_counter()
    cov.start()
    failures: list[str] = []
    commands: set[str] = set()
    n = 0
    try:
        for case in cases(tmp):
            if limit is not None and n >= limit:
                break
            if not isinstance(case, Case):
                case()
                continue
            n += 1
            if case.code == 0 and case.argv and not case.argv[0].startswith("-"):
                commands.add(case.argv[0])  # commands with a happy path
            try:
                code, out, err, raised = run_case(case)
                if case.raises is not None:
                    assert isinstance(raised, case.raises), f"expected {case.raises.__name__}, got {raised!r}"
                    continue
                assert raised is None, f"raised {raised!r}"
                expected = case.code if isinstance(case.code, tuple) else (case.code,)
                assert code in expected, f"exit code {code}, expected {case.code}; stderr: {err.strip()[:500]}"
                if case.check is not None:
                    case.check(out, err)
            except Exception as exc:  # noqa: BLE001 - collected, reported by the test
                failures.append(f"{case}: {type(exc).__name__}: {exc}\n"
                                + "".join(traceback.format_exception(exc)[-3:]))
    finally:
        cov.stop()
    import collsim.cli
    modules = {}
    for path in sorted(Path(collsim.cli.__file__).parent.glob("*.py")):
        _, statements, _, missing, missing_text = cov.analysis2(str(path))
        pct = 100.0 * (len(statements) - len(missing)) / len(statements) if statements else 100.0
        modules[path.name] = {"statements": len(statements), "missed": len(missing), "percent": round(pct, 2),
                              "missing": missing_text}
    return {"modules": modules, "failures": failures, "cases": n, "commands": sorted(commands),
            "seconds": round(time.perf_counter() - t0, 2)}


# --------------------------------------------------------------------------------------------- tests

def _measured() -> dict:
    """Run this file as a script in a fresh interpreter and read its JSON report."""
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json"], cwd=cwd,
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COLUMNS": "200"})
    if proc.returncode != 0:
        raise AssertionError(f"the coverage run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def report():
    return _measured()


def test_every_case_behaves(report):
    assert report["cases"] >= 40
    assert not report["failures"], f"{len(report['failures'])} case(s) failed:\n" + "\n".join(report["failures"])


def test_every_command_is_exercised(report):
    from collsim.cli.main import COMMANDS
    assert set(COMMANDS) <= set(report["commands"]), sorted(set(COMMANDS) - set(report["commands"]))


def test_line_coverage_of_each_cli_module(report):
    modules = report["modules"]
    assert set(modules) == set(MIN_LINE_COVERAGE), (
        f"collsim/cli has modules {sorted(modules)}; give each a threshold in MIN_LINE_COVERAGE "
        f"(have {sorted(MIN_LINE_COVERAGE)})")
    low = {name: m for name, m in modules.items() if m["percent"] < MIN_LINE_COVERAGE[name]}
    assert not low, "line coverage below threshold:\n" + "\n".join(
        f"  {name}: {m['percent']}% < {MIN_LINE_COVERAGE[name]}% (missed lines {m['missing']})"
        for name, m in low.items())


def _print_report(rep: dict) -> None:
    for name, m in rep["modules"].items():
        print(f"{name:14s} {m['percent']:6.2f}%  {m['statements'] - m['missed']}/{m['statements']} lines"
              f"{'  missed: ' + m['missing'] if m['missing'] else ''}")
    print(f"{rep['cases']} cases over {', '.join(rep['commands'])} in {rep['seconds']} s; "
          f"{len(rep['failures'])} failed")
    for f in rep["failures"]:
        print(f)


if __name__ == "__main__":
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp_dir:
        os.chdir(tmp_dir)  # the cases write relative paths (syn.npz, rep-mlfm/): never into the caller's folder
        try:
            result = measure(Path(tmp_dir), limit=5 if "--smoke" in sys.argv[1:] else None)
        finally:
            os.chdir(here)
    if "--json" in sys.argv[1:]:
        print(json.dumps(result))
    else:
        _print_report(result)
    sys.exit(0)
