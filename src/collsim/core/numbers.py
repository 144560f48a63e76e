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

    Parameters
    ----------
    text : str, int or float
        The text (surrounding blanks ignored); an int or float is returned as it is (a float
        refused when ``integer``).
    what : str, optional
        What the number is, for the message (``"-S ports"``).
    integer : bool, optional
        Accept integers only (``"8"``, not ``"8.0"`` or ``"1e3"``).
    otherwise : object, optional
        Returned, instead of raising, for text that is no number at all (a word): ``-S name=r8``
        is a string.  Text that is a number in other digits is refused all the same.

    Returns
    -------
    int or float
        An int for integer text (exact, any size), else a float.

    Raises
    ------
    InputError
        For a number written with digits other than ASCII ``0``-``9`` (full-width ``４``,
        Arabic-Indic ``٤`` ...), or for text that is no number (unless ``otherwise`` is given).

    Examples
    --------
    >>> parse_number("8"), parse_number("2.5e-7"), parse_number(" -3 "), parse_number("r8", otherwise="r8")
    (8, 2.5e-07, -3, 'r8')
    >>> parse_number("２", "-S ports")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: invalid -S ports '２': write numbers with the ASCII digits 0-9 (collsim reads no other digits)
    >>> parse_number("8.0", "nodes", integer=True)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: invalid nodes '8.0': not an integer
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
    """Refuse text with digits other than ASCII 0-9 in it (what Python's ``int()`` would read, collsim does not).

    Parameters
    ----------
    raw : str
        The text.
    what : str
        What it is, for the message (``"size"``).
    shown : object, optional
        The input as given, echoed in the message (default ``raw``).

    Returns
    -------
    None

    Raises
    ------
    InputError
        If any character is a digit of another script (full-width ``４``, Arabic-Indic ``٤``,
        superscript ``²`` ...), or the text is a number Python reads but is not ASCII.

    Examples
    --------
    >>> ascii_digits("4MiB", "size")
    >>> ascii_digits("４MiB", "size")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: invalid size '４MiB': write numbers with the ASCII digits 0-9 (collsim reads no other digits)
    """
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
