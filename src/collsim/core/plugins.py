"""Where kinds of system plug in: the registry of system models, their capabilities and route formats.

A *kind* (an optical ring, an electrical network, ...) is one registered object, its *model*
(:class:`collsim.kinds.base.KindModel`), that owns everything about it.  The models live in
:mod:`collsim.kinds`, above the layers that need to ask about them (algorithms asking which kinds
they run on, the flow simulator and exporters asking what a kind supports, the schedule reader
asking how a kind's routes are written).  So the registry lives here, at the bottom, and the kinds
register themselves into it: core names no kind, and a new kind is one module in ``kinds/``.

:func:`discover` loads the plug-ins that the installed packages declare under the entry-point group
``collsim.system_kinds`` (collsim's own kinds: ``collsim.kinds``, in ``pyproject.toml``) the first time a
lookup misses, so no module below the kinds imports them and a kind outside collsim plugs in the
same way.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from dataclasses import dataclass
from typing import Any, Callable

from .errors import UnsupportedError

CAPABILITIES = frozenset({"flow-simulation", "msccl", "simgrid", "smpi-replay", "trace-network",
                          "trace-lightpaths", "physical-layer", "mpi"})
"""What a kind may support (:attr:`collsim.kinds.base.KindModel.capabilities`):

``flow-simulation`` (:func:`collsim.sim.simulate`), ``msccl`` (MSCCL XML export), ``simgrid`` (SimGrid
platform and deployment), ``smpi-replay`` (SimGrid SMPI time-independent traces), ``trace-network``
(Chrome trace of link transfers), ``trace-lightpaths`` (Chrome trace of lightpaths), ``physical-layer``
(power budget and BER of lightpaths) and ``mpi`` (running the schedule over MPI)."""



@dataclass(frozen=True)
class RouteFormat:
    """How a kind's routes are written in a schedule file and read back.

    Parameters
    ----------
    route_class : type
        The kind's route class (a :class:`~collsim.core.route_base.Routes` subclass).
    reader : callable
        ``reader(system)`` -> an object with ``KEYS`` (the route fields a transfer may have),
        ``add(transfer, step, t, where)`` per transfer and ``finish(where_of)`` -> the routes part.
    writer : callable
        ``writer(schedule, t, with_path)`` -> transfer ``t``'s route fields as a dict
        (``with_path`` False asks for the compact form of a very large schedule).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> fmt = route_format_for(load_system("paper", nodes=8))
    >>> fmt.route_class.__name__, sorted(fmt.reader(load_system("paper", nodes=8)).KEYS)[:3]
    ('RingRoutes', ['band', 'dir', 'fiber'])
    """

    route_class: type
    reader: Callable[[Any], Any]
    writer: Callable[[Any, int, bool], dict]


ENTRY_POINTS = "collsim.system_kinds"
"""The entry-point group whose modules register kinds (:func:`discover`)."""

_MODELS: dict[type, Any] = {}
_ROUTE_FORMATS: dict[type, Any] = {}
_DISCOVERED: list[bool] = []
_LISTED: dict[int, list[Any]] = {}  # len(_MODELS) -> models(): rebuilt only when a kind registers


def register_model(system_class: type, model: Any) -> None:
    """Record the model of a system class (and, through the class hierarchy, of its subclasses).

    Parameters
    ----------
    system_class : type
        A :class:`~collsim.core.system.System` subclass.
    model : KindModel
        Its model (:class:`collsim.kinds.base.KindModel`).

    Returns
    -------
    None

    Raises
    ------
    InputError
        If the model declares a capability outside :data:`CAPABILITIES`.

    Examples
    --------
    >>> from collsim.kinds.network.network import Network
    >>> from collsim.kinds.network.electrical import Star
    >>> model_for(Star(nodes=4)) is _MODELS[Network]   # registered once, for the base class
    True
    """
    from .errors import InputError
    unknown = set(getattr(model, "capabilities", ())) - CAPABILITIES
    if unknown:
        raise InputError(f"{getattr(model, 'name', model)!r} declares unknown capabilities {sorted(unknown)}; "
                         f"known: {', '.join(sorted(CAPABILITIES))}")
    _MODELS[system_class] = model
    _LISTED.clear()
    fmt = getattr(model, "route_format", None)
    if fmt is not None:
        _ROUTE_FORMATS[system_class] = fmt


def discover() -> None:
    """Load the plug-ins of entry-point group :data:`ENTRY_POINTS` once, registering every kind.

    Lookups by name or class (:func:`model_for`, :func:`collsim.core.system.system_kind`) call this
    on a miss, so that any public function works as the first call in a fresh interpreter
    (``collsim.load`` of a file names its kind).  collsim's own kinds are the package
    :mod:`collsim.kinds`, declared in ``pyproject.toml``; the package metadata, not an import,
    links the two, as for any plug-in.

    Returns
    -------
    None
        The kinds are registered (:func:`register_model`, :data:`collsim.core.system.SYSTEM_KINDS`).

    Examples
    --------
    >>> discover()
    >>> from collsim.core.system import SYSTEM_KINDS
    >>> {"ring", "optical-ring", "ocs"} <= set(SYSTEM_KINDS)
    True
    """
    if not _DISCOVERED:
        _DISCOVERED.append(True)
        for plugin in sorted(entry_points(group=ENTRY_POINTS), key=lambda ep: ep.name):
            plugin.load()      # the plug-in registers its kinds on import (register_model)


def _nearest(table: dict[type, Any], system: Any) -> Any:
    for cls in (system if isinstance(system, type) else type(system)).__mro__:
        if cls in table:
            return table[cls]
    return None


def model_for(system: Any) -> Any:
    """The model of a system: the nearest registered class in its class hierarchy.

    Parameters
    ----------
    system : System
        Any system, or a system class.

    Returns
    -------
    KindModel
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
    found = _nearest(_MODELS, system)
    if found is None:
        discover()
        found = _nearest(_MODELS, system)
    if found is None:
        raise UnsupportedError(f"no system model for {type(system).__name__} ({getattr(system, 'topology', '?')}); "
                               f"no installed plug-in of entry-point group {ENTRY_POINTS!r} registers one "
                               f"(is collsim installed? pip install -e .)")
    return found


