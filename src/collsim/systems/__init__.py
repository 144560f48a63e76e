"""Systems: presets, kinds, TOML files, and overrides.

A system name is a preset (``paper``, ``terarack``) or a kind (``optical-ring``,
``torus`` ...), matched without regard to case; anything else is read as a TOML
file with a ``[system]`` table.  :func:`kind_parameters` lists what each kind
takes, from its dataclass fields and its ``from_options`` signature (``collsim
systems`` prints it).

>>> from collsim.systems import load_system
>>> load_system("paper", nodes=16).wavelengths
64
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import InputError, ScheduleFormatError, UnknownNameError, did_you_mean, unknown_names
from ..core.reading import read_text
from ..core.system import SYSTEM_KINDS, System, system_from_description, system_kind
from ..core.schedule_file import what_it_is
from ..core.validate import is_integer
from .. import kinds  # noqa: F401  (every kind registers its systems: a name resolves to any of them)
from .options import SystemOptions

PRESETS = ("paper", "terarack", "dgx-16x8")
DEFAULT_NODES = 16
"""Nodes of a kind that has no ``from_options`` when none are given (``--system ring``)."""


def kind_names() -> list[str]:
    """Every registered system kind, alphabetically (``optical-ring`` and the network kinds)."""
    return sorted(k for k in SYSTEM_KINDS if k not in ("abstract", "network"))


def kind_parameters(cls: type[System]) -> dict[str, Any]:
    """The keyword parameters a kind accepts by name, with their defaults.

    They are the dataclass fields and the named parameters of the kind's
    ``from_options`` (which derives fields, e.g. ``dims`` -> ``nodes``); a
    default of ``dataclasses.MISSING`` marks a required field.  Where both give
    a default, ``from_options``'s wins (it is what a name alone builds).
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = dataclasses.MISSING
    build = getattr(cls, "from_options", None)
    if build is not None:
        for p in inspect.signature(build).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                out[p.name] = p.default if p.default is not p.empty else dataclasses.MISSING
    elif out.get("nodes", None) is dataclasses.MISSING:
        out["nodes"] = DEFAULT_NODES
    return out


def _read_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScheduleFormatError(f"{origin}: not valid TOML ({exc})") from exc
    table = data.get("system")
    if not isinstance(table, dict):
        raise ScheduleFormatError(f"{origin}: needs a [system] table")
    table = dict(table)
    if str(table.get("kind", "")).strip().lower() == "custom" and "links" in table and "link" not in table:
        table["link"] = table.pop("links")  # [[system.links]] reads as well as [[system.link]]
    return table


def preset_description(name: str) -> dict[str, Any]:
    """Return the description of a built-in preset."""
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise UnknownNameError(f"unknown preset {name!r}{did_you_mean(name, PRESETS)}; presets: {', '.join(PRESETS)}")
    text = resources.files(__package__).joinpath("presets", f"{key}.toml").read_text()
    return _read_toml(text, f"preset {name}")


def load_system(spec: str | os.PathLike | System, **overrides: Any) -> System:
    """Load a system from a preset name, a kind, a TOML file, or an instance, with overrides.

    Names (presets and kinds) are matched without regard to case; a kind alone
    (``torus``, ``optical-ring`` ...) gives that kind with its defaults
    (``collsim systems`` lists them).

    Parameters
    ----------
    spec : str, path, Mapping, System or SystemOptions
        A preset (``paper``, ``terarack``, ``dgx-16x8``), a system kind (``optical-ring``,
        ``ring``, ``line``, ``star``, ``mesh``, ``torus``, ``hypercube``, ``fat-tree``,
        ``mlfm``, ``custom``), path to a TOML file with a ``[system]`` table, such a
        table itself (:func:`system_table`), a System instance, or any of these with its
        options (:class:`~collsim.systems.options.SystemOptions`).
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
        Unknown name (with a "did you mean" hint) that is not a file either.
    ScheduleFormatError
        A TOML file that does not exist, cannot be read or is malformed.
    InputError
        Invalid or unknown parameters.

    Examples
    --------
    >>> ring = load_system("paper", nodes=8, wavelengths=4)
    >>> ring.topology, ring.nodes, ring.wavelengths
    ('optical-ring', 8, 4)
    >>> load_system("Torus", dims=(4, 4)).nodes
    16
    >>> load_system("optical-ring").nodes, load_system(ring, fibers=2).fibers
    (1024, 2)
    >>> load_system("toruss")
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnknownNameError: unknown system 'toruss'; did you mean torus? ...
    """
    if isinstance(spec, SystemOptions):  # a system with its options, stated once (the command line's)
        spec, overrides = spec.system, {**spec.overrides(), **{k: v for k, v in overrides.items() if v is not None}}
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(spec, System):
        desc = spec.describe()
        bad = set(overrides) - {f.name for f in dataclasses.fields(type(spec))}
        if bad:
            raise InputError(_no_parameter(type(spec), sorted(bad)))
        desc.update(read_units(overrides))
        return _from_description(desc)
    if isinstance(spec, Mapping):  # a [system] table as a TOML file holds it (system_table)
        return _load_table(dict(spec), "the [system] table", overrides)
    if not isinstance(spec, (str, os.PathLike)):
        shown = what_it_is(spec)
        raise InputError(f"a system is a name, a TOML file or a System, not {shown}")
    text = os.fspath(spec).strip() if isinstance(spec, os.PathLike) else spec.strip()
    if not text:
        raise InputError(f"the system name is empty; use one of {', '.join(system_names())} or a TOML file")
    key = text.lower()
    if key in PRESETS:
        desc = preset_description(key)
        return _from_options(system_kind(desc.pop("kind")), {**desc, **overrides})
    if key in kind_names():
        return _from_options(system_kind(key), overrides)
    desc, origin = _read_file(text)
    return _load_table(desc, origin, overrides)


