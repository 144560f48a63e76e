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
from .files import atomic_write
from .schedule import INDEX, LinkRoutes, RingRoutes, Schedule
from .system import system_from_description
from .validate import is_integer

FORMAT = "collsim-schedule"
VERSION = 2
READS = (1, 2)  # version 2 adds "band"; a version-1 file is a version-2 file without bands
PATH_LIMIT = 5_000_000  # total hops above which routes are written compactly


def _ring_fields(s: Schedule, t: int, with_path: bool) -> dict[str, Any]:
    n = s.system.nodes
    src, d, h = int(s.src[t]), int(s.direction[t]), int(s.hops[t])
    out: dict[str, Any] = {}
    if with_path:
        out["path"] = [(src + d * k) % n for k in range(h + 1)]
        if n == 2:  # both directions join the same two nodes: say which
            out["dir"] = "cw" if d > 0 else "ccw"
    else:
        out["dir"], out["hops"] = ("cw" if d > 0 else "ccw"), h
    out["fiber"], out["wavelength"] = int(s.fiber[t]), int(s.wavelength[t])
    if s.band[t] > 1:
        out["band"] = int(s.band[t])
    return out


def _link_fields(s: Schedule, t: int, with_path: bool) -> dict[str, Any]:
    links = s.route_links[s.route_ptr[t]:s.route_ptr[t + 1]]
    return {"path": [int(s.src[t])] + s.system.links.dst[links].tolist()}


