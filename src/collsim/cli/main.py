"""Entry point: the ``collsim`` command group and its error handling.

Library errors become one line on stderr and an exit code: 1 for a schedule
that fails verification, 2 for bad input or an unreadable file.  A traceback
is shown only when ``COLLSIM_DEBUG=1``.  What the user's machine refuses is
exit 2 too, in one line naming the file (docs/model.md, "Errors and exit
codes"): an ``OSError`` (a full disk, a read-only folder, a name too long, a
full or closed standard output), an SQLite store that cannot be written, and
a missing optional extra (``pip install 'collsim[mpi]'``).  A reader that goes
away (``collsim compare | head -1``) ends collsim quietly with exit 1, as
Python's documentation of SIGPIPE says.

Start-up is kept short (docs/performance.md): the group knows its commands'
names and one-line help, and imports :mod:`collsim.cli.commands` only to run a
command or show a command's own help; the commands import numpy, rich and the
library inside their bodies.  ``collsim --help`` and ``collsim --version``
import no more than click (tests/test_startup.py).
"""

from __future__ import annotations

import os
import sys

import click

from .._version import __version__
from ..core.errors import CollsimError, VerificationError

# Each command's name and the first paragraph of its help (``collsim --help`` shortens it as click
# does).  tests/test_startup.py checks this table against collsim.cli.commands.ALL.
COMMANDS: dict[str, str] = {
    "algorithms": "List registered algorithms: name, collectives, systems, reference.",
    "calibrate": "Measure communication between MPI ranks, fit loggp-piecewise (or α–β), write a system TOML.",
    "compare": "Build, verify and time algorithms side by side.",
    "export": "Write a schedule or a system in another tool's format: MSCCL XML, a SimGrid platform.",
    "import": "Read another tool's schedule into collsim and verify it: MSCCL XML.",
    "mpi": "Run a schedule for real on MPI ranks, checked and timed against MPI's own collective.",
    "reproduce": "Regenerate a paper's published table, or a paper's whole evaluation with its figures.",
    "results": "Show the results a sweep stored, one row per point, in a fixed order.",
    "schedule": "Build, verify and write a schedule file (JSON; numpy's binary format if the name ends in .npz).",
    "sweep": "Run a sweep file's grid of points into a results store, skipping finished points.",
    "simulate": "Run the flow-level simulator on an algorithm's schedule or a schedule FILE (electrical networks).",
    "synthesize": "Synthesize the fastest schedule for a network from its graph, with its bound and certificate.",
    "systems": "List system presets and kinds with their parameters and defaults.",
    "topology": "Show what a system is made of: nodes, switches, links, radix, diameter.",
    "tune": "Pick the fastest feasible, verified algorithm and parameters per message size.",
    "validate": "Calibrate loggp-piecewise, run collectives for real, and compare predicted with measured.",
    "verify": "Check a schedule file (ours or hand-written; JSON or .npz).",
}


