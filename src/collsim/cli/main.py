"""Entry point: the ``collsim`` command group and its error handling.

Library errors become one line on stderr and an exit code: 1 for a schedule
that fails verification, 2 for bad input or an unreadable file.  A traceback
is shown only when ``COLLSIM_DEBUG=1``.

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

from .. import __version__
from ..core.errors import CollsimError, VerificationError

# Each command's name and the first paragraph of its help (``collsim --help`` shortens it as click
# does).  tests/test_startup.py checks this table against collsim.cli.commands.ALL.
COMMANDS: dict[str, str] = {
    "algorithms": "List registered algorithms: name, collectives, systems, reference.",
    "calibrate": "Measure point-to-point latency and bandwidth between MPI ranks, fit α–β, write a system TOML.",
    "compare": "Build, verify and time algorithms side by side.",
    "export": "Write a schedule or a system in another tool's format: MSCCL XML, a SimGrid platform.",
    "import": "Read another tool's schedule into collsim and verify it: MSCCL XML.",
    "mpi": "Run a schedule for real on MPI ranks, checked and timed against MPI's own collective.",
    "reproduce": "Regenerate a paper's published table, or a paper's whole evaluation with its figures.",
    "results": "Show the results a sweep stored, one row per point, in a fixed order.",
    "schedule": "Build, verify and write a schedule file (JSON; numpy's binary format if the name ends in .npz).",
    "sweep": "Run a sweep file's grid of points into a results store, skipping finished points.",
    "simulate": "Run the flow-level simulator on an algorithm's schedule or a schedule FILE (electrical networks).",
    "systems": "List system presets and kinds with their parameters and defaults.",
    "topology": "Show what a system is made of: nodes, switches, links, radix, diameter.",
    "tune": "Pick the fastest feasible, verified algorithm and parameters per message size.",
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
    """Run the CLI and exit with its status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    # collsim makes no BLAS calls, and OpenBLAS starting its thread pool when numpy is imported
    # costs tens of milliseconds on a small machine (docs/performance.md).  An explicit setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .output import ascii_fallback, echo  # a terminal that cannot show "λ" gets "lambda" (docs/output.md)
    ascii_fallback()
    try:
        cli.main(args=argv, prog_name="collsim", standalone_mode=False)
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
        sys.exit(0)
    except MemoryError:  # numpy's text ("Unable to allocate 745. GiB for an array with shape ...") is not for users
        echo("collsim: not enough memory for this instance; use fewer nodes or a smaller split", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - never show users a traceback
        if os.environ.get("COLLSIM_DEBUG"):
            raise
        echo(f"collsim: internal error: {type(exc).__name__}: {exc} (set COLLSIM_DEBUG=1 for a traceback)",
             err=True)
        sys.exit(3)
    sys.exit(0)
