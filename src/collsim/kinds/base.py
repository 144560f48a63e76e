"""The protocol every kind of system implements, and the lookup from a system to its model.

A *system model* holds the physics of a kind of system: realising a logical schedule
(routing plus channel assignment, reading route hints), checking the schedule's
resources, timing it with the kind's closed-form model, bounding any schedule's time
from below, the kind's part of a result row, the algorithm tags it accepts, what it
supports (:data:`CAPABILITIES`, refused elsewhere by one generic :func:`require`), and
its route format.  How a kind words its results (legend, captions, notes) is its view
(:mod:`collsim.kinds.view`).  A kind is one subpackage of :mod:`collsim.kinds` whose
model subclasses :class:`KindModel` and calls :func:`register_model`; the package
imports every subpackage, so nothing else needs an edit.  The registry itself lives
in :mod:`collsim.core.plugins`, so layers below this one can ask it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from ..core.collective import Collective
from ..core.errors import UnsupportedError
from ..core.plugins import CAPABILITIES, model_for, models, register_model, require, supports
from ..core.schedule import LogicalSchedule, Schedule
from ..core.system import System

__all__ = ["CAPABILITIES", "Column", "KindModel", "SystemModel", "Timing", "model_for", "models", "part_model",
           "register_model", "require", "supports"]


@dataclass(frozen=True)
class Timing:
    """A schedule's time under its kind's closed-form model.

    Parameters
    ----------
    time_s : float
        Seconds.
    model : str
        Which model (``"optical-step"``, ``"alpha-beta (closed form)"`` ...).

    Examples
    --------
    >>> from collsim import build
    >>> s = build("ring", "paper", "allgather", "1MiB", nodes=8)
    >>> t = model_for(s.system).time(s)
    >>> t.model, round(t.time_s * 1e3, 3)
    ('optical-step', 1.722)
    """

    time_s: float
    model: str


@dataclass(frozen=True)
class Column:
    """One column of a result table: the row's key, a short header, the cell text and what it means.

    The command line (``collsim compare``) lays its tables out from these; CSV and JSON use the
    raw value under ``key`` instead of ``text``.  Each kind's part lists its own
    (:meth:`OpticalPart.columns <collsim.kinds.optical_ring.model.OpticalPart.columns>`).

    Parameters
    ----------
    key : str
        The row's key (``Result.to_json()``) whose value the column shows.
    header : str
        Short table header; a newline splits it over two lines.
    text : callable
        ``text(row) -> str``: the cell of one result row (numbers in full, with units).
    legend : str
        What the column means (``collsim compare --explain``; docs/output.md).
    wide : bool, optional
        Shown only with ``--wide`` (default False).
    drop : int or None, optional
        When a terminal is too narrow, columns are dropped in increasing ``drop``
        order; None (the default) keeps the column always.

    Examples
    --------
    >>> col = Column("slots", "slots", lambda row: str(row["slots"]), "physical time slots")
    >>> col.text({"slots": 7}), col.wide, col.drop
    ('7', False, None)
    """

    key: str
    header: str
    text: Callable[[Any], str]
    legend: str
    wide: bool = False
    drop: int | None = None


def part_model(part: Any) -> Any:
    """The model whose result part ``part`` is (the first registered with its class), or None.

    Parameters
    ----------
    part : object or None
        A result row's ``part``.

    Returns
    -------
    KindModel or None
        The model, None for a row without a part or a part no kind registered.

    Examples
    --------
    >>> from collsim.pipeline import run
    >>> from collsim.systems import load_system
    >>> part_model(run("ring", load_system("ring", nodes=4), "allgather", 1024).part).name
    'network'
    """
    if part is None:
        return None
    return next((m for m in models() if m.part_class is type(part)), None)


class SystemModel(Protocol):
    """What a kind of system provides (see the module docstring); :class:`KindModel` gives defaults.

    Examples
    --------
    >>> from collsim import build
    >>> s = build("ring", "ring", "allgather", 1024, nodes=4)     # an electrical ring
    >>> model = model_for(s.system)
    >>> model.name, model.check_resources(s), model.time(s).model
    ('network', None, 'alpha-beta (schedule)')
    """

    name: str
    part_class: type | None
    capabilities: frozenset[str]
    accepts: tuple[str, ...]
    route_format: Any

    def realize(self, system: System, logical: LogicalSchedule, *, strategy: str | Callable = "first-fit",
                algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
        """Route and assign channels: a physical schedule."""

    def check_resources(self, schedule: Schedule) -> None:
        """Raise a :class:`~collsim.core.errors.ResourceError` for the first over-used resource."""

    def time(self, schedule: Schedule, spec=None) -> Timing:
        """The kind's closed-form time of a schedule (``spec.closed_forms[name]`` may give the algorithm's own)."""

    def answer_time_s(self, schedule: Schedule, closed: Timing) -> float:
        """The time a result reports as its answer, never below :meth:`lower_bound_s`.

        ``closed`` is :meth:`time`'s for the same schedule: the answer where the kind's closed form
        charges every resource the bound counts (optical rings), else a finer model's time (the flow
        simulator's on networks, whose alpha-beta estimate ignores per-hop latency and contention).
        """

    def lower_bound_s(self, system: System, collective: Collective) -> float:
        """No schedule of ``collective`` on ``system`` is faster under this kind's model: the one bound every
        command reports."""

    def bound_certificate(self, system: System, collective: Collective) -> Any:
        """The certificate of the term that binds :meth:`lower_bound_s` (None if the kind gives none)."""

    def realised_facts(self, schedule: Schedule) -> dict[str, Any]:
        """Facts of the realised schedule that an algorithm's parameters may report."""

    def row_part(self, schedule: Schedule, spec, chosen: Mapping[str, Any]) -> Any:
        """The kind's fields of a result row (an instance of :attr:`part_class`)."""


