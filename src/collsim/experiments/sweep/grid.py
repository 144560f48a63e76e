"""Sweep files and their grids: a ``[sweep]`` table's lists, expanded into points.

:func:`expand_grid` makes the points of a ``[sweep]`` table (every combination of its
lists, each point normalised: :mod:`collsim.experiments.sweep.point`), leaving out with
a reason the combinations an algorithm cannot run; :func:`read_sweep` reads a sweep file
(TOML) and expands its table.  The grid's size is checked before any point is made
(:mod:`collsim.experiments.sweep.limits`).  docs/sweeps.md describes the file format.
"""

from __future__ import annotations

import itertools
import os
import tomllib
from typing import Any, Iterable, Mapping

from ...algorithms import REGISTRY, get_algorithm
from ...core.errors import CollsimError, InputError, ScheduleFormatError, UnsupportedError, did_you_mean
from ...core.reading import read_bytes
from ...core.collective import canonical_collective
from ...core.units import parse_bandwidth, parse_size, parse_time
from ...systems import PRESETS, kind_names, kind_parameters, load_system, preset_description
from ...core.system import system_kind
from ..compare import placement_params
from .store import canonical_json
from .limits import MAX_POINTS, _check_count
from .point import _LINKS, _PLACED, _count, _options, _table, _unknown, normalize_point

__all__ = ["GRID_KEYS", "Grid", "expand_grid", "read_sweep"]

# A [sweep] table's keys and the point key each fills (params is the [sweep.params] table).
GRID_KEYS = {"systems": "system", "nodes": "nodes", "wavelengths": "wavelengths", "fibers": "fibers",
             "link_bandwidths": "link_bandwidth", "link_latencies": "link_latency", "sizes": "size_bytes",
             "collectives": "collective", "algorithms": "algorithm", "params": "params"}


class Grid(list):
    """The points of a sweep (a list), with ``skipped``: why each left-out combination was left out."""

    def __init__(self, points: Iterable[dict] = (), skipped: list[str] | None = None) -> None:
        super().__init__(points)
        self.skipped = list(skipped or [])


def _check_spec(spec: Any) -> dict[str, list]:
    if not isinstance(spec, Mapping):
        raise InputError(f"a sweep is a table of lists ({', '.join(GRID_KEYS)}), not {spec!r}")
    for key, value in spec.items():
        if key not in GRID_KEYS:
            raise _unknown("[sweep] key", key, GRID_KEYS)
        if key == "params":
            if not isinstance(value, Mapping):
                raise InputError(f"[sweep.params] must be a table of lists (stripe = [1, 2]), not {value!r}")
            for name, values in value.items():
                if not isinstance(values, list) or not values:
                    raise InputError(f"[sweep.params] {name} must be a non-empty list, e.g. {name} = [{values!r}]")
        elif not isinstance(value, list) or not value:
            example = value if not isinstance(value, list) else '"..."'
            raise InputError(f"[sweep] {key} must be a non-empty list, e.g. {key} = [{example!r}]")
    for key in ("systems", "sizes"):
        if key not in spec:
            raise InputError(f"[sweep] needs {key} (a list)")
    return dict(spec)


def _fields(name: str, table: Mapping[str, Any] | None = None) -> set[str]:
    """The parameters of a system's kind (a preset, a kind, or a TOML file's ``[system]`` table)."""
    key = name.strip().lower()
    if key in PRESETS:
        cls = system_kind(preset_description(key)["kind"])
    elif key in kind_names():
        cls = system_kind(key)
    else:
        try:
            cls = system_kind(str((table or {}).get("kind", "")), error=ScheduleFormatError)
        except ScheduleFormatError as exc:
            raise InputError(f"system file {name}: {exc}") from None
    names = set(kind_parameters(cls))
    return names | {k for k, field in _LINKS.items() if field in names}



def _once(name: str, raw: list, values: list, repeats: list[str]) -> list:
    """``values`` (``raw`` parsed) without repeats, first occurrence first; a note per repeated value."""
    first: dict[Any, Any] = {}
    for r, v in zip(raw, values):
        if v in first:
            same = f"{r!r} more than once" if r == first[v] else f"{first[v]!r} and {r!r}, the same value"
            repeats.append(f"{name} lists {same}: its points run once")
        else:
            first[v] = r
    return list(first)


