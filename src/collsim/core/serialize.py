"""The schedule file format (JSON, versioned, self-contained).

See docs/schedule-format.md.  A file embeds its system and collective, so
``collsim verify FILE`` needs nothing else.  Routes are written as the list of
vertices they visit (``"path"``; on electrical networks switches are vertices too); for very large schedules the compact form
``"dir"`` (``"cw"``/``"ccw"``) plus ``"hops"`` is written instead.  Both are read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .collective import SPECS, make_collective
from .errors import CollsimError, InputError, RouteError, ScheduleFormatError, Where
from .schedule import INDEX, Schedule
from .system import system_from_description

FORMAT = "collsim-schedule"
VERSION = 1
PATH_LIMIT = 5_000_000  # total hops above which routes are written compactly


def _transfer_json(s: Schedule, t: int, sizes: np.ndarray, with_path: bool) -> str:
    n = s.system.nodes
    src, d, h = int(s.src[t]), int(s.direction[t]), int(s.hops[t])
    out: dict[str, Any] = {"src": src, "dst": int(s.dst[t]), "chunks": s.chunks_of(t).tolist(),
                           "reduce": bool(s.reduce[t]), "bytes": int(sizes[t]), "round": int(s.round[t])}
    if s.system.ring_routes:
        if with_path:
            out["path"] = [(src + d * k) % n for k in range(h + 1)]
            if n == 2:  # both directions join the same two nodes: say which
                out["dir"] = "cw" if d > 0 else "ccw"
        else:
            out["dir"], out["hops"] = ("cw" if d > 0 else "ccw"), h
    elif s.route_links is not None:
        links = s.route_links[s.route_ptr[t]:s.route_ptr[t + 1]]
        out["path"] = [src] + s.system.links.dst[links].tolist()
    if s.system.optical:
        out["fiber"], out["wavelength"] = int(s.fiber[t]), int(s.wavelength[t])
    return json.dumps(out, separators=(",", ":"))


def dumps(s: Schedule) -> str:
    """Serialise a schedule to JSON text (deterministic).

    Parameters
    ----------
    s : Schedule
        The schedule.

    Returns
    -------
    str
        JSON text, one transfer per line.
    """
    header = {"format": FORMAT, "version": VERSION, "system": s.system.describe(),
              "collective": s.collective.describe(), "algorithm": s.algorithm, "params": dict(s.params)}
    with_path = int(s.hops.sum()) <= PATH_LIMIT
    sizes = s.size_bytes
    head = json.dumps(header, indent=1)[:-2]
    parts = [head, ',\n "steps": [']
    bounds = s.step_bounds
    for k in range(s.num_steps):
        rows = ",\n   ".join(_transfer_json(s, t, sizes, with_path) for t in range(bounds[k], bounds[k + 1]))
        parts.append(("\n" if k == 0 else ",\n") + f'  {{"step": {k}, "transfers": [\n   {rows}\n  ]}}')
    parts.append("\n ]\n}\n")
    return "".join(parts)


def save(s: Schedule, path: str | Path) -> None:
    """Write a schedule file.

    Parameters
    ----------
    s : Schedule
        The schedule.
    path : str or Path
        Destination file.

    Raises
    ------
    InputError
        If the file cannot be written (nothing is left behind).
    """
    text = dumps(s)
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _need(obj: dict, key: str, kind, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise ScheduleFormatError(f"{where}: missing '{key}'")
    value = obj[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ScheduleFormatError(f"{where}: '{key}' must be an integer")
    if kind is not int and not isinstance(value, kind):
        raise ScheduleFormatError(f"{where}: '{key}' has the wrong type")
    return value


def _route(tr: dict, n: int, step: int, t: int, where: str) -> tuple[int, int]:
    src, dst = tr["src"], tr["dst"]
    if "path" in tr:
        path = tr["path"]
        if not isinstance(path, list) or len(path) < 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in path):
            raise ScheduleFormatError(f"{where}: 'path' must be a list of at least 2 node ids")
        loc = Where(step=step, transfer=t)
        if path[0] != src or path[-1] != dst:
            raise RouteError(f"path runs {path[0]}->{path[-1]} but the transfer is {src}->{dst}", loc)
        steps = {(b - a) % n for a, b in zip(path, path[1:])}
        if len(steps) != 1 or steps.pop() not in (1, n - 1):
            raise RouteError("path is not a contiguous one-direction walk around the ring", loc)
        d = 1 if (path[1] - path[0]) % n == 1 else -1
        if n == 2:
            d = {"cw": 1, "ccw": -1}.get(tr.get("dir", "cw"), 0)
            if d == 0:
                raise ScheduleFormatError(f"{where}: 'dir' must be 'cw' or 'ccw'")
        return d, len(path) - 1
    if "dir" in tr:
        d = {"cw": 1, "ccw": -1}.get(tr["dir"])
        if d is None:
            raise ScheduleFormatError(f"{where}: 'dir' must be 'cw' or 'ccw'")
        return d, _need(tr, "hops", int, where)
    raise ScheduleFormatError(f"{where}: needs a route ('path', or 'dir' and 'hops')")


def _network_route(tr: dict, system, step: int, t: int, where: str, out: list[int]) -> int:
    """Parse a vertex path on a graph system into link ids appended to ``out``."""
    path = tr.get("path")
    if not isinstance(path, list) or len(path) < 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in path):
        raise ScheduleFormatError(f"{where}: 'path' must be a list of at least 2 vertex ids")
    loc = Where(step=step, transfer=t)
    if path[0] != tr["src"] or path[-1] != tr["dst"]:
        raise RouteError(f"path runs {path[0]}->{path[-1]} but the transfer is {tr['src']}->{tr['dst']}", loc)
    links = system.links.index(np.asarray(path[:-1]), np.asarray(path[1:]))
    if (links < 0).any():
        k = int(np.flatnonzero(links < 0)[0])
        raise RouteError(f"no link from vertex {path[k]} to vertex {path[k + 1]}", loc)
    out.extend(links.tolist())
    return len(links)


def _network_csr(system, hops: list[int], links: list[int]) -> dict:
    if system.ring_routes:
        return {}
    ptr = np.zeros(len(hops) + 1, dtype=INDEX)
    np.cumsum(np.asarray(hops, dtype=INDEX), out=ptr[1:])
    return {"route_ptr": ptr, "route_links": np.asarray(links, dtype=INDEX)}


def loads(text: str) -> Schedule:
    """Parse schedule JSON text.

    Parameters
    ----------
    text : str
        File contents.

    Returns
    -------
    Schedule
        The schedule (not yet verified).

    Raises
    ------
    ScheduleFormatError
        Malformed JSON or missing/ill-typed fields.
    RouteError
        A ``path`` that is not a contiguous one-direction walk from source to destination.
    """
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ScheduleFormatError(f"not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ScheduleFormatError(f"not a collsim schedule (expected \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ScheduleFormatError(f"unsupported schedule version {doc.get('version')!r} (this collsim reads {VERSION})")
    system = system_from_description(_need(doc, "system", dict, "file"))
    cd = _need(doc, "collective", dict, "file")
    kind = _need(cd, "kind", str, "collective")
    if kind not in SPECS:
        raise ScheduleFormatError(f"collective: unknown kind {kind!r}")
    root = cd.get("root")
    if root is not None and (isinstance(root, bool) or not isinstance(root, int)):
        raise ScheduleFormatError("collective: 'root' must be an integer or null")
    try:
        coll = make_collective(kind, _need(cd, "nodes", int, "collective"), _need(cd, "size_bytes", int, "collective"),
                               split=cd.get("split", 1) if isinstance(cd.get("split", 1), int) else -1, root=root,
                               shift=cd.get("shift", 1))
    except InputError as exc:
        raise ScheduleFormatError(f"collective: {exc}") from exc
    steps = _need(doc, "steps", list, "file")
    cols: dict[str, list] = {k: [] for k in ("step", "round", "src", "dst", "reduce", "dir", "hops",
                                             "fiber", "wl", "nchunks")}
    chunks: list[int] = []
    route_links: list[int] = []
    n = system.nodes
    t = 0
    for k, st in enumerate(steps):
        sn = _need(st, "step", int, f"steps[{k}]")
        for j, tr in enumerate(_need(st, "transfers", list, f"steps[{k}]")):
            where = f"steps[{k}].transfers[{j}]"
            src, dst = _need(tr, "src", int, where), _need(tr, "dst", int, where)
            ch = _need(tr, "chunks", list, where)
            if not all(isinstance(c, int) and not isinstance(c, bool) for c in ch):
                raise ScheduleFormatError(f"{where}: 'chunks' must be a list of integers")
            red = tr.get("reduce", False)
            if not isinstance(red, bool):
                raise ScheduleFormatError(f"{where}: 'reduce' must be true or false")
            if system.ring_routes:
                d, h = _route(tr, n, sn, t, where)
            else:
                d, h = 0, _network_route(tr, system, sn, t, where, route_links)
            f = _need(tr, "fiber", int, where) if system.optical else -1
            w = _need(tr, "wavelength", int, where) if system.optical else -1
            rnd = tr.get("round", sn)
            for name, val in (("step", sn), ("round", rnd if isinstance(rnd, int) else sn), ("src", src),
                              ("dst", dst), ("reduce", red), ("dir", d), ("hops", h), ("fiber", f),
                              ("wl", w), ("nchunks", len(ch))):
                cols[name].append(val)
            chunks.extend(ch)
            t += 1
    step = np.asarray(cols["step"], dtype=INDEX)
    order = np.argsort(step, kind="stable")
    if (order != np.arange(len(order))).any():
        raise ScheduleFormatError("transfers must be listed in step order")
    ptr = np.zeros(t + 1, dtype=INDEX)
    np.cumsum(np.asarray(cols["nchunks"], dtype=INDEX), out=ptr[1:])
    try:
        s = Schedule(system=system, collective=coll, algorithm=str(doc.get("algorithm", "file")),
                     params=doc.get("params") if isinstance(doc.get("params"), dict) else {},
                     step=step, round=np.asarray(cols["round"], dtype=INDEX),
                     src=np.asarray(cols["src"], dtype=INDEX), dst=np.asarray(cols["dst"], dtype=INDEX),
                     chunk_ptr=ptr, chunk_idx=np.asarray(chunks, dtype=INDEX),
                     reduce=np.asarray(cols["reduce"], dtype=bool), direction=np.asarray(cols["dir"], dtype=np.int8),
                     hops=np.asarray(cols["hops"], dtype=INDEX), fiber=np.asarray(cols["fiber"], dtype=np.int16),
                     wavelength=np.asarray(cols["wl"], dtype=np.int32),
                     **_network_csr(system, cols["hops"], route_links))
    except OverflowError as exc:
        raise ScheduleFormatError(f"a number is out of range: {exc}") from exc
    return s


def load(path: str | Path) -> Schedule:
    """Read a schedule file.

    Parameters
    ----------
    path : str or Path
        File to read.

    Returns
    -------
    Schedule
        The schedule (not yet verified).

    Raises
    ------
    ScheduleFormatError
        Unreadable or malformed file.
    """
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScheduleFormatError(f"cannot read {path}: {exc}") from exc
    try:
        return loads(text)
    except CollsimError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise ScheduleFormatError(f"malformed schedule: {exc}") from exc
