"""Well-formed schedules: what must hold before the verifier can judge a schedule at all.

A schedule is *malformed* when its numbers do not describe a schedule: the
collective and the system disagree on the node count, the step numbers are not
``0, 1, 2, ...`` in order without gaps, a payload names a chunk twice, a CSR
pointer runs backwards, or its byte counts do not fit collsim's int64 columns.
Malformed schedules raise :class:`~collsim.core.errors.ScheduleFormatError`
(exit status 2, like a file that is not JSON).  A well-formed schedule that
moves data wrongly or misuses the network is *invalid*: that is the verifier's
:class:`~collsim.core.errors.VerificationError` (exit status 1).  The table of
every error class is in ``docs/model.md``, "Errors and exit codes".

Every loaded file is checked here (:func:`collsim.core.serialize.load`, ``.npz``
too), and so is every schedule the verifier sees; each check is vectorised, and
a schedule is checked once (the result is cached on it).

The byte limit: transfer sizes and wire sizes (padded to whole packets) are
int64, so collsim refuses a schedule whose largest transfer, padded to whole
packets, exceeds :data:`MAX_BYTES` = 2**63 - 1.  The *traffic* (every transfer's
bytes times the links it crosses, summed) may exceed it: :func:`traffic_bytes`
is exact (a Python ``int``), and the one consumer of per-link byte totals, the
flow simulator, refuses a schedule whose traffic would not fit its int64 link
counters (:func:`collsim.sim.simulate`).  That refusal is not made here, for
every schedule: OSM's all-gather on 4096 nodes at 1 GiB (traffic 2**64 bytes,
every per-link total far below 2**63) is verified and timed.
"""

from __future__ import annotations

import numpy as np

from .errors import ScheduleFormatError
from .positions import schedule_position, transfer_position
from .csr import INDEX, permute_csr, ptr_ok

STEP_RULE = "transfers must be listed in step order, steps numbered 0, 1, 2, ... without gaps"
"""How steps are numbered, quoted by every message about step numbers."""

MAX_BYTES = 2**63 - 1
"""The most bytes collsim counts in one number: int64's maximum, about 9.2 EB (8 EiB)."""


_ROW_SORT_LENGTHS = 64
"""Rows of at most this many distinct lengths are sorted row by row (a matrix per length, each row
sorted on its own: several times faster than one sort of every entry); more, one sort of all."""


def _first_duplicate_by_length(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray,
                               lengths: np.ndarray) -> tuple[int, int] | None:
    """:func:`first_duplicate` over ``rows``, grouped by length: each group a matrix sorted along its rows."""
    best = None
    for length in np.unique(lengths).tolist():
        sel = rows[lengths == length]
        if best is not None:
            sel = sel[sel < best[0]]
        if length < 2 or not sel.size:
            continue
        for lo in range(0, len(sel), _MATRIX_ROWS):  # bounded temporaries
            part = sel[lo:lo + _MATRIX_ROWS]
            m = idx[ptr[part][:, None] + np.arange(length)]
            low, high = int(m.min()), int(m.max())
            if high - low < 2**31:
                m = (m - low).astype(np.int32)
            else:
                low = 0
            m.sort(axis=1)
            eq = m[:, 1:] == m[:, :-1]
            hit = eq.any(axis=1)
            if hit.any():
                r = int(np.argmax(hit))
                value = int(m[r, int(np.argmax(eq[r]))]) + low
                if best is None or int(part[r]) < best[0]:
                    best = (int(part[r]), value)
                break  # later parts hold later rows
    return best


_MATRIX_ROWS = 1 << 16


def first_duplicate(ptr: np.ndarray, idx: np.ndarray) -> tuple[int, int] | None:
    """The first CSR row that names a value twice, and that value (vectorised).

    Rows whose values are strictly increasing (every row collsim builds) are
    recognised in one linear pass; only the other rows are sorted.
    """
    if len(idx) < 2:
        return None
    rising = idx[1:] > idx[:-1]
    starts = ptr[1:-1]
    rising[starts[(starts > 0) & (starts < len(idx))] - 1] = True  # pairs across a row boundary
    if rising.all():
        return None
    rows = np.unique(np.searchsorted(ptr, np.flatnonzero(~rising), side="right") - 1)
    lengths = np.diff(ptr)[rows]
    if len(np.unique(lengths)) <= _ROW_SORT_LENGTHS:
        return _first_duplicate_by_length(ptr, idx, rows, lengths)
    sub_ptr, sub = permute_csr(np.diff(ptr), idx, rows)
    local = np.repeat(np.arange(len(rows), dtype=INDEX), np.diff(sub_ptr))
    low = int(sub.min())
    span = int(sub.max()) - low + 1
    if len(rows) * span < 2**62:  # one int64 key per entry, (row, value) in order: a plain sort
        key = local * span + (sub - low)
        key.sort()
        dup = np.flatnonzero(key[1:] == key[:-1])
        if dup.size == 0:
            return None
        row, value = divmod(int(key[dup[0]]), span)
        return int(rows[row]), value + low
    order = np.lexsort((sub, local))
    local, sub = local[order], sub[order]
    dup = np.flatnonzero((local[1:] == local[:-1]) & (sub[1:] == sub[:-1]))
    if dup.size == 0:
        return None
    return int(rows[local[dup[0]]]), int(sub[dup[0]])


