"""``collsim export simgrid`` (placeholder; issue #15)."""

from __future__ import annotations

import click

from .options import StrictCommand


@click.command("simgrid", cls=StrictCommand)
def export_simgrid_cmd() -> None:
    """Write a system as a SimGrid platform (XML v4.1) and a host file."""
    raise click.UsageError("not implemented yet")
