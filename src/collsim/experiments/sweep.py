"""Sweeps: a grid of points, each built, verified and timed once, into a results store.

A **point** is a dict: ``system`` (a preset, kind or TOML file), ``nodes``,
``wavelengths`` and ``fibers`` (optical rings), ``link_bandwidth`` and
``link_latency`` (networks; strings with units or numbers, docs/units.md),
``size_bytes`` (collsim's size), ``collective``, ``algorithm`` and ``params``
(the algorithm's parameters).  :func:`run_point` runs one point through the
pipeline (closed forms, and on networks the flow simulator); :func:`expand_grid`
makes the points of a ``[sweep]`` table; :func:`run_sweep` runs those not yet in a
:class:`~collsim.experiments.store.Store`.  docs/sweeps.md describes the file format.
"""

from __future__ import annotations

import itertools
import json
import os
import tomllib
from typing import Any, Callable, Iterable, Mapping

from ..algorithms import REGISTRY, get_algorithm
from ..core.errors import (CollsimError, InputError, ScheduleFormatError, UnknownNameError, UnsupportedError,
                           did_you_mean)
from ..core.reading import read_bytes
from ..core.collective import canonical_collective
from ..core.units import parse_bandwidth, parse_size, parse_time
from ..core.validate import is_integer
from ..systems import PRESETS, kind_names, kind_parameters, load_system, preset_description, system_table
from ..core.system import system_kind
from .compare import placement_params, run_one
from .store import Store, canonical_json, point_key

__all__ = ["GRID_KEYS", "MAX_POINTS", "POINT_KEYS", "Grid", "check_sweep", "expand_grid", "normalize_point",
           "point_memory_bytes", "read_sweep", "run_point", "run_sweep"]

POINT_KEYS = ("system", "system_config", "nodes", "wavelengths", "fibers", "link_bandwidth", "link_latency",
              "size_bytes", "collective", "algorithm", "params")
# A [sweep] table's keys and the point key each fills (params is the [sweep.params] table).
GRID_KEYS = {"systems": "system", "nodes": "nodes", "wavelengths": "wavelengths", "fibers": "fibers",
             "link_bandwidths": "link_bandwidth", "link_latencies": "link_latency", "sizes": "size_bytes",
             "collectives": "collective", "algorithms": "algorithm", "params": "params"}
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

    Parameters
    ----------
    point : Mapping
        Keys of :data:`POINT_KEYS` (``system``, ``size_bytes``, ``collective`` and ``algorithm``
        are required).

    Returns
    -------
    dict
        The canonical point.

    Raises
    ------
    InputError
        For an unknown key, a missing one or a bad value, or a system file that does not
        exist or is not a system file.

    Examples
    --------
    >>> normalize_point({"system": "Ring", "nodes": 8, "size_bytes": "1KiB", "collective": "all-gather",
    ...                  "algorithm": "ring", "link_bandwidth": "100Gb/s", "wavelengths": None})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'algorithm': 'ring', 'collective': 'allgather', 'link_bandwidth': 12500000000.0, 'nodes': 8,
     'params': {}, 'size_bytes': 1024, 'system': 'ring'}
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


def _overrides(point: Mapping[str, Any]) -> dict[str, Any]:
    over = {k: point.get(k) for k in ("nodes", *_OPTICAL)}
    over.update({_LINKS[k]: point[k] for k in _LINKS if point.get(k) is not None})
    return over


def _load(p: Mapping[str, Any]):
    """A normalised point's system: from its file's table (``system_config``) or its name, with overrides."""
    try:
        return load_system(p.get("system_config") or p["system"], **_overrides(p))
    except CollsimError as exc:  # name the file, not "the [system] table"
        exc.args = (str(exc).replace("the [system] table", p["system"]),)
        raise


