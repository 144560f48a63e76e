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
    """Work whose estimated running time (a floor) exceeds collsim's time limit."""


def format_duration(seconds: float) -> str:
    """A duration for messages: seconds, minutes, hours or days, two significant digits."""
    if math.isinf(seconds):
        return "no limit"
    unit, factor = (("days", 86400.0) if seconds >= 2 * 86400 else ("h", 3600.0) if seconds >= 2 * 3600
                    else ("min", 60.0) if seconds >= 60 else ("s", 1.0))
    value = seconds / factor
    return f"{value:.0f} {unit}" if value >= 100 else f"{value:.2g} {unit}"


def time_limit() -> tuple[float, str]:
    """The time limit in seconds and where it comes from (for messages)."""
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
    """The one-line error :func:`check_time` raises, for callers that decide themselves."""
    limit, source = time_limit()
    return TimeLimitError(f"{what} takes at least about {format_duration(estimate_s)}, above collsim's time "
                          f"limit of {format_duration(limit)} ({source}): {hint}")


def check_time(estimate_s: float, what: str, hint: str) -> None:
    """Refuse, with one line, work whose running-time floor exceeds the limit."""
    if estimate_s > time_limit()[0]:
        raise time_limit_error(estimate_s, what, hint)
