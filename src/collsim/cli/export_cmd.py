"""``collsim export`` and ``collsim import``: collsim's schedules and systems in other tools' formats.

The subcommands live beside the formats they speak: :mod:`collsim.cli.msccl_cmd` (MSCCL algorithm
XML, both ways) and :mod:`collsim.cli.simgrid_cmd` (SimGrid platforms).  docs/formats.md describes
every format.
"""

from __future__ import annotations

import click

from .msccl_cmd import export_msccl_cmd, import_msccl_cmd
from .simgrid_cmd import export_simgrid_cmd


@click.group("export")
def export_cmd() -> None:
    """Write a schedule or a system in another tool's format: MSCCL XML, a SimGrid platform.

    \b
    Examples:
      collsim export msccl ring --system star -n 8 -c allreduce --out ring.xml
      collsim export msccl sched.json --out sched.xml
      collsim export simgrid --system fat-tree -n 16 --out platform/
    """


@click.group("import")
def import_cmd() -> None:
    """Read another tool's schedule into collsim and verify it: MSCCL XML.

    \b
    Examples:
      collsim import msccl ring.xml
      collsim import msccl ring.xml --out ring.json
    """


export_cmd.add_command(export_msccl_cmd)
export_cmd.add_command(export_simgrid_cmd)
import_cmd.add_command(import_msccl_cmd)
