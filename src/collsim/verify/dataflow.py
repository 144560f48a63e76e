"""Data-flow verification: state propagation over the (node, chunk) pairs a schedule touches.

Non-reduction collectives track whether a node holds a chunk; reductions track,
per (node, chunk), the *set of contributions* combined in that buffer, as a
bitset over nodes (:mod:`collsim.verify.reduction`).  Every transfer reads its
sender's state at the start of the step; a copy overwrites the buffer, a
reduction ORs the incoming set in and fails if any contribution would be
counted twice.  At the end the postcondition is checked.

The state is not a dense nodes x chunks table: it is indexed by the compact
ids of :class:`~collsim.verify.pairs.PairIndex` (the explicit pre- and
postcondition pairs and the two ends of every chunk delivery), so memory grows
with the deliveries.  It is estimated and checked against
:func:`collsim.core.limits.memory_limit_bytes` before anything large is
allocated.  See ``docs/model.md``, "Holdings and the data-flow verifier".
"""

from __future__ import annotations

import numpy as np

from ..core.errors import DataFlowError, MissingDataError, PostconditionError, UnexpectedReductionError, Where
from ..core.limits import check_memory
from ..core.errors import located
from ..core.schedule import Schedule
from . import pairs
from .classes import quotient
from .pairs import INDEX, PairIndex, first_absent, plan
from .reduction import HINT, choose_method, state_bytes_per_pair, verify_reduction

_NEVER = np.iinfo(INDEX).max


def _check_ranges(s: Schedule) -> None:
    c = s.collective
    if len(s.chunk_idx) and (s.chunk_idx.min() < 0 or s.chunk_idx.max() >= c.chunks):
        bad = int(np.flatnonzero((s.chunk_idx < 0) | (s.chunk_idx >= c.chunks))[0])
        t = int(np.searchsorted(s.chunk_ptr, bad, side="right") - 1)
        raise MissingDataError(f"chunk id {int(s.chunk_idx[bad])} does not exist "
                               f"(collective has {c.chunks} chunks)", Where(step=int(s.step[t]), transfer=t))
    empty = np.flatnonzero(np.diff(s.chunk_ptr) == 0)
    if empty.size:
        t = int(empty[0])
        raise MissingDataError("transfer carries no chunk", Where(step=int(s.step[t]), transfer=t))


def dataflow_memory_bytes(s: Schedule) -> int:
    """Estimated peak bytes of :func:`verify_dataflow` on ``s``, computed without allocating."""
    c = s.collective
    state = 9
    if c.reduction:
        r = len(s.chunk_idx)
        direct, _, _ = plan(c.nodes, c.chunks, c.pre.num_explicit, r, c.post.num_explicit, 16)
        pairs = c.nodes * c.chunks if direct else min(c.pre.num_explicit + 2 * r + c.post.num_explicit,
                                                      c.nodes * c.chunks)
        state = state_bytes_per_pair(c.nodes, choose_method(c.nodes, pairs))
    return plan(c.nodes, c.chunks, c.pre.num_explicit, len(s.chunk_idx), c.post.num_explicit, state,
                copies=not c.reduction)[2]


@located
def verify_dataflow(s: Schedule) -> str:
    """Check that the schedule moves data correctly and meets the postcondition.

    Returns how: ``"exact"`` (every collective without a reduction, and reductions with exact
    contributor sets) or ``"fingerprint"`` (large reductions, :mod:`collsim.verify.fingerprint`).
    """
    _check_ranges(s)
    q = quotient(s)
    if q is None:
        return _verify_dataflow(s)
    try:  # chunks that always travel together: one representative per class (exact, collsim.verify.classes)
        return _verify_dataflow(q.schedule)
    except DataFlowError as exc:
        raise q.original_error(exc) from None


def _verify_dataflow(s: Schedule) -> str:
    c = s.collective
    what = (f"verifying the data flow of {c.name} on {c.nodes} nodes ({c.chunks} chunks, "
            f"{len(s.chunk_idx)} chunk deliveries)")
    if c.reduction:
        return verify_reduction(s, what)
    if s.reduce.any():
        t = int(np.flatnonzero(s.reduce)[0])
        raise UnexpectedReductionError(f"the transfer reduces, but {c.name} has no reduction; its transfers "
                                       "copy (\"reduce\": false)",
                                       Where(step=int(s.step[t]), transfer=t))
    direct, _, est = plan(c.nodes, c.chunks, c.pre.num_explicit, len(s.chunk_idx), c.post.num_explicit, 9,
                          copies=True)
    check_memory(est, what, HINT)
    if direct:
        _verify_copies_direct(s)
    else:
        _verify_copies(s, PairIndex(s))
    return "exact"


