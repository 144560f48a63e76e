"""How numbers and counts read in text: table cells and the facts a command prints.

:func:`format_number` writes a table cell that reads the same at every width;
:func:`counted` puts a count beside its noun in the right number (``1 step``, ``3 steps``).
The kinds' cells and facts (:mod:`collsim.kinds`) and the commands use them; sizes, times and
bandwidths have their own formatters beside their parsers (:mod:`collsim.core.units`).
"""

from __future__ import annotations

import math

__all__ = ["counted", "format_number"]


def format_number(value: float | None, digits: int = 4, *, strip: bool = True) -> str:
    """A number with at least ``digits`` significant digits, without an exponent from 1e-4 up (``"-"`` for None)."""
    if value is None:
        return "-"
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return f"{value:g}"
    if abs(value) < 1e-4:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if strip and "." in text else text


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun, singular for one and plural otherwise: ``1 step``, ``3 steps``, ``0 wavelengths``."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
