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
    """An instance would need more memory than collsim's limit allows."""


def physical_memory_bytes() -> int | None:
    """Physical memory available to this process, or None if unknown."""
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
    """Format a byte count for messages."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:.3g} {unit}"
    return f"{int(n)} B"


def parse_memory_limit(text: str) -> int:
    """Parse a ``COLLSIM_MEMORY_LIMIT`` value into bytes."""
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
    """The memory limit in bytes and where it comes from (for messages)."""
    text = os.environ.get(ENV_VAR, "").strip()
    if text:
        return parse_memory_limit(text), f"{ENV_VAR}={text}"
    phys = physical_memory_bytes()
    if phys is None:
        return FALLBACK_BYTES, f"default; set {ENV_VAR} to change it"
    return int(phys * DEFAULT_SHARE), f"half of physical memory; set {ENV_VAR} to change it"


def memory_limit_bytes() -> int:
    """Bytes collsim may allocate for one instance (see the module docstring)."""
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
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            rss = int(f.read().split()[1]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    from .._malloc import heap_free_bytes, heap_used_bytes
    return max(rss - heap_free_bytes(), heap_used_bytes(), 0)


def address_space_left_bytes() -> int | None:
    """What an address-space limit (``ulimit -v``, ``RLIMIT_AS``) still lets this process map, or None."""
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
    """Memory the machine can give without swapping now (``MemAvailable`` of ``/proc/meminfo``), or None."""
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
    """The bytes of :func:`memory_budget`."""
    return memory_budget()[0]


def limit_error(estimate_bytes: float, what: str, hint: str = "use fewer nodes or chunks",
                limit: tuple[int, str] | None = None) -> MemoryLimitError:
    """The one-line error :func:`check_memory` raises, for callers that decide themselves."""
    limit_bytes, source = memory_limit() if limit is None else limit
    return MemoryLimitError(f"{what} needs about {format_bytes(estimate_bytes)}, above collsim's memory "
                            f"limit of {format_bytes(limit_bytes)} ({source}): {hint}")


def check_memory(estimate_bytes: float, what: str, hint: str = "use fewer nodes or chunks") -> None:
    """Refuse, with one line, work whose memory estimate exceeds the limit."""
    if estimate_bytes > memory_limit_bytes():
        raise limit_error(estimate_bytes, what, hint)
