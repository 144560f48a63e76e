"""Memory limits: refuse work that would not fit, before allocating it.

collsim keeps every schedule and every verifier state explicit, so an instance
can need more memory than the machine has.  Code that is about to allocate
something large estimates its size in bytes and calls :func:`check_memory`,
which raises :class:`MemoryLimitError` (an :class:`~collsim.core.errors.InputError`:
one line, exit status 2 on the command line) when the estimate exceeds
:func:`memory_limit_bytes`.

The limit is half of the machine's physical memory (the smaller of
``SC_PHYS_PAGES * SC_PAGE_SIZE`` and a cgroup memory limit, if one is set), or
8 GiB when neither can be read.  The environment variable
``COLLSIM_MEMORY_LIMIT`` overrides it: a number of bytes (``4294967296``), a
size (``4GiB``, ``512MiB``; ``4GB`` is 4*10^9 bytes, as in
:func:`~collsim.core.units.parse_size`) or a share of physical memory
(``75%``).
"""

from __future__ import annotations

import os
import re

from .errors import InputError
from .units import parse_size

ENV_VAR = "COLLSIM_MEMORY_LIMIT"
DEFAULT_SHARE = 0.5
"""Share of physical memory collsim allows itself by default."""
FALLBACK_BYTES = 8 * 1024**3
"""Limit used when physical memory cannot be read."""

_CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


class MemoryLimitError(InputError):
    """An instance would need more memory than collsim's limit allows.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "1MiB"}):
    ...     check_memory(2**30, "a big thing")
    Traceback (most recent call last):
    ...
    collsim.core.limits.MemoryLimitError: a big thing needs about 1 GiB, above collsim's memory limit of 1 MiB (COLLSIM_MEMORY_LIMIT=1MiB): use fewer nodes or chunks
    >>> issubclass(MemoryLimitError, ValueError)       # an InputError
    True
    """


def physical_memory_bytes() -> int | None:
    """Physical memory available to this process, or None if unknown.

    Returns
    -------
    int or None
        ``SC_PHYS_PAGES * SC_PAGE_SIZE``, lowered to the cgroup memory limit if
        one is set and smaller.

    Examples
    --------
    >>> phys = physical_memory_bytes()     # machine-dependent
    >>> phys is None or phys > 0
    True
    """
    total = None
    try:
        total = int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
        if total <= 0:
            total = None
    except (AttributeError, ValueError, OSError):
        total = None
    for path in _CGROUP_FILES:
        try:
            with open(path, encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and 0 < int(text) < (total or 2**62):
            total = int(text)
    return total


def format_bytes(n: float) -> str:
    """Format a byte count for messages.

    Parameters
    ----------
    n : float
        Bytes.

    Returns
    -------
    str
        Three significant digits and a binary unit.

    Examples
    --------
    >>> format_bytes(3 * 2**29), format_bytes(300 * 2**20), format_bytes(512)
    ('1.5 GiB', '300 MiB', '512 B')
    """
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:.3g} {unit}"
    return f"{int(n)} B"


def parse_memory_limit(text: str) -> int:
    """Parse a ``COLLSIM_MEMORY_LIMIT`` value into bytes.

    Parameters
    ----------
    text : str
        ``"4GiB"``, ``"4294967296"``, ``"512MB"`` (512*10^6) or a share of physical memory
        such as ``"75%"``.

    Returns
    -------
    int
        The limit in bytes, >= 1.

    Raises
    ------
    InputError
        If the text is not a size or a percentage.

    Examples
    --------
    >>> parse_memory_limit("4GiB"), parse_memory_limit("1048576")
    (4294967296, 1048576)
    """
    raw = str(text).strip()
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*%", raw)
    if m:
        share = float(m.group(1)) / 100
        if not 0 < share <= 1:
            raise InputError(f"invalid {ENV_VAR}={text!r}: a percentage must be in (0, 100]")
        phys = physical_memory_bytes()
        return max(1, int(share * (phys if phys else FALLBACK_BYTES / DEFAULT_SHARE)))
    try:
        return parse_size(raw)
    except InputError:
        raise InputError(f"invalid {ENV_VAR}={text!r}: use bytes (4294967296), a size (4GiB, 512MiB) "
                         f"or a share of physical memory (75%)") from None