def expand_grid(spec: Mapping[str, Any], *, base: str | os.PathLike | None = None,  # noqa: C901
                max_points: int | None = None) -> Grid:
    """The points of a ``[sweep]`` table: every combination of its lists, in a fixed order.

    Optical keys (wavelengths, fibers) apply to optical systems, link keys to networks.
    An algorithm outside a system's or collective's scope, or that cannot build an
    instance (an odd N for NE), is left out with a reason in ``Grid.skipped`` (when no
    ``algorithms`` are given every registered algorithm in scope is tried, silently
    leaving out those out of scope).  A parameter goes to the algorithms that take it; for
    the others it is left out, and the duplicate points that makes are noted as skipped.
    """
    spec = _check_spec(spec)
    sizes = [parse_size(s) for s in spec["sizes"]]
    collectives = list(dict.fromkeys(canonical_collective(c) for c in spec.get("collectives", ["allgather"])))
    explicit = spec.get("algorithms")
    algorithms = [get_algorithm(str(a)).name for a in explicit] if explicit else sorted(REGISTRY)
    algorithms = list(dict.fromkeys(algorithms))
    grid_params = dict(spec.get("params", {}))
    dims = {k: spec.get(k, [None]) for k in ("nodes", "wavelengths", "fibers")}
    dims["link_bandwidth"] = [None if v is None else parse_bandwidth(v) for v in spec.get("link_bandwidths", [None])]
    dims["link_latency"] = [None if v is None else parse_time(v) for v in spec.get("link_latencies", [None])]
    for key in ("nodes", "wavelengths", "fibers"):
        dims[key] = [None if v is None else _count(key, v) for v in dims[key]]
    # A value given twice, or two ways ("1KiB" and "1024"), is one value: its points run once, said in a note.
    repeats = []
    sizes = _once("sizes", spec["sizes"], sizes, repeats)
    for key, raw in (("nodes", "nodes"), ("wavelengths", "wavelengths"), ("fibers", "fibers"),
                     ("link_bandwidth", "link_bandwidths"), ("link_latency", "link_latencies")):
        dims[key] = _once(raw, spec.get(raw, [None]), dims[key], repeats)
    points: list[dict] = []
    seen: set[str] = set()
    skipped: list[str] = list(repeats)
    notes: set[str] = set(repeats)

    def note(reason: str) -> None:
        if reason not in notes:
            notes.add(reason)
            skipped.append(reason)

    systems = []
    for system_name in spec["systems"]:
        system_name = str(system_name)
        table = None
        if system_name.strip().lower() not in (*PRESETS, *kind_names()):  # a file: read now, bad input if it fails
            where = system_name if base is None else os.path.join(os.fspath(base), system_name)
            table = _table(where)
        fields = _fields(system_name, table)
        try:
            default = load_system(table or system_name)  # its kind, for the scope of a system the overrides break
        except CollsimError:
            default = None
        used = [k for k in ("nodes", "wavelengths", "fibers", "link_bandwidth", "link_latency") if k in fields]
        systems.append((system_name, table, default, used))
    _check_count(spec, systems, dims, collectives, sizes, algorithms, bool(explicit), grid_params,
                 MAX_POINTS if max_points is None else max_points)
    for system_name, table, default, used in systems:
        for k in ("wavelengths", "fibers", "link_bandwidth", "link_latency"):
            if k not in used and dims[k] != [None]:
                note(f"{k} does not apply to {system_name}: left out of its points")
        for combo in itertools.product(*(dims[k] for k in used)):
            over = dict(zip(used, combo))
            try:
                system = load_system(_options(table or system_name, over))
            except CollsimError:
                system = None  # every point of it records the error
            where = f"{system_name}" + (f", N={system.nodes}" if system is not None else "")
            for coll, size, algo in itertools.product(collectives, sizes, algorithms):
                spec_a = get_algorithm(algo)
                if system is None and default is not None and not spec_a.supports(default, coll):
                    if explicit:
                        note(f"{algo} does not run {coll} on {default.topology} systems ({where})")
                    continue
                if system is not None:
                    try:
                        spec_a.check(system, coll)
                    except UnsupportedError as exc:
                        if explicit or spec_a.supports(system, coll):
                            note(f"{exc} ({where})")
                        continue
                taken = {k: v for k, v in grid_params.items() if k in spec_a.params or k in _PLACED}
                for k in sorted(set(grid_params) - set(taken)):
                    note(f"{algo} takes no parameter {k}: its points run without it")
                for values in itertools.product(*taken.values()):
                    params = dict(zip(taken, values))
                    try:
                        params = placement_params(algo, coll, params, nodes=None if system is None else system.nodes)
                    except (UnsupportedError, InputError) as exc:
                        note(f"{exc} ({where})")
                        continue
                    point = normalize_point({"system": system_name, "system_config": table, **over,
                                             "size_bytes": size, "collective": coll, "algorithm": algo,
                                             "params": params})
                    text = canonical_json(point)
                    if text not in seen:
                        seen.add(text)
                        points.append(point)
    return Grid(points, skipped)


def read_sweep(path: str | os.PathLike, *, max_points: int | None = None) -> Grid:
    """Read a sweep file (TOML with a ``[sweep]`` table) and expand it (:func:`expand_grid`).

    System files it names by a relative path are read from the sweep file's folder.
    """
    path = os.fspath(path)
    data = read_bytes(path, name=f"sweep file {path}")  # a regular file, never a device (core.files)
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    other = sorted(set(doc) - {"sweep"})
    if other:
        hint = did_you_mean(other[0], ["sweep"])
        raise InputError(f"{path}: unknown table or key {other[0]!r}{hint or ';'} a sweep file has one [sweep] table")
    if "sweep" not in doc:
        raise InputError(f"{path}: no [sweep] table")
    try:
        return expand_grid(doc["sweep"], base=os.path.dirname(path), max_points=max_points)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None

