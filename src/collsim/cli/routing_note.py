"""The one-line warning of ``compare`` and ``topology`` about switches or links the routing leaves idle.

A bound counts every link, so a network whose routing never uses some of them (single-path
routing over two spines, D-mod-k on a partly filled fat tree) reads as inefficient when
it is the routing, not the schedule, that wastes them.  The check is
:meth:`collsim.core.network.Network.idle_resources`.
"""

from __future__ import annotations

from typing import Any

_NAMES = {"allgather": "all-gather", "reducescatter": "reduce-scatter", "allreduce": "all-reduce",
          "alltoall": "all-to-all"}
_SHOWN = 6


def _listed(names: list[str]) -> str:
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f", ... ({more} more)" if more > 0 else "")


def idle_warning(system: Any, collective: str | None = None) -> str | None:
    """The warning line for ``system``, or None when every switch and link on a minimum-hop path is used.

    Parameters
    ----------
    system : System
        Any system; electrical networks with switches, and custom ones, are checked (up to 1024
        end nodes).
    collective : str, optional
        Canonical collective name, for the wording (``"in this all-to-all"``).

    Returns
    -------
    str or None
        ``"warning: 1 of 6 switches carries no traffic in this all-to-all: s5 (...)"``: idle
        switches first; idle links only when no switch is idle.

    Examples
    --------
    >>> from collsim.systems.custom import CustomNetwork
    >>> two = ((0, 2), (0, 3), (1, 2), (1, 3))
    >>> print(idle_warning(CustomNetwork(nodes=2, switches=2, link=two, routing="single-path"), "alltoall"))
    warning: 1 of 2 switches carries no traffic in this all-to-all: s1 (no route crosses it under routing = "single-path"; -S routing=ecmp splits traffic over the equal-cost paths)
    >>> idle_warning(CustomNetwork(nodes=2, switches=2, link=two), "alltoall") is None
    True
    """
    check = getattr(system, "idle_resources", None)
    if check is None or not (system.switches or system.kind == "custom"):  # switchless grids: nothing to warn
        return None
    info = check()
    if not info or not (info["switches"] or info["links"]):
        return None
    where = f"in this {_NAMES.get(collective, collective)}" if collective else "under its routing"
    idle = info["switches"] or info["links"]
    what = "switches" if info["switches"] else "links on shortest paths"
    total = info["switches_on_paths"] if info["switches"] else info["links_on_paths"]
    routing = getattr(system, "routing", None)
    why = f"no route crosses {'it' if len(idle) == 1 else 'them'}"
    if routing:
        why += f' under routing = "{routing}"'
    if "ecmp" in getattr(system, "ROUTINGS", ()) and routing != "ecmp":
        why += "; -S routing=ecmp splits traffic over the equal-cost paths"
    return (f"warning: {len(idle)} of {total} {what} {'carries' if len(idle) == 1 else 'carry'} no traffic "
            f"{where}: {_listed(idle)} ({why})")


__all__ = ["idle_warning"]
