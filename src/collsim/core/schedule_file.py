"""The one loader of "a schedule, or where to read one": a :class:`Schedule`, a path, or ``-``.

Every function that accepts a schedule or a schedule file (:func:`collsim.verify`,
:func:`collsim.pipeline.schedule_time_s`, :func:`collsim.mpi.executor.run_schedule`, the
command line's ``verify``, ``simulate``, ``mpi`` and ``export``) reads it through
:func:`load_schedule`, so they refuse the same things with the same words:

* a :class:`Schedule` is returned as it is;
* ``"-"`` with ``stdin=True`` (the command line) is standard input (``.npz`` if the bytes start
  as a zip archive does, JSON otherwise); a library call never reads standard input unasked;
* a path is read with :func:`collsim.core.serialize.load` (JSON, or ``.npz`` by its suffix); a
  folder, or a path that does not exist, is a :class:`ScheduleFormatError` naming it;
* anything else is an :class:`InputError` naming the caller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from .errors import InputError, ScheduleFormatError
from .schedule import Schedule

STDIO = "-"
"""The path that means standard input (and, for a schedule written, standard output)."""


def load_schedule(source: Schedule | str | os.PathLike, progress: Callable[[int, int], None] | None = None, *,
                  stdin: bool = False, what: str = "load_schedule", compact: bool = False) -> Schedule:
    """``source`` itself if it is a schedule, else the schedule read from the file (or ``-``) it names.

    ``compact``: a file of representatives and their group (version 4) is read as the
    ``SymmetricSchedule`` or ``RepeatedSteps`` it holds, and such a ``source`` is taken as it is;
    else (the default) such a file is expanded, refused with its estimate where that would not fit."""
    if isinstance(source, Schedule):
        return source
    if compact:
        from .repeated import RepeatedSteps
        from .symmetry import SymmetricSchedule
        if isinstance(source, (SymmetricSchedule, RepeatedSteps)):
            return source
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"{what} takes a Schedule or a schedule file's path, not {what_it_is(source)}")
    from .reading import read_bytes
    from .serialize import load, load_bytes
    if stdin and str(source) == STDIO:
        return load_bytes(read_bytes(None, error=ScheduleFormatError), "standard input", progress, expand=not compact)
    path = Path(source)
    if path.is_dir():
        raise ScheduleFormatError(f"cannot read schedule file {path}: it is a directory")
    if not path.exists():
        raise ScheduleFormatError(f"cannot read schedule file {path}: it does not exist")
    return load(path, progress, expand=not compact)  # through core.reading.read_bytes: no device, nothing above MAX_READ_BYTES


def what_it_is(value: Any) -> str:
    """What a wrong argument was, in words, for an error message."""
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


__all__ = ["STDIO", "load_schedule", "what_it_is"]
