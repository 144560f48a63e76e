"""The one reading of a command's ALGORITHM|FILE argument (``simulate``, ``mpi``, ``export msccl``,
``export simgrid --schedule``).

The rule, in this order:

1. ``-`` is a schedule on standard input;
2. a registered algorithm's name or alias (any case) is that algorithm, **even when a file of the
   same name exists** in the working folder: a stray file never changes what a command means.
   Write ``./ring`` for a schedule file named ``ring``;
3. a path that exists is a schedule file (a folder is refused by the loader,
   :func:`collsim.core.schedule_file.load_schedule`);
4. a name ending in ``.json`` or ``.npz`` that does not exist is a missing schedule file;
5. anything else is refused with a did-you-mean over the algorithms and the words "no such file".

Loading this module imports neither numpy nor the library.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .io import STDIO

SCHEDULE_SUFFIXES = (".json", ".npz")
"""The suffixes of schedule files (:func:`collsim.core.serialize.save`)."""


@dataclass(frozen=True)
class Target:
    """What an ALGORITHM|FILE argument names."""

    text: str
    is_file: bool
    algorithm: str | None = None


def resolve_target(text: str) -> Target:
    """Read an ALGORITHM|FILE argument by the module's rule."""
    from ..core.errors import ScheduleFormatError, UnknownNameError
    if text == STDIO:
        return Target(text, True)
    from ..algorithms import get_algorithm
    try:
        return Target(text, False, get_algorithm(text).name)
    except UnknownNameError as exc:
        unknown = exc
    if Path(text).exists():
        return Target(text, True)
    if text.lower().endswith(SCHEDULE_SUFFIXES):
        raise ScheduleFormatError(f"cannot read schedule file {text}: it does not exist")
    said, prefix = str(unknown), f"unknown algorithm {text!r}"
    rest = said[len(prefix):] if said.startswith(prefix) else f": {said}"
    raise UnknownNameError(f"{text!r} is neither an algorithm nor a file that exists{rest}") from None


__all__ = ["SCHEDULE_SUFFIXES", "Target", "resolve_target"]
