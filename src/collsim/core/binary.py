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

import io
import json
import os
import zipfile
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .errors import ScheduleFormatError, unknown_names
from .files import os_reason
from .reading import open_for_reading, read_bytes
from .csr import INDEX
from .schedule import Schedule
from .file_header import header, read_header
from .wellformed import check_wellformed

_DTYPES = {"step": INDEX, "round": INDEX, "src": INDEX, "dst": INDEX, "chunk_ptr": INDEX, "chunk_idx": INDEX,
           "reduce": bool, "direction": np.int8, "hops": INDEX, "fiber": np.int16, "wavelength": np.int32,
           "band": np.int32, "route_ptr": INDEX, "route_links": INDEX, "path_ptr": INDEX, "path_weight": np.float64}


def write_npz(s: Schedule, fh) -> None:
    """Write ``s`` to an open binary file in the ``.npz`` format."""
    cols = {k: getattr(s, k) for k in ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")}
    cols.update({k: getattr(s.routes, k) for k in s.routes.columns()})
    head = np.frombuffer(json.dumps(header(s)).encode(), dtype=np.uint8)
    np.savez(fh, header=head, **cols)


def _column(path, name: str, a: np.ndarray) -> np.ndarray:
    """Column ``name`` in its canonical dtype: integers of another width are converted only if
    every value fits (checked, vectorised: never a silent wrap-around)."""
    want = np.dtype(_DTYPES[name])
    if a.ndim != 1 or (a.dtype != want and not (a.dtype.kind in "iu" and want.kind in "iu")):
        raise ScheduleFormatError(f"{path}: column {name!r} must be a 1-D {want} array, got {a.dtype}{a.shape}")
    if a.dtype != want and a.size:
        info = np.iinfo(want)
        lo, hi = int(a.min()), int(a.max())  # Python ints: exact for uint64 too
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise ScheduleFormatError(f"{path}: column {name!r} holds {bad}, out of range: collsim stores it as "
                                      f"{want.name}, {info.min}..{info.max}")
    return a.astype(want, copy=False)


def read_npz(path: str | Path | BinaryIO, name: str | None = None) -> Schedule:
    """Read a ``.npz`` schedule.

    Every column is checked as a JSON file's fields are: integer columns of another
    width are converted only if their values fit, and the schedule must be
    well-formed (:func:`collsim.core.wellformed.check_wellformed`: contiguous steps,
    no chunk named twice in a transfer, consistent CSR pointers, sizes within int64).
    """
    name = str(path) if name is None else name
    owned = None
    if isinstance(path, (str, os.PathLike)):  # a regular file up to MAX_READ_BYTES (or a pipe), never a device
        path = owned = open_for_reading(path, error=ScheduleFormatError)
        if not owned.seekable():  # a pipe: a zip is read from its end
            path = io.BytesIO(read_bytes(None, error=ScheduleFormatError, name=name, stream=owned))
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except OSError as exc:
        raise ScheduleFormatError(f"cannot read {name}: {os_reason(exc)}") from exc
    except (ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ScheduleFormatError(f"cannot read {name}: not a .npz schedule (numpy's zip of arrays, "
                                  f"without Python objects)") from exc
    finally:
        if owned is not None:
            owned.close()
    try:
        doc = json.loads(bytes(arrays.pop("header")).decode())
    except KeyError:
        raise ScheduleFormatError(f"{name}: no 'header' array") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ScheduleFormatError(f"{name}: bad header ({exc})") from exc
    system, coll = read_header(doc)
    names = ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce") + system.Routes.COLUMNS
    known = {"header", *names, *system.Routes.PATH_COLUMNS}
    unknown = [k for k in arrays if k not in known]
    if unknown:  # nothing in a file is silently ignored (a misspelt column, a column of another kind of system)
        raise ScheduleFormatError(f"{name}: unknown array{'s' if len(unknown) > 1 else ''} "
                                  + unknown_names(unknown, known))
    cols = {}
    for col in names:
        if col not in arrays:
            raise ScheduleFormatError(f"{name}: missing column {col!r}")
        cols[col] = _column(name, col, arrays[col])
    for col in system.Routes.PATH_COLUMNS:  # ECMP routes: optional, both or neither
        if col in arrays:
            cols[col] = _column(name, col, arrays[col])
    routes = system.Routes(**{k: cols.pop(k) for k in (*system.Routes.COLUMNS,
                                                      *system.Routes.PATH_COLUMNS) if k in cols})
    try:
        s = Schedule(system=system, collective=coll, algorithm=str(doc.get("algorithm", "file")),
                     params=doc.get("params") if isinstance(doc.get("params"), dict) else {},
                     routes=routes, **cols)
    except ValueError as exc:
        raise ScheduleFormatError(f"{name}: {exc}") from exc
    try:
        check_wellformed(s)
    except ScheduleFormatError as exc:
        raise ScheduleFormatError(f"{name}: {exc}") from exc
    return s
