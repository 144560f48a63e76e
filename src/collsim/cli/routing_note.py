"""The one-line warning of ``compare`` and ``topology`` about switches or links the routing leaves idle.

A bound counts every link, so a network whose routing never uses some of them (single-path
routing over two spines, D-mod-k on a partly filled fat tree) reads as inefficient when
it is the routing, not the schedule, that wastes them.  Each kind says what to warn about
(:meth:`collsim.kinds.base.KindModel.system_notes`; on networks,
:func:`collsim.kinds.network.model.idle_note`).
"""

from __future__ import annotations

from typing import Any

from ..kinds.view import view_for


def idle_warning(system: Any, collective: str | None = None) -> str | None:
    """The warning line for ``system``, or None when every switch and link on a minimum-hop path is used."""
    notes = view_for(system).system_notes(system, collective)  # the kind says what to warn about
    return notes[0] if notes else None


__all__ = ["idle_warning"]
