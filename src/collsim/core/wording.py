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
    """A number with at least ``digits`` significant digits, without an exponent from 1e-4 up (``"-"`` for None).

    Parameters
    ----------
    value : float or None
        The number.
    digits : int, optional
        Significant digits kept below ``10**digits`` (default 4); larger numbers keep every
        integer digit.
    strip : bool, optional
        Drop trailing zeros after the decimal point (default True; False keeps a column's
        digits aligned: ``28.0`` beside ``27.9``).

    Returns
    -------
    str
        Plain decimal text (below 1e-4 in magnitude, scientific): a table cell that reads the
        same at every width.

    Examples
    --------
    >>> format_number(1153.0), format_number(61.1432), format_number(0.000123456), format_number(12345678.9)
    ('1153', '61.14', '0.0001235', '12345679')
    >>> format_number(2.5e-12)   # below 1e-4: an exponent, still every digit
    '2.500e-12'
    >>> format_number(None), format_number(0), format_number(1023.5, 6), format_number(28.0, 3, strip=False)
    ('-', '0', '1023.5', '28.0')
    """
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
    """A count and its noun, singular for one and plural otherwise: ``1 step``, ``3 steps``, ``0 wavelengths``.

    Parameters
    ----------
    count : int
        How many.
    noun : str
        The singular (``"step"``).
    plural : str, optional
        The plural when it is not ``noun + "s"`` (``"schedules"`` needs none; ``"switches"`` does).

    Returns
    -------
    str
        ``"<count> <noun>"``.

    Examples
    --------
    >>> counted(1, "step"), counted(3, "step"), counted(0, "wavelength"), counted(2, "switch", "switches")
    ('1 step', '3 steps', '0 wavelengths', '2 switches')
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
