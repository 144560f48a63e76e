"""The schedule file format (JSON, versioned, self-contained).

See docs/schedule-format.md.  A file embeds its system and collective, so
``collsim verify FILE`` needs nothing else.  Routes are written as the list of
vertices they visit (``"path"``; on electrical networks switches are vertices too); for very large schedules the compact form
``"dir"`` (``"cw"``/``"ccw"``) plus ``"hops"`` is written instead.  Both are read.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .errors import CollsimError, InputError, ScheduleFormatError
from .fields import int_column, need, optional, refuse_unknown, route_reader
from .binary import read_npz, write_npz
from .file_header import header, read_header
from .files import atomic_write
from .reading import read_bytes
from .positions import position_name, transfer_position
from .plugins import route_format_for
from .schedule import INDEX, Schedule
from .validate import is_integer
from .wellformed import STEP_RULE, check_wellformed

PATH_LIMIT = 5_000_000  # total hops above which routes are written compactly
STEP_KEYS = frozenset({"step", "transfers"})
TRANSFER_KEYS = frozenset({"src", "dst", "chunks", "reduce", "bytes", "round"})  # and the routes' (fields.py)


def _transfer_json(s: Schedule, t: int, sizes: np.ndarray, with_path: bool, fields_of) -> str:
    out: dict[str, Any] = {"src": int(s.src[t]), "dst": int(s.dst[t]), "chunks": s.chunks_of(t).tolist(),
                           "reduce": bool(s.reduce[t]), "bytes": int(sizes[t]), "round": int(s.round[t])}
    out.update(fields_of(s, t, with_path))
    return json.dumps(out, separators=(",", ":"))


_Progress = Callable[[int, int], None]  # progress(steps done, steps in all): the command line's progress bar


def dumps(s: Schedule, progress: _Progress | None = None, symmetry: dict | None = None) -> str:
    """Serialise a schedule to JSON text (deterministic); with ``symmetry``, ``s`` is the
    representatives of a version-4 file (:mod:`collsim.core.compact_file`)."""
    parts: list[str] = []
    _write_json(s, parts.append, progress, symmetry)
    return "".join(parts)


def _write_json(s: Schedule, write: Callable[[str], Any], progress: _Progress | None = None,
                symmetry: dict | None = None) -> None:
    """The JSON text of :func:`dumps`, handed to ``write`` a step at a time (:func:`save` streams it
    into its temporary file, so that no copy of the whole text is held)."""
    head = json.dumps(header(s, symmetry=symmetry), indent=1)[:-2]
    with_path = int(s.hops.sum()) <= PATH_LIMIT  # the kind's writer may still write its compact form
    fields_of = route_format_for(s.system).writer
    sizes = s.size_bytes
    write(head + ',\n "steps": [')
    bounds = s.step_bounds
    for k in range(s.num_steps):
        rows = ",\n   ".join(_transfer_json(s, t, sizes, with_path, fields_of) for t in range(bounds[k], bounds[k + 1]))
        write(("\n" if k == 0 else ",\n") + f'  {{"step": {k}, "transfers": [\n   {rows}\n  ]}}')
        if progress is not None:
            progress(k + 1, s.num_steps)
    write("\n ]\n}\n")


def save(s: Schedule, path: str | Path, progress: _Progress | None = None, *, expand: bool = True) -> None:
    """Write a schedule file: JSON, or numpy's binary ``.npz`` when the name ends in ``.npz``.

    Parameters
    ----------
    s : Schedule, SymmetricSchedule or RepeatedSteps
        The schedule; a symmetric schedule or one whose steps repeat is written expanded (every
        transfer), refused before it starts where the expansion would not fit in memory.
    path : str or Path
        Destination file (written atomically).
    progress : callable, optional
        ``progress(done, total)`` per step written (JSON; :func:`dumps`).
    expand : bool, optional
        False: a symmetric schedule or one whose steps repeat is written as its representatives
        and its group (version 4, :mod:`collsim.core.compact_file`), which :func:`load` reads back
        as the same form or expanded.  An ordinary schedule is written as always.

    Returns
    -------
    None

    Raises
    ------
    InputError
        If the file cannot be written (nothing is left behind), the expansion would exceed the
        memory limit, or ``s`` is a repeated schedule's whole steps alone (their weights have no
        place in a file: save the repeated schedule).

    Examples
    --------
    >>> import collsim, tempfile, os
    >>> s = collsim.build("ring", "paper", "allgather", 1024, nodes=4)
    >>> d = tempfile.mkdtemp()
    >>> save(s, os.path.join(d, "r.npz")); save(s, os.path.join(d, "r.json"))
    >>> dumps(load(os.path.join(d, "r.npz"))) == dumps(load(os.path.join(d, "r.json")))
    True
    """
    s, symmetry = _as_written(s, expand)
    if str(path).endswith(".npz"):
        atomic_write(path, lambda fh: write_npz(s, fh, symmetry))
        return
    # a step at a time into the temporary file: an error leaves the destination as it was (atomic_write)
    atomic_write(path, lambda fh: _write_json(s, lambda text: fh.write(text.encode()), progress, symmetry))


def write_json(s, write: Callable[[str], Any], progress: _Progress | None = None, *, expand: bool = True) -> None:
    """Hand the JSON text of the schedule file :func:`save` would write to ``write``, a step at a time.

    Parameters
    ----------
    s : Schedule, SymmetricSchedule or RepeatedSteps
        The schedule, written as by :func:`save` (``expand`` likewise).
    write : callable
        Called with each piece of the text, in order (for example a stream's ``write``).
    progress : callable, optional
        ``progress(done, total)`` per step written.
    expand : bool, optional
        False: a symmetric schedule or one whose steps repeat is written as its representatives
        and group (version 4).

    Returns
    -------
    None

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("ring", "paper", "allgather", 1024, nodes=4)
    >>> parts = []; write_json(s, parts.append)
    >>> "".join(parts) == dumps(s)
    True
    """
    s, symmetry = _as_written(s, expand)
    _write_json(s, write, progress, symmetry)


def _as_written(s, expand: bool) -> tuple[Schedule, dict | None]:
    """What a file holds of ``s``: its representatives and group (``expand=False``, a symmetric or
    repeated schedule) or every transfer."""
    from .repeated import RepeatedSteps, WeightedSteps
    from .symmetry import SymmetricSchedule
    if isinstance(s, (SymmetricSchedule, RepeatedSteps)) and not expand:
        from .compact_file import symmetry_of
        return symmetry_of(s)
    if isinstance(s, (SymmetricSchedule, RepeatedSteps)):
        return s.expand(), None   # MemoryLimitError, with its estimate, where the expansion would not fit
    if isinstance(s, WeightedSteps):
        raise InputError("these are a repeated schedule's whole steps, each standing for several: a file holds "
                         "every step once; save the RepeatedSteps itself (written expanded)")
    return s, None


def loads(text: str, progress: _Progress | None = None, *, expand: bool = True, name: str = "the schedule"):
    """Parse schedule JSON text: a ``Schedule``; a version-4 file's representatives and group are
    the schedule they stand for, expanded (``expand``) or as a ``SymmetricSchedule`` or
    ``RepeatedSteps`` (:func:`collsim.core.compact_file.from_file`)."""
    s, symmetry = _loads(text, progress)
    if symmetry is None:
        return s
    from .compact_file import from_file
    return from_file(s, symmetry, expand=expand, name=name)


def _loads(text: str, progress: _Progress | None) -> tuple[Schedule, dict | None]:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, and integers of over 4300 digits
        raise ScheduleFormatError(f"not valid JSON: {exc}") from exc
    system, coll = read_header(doc, ("steps",))
    from .compact_file import read_symmetry
    symmetry = read_symmetry(doc, doc["version"])
    steps = need(doc, "steps", list, "file")
    cols: dict[str, list] = {k: [] for k in ("step", "round", "src", "dst", "reduce", "nchunks")}
    chunks: list[int] = []
    reader = route_reader(system)
    known = TRANSFER_KEYS | reader.KEYS
    starts: list[int] = []  # the first transfer of each entry of "steps"
    t, prev = 0, -1
    for k, st in enumerate(steps):
        refuse_unknown(st, STEP_KEYS, f"steps[{k}]")
        sn = need(st, "step", int, f"steps[{k}]")
        if sn not in ((0,) if k == 0 else (prev, prev + 1)):
            what = f"the first step is numbered {sn}, not 0" if k == 0 else f"step {sn} follows step {prev}"
            raise ScheduleFormatError(f"steps[{k}]: {what}: {STEP_RULE}")
        prev = sn
        transfers = need(st, "transfers", list, f"steps[{k}]")
        if not transfers:
            raise ScheduleFormatError(f"steps[{k}]: step {sn} has no transfers (a step holds at least one)")
        starts.append(t)
        for j, tr in enumerate(transfers):
            where = position_name(k, j)
            refuse_unknown(tr, known, where)
            src, dst = need(tr, "src", int, where), need(tr, "dst", int, where)
            ch = need(tr, "chunks", list, where)
            if not all(is_integer(c) for c in ch):
                raise ScheduleFormatError(f"{where}: 'chunks' must be a list of integers")
            red = tr.get("reduce", False)
            if not isinstance(red, bool):
                raise ScheduleFormatError(f"{where}: 'reduce' must be true or false")
            rnd = optional(tr, "round", sn, where, lo=0)
            optional(tr, "bytes", 0, where, lo=0)  # informative: recomputed from the chunks
            reader.add(tr, sn, t, where)
            for name, val in (("step", sn), ("round", rnd), ("src", src), ("dst", dst), ("reduce", red),
                              ("nchunks", len(ch))):
                cols[name].append(val)
            chunks.extend(ch)
            t += 1
        if progress is not None:
            progress(k + 1, len(steps))

    def where_of(i: int) -> str:
        return transfer_position(None, i, starts)

    ptr = np.zeros(t + 1, dtype=INDEX)
    np.cumsum(np.asarray(cols["nchunks"], dtype=INDEX), out=ptr[1:])
    chunk_idx = int_column(chunks, INDEX, "chunks", lambda i: where_of(int(np.searchsorted(ptr, i, side="right")) - 1))
    step = np.asarray(cols["step"], dtype=INDEX)
    # some step written in several entries: messages name the file's entries (given when built, never set after)
    entries = {} if len(starts) == (int(step.max()) + 1 if len(step) else 0) else {
        "file_entries": np.asarray(starts, dtype=INDEX)}
    s = Schedule(system=system, collective=coll, algorithm=str(doc.get("algorithm", "file")),
                 params=doc.get("params") if isinstance(doc.get("params"), dict) else {},
                 step=step, round=np.asarray(cols["round"], dtype=INDEX),
                 src=np.asarray(cols["src"], dtype=INDEX), dst=np.asarray(cols["dst"], dtype=INDEX),
                 chunk_ptr=ptr, chunk_idx=chunk_idx, reduce=np.asarray(cols["reduce"], dtype=bool),
                 routes=reader.finish(where_of), _cache=entries)
    check_wellformed(s)
    return s, symmetry


def _parse_text(text: str, progress: _Progress | None = None, expand: bool = True, name: str = "the schedule"):
    try:
        return loads(text, progress, expand=expand, name=name)
    except CollsimError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise ScheduleFormatError(f"malformed schedule: {exc}") from exc


def load(path: str | Path, progress: _Progress | None = None, *, expand: bool = True):
    """Read a schedule file (JSON, or ``.npz``).

    Parameters
    ----------
    path : str or Path
        File to read.
    progress : callable, optional
        ``progress(done, total)`` per step read (JSON; :func:`loads`).
    expand : bool, optional
        A file of representatives and their group (version 4, ``save(..., expand=False)``) is
        read expanded (the default; refused with its estimate where that would not fit), or with
        False as the ``SymmetricSchedule`` or ``RepeatedSteps`` it holds.

    Returns
    -------
    Schedule
        The schedule (well-formed, not yet verified); with ``expand=False``, a version-4 file's
        compact form.

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
        return read_npz(path, expand=expand)
    data = read_bytes(path, error=ScheduleFormatError)  # a regular file (or a pipe) up to MAX_READ_BYTES
    return load_bytes(data, str(path), progress, expand=expand)  # by content: a pipe (<(cat s.npz)) has no suffix


def load_bytes(data: bytes, name: str = "the input", progress: _Progress | None = None, *, expand: bool = True):
    """Read a schedule from bytes: ``.npz`` if they start as a zip archive does, else JSON
    (``expand`` as :func:`load`)."""
    if data[:4] == b"PK\x03\x04":  # numpy's .npz is a zip archive
        return read_npz(io.BytesIO(data), name=name, expand=expand)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScheduleFormatError(f"cannot read {name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    return _parse_text(text, progress, expand, name)
