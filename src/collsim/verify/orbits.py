"""Data flow of a symmetric schedule, checked on the group's domain alone.

A :class:`~collsim.core.symmetry.SymmetricSchedule` is invariant under a translation group
that acts freely on the nodes and, through anchors, on the chunks; its collective is invariant
too.  Then so is the state the schedule reaches after every step (induction on the steps: the
state before step ``k`` is invariant, and step ``k``'s writes are a union of orbits), so the
state of node ``u = g . r`` (``r`` in the domain, ``g`` the element taking it to ``u``) is
``r``'s moved by ``g``:

    state(g . r, c) = g . state(r, (-g) . c)

where a contributor set is moved node by node.  The domain's buffers are written exactly by the
representatives (the transfers into the domain), and each reads its sender's state through the
formula above.  Every check of :mod:`collsim.verify.dataflow` on the expansion (missing data,
a contribution counted twice, conflicting writes, the postcondition) fails at some node iff it
fails in the domain, because the failing node's violation moved by its element's inverse is a
domain node's.  The contributor sets are exact bitsets of ``N`` bits per (domain node, chunk):
``|domain| * chunks * N / 8`` bytes, against ``N / |domain|`` times that for the expansion.  The
argument is in ``docs/model.md``, "Symmetric schedules".
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
    """Estimated peak bytes of :func:`verify_orbits`: the domain's state and one block of moved sets."""
    c = sym.collective
    pairs = c.chunks * (c.nodes // sym.group.order)    # the domain's nodes times the chunks
    if not c.reduction:
        return 2 * pairs + 16 * len(sym.reps.chunk_idx) + (1 << 20)
    words = (c.nodes + 63) // 64
    return 8 * pairs * words + 24 * len(sym.reps.chunk_idx) + 10 * min(_MOVE_ELEMENTS, max(c.nodes, 1) * max(len(sym.reps.chunk_idx), 1)) \
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
    """Check a symmetric schedule's data flow on its domain (the expansion's verdict, exactly).

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
        The first violation in the domain, naming the representative (``transfer``) at fault.

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
            f"on each of {n // group.order} nodes, {len(s.chunk_idx)} chunk deliveries into them)")
    check_memory(orbit_memory_bytes(sym), what, HINT)
    if not c.reduction and s.reduce.any():
        t = int(np.flatnonzero(s.reduce)[0])
        raise UnexpectedReductionError(f"the transfer reduces, but {c.name} has no reduction; its transfers "
                                       "copy (\"reduce\": false)", Where(step=int(s.step[t]), transfer=t))
    lengths = np.diff(s.chunk_ptr)
    row_t = np.repeat(np.arange(len(s), dtype=np.int64), lengths)
    dom = group.domain()
    nc = c.chunks
    # chunk x at node u = g.r (r in the domain) is r's chunk (-g).x, moved by g
    row_src = s.src[row_t].astype(np.int64)
    elem = group.element_of(row_src)
    back = np.empty(len(row_src), np.int64)
    for g in np.unique(elem).tolist():
        sel = elem == g
        back[sel] = group.act_chunks(group.inverse(g), s.chunk_idx[sel], m)
    back += np.searchsorted(dom, group.domain_of(row_src)) * nc
    dest = np.searchsorted(dom, s.dst[row_t]) * nc + s.chunk_idx
    holds = (c.pre.every_mask[None, :] | (c.pre.holder[None, :] == dom[:, None])).reshape(-1)
    bounds = np.searchsorted(row_t, s.step_bounds) if len(row_t) else np.zeros(s.num_steps + 1, np.int64)
    if not c.reduction:
        _copies(s, dom, holds, back, dest, row_t, bounds)
        return "orbits"
    words = (n + 63) // 64
    state = np.zeros((len(dom) * nc, words), dtype=np.uint64)
    own = np.flatnonzero(holds)
    np.bitwise_or.at(state, (own, dom[own // nc] >> 6), np.left_shift(np.uint64(1), (dom[own // nc] & 63).astype(np.uint64)))
    for k in range(s.num_steps):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        if lo < hi:
            payload = _move_sets(group, state[back[lo:hi]], elem[lo:hi], n)   # read at the step's start
            _write(s, k, state, payload, dest[lo:hi], row_t[lo:hi], nc)
    _check_post(c, dom, state, words)
    return "orbits"


def _copies(s, dom, holds: np.ndarray, back: np.ndarray, dest: np.ndarray, row_t: np.ndarray,
            bounds: np.ndarray) -> None:
    """Copies: a domain node holds a chunk from the step after it is first written into it."""
    c = s.collective
    held = holds.copy()
    for k in range(s.num_steps):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        ok = held[back[lo:hi]]
        if not ok.all():
            i = lo + int(np.argmin(ok))
            raise _missing(s, int(row_t[i]), int(s.chunk_idx[i]))
        held[dest[lo:hi]] = True
    need = (c.post.every_mask[None, :] | (c.post.holder[None, :] == dom[:, None])).reshape(-1)
    bad = np.flatnonzero(need & ~held)
    if bad.size:
        v, k = int(dom[bad[0] // c.chunks]), int(bad[0] % c.chunks)
        raise PostconditionError(f"node {v} lacks chunk {k}", Where(node=v, chunk=k))


def _write(s, k: int, state: np.ndarray, payload: np.ndarray, dest: np.ndarray, row_t: np.ndarray,
           nc: int) -> None:
    """Step ``k``'s writes into the domain's buffers (ids ``position * chunks + chunk``), with
    :mod:`collsim.verify.reduction`'s checks in its order."""
    empty = ~payload.any(axis=1)
    if empty.any():
        i = int(np.argmax(empty))
        raise _missing(s, int(row_t[i]), int(dest[i] % nc))
    red = s.reduce[row_t]
    order = np.argsort(dest, kind="stable")
    d_o, red_o, pay_o = dest[order], red[order], payload[order]
    starts = np.flatnonzero(np.concatenate([[True], d_o[1:] != d_o[:-1]]))
    ends = np.append(starts[1:], len(d_o))

    def where(i: int) -> Where:
        t = int(row_t[i])
        return Where(step=k, transfer=t, node=int(s.dst[t]), chunk=int(dest[i] % nc))

    mixed = np.logical_or.reduceat(red_o, starts) & ~np.logical_and.reduceat(red_o, starts)
    if mixed.any():
        i = int(order[starts[int(np.argmax(mixed))]])
        raise ConflictingWriteError("a buffer is both copied into and reduced into in one step", where(i))
    gred, gdest = red_o[starts], d_o[starts]
    union = np.bitwise_or.reduceat(pay_o, starts, axis=0)
    current = state[gdest]
    if gred.any():  # incoming sets pairwise disjoint and disjoint from the buffer
        overlap = (current & union).any(axis=1)
        bad = gred & ((np.add.reduceat(_popcount(pay_o), starts) != _popcount(union)) | overlap)
        if bad.any():
            gi = int(np.argmax(bad))
            why = "already holds" if overlap[gi] else "receives twice in one step"
            at = where(int(order[ends[gi] - 1]))
            raise DoubleCountError(f"node {at.node} {why} a contribution to chunk {at.chunk}", at)
    if not gred.all():
        differ = (pay_o != pay_o[starts][np.repeat(np.arange(len(starts)), ends - starts)]).any(axis=1) & ~red_o
        if differ.any():
            i = int(order[int(np.argmax(differ))])
            raise ConflictingWriteError("two different buffers are copied to one place in one step", where(i))
    state[gdest] = np.where(gred[:, None], current | union, union)


def _check_post(c, dom: np.ndarray, state: np.ndarray, words: int) -> None:
    """The domain's postcondition buffers hold exactly the contributions they need."""
    nc = c.chunks
    ids = np.flatnonzero((c.post.every_mask[None, :] | (c.post.holder[None, :] == dom[:, None])).reshape(-1))
    need = _Need(c, words)
    for lo in range(0, len(ids), 1 << 16):
        x = ids[lo:lo + (1 << 16)]
        want = need(dom[x // nc], x % nc)
        bad = (state[x] != want).any(axis=1)
        if bad.any():
            j = int(np.argmax(bad))
            v, k = int(dom[x[j] // nc]), int(x[j] % nc)
            raise PostconditionError(f"node {v} ends with {int(_popcount(state[x[j]:x[j] + 1])[0])} of "
                                     f"{int(_popcount(want[j:j + 1])[0])} contributions to chunk {k}",
                                     Where(node=v, chunk=k))
