"""Chunks that always travel together are verified once: one representative per class.

Hierarchical and multi-dimensional schedules cut the data into many chunks that move in
fixed groups: ``hier-allreduce`` on 1,024 GPUs carries its 32,768 chunks in 10,240 groups,
67 million chunk deliveries in 2.7 million transfers.  Two chunks are *equivalent* when
every transfer carries both or neither, and the collective starts and ends them alike (the
same every-node flags and the same explicit holders, before and after).  Equivalent chunks
start in the same state and every transfer does the same to both, so by induction over the
steps they are in the same state at every step: the data-flow verifier reaches the same
verdict on the schedule restricted to one chunk per class (its smallest), a *quotient* with
as many deliveries as the classes need.

The classes are proposed by hashing each chunk's transfers and holders, then **checked
exactly**: for every transfer, the chunks it carries are counted per class, and every
count must be the whole class (the same for the holders).  A hash collision can only make
the check fail, and then the schedule is verified whole; it can never merge two chunks that
are not equivalent.  So the quotient's verdict is the schedule's, exactly.

A violation found on the quotient names the representative chunk, at the same step and
transfer: where several chunks of one class fail together, the smallest is named.

Examples
--------
>>> import collsim
>>> from collsim.systems import load_system
>>> s = collsim.build("hier-allreduce", load_system("hierarchical", dims="switch:4,ring:4"), "allreduce", "1MiB")
>>> q = quotient(s, min_rows=0)
>>> q.schedule.collective.chunks < s.collective.chunks, len(q.schedule.chunk_idx) < len(s.chunk_idx)
(True, True)
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import DataFlowError
from ..core.holdings import Holdings
from ..core.schedule import Schedule

MIN_ROWS = 1 << 20
"""Schedules with fewer chunk deliveries are verified whole (it is fast): the quotient pays where
there are millions."""
MIN_GAIN = 2
"""The quotient is used only when it has at most ``1 / MIN_GAIN`` of the deliveries."""
_MAX_LENGTHS = 64


@dataclass(frozen=True)
class Quotient:
    """A schedule restricted to one chunk per class of equivalent chunks.

    Parameters
    ----------
    schedule : Schedule
        The same transfers, each carrying only its classes' representatives, renumbered
        ``0..K-1`` in the order of their original ids; its collective has ``K`` chunks.
    representative : numpy.ndarray
        The original id of each quotient chunk (the smallest of its class).
    """

    schedule: Schedule
    representative: np.ndarray

    def original_error(self, error: DataFlowError) -> DataFlowError:
        """``error`` (raised on the quotient) with its chunk ids renamed to the original schedule's."""
        rep = self.representative

        def name(m: re.Match) -> str:
            k = int(m.group(2))
            return f"{m.group(1)}{int(rep[k]) if 0 <= k < len(rep) else k}"

        message = re.sub(r"(\bchunks? )(\d+)", name, error.message)
        where = error.where
        if where.chunk is not None and 0 <= where.chunk < len(rep):
            where = dataclasses.replace(where, chunk=int(rep[where.chunk]))
        out = type(error)(message, where)
        return out


def _all_or_none(ptr: np.ndarray, cls: np.ndarray, size: np.ndarray) -> bool:
    """Whether every CSR row (``cls`` are its entries' classes) holds each class it meets whole.

    Rows are sorted row by row (a matrix per row length) and each run of equal classes must be
    as long as its class; with many lengths, one sort of (row, class) keys.
    """
    lengths = np.diff(ptr)
    distinct = np.unique(lengths)
    if len(distinct) > _MAX_LENGTHS:
        row = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        k = len(size)
        key = row * k + cls
        key.sort()
        starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        runs = np.diff(np.append(starts, len(key)))
        return bool((runs == size[key[starts] % k]).all())
    for length in distinct.tolist():
        if length == 0:
            continue
        rows = np.flatnonzero(lengths == length)
        for lo in range(0, len(rows), 1 << 16):
            part = rows[lo:lo + (1 << 16)]
            m = cls[ptr[part][:, None] + np.arange(length)]
            m.sort(axis=1)
            new = np.ones(m.shape, dtype=bool)
            new[:, 1:] = m[:, 1:] != m[:, :-1]
            r, j = np.nonzero(new)
            end = j + size[m[r, j]]                      # where the run must end (exclusive)
            if (end > length).any():
                return False
            ok = m[r, end - 1] == m[r, j]
            inside = end < length
            ok[inside] &= m[r[inside], end[inside]] != m[r[inside], j[inside]]
            if not ok.all():
                return False
    return True


def _holders_hash(h: Holdings, weight: np.ndarray) -> np.ndarray:
    node, chunk = h.explicit()
    out = np.zeros(h.chunks, dtype=np.uint64)
    np.add.at(out, chunk, weight[node])
    return out