def _row_blocks(s: Schedule):
    """Yield ``(lo, hi, t)``: rows ``lo:hi`` (about ``pairs.BLOCK_ROWS`` of them) and their transfers."""
    ptr = s.chunk_ptr
    t0, total = 0, len(s.src)
    while t0 < total:
        t1 = max(int(np.searchsorted(ptr, ptr[t0] + pairs.BLOCK_ROWS, side="right")) - 1, t0 + 1)
        t1 = min(t1, total)
        lo, hi = int(ptr[t0]), int(ptr[t1])
        yield lo, hi, np.repeat(np.arange(t0, t1, dtype=INDEX), np.diff(ptr[t0:t1 + 1]))
        t0 = t1


def _missing(s: Schedule, t: int, chunk: int) -> MissingDataError:
    node = int(s.src[t])
    return MissingDataError(f"node {node} sends chunk {chunk} it does not hold",
                            Where(step=int(s.step[t]), transfer=t, node=node, chunk=chunk))


def _verify_copies_direct(s: Schedule) -> None:
    """Copies with a step per (node, chunk): held from one step after the earliest write, or pre-held."""
    c = s.collective
    nc = c.chunks
    pre_every = c.pre.every_mask
    # steps in int32 where they fit: half the random accesses' memory, and ufunc.at's fast path (one dtype)
    st = np.int32 if len(s.step) == 0 or int(s.step[-1]) < np.iinfo(np.int32).max - 1 else INDEX
    never = np.iinfo(st).max
    held_from = np.full(c.nodes * nc, never, dtype=st)
    for lo, hi, t in _row_blocks(s):
        np.minimum.at(held_from, s.dst[t] * nc + s.chunk_idx[lo:hi], s.step[t].astype(st, copy=False))
    pn, pc = c.pre.explicit()
    held_from[pn * nc + pc] = -1
    for lo, hi, t in _row_blocks(s):
        ch = s.chunk_idx[lo:hi]
        ok = held_from[s.src[t] * nc + ch] < s.step[t]
        ok |= pre_every[ch]
        if not ok.all():
            i = int(np.argmin(ok))
            raise _missing(s, int(t[i]), int(ch[i]))
    held = held_from != never
    del held_from
    post_n, post_c = c.post.explicit()
    ok = held[post_n * nc + post_c] | pre_every[post_c]
    if not ok.all():
        i = int(np.argmin(ok))
        v, k = int(post_n[i]), int(post_c[i])
        raise PostconditionError(f"node {v} lacks chunk {k}", Where(node=v, chunk=k))
    if c.post.every is not None:
        cols = np.flatnonzero(c.post.every & ~pre_every)
        sub = held.reshape(c.nodes, nc)[:, cols]
        if cols.size and not sub.all():
            v, j = divmod(int(np.argmin(sub)), cols.size)
            raise PostconditionError(f"node {v} lacks chunk {int(cols[j])}", Where(node=v, chunk=int(cols[j])))


def _verify_copies(s: Schedule, idx: PairIndex) -> None:
    """Copies over the sorted index: a pair is held from one step after its earliest write."""
    c = s.collective
    pre_every = c.pre.every_mask
    wrow = idx.first_write_row()
    held_from = np.full(idx.groups, _NEVER, dtype=INDEX)
    w = wrow >= 0
    held_from[w] = s.step[idx.row_t[wrow[w]]]
    del wrow, w
    held_from[idx.pre_held()] = -1
    ok = held_from[idx.read] < s.step[idx.row_t]
    ok |= pre_every[s.chunk_idx]
    if not ok.all():
        i = int(np.argmin(ok))
        raise _missing(s, int(idx.row_t[i]), int(s.chunk_idx[i]))
    del ok
    held = held_from != _NEVER
    if idx.q:
        post_n, post_c = c.post.explicit()
        ok = held[idx.post] | pre_every[post_c]
        if not ok.all():
            i = int(np.argmin(ok))
            v, k = int(post_n[i]), int(post_c[i])
            raise PostconditionError(f"node {v} lacks chunk {k}", Where(node=v, chunk=k))
    if c.post.every is not None:  # untouched pairs are held iff every node starts with the chunk
        g = np.flatnonzero(held)
        g = g[c.post.every[idx.chunk_of(g)]]
        thr = np.where(pre_every, c.nodes, 0)
        bad = first_absent(c.nodes, c.post.every, thr, idx.node_of(g), idx.chunk_of(g))
        if bad is not None:
            v, k = bad
            raise PostconditionError(f"node {v} lacks chunk {k}", Where(node=v, chunk=k))
