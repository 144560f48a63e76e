"""Data flow of a symmetric schedule, checked on node 0 alone.

A :class:`~collsim.core.symmetry.SymmetricSchedule` is invariant under a translation group
that acts regularly on the nodes and, through anchors, on the chunks; its collective is
invariant too.  Then so is the state the schedule reaches after every step (induction on the
steps: the state before step ``k`` is invariant, and step ``k``'s writes are a union of
orbits), so the state of node ``u`` is node 0's moved by ``u``:

    state(u, c) = u . state(0, (-u) . c)

where a contributor set is moved node by node.  Node 0's buffers are written exactly by the
representatives (the transfers into node 0), and each reads its sender's state through the
formula above.  Every check of :mod:`collsim.verify.dataflow` on the expansion (missing data,
a contribution counted twice, conflicting writes, the postcondition) fails at some node iff it
fails at node 0, because the failing node's violation moved by its inverse is node 0's.  The
contributor sets are exact bitsets of ``N`` bits per chunk of node 0: ``chunks * N / 8`` bytes,
against ``N`` times that for the expansion.  The argument is in ``docs/model.md``,
"Symmetric schedules".
"""

from __future__ import annotations

import numpy as np

from ..core.errors import (ConflictingWriteError, DoubleCountError, MissingDataError, PostconditionError,
                           UnexpectedReductionError, Where, located)
from ..core.limits import check_memory
from ..core.symmetry import SymmetricSchedule
from .dataflow import _check_ranges
from .reduction import HINT, _Need, _popcount

_MOVE_ELEMENTS = 1 << 24
"""Most (row, node) entries moved at once when contributor sets are translated."""


def orbit_memory_bytes(sym: SymmetricSchedule) -> int:
    """Estimated peak bytes of :func:`verify_orbits`: node 0's state and one block of moved sets."""
    c = sym.collective
    if not c.reduction:
        return 2 * c.chunks + (1 << 20)
    words = (c.nodes + 63) // 64
    return 8 * c.chunks * words + 10 * min(_MOVE_ELEMENTS, max(c.nodes, 1) * max(len(sym.reps.chunk_idx), 1)) \
        + (1 << 20)