def system_table(path: str | os.PathLike) -> dict[str, Any]:
    """The ``[system]`` table of a system TOML file (``name`` defaulting to the file's stem).

    What defines the system: ``load_system(system_table(path), **overrides)`` is
    ``load_system(path, **overrides)``, and sweeps key their points by it (docs/sweeps.md).
    """
    return _read_file(os.fspath(path).strip())[0]


def _load_table(desc: dict[str, Any], origin: str, overrides: dict[str, Any]) -> System:
    """A system from a file's ``[system]`` table (``origin`` names it in errors), with overrides."""
    desc = dict(desc)
    kind = desc.pop("kind", None)
    if kind is None:
        raise ScheduleFormatError(f"{origin}: the [system] table needs a kind (one of {', '.join(kind_names())})")
    try:
        cls = system_kind(kind, error=ScheduleFormatError)
    except ScheduleFormatError as exc:
        raise ScheduleFormatError(f"{origin}: {exc}") from None
    known = set(kind_parameters(cls))
    bad = sorted(set(desc) - known)
    if bad:  # a key the file should not have: a malformed file (overrides are checked as such below)
        raise ScheduleFormatError(f"{origin}: {_no_parameter(cls, bad, known)}")
    if set(overrides) - known:
        return _from_options(cls, overrides)  # raises, naming the override
    try:
        return _from_options(cls, {**desc, **overrides})
    except InputError as exc:
        raise InputError(f"{origin}: {exc}") from None


def _read_file(text: str) -> tuple[dict[str, Any], str]:
    """The ``[system]`` table of the TOML file ``text`` (with ``name`` defaulting to the file's stem)."""
    path = Path(text)
    if not path.exists():
        if path.suffix.lower() == ".toml" or os.sep in text or "/" in text:
            raise ScheduleFormatError(f"system file {text} does not exist")
        names = system_names()
        hint = did_you_mean(text, names)
        raise UnknownNameError(f"unknown system {text!r}" + (f"{hint} Known" if hint else "; known")
                               + f": {', '.join(names)}, or a TOML file (collsim systems lists them)")
    raw = read_text(path, error=ScheduleFormatError, name=f"system file {text}")  # no folder, device, socket
    desc = _read_toml(raw, str(path))
    desc.setdefault("name", path.stem)
    return desc, str(path)


def _no_parameter(cls, bad: list[str], known=None) -> str:
    known = sorted(known if known is not None else {f.name for f in dataclasses.fields(cls)})
    return f"{cls.topology} systems have no parameter " + unknown_names(bad, known)


def _from_description(desc: dict[str, Any]) -> System:
    try:
        return system_from_description(desc)
    except ScheduleFormatError as exc:
        cause = exc.__cause__
        if isinstance(cause, InputError):
            raise cause from None
        raise


def read_units(options: dict[str, Any]) -> dict[str, Any]:
    """Read the text values of a system's size, bandwidth and time fields by collsim's one unit rule.

    A field's name says its unit: ``*_bytes_per_s`` is a bandwidth (``"100Gb/s"``),
    ``*_bits_per_s`` a bit rate (``"40Gb/s"`` is 4*10^10), ``*_bytes`` a size (``"32B"``,
    ``"1KiB"``) and ``*_s`` a duration (``"500ns"``), read by :mod:`collsim.core.units` as
    the command line reads them (docs/units.md).  Numbers and other fields are unchanged.
    """
    from ..core.units import parse_bandwidth, parse_size, parse_time
    readers = (("_bytes_per_s", parse_bandwidth), ("_bits_per_s", lambda v: 8 * parse_bandwidth(v)),
               ("_bytes", parse_size), ("_s", parse_time))
    out = dict(options)
    for key, value in options.items():
        if not isinstance(value, str):
            continue
        for suffix, read in readers:
            if key.endswith(suffix):
                try:
                    out[key] = read(value)
                except InputError as exc:
                    raise InputError(f"{key}: {exc}") from None
                break
    return out


def _from_options(cls, options: dict[str, Any]) -> System:
    """Build a kind from keyword options (its ``from_options`` when it has one), refusing unknown keys."""
    options = read_units(options)
    known = set(kind_parameters(cls))
    bad = sorted(set(options) - known)
    if bad:
        raise InputError(_no_parameter(cls, bad, known))
    options.setdefault("name", cls.topology)
    if options.get("nodes") is not None and not is_integer(options["nodes"]):
        shown = ",".join(map(str, options["nodes"])) if isinstance(options["nodes"], tuple) else repr(options["nodes"])
        raise InputError(f"nodes must be an integer >= 2, got {shown}")
    build = getattr(cls, "from_options", None)
    try:
        if build is not None:
            return build(**options)
        options.setdefault("nodes", DEFAULT_NODES)
        return cls(**options)
    except TypeError as exc:  # a value of a type no check anticipated: name the parameters, not Python's words
        raise InputError(f"{cls.topology}: a parameter has the wrong type "
                         f"({', '.join(f'{k}={v!r}' for k, v in sorted(options.items()) if k != 'name')})") from exc


def system_names() -> list[str]:
    """Every name ``--system`` accepts besides a TOML file: the presets, then the kinds."""
    return [*PRESETS, *kind_names()]


__all__ = ["DEFAULT_NODES", "PRESETS", "kind_names", "kind_parameters",
           "load_system", "preset_description", "system_names", "system_table"]