def _transfer_json(s: Schedule, t: int, sizes: np.ndarray, with_path: bool, fields_of) -> str:
    out: dict[str, Any] = {"src": int(s.src[t]), "dst": int(s.dst[t]), "chunks": s.chunks_of(t).tolist(),
                           "reduce": bool(s.reduce[t]), "bytes": int(sizes[t]), "round": int(s.round[t])}
    out.update(fields_of(s, t, with_path))
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

    Examples
    --------
    >>> import collsim
    >>> dumps(collsim.build("ring", "paper", "allgather", 1024, nodes=3)).splitlines()[-4]  # the last transfer
    '   {"src":2,"dst":0,"chunks":[1],"reduce":false,"bytes":1024,"round":1,"path":[2,0],"fiber":0,"wavelength":0}'
    """
    head = json.dumps(header(s), indent=1)[:-2]
    with_path = int(s.hops.sum()) <= PATH_LIMIT
    fields_of = _CODECS[type(s.routes)][0]
    sizes = s.size_bytes
    parts = [head, ',\n "steps": [']
    bounds = s.step_bounds
    for k in range(s.num_steps):
        rows = ",\n   ".join(_transfer_json(s, t, sizes, with_path, fields_of) for t in range(bounds[k], bounds[k + 1]))
        parts.append(("\n" if k == 0 else ",\n") + f'  {{"step": {k}, "transfers": [\n   {rows}\n  ]}}')
    parts.append("\n ]\n}\n")
    return "".join(parts)


def save(s: Schedule, path: str | Path) -> None:
    """Write a schedule file: JSON, or numpy's binary ``.npz`` when the name ends in ``.npz``.

    Parameters
    ----------
    s : Schedule
        The schedule.
    path : str or Path
        Destination file (written atomically).

    Returns
    -------
    None

    Raises
    ------
    InputError
        If the file cannot be written (nothing is left behind).

    Examples
    --------
    >>> import collsim, tempfile, os
    >>> s = collsim.build("ring", "paper", "allgather", 1024, nodes=4)
    >>> d = tempfile.mkdtemp()
    >>> save(s, os.path.join(d, "r.npz")); save(s, os.path.join(d, "r.json"))
    >>> dumps(load(os.path.join(d, "r.npz"))) == dumps(load(os.path.join(d, "r.json")))
    True
    """
    if str(path).endswith(".npz"):
        from .binary import write_npz
        atomic_write(path, lambda fh: write_npz(s, fh))
        return
    text = dumps(s).encode()
    atomic_write(path, lambda fh: fh.write(text))


def _need(obj: dict, key: str, kind, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise ScheduleFormatError(f"{where}: missing '{key}'")
    value = obj[key]
    if kind is int and not is_integer(value):
        raise ScheduleFormatError(f"{where}: '{key}' must be an integer")
    if kind is not int and not isinstance(value, kind):
        raise ScheduleFormatError(f"{where}: '{key}' has the wrong type")
    return value


def _route(tr: dict, n: int, step: int, t: int, where: str) -> tuple[int, int]:
    src, dst = tr["src"], tr["dst"]
    if "path" in tr:
        path = tr["path"]
        if not isinstance(path, list) or len(path) < 2 or not all(is_integer(v) for v in path):
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
    if not isinstance(path, list) or len(path) < 2 or not all(is_integer(v) for v in path):
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


def header(s: Schedule) -> dict[str, Any]:
    """The file header of a schedule: format, version, system, collective, algorithm, params.

    Parameters
    ----------
    s : Schedule
        The schedule.

    Returns
    -------
    dict
        JSON-able header shared by the JSON and the ``.npz`` formats.

    Examples
    --------
    >>> import collsim
    >>> h = header(collsim.build("ring", "paper", "allgather", 1024, nodes=3))
    >>> h["format"], h["version"], h["collective"], h["algorithm"]
    ('collsim-schedule', 2, {'kind': 'allgather', 'nodes': 3, 'size_bytes': 1024, 'split': 1, 'root': None}, 'ring')
    """
    return {"format": FORMAT, "version": VERSION, "system": s.system.describe(),
            "collective": s.collective.describe(), "algorithm": s.algorithm, "params": dict(s.params)}


def read_header(doc: Any):
    """Check a file header and rebuild its system and collective.

    Parameters
    ----------
    doc : dict
        The parsed header (the whole document for JSON files).

    Returns
    -------
    tuple
        ``(System, Collective)``.

    Raises
    ------
    ScheduleFormatError
        Wrong format or version, or a malformed system or collective.

    Examples
    --------
    >>> import collsim
    >>> system, coll = read_header(header(collsim.build("ring", "paper", "allgather", 1024, nodes=3)))
    >>> system.kind, system.nodes, coll.kind, coll.size_bytes
    ('optical-ring', 3, 'allgather', 1024)
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ScheduleFormatError(f"not a collsim schedule (expected \"format\": \"{FORMAT}\")")
    if doc.get("version") not in READS or isinstance(doc.get("version"), bool):
        raise ScheduleFormatError(f"unsupported schedule version {doc.get('version')!r} "
                                  f"(this collsim reads {', '.join(map(str, READS))})")
    system = system_from_description(_need(doc, "system", dict, "file"))
    cd = _need(doc, "collective", dict, "file")
    kind = _need(cd, "kind", str, "collective")
    if kind not in SPECS:
        raise ScheduleFormatError(f"collective: unknown kind {kind!r}")
    root = cd.get("root")
    if root is not None and not is_integer(root):
        raise ScheduleFormatError("collective: 'root' must be an integer or null")
    try:
        coll = make_collective(kind, _need(cd, "nodes", int, "collective"), _need(cd, "size_bytes", int, "collective"),
                               split=cd.get("split", 1) if is_integer(cd.get("split", 1)) else -1, root=root,
                               shift=cd.get("shift", 1))
    except InputError as exc:
        raise ScheduleFormatError(f"collective: {exc}") from exc
    return system, coll


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

    Examples
    --------
    >>> import collsim
    >>> s = loads(dumps(collsim.build("ring", "paper", "allgather", 1024, nodes=3)))
    >>> s.num_steps, s.src.tolist(), s.dst.tolist()
    (2, [0, 1, 2, 0, 1, 2], [1, 2, 0, 1, 2, 0])
    """
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ScheduleFormatError(f"not valid JSON: {exc}") from exc
    system, coll = read_header(doc)
    steps = _need(doc, "steps", list, "file")
    cols: dict[str, list] = {k: [] for k in ("step", "round", "src", "dst", "reduce", "nchunks")}
    chunks: list[int] = []
    reader = _CODECS[system.Routes][1](system)
    t = 0
    for k, st in enumerate(steps):
        sn = _need(st, "step", int, f"steps[{k}]")
        for j, tr in enumerate(_need(st, "transfers", list, f"steps[{k}]")):
            where = f"steps[{k}].transfers[{j}]"
            src, dst = _need(tr, "src", int, where), _need(tr, "dst", int, where)
            ch = _need(tr, "chunks", list, where)
            if not all(is_integer(c) for c in ch):
                raise ScheduleFormatError(f"{where}: 'chunks' must be a list of integers")
            red = tr.get("reduce", False)
            if not isinstance(red, bool):
                raise ScheduleFormatError(f"{where}: 'reduce' must be true or false")
            reader.add(tr, sn, t, where)
            rnd = tr.get("round", sn)
            for name, val in (("step", sn), ("round", rnd if is_integer(rnd) else sn), ("src", src),
                              ("dst", dst), ("reduce", red), ("nchunks", len(ch))):
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
                     reduce=np.asarray(cols["reduce"], dtype=bool), routes=reader.finish())
    except OverflowError as exc:
        raise ScheduleFormatError(f"a number is out of range: {exc}") from exc
    return s


class _RingReader:
    """Collects the route and channel fields of optical-ring transfers."""

    def __init__(self, system) -> None:
        self.system = system
        self.cols: dict[str, list] = {k: [] for k in RingRoutes.COLUMNS}

    def add(self, tr: dict, step: int, t: int, where: str) -> None:
        d, h = _route(tr, self.system.nodes, step, t, where)
        band = tr.get("band", 1)
        if not is_integer(band):
            raise ScheduleFormatError(f"{where}: 'band' must be an integer")
        for name, val in (("direction", d), ("hops", h), ("fiber", _need(tr, "fiber", int, where)),
                          ("wavelength", _need(tr, "wavelength", int, where)), ("band", band)):
            self.cols[name].append(val)

    def finish(self) -> RingRoutes:
        return RingRoutes.create(**self.cols)


class _LinkReader:
    """Collects the vertex paths of network transfers as link ids."""

    def __init__(self, system) -> None:
        self.system = system
        self.hops: list[int] = []
        self.links: list[int] = []

    def add(self, tr: dict, step: int, t: int, where: str) -> None:
        self.hops.append(_network_route(tr, self.system, step, t, where, self.links))

    def finish(self) -> LinkRoutes:
        ptr = np.zeros(len(self.hops) + 1, dtype=INDEX)
        np.cumsum(np.asarray(self.hops, dtype=INDEX), out=ptr[1:])
        return LinkRoutes(ptr, np.asarray(self.links, dtype=INDEX))


# each kind's routes part: (writer of its JSON fields, reader)
_CODECS = {RingRoutes: (_ring_fields, _RingReader), LinkRoutes: (_link_fields, _LinkReader)}


def load(path: str | Path) -> Schedule:
    """Read a schedule file (JSON, or ``.npz``).

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

    Examples
    --------
    >>> import collsim, os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save(collsim.build("ne", "paper", "allgather", 1024, nodes=4), os.path.join(d, "ne.json"))
    ...     load(os.path.join(d, "ne.json")).algorithm
    'ne'
    """
    if str(path).endswith(".npz"):
        from .binary import read_npz
        return read_npz(path)
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
