"""Compressed sparse rows (CSR): the layout of a schedule's chunks and of link routes, and helpers on it.

A CSR pair ``(ptr, idx)`` keeps row ``r``'s entries in ``idx[ptr[r]:ptr[r+1]]``.  These helpers
permute rows, rank sorted values and cut rows into blocks of bounded size, all vectorised.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .errors import MalformedScheduleError

INDEX = np.int64
"""The integer type of every index column (transfers, chunks, links)."""


def canonical_column(values, dtype, name: str,
                     error: Callable[[str], Exception] = MalformedScheduleError) -> np.ndarray:
    """``values`` as a 1-D column of ``dtype``, collsim's own type for it.

    Integers of another width are converted only if every value fits (checked, never wrapped
    round), and integers into floats.  Anything else (floats or booleans for an integer column,
    integers for a boolean one, a 2-D array) raises ``error(message)`` naming the column.  A column already of ``dtype`` comes back as it is, so the check costs nothing there.
    A schedule holds its columns in these types whatever it was given: the checks form keys such as
    ``node * chunks + chunk`` from them, which a narrower type would wrap round.

    Examples
    --------
    >>> canonical_column(np.array([1, 2], np.int16), np.int64, "src").dtype
    dtype('int64')
    >>> canonical_column(np.array([0, 70000]), np.int16, "fiber")
    Traceback (most recent call last):
    ...
    collsim.core.errors.MalformedScheduleError: column 'fiber' holds 70000, out of range: collsim stores it as int16, -32768..32767
    """
    a = np.asarray(values)
    want = np.dtype(dtype)
    if a.dtype == want and a.ndim == 1:
        return a
    fits = a.dtype == want or (want.kind in "iu" and a.dtype.kind in "iu") or (want.kind == "f" and a.dtype.kind in "fiu")
    if a.ndim != 1 or not fits:
        raise error(f"column {name!r} must be a 1-D {want} array, got {a.dtype}{a.shape}")
    if want.kind in "iu" and a.size:
        info = np.iinfo(want)
        lo, hi = int(a.min()), int(a.max())  # Python ints: exact for uint64 too
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise error(f"column {name!r} holds {bad}, out of range: collsim stores it as {want.name}, "
                        f"{info.min}..{info.max}")
    return a.astype(want)


def permute_csr(lengths: np.ndarray, idx: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder (or subset) CSR rows.

    Rows of one entry each (one chunk per transfer, the common case) are gathered
    directly, and the general gather is built in place, so that the temporaries stay
    at one index array the size of the result.
    """
    t = len(order)
    if len(idx) == len(lengths) and bool((np.asarray(lengths) == 1).all()):
        # one entry per row, before and after (rows reordered, kept or repeated): no index arrays
        # but the result's (relay's 35 M segments of one chunk each at N = 4096: four fewer of 280 MB)
        return np.arange(t + 1, dtype=INDEX), idx[order]
    order = np.asarray(order, dtype=INDEX)
    lengths = np.asarray(lengths, dtype=INDEX)
    old_ptr = np.zeros(len(lengths) + 1, dtype=INDEX)
    np.cumsum(lengths, out=old_ptr[1:])
    new_len = lengths[order]
    ptr = np.zeros(t + 1, dtype=INDEX)
    np.cumsum(new_len, out=ptr[1:])
    if len(idx) == 0:
        return ptr, idx[:0]
    start = old_ptr[:-1][order]
    del old_ptr
    if int(ptr[-1]) == t and bool((new_len == 1).all()):
        return ptr, idx[start]  # one entry per kept row: row i is idx[start[i]]
    start -= ptr[:-1]
    gather = np.repeat(start, new_len)
    del start, new_len
    gather += np.arange(ptr[-1], dtype=INDEX)
    return ptr, idx[gather]


def dense_rank(sorted_values: np.ndarray) -> np.ndarray:
    """Rank of each value among the distinct values of a non-decreasing array.

    The inverse of ``np.unique(..., return_inverse=True)`` for sorted input in one
    linear pass; when the values are already ``0, 1, 2, ...`` with no gap the input
    array itself is returned (no copy).
    """
    v = np.asarray(sorted_values)
    if v.size == 0:
        return np.zeros(0, INDEX)
    change = v[1:] != v[:-1]
    if v.dtype == INDEX and v[0] == 0 and int(v[-1]) == int(np.count_nonzero(change)):
        return v  # already dense
    out = np.zeros(v.size, INDEX)
    np.cumsum(change, out=out[1:])
    return out


def row_blocks(ptr: np.ndarray, max_entries: int = 1 << 20) -> list[tuple[int, int]]:
    """Split CSR rows into consecutive blocks of at most ``max_entries`` entries.

    Work over CSR contents (every link of every route, say) done block by block
    keeps its temporaries bounded by the block, not by the whole schedule.  A row
    longer than ``max_entries`` is a block of its own.
    """
    rows = len(ptr) - 1
    out, lo = [], 0
    while lo < rows:
        hi = int(np.searchsorted(ptr, ptr[lo] + max_entries, side="right")) - 1
        hi = min(max(hi, lo + 1), rows)
        out.append((lo, hi))
        lo = hi
    return out


def ptr_ok(ptr: np.ndarray, entries: int) -> bool:
    """Whether ``ptr`` is a valid CSR pointer over ``entries`` entries."""
    return len(ptr) > 0 and ptr[0] == 0 and ptr[-1] == entries and bool((np.diff(ptr) >= 0).all())


__all__ = ["INDEX", "dense_rank", "permute_csr", "ptr_ok", "row_blocks"]
