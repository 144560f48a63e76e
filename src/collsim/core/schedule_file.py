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
                  stdin: bool = False, what: str = "load_schedule") -> Schedule:
    """``source`` itself if it is a schedule, else the schedule read from the file (or ``-``) it names.

    Parameters
    ----------
    source : Schedule, str or path
        A schedule; a schedule file (JSON or ``.npz``); or, with ``stdin``, ``"-"`` for standard input.
    progress : callable, optional
        ``progress(done, total)`` per step read from JSON (a progress bar's hook).
    stdin : bool, optional
        Read ``"-"`` as standard input (default False: ``"-"`` is a file's name).
    what : str, optional
        The caller's name, for the message when ``source`` is neither.

    Returns
    -------
    Schedule
        The schedule (well-formed, not yet verified).

    Raises
    ------
    ScheduleFormatError
        For a path that does not exist or is a folder, or a file that is unreadable or malformed.
    InputError
        For a ``source`` that is neither a schedule nor a path.

    Examples
    --------
    >>> import collsim, os, tempfile
    >>> s = collsim.build("ne", "paper", "allgather", 1024, nodes=4)
    >>> load_schedule(s) is s
    True
    >>> with tempfile.TemporaryDirectory() as d:
    ...     collsim.save(s, os.path.join(d, "ne.json"))
    ...     load_schedule(os.path.join(d, "ne.json")).algorithm
    'ne'
    >>> load_schedule("missing.json")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: cannot read schedule file missing.json: it does not exist
    >>> load_schedule(None, what="verify")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: verify takes a Schedule or a schedule file's path, not None
    """
    if isinstance(source, Schedule):
        return source
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"{what} takes a Schedule or a schedule file's path, not {what_it_is(source)}")
    from .reading import read_bytes
    from .serialize import load, load_bytes
    if stdin and str(source) == STDIO:
        return load_bytes(read_bytes(None, error=ScheduleFormatError), "standard input", progress)
    path = Path(source)
    if path.is_dir():
        raise ScheduleFormatError(f"cannot read schedule file {path}: it is a directory")
    if not path.exists():
        raise ScheduleFormatError(f"cannot read schedule file {path}: it does not exist")
    return load(path, progress)  # through core.reading.read_bytes: no device, nothing above MAX_READ_BYTES


def what_it_is(value: Any) -> str:
    """What a wrong argument was, in words, for an error message.

    Parameters
    ----------
    value : object
        The argument.

    Returns
    -------
    str
        ``"None"``, or its type's name with an article.

    Examples
    --------
    >>> what_it_is(None), what_it_is({}), what_it_is(3)
    ('None', 'a dict', 'an int')
    """
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


__all__ = ["STDIO", "load_schedule", "what_it_is"]
