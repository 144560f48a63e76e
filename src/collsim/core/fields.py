"""Reading the fields of a schedule file: typed, exact, range-checked, located.

Integers are read as integers, never through a float (``json`` parses them
exactly), and must fit collsim's columns: int64 everywhere, and the narrower
types of some route columns (``fiber`` int16, ``wavelength`` and ``band``
int32).  A value that does not fit is refused with one line naming where it is
(:class:`~collsim.core.errors.ScheduleFormatError`, exit status 2).  Routes are
read here too: a ``path`` must name existing nodes (vertices on networks), run
from the transfer's source to its destination, and on rings go one way round
(else :class:`~collsim.core.errors.RouteError`, exit status 1).  A ``dir`` or
``hops`` beside a ``path`` must agree with it, and a ``path`` on a 2-node ring
needs a ``dir`` (both ways round are one hop): else the file is malformed.
Every object of a file is checked for keys collsim does not know (:func:`refuse_unknown`).
"""

from __future__ import annotations

import numpy as np

from .errors import RouteError, ScheduleFormatError, Where, unknown_names
from .csr import INDEX
from .plugins import route_format_for
from .validate import is_integer


INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def _beyond_int64(where: str, value: int, key: str | None = None) -> ScheduleFormatError:
    what = f"{where}: '{key}' is" if key else f"{where} is"
    return ScheduleFormatError(f"{what} {value}, out of range: collsim's integers are int64, "
                               f"{INT64_MIN}..{INT64_MAX}")


def refuse_unknown(obj, known, where: str) -> None:
    """Refuse keys of a file's object that collsim does not read (a typo such as ``"reduse"``).

    Nothing in a schedule file is silently ignored: an unknown key is an error
    (exit status 2) with a did-you-mean, as in system files.
    """
    if isinstance(obj, dict) and not obj.keys() <= known:
        bad = [k for k in obj if k not in known]
        raise ScheduleFormatError(f"{where}: unknown key{'s' if len(bad) > 1 else ''} " + unknown_names(bad, known))


def _typed(value, key: str, kind, where: str, lo: int | None = None):
    if kind is int:
        if not is_integer(value):
            raise ScheduleFormatError(f"{where}: '{key}' must be an integer")
        value = int(value)
        if not INT64_MIN <= value <= INT64_MAX:
            raise _beyond_int64(where, value, key)
        if lo is not None and value < lo:
            raise ScheduleFormatError(f"{where}: '{key}' must be >= {lo}, got {value}")
        return value
    if not isinstance(value, kind):
        raise ScheduleFormatError(f"{where}: '{key}' has the wrong type")
    return value


def need(obj: dict, key: str, kind, where: str, lo: int | None = None):
    """A required field of a file's object, checked for its type (integers: int64, ``>= lo``)."""
    if not isinstance(obj, dict) or key not in obj:
        raise ScheduleFormatError(f"{where}: missing '{key}'")
    return _typed(obj[key], key, kind, where, lo)


def optional(obj: dict, key: str, default: int, where: str, lo: int | None = None) -> int:
    """An optional integer field: ``default`` when absent or null, else checked as by :func:`need`."""
    value = obj.get(key)
    return default if value is None else _typed(value, key, int, where, lo)


def check_ints(obj, where: str) -> None:
    """Refuse any integer beyond int64 anywhere in a parsed JSON value (a file header's system, say)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            check_ints(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            check_ints(value, f"{where}[{i}]")
    elif is_integer(obj) and not INT64_MIN <= obj <= INT64_MAX:
        raise _beyond_int64(where, obj)


def int_column(values: list, dtype, field: str, where_of) -> np.ndarray:
    """A file's integers as a numpy column of ``dtype``, or one line naming the first that does not fit.

    Never goes through a float: values are converted exactly or refused.
    """
    try:
        a = np.asarray(values, dtype=INDEX)
    except OverflowError:
        i = next(i for i, v in enumerate(values) if not INT64_MIN <= v <= INT64_MAX)
        raise _beyond_int64(where_of(i), values[i], field) from None
    if np.dtype(dtype) != a.dtype and a.size:
        info = np.iinfo(dtype)
        bad = np.flatnonzero((a < info.min) | (a > info.max))
        if bad.size:
            i = int(bad[0])
            raise ScheduleFormatError(f"{where_of(i)}: '{field}' is {int(a[i])}, out of range: collsim stores it "
                                      f"as {np.dtype(dtype).name}, {info.min}..{info.max}")
    return a.astype(dtype, copy=False)


_PLURAL = {"node": "nodes", "vertex": "vertices"}


def _path(tr: dict, vertices: int, what: str, step: int, t: int, where: str) -> list:
    """A transfer's ``path``: integers naming existing vertices, from ``src`` to ``dst``."""
    path = tr["path"]
    if not isinstance(path, list) or len(path) < 2 or not all(is_integer(v) for v in path):
        raise ScheduleFormatError(f"{where}: 'path' must be a list of at least 2 {what} ids")
    lo, hi = min(path), max(path)
    loc = Where(step=step, transfer=t, position=where)
    for v in (lo, hi):
        if not INT64_MIN <= v <= INT64_MAX:
            raise _beyond_int64(where, v, "path")
        if not 0 <= v < vertices:
            raise RouteError(f"path visits {what} {v}, which does not exist "
                             f"({_PLURAL[what]} are 0..{vertices - 1})", loc)
    if path[0] != tr["src"] or path[-1] != tr["dst"]:
        raise RouteError(f"path runs {path[0]}->{path[-1]} but the transfer is {tr['src']}->{tr['dst']}", loc)
    return path


def route_reader(system):
    """A collector of the route fields of the transfers of a schedule file on ``system``."""
    return route_format_for(system).reader(system)  # the system's kind registered it