def _check_steps(step: np.ndarray, rnd: np.ndarray) -> None:
    if not len(step):
        return
    if step[0] != 0:
        raise ScheduleFormatError(f"the first step is numbered {int(step[0])}, not 0: {STEP_RULE}")
    jump = np.diff(step)
    bad = np.flatnonzero((jump < 0) | (jump > 1))
    if bad.size:
        t = int(bad[0]) + 1
        a, b = int(step[t - 1]), int(step[t])
        raise ScheduleFormatError(f"{transfer_position(step, t)} is in step {b}, after step {a}: {STEP_RULE}")
    neg = np.flatnonzero(rnd < 0)
    if neg.size:
        raise ScheduleFormatError(f"{transfer_position(step, int(neg[0]))} has round {int(rnd[neg[0]])}; "
                                  "rounds are non-negative")


def traffic_bytes(s) -> int:
    """Bytes the schedule moves over links: every transfer's bytes times the links it crosses.

    Exact (a Python ``int``).  Ring arcs count at most N - 1 links (longer ones are
    bad routes, refused by the verifier); a transfer counts at least one link.
    """
    if not len(s):
        return 0
    hops = np.clip(s.routes.hops, 1, max(s.system.nodes - 1, 1))
    size = s.size_bytes
    estimate = float(np.dot(size.astype(np.float64), hops.astype(np.float64)))
    if estimate < 2.0**62:  # the exact sum fits int64 with room to spare
        return int(np.dot(size, hops.astype(INDEX)))
    return int(sum(size.astype(object) * hops.astype(object)))


def _check_bytes(s) -> None:
    c = s.collective
    if not len(s):
        return
    largest_chunk = -(-c.size_bytes // c.split)
    most = int(np.diff(s.chunk_ptr).max()) * largest_chunk
    packet = int(s.system.packet_bytes)
    if -(-most // packet) * packet > MAX_BYTES:
        raise ScheduleFormatError(
            f"a transfer carries up to {most} bytes ({int(np.diff(s.chunk_ptr).max())} chunks of up to "
            f"{largest_chunk}), beyond collsim's limit of 2**63-1 = {MAX_BYTES} bytes per number (int64)"
            + (f" once padded to {packet}-byte packets" if packet > 1 and most <= MAX_BYTES else "")
            + ": use a smaller size_bytes")


def check_wellformed(s) -> None:
    """Refuse a malformed schedule (exit status 2); checked once per schedule object.

    Checks, in order: the collective's node count is the system's; the CSR
    pointers start at 0, never decrease and end at their arrays' lengths; steps
    are ``0, 1, 2, ...``, non-decreasing and without gaps; rounds are
    non-negative; no transfer names a chunk twice (a payload is a *set*); and
    the largest transfer, padded to whole packets, fits int64 (at most
    :data:`MAX_BYTES`; the traffic may exceed it, :func:`traffic_bytes`).
    """
    if s._cache.get("wellformed"):
        return
    if s.collective.nodes != s.system.nodes:
        raise ScheduleFormatError(f"the collective has {s.collective.nodes} nodes but the system has "
                                  f"{s.system.nodes}")
    if not ptr_ok(s.chunk_ptr, len(s.chunk_idx)):
        raise ScheduleFormatError("chunk_ptr must start at 0, never decrease and end at the length of chunk_idx")
    problem = s.routes.check_shape(len(s))  # the routes part checks its own columns (each kind's)
    if problem is not None:
        text, t = problem
        raise ScheduleFormatError(text if t is None else f"{schedule_position(s, t)}: {text}")
    _check_steps(s.step, s.round)
    dup = first_duplicate(s.chunk_ptr, s.chunk_idx)
    if dup is not None:
        raise ScheduleFormatError(f"{schedule_position(s, dup[0])} carries chunk {dup[1]} more "
                                  "than once (a payload is a set of chunks)")
    _check_bytes(s)
    s._cache["wellformed"] = True