def _move_sets(group, bits: np.ndarray, elements: np.ndarray, nodes: int) -> np.ndarray:
    """Contributor bitsets ``bits`` (rows of uint64 words) moved by ``elements``, one per row.

    Node ``v + e`` receives the bit of node ``v``: a roll of the unpacked bits along each digit's
    axis by that digit of ``e``, rows with one element at once.
    """
    out = np.zeros_like(bits)
    radices = group.radices
    digits = np.stack(np.unravel_index(elements, radices), axis=1) if len(elements) else np.zeros((0, 1))
    rows = max(1, _MOVE_ELEMENTS // max(nodes, 1))
    for e in np.unique(elements).tolist():
        sel = np.flatnonzero(elements == e)
        shift = tuple(int(d) for d in digits[sel[0]])
        for lo in range(0, len(sel), rows):
            part = sel[lo:lo + rows]
            flat = np.unpackbits(bits[part].view(np.uint8), axis=1, count=nodes, bitorder="little")
            if e:
                flat = np.roll(flat.reshape((len(part),) + radices), shift, axis=tuple(range(1, len(radices) + 1)))
            packed = np.packbits(flat.reshape(len(part), nodes), axis=1, bitorder="little")
            view = out[part].view(np.uint8)
            view[:, :packed.shape[1]] = packed
            out[part] = view.view(np.uint64)
    return out


def _missing(s, t: int, chunk: int) -> MissingDataError:
    node = int(s.src[t])
    return MissingDataError(f"node {node} sends chunk {chunk} it does not hold (in the orbit of transfer {t})",
                            Where(step=int(s.step[t]), transfer=t, node=node, chunk=chunk))


def verify_orbits(sym: SymmetricSchedule) -> str:
    """Check a symmetric schedule's data flow on node 0 (the expansion's verdict, exactly).

    Parameters
    ----------
    sym : SymmetricSchedule
        Representatives and group.

    Returns
    -------
    str
        ``"orbits"``.

    Raises
    ------
    collsim.core.errors.DataFlowError
        The first violation at node 0, naming the representative (``transfer``) at fault.

    Examples
    --------
    >>> from collsim import build_symmetric
    >>> verify_orbits(build_symmetric("ring", "paper", "allreduce", "64KiB", nodes=16))
    'orbits'
    """
    return _verify(sym.reps, sym)


@located
def _verify(s, sym: SymmetricSchedule) -> str:
    """:func:`verify_orbits` with the representatives first (errors located in them)."""
    group, m = sym.group, sym.per_anchor
    c = s.collective
    n = c.nodes
    _check_ranges(s)
    what = (f"verifying the data flow of {c.name} on {n} nodes through its symmetry ({c.chunks} chunks "
            f"of node 0, {len(s.chunk_idx)} chunk deliveries into it)")
    check_memory(orbit_memory_bytes(sym), what, HINT)
    if not c.reduction and s.reduce.any():
        t = int(np.flatnonzero(s.reduce)[0])
        raise UnexpectedReductionError(f"the transfer reduces, but {c.name} has no reduction; its transfers "
                                       "copy (\"reduce\": false)", Where(step=int(s.step[t]), transfer=t))
    lengths = np.diff(s.chunk_ptr)
    row_t = np.repeat(np.arange(len(s), dtype=np.int64), lengths)
    row_src = s.src[row_t].astype(np.int64)
    # chunk x at node u is node 0's chunk (-u).x, moved by u
    back = np.empty(len(row_src), np.int64)
    for u in np.unique(row_src).tolist():
        sel = row_src == u
        back[sel] = group.act_chunks(group.inverse(u), s.chunk_idx[sel], m)
    holds0 = c.pre.every_mask | (c.pre.holder == 0)
    bounds = np.searchsorted(row_t, s.step_bounds) if len(row_t) else np.zeros(s.num_steps + 1, np.int64)
    if not c.reduction:
        _copies(s, holds0, back, row_t, bounds)
        return "orbits"
    words = (n + 63) // 64
    state = np.zeros((c.chunks, words), dtype=np.uint64)
    state[holds0, 0] = np.uint64(1)  # node 0's own contribution
    for k in range(s.num_steps):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if lo < hi:
            payload = _move_sets(group, state[back[lo:hi]], row_src[lo:hi], n)   # read at the step's start
            _write(s, k, state, payload, s.chunk_idx[lo:hi].astype(np.int64), row_t[lo:hi])
    _check_post(c, state, words)
    return "orbits"


def _copies(s, holds0: np.ndarray, back: np.ndarray, row_t: np.ndarray, bounds: np.ndarray) -> None:
    """Copies: node 0 holds a chunk from the step after it is first written into it."""
    c = s.collective
    held = holds0.copy()
    for k in range(s.num_steps):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        ok = held[back[lo:hi]]
        if not ok.all():
            i = lo + int(np.argmin(ok))
            raise _missing(s, int(row_t[i]), int(s.chunk_idx[i]))
        held[s.chunk_idx[lo:hi]] = True
    bad = np.flatnonzero((c.post.every_mask | (c.post.holder == 0)) & ~held)
    if bad.size:
        k = int(bad[0])
        raise PostconditionError(f"node 0 lacks chunk {k}", Where(node=0, chunk=k))


def _write(s, k: int, state: np.ndarray, payload: np.ndarray, dest: np.ndarray, row_t: np.ndarray) -> None:
    """Step ``k``'s writes into node 0's buffers, with :mod:`collsim.verify.reduction`'s checks in its order."""
    empty = ~payload.any(axis=1)
    if empty.any():
        i = int(np.argmax(empty))
        raise _missing(s, int(row_t[i]), int(dest[i]))
    red = s.reduce[row_t]
    order = np.argsort(dest, kind="stable")
    d_o, red_o, pay_o = dest[order], red[order], payload[order]
    starts = np.flatnonzero(np.concatenate([[True], d_o[1:] != d_o[:-1]]))
    ends = np.append(starts[1:], len(d_o))

    def where(i: int, chunk: int) -> Where:
        return Where(step=k, transfer=int(row_t[i]), node=0, chunk=chunk)

    mixed = np.logical_or.reduceat(red_o, starts) & ~np.logical_and.reduceat(red_o, starts)
    if mixed.any():
        i = int(order[starts[int(np.argmax(mixed))]])
        raise ConflictingWriteError("a buffer is both copied into and reduced into in one step", where(i, int(dest[i])))
    gred, gdest = red_o[starts], d_o[starts]
    union = np.bitwise_or.reduceat(pay_o, starts, axis=0)
    current = state[gdest]
    if gred.any():  # incoming sets pairwise disjoint and disjoint from the buffer
        overlap = (current & union).any(axis=1)
        bad = gred & ((np.add.reduceat(_popcount(pay_o), starts) != _popcount(union)) | overlap)
        if bad.any():
            gi = int(np.argmax(bad))
            why = "already holds" if overlap[gi] else "receives twice in one step"
            raise DoubleCountError(f"node 0 {why} a contribution to chunk {int(gdest[gi])}",
                                   where(int(order[ends[gi] - 1]), int(gdest[gi])))
    if not gred.all():
        differ = (pay_o != pay_o[starts][np.repeat(np.arange(len(starts)), ends - starts)]).any(axis=1) & ~red_o
        if differ.any():
            i = int(order[int(np.argmax(differ))])
            raise ConflictingWriteError("two different buffers are copied to one place in one step",
                                        where(i, int(dest[i])))
    state[gdest] = np.where(gred[:, None], current | union, union)


def _check_post(c, state: np.ndarray, words: int) -> None:
    """Node 0's postcondition buffers hold exactly the contributions they need."""
    chunks = np.flatnonzero(c.post.every_mask | (c.post.holder == 0))
    need = _Need(c, words)
    for lo in range(0, len(chunks), 1 << 16):
        x = chunks[lo:lo + (1 << 16)]
        want = need(np.zeros(len(x), np.int64), x)
        bad = (state[x] != want).any(axis=1)
        if bad.any():
            j = int(np.argmax(bad))
            k = int(x[j])
            raise PostconditionError(f"node 0 ends with {int(_popcount(state[k:k + 1])[0])} of "
                                     f"{int(_popcount(want[j:j + 1])[0])} contributions to chunk {k}",
                                     Where(node=0, chunk=k))
