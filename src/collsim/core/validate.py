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
    """Whether ``value`` is an integer by collsim's rule (int or numpy integer, not bool).

    Parameters
    ----------
    value : object
        Anything.

    Returns
    -------
    bool
        True for ``int`` and ``numpy.integer`` instances other than ``bool``.

    Examples
    --------
    >>> import numpy as np
    >>> is_integer(3), is_integer(np.int32(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number by collsim's rule (int, float or numpy number, not bool).

    NaN and infinities are numbers here; :func:`number` refuses them.

    Parameters
    ----------
    value : object
        Anything.

    Returns
    -------
    bool
        True for ``int``, ``float``, ``numpy.integer`` and ``numpy.floating``
        instances other than ``bool``.

    Examples
    --------
    >>> import numpy as np
    >>> is_number(2.5), is_number(np.float32(2.5)), is_number(False), is_number("2.5")
    (True, True, False, False)
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
    """Check that ``value`` is an integer in ``lo..hi`` (both inclusive) and return it as an ``int``.

    Parameters
    ----------
    name : str
        Parameter name used in the message; it may carry a prefix such as
        ``"mlfm: d"`` or ``"WRHT m"``.
    value : object
        The value to check: ``int`` or numpy integer.
    lo, hi : int, optional
        Inclusive bounds; None means unbounded on that side.
    what : str, optional
        What the value is, for the message (``"a node id"``, ``"an even integer"``);
        the range is appended.

    Returns
    -------
    int
        ``value`` as a Python ``int`` (exact for any size).

    Raises
    ------
    InputError
        If ``value`` is a bool, a float (even ``8.0``), a string or anything else that
        is not an integer, or lies outside ``lo..hi``.  The message reads
        ``"<name> must be <what> in <lo>..<hi>, got <value>"`` (``>= <lo>`` or
        ``<= <hi>`` with one bound), the same for a wrong type and a wrong value.

    Examples
    --------
    >>> import numpy as np
    >>> integer("wavelengths", np.int32(4), lo=1)
    4
    >>> type(integer("nodes", np.int64(8), lo=2))
    <class 'int'>
    >>> integer("m", 1, lo=2)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: m must be an integer >= 2, got 1
    >>> integer("shift q", 8, lo=1, hi=7)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: shift q must be an integer in 1..7, got 8
    >>> integer("k", 8.0)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: k must be an integer, got 8.0
    >>> integer("root", True, lo=0, hi=3, what="a node id")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: root must be a node id in 0..3, got True
    """
    return _checked_int(name, value, lo, hi, what + _int_range(lo, hi))


def optional_integer(name: str, value: Any, *, lo: int | None = None, hi: int | None = None,
                     what: str = "an integer") -> int | None:
    """Like :func:`integer`, but None passes through (an unset optional parameter).

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    value : object
        None, an ``int`` or a numpy integer.
    lo, hi : int, optional
        Inclusive bounds.
    what : str, optional
        What the value is, for the message.

    Returns
    -------
    int or None
        None, or ``value`` as a Python ``int``.

    Raises
    ------
    InputError
        If ``value`` is neither None nor an integer in range (see :func:`integer`).

    Examples
    --------
    >>> optional_integer("max_tx_channels", None, lo=1) is None
    True
    >>> optional_integer("last_layer_servers", 2, lo=1, hi=3)
    2
    >>> optional_integer("k", "3", lo=1)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: k must be an integer >= 1, got '3'
    """
    return None if value is None else integer(name, value, lo=lo, hi=hi, what=what)


def positive_integer(name: str, value: Any, *, what: str = "integer") -> int:
    """Check that ``value`` is an integer >= 1 and return it as an ``int``.

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    value : object
        The value to check.
    what : str, optional
        Noun after "a positive" in the message (``"integer"``, ``"number of bytes"``).

    Returns
    -------
    int
        ``value`` as a Python ``int``.

    Raises
    ------
    InputError
        ``"<name> must be a positive <what>, got <value>"`` for anything else.

    Examples
    --------
    >>> positive_integer("chunks", 4)
    4
    >>> positive_integer("wavelengths", 0)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: wavelengths must be a positive integer, got 0
    """
    return _checked_int(name, value, 1, None, f"a positive {what}")


def node_count(value: Any, *, owner: str = "a system", lo: int = 2) -> int:
    """Check a number of nodes (an integer >= ``lo``) and return it as an ``int``.

    Parameters
    ----------
    value : object
        The proposed node count.
    owner : str, optional
        What needs the nodes, for the message (``"a system"``, ``"a collective"``).
    lo : int, optional
        Smallest allowed count (2).

    Returns
    -------
    int
        ``value`` as a Python ``int``.

    Raises
    ------
    InputError
        ``"<owner> needs at least <lo> nodes, got <value>"`` for anything else.

    Examples
    --------
    >>> import numpy as np
    >>> node_count(np.uint16(64))
    64
    >>> node_count(1, owner="a collective")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: a collective needs at least 2 nodes, got 1
    """
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
    """Check that ``value`` is a real number in a range and return it as a ``float``.

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    value : object
        ``int``, ``float`` or a numpy integer or float.
    lo : float or None, optional
        Lower bound (0: non-negative by default); None for none.
    lo_open : bool, optional
        Exclude ``lo`` itself (``lo=0, lo_open=True``: positive).
    hi : float or None, optional
        Upper bound; None for none.
    hi_open : bool, optional
        Exclude ``hi`` itself.
    finite : bool, optional
        Refuse infinities (default).  NaN is always refused.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    InputError
        If ``value`` is a bool, a string, NaN, an infinity (with ``finite``) or out
        of range: ``"<name> must be a positive number, got <value>"`` (or
        ``a non-negative number``, ``a number > lo``, ``a number in (lo, hi)``, ...).

    Examples
    --------
    >>> import numpy as np
    >>> number("clock_hz", np.float32(1e9), lo_open=True)
    1000000000.0
    >>> number("link_latency_s", 0)
    0.0
    >>> number("link_latency_s", -1e-6)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: link_latency_s must be a non-negative number, got -1e-06
    >>> number("ber_target", 0.5, lo_open=True, hi=0.5, hi_open=True)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: ber_target must be a number in (0, 0.5), got 0.5
    >>> number("clock_hz", float("inf"), lo_open=True)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: clock_hz must be a positive number, got inf
    """
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
    """Like :func:`number`, but None passes through (an unset optional parameter).

    Parameters
    ----------
    name : str
        Parameter name used in the message.
    value : object
        None or a number.
    **bounds
        ``lo``, ``lo_open``, ``hi``, ``hi_open``, ``finite`` as for :func:`number`.

    Returns
    -------
    float or None
        None, or ``float(value)``.

    Raises
    ------
    InputError
        If ``value`` is neither None nor an acceptable number.

    Examples
    --------
    >>> optional_number("startup_s", None) is None, optional_number("startup_s", 2e-6)
    (True, 2e-06)
    """
    return None if value is None else number(name, value, **bounds)


def physical(name: str, value: Any, *, rate: bool = False) -> float:
    """Check a system's physical parameter: a rate in ``[MIN_RATE, MAX_PHYSICAL]``, else a duration or count in
    ``[0, MAX_PHYSICAL]``.

    Parameters
    ----------
    name : str
        Parameter name used in the message (as the user gave it).
    value : object
        ``int``, ``float`` or a numpy number.
    rate : bool, optional
        A rate (bandwidth, line rate, clock): positive, at least :data:`MIN_RATE`.

    Returns
    -------
    float
        ``float(value)``.

    Raises
    ------
    InputError
        One line naming the parameter, the range and why: beyond it collsim's arithmetic would
        overflow or lose every digit.

    Examples
    --------
    >>> physical("link_bandwidth_bytes_per_s", 12.5e9, rate=True), physical("link_latency_s", 0)
    (12500000000.0, 0.0)
    >>> physical("port_bandwidth_bytes_per_s", 1e308, rate=True)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: port_bandwidth_bytes_per_s must be a number in [1e-30, 1e+30], got 1e+308: collsim's times, bounds and sums of rates would overflow or lose every digit beyond that range
    """
    v = number(name, value, lo=0, lo_open=rate)   # a number, finite, on the right side of zero
    if (MIN_RATE if rate else 0.0) <= v <= MAX_PHYSICAL:
        return v
    raise InputError(f"{name} must be a number in [{MIN_RATE if rate else 0:g}, {MAX_PHYSICAL:g}], got {v:g}: "
                     "collsim's times, bounds and sums of rates would overflow or lose every digit beyond that range")
