"""The system concept shared by every topology.

A system is a frozen description of the hardware (nodes, links, channels,
rates).  Routing, wavelength assignment, verification and cost models read
it; none of them mutates it.  Each kind registers itself under a ``kind``
string so that a schedule file can embed its system and be read back.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from .errors import InputError, ScheduleFormatError
from .validate import node_count

SYSTEM_KINDS: dict[str, type["System"]] = {}


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
    >>> from collsim.systems.electrical import Ring
    >>> SYSTEM_KINDS["ring"] is Ring        # Ring is decorated with register_system_kind
    True
    """
    SYSTEM_KINDS[cls.kind] = cls
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
    ``kind`` names the class (``"torus"``); ``family`` the model that owns its
    behaviour (``"optical-ring"`` or ``"network"``, :mod:`collsim.kinds`), which
    algorithms name when they run on every system of a family.

    Examples
    --------
    >>> s = System(nodes=8, name="toy")
    >>> s.kind, s.describe()
    ('abstract', {'kind': 'abstract', 'nodes': 8, 'name': 'toy'})
    """

    kind: ClassVar[str] = "abstract"
    family: ClassVar[str] = "abstract"

    nodes: int
    name: str = "custom"

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", node_count(self.nodes, owner="a system"))

    def describe(self) -> dict[str, Any]:
        """Return a JSON-able description that :func:`system_from_description` reads back."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    def link_name(self, link: int) -> str:
        """Human-readable name of directed link ``link``."""
        return f"link {link}"


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
    >>> from collsim.systems.optical_ring import OpticalRing
    >>> ring = OpticalRing(nodes=8, wavelengths=4)
    >>> system_from_description(ring.describe()) == ring
    True
    >>> system_from_description({"kind": "moebius", "nodes": 4})
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: unknown system kind 'moebius'
    """
    if not isinstance(desc, dict) or "kind" not in desc:
        raise ScheduleFormatError("system description must be an object with a 'kind'")
    cls = SYSTEM_KINDS.get(desc["kind"])
    if cls is None:
        raise ScheduleFormatError(f"unknown system kind {desc['kind']!r}")
    names = {f.name for f in fields(cls)}
    unknown = set(desc) - names - {"kind"}
    if unknown:
        raise ScheduleFormatError(f"unknown system field(s): {', '.join(sorted(unknown))}")
    try:
        return cls(**{k: v for k, v in desc.items() if k != "kind"})
    except InputError as exc:
        raise ScheduleFormatError(f"bad system description: {exc}") from exc
    except TypeError as exc:
        raise ScheduleFormatError(f"bad system description: {exc}") from exc