def run_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """Build, verify and time one point; never raises.

    Parameters
    ----------
    point : Mapping
        The point (normalised or not: :func:`normalize_point`).

    Returns
    -------
    dict
        The row (:meth:`collsim.experiments.compare.Result.to_json`; on networks with the
        flow simulator's ``simulated_time_s``; ``error`` names a verification failure), or an
        error record ``{"error": message, "error_type": class name}`` when the point cannot run.

    Examples
    --------
    >>> row = run_point({"system": "ring", "nodes": 4, "size_bytes": 1024, "collective": "allgather",
    ...                  "algorithm": "ring"})
    >>> row["slots"], row["verified"], row["simulated_time_s"] > 0
    (3, True, True)
    >>> run_point({"system": "ring", "nodes": 5, "size_bytes": 1024, "collective": "allgather",
    ...            "algorithm": "ne"})["error_type"]
    'UnsupportedError'
    """
    try:
        p = normalize_point(point)
        system = _load(p)
        params = placement_params(p["algorithm"], p["collective"], p["params"])
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        return run_one(p["algorithm"], system, p["collective"], p["size_bytes"], **params).to_json()
    except CollsimError as exc:
        return {"error": str(exc), "error_type": type(exc).__name__}
    except Exception as exc:  # noqa: BLE001 - a sweep records every failure and goes on
        return {"error": f"internal error: {type(exc).__name__}: {exc}", "error_type": type(exc).__name__}


class Grid(list):
    """The points of a sweep (a list), with ``skipped``: why each left-out combination was left out.

    Parameters
    ----------
    points : iterable of dict, optional
        The points.
    skipped : list of str, optional
        One reason per left-out combination (or group of them).

    Examples
    --------
    >>> g = Grid([{"system": "ring"}], ["ne needs an even number of nodes"])
    >>> len(g), g.skipped
    (1, ['ne needs an even number of nodes'])
    """

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


MAX_POINTS = 100_000
"""The most points one sweep may have (``collsim sweep --max-points``): a point takes milliseconds
to minutes, so a bigger grid would run for hours or days before it finished."""


def _check_count(spec: Mapping[str, Any], systems: list, dims: dict, collectives: list, sizes: list,
                 algorithms: list, explicit: bool, grid_params: dict, max_points: int) -> int:
    """The grid's points counted before any is made (an upper bound); refused above ``max_points``."""
    total = 0
    for _, _, default, used in systems:
        combos = 1
        for k in used:
            combos *= len(dims[k])
        per = 0
        for coll in collectives:
            for algo in algorithms:
                spec_a = get_algorithm(algo)
                if not explicit and default is not None and not spec_a.supports(default, coll):
                    continue
                count = len(sizes)
                for k, values in grid_params.items():
                    if k in spec_a.params or k in _PLACED:
                        count *= len(values)
                per += count
        total += combos * per
    if total > max_points:
        shape = " x ".join(f"{len(v)} {k}" for k, v in spec.items() if k != "params" and isinstance(v, list))
        raise InputError(f"the grid has up to {total:,} points ({shape}{', and params' if grid_params else ''}), "
                         f"above the limit of {max_points:,} points of one sweep (a point takes milliseconds to "
                         f"minutes): split it into smaller sweeps, or raise the limit (collsim sweep --max-points)")
    return total


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


