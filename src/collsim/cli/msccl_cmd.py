"""``collsim export msccl`` and ``collsim import msccl`` (placeholder; issue #15)."""

from __future__ import annotations

import click

from .options import StrictCommand


@click.command("msccl", cls=StrictCommand)
def export_msccl_cmd() -> None:
    """Write an electrical schedule as MSCCL algorithm XML."""
    raise click.UsageError("not implemented yet")


@click.command("msccl", cls=StrictCommand)
def import_msccl_cmd() -> None:
    """Read an MSCCL algorithm XML into a collsim schedule and verify it."""
    raise click.UsageError("not implemented yet")
