"""How a kind presents its results: legend titles, captions, notes and the keys that describe a
system.  The physics (routing, checks, time, bounds) is the model's (:mod:`.base`); the command
line, ``compare``'s tables, ``tune`` and the reports ask a kind's *view* for the words.

Each kind's subpackage registers its view beside its model (:func:`register_view`); a kind that
registers none gets the nearest view of its model's base classes, and at last :class:`KindView`'s
defaults (no notes).
"""

from __future__ import annotations

from typing import Any

from ..core.system import System
from .base import model_for

_VIEWS: dict[type, "KindView"] = {}


class KindView:
    """Defaults for a kind's view: subclass it and write only what differs.

    Attributes
    ----------
    legend_title : str
        Title of the kind's section of the column legend (``--explain``, docs/output.md).
    instance_keys : tuple of str
        The result part's fields that describe the system rather than the result
        (``wavelengths``): in the table's title, copied to the rows of skipped algorithms.

    Examples
    --------
    >>> KindView().captions([], set()), KindView.legend_title
    ([], '')
    """

    legend_title: str = ""
    instance_keys: tuple[str, ...] = ()

    def report_facts(self, schedule, report) -> list[str]:
        """What ``collsim verify`` adds to its one-line summary for this kind (none by default).

        Parameters
        ----------
        schedule : Schedule
            The verified schedule.
        report : VerifyReport
            Its verification report.

        Returns
        -------
        list of str
            Counted phrases (``["2 wavelengths", "1 reconfiguration"]`` on an optical ring, ``["3
            reconfigurations"]`` on an optical circuit switch; :func:`collsim.core.wording.counted`).

        Examples
        --------
        >>> import collsim
        >>> s = collsim.build("ring", "paper", "allgather", 1024, nodes=4)
        >>> view_for(s.system).report_facts(s, collsim.verify(s))
        ['1 wavelength', '1 reconfiguration']
        >>> s = collsim.build("ring", "ring", "allgather", 1024, nodes=4)
        >>> view_for(s.system).report_facts(s, collsim.verify(s))
        []
        """
        return []

    def system_notes(self, system, collective: str | None = None) -> list[str]:
        """Warnings about a system that commands print before its results (none by default).

        Parameters
        ----------
        system : System
            A system of this kind.
        collective : str, optional
            Canonical collective name, for the wording.

        Returns
        -------
        list of str
            One line each (``collsim compare`` and ``topology`` print the first).
        """
        return []

    def captions(self, rows, keys) -> list[str]:
        """Notes under a comparison table of this kind's rows (what a mark in a cell means).

        Parameters
        ----------
        rows : sequence of Result
            The table's rows.
        keys : set of str
            The keys of the columns the table shows.

        Returns
        -------
        list of str
            One line per note; none by default.
        """
        return []

    def tune_fields(self, system, trials) -> dict[int, dict[str, Any]]:
        """What this kind adds, per size, to ``collsim tune``'s rows (``--format json`` and csv).

        Parameters
        ----------
        system : System
            The tuned system, of this kind.
        trials : sequence of Trial
            Every trial (:class:`~collsim.experiments.tune.run.Trial`); ``trial.part`` holds the row's fields
            of the model's ``part_class``, also when read back from tune's results store.

        Returns
        -------
        dict
            Size in bytes -> ``{key: JSON-able value}``; none by default.
        """
        return {}

    def tune_notes(self, system, trials) -> list[str]:
        """Notes this kind prints under ``collsim tune``'s table (parameters as :meth:`tune_fields`).

        Returns
        -------
        list of str
            One line per note; none by default.
        """
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def register_view(model_class: type, view: KindView) -> None:
    """Record the view of a model class (and, through the class hierarchy, of its subclasses).

    Parameters
    ----------
    model_class : type
        A :class:`~collsim.kinds.base.KindModel` subclass.
    view : KindView
        Its view.

    Returns
    -------
    None

    Examples
    --------
    >>> from collsim.kinds.network.model import NetworkModel
    >>> type(_VIEWS[NetworkModel]).__name__
    'NetworkView'
    """
    _VIEWS[model_class] = view


_DEFAULT = KindView()


def view_for(what: Any) -> KindView:
    """The view of a system's kind, or of a model: the nearest registered one in its model's class hierarchy.

    Parameters
    ----------
    what : System or KindModel
        A system, or a kind's model.

    Returns
    -------
    KindView
        Its view (:class:`KindView`'s defaults when none is registered).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> view_for(load_system("paper", nodes=8)).legend_title
    'compare on optical rings'
    >>> view_for(load_system("ocs", nodes=8, ports=2)).legend_title
    'compare on optical circuit switches'
    """
    model = model_for(what) if isinstance(what, System) else what
    for cls in type(model).__mro__:
        if cls in _VIEWS:
            return _VIEWS[cls]
    return _DEFAULT


__all__ = ["KindView", "register_view", "view_for"]
