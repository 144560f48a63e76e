"""The system concept shared by every topology.

A system is a frozen description of the hardware (nodes, links, channels,
rates).  Routing, wavelength assignment, verification and cost models read
it; none of them mutates it.  Each kind registers itself under a ``kind``
string so that a schedule file can embed its system and be read back.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

from .errors import InputError, ScheduleFormatError, UnknownNameError, did_you_mean, unknown_names
from .validate import is_integer, node_count

SYSTEM_KINDS: dict[str, type["System"]] = {}
MAX_NODES = 1 << 40
"""Largest node count a system may have (about 1.1e12; far beyond any memory collsim can use)."""


def register_system_kind(cls: type["System"]) -> type["System"]:
    """Class decorator recording a system kind for (de)serialisation.

    Parameters
    ----------
    cls : type
        A :class:`System` subclass with a ``kind`` class attribute.

    Returns
    -------
    type
        ``cls`` unchanged.

    Examples
    --------
    >>> from collsim.kinds.network.electrical import Ring
    >>> SYSTEM_KINDS["ring"] is Ring        # Ring is decorated with register_system_kind
    True
    """
    SYSTEM_KINDS[cls.topology] = cls
    return cls


@dataclass(frozen=True)
class System:
    """Base class of all systems.

    Parameters
    ----------
    nodes : int
        Number of end nodes (ranks).
    name : str
        Preset or user-given name, reported in results.

    Notes
    -----
    ``topology`` names the class (``"torus"``; system descriptions, presets and TOML files give it as
    ``kind``); the model that owns its behaviour is found by :func:`collsim.core.plugins.model_for`
    (:mod:`collsim.kinds`), whose ``name`` is the model (``"network"``).  Algorithms run on a system
    whose model accepts one of their ``systems=`` tags or whose topology they name.

    Examples
    --------
    >>> s = System(nodes=8, name="toy")
    >>> s.topology, s.describe()
    ('abstract', {'kind': 'abstract', 'nodes': 8, 'name': 'toy'})
    """

    topology: ClassVar[str] = "abstract"
    packet_bytes = 1  # the unit transfers are padded to; not a field: optical systems' packet_bytes field replaces it

    nodes: int
    name: str = "custom"

    def __post_init__(self) -> None:
        if not is_integer(self.nodes):
            raise InputError(f"nodes must be an integer >= 2, got {self.nodes!r}")
        if int(self.nodes) > MAX_NODES:
            raise InputError(f"nodes must be at most 2**40 = {MAX_NODES}, got {int(self.nodes)}")
        object.__setattr__(self, "nodes", node_count(self.nodes, owner="a system"))
        if not isinstance(self.name, str):
            raise InputError(f"name must be a string, got {self.name!r}")

    def describe(self) -> dict[str, Any]:
        """Return a JSON-able description that :func:`system_from_description` reads back."""
        out: dict[str, Any] = {"kind": self.topology}
        for f in fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    def link_name(self, link: int) -> str:
        """Human-readable name of directed link ``link``."""
        return f"link {link}"

    def check_tables(self) -> None:
        """Refuse, before anything is built, tables of this system that would not fit in memory.

        Nothing here; a network checks its link table from its closed-form link count
        (:meth:`collsim.kinds.network.network.Network.check_tables`).  Commands call it with the
        collective's own floor before any algorithm's checks run
        (:func:`collsim.algorithms.placement.check_instance`).
        """

    def bound_memory_bytes(self) -> int:
        """Memory the lower bound of this system holds beyond the collective's own arrays (0 here).

        Topologies whose bound builds large arrays say so (a ring's or a line's N - 1 arcs of
        N vertices: :meth:`collsim.kinds.network.network.Network.cut_masks`); sweeps budget memory with it.
        """
        return 0


def system_from_description(desc: dict[str, Any]) -> System:
    """Rebuild a system from :meth:`System.describe` output.

    Parameters
    ----------
    desc : dict
        Mapping with a ``kind`` key and the system's fields.

    Returns
    -------
    System
        The rebuilt system.

    Raises
    ------
    ScheduleFormatError
        If the kind is unknown or a field is missing or has the wrong type.

    Examples
    --------
    >>> from collsim.kinds.optical_ring.system import OpticalRing
    >>> ring = OpticalRing(nodes=8, wavelengths=4)
    >>> system_from_description(ring.describe()) == ring
    True
    >>> system_from_description({"kind": "torus", "dims": [4, 4]})
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: torus system description lacks nodes
    """
    if not isinstance(desc, dict) or "kind" not in desc:
        raise ScheduleFormatError("system description must be an object with a 'kind'")
    cls = system_kind(desc["kind"], error=ScheduleFormatError)
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(desc) - names - {"kind"})
    if unknown:
        raise ScheduleFormatError(f"{cls.topology} systems have no field(s) " + unknown_names(unknown, names))
    missing = [f.name for f in fields(cls)
               if f.default is MISSING and f.default_factory is MISSING and f.name not in desc]
    if missing:
        raise ScheduleFormatError(f"{cls.topology} system description lacks {', '.join(missing)}")
    try:
        return cls(**{k: v for k, v in desc.items() if k != "kind"})
    except InputError as exc:
        raise ScheduleFormatError(f"bad system description: {exc}") from exc
    except TypeError as exc:  # a value of a type no check anticipated: name the fields, not Python's words
        raise ScheduleFormatError(f"bad {cls.topology} system description: a field has the wrong type "
                                  f"({', '.join(sorted(k for k in desc if k != 'kind'))})") from exc


def system_kind(kind: Any, *, error: type[Exception] = UnknownNameError) -> type[System]:
    """The registered class of a system kind, matched without regard to case.

    Parameters
    ----------
    kind : str
        A kind such as ``"torus"``, ``"Fat-Tree"`` or ``"optical-ring"``.
    error : type, optional
        Exception class raised for an unknown kind (default :class:`UnknownNameError`).

    Returns
    -------
    type
        The :class:`System` subclass.

    Raises
    ------
    UnknownNameError
        (or ``error``) for an unknown kind, with a "did you mean" hint.

    Examples
    --------
    >>> system_kind("Torus").__name__
    'Torus'
    >>> system_kind("toruss")
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnknownNameError: unknown system kind 'toruss'; did you mean torus? Known: ...
    """
    if not isinstance(kind, str) or kind.strip().lower() not in SYSTEM_KINDS:
        from .plugins import discover  # a name not registered yet: load the kinds first (a fresh interpreter)
        discover()
    kinds = {k for k, c in SYSTEM_KINDS.items() if k not in ("abstract", "network")}
    if not isinstance(kind, str):
        raise error(f"a system kind is a name (one of {', '.join(sorted(kinds))}), got {kind!r}")
    key = kind.strip().lower()
    if key in kinds:
        return SYSTEM_KINDS[key]
    hint = did_you_mean(kind, kinds)
    raise error(f"unknown system kind {kind!r}" + (f"{hint} Known" if hint else "; known") + f": {', '.join(sorted(kinds))}")
