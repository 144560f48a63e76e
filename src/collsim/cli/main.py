"""Entry point: the ``collsim`` command group and its error handling.

Library errors become one line on stderr and an exit code: 1 for a schedule
that fails verification, 2 for bad input or an unreadable file.  A traceback
is shown only when ``COLLSIM_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys

import click

from .._malloc import tune_malloc
from ..core.errors import CollsimError, VerificationError
from . import commands


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="collsim")
def cli() -> None:
    """Build, verify and time collective-communication schedules.

    \b
    Examples:
      collsim compare
      collsim compare --nodes 256 --collective allreduce --size 32KB --json
      collsim algorithms
      collsim compare --system fat-tree -n 128 --collective alltoall --size 64KiB
      collsim schedule osm --nodes 16 --wavelengths 2 --out osm.json
      collsim verify osm.json
      collsim simulate ne --system ring -n 64 --json
      collsim topology mlfm --radix 36
      collsim reproduce optree-table1
    """


for _cmd in commands.ALL:
    cli.add_command(_cmd)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with its status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    tune_malloc()
    try:
        cli.main(args=argv, prog_name="collsim", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("collsim: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"collsim: {exc.format_message()}", err=True)
        sys.exit(2)
    except VerificationError as exc:
        click.echo(f"collsim: {exc}", err=True)
        sys.exit(1)
    except CollsimError as exc:
        click.echo(f"collsim: {exc}", err=True)
        sys.exit(2)
    except BrokenPipeError:
        sys.exit(0)
    except MemoryError as exc:
        click.echo(f"collsim: not enough memory for this instance ({exc}); use fewer nodes or a smaller "
                   "split", err=True)
        sys.exit(2)
    except Exception as exc:  # noqa: BLE001 - never show users a traceback
        if os.environ.get("COLLSIM_DEBUG"):
            raise
        click.echo(f"collsim: internal error: {type(exc).__name__}: {exc} "
                   "(set COLLSIM_DEBUG=1 for a traceback)", err=True)
        sys.exit(3)
    sys.exit(0)
