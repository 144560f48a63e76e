"""Parsing and formatting of sizes, bandwidths and times.

Sizes use binary prefixes for ``KiB/MiB/GiB`` and, as in MPI benchmarks,
also for the bare ``KB/MB/GB`` spellings of *message sizes* (``32KB`` is
32768 bytes, the papers' usage).  Bandwidths use decimal prefixes
(``1GB/s`` is 10^9 bytes/s, ``100Gb/s`` is 12.5e9 bytes/s).
"""

from __future__ import annotations

import re

from .errors import InputError
from .validate import is_integer, is_number, positive_integer

_SIZE_UNITS = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    "k": 1024, "kb": 1024, "kib": 1024,
    "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
    "g": 1024**3, "gb": 1024**3, "gib": 1024**3,
    "t": 1024**4, "tb": 1024**4, "tib": 1024**4,
}
_DEC = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_TIME_DIVISORS = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9, "ps": 1e12}
_NUM = r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"


def parse_size(text: str | int) -> int:
    """Parse a message size into bytes.

    Parameters
    ----------
    text : str or int
        ``"4MiB"``, ``"32KB"``, ``"1048576"`` or an int.

    Returns
    -------
    int
        Size in bytes, >= 1.

    Raises
    ------
    InputError
        If the text is not a positive size.

    Examples
    --------
    >>> parse_size("4MiB"), parse_size("32KB"), parse_size("1048576")
    (4194304, 32768, 1048576)
    """
    if isinstance(text, bool):
        raise InputError(f"invalid size {text!r}")
    if is_integer(text):
        value = float(text)
    else:
        m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", str(text).strip())
        if not m or m.group(2).lower() not in _SIZE_UNITS:
            raise InputError(f"invalid size {text!r}: use e.g. 4MiB, 32KB or 1048576")
        value = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if value != int(value) or value < 1:
        raise InputError(f"invalid size {text!r}: must be a positive whole number of bytes")
    return int(value)


def parse_bandwidth(text: str | float) -> float:
    """Parse a bandwidth into bytes per second (decimal prefixes).

    Parameters
    ----------
    text : str or float
        ``"10GB/s"`` (bytes), ``"100Gb/s"`` (bits), ``"5e9"`` (bytes/s).

    Returns
    -------
    float
        Bandwidth in bytes per second, > 0.

    Raises
    ------
    InputError
        If the text is not a positive bandwidth.

    Examples
    --------
    >>> parse_bandwidth("100Gb/s"), parse_bandwidth("1GB/s")
    (12500000000.0, 1000000000.0)
    """
    if is_number(text):
        value = float(text)
    else:
        m = re.fullmatch(_NUM + r"\s*([kKmMgGtT]?)([bB]?)(?:/s|ps)?", str(text).strip())
        if not m:
            raise InputError(f"invalid bandwidth {text!r}: use e.g. 10GB/s, 100Gb/s or 5e9")
        value = float(m.group(1)) * _DEC[m.group(2).lower()]
        if m.group(3) == "b":
            value /= 8.0
    if not value > 0 or value == float("inf"):
        raise InputError(f"invalid bandwidth {text!r}: must be positive")
    return value


def parse_time(text: str | float) -> float:
    """Parse a duration into seconds.

    Parameters
    ----------
    text : str or float
        ``"1us"``, ``"500ns"``, ``"25e-6"`` (seconds).

    Returns
    -------
    float
        Duration in seconds, >= 0.

    Raises
    ------
    InputError
        If the text is not a non-negative duration.

    Examples
    --------
    >>> parse_time("500ns")
    5e-07
    """
    if is_number(text):
        value = float(text)
    else:
        m = re.fullmatch(_NUM + r"\s*(s|ms|us|µs|ns|ps)?", str(text).strip())
        if not m:
            raise InputError(f"invalid time {text!r}: use e.g. 1us, 500ns or 2.5e-5")
        value = float(m.group(1)) / _TIME_DIVISORS[m.group(2) or "s"]
    if not value >= 0 or value == float("inf"):
        raise InputError(f"invalid time {text!r}: must be non-negative")
    return value


def format_size(size_bytes: int) -> str:
    """Format bytes with binary prefixes, e.g. ``4MiB``.

    Parameters
    ----------
    size_bytes : int
        Number of bytes.

    Returns
    -------
    str
        Compact representation.

    Examples
    --------
    >>> format_size(4194304), format_size(1000)
    ('4MiB', '1000B')
    """
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size_bytes >= factor and size_bytes % factor == 0:
            return f"{size_bytes // factor}{unit}"
    return f"{size_bytes}B"


def format_time(time_s: float) -> str:
    """Format seconds with an SI prefix, e.g. ``1.234 ms``.

    Parameters
    ----------
    time_s : float
        Duration in seconds.

    Returns
    -------
    str
        Four significant digits with a unit.

    Examples
    --------
    >>> format_time(0.0012345)
    '1.234 ms'
    """
    for unit, factor in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(time_s) >= factor:
            return f"{time_s / factor:.4g} {unit}"
    return f"{time_s / 1e-9:.4g} ns"


def require_positive_int(name: str, value: object) -> int:
    """Check that ``value`` is a positive integer (alias of :func:`collsim.core.validate.positive_integer`).

    Parameters
    ----------
    name : str
        Parameter name, used in the message.
    value : object
        Value to check.

    Returns
    -------
    int
        The value, as a Python ``int`` (numpy integers are accepted).

    Raises
    ------
    InputError
        If the value is not an integer >= 1.

    Examples
    --------
    >>> require_positive_int("chunks", 4)
    4
    """
    return positive_integer(name, value)
