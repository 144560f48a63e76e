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
    """The warning line for ``system``, or None when every switch and link on a minimum-hop path is used.

    Parameters
    ----------
    system : System
        Any system (its kind's ``system_notes``: electrical networks with switches, and custom
        ones, are checked up to 1024 end nodes).
    collective : str, optional
        Canonical collective name, for the wording (``"in this all-to-all"``).

    Returns
    -------
    str or None
        ``"warning: 1 of 6 switches carries no traffic in this all-to-all: s5 (...)"``: idle
        switches first; idle links only when no switch is idle.

    Examples
    --------
    >>> from collsim.kinds.network.custom import CustomNetwork
    >>> two = ((0, 2), (0, 3), (1, 2), (1, 3))
    >>> print(idle_warning(CustomNetwork(nodes=2, switches=2, link=two, routing="single-path"), "alltoall"))
    warning: 1 of 2 switches carries no traffic in this all-to-all: s1 (no route crosses it under routing = "single-path"; -S routing=ecmp splits traffic over the equal-cost paths)
    >>> idle_warning(CustomNetwork(nodes=2, switches=2, link=two), "alltoall") is None
    True
    """
    notes = view_for(system).system_notes(system, collective)  # the kind says what to warn about
    return notes[0] if notes else None


__all__ = ["idle_warning"]
