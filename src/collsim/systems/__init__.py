"""Systems: presets, TOML files, and overrides.

>>> from collsim.systems import load_system
>>> load_system("paper", nodes=16).wavelengths
64
"""

from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.errors import InputError, ScheduleFormatError, UnknownNameError
from ..core.system import SYSTEM_KINDS, System, system_from_description
from . import custom, electrical, fat_tree, hypercube, mesh_torus, mlfm  # noqa: F401  (register the network kinds)
from .optical_ring import OpticalRing

PRESETS = ("paper", "terarack")


def _read_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScheduleFormatError(f"{origin}: not valid TOML ({exc})") from exc
    table = data.get("system")
    if not isinstance(table, dict):
        raise ScheduleFormatError(f"{origin}: needs a [system] table")
    table = dict(table)
    if table.get("kind") == "custom" and "links" in table and "link" not in table:
        table["link"] = table.pop("links")  # [[system.links]] reads as well as [[system.link]]
    return table


def preset_description(name: str) -> dict[str, Any]:
    """Return the description of a built-in preset.

    Parameters
    ----------
    name : str
        ``"paper"`` or ``"terarack"``.

    Returns
    -------
    dict
        The preset's fields, including ``kind``.

    Raises
    ------
    UnknownNameError
        If there is no such preset.

    Examples
    --------
    >>> d = preset_description("terarack")
    >>> d["kind"], d["nodes"], d["wavelengths"], d["fibers"]
    ('optical-ring', 1024, 64, 2)
    """
    if name not in PRESETS:
        raise UnknownNameError(f"unknown system {name!r}; presets: {', '.join(PRESETS)}, or a TOML file")
    text = resources.files(__package__).joinpath("presets", f"{name}.toml").read_text()
    return _read_toml(text, f"preset {name}")


def load_system(spec: str | System, **overrides: Any) -> System:
    """Load a system from a preset name, a TOML file, or an instance, with overrides.

    Parameters
    ----------
    spec : str or System
        Optical preset (``paper``, ``terarack``), an electrical network kind
        (``ring``, ``line``, ``star``, ``mesh``, ``torus``, ``hypercube``, ``fat-tree``...),
        path to a TOML file with a ``[system]`` table, or a System instance.
    **overrides
        Field values to replace (``nodes=``, ``wavelengths=``, ``fibers=`` ...);
        None values are ignored.

    Returns
    -------
    System
        The system.

    Raises
    ------
    UnknownNameError
        Unknown preset and no such file.
    ScheduleFormatError
        Malformed TOML.
    InputError
        Invalid parameter values.

    Examples
    --------
    >>> ring = load_system("paper", nodes=8, wavelengths=4)
    >>> ring.kind, ring.nodes, ring.wavelengths
    ('optical-ring', 8, 4)
    >>> load_system("torus", dims=(4, 4)).nodes
    16
    >>> load_system(ring, fibers=2).fibers
    2
    """
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(spec, System):
        desc = spec.describe()
    elif str(spec) in SYSTEM_KINDS and SYSTEM_KINDS[str(spec)].family == "network":
        return _network_from_options(SYSTEM_KINDS[str(spec)], overrides)
    elif str(spec) in PRESETS:
        desc = preset_description(str(spec))
    else:
        path = Path(str(spec))
        if not path.is_file():
            raise UnknownNameError(f"unknown system {spec!r}; presets: {', '.join(PRESETS)}, or a TOML file")
        try:
            desc = _read_toml(path.read_text(), str(path))
        except UnicodeDecodeError as exc:
            raise ScheduleFormatError(f"{path}: not a text file") from exc
        desc.setdefault("name", path.stem)
    cls = SYSTEM_KINDS.get(desc.get("kind", ""))
    if cls is None:
        raise ScheduleFormatError(f"unknown system kind {desc.get('kind')!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    bad = set(overrides) - names
    if bad:
        raise InputError(f"{cls.kind} systems have no parameter {', '.join(sorted(bad))}")
    desc.update(overrides)
    try:
        return system_from_description(desc)
    except ScheduleFormatError as exc:
        cause = exc.__cause__
        if isinstance(cause, InputError):
            raise cause from None
        raise


def _network_from_options(cls, options: dict[str, Any]) -> System:
    """Build a network kind from CLI-style options (``from_options`` when the kind has one)."""
    build = getattr(cls, "from_options", None)
    options.setdefault("name", cls.kind)
    try:
        if build is not None:
            return build(**options)
        options.setdefault("nodes", 16)
        return cls(**options)
    except TypeError as exc:
        import re
        m = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if m:
            raise InputError(f"{cls.kind} systems have no parameter {m.group(1)}") from None
        raise InputError(f"{cls.kind}: {exc}") from None


def system_names() -> list[str]:
    """Optical presets and every registered network kind, for help texts.

    Returns
    -------
    list of str
        The presets, then the network kinds in alphabetical order.

    Examples
    --------
    >>> system_names()
    ['paper', 'terarack', 'custom', 'fat-tree', 'hypercube', 'line', 'mesh', 'mlfm', 'ring', 'star', 'torus']
    """
    return list(PRESETS) + sorted(k for k, c in SYSTEM_KINDS.items() if c.family == "network" and k != "network")


__all__ = ["OpticalRing", "PRESETS", "load_system", "preset_description", "system_names"]
