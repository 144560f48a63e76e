"""The protocol every kind of system implements, and the lookup from a system to its model.

A *system model* owns everything that differs between kinds of system:
realising a logical schedule (routing plus channel assignment, reading route
hints), checking the schedule's resources, timing it with the kind's closed-form
model, bounding any schedule's time from below, and the kind's part of a result
row.  collsim has three: :class:`~collsim.kinds.optical_ring.OpticalRingModel`,
:class:`~collsim.kinds.optical_torus.OpticalTorusModel` and
:class:`~collsim.kinds.network.NetworkModel`.  Nothing outside them asks which
kind a system is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol

from ..core.collective import Collective
from ..core.errors import UnsupportedError
from ..core.schedule import LogicalSchedule, Schedule
from ..core.system import System


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
    (:meth:`OpticalPart.columns <collsim.kinds.optical_ring.OpticalPart.columns>`).

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


def format_number(value: float | None, digits: int = 4, *, strip: bool = True) -> str:
    """A number with at least ``digits`` significant digits, without an exponent from 1e-4 up (``"-"`` for None).

    Parameters
    ----------
    value : float or None
        The number.
    digits : int, optional
        Significant digits kept below ``10**digits`` (default 4); larger numbers keep every
        integer digit.
    strip : bool, optional
        Drop trailing zeros after the decimal point (default True; False keeps a column's
        digits aligned: ``28.0`` beside ``27.9``).

    Returns
    -------
    str
        Plain decimal text (below 1e-4 in magnitude, scientific): a table cell that reads the
        same at every width.

    Examples
    --------
    >>> format_number(1153.0), format_number(61.1432), format_number(0.000123456), format_number(12345678.9)
    ('1153', '61.14', '0.0001235', '12345679')
    >>> format_number(2.5e-12)   # below 1e-4: an exponent, still every digit
    '2.500e-12'
    >>> format_number(None), format_number(0), format_number(1023.5, 6), format_number(28.0, 3, strip=False)
    ('-', '0', '1023.5', '28.0')
    """
    if value is None:
        return "-"
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return f"{value:g}"
    if abs(value) < 1e-4:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if strip and "." in text else text


class SystemModel(Protocol):
    """What a kind of system provides (see the module docstring).

    Examples
    --------
    >>> from collsim import build
    >>> s = build("ring", "ring", "allgather", 1024, nodes=4)     # an electrical ring
    >>> model = model_for(s.system)
    >>> model.name, model.check_resources(s), model.time(s).model
    ('network', None, 'alpha-beta (schedule)')
    """

    name: str

    def realize(self, system: System, logical: LogicalSchedule, *, strategy: str | Callable = "first-fit",
                algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
        """Route and assign channels: a physical schedule."""

    def check_resources(self, schedule: Schedule) -> None:
        """Raise a :class:`~collsim.core.errors.ResourceError` for the first over-used resource."""

    def time(self, schedule: Schedule, spec=None) -> Timing:
        """The kind's closed-form time of a schedule (``spec`` may give the algorithm's own closed form)."""

    def answer_time_s(self, schedule: Schedule, closed: Timing) -> float:
        """The time a result reports as its answer, never below :meth:`lower_bound_s`.

        ``closed`` is :meth:`time`'s for the same schedule: the answer where the kind's closed form
        charges every resource the bound counts (optical rings), else a finer model's time (the flow
        simulator's on networks, whose alpha-beta estimate ignores per-hop latency and contention).
        """

    def lower_bound_s(self, system: System, collective: Collective) -> float:
        """No schedule of ``collective`` on ``system`` is faster under this kind's model."""

    def realised_facts(self, schedule: Schedule) -> dict[str, Any]:
        """Facts of the realised schedule that an algorithm's parameters may report."""

    def row_part(self, schedule: Schedule, spec, chosen: Mapping[str, Any]) -> Any:
        """The kind's fields of a result row (an ``OpticalPart`` or ``NetworkPart``)."""


_MODELS: dict[type, SystemModel] = {}


def register_model(system_class: type, model: SystemModel) -> None:
    """Record the model of a system class (and, through the class hierarchy, of its subclasses).

    Parameters
    ----------
    system_class : type
        A :class:`~collsim.core.system.System` subclass.
    model : SystemModel
        Its model.

    Returns
    -------
    None

    Examples
    --------
    >>> from collsim.core.network import Network
    >>> from collsim.systems.electrical import Star
    >>> model_for(Star(nodes=4)) is _MODELS[Network]   # registered once, for the base class
    True
    """
    _MODELS[system_class] = model


def model_for(system: System) -> SystemModel:
    """The model of a system: the nearest registered class in its class hierarchy.

    Parameters
    ----------
    system : System
        Any system.

    Returns
    -------
    SystemModel
        Its kind's model.

    Raises
    ------
    UnsupportedError
        For a system class no model covers.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> model_for(load_system("paper", nodes=8)).name, model_for(load_system("torus", nodes=16)).name
    ('optical-ring', 'network')
    """
    for cls in type(system).__mro__:
        if cls in _MODELS:
            return _MODELS[cls]
    raise UnsupportedError(f"no system model for {type(system).__name__} ({system.kind})")
