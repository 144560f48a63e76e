"""The protocol every kind of system implements, and the lookup from a system to its model.

A *system model* owns everything that differs between kinds of system:
realising a logical schedule (routing plus channel assignment, reading route
hints), checking the schedule's resources, timing it with the kind's closed-form
model, bounding any schedule's time from below, and the kind's part of a result
row.  collsim has two: :class:`~collsim.kinds.optical_ring.OpticalRingModel` and
:class:`~collsim.kinds.network.NetworkModel`.  Nothing outside them asks which
kind a system is.
"""

from __future__ import annotations

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
