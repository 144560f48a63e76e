"""Checks of scalar parameters: integers, numbers and their ranges, in one place.

Every public entry point of collsim validates its sizes, counts and rates with
these functions, so the rules are the same everywhere:

* an *integer* is a Python ``int`` or a numpy integer (``np.int64(8)``); ``bool``
  is refused although it subclasses ``int``, and so is every float, even ``8.0``,
  and every string;
* a *number* is an integer or a Python / numpy float; ``bool`` and NaN are refused,
  and so are infinities unless ``finite=False``;
* a checked value comes back as a plain Python ``int`` or ``float``, so frozen
  dataclasses that store it stay JSON-able.

A failed check raises :class:`~collsim.core.errors.InputError` with one line
``"<name> must be <what is expected>, got <value>"``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .errors import InputError

__all__ = ["MAX_PHYSICAL", "MIN_RATE", "is_integer", "is_number", "integer", "optional_integer", "physical",
           "positive_integer", "node_count", "number", "optional_number"]

MAX_PHYSICAL = 1e30
"""Largest rate (bytes, bits or cycles per second), duration (seconds) or cycle count a system accepts.

A thousand billion times the fastest links and far beyond any latency, yet far enough from the
largest float (about 1.8e308) that sums over every link and step, and products of two such values,
stay finite: collsim's times, bounds and rates would otherwise overflow to infinity or lose every
digit (a 1e308 B/s port would overflow the matching's capacities)."""
MIN_RATE = 1e-30
"""Smallest rate a system accepts: below it a byte would take longer than :data:`MAX_PHYSICAL` seconds."""


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer by collsim's rule (int or numpy integer, not bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number by collsim's rule (int, float or numpy number, not bool).

    NaN and infinities are numbers here; :func:`number` refuses them.
    """
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _int_range(lo: int | None, hi: int | None) -> str:
    if lo is not None and hi is not None:
        return f" in {lo}..{hi}"
    if lo is not None:
        return f" >= {lo}"
    if hi is not None:
        return f" <= {hi}"
    return ""


def _checked_int(name: str, value: Any, lo: int | None, hi: int | None, expected: str) -> int:
    if is_integer(value):
        v = int(value)
        if (lo is None or v >= lo) and (hi is None or v <= hi):
            return v
        shown = str(v)
    else:
        shown = repr(value)
    raise InputError(f"{name} must be {expected}, got {shown}")


def integer(name: str, value: Any, *, lo: int | None = None, hi: int | None = None,
            what: str = "an integer") -> int:
    """Check that ``value`` is an integer in ``lo..hi`` (both inclusive) and return it as an ``int``."""
    return _checked_int(name, value, lo, hi, what + _int_range(lo, hi))


def optional_integer(name: str, value: Any, *, lo: int | None = None, hi: int | None = None,
                     what: str = "an integer") -> int | None:
    """Like :func:`integer`, but None passes through (an unset optional parameter)."""
    return None if value is None else integer(name, value, lo=lo, hi=hi, what=what)


def positive_integer(name: str, value: Any, *, what: str = "integer") -> int:
    """Check that ``value`` is an integer >= 1 and return it as an ``int``."""
    return _checked_int(name, value, 1, None, f"a positive {what}")


def node_count(value: Any, *, owner: str = "a system", lo: int = 2) -> int:
    """Check a number of nodes (an integer >= ``lo``) and return it as an ``int``."""
    if is_integer(value) and int(value) >= lo:
        return int(value)
    raise InputError(f"{owner} needs at least {lo} nodes, got {value!r}")


def _num_range(lo: float | None, lo_open: bool, hi: float | None, hi_open: bool, finite: bool) -> str:
    if hi is None and lo == 0:
        return "a positive number" if lo_open else "a non-negative number"
    if lo is not None and hi is not None:
        return f"a number in {'(' if lo_open else '['}{lo}, {hi}{')' if hi_open else ']'}"
    if lo is not None:
        return f"a number {'>' if lo_open else '>='} {lo}"
    if hi is not None:
        return f"a number {'<' if hi_open else '<='} {hi}"
    return "a finite number" if finite else "a number"


def number(name: str, value: Any, *, lo: float | None = 0, lo_open: bool = False,
           hi: float | None = None, hi_open: bool = False, finite: bool = True) -> float:
    """Check that ``value`` is a real number in a range and return it as a ``float``."""
    if is_number(value):
        v = float(value)
        ok = not math.isnan(v) and (not finite or math.isfinite(v))
        if ok and lo is not None:
            ok = v > lo if lo_open else v >= lo
        if ok and hi is not None:
            ok = v < hi if hi_open else v <= hi
        if ok:
            return v
    raise InputError(f"{name} must be {_num_range(lo, lo_open, hi, hi_open, finite)}, got {value!r}")


def optional_number(name: str, value: Any, **bounds: Any) -> float | None:
    """Like :func:`number`, but None passes through (an unset optional parameter)."""
    return None if value is None else number(name, value, **bounds)


def physical(name: str, value: Any, *, rate: bool = False) -> float:
    """Check a system's physical parameter: a rate in ``[MIN_RATE, MAX_PHYSICAL]``, else a duration or count in
    ``[0, MAX_PHYSICAL]``.
    """
    v = number(name, value, lo=0, lo_open=rate)   # a number, finite, on the right side of zero
    if (MIN_RATE if rate else 0.0) <= v <= MAX_PHYSICAL:
        return v
    raise InputError(f"{name} must be a number in [{MIN_RATE if rate else 0:g}, {MAX_PHYSICAL:g}], got {v:g}: "
                     "collsim's times, bounds and sums of rates would overflow or lose every digit beyond that range")
