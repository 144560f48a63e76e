"""Time limits: refuse work that would run for too long, before starting it.

The memory limits' sibling (:mod:`collsim.core.limits`): code about to start work whose cost
grows faster than its input (a synthesizer's search over a time-expanded network) estimates a
*floor* of its running time from closed forms, and calls :func:`check_time`, which raises
:class:`TimeLimitError` (an :class:`~collsim.core.errors.InputError`: one line, exit status 2 on
the command line) when even that floor exceeds :func:`time_limit`.  Estimates are floors
(measured rates of this machine's kind rounded up), so what is refused would take at least that
long; what is allowed may take a few times longer.

The limit is 10 minutes.  The environment variable ``COLLSIM_TIME_LIMIT`` overrides it: seconds
(``3600``, ``90s``) or ``none`` for no limit.
"""

from __future__ import annotations

import math
import os

from .errors import InputError
from .units import parse_time

ENV_VAR = "COLLSIM_TIME_LIMIT"
DEFAULT_S = 600.0
"""The default limit in seconds (10 minutes)."""

__all__ = ["DEFAULT_S", "ENV_VAR", "TimeLimitError", "check_time", "format_duration", "time_limit",
           "time_limit_error"]


class TimeLimitError(InputError):
    """Work whose estimated running time (a floor) exceeds collsim's time limit.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "60"}):
    ...     check_time(7200, "planning it", "use fewer nodes")
    Traceback (most recent call last):
    ...
    collsim.core.time_limit.TimeLimitError: planning it takes at least about 2 h, above collsim's time limit of 1 min (COLLSIM_TIME_LIMIT=60): use fewer nodes
    >>> issubclass(TimeLimitError, ValueError)       # an InputError
    True
    """


def format_duration(seconds: float) -> str:
    """A duration for messages: seconds, minutes, hours or days, two significant digits.

    Parameters
    ----------
    seconds : float
        The duration.

    Returns
    -------
    str
        ``"45 s"``, ``"12 min"``, ``"3.5 h"``, ``"40 days"``.

    Examples
    --------
    >>> format_duration(45), format_duration(720), format_duration(12600), format_duration(3.5e6)
    ('45 s', '12 min', '3.5 h', '41 days')
    >>> format_duration(3e9)
    '34722 days'
    """
    if math.isinf(seconds):
        return "no limit"
    unit, factor = (("days", 86400.0) if seconds >= 2 * 86400 else ("h", 3600.0) if seconds >= 2 * 3600
                    else ("min", 60.0) if seconds >= 60 else ("s", 1.0))
    value = seconds / factor
    return f"{value:.0f} {unit}" if value >= 100 else f"{value:.2g} {unit}"


def time_limit() -> tuple[float, str]:
    """The time limit in seconds and where it comes from (for messages).

    Returns
    -------
    tuple
        ``(seconds, source)``; seconds is ``inf`` for ``COLLSIM_TIME_LIMIT=none``.

    Raises
    ------
    InputError
        If ``COLLSIM_TIME_LIMIT`` is set but is neither a positive time nor ``none``.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "90s"}):
    ...     time_limit()
    (90.0, 'COLLSIM_TIME_LIMIT=90s')
    >>> with mock.patch.dict(os.environ, {ENV_VAR: ""}):
    ...     time_limit()
    (600.0, 'set COLLSIM_TIME_LIMIT to change it')
    """
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return DEFAULT_S, f"set {ENV_VAR} to change it"
    if text.lower() in ("none", "inf", "unlimited"):
        return math.inf, f"{ENV_VAR}={text}"
    try:
        seconds = parse_time(text)
    except InputError:
        seconds = -1.0
    if not seconds > 0:
        raise InputError(f"invalid {ENV_VAR}={text!r}: use seconds (600, 90s) or none")
    return seconds, f"{ENV_VAR}={text}"


def time_limit_error(estimate_s: float, what: str, hint: str) -> TimeLimitError:
    """The one-line error :func:`check_time` raises, for callers that decide themselves.

    Parameters
    ----------
    estimate_s : float
        The floor of the running time.
    what : str
        What would take that long, e.g. ``"planning allgather on 10000 nodes (5000 steps)"``.
    hint : str
        What the user can change.

    Returns
    -------
    TimeLimitError
        Naming the estimate, the limit and where the limit comes from.

    Examples
    --------
    >>> print(time_limit_error(3600, "synthesizing", "use fewer nodes"))   # doctest: +ELLIPSIS
    synthesizing takes at least about 60 min, above collsim's time limit of ... use fewer nodes
    """
    limit, source = time_limit()
    return TimeLimitError(f"{what} takes at least about {format_duration(estimate_s)}, above collsim's time "
                          f"limit of {format_duration(limit)} ({source}): {hint}")


def check_time(estimate_s: float, what: str, hint: str) -> None:
    """Refuse, with one line, work whose running-time floor exceeds the limit.

    Parameters
    ----------
    estimate_s : float
        A floor of the running time of the work about to start, in seconds.
    what : str
        What would take that long.
    hint : str
        What the user can change.

    Returns
    -------
    None

    Raises
    ------
    TimeLimitError
        If ``estimate_s`` exceeds :func:`time_limit`.

    Examples
    --------
    >>> check_time(1.0, "a quick thing", "nothing")
    """
    if estimate_s > time_limit()[0]:
        raise time_limit_error(estimate_s, what, hint)