def expand_grid(spec: Mapping[str, Any], *, base: str | os.PathLike | None = None,
                max_points: int | None = None) -> Grid:
    """The points of a ``[sweep]`` table: every combination of its lists, in a fixed order.

    Optical keys (wavelengths, fibers) apply to optical systems, link keys to networks.
    An algorithm outside a system's or collective's scope, or that cannot build an
    instance (an odd N for NE), is left out with a reason in ``Grid.skipped`` (when no
    ``algorithms`` are given every registered algorithm in scope is tried, silently
    leaving out those out of scope).  A parameter goes to the algorithms that take it; for
    the others it is left out, and the duplicate points that makes are noted as skipped.

    Parameters
    ----------
    spec : Mapping
        The table: ``systems`` and ``sizes`` (required), ``nodes``, ``wavelengths``,
        ``fibers``, ``link_bandwidths``, ``link_latencies``, ``collectives`` (default
        ``["allgather"]``), ``algorithms`` and ``params`` (a table of lists); every value a list.
    base : str or path, optional
        The folder relative system file paths are read from (:func:`read_sweep` gives the
        sweep file's); default the current folder.
    max_points : int, optional
        Refuse a grid of more points (default :data:`MAX_POINTS`), counted before any is made.

    Returns
    -------
    Grid
        The normalised points (:func:`normalize_point`), without duplicates.

    Raises
    ------
    InputError
        For an unknown key (with a did-you-mean), a value that is not a list, an unknown name,
        a system file that does not exist or is not one, or more than ``max_points`` points.

    Examples
    --------
    >>> g = expand_grid({"systems": ["ring"], "nodes": [4, 5], "sizes": ["1KiB"], "algorithms": ["ring", "ne"]})
    >>> [(p["nodes"], p["algorithm"]) for p in g]
    [(4, 'ring'), (4, 'ne'), (5, 'ring')]
    >>> g.skipped
    ['ne cannot build allgather here: needs an even number of nodes, got 5 (ring, N=5)']
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
                system = load_system(table or system_name, **_overrides(over))
            except CollsimError:
                system = None  # every point of it records the error
            where = f"{system_name}" + (f", N={system.nodes}" if system is not None else "")
            for coll, size, algo in itertools.product(collectives, sizes, algorithms):
                spec_a = get_algorithm(algo)
                if system is None and default is not None and not spec_a.supports(default, coll):
                    if explicit:
                        note(f"{algo} does not run {coll} on {default.kind} systems ({where})")
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
                        params = placement_params(algo, coll, params)
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

    Parameters
    ----------
    path : str or path
        The file.
    max_points : int, optional
        As for :func:`expand_grid`.

    Returns
    -------
    Grid
        Its points.

    Raises
    ------
    InputError
        For a missing or unreadable file, bad TOML, a bad table, or a system file that does not
        exist; the message names the file.

    Examples
    --------
    >>> import os, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> f = os.path.join(tmp.name, "s.toml")
    >>> _ = open(f, "w").write('[sweep]\\nsystems = ["ring"]\\nnodes = [4]\\nsizes = ["1KiB"]\\nalgorithms = ["ring"]\\n')
    >>> len(read_sweep(f))
    1
    >>> tmp.cleanup()
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


def point_memory_bytes(point: Mapping[str, Any], system: Any = None) -> int:
    """Estimated peak memory of running one point (build, verify, time; 0 if its system cannot be built).

    The fewest chunk deliveries any explicit schedule of the collective needs
    (:func:`~collsim.core.collective.min_deliveries`) times the peak bytes a build takes per
    delivery (:data:`~collsim.experiments.beyond.BUILD_BYTES_PER_DELIVERY`), plus the
    collective's own arrays (:func:`~collsim.core.collective.collective_memory_bytes`) and,
    on rings and lines, the cut lower bound's arcs (N x N bytes).

    Parameters
    ----------
    point : Mapping
        The point.
    system : System, optional
        Its system, if already built.

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> round(point_memory_bytes({"system": "paper", "nodes": 4096, "size_bytes": 1024,
    ...                           "collective": "allgather", "algorithm": "ring"}) / 2**30, 1)
    6.2
    """
    from ..core.collective import collective_memory_bytes, min_deliveries
    from .beyond import BUILD_BYTES_PER_DELIVERY
    p = normalize_point(point)
    if system is None:
        try:
            system = _load(p)
        except CollsimError:
            return 0
    n, coll = int(system.nodes), p["collective"]
    est = collective_memory_bytes(coll, n, 1) + min_deliveries(coll, n, 1) * BUILD_BYTES_PER_DELIVERY
    if system.kind in ("ring", "line"):
        est += n * int(getattr(system, "vertices", n))
    return int(est)


def check_sweep(points: Iterable[Mapping[str, Any]], jobs: int = 1) -> None:
    """Refuse, before anything runs, points that would not fit in memory, ``jobs`` of them at once.

    Parameters
    ----------
    points : iterable of Mapping
        The points.
    jobs : int, optional
        Points run at once: the ``jobs`` largest estimates (:func:`point_memory_bytes`) must
        fit together.

    Returns
    -------
    None

    Raises
    ------
    MemoryLimitError
        (an InputError) Naming the largest point and the estimate, when it exceeds collsim's
        memory limit (:mod:`collsim.core.limits`).

    Examples
    --------
    >>> check_sweep([{"system": "ring", "nodes": 8, "size_bytes": 1024, "collective": "allgather",
    ...               "algorithm": "ring"}], jobs=2)
    >>> check_sweep([{"system": "ring", "nodes": 100000, "size_bytes": 1024, "collective": "allgather",
    ...               "algorithm": "ring"}])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    collsim.core.limits.MemoryLimitError: the point ring, N=100000, allgather, ring needs about 3.65 TiB, ...
    """
    from ..core.limits import limit_error, memory_limit_bytes
    ests = []
    systems: dict[str, Any] = {}
    for point in points:
        p = normalize_point(point)
        key = canonical_json({k: p.get(k) for k in ("system", "system_config", *_OPTICAL, *_LINKS, "nodes")})
        if key not in systems:
            try:
                systems[key] = _load(p)
            except CollsimError:
                systems[key] = None
        ests.append((0 if systems[key] is None else point_memory_bytes(p, systems[key]), p))
    if not ests:
        return
    ests.sort(key=lambda e: -e[0])
    at_once = ests[:max(1, min(int(jobs), len(ests)))]
    total = sum(e for e, _ in at_once)
    if total <= memory_limit_bytes():
        return
    est, p = at_once[0]
    nodes = _load(p).nodes
    what = f"the point {p['system']}, N={nodes}, {p['collective']}, {p['algorithm']}"
    if len(at_once) > 1:
        raise limit_error(total, f"{len(at_once)} points at once (--jobs {jobs}), the largest {what} "
                                 f"(about {est / 2**30:.3g} GiB)",
                          "use --jobs 1, fewer nodes, or a larger COLLSIM_MEMORY_LIMIT if the machine has it")
    raise limit_error(est, what, "use fewer nodes, or a larger COLLSIM_MEMORY_LIMIT if the machine has it")


def run_sweep(points: Iterable[Mapping[str, Any]], store: Store, jobs: int = 1,
              progress: Callable[[int, int, dict | None], None] | None = None, executor: Any = None) -> dict[str, Any]:
    """Run the points not yet in the store; the parent process writes each result as it finishes.

    Parameters
    ----------
    points : iterable of Mapping
        The points (:func:`expand_grid`).
    store : Store
        The results store; a point whose key it holds is skipped as finished.
    jobs : int, optional
        Worker processes (default 1: run in this process).
    progress : callable, optional
        ``progress(done, total, record)``: called with 0 before the first point, then after
        each point with the row or error record just stored.
    executor : concurrent.futures.Executor, optional
        Runs the points instead of ``jobs`` processes (MPI ranks: collsim.mpi.distributed); it stays open.

    Returns
    -------
    dict
        ``{"points", "run", "finished", "failed", "store"}``: points in all, points run now,
        points skipped as finished (by an earlier or a concurrent sweep), failed points run now.

    Examples
    --------
    >>> import os, tempfile
    >>> g = expand_grid({"systems": ["ring"], "nodes": [4], "sizes": ["1KiB"], "algorithms": ["ring", "ne"]})
    >>> with tempfile.TemporaryDirectory() as d, Store(os.path.join(d, "r.sqlite")) as store:
    ...     first, again = run_sweep(g, store), run_sweep(g, store)
    >>> (first["run"], first["finished"], first["failed"]), (again["run"], again["finished"])
    ((2, 0, 0), (0, 2))
    """
    jobs = _count("jobs", jobs)
    if jobs < 1:
        raise InputError(f"jobs must be at least 1, not {jobs}")
    todo: dict[str, dict] = {}
    for p in map(normalize_point, points):
        todo.setdefault(point_key(p), p)
    store.check_writable()  # an old store whose keys could give stale rows: refused before anything runs
    have = store.keys()
    pending = [p for k, p in todo.items() if k not in have]
    check_sweep(pending, jobs if executor is None else 1)  # too big for memory: refused before anything runs
    summary = {"points": len(todo), "run": 0, "finished": len(todo) - len(pending), "failed": 0, "store": store.path}
    done = 0
    if progress:
        progress(0, len(pending), None)

    def record(point: dict, rec: dict) -> None:
        nonlocal done
        store.put(point, rec)
        done += 1
        summary["run"] += 1
        summary["failed"] += rec.get("error") is not None
        if progress:
            progress(done, len(pending), rec)

    if executor is None and (jobs == 1 or len(pending) <= 1):
        for p in pending:
            if store.get(p) is not None:  # a concurrent sweep finished it meanwhile
                summary["finished"] += 1
                done += 1
                continue
            record(p, run_point(p))
        return summary
    from concurrent.futures import ProcessPoolExecutor, as_completed
    pool = executor or ProcessPoolExecutor(max_workers=min(jobs, len(pending)))
    try:
        futures = {pool.submit(run_point, p): p for p in pending}
        for fut in as_completed(futures):
            record(futures[fut], fut.result())
    finally:
        if executor is None:  # an executor passed in is its owner's to shut down
            pool.shutdown(wait=True, cancel_futures=True)
    return summary
