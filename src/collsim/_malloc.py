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
    """Ask glibc to reuse freed heap memory instead of unmapping it."""
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
    # keep freed memory for reuse: -1 turns automatic trimming off (mallopt(3)); the largest int,
    # 2**31 - 1, still let a free that left more than 2 GiB on top of the heap give it back (relay
    # on 4,096 nodes frees that much), and the next arrays paid their first touches again
    ok &= mallopt(M_TRIM_THRESHOLD, -1)
    ok &= mallopt(M_TOP_PAD, 256 * 2**20)       # grow the heap in large steps
    return bool(ok)


M_MMAP_THRESHOLD = -3
LARGE_BLOCK_BYTES = 32 * 2**20
"""Blocks from this size up are mapped on their own by :func:`map_large_blocks` (glibc's largest threshold)."""


def map_large_blocks() -> bool:
    """Undo :func:`tune_malloc` for large blocks: map each block of :data:`LARGE_BLOCK_BYTES` or more
    on its own, so that freeing it gives it back at once.

    For a process that runs one large build and exits (``collsim reproduce``'s build processes, which
    inherit the command's :func:`tune_malloc`): the heap kept its freed arrays for reuse, but in a
    heap fragmented by arrays of tens of millions of rows that raised the peak resident set (relay
    with k = 2 on 4,096 nodes: 4.26 GiB tuned, 3.71 GiB with large blocks mapped, for 32 s of CPU
    against 38 s).  Small blocks stay in the heap.
    """
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None) if libc is not None else None
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = mallopt(M_MMAP_MAX, 65536)                          # glibc's default number of mapped blocks
    ok &= mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES)       # a fixed threshold, not a sliding one
    return bool(ok)


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


def _mallinfo():
    libc = _libc()
    fn = getattr(libc, "mallinfo2", None) if libc is not None else None
    if fn is None:
        return None
    fn.restype = _Mallinfo2
    return fn()


def heap_free_bytes() -> int:
    """Bytes glibc's heap holds free for reuse (``mallinfo2().fordblks``; 0 where unknown).

    With :func:`tune_malloc` freed arrays stay in the heap and in the resident set, yet
    the next allocation reuses them (:func:`collsim.core.limits.resident_bytes`).
    """
    info = _mallinfo()
    return 0 if info is None else int(info.fordblks)


def heap_used_bytes() -> int:
    """Bytes malloc has handed out and not had back (``uordblks + hblkhd``; 0 where unknown)."""
    info = _mallinfo()
    return 0 if info is None else int(info.uordblks + info.hblkhd)


def release_memory() -> bool:
    """Give the heap's free pages back to the system (glibc ``malloc_trim(0)``).

    :func:`tune_malloc` keeps freed memory for reuse, which is what one build and verify
    want; between independent pieces of work (the algorithms of ``collsim compare``) the
    heap would otherwise keep the largest of them resident and grow with fragmentation
    (``compare -n 4096 -c allreduce`` reached 10.9 GiB after two algorithms of 6 GiB each).
    """
    libc = _libc()
    trim = getattr(libc, "malloc_trim", None) if libc is not None else None
    if trim is None:
        return False
    trim.argtypes = [ctypes.c_size_t]
    return bool(trim(0))
