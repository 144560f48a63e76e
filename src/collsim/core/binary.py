"""The binary schedule format: the same versioned columns in numpy's ``.npz`` container.

A ``.npz`` schedule holds one array per column (``step, round, src, dst,
chunk_ptr, chunk_idx, reduce`` and the routes part's columns) and the JSON file
header (format, version, system, collective, algorithm, params) as a UTF-8 byte
array named ``header``.  It stores no Python objects (read with
``allow_pickle=False``) and is written uncompressed, so saving and loading cost
little more than copying the columns.  JSON stays the exchange format
(docs/schedule-format.md).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .errors import ScheduleFormatError
from .routes import INDEX
from .schedule import Schedule
from .serialize import header, read_header

_DTYPES = {"step": INDEX, "round": INDEX, "src": INDEX, "dst": INDEX, "chunk_ptr": INDEX, "chunk_idx": INDEX,
           "reduce": bool, "direction": np.int8, "hops": INDEX, "fiber": np.int16, "wavelength": np.int32,
           "band": np.int32, "route_ptr": INDEX, "route_links": INDEX}


def write_npz(s: Schedule, fh) -> None:
    """Write ``s`` to an open binary file in the ``.npz`` format.

    Parameters
    ----------
    s : Schedule
        The schedule.
    fh : file
        Open binary file.

    Returns
    -------
    None

    Examples
    --------
    >>> import io, collsim
    >>> buf = io.BytesIO()
    >>> write_npz(collsim.build("ring", "paper", "allgather", 1024, nodes=3), buf)
    >>> sorted(np.load(io.BytesIO(buf.getvalue()), allow_pickle=False).files)[:4]
    ['band', 'chunk_idx', 'chunk_ptr', 'direction']
    """
    cols = {k: getattr(s, k) for k in ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")}
    cols.update({k: getattr(s.routes, k) for k in s.routes.COLUMNS})
    head = np.frombuffer(json.dumps(header(s)).encode(), dtype=np.uint8)
    np.savez(fh, header=head, **cols)


def read_npz(path: str | Path) -> Schedule:
    """Read a ``.npz`` schedule.

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
        Unreadable file, missing or ill-typed columns, or columns of different lengths.

    Examples
    --------
    >>> import collsim, tempfile, os
    >>> from collsim.core.serialize import save
    >>> f = os.path.join(tempfile.mkdtemp(), "s.npz")
    >>> save(collsim.build("osm", "paper", "allgather", 1024, nodes=8), f)
    >>> len(read_npz(f))
    56
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ScheduleFormatError(f"cannot read {path}: {exc}") from exc
    try:
        doc = json.loads(bytes(arrays.pop("header")).decode())
    except KeyError:
        raise ScheduleFormatError(f"{path}: no 'header' array") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScheduleFormatError(f"{path}: bad header ({exc})") from exc
    system, coll = read_header(doc)
    names = ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce") + system.Routes.COLUMNS
    cols = {}
    for name in names:
        if name not in arrays:
            raise ScheduleFormatError(f"{path}: missing column {name!r}")
        a = arrays[name]
        want = np.dtype(_DTYPES[name])
        if a.ndim != 1 or (a.dtype != want and not (a.dtype.kind in "iu" and want.kind in "iu")):
            raise ScheduleFormatError(f"{path}: column {name!r} must be a 1-D {want} array, got {a.dtype}{a.shape}")
        cols[name] = a.astype(want, copy=False)
    routes = system.Routes(**{k: cols.pop(k) for k in system.Routes.COLUMNS})
    try:
        return Schedule(system=system, collective=coll, algorithm=str(doc.get("algorithm", "file")),
                        params=doc.get("params") if isinstance(doc.get("params"), dict) else {},
                        routes=routes, **cols)
    except ValueError as exc:
        raise ScheduleFormatError(f"{path}: {exc}") from exc
