"""Data-flow verification: state propagation over (node, chunk).

Non-reduction collectives track a bit per (node, chunk): does the node hold
the chunk.  Reductions track, per (node, chunk), the *set of contributions*
combined in that buffer, as a bitset over nodes.  Step by step, every
transfer reads its sender's state at the start of the step; then receivers
are updated: a copy overwrites the buffer, a reduction ORs the incoming set in
and fails if any contribution would be counted twice.  At the end the
postcondition is checked.  Everything is vectorised per step.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import (ConflictingWriteError, DoubleCountError, InputError,
                           MissingDataError, PostconditionError, Where)
from ..core.schedule import Schedule

MAX_STATE_BYTES = 4 * 1024**3


class BitMatrix:
    """A packed boolean matrix of shape (rows, cols) with vectorised get/set.

    Parameters
    ----------
    rows, cols : int
        Shape.
    """

    def __init__(self, rows: int, cols: int) -> None:
        self.words = np.zeros((rows, (cols + 63) // 64), dtype=np.uint64)

    def get(self, r: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Bits at (r[i], c[i])."""
        c = np.asarray(c, dtype=np.int64)
        w = self.words[r, c >> 6]
        return ((w >> (c & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)

    def set(self, r: np.ndarray, c: np.ndarray) -> None:
        """Set bits at (r[i], c[i])."""
        c = np.asarray(c, dtype=np.int64)
        np.bitwise_or.at(self.words, (r, c >> 6), np.left_shift(np.uint64(1), (c & 63).astype(np.uint64)))


def _steps(s: Schedule):
    """Yield ``(step, transfer index per row, chunk per row)`` for every non-empty step."""
    bounds = s.step_bounds
    for step in range(s.num_steps):
        lo, hi = int(bounds[step]), int(bounds[step + 1])
        if lo == hi:
            continue
        lengths = np.diff(s.chunk_ptr[lo:hi + 1])
        t = np.repeat(np.arange(lo, hi, dtype=np.int64), lengths)
        yield step, t, s.chunk_idx[s.chunk_ptr[lo]:s.chunk_ptr[hi]]


def _missing(s: Schedule, step: int, t: np.ndarray, ch: np.ndarray, bad: np.ndarray) -> MissingDataError:
    i = int(np.flatnonzero(bad)[0])
    node, chunk = int(s.src[t[i]]), int(ch[i])
    return MissingDataError(f"node {node} sends chunk {chunk} it does not hold",
                            Where(step=step, transfer=int(t[i]), node=node, chunk=chunk))


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


def verify_dataflow(s: Schedule) -> None:
    """Check that the schedule moves data correctly and meets the postcondition.

    Parameters
    ----------
    s : Schedule
        Schedule to check (endpoints already range-checked).

    Raises
    ------
    MissingDataError
        A node sends a chunk it does not hold at the start of the step.
    DoubleCountError
        A reduction would combine a contribution twice, or a non-reduction
        collective's transfer asks for a reduction.
    ConflictingWriteError
        Two different buffers are written to one (node, chunk) in one step.
    PostconditionError
        Some node ends without a chunk, or with a partial reduction.
    """
    _check_ranges(s)
    if s.collective.reduction:
        _verify_reduction(s)
    else:
        _verify_copies(s)


def _verify_copies(s: Schedule) -> None:
    c = s.collective
    if s.reduce.any():
        t = int(np.flatnonzero(s.reduce)[0])
        raise DoubleCountError(f"{c.kind} has no reduction, but the transfer reduces",
                               Where(step=int(s.step[t]), transfer=t))
    held = BitMatrix(c.nodes, c.chunks)
    held.set(c.pre_node, c.pre_chunk)
    for step, t, ch in _steps(s):
        ok = held.get(s.src[t], ch)
        if not ok.all():
            raise _missing(s, step, t, ch, ~ok)
        held.set(s.dst[t], ch)
    ok = held.get(c.post_node, c.post_chunk)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise PostconditionError(f"node {int(c.post_node[i])} lacks chunk {int(c.post_chunk[i])}",
                                 Where(node=int(c.post_node[i]), chunk=int(c.post_chunk[i])))


def _popcount(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a).sum(axis=-1, dtype=np.int64)


def _verify_reduction(s: Schedule) -> None:
    c = s.collective
    n, nc = c.nodes, c.chunks
    words = (n + 63) // 64
    if n * nc * words * 8 > MAX_STATE_BYTES:
        raise InputError(f"exact reduction tracking needs {n * nc * words * 8 / 2**30:.1f} GiB "
                         f"({n} nodes x {nc} chunks); use fewer chunks or nodes")
    state = np.zeros((n, nc, words), dtype=np.uint64)
    one = np.uint64(1)
    state[c.pre_node, c.pre_chunk, c.pre_node >> 6] |= np.left_shift(one, (c.pre_node & 63).astype(np.uint64))
    full = np.zeros((nc, words), dtype=np.uint64)
    np.bitwise_or.at(full, (c.pre_chunk, c.pre_node >> 6), np.left_shift(one, (c.pre_node & 63).astype(np.uint64)))
    for step, t, ch in _steps(s):
        payload = state[s.src[t], ch]                      # (R, words), read at step start
        empty = ~payload.any(axis=1)
        if empty.any():
            raise _missing(s, step, t, ch, empty)
        dst = s.dst[t]
        key = dst * nc + ch
        red = s.reduce[t]
        order = np.lexsort((t, key))
        key_o, red_o = key[order], red[order]
        starts = np.flatnonzero(np.concatenate([[True], key_o[1:] != key_o[:-1]]))
        mixed = np.logical_or.reduceat(red_o, starts) & ~np.logical_and.reduceat(red_o, starts)
        if mixed.any():
            g = int(np.flatnonzero(mixed)[0])
            i = int(order[starts[g]])
            raise ConflictingWriteError("a buffer is both copied into and reduced into in one step",
                                        Where(step=step, transfer=int(t[i]), node=int(dst[i]), chunk=int(ch[i])))
        gred = red_o[starts]
        pay_o = payload[order]
        union = np.bitwise_or.reduceat(pay_o, starts, axis=0)
        gdst, gch = dst[order][starts], ch[order][starts]
        # reductions: incoming sets pairwise disjoint and disjoint from the buffer
        if gred.any():
            counts = np.add.reduceat(_popcount(pay_o), starts)
            current = state[gdst, gch]
            bad = gred & ((counts != _popcount(union)) | (current & union).any(axis=1))
            if bad.any():
                g = int(np.flatnonzero(bad)[0])
                rows = order[starts[g]:(starts[g + 1] if g + 1 < len(starts) else len(order))]
                dup = (current[g] & union[g]).any()
                i = int(rows[-1])
                what = "already holds" if dup else "receives twice in one step"
                raise DoubleCountError(
                    f"node {int(gdst[g])} {what} a contribution to chunk {int(gch[g])}",
                    Where(step=step, transfer=int(t[i]), node=int(gdst[g]), chunk=int(gch[g])))
        # copies: all copies to one buffer in one step must agree
        copy_g = ~gred
        if copy_g.any():
            first = pay_o[starts]
            group_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(order))))
            differ = (pay_o != first[group_of]).any(axis=1) & ~red_o
            if differ.any():
                r = int(np.flatnonzero(differ)[0])
                i = int(order[r])
                raise ConflictingWriteError("two different buffers are copied to one place in one step",
                                            Where(step=step, transfer=int(t[i]), node=int(dst[i]), chunk=int(ch[i])))
        new = np.where(gred[:, None], state[gdst, gch] | union, union)
        state[gdst, gch] = new
    final = state[c.post_node, c.post_chunk]
    need = full[c.post_chunk]
    if c.post_upto is not None:  # prefix reductions: only contributions of nodes 0..upto
        ids = np.arange(words * 64, dtype=np.int64).reshape(words, 64)
        allowed = ids[None, :, :] <= c.post_upto[:, None, None]
        masks = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
        prefix = np.bitwise_or.reduce(np.where(allowed, masks, np.uint64(0)), axis=2)
        need = need & prefix
    wrong = (final != need).any(axis=1)
    if wrong.any():
        i = int(np.flatnonzero(wrong)[0])
        have = int(_popcount(final[i]))
        need_i = int(_popcount(need[i]))
        raise PostconditionError(
            f"node {int(c.post_node[i])} ends with {have} of {need_i} contributions to chunk {int(c.post_chunk[i])}"
            + ("" if c.post_upto is None else f" (needs exactly those of nodes 0..{int(c.post_upto[i])})"),
            Where(node=int(c.post_node[i]), chunk=int(c.post_chunk[i])))
