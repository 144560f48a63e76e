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

    Parameters
    ----------
    obj : object
        The parsed object (anything but a dict passes: its own check reports it).
    known : set of str
        The keys allowed there.
    where : str
        Where the object is, for the message (``"steps[0].transfers[2]"``, ``"collective"``).

    Returns
    -------
    None

    Raises
    ------
    ScheduleFormatError
        Naming the unknown keys, the closest known one and the known keys.

    Examples
    --------
    >>> refuse_unknown({"src": 0, "reduse": True}, {"src", "dst", "reduce"}, "steps[0].transfers[1]")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: steps[0].transfers[1]: unknown key reduse; did you mean reduce? Known: dst, reduce, src
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
    """A required field of a file's object, checked for its type (integers: int64, ``>= lo``).

    Parameters
    ----------
    obj : dict
        The parsed object (anything else counts as missing the field).
    key : str
        Field name.
    kind : type
        ``int`` (collsim's integers: not bool, not float) or the type to check with ``isinstance``.
    where : str
        Where the object is, for the message (``"steps[0].transfers[2]"``).
    lo : int, optional
        Smallest allowed integer.

    Returns
    -------
    object
        The value (a Python ``int`` for ``kind=int``).

    Raises
    ------
    ScheduleFormatError
        Missing, of the wrong type, beyond int64 or below ``lo``.

    Examples
    --------
    >>> need({"step": 3}, "step", int, "steps[3]")
    3
    >>> need({"step": 2**63}, "step", int, "steps[0]")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: steps[0]: 'step' is 9223372036854775808, out of range: collsim's integers are int64, -9223372036854775808..9223372036854775807
    """
    if not isinstance(obj, dict) or key not in obj:
        raise ScheduleFormatError(f"{where}: missing '{key}'")
    return _typed(obj[key], key, kind, where, lo)


def optional(obj: dict, key: str, default: int, where: str, lo: int | None = None) -> int:
    """An optional integer field: ``default`` when absent or null, else checked as by :func:`need`.

    Parameters
    ----------
    obj : dict
        The parsed object.
    key : str
        Field name.
    default : int
        Value when the field is absent or null.
    where : str
        Where the object is, for the message.
    lo : int, optional
        Smallest allowed value.

    Returns
    -------
    int
        The value.

    Raises
    ------
    ScheduleFormatError
        Not an integer, beyond int64 or below ``lo``.

    Examples
    --------
    >>> optional({}, "round", 4, "steps[4].transfers[0]"), optional({"round": None}, "round", 4, "t")
    (4, 4)
    >>> optional({"bytes": -1}, "bytes", 0, "steps[0].transfers[0]", lo=0)
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: steps[0].transfers[0]: 'bytes' must be >= 0, got -1
    """
    value = obj.get(key)
    return default if value is None else _typed(value, key, int, where, lo)


def check_ints(obj, where: str) -> None:
    """Refuse any integer beyond int64 anywhere in a parsed JSON value (a file header's system, say).

    Parameters
    ----------
    obj : object
        Parsed JSON: dicts and lists are searched.
    where : str
        Its name, for the message; keys and indices are appended.

    Returns
    -------
    None

    Raises
    ------
    ScheduleFormatError
        Naming the first integer out of range.

    Examples
    --------
    >>> check_ints({"kind": "optical-ring", "fibers": 2**63}, "system")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: system.fibers is 9223372036854775808, out of range: collsim's integers are int64, -9223372036854775808..9223372036854775807
    """
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

    Parameters
    ----------
    values : list of int
        The integers (already checked to be integers).
    dtype : numpy dtype
        The column's type (``int64``, or a narrower one such as ``int16`` for fibers).
    field : str
        Field name, for the message.
    where_of : callable
        ``where_of(i)`` names the place of value ``i`` (``"steps[0].transfers[2]"``).

    Returns
    -------
    numpy.ndarray
        The column.

    Raises
    ------
    ScheduleFormatError
        A value beyond int64 or beyond ``dtype``.

    Examples
    --------
    >>> int_column([2**53 + 1], np.int64, "chunks", str).tolist() == [2**53 + 1]
    True
    >>> int_column([0, 70000], np.int16, "fiber", lambda i: f"transfer {i}")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: transfer 1: 'fiber' is 70000, out of range: collsim stores it as int16, -32768..32767
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
    """A collector of the route fields of the transfers of a schedule file on ``system``.

    Parameters
    ----------
    system : System
        Any system whose kind registered a route format (:func:`collsim.core.plugins.route_format_for`):
        an optical ring reads direction, hops, fiber, wavelength and band, a network link ids.

    Returns
    -------
    object
        ``add(transfer, step, t, where)`` per transfer, then ``finish(where_of)`` gives
        the schedule's routes part; ``KEYS`` are the route fields a transfer may have.

    Examples
    --------
    >>> from collsim.kinds.optical_ring import OpticalRing
    >>> r = route_reader(OpticalRing(nodes=4))
    >>> r.add({"path": [1, 0, 3], "src": 1, "dst": 3, "fiber": 0, "wavelength": 5}, 0, 0, "t0")
    >>> routes = r.finish(str)
    >>> routes.direction.tolist(), routes.hops.tolist(), routes.wavelength.tolist()
    ([-1], [2], [5])
    """
    return route_format_for(system).reader(system)  # the system's kind registered it
