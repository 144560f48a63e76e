"""The binary schedule format: the same versioned columns in numpy's ``.npz`` container.

A ``.npz`` schedule holds one array per column (``step, round, src, dst,
chunk_ptr, chunk_idx, reduce`` and the routes part's columns) and the JSON file
header (format, version, system, collective, algorithm, params) as a UTF-8 byte
array named ``header``.  It stores no Python objects (read with
``allow_pickle=False``) and is written uncompressed, so saving and loading cost
little more than copying the columns.  JSON stays the exchange format
(docs/schedule-format.md).

Files are written compact: every integer column in the narrowest signed type that holds its
values (:func:`narrowest`), and a CSR pointer column whose every row has one entry (one chunk a
transfer, one link a path: :data:`ONE_ENTRY_POINTERS`) left out, which makes the file version 3.
A ring all-gather of one chunk a transfer then takes 16 to 24 bytes a transfer instead of 68.
Reading converts every column back to collsim's own types (checked: a value that does not fit
is refused, never wrapped), so schedules in memory are unchanged.

Examples
--------
>>> import io, collsim
>>> s = collsim.build("ring", "paper", "allgather", "1KiB", nodes=8)
>>> buf = io.BytesIO(); write_npz(s, buf); _ = buf.seek(0)
>>> sorted(np.load(buf).files)[:4], read_npz(buf).chunk_ptr.tolist() == s.chunk_ptr.tolist()
(['band', 'chunk_idx', 'direction', 'dst'], True)
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
from .csr import INDEX, canonical_column
from .schedule import Schedule
from .file_header import COMPACT_VERSION, SYMMETRIC_VERSION, VERSION, header, read_header
from .wellformed import check_wellformed



ONE_ENTRY_POINTERS = ("chunk_ptr", "route_ptr")
"""CSR pointer columns a version-3 file leaves out when every row has exactly one entry: the
reader rebuilds them as ``0, 1, ..., rows``."""


def narrowest(a: np.ndarray) -> np.ndarray:
    """``a`` in the narrowest signed integer type holding every value (other arrays unchanged).

    Examples
    --------
    >>> narrowest(np.array([0, 300])).dtype, narrowest(np.array([-1, 5])).dtype, narrowest(np.array([0.5])).dtype
    (dtype('int16'), dtype('int8'), dtype('float64'))
    """
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        return a
    if not a.size:
        return a.astype(np.int8)
    lo, hi = int(a.min()), int(a.max())   # Python ints: exact for uint64 too
    for t in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return a.astype(t, copy=False)
    return a     # beyond int64: written as it is, and refused by the reader


def _one_entry_rows(ptr: np.ndarray) -> bool:
    """Whether CSR pointers ``ptr`` give every row exactly one entry (``ptr == 0, 1, ..., rows``)."""
    return bool(len(ptr) and ptr[0] == 0 and int(ptr[-1]) == len(ptr) - 1 and (np.diff(ptr) == 1).all())


def write_npz(s: Schedule, fh, symmetry: dict | None = None) -> None:
    """Write ``s`` to an open binary file in the ``.npz`` format, compact (module docstring); with
    ``symmetry``, ``s`` is representatives and the file version 4 (:mod:`collsim.core.compact_file`)."""
    cols = {k: getattr(s, k) for k in ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")}
    cols.update({k: getattr(s.routes, k) for k in s.routes.columns()})
    left_out = [k for k in ONE_ENTRY_POINTERS if k in cols and _one_entry_rows(cols[k])]
    for k in left_out:
        del cols[k]
    version = COMPACT_VERSION if left_out else VERSION
    head = np.frombuffer(json.dumps(header(s, version, symmetry)).encode(), dtype=np.uint8)
    np.savez(fh, header=head, **{k: narrowest(v) for k, v in cols.items()})


def _column(path, name: str, a: np.ndarray, dtype) -> np.ndarray:
    """Column ``name`` in its canonical dtype: integers of another width are converted only if
    every value fits (checked, vectorised: never a silent wrap-around)."""
    return canonical_column(a, dtype, name, lambda message: ScheduleFormatError(f"{path}: {message}"))


def read_npz(path: str | Path | BinaryIO, name: str | None = None, *, expand: bool = True):
    """Read a ``.npz`` schedule.

    Every column is checked as a JSON file's fields are: integer columns of another
    width are converted only if their values fit, and the schedule must be
    well-formed (:func:`collsim.core.wellformed.check_wellformed`: contiguous steps,
    no chunk named twice in a transfer, consistent CSR pointers, sizes within int64).
    A version-4 file's representatives and group are the schedule they stand for: expanded
    (``expand``, the default), else a ``SymmetricSchedule`` or ``RepeatedSteps``
    (:func:`collsim.core.compact_file.from_file`).
    """
    name = str(path) if name is None else name
    s, symmetry = _read_npz(path, name)
    if symmetry is None:
        return s
    from .compact_file import from_file
    return from_file(s, symmetry, expand=expand, name=name)


def _read_npz(path, name: str) -> tuple[Schedule, dict | None]:
    """The file's schedule (its representatives in version 4) and its ``symmetry``, or None."""
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
    from .compact_file import read_symmetry
    symmetry = read_symmetry(doc, doc["version"])
    names = ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce") + system.Routes.COLUMNS
    known = {"header", *names, *system.Routes.PATH_COLUMNS}
    unknown = [k for k in arrays if k not in known]
    if unknown:  # nothing in a file is silently ignored (a misspelt column, a column of another kind of system)
        raise ScheduleFormatError(f"{name}: unknown array{'s' if len(unknown) > 1 else ''} "
                                  + unknown_names(unknown, known))
    cols, dtypes = {}, {**Schedule.DTYPES, **system.Routes.DTYPES}
    for col in names:
        if col not in arrays:
            if col in ONE_ENTRY_POINTERS and doc.get("version") in (COMPACT_VERSION, SYMMETRIC_VERSION):
                continue   # every row one entry: rebuilt below
            raise ScheduleFormatError(f"{name}: missing column {col!r}")
        cols[col] = _column(name, col, arrays[col], dtypes[col])
    for col in system.Routes.PATH_COLUMNS:  # ECMP routes: optional, both or neither
        if col in arrays:
            cols[col] = _column(name, col, arrays[col], dtypes[col])
    _rebuild_pointers(name, cols, system.Routes.COLUMNS)
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
    return s, symmetry


def _rebuild_pointers(name: str, cols: dict, route_columns: tuple[str, ...]) -> None:
    """The pointer columns a version-3 file left out, every row one entry; its entries must match."""
    transfers = len(cols["src"])
    if "chunk_ptr" not in cols:
        if len(cols["chunk_idx"]) != transfers:
            raise ScheduleFormatError(f"{name}: 'chunk_ptr' is left out, so every transfer carries one chunk, "
                                      f"but 'chunk_idx' has {len(cols['chunk_idx'])} entries for {transfers} transfers")
        cols["chunk_ptr"] = np.arange(transfers + 1, dtype=INDEX)
    if "route_ptr" in route_columns and "route_ptr" not in cols:
        paths = int(cols["path_ptr"][-1]) if "path_ptr" in cols and len(cols["path_ptr"]) else transfers
        if len(cols["route_links"]) != paths:
            raise ScheduleFormatError(f"{name}: 'route_ptr' is left out, so every path is one link, but "
                                      f"'route_links' has {len(cols['route_links'])} entries for {paths} paths")
        cols["route_ptr"] = np.arange(paths + 1, dtype=INDEX)