def models() -> list[Any]:
    """Every registered model, once each, in registration order.

    Returns
    -------
    list of KindModel
        The kinds collsim knows.

    Examples
    --------
    >>> names = [m.name for m in models()]
    >>> {"optical-ring", "optical-torus", "network"} <= set(names)
    True
    """
    discover()
    key = len(_MODELS)
    if key not in _LISTED:
        _LISTED.clear()
        _LISTED[key] = list({id(m): m for m in _MODELS.values()}.values())
    return list(_LISTED[key])


def supports(system: Any, capability: str) -> bool:
    """Whether a system's kind declares a capability.

    Parameters
    ----------
    system : System
        Any system.
    capability : str
        One of :data:`CAPABILITIES`.

    Returns
    -------
    bool
        True when the kind's model lists it.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> supports(load_system("torus", nodes=16), "flow-simulation"), supports(load_system("paper", nodes=8), "msccl")
    (True, False)
    """
    if capability not in CAPABILITIES:
        raise UnsupportedError(f"unknown capability {capability!r}; known: {', '.join(sorted(CAPABILITIES))}")
    return capability in model_for(system).capabilities


def require(system: Any, capability: str, what: str) -> None:
    """Refuse, with one message for every tool, what a system's kind does not support.

    Parameters
    ----------
    system : System
        The system the tool was given.
    capability : str
        One of :data:`CAPABILITIES`.
    what : str
        What was asked, for the message (``"MSCCL export"``).

    Returns
    -------
    None

    Raises
    ------
    UnsupportedError
        Naming the system's kind and the kinds that do support it.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> require(load_system("torus", nodes=16), "msccl", "MSCCL export")
    >>> require(load_system("paper", nodes=8), "msccl", "MSCCL export")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnsupportedError: MSCCL export is not supported on optical-ring systems (paper); it is on: ...network...
    """
    if supports(system, capability):
        return
    able = sorted(m.name for m in models() if capability in m.capabilities)
    raise UnsupportedError(f"{what} is not supported on {model_for(system).name} systems ({system.name}); "
                           f"it is on: {', '.join(able) or 'no kind'}")


def route_format_for(system: Any) -> RouteFormat:
    """The route format of a system's kind (the nearest registered class in its hierarchy).

    Parameters
    ----------
    system : System
        Any system.

    Returns
    -------
    RouteFormat
        Its kind's :attr:`~collsim.kinds.base.KindModel.route_format`.

    Raises
    ------
    UnsupportedError
        If its kind registered none.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> route_format_for(load_system("torus", nodes=16)).route_class.__name__
    'LinkRoutes'
    """
    found = _nearest(_ROUTE_FORMATS, system)
    if found is None:
        model = model_for(system)  # discovers the kinds, or raises for a system no kind covers
        found = _nearest(_ROUTE_FORMATS, system)
        if found is None:
            raise UnsupportedError(f"the {model.name} kind registers no route format: its schedules cannot be "
                                   "written to or read from a file")
    return found