def _holdings_ok(h: Holdings, cls: np.ndarray, size: np.ndarray) -> bool:
    """Members of a class share the every-node flag and the explicit holders (checked exactly)."""
    every = h.every_mask.astype(np.int8)
    k = int(cls.max()) + 1
    lo = np.full(k, 2, np.int8)
    hi = np.full(k, -1, np.int8)
    np.minimum.at(lo, cls, every)
    np.maximum.at(hi, cls, every)
    if (lo != hi).any():
        return False
    node, chunk = h.explicit()
    if not node.size:
        return True
    key = node * k + cls[chunk]
    key.sort()
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    runs = np.diff(np.append(starts, len(key)))
    return bool((runs == size[key[starts] % k]).all())


def _take_holdings(h: Holdings, keep: np.ndarray, new_id: np.ndarray, chunks: int) -> Holdings:
    node, chunk = h.explicit()
    sel = keep[chunk]
    every = None if h.every is None else h.every[keep]
    return Holdings.from_pairs(h.nodes, chunks, node[sel], new_id[chunk[sel]], every=every)


def _weights(transfers: int, nodes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hash weights of transfers, of holders, and the mixing constants (fixed: any weights do, since a
    collision only fails the exact check and costs the quotient)."""
    rng = np.random.default_rng(0x5EED)
    w = rng.integers(0, 2**63, size=transfers, dtype=np.int64).view(np.uint64)
    u = rng.integers(0, 2**63, size=(2, nodes), dtype=np.int64).view(np.uint64)
    mix = rng.integers(1, 2**63, size=5, dtype=np.int64).view(np.uint64) | np.uint64(1)
    return w, u, mix


def quotient(s: Schedule, *, min_rows: int | None = None, min_gain: float | None = None) -> Quotient | None:
    """The schedule on one representative per class of equivalent chunks, or None where it would not pay.

    Parameters
    ----------
    s : Schedule
        A well-formed schedule whose chunk ids are in range.
    min_rows : int, optional
        Fewer chunk deliveries than this: None (verify whole); default :data:`MIN_ROWS`.
    min_gain : float, optional
        None unless the quotient has at most ``1 / min_gain`` of the deliveries; default
        :data:`MIN_GAIN`.

    Returns
    -------
    Quotient or None
        None also when the proposed classes fail the exact check (a hash collision).

    Examples
    --------
    >>> import collsim
    >>> quotient(collsim.build("ring", "line", "allgather", "1KiB", nodes=4), min_rows=0) is None
    True
    """
    min_rows = MIN_ROWS if min_rows is None else min_rows
    min_gain = MIN_GAIN if min_gain is None else min_gain
    c = s.collective
    rows, transfers, chunks = len(s.chunk_idx), len(s.src), c.chunks
    if rows < min_rows or rows < min_gain * transfers or chunks < 2:
        return None
    w, u, mix = _weights(transfers, c.nodes)
    h = np.zeros(chunks, dtype=np.uint64)
    np.add.at(h, s.chunk_idx, np.repeat(w, np.diff(s.chunk_ptr)))
    h = h * mix[0] + _holders_hash(c.pre, u[0]) * mix[1] + _holders_hash(c.post, u[1]) * mix[2]
    h += c.pre.every_mask.astype(np.uint64) * mix[3] + c.post.every_mask.astype(np.uint64) * mix[4]
    _, first, cls = np.unique(h, return_index=True, return_inverse=True)
    k = len(first)
    if k * min_gain > chunks:  # few chunks share a class: the quotient would not pay
        return None
    # classes numbered by their smallest member (np.unique's first index is the smallest chunk id)
    order = np.argsort(first, kind="stable")
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    cls = rank[cls]
    rep = first[order].astype(np.int64)
    size = np.bincount(cls, minlength=k)
    keep = np.zeros(chunks, dtype=bool)
    keep[rep] = True
    on = keep[s.chunk_idx]
    if int(np.count_nonzero(on)) * min_gain > rows:
        return None
    if not (_all_or_none(s.chunk_ptr, cls[s.chunk_idx], size) and _holdings_ok(c.pre, cls, size)
            and _holdings_ok(c.post, cls, size)):
        return None
    ptr = np.zeros(transfers + 1, dtype=s.chunk_ptr.dtype)
    np.cumsum(np.add.reduceat(on.astype(np.int64), s.chunk_ptr[:-1]), out=ptr[1:])  # no transfer is empty
    idx = cls[s.chunk_idx[on]].astype(s.chunk_idx.dtype)
    qc = dataclasses.replace(c, chunks=k, pre=_take_holdings(c.pre, keep, cls, k),
                             post=_take_holdings(c.post, keep, cls, k))
    cols = {"collective": qc, "chunk_ptr": ptr, "chunk_idx": idx}
    # a Schedule keeps its routes and caches right itself; any dataclass with the columns (tests) is copied
    return Quotient(s.replace(**cols) if isinstance(s, Schedule) else dataclasses.replace(s, **cols), rep)


__all__ = ["MIN_GAIN", "MIN_ROWS", "Quotient", "quotient"]