class LazyGroup(click.Group):
    """A command group that imports its commands only when one is run or asked for its help."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            from . import commands
            for cmd in commands.ALL:
                self.add_command(cmd)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # As click.Group.format_commands, with stand-ins carrying the static help for the commands
        # not imported yet.
        rows = [(name, self.commands[name] if name in self.commands else click.Command(name, help=COMMANDS[name]))
                for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in rows if not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__)
def cli() -> None:
    """Build, verify and time collective-communication schedules.

    \b
    Examples:
      collsim compare
      collsim compare --nodes 256 --collective allreduce --size 32KiB --json
      collsim algorithms
      collsim systems
      collsim compare --system fat-tree -n 128 --collective alltoall --size 64KiB
      collsim schedule osm --nodes 16 --wavelengths 2 --out osm.json
      collsim verify osm.json
      collsim simulate ne --system ring -n 64 --json
      collsim topology --system mlfm --radix 36
      collsim reproduce optree-table1
    """
    # Runs only when a command is about to run, not for --help or --version.
    from .._malloc import tune_malloc
    tune_malloc()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with its status."""
    # collsim makes no BLAS calls, and OpenBLAS starting its thread pool when numpy is imported
    # costs tens of milliseconds on a small machine (docs/performance.md).  An explicit setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.stdout is None:  # started with standard output closed (>&-): results would vanish without a word
        if sys.stderr is not None:
            sys.stderr.write("collsim: standard output is closed: collsim prints its results there; send them "
                             "to /dev/null (>/dev/null) instead of closing it (>&-)\n")
        sys.exit(2)
    from .output import ascii_fallback, echo  # a terminal that cannot show "λ" gets "lambda" (docs/output.md)
    ascii_fallback()
    try:
        cli.main(args=argv, prog_name="collsim", standalone_mode=False)
        _flush_stdout()  # here, so that a full or vanished standard output is reported below
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        echo("collsim: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        echo(f"collsim: {exc.format_message()}", err=True)
        sys.exit(2)
    except VerificationError as exc:
        echo(f"collsim: {exc}", err=True)
        sys.exit(1)
    except CollsimError as exc:
        echo(f"collsim: {exc}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        _quiet_stdout()  # the reader went away: nothing to say, and nothing may flush at exit
        sys.exit(1)
    except MemoryError as exc:  # numpy's text ("Unable to allocate 745. GiB for an array with shape ...") is not for users
        from ..experiments.compare import _out_of_memory  # the refused allocation's size, in one phrase
        # the advice fits every instance: a split or chunks are not every collective's (an all-gather has none)
        echo(f"collsim: {_out_of_memory(exc)}: use fewer nodes", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - never show users a traceback
        if os.environ.get("COLLSIM_DEBUG"):
            raise
        message = _environment_error(exc)
        if message is not None:  # the machine refused (a full disk, a missing extra): exit 2, one line
            echo(f"collsim: {message}", err=True)
            sys.exit(2)
        echo(f"collsim: internal error: {type(exc).__name__}: {exc} (set COLLSIM_DEBUG=1 for a traceback)",
             err=True)
        sys.exit(3)
    sys.exit(0)


# Optional extras (pyproject.toml): the top-level module each brings, and the extra's name.
EXTRAS = {"mpi4py": "mpi", "matplotlib": "plot"}


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that Python's flush at exit finds nothing to fail on."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        exc.filename = exc.filename or STDOUT  # named, as the other writes are
        raise


STDOUT = "standard output"


def _stdout_failed(exc: OSError) -> bool:
    """Whether the error came from writing standard output: its innermost Python frame holds the stream
    (click's echo, our own writer) or an object whose ``file`` it is (rich's console)."""
    if exc.filename == STDOUT:
        return True
    streams = {id(s) for s in (sys.stdout, getattr(sys.stdout, "buffer", None), sys.__stdout__)}
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    for value in tb.tb_frame.f_locals.values():
        try:
            if id(value) in streams or id(getattr(value, "file", None)) in streams:
                return True
        except Exception:  # noqa: BLE001 - a property that fails is not standard output
            continue
    return False


def _environment_error(exc: BaseException) -> str | None:
    """The one line for an error of the user's machine rather than of collsim, or None for a bug.

    A file error (a full disk, a read-only folder, a name too long) names the file; a full or
    broken standard output says so; an SQLite store that cannot be written (``database or
    disk is full``, read-only, locked) says what to do; a missing optional package names
    the extra that brings it.
    """
    from ..core.files import environment_error, os_reason
    if isinstance(exc, ImportError):
        root = (exc.name or "").split(".")[0]
        if root in EXTRAS:
            return (f"{root} is not installed, and this needs it: install collsim[{EXTRAS[root]}] "
                    f"(pip install 'collsim[{EXTRAS[root]}]')")
        return None
    if isinstance(exc, OSError) and exc.errno is not None and exc.filename in (None, STDOUT) and _stdout_failed(exc):
        _quiet_stdout()  # what is still buffered would fail again at exit
        return f"cannot write standard output: {os_reason(exc)}"
    return environment_error(exc)
