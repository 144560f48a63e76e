"""A sweep's point: one configuration (a dict), in the canonical form its store key follows.

A **point** is a dict: ``system`` (a preset, kind or TOML file), ``nodes``,
``wavelengths`` and ``fibers`` (optical rings), ``link_bandwidth`` and
``link_latency`` (networks; strings with units or numbers, docs/units.md),
``size_bytes`` (collsim's size), ``collective``, ``algorithm`` and ``params``
(the algorithm's parameters).  :func:`normalize_point` gives its canonical form, so
equal configurations written differently get one key
(:func:`~collsim.experiments.sweep.store.point_key`); a point's system is built from its
name, or from its system file's ``[system]`` table, with the point's overrides.
:mod:`collsim.experiments.sweep.grid` makes the points of a sweep file and
:mod:`collsim.experiments.sweep.run` runs them.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping

from ...algorithms import get_algorithm
from ...core.errors import CollsimError, InputError, ScheduleFormatError, did_you_mean
from ...core.collective import canonical_collective
from ...core.units import parse_bandwidth, parse_size, parse_time
from ...core.validate import is_integer
from ...systems import PRESETS, kind_names, load_system, system_table
from ...systems.options import SystemOptions
from .store import canonical_json

__all__ = ["POINT_KEYS", "normalize_point"]

POINT_KEYS = ("system", "system_config", "nodes", "wavelengths", "fibers", "link_bandwidth", "link_latency",
              "size_bytes", "collective", "algorithm", "params")
_OPTICAL = ("wavelengths", "fibers")
_LINKS = {"link_bandwidth": "link_bandwidth_bytes_per_s", "link_latency": "link_latency_s"}
_PLACED = ("root", "shift", "q")


def _unknown(what: str, name: str, choices: Iterable[str]) -> InputError:
    hint = did_you_mean(name, choices)
    return InputError(f"unknown {what} {name!r}{hint + ' Known' if hint else '; known'}: {', '.join(choices)}")


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not is_integer(value):
        raise InputError(f"{name} must be a whole number, not {value!r}")
    return int(value)


def _params(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"params must be a table of parameter names to values, not {value!r}")
    return {str(k): list(v) if isinstance(v, tuple) else v for k, v in sorted(value.items())}


def normalize_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """A point in its canonical form: names canonical, sizes in bytes, bandwidths in B/s, no None values.

    Equal configurations written differently (``"100Gb/s"`` and ``12.5e9``, ``"all-gather"``
    and ``"allgather"``) give the same dict, hence the same store key.  A system that is a
    TOML file adds ``system_config``, the file's ``[system]`` table (read now, from the
    current folder, unless the point has it): the key follows the file's content, so an
    edited file makes new points, and the point runs from that table, not from the file.
    """
    if not isinstance(point, Mapping):
        raise InputError(f"a point is a dict of {', '.join(POINT_KEYS)}, not {point!r}")
    bad = sorted(set(point) - set(POINT_KEYS))
    if bad:
        raise _unknown("point key", bad[0], POINT_KEYS)
    missing = [k for k in ("system", "size_bytes", "collective", "algorithm") if point.get(k) is None]
    if missing:
        raise InputError(f"a point needs {', '.join(missing)}")
    system = point["system"]
    system = os.fspath(system) if isinstance(system, os.PathLike) else str(system).strip()
    named = system.lower() in [*PRESETS, *kind_names()]
    out: dict[str, Any] = {"system": system.lower() if named else system,
                           "size_bytes": parse_size(point["size_bytes"]),
                           "collective": canonical_collective(point["collective"]),
                           "algorithm": get_algorithm(str(point["algorithm"])).name,
                           "params": _params(point.get("params") or {})}
    for key in ("nodes", *_OPTICAL):
        if point.get(key) is not None:
            out[key] = _count(key, point[key])
    if point.get("link_bandwidth") is not None:
        out["link_bandwidth"] = float(parse_bandwidth(point["link_bandwidth"]))
    if point.get("link_latency") is not None:
        out["link_latency"] = float(parse_time(point["link_latency"]))
    if not named:  # a TOML file: the point is its content, not its name
        table = point.get("system_config")
        if table is None:
            table = _table(system)
        elif not isinstance(table, Mapping) or "kind" not in table:
            raise InputError(f"system_config must be a system file's [system] table (with a kind), not {table!r}")
        out["system_config"] = json.loads(canonical_json(dict(table)))
    return dict(sorted(out.items()))


def _table(path: str | os.PathLike, shown: str | None = None) -> dict[str, Any]:
    """A system file's ``[system]`` table; a missing or malformed file is bad input."""
    try:
        return system_table(path)
    except ScheduleFormatError as exc:
        text = str(exc)
        if shown is not None:
            text = text.replace(os.fspath(path), shown)
        raise InputError(text) from None


def _options(system: Any, point: Mapping[str, Any]) -> SystemOptions:
    """``system`` (a name, a file's table) with a point's overrides, as one :class:`SystemOptions`."""
    return SystemOptions.of(system, **{k: point.get(k) for k in ("nodes", *_OPTICAL)},
                            **{_LINKS[k]: point[k] for k in _LINKS if point.get(k) is not None})


def _load(p: Mapping[str, Any]):
    """A normalised point's system: from its file's table (``system_config``) or its name, with overrides."""
    try:
        return load_system(_options(p.get("system_config") or p["system"], p))
    except CollsimError as exc:  # name the file, not "the [system] table"
        exc.args = (str(exc).replace("the [system] table", p["system"]),)
        raise

