"""Parsing and formatting of sizes, bandwidths and times: one unit rule.

Sizes and bandwidths follow the same rule (docs/units.md):

* SI prefixes are decimal: ``k``/``K`` = 10^3, ``M`` = 10^6, ``G`` = 10^9,
  ``T`` = 10^12, ``P`` = 10^15, ``E`` = 10^18 (``32kB`` is 32000 bytes);
* IEC prefixes are binary: ``Ki`` = 2^10, ``Mi`` = 2^20, ``Gi`` = 2^30,
  ``Ti`` = 2^40, ``Pi`` = 2^50, ``Ei`` = 2^60 (``32KiB`` is 32768 bytes);
* ``B`` (or ``byte``/``bytes``) is bytes and ``b`` (or ``bit``/``bits``) is
  bits: ``4Mb`` is 4*10^6 bits = 500000 bytes, ``100Gb/s`` is 12.5*10^9 bytes/s;
* a bare number, or a prefix without ``B``/``b``, counts bytes (sizes) or
  bytes per second (bandwidths).

Prefixes and units are case-sensitive except ``k``/``K`` (``m`` would be milli,
so ``4mb`` is refused rather than guessed; ``kib`` is not ``Ki``): a unit that is
valid in another case (``4kib``, ``4KIB``, ``4mib``, ``100gb/s``) is refused with
the valid spellings it could mean (``4KiB`` or ``4Kib``).  Numbers are read exactly, never
through a float: ``9007199254740993`` stays that integer, ``1.5KiB`` is 1536
bytes.  A size must be a whole number of bytes from 1 to :data:`MAX_SIZE_BYTES`
(2^63 - 1, the largest signed 64-bit integer: numpy holds every byte count as
``int64``); a size in bits that is not a whole number of bytes is refused.

:func:`format_size` and :func:`format_bandwidth` print the shortest exact form,
IEC for binary quantities (``4MiB``, ``1GiB/s``) and SI for decimal ones
(``32kB``, ``12.5GB/s``), so that parsing what they print gives the value back.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import InputError
from .numbers import ascii_digits as _ascii_digits
from .validate import is_integer, is_number, positive_integer

MAX_SIZE_BYTES = 2**63 - 1
"""Largest size collsim accepts, in bytes (the largest ``int64``; about 9.2 EB or 8 EiB)."""

SI_PREFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
"""Decimal prefixes (``K`` is accepted for ``k``)."""
IEC_PREFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
"""Binary prefixes (exactly so: ``ki``, ``KI``, ``mi`` are refused)."""

_PREFIX = {"": 1, **SI_PREFIXES, **IEC_PREFIXES}
_BASE = {"": 1, "B": 1, "byte": 1, "bytes": 1, "b": 8, "bit": 8, "bits": 8}  # divisor: bits per counted unit
_NUMBER = r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
_UNIT = r"(?P<prefix>[kKMGTPE]i?)?(?P<base>bytes?|bits?|B|b)?"
_SIZE_RE = re.compile(_NUMBER + r"\s*" + _UNIT)
_RATE_RE = re.compile(_NUMBER + r"\s*" + _UNIT + r"\s*(?P<per>/\s*s|ps)?")
_TIME_DIVISORS = {"s": 1.0, "ms": 1e3, "us": 1e6, "µs": 1e6, "ns": 1e9, "ps": 1e12}
_NUM = r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"
_MAX_DIGITS = 40  # significant digits read exactly; more is not a number anyone means
_SIZE_HELP = ("use a number of bytes with an optional SI (k, M, G, T: 10^3, 10^6 ...) or IEC (Ki, Mi, Gi, Ti: "
              "2^10, 2^20 ...) prefix and B (bytes) or b (bits), e.g. 4MiB, 32kB or 1048576")
_RATE_HELP = "use e.g. 10GB/s, 100Gb/s, 1GiB/s or 5e9 (bytes/s)"


def _exact(m: re.Match, text: object, what: str, hint: str, too_large: str, max_digits: int) -> Fraction:
    """The exact value of a matched number times its prefix, in bytes (bits divided by 8).

    ``max_digits`` bounds the integer digits of the number itself (before the prefix), so that
    ``1e999999`` is refused at once instead of being expanded.
    """
    digits_int, digits_frac = m.group("int") or "", m.group("frac") or ""
    if not (digits_int or digits_frac):
        raise InputError(f"invalid {what} {text!r}: {hint}")
    prefix = m.group("prefix") or ""
    if prefix not in _PREFIX:
        raise InputError(f"invalid {what} {text!r}: unknown prefix {prefix!r}; {hint}")
    raw_exp = (m.group("exp") or "0").lstrip("+-").lstrip("0")
    mantissa = (digits_int + digits_frac).lstrip("0")
    if not mantissa:
        return Fraction(0)
    if len(raw_exp) > 6:
        exp10 = None
    else:
        exp10 = int(m.group("exp") or 0) - len(digits_frac)
    negative = m.group("sign") == "-"
    if exp10 is None or len(mantissa) + exp10 > max_digits:
        if negative or (m.group("exp") or "").startswith("-"):
            raise InputError(f"invalid {what} {text!r}: {hint}")
        raise InputError(f"invalid {what} {text!r}: {too_large}")
    if exp10 < -(_MAX_DIGITS + 30) or len(mantissa) > _MAX_DIGITS:
        raise InputError(f"invalid {what} {text!r}: at most {_MAX_DIGITS} significant digits, and no smaller "
                         f"than 1e-{_MAX_DIGITS + 30}")
    value = int(mantissa) * Fraction(10) ** exp10
    value = value * _PREFIX[prefix] / _BASE[m.group("base") or ""]
    return -value if negative else value


def _case_hint(text: str) -> str:
    """A hint for prefixes written in the wrong case (``4mb``, ``1gib``, ``4kib``)."""
    unit = re.sub(r"^[\s0-9.eE+-]*", "", text)
    powers = {"k": (3, 10), "m": (6, 20), "g": (9, 30), "t": (12, 40), "p": (15, 50)}
    first = unit[:1].lower()
    if first in powers:
        dec, binary = powers[first]
        si = "k" if first == "k" else first.upper()
        return f"prefixes are case-sensitive ({si} = 10^{dec}, {first.upper()}i = 2^{binary}); "
    return ""


_SIZE_UNITS = frozenset(p + b for p in _PREFIX for b in _BASE)
_RATE_UNITS = frozenset(u + per for u in _SIZE_UNITS for per in ("", "/s", "ps"))
_LEADING_NUMBER = re.compile(_NUMBER)


def _miscased(raw: str, what: str, shown: object, rate: bool) -> None:
    """Refuse a unit that is valid only in another case (``4kib``, ``4KIB``, ``100gb/s``), naming the
    valid spellings it could mean with their values: one rule, in one place, for every size and rate."""
    number = _LEADING_NUMBER.match(raw)
    digits, unit = raw[:number.end()], re.sub(r"\s+", "", raw[number.end():])
    units = _RATE_UNITS if rate else _SIZE_UNITS
    if not digits or not unit or unit in units:
        return
    near = sorted((u for u in units if u.lower() == unit.lower()), key=lambda u: (_in_bits(u), u))
    if not near:
        return
    shown_near = []
    for u in near:
        try:
            value = format_bandwidth(parse_bandwidth(digits + u)) if rate else f"{parse_size(digits + u)} bytes"
        except InputError:
            shown_near.append(digits + u)
            continue
        if _in_bits(u):
            shown_near.append(f"{digits}{u} (bits: {value})")
        else:
            shown_near.append(f"{digits}{u}" + ("" if rate else f" ({value})"))
    prefix = re.match(r"[kKmMgGtTpPeE][iI]?", unit)
    prefix = prefix.group() if prefix else ""
    right = any(u.startswith(prefix) and (prefix.endswith("i") or u[len(prefix):][:1] != "i") for u in near)
    hint = "units are case-sensitive (B bytes, b bits); " if right else _case_hint(raw)
    raise InputError(f"invalid {what} {shown!r}: {hint}did you mean {' or '.join(shown_near)}?")


def _in_bits(unit: str) -> bool:
    return unit.removesuffix("/s").removesuffix("ps").endswith(("b", "bit", "bits"))


class _Shown(str):
    """Input echoed in a message: its repr, cut to 40 characters."""

    def __repr__(self) -> str:
        text = str.__repr__(self)
        return text if len(text) <= 40 else text[:30] + "..." + text[-7:]


def parse_size(text: str | int) -> int:
    """Parse a message size into bytes (SI prefixes decimal, IEC binary, ``B`` bytes, ``b`` bits).

    Parameters
    ----------
    text : str or int
        ``"4MiB"`` (4 * 2^20), ``"32kB"`` (32000), ``"4Mb"`` (4 * 10^6 bits), ``"1048576"``,
        ``"1.5KiB"``, or an int (numpy integers too).

    Returns
    -------
    int
        Size in bytes, from 1 to :data:`MAX_SIZE_BYTES`, computed exactly.

    Raises
    ------
    InputError
        If the text is not a size, not a whole number of bytes, not positive, or above
        :data:`MAX_SIZE_BYTES`.

    Examples
    --------
    >>> parse_size("4MiB"), parse_size("32KB"), parse_size("32KiB"), parse_size("4Mb")
    (4194304, 32000, 32768, 500000)
    >>> parse_size("9007199254740993"), parse_size("1.5KiB"), parse_size(2**40)
    (9007199254740993, 1536, 1099511627776)
    >>> parse_size("12b")
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: invalid size '12b': 12 bits is not a whole number of bytes
    """
    if isinstance(text, bool):
        raise InputError(f"invalid size {text!r}")
    too_large = f"above collsim's maximum size of 2^63 - 1 = {MAX_SIZE_BYTES} bytes (about 9.2EB)"
    if is_integer(text):
        value = Fraction(int(text))
    else:
        raw = str(text).strip()
        text = _Shown(text)
        _ascii_digits(raw, "size", text)
        _miscased(raw, "size", text, rate=False)
        m = _SIZE_RE.fullmatch(raw)
        if not m:
            raise InputError(f"invalid size {text!r}: {_case_hint(raw)}{_SIZE_HELP}")
        value = _exact(m, text, "size", _SIZE_HELP, too_large, 20)
        if value.denominator != 1 and (m.group("base") or "") in ("b", "bit", "bits"):
            raise InputError(f"invalid size {text!r}: {value * 8} bits is not a whole number of bytes")
    if value.denominator != 1:
        raise InputError(f"invalid size {text!r}: must be a whole number of bytes, got {float(value):g}")
    if value < 1:
        raise InputError(f"invalid size {text!r}: must be a positive whole number of bytes")
    if value > MAX_SIZE_BYTES:
        raise InputError(f"invalid size {text!r}: {too_large}")
    return int(value)


def parse_bandwidth(text: str | float) -> float:
    """Parse a bandwidth into bytes per second (the size rule, per second).

    Parameters
    ----------
    text : str or float
        ``"10GB/s"`` (10^10 bytes/s), ``"100Gb/s"`` or ``"100Gbps"`` (bits), ``"1GiB/s"``
        (2^30 bytes/s), ``"5e9"`` (bytes/s).

    Returns
    -------
    float
        Bandwidth in bytes per second, finite and > 0.

    Raises
    ------
    InputError
        If the text is not a positive finite bandwidth.

    Examples
    --------
    >>> parse_bandwidth("100Gb/s"), parse_bandwidth("1GB/s"), parse_bandwidth("1GiB/s")
    (12500000000.0, 1000000000.0, 1073741824.0)
    >>> parse_bandwidth("3770MiB/s"), parse_bandwidth(5e9)
    (3953131520.0, 5000000000.0)
    """
    if isinstance(text, bool):
        raise InputError(f"invalid bandwidth {text!r}")
    if is_number(text):
        value = float(text)
    else:
        raw = str(text).strip()
        text = _Shown(text)
        _ascii_digits(raw, "bandwidth", text)
        _miscased(raw, "bandwidth", text, rate=True)
        m = _RATE_RE.fullmatch(raw)
        if not m:
            raise InputError(f"invalid bandwidth {text!r}: {_case_hint(raw)}{_RATE_HELP}")
        value = float(_exact(m, text, "bandwidth", _RATE_HELP, "too large", 300))
    if not value > 0 or value == float("inf"):
        raise InputError(f"invalid bandwidth {text!r}: must be positive and finite")
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
        _ascii_digits(str(text).strip(), "time", text)
        m = re.fullmatch(_NUM + r"\s*(s|ms|us|µs|ns|ps)?", str(text).strip())
        if not m:
            raise InputError(f"invalid time {text!r}: use e.g. 1us, 500ns or 2.5e-5")
        value = float(m.group(1)) / _TIME_DIVISORS[m.group(2) or "s"]
    if not value >= 0 or value == float("inf"):
        raise InputError(f"invalid time {text!r}: must be non-negative")
    return value


_FORMAT_PREFIXES = (("", 1), *((p, f) for p, f in SI_PREFIXES.items() if p != "K"),
                    *IEC_PREFIXES.items())
_MAX_DECIMALS = 3


def _decimal(q: Fraction) -> str | None:
    """``q`` written exactly with at most three decimals, else None."""
    scaled = q * 10**_MAX_DECIMALS
    if scaled.denominator != 1:
        return None
    whole, part = divmod(int(scaled), 10**_MAX_DECIMALS)
    return str(whole) + (f".{part:0{_MAX_DECIMALS}d}".rstrip("0") if part else "")


def _best(value: Fraction) -> tuple[str, str] | None:
    """The shortest exact ``(number, prefix)`` of ``value``, or None if no prefix gives one.

    Candidates are every prefix (none, SI, IEC) not larger than the value whose quotient has at
    most three decimals; the shortest number wins, then the larger prefix.
    """
    best = None
    for prefix, factor in _FORMAT_PREFIXES:
        if factor > value and factor != 1:
            continue
        number = _decimal(value / factor)
        if number is not None:
            key = (len(number), -factor)
            if best is None or key < best[0]:
                best = (key, number, prefix)
    return None if best is None else best[1:]


def format_size(size_bytes: int) -> str:
    """Format bytes exactly: IEC for binary sizes (``4MiB``), SI for decimal ones (``32kB``).

    The shortest exact form wins among plain bytes and every SI and IEC prefix (at most three
    decimals), so :func:`parse_size` reads the text back to the same number.

    Parameters
    ----------
    size_bytes : int
        Number of bytes, >= 0.

    Returns
    -------
    str
        Compact representation, e.g. ``4MiB``, ``32kB``, ``1.5KiB``, ``1398101B``.

    Examples
    --------
    >>> format_size(4194304), format_size(32000), format_size(32768), format_size(1000)
    ('4MiB', '32kB', '32KiB', '1kB')
    >>> format_size(1536), format_size(500000), format_size(1398101), format_size(2**63 - 1)
    ('1.5KiB', '500kB', '1398101B', '9223372036854775807B')
    """
    value = int(size_bytes)
    if value <= 0:
        return f"{value}B"
    number, prefix = _best(Fraction(value)) or (str(value), "")
    return f"{number}{prefix}B"


def format_bandwidth(bytes_per_s: float) -> str:
    """Format a bandwidth in bytes/s: IEC for binary rates (``1GiB/s``), SI for decimal ones (``12.5GB/s``).

    Exact when some prefix gives at most three decimals (then :func:`parse_bandwidth` reads the
    text back to the same float); otherwise four significant digits with the largest SI prefix.

    Parameters
    ----------
    bytes_per_s : float
        Bandwidth in bytes per second.

    Returns
    -------
    str
        E.g. ``12.5GB/s``, ``1GiB/s``, ``3770MiB/s``, ``1.235MB/s``.

    Examples
    --------
    >>> format_bandwidth(12.5e9), format_bandwidth(2**30), format_bandwidth(3770 * 2**20)
    ('12.5GB/s', '1GiB/s', '3770MiB/s')
    >>> format_bandwidth(1234567.891), format_bandwidth(0.125)
    ('1.235MB/s', '0.125B/s')
    """
    value = float(bytes_per_s)
    if not value > 0 or value == float("inf"):
        return f"{value:g}B/s"
    exact = _best(Fraction(value))
    if exact is not None:
        return f"{exact[0]}{exact[1]}B/s"
    prefix, factor = "", 1
    for p, f in _FORMAT_PREFIXES:
        if p in SI_PREFIXES and factor < f <= value:
            prefix, factor = p, f
    return f"{value / factor:.4g}{prefix}B/s"


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