class KindModel:
    """Defaults for a kind's model: subclass it and write only what differs.

    Attributes
    ----------
    name : str
        The kind's name (``"optical-ring"``); algorithms' ``systems=`` tags and closed forms use it.
    part_class : type or None
        The frozen dataclass of the kind's result fields, with ``title()`` and ``columns()`` (a
        staticmethod listing :class:`Column`, whose ``text(row)`` gives each cell).  A result's JSON
        keys are the common ones and its own part's fields.
    capabilities : frozenset of str
        What the kind supports, from :data:`CAPABILITIES`; :func:`require` refuses the rest.
    accepts : tuple of str
        The algorithm ``systems=`` tags whose algorithms run on this kind (default ``(name,)``).  A kind
        that realises any point-to-point logical schedule may accept ``"network"`` too.
    route_format : object or None
        The kind's route class with its schedule-file reader and writer (registered into
        :mod:`collsim.core.plugins` by :func:`register_model`).

    Examples
    --------
    >>> from collsim.core.system import System
    >>> class Toy(KindModel):
    ...     name = "toy"
    >>> m = Toy()
    >>> m.accepts, m.capabilities, m.answer_time_s(None, Timing(2.0, "toy"))
    (('toy',), frozenset(), 2.0)
    >>> m.time(None)
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnsupportedError: the toy kind has no closed-form time for this schedule
    """

    name: str = "abstract"
    part_class: type | None = None
    capabilities: frozenset[str] = frozenset()
    route_format: Any = None

    @property
    def accepts(self) -> tuple[str, ...]:
        """The algorithm ``systems=`` tags this kind runs (default: its own name)."""
        return (self.name,)

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None) -> Schedule:
        """Route and assign channels (every kind writes its own)."""
        raise UnsupportedError(f"the {self.name} kind cannot realise schedules")

    def check_resources(self, schedule) -> None:
        """No resource beyond what :meth:`realize` guarantees (kinds with channels or links override)."""

    def closed_form(self, spec) -> Callable | None:
        """The algorithm's closed form for this kind (``spec.closed_forms[name]``), or None."""
        forms = getattr(spec, "closed_forms", None) or {}
        return forms.get(self.name)

    def time(self, schedule, spec=None) -> Timing:
        """The kind's closed-form time (every kind with a time model writes its own)."""
        raise UnsupportedError(f"the {self.name} kind has no closed-form time for this schedule")

    def answer_time_s(self, schedule, closed: Timing) -> float:
        """The closed-form time: right for kinds whose :meth:`time` charges every resource the bound counts."""
        return closed.time_s

    def lower_bound_s(self, system, collective) -> float:
        """No bound known: 0 (every kind with a bound writes its own)."""
        return 0.0

    def bound_certificate(self, system, collective) -> Any:
        """Why no schedule beats :meth:`lower_bound_s`, as an object with the argument (None: none given).

        Parameters
        ----------
        system : System
            A system of this kind.
        collective : Collective
            The collective.

        Returns
        -------
        object or None
            The binding term's certificate (kinds that name one override this; ``collsim synthesize``
            prints it).
        """
        return None

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` of the realised schedule, no reconfiguration."""
        return {"steps": schedule.num_steps, "reconfigurations": 0}

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> Any:
        """No part (a row with only the common fields)."""
        return None

    # -- symmetric schedules (collsim.core.symmetry); a kind without them expands every schedule --
    def symmetry_group(self, system, cyclic: bool = False) -> Any:
        """The translation group that maps the system onto itself, or None (the default).

        Parameters
        ----------
        system : System
            The system.
        cyclic : bool, optional
            Only translations that add to each of the system's coordinates as a whole, so that they
            commute with a ring step ``c -> c + 1`` in every coordinate (a kind whose coordinates
            split into several digits keeps those fixed); the same group where none split.

        Returns
        -------
        Translations or None
            A group (:class:`~collsim.core.symmetry.Translations`) whose every element keeps every
            link, channel and limit of the system, so that a schedule invariant under it uses
            the system alike at every node.
        """
        return None

    def binary_group(self, system) -> Any:
        """The group of XORs of the node ids' bits, where it maps the system, its links and its routes
        onto themselves (the recursive-halving and -doubling exchanges ``v -> v XOR 2^k`` commute with
        it), or None (the default).

        Returns
        -------
        Translations or None
            ``Translations((2,) * log2(N))``, adding digit by digit modulo 2, which this kind accepts.
        """
        return None

    def accepts_group(self, system, group) -> bool:
        """Whether ``group`` (a :class:`~collsim.core.symmetry.Translations`) maps the system onto itself
        and this kind checks and times schedules under it (default: none does)."""
        return False

    def translate_routes(self, system, group, routes, rows, elements):
        """Routes of representative ``rows`` moved by ``elements`` (kinds with a group write it)."""
        raise UnsupportedError(f"the {self.name} kind has no symmetric schedules")

    def check_orbit_resources(self, schedule) -> None:
        """:meth:`check_resources` of a symmetric schedule's expansion, on its representatives."""
        raise UnsupportedError(f"the {self.name} kind has no symmetric schedules")

    def orbit_schedule(self, schedule) -> Schedule:
        """A schedule whose :meth:`time`, :meth:`row_part` and facts are the expansion's.

        A kind whose time and row depend on each step's transfers only through maxima and sets
        that every orbit shares (an optical ring's step model) returns the representatives.
        """
        raise UnsupportedError(f"the {self.name} kind has no symmetric schedules")

    def times_steps_alone(self, system) -> bool:
        """Whether this kind checks and times every step of a schedule on its own, from that step's
        transfers apart from their chunk ids: then steps alike are checked and timed once
        (:class:`~collsim.core.repeated.RepeatedSteps`).  Default: no (an optical ring's step model
        charges reconfiguration between consecutive steps)."""
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
