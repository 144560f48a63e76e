"""Keep freed memory in the process heap (glibc) to avoid repeated page faults.

collsim's hot paths allocate and free numpy arrays of tens of millions of rows.
glibc serves each one with a fresh ``mmap`` and returns it on free, so every new
array pays first-touch page faults; on some machines (sandboxes, VMs) those
dominate the run time.  :func:`tune_malloc` asks glibc to serve large blocks from
the heap and keep freed memory for reuse.  The command line and the benchmarks
call it; the library never does so on import (a host program's allocator is its
own business), but library users may call it.  Measured effect in
docs/performance.md.
"""

from __future__ import annotations

import ctypes

M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_MAX = -4


def tune_malloc() -> bool:
    """Ask glibc to reuse freed heap memory instead of unmapping it.

    Returns
    -------
    bool
        True if glibc accepted the settings, False on other C libraries (no effect).

    Examples
    --------
    >>> isinstance(tune_malloc(), bool)
    True
    """
    try:  # glibc's soname first: ctypes.util.find_library runs ldconfig, which costs start-up time
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        from ctypes.util import find_library
        name = find_library("c")
        if not name:
            return False
        try:
            mallopt = ctypes.CDLL(name).mallopt
        except (OSError, AttributeError):
            return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(M_MMAP_MAX, 0)                 # large blocks from the heap, not mmap
    ok &= mallopt(M_TRIM_THRESHOLD, 2**31 - 1)  # keep freed memory for reuse
    ok &= mallopt(M_TOP_PAD, 256 * 2**20)       # grow the heap in large steps
    return bool(ok)