def memory_limit() -> tuple[int, str]:
    """The memory limit in bytes and where it comes from (for messages).

    Returns
    -------
    tuple
        ``(limit_bytes, source)``, e.g. ``(12345678848, "half of physical memory")``.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "4GiB"}):
    ...     memory_limit()
    (4294967296, 'COLLSIM_MEMORY_LIMIT=4GiB')
    """
    text = os.environ.get(ENV_VAR, "").strip()
    if text:
        return parse_memory_limit(text), f"{ENV_VAR}={text}"
    phys = physical_memory_bytes()
    if phys is None:
        return FALLBACK_BYTES, f"default; set {ENV_VAR} to change it"
    return int(phys * DEFAULT_SHARE), f"half of physical memory; set {ENV_VAR} to change it"


def memory_limit_bytes() -> int:
    """Bytes collsim may allocate for one instance (see the module docstring).

    Returns
    -------
    int
        ``COLLSIM_MEMORY_LIMIT`` if set, else half of physical memory, else 8 GiB.

    Raises
    ------
    InputError
        If ``COLLSIM_MEMORY_LIMIT`` is set but malformed.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "512MiB"}):
    ...     memory_limit_bytes()
    536870912
    """
    return memory_limit()[0]


def _meminfo_bytes(field: str) -> int | None:
    """A field of ``/proc/meminfo`` in bytes (``MemAvailable`` ...), or None where there is none."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    parts = line.split()
                    return int(parts[1]) * (1024 if parts[2:3] == ["kB"] else 1)
    except (OSError, ValueError, IndexError):
        return None
    return None


def resident_bytes() -> int | None:
    """This process's resident memory now (``VmRSS``), less the free memory its heap keeps for
    reuse (glibc's ``mallinfo2``, see :mod:`collsim._malloc`), or None where it cannot be read.

    Returns
    -------
    int or None
        ``VmRSS`` less the heap's free bytes, but at least what malloc has handed out
        (:func:`collsim._malloc.heap_used_bytes`) and at least 0; None where
        ``/proc/self/statm`` cannot be read (not Linux).

    Examples
    --------
    >>> rss = resident_bytes()     # machine-dependent
    >>> rss is None or rss > 0
    True
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            rss = int(f.read().split()[1]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    from .._malloc import heap_free_bytes, heap_used_bytes
    return max(rss - heap_free_bytes(), heap_used_bytes(), 0)


def address_space_left_bytes() -> int | None:
    """What an address-space limit (``ulimit -v``, ``RLIMIT_AS``) still lets this process map, or None.

    Returns
    -------
    int or None
        The soft limit less the address space mapped now, plus the heap's free bytes (reused
        without mapping more), at least 0; None without a limit or where it cannot be read.

    Examples
    --------
    >>> left = address_space_left_bytes()     # None without a limit
    >>> left is None or left >= 0
    True
    """
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/statm", encoding="ascii") as f:
            mapped = int(f.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ImportError, OSError, ValueError, IndexError, AttributeError):
        return None
    from .._malloc import heap_free_bytes
    return max(0, soft - mapped + heap_free_bytes())  # the heap's free blocks are reused without mapping more


def available_memory_bytes() -> int | None:
    """Memory the machine can give without swapping now (``MemAvailable`` of ``/proc/meminfo``), or None.

    Returns
    -------
    int or None
        ``MemAvailable`` in bytes; None where ``/proc/meminfo`` cannot be read or lacks it.

    Examples
    --------
    >>> avail = available_memory_bytes()     # machine-dependent
    >>> avail is None or avail >= 0
    True
    """
    return _meminfo_bytes("MemAvailable")


def memory_budget() -> tuple[int, bool]:
    """Bytes this process may still allocate now, and whether what it already holds is counted in.

    What work sized to fit (the verifier's blocks of contributor sets) is sized against.  The
    default limit (half of physical memory) is the whole process's: what the process already
    holds (its schedule, its indexes; ``VmRSS``) is subtracted from it.  An explicit
    ``COLLSIM_MEMORY_LIMIT`` bounds each piece of work, as every estimate checked by
    :func:`check_memory` is (the caller then counts what it has allocated itself).  Either way
    the budget is at most what the machine can give now (``MemAvailable``: other processes
    count too) and what an address-space limit (``ulimit -v``) still lets the process map.

    Returns
    -------
    tuple
        ``(bytes, held_counted)``: the budget (at least 0), and True when this process's
        resident memory was subtracted.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "1MiB"}):
    ...     memory_budget()
    (1048576, False)
    >>> budget, counted = memory_budget()     # machine-dependent
    >>> 0 <= budget <= memory_limit_bytes()
    True
    """
    limit = memory_limit_bytes()
    counted = False
    if not os.environ.get(ENV_VAR, "").strip():
        rss = resident_bytes()
        if rss is not None:
            limit, counted = limit - rss, True
    for avail in (available_memory_bytes(), address_space_left_bytes()):
        if avail is not None:
            limit = min(limit, avail)
    return max(0, int(limit)), counted


def memory_budget_bytes() -> int:
    """The bytes of :func:`memory_budget`.

    Returns
    -------
    int
        The budget in bytes (at least 0), without saying whether held memory was counted in.

    Examples
    --------
    >>> memory_budget_bytes() >= 0
    True
    """
    return memory_budget()[0]


def limit_error(estimate_bytes: float, what: str, hint: str = "use fewer nodes or chunks",
                limit: tuple[int, str] | None = None) -> MemoryLimitError:
    """The one-line error :func:`check_memory` raises, for callers that decide themselves.

    Parameters
    ----------
    estimate_bytes : float
        Estimated bytes.
    what : str
        What needs the memory.
    hint : str, optional
        What the user can reduce.
    limit : tuple, optional
        ``(limit_bytes, source)`` to name instead of this process's :func:`memory_limit` (another
        process's, when processes agree on one refusal).

    Returns
    -------
    MemoryLimitError
        Naming the estimate, the limit and where the limit comes from.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_VAR: "1GiB"}):
    ...     print(limit_error(3 * 2**30, "verifying allreduce on 4096 nodes"))
    verifying allreduce on 4096 nodes needs about 3 GiB, above collsim's memory limit of 1 GiB (COLLSIM_MEMORY_LIMIT=1GiB): use fewer nodes or chunks
    """
    limit_bytes, source = memory_limit() if limit is None else limit
    return MemoryLimitError(f"{what} needs about {format_bytes(estimate_bytes)}, above collsim's memory "
                            f"limit of {format_bytes(limit_bytes)} ({source}): {hint}")


def check_memory(estimate_bytes: float, what: str, hint: str = "use fewer nodes or chunks") -> None:
    """Refuse, with one line, work whose memory estimate exceeds the limit.

    Parameters
    ----------
    estimate_bytes : float
        Estimated peak bytes of the work about to start.
    what : str
        What needs the memory, e.g. ``"verifying allreduce on 4096 nodes"``.
    hint : str, optional
        What the user can reduce.

    Returns
    -------
    None

    Raises
    ------
    MemoryLimitError
        If ``estimate_bytes`` exceeds :func:`memory_limit_bytes`.

    Examples
    --------
    >>> check_memory(1024, "a tiny thing")
    """
    if estimate_bytes > memory_limit_bytes():
        raise limit_error(estimate_bytes, what, hint)
