"""Numbers in user text: ASCII digits only, one rule for every number collsim reads.

:func:`parse_number` reads an integer or a number (``-S key=value`` values, numeric options,
counts written in text, environment variables); :mod:`collsim.core.units` reads sizes,
bandwidths and times by the same digit rule (:func:`ascii_digits`).  Python's ``int()`` and
``float()`` read the digits of every script (``int("４")`` is 4, ``float("٣")`` 3.0); collsim
reads ``0``-``9`` only and refuses the others in one line, rather than accept them in some
places and not in others (docs/units.md).
"""

from __future__ import annotations

from typing import Any

from .errors import InputError
from .validate import is_integer, is_number

__all__ = ["ascii_digits", "parse_number"]


def _shown(value: object) -> str:
    """Input echoed in a message, cut to 40 characters."""
    text = str(value)
    return text if len(text) <= 40 else text[:30] + "..." + text[-7:]


_REFUSE = object()


def parse_number(text: str | int | float, what: str = "number", *, integer: bool = False,
                 otherwise: Any = _REFUSE) -> Any:
    """Read an integer or a number from user text: the one rule for digits (ASCII only).

    Every number collsim reads from text goes through here or through
    :func:`~collsim.core.units.parse_size`, :func:`~collsim.core.units.parse_bandwidth` and
    :func:`~collsim.core.units.parse_time` (which follow the same rule, :func:`ascii_digits`): ``-S key=value``
    and ``-p key=value`` values, numeric command-line options (``-n``, ``-w``, ``--jobs`` ...),
    counts written in text (``-S dims=4x4``, a hierarchical dimension's size) and environment
    variables.  Python's ``int()`` and ``float()`` also read other scripts' digits (``int("４")``
    is 4): collsim does not, so that ``-S ports=２`` and ``-s ４MiB`` are both refused, in one
    line that says why.
    """
    if is_number(text):
        if integer and not is_integer(text):
            raise InputError(f"invalid {what} {text!r}: not an integer")
        return text
    raw = str(text).strip()
    value: Any = None
    for cast in (int,) if integer else (int, float):
        try:
            value = cast(raw)
            break
        except ValueError:
            continue
    if value is None:
        if otherwise is not _REFUSE:
            return otherwise
        raise InputError(f"invalid {what} {_shown(text)!r}: not {'an integer' if integer else 'a number'}")
    ascii_digits(raw, what, text)
    return value


def ascii_digits(raw: str, what: str, shown: object = None) -> None:
    """Refuse text with digits other than ASCII 0-9 in it (what Python's ``int()`` would read, collsim does not)."""
    shown = raw if shown is None else shown
    if any(c.isdigit() and not c.isascii() for c in raw) or (not raw.isascii() and _python_reads(raw)):
        raise InputError(f"invalid {what} {_shown(shown)!r}: write numbers with the ASCII digits 0-9 "
                         "(collsim reads no other digits)")


def _python_reads(raw: str) -> bool:
    try:
        float(raw)
        return True
    except ValueError:
        return False
