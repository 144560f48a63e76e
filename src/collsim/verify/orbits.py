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
formula above.  Contributor sets are held *relative to their chunk's anchor* (node ``v`` of the
set of chunk ``c`` is stored as ``v - anchor(c)``, digit by digit): moving a set and its chunk by
``g`` moves the nodes and the anchor alike, so the formula becomes ``rel(g . r, c) = rel(r, (-g) . c)``
and a representative reads its sender's set with no moving at all.  Every check of :mod:`collsim.verify.dataflow` on the expansion (missing data,
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
from . import fingerprint
from .dataflow import _check_ranges
from .reduction import HINT, _Need, _popcount, choose_method

_MOVE_ELEMENTS = 1 << 24
"""Most (row, node) entries moved at once when contributor sets are translated."""


def orbit_memory_bytes(sym: SymmetricSchedule) -> int:
    """Estimated peak bytes of :func:`verify_orbits`: the domain's state, one block of deliveries'
    indices (:class:`_Steps`) and one step's payloads."""
    c = sym.collective
    pairs = c.chunks * (c.nodes // sym.group.order)    # the domain's nodes times the chunks
    block, step = _block_deliveries(sym.reps)
    index = 80 * block          # the block's indices and their temporaries, 8 bytes each
    if not c.reduction:
        return 2 * pairs + index + (1 << 20)
    if _method(sym) == "fingerprint":   # state and a step's payload of 16 bytes a pair
        return fingerprint.PAIR_BYTES * pairs + index + 3 * fingerprint.PAIR_BYTES * step + (1 << 20)
    words = (c.nodes + 63) // 64
    return 8 * pairs * words + index + 24 * words * step \
        + 10 * min(_MOVE_ELEMENTS, max(c.nodes, 1) * max(step, 1)) + (1 << 20)


def _block_deliveries(s) -> tuple[int, int]:
    """The most chunk deliveries in one block of :class:`_Steps` and in one step."""
    first = s.chunk_ptr[s.step_bounds]
    step = int(np.diff(first).max()) if len(first) > 1 else 0
    return min(len(s.chunk_idx), max(step, _BLOCK_DELIVERIES)), step


def _move_sets(group, bits: np.ndarray, elements: np.ndarray, nodes: int) -> np.ndarray:
    """Contributor bitsets ``bits`` (rows of uint64 words) moved by ``elements``, one per row.

    Node ``v + e`` receives the bit of node ``v``: a roll of the unpacked bits along each digit's
    axis by that digit of ``e`` (every digit: a node's offset, not only the group's), rows with
    one element at once.
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
        ``"orbits"`` (exact contributor sets), or ``"orbits, fingerprint"`` where a reduction's
        domain state is checked on random data (:mod:`collsim.verify.fingerprint`, chosen as
        :func:`~collsim.verify.reduction.choose_method` chooses for the domain's pairs).

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
    group = sym.group
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
    dom = group.domain()
    nc = c.chunks
    holds = (c.pre.every_mask[None, :] | (c.pre.holder[None, :] == dom[:, None])).reshape(-1)
    steps = _Steps(s, sym, dom)
    if not c.reduction:
        _copies(s, dom, holds, steps)
        return "orbits"
    if _method(sym) == "fingerprint":
        return _fingerprints(s, sym, dom, holds, steps)
    words = (n + 63) // 64
    state = np.zeros((len(dom) * nc, words), dtype=np.uint64)      # sets relative to their chunk's anchor
    for own, rel in _own(sym, dom, holds):
        np.bitwise_or.at(state, (own, rel >> 6), np.left_shift(np.uint64(1), (rel & 63).astype(np.uint64)))
    for k, back, dest, row_t in steps:   # read at the step's start: relative sets need no moving
        _write(s, k, state, state[back], dest, row_t, nc)
    _check_post(c, sym, dom, state, words)
    return "orbits"


_BLOCK_DELIVERIES = 1 << 22
"""Most chunk deliveries whose indices :class:`_Steps` computes at once (a larger step alone)."""


class _Steps:
    """A symmetric schedule's deliveries, step by step: ``(step, back, dest, row_t)`` for each step
    with deliveries, computed for blocks of whole steps of at most :data:`_BLOCK_DELIVERIES`
    deliveries (or one larger step), so that the verifier holds one block's indices, not the
    schedule's.

    ``row_t`` is each delivery's representative, ``dest`` the buffer it writes (``position * chunks +
    chunk``, the position of its receiver in the domain) and ``back`` the domain buffer that holds
    what it reads: chunk ``x`` at node ``u = g . r`` is ``r``'s chunk ``(-g) . x``, moved by ``g``.
    """

    def __init__(self, s, sym: SymmetricSchedule, dom: np.ndarray) -> None:
        self.s, self.sym, self.dom = s, sym, dom
        self.first = s.chunk_ptr[s.step_bounds].astype(np.int64)      # each step's first delivery

    def __iter__(self):
        s, first = self.s, self.first
        k, steps = 0, len(first) - 1
        while k < steps:
            stop = max(k + 1, int(np.searchsorted(first, first[k] + _BLOCK_DELIVERIES, side="right")) - 1)
            stop = min(stop, steps)
            back, dest, row_t = self.block(int(s.step_bounds[k]), int(s.step_bounds[stop]))
            for j in range(k, stop):
                lo, hi = int(first[j] - first[k]), int(first[j + 1] - first[k])
                if lo < hi:
                    yield j, back[lo:hi], dest[lo:hi], row_t[lo:hi]
            k = stop

    def block(self, t_lo: int, t_hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``back``, ``dest`` and ``row_t`` of the deliveries of representatives ``t_lo:t_hi``."""
        s, group, dom, nc = self.s, self.sym.group, self.dom, self.s.collective.chunks
        ptr = s.chunk_ptr[t_lo:t_hi + 1]
        row_t = np.repeat(np.arange(t_lo, t_hi, dtype=np.int64), np.diff(ptr))
        chunks = s.chunk_idx[int(ptr[0]):int(ptr[-1])].astype(np.int64)
        row_src = s.src[row_t].astype(np.int64)
        back = self.sym.act_chunks(np.atleast_1d(group.inverse(group.element_of(row_src))), chunks)
        back += np.searchsorted(dom, group.domain_of(row_src)) * nc
        del row_src
        dest = np.searchsorted(dom, s.dst[row_t]) * nc
        dest += chunks
        return back, dest, row_t


def _method(sym: SymmetricSchedule) -> str:
    """Exact sets, or fingerprints (:func:`collsim.verify.reduction.choose_method` on the domain's
    pairs) where every chunk's result needs every node (its relative set is then every offset)."""
    c = sym.collective
    if not c.reduction:
        return "exact"
    method = _FORCE_METHOD or choose_method(c.nodes, c.chunks * (c.nodes // sym.group.order))
    return method if c.pre.every_mask.all() else "exact"


_FORCE_METHOD: str | None = None  # tests: "exact" or "fingerprint" whatever the size


def _own(sym: SymmetricSchedule, dom: np.ndarray, holds: np.ndarray):
    """The domain's buffers that start with their own contribution (``position * chunks + chunk``),
    and that contributor relative to the chunk's anchor, in blocks of :data:`_BLOCK_DELIVERIES`."""
    nc = sym.collective.chunks
    for lo in range(0, len(holds), _BLOCK_DELIVERIES):
        own = lo + np.flatnonzero(holds[lo:lo + _BLOCK_DELIVERIES])
        yield own, sym.group.act(_toward_anchor(sym, own % nc), dom[own // nc])


def _fingerprints(s, sym: SymmetricSchedule, dom, holds: np.ndarray, steps: _Steps) -> str:
    """:func:`_verify`'s reduction on fingerprints (:mod:`collsim.verify.fingerprint`): offset ``o``'s
    contribution is the random value of node ``o``; a contribution counted twice shows in the result."""
    c = s.collective
    nc = c.chunks
    x = fingerprint.draw_values(c.nodes)
    state = np.zeros((len(dom) * nc, fingerprint.HASHES + 1), dtype=np.uint32)
    for own, rel in _own(sym, dom, holds):
        state[own] = x[rel]
    for k, back, dest, row_t in steps:
        _write_fingerprints(s, k, state, state[back], dest, row_t, nc)
    ids = np.flatnonzero((c.post.every_mask[None, :] | (c.post.holder[None, :] == dom[:, None])).reshape(-1))
    want = fingerprint.Need(c, x)(np.zeros(1, np.int64), np.zeros(1, np.int64))[0]   # every node's: every offset
    for lo in range(0, len(ids), 1 << 18):
        part = ids[lo:lo + (1 << 18)]
        bad = (state[part] != want).any(axis=1)
        if bad.any():
            j = int(part[int(np.argmax(bad))])
            raise fingerprint.post_error(c, int(dom[j // nc]), int(j % nc), state[j], want)
    return "orbits, fingerprint"


def _write_fingerprints(s, k: int, state, payload, dest, row_t, nc: int) -> None:
    """Step ``k``'s writes of fingerprints, with :func:`_write`'s checks but the double count's."""
    w = _Writes(s, k, payload, fingerprint.count(payload) == 0, dest, row_t, nc)
    w.differing_copies()
    new = w.pay_o[w.starts]
    if w.gred.any():
        new = np.where(w.gred[:, None], fingerprint.add(state[w.gdest], fingerprint.group_sums(w.pay_o, w.starts)),
                       new)
    state[w.gdest] = new


class _Writes:
    """One step's deliveries into the domain grouped by buffer, after the checks that come first:
    no empty payload (missing data), no buffer both copied and reduced into."""

    def __init__(self, s, k: int, payload, empty, dest, row_t, nc: int) -> None:
        if empty.any():
            i = int(np.argmax(empty))
            raise _missing(s, int(row_t[i]), int(dest[i] % nc))
        self.s, self.k, self.dest, self.row_t, self.nc = s, k, dest, row_t, nc
        self.order = np.argsort(dest, kind="stable")
        d_o, self.red_o, self.pay_o = dest[self.order], s.reduce[row_t][self.order], payload[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], d_o[1:] != d_o[:-1]]))
        self.ends = np.append(self.starts[1:], len(d_o))
        mixed = np.logical_or.reduceat(self.red_o, self.starts) & ~np.logical_and.reduceat(self.red_o, self.starts)
        if mixed.any():
            raise ConflictingWriteError("a buffer is both copied into and reduced into in one step",
                                        self.where(int(self.order[self.starts[int(np.argmax(mixed))]])))
        self.gred, self.gdest = self.red_o[self.starts], d_o[self.starts]

    def where(self, i: int) -> Where:
        t = int(self.row_t[i])
        return Where(step=self.k, transfer=t, node=int(self.s.dst[t]), chunk=int(self.dest[i] % self.nc))

    def differing_copies(self) -> None:
        """Two different payloads copied into one buffer in one step."""
        if self.gred.all():
            return
        first = self.pay_o[self.starts][np.repeat(np.arange(len(self.starts)), self.ends - self.starts)]
        differ = (self.pay_o != first).any(axis=1) & ~self.red_o
        if differ.any():
            raise ConflictingWriteError("two different buffers are copied to one place in one step",
                                        self.where(int(self.order[int(np.argmax(differ))])))


def _toward_anchor(sym: SymmetricSchedule, chunks: np.ndarray) -> np.ndarray:
    """The translation (every digit) taking each chunk's anchor to node 0: ``v -> v - anchor``."""
    n = sym.collective.nodes
    anchor = chunks % n if sym.interleaved else chunks // sym.per_anchor
    return np.atleast_1d(sym.group.inverse(anchor))


def _copies(s, dom, holds: np.ndarray, steps: _Steps) -> None:
    """Copies: a domain node holds a chunk from the step after it is first written into it."""
    c = s.collective
    held = holds.copy()
    for _, back, dest, row_t in steps:
        ok = held[back]
        if not ok.all():
            i = int(np.argmin(ok))
            raise _missing(s, int(row_t[i]), int(dest[i] % c.chunks))
        held[dest] = True
    need = (c.post.every_mask[None, :] | (c.post.holder[None, :] == dom[:, None])).reshape(-1)
    bad = np.flatnonzero(need & ~held)
    if bad.size:
        v, k = int(dom[bad[0] // c.chunks]), int(bad[0] % c.chunks)
        raise PostconditionError(f"node {v} lacks chunk {k}", Where(node=v, chunk=k))


def _write(s, k: int, state: np.ndarray, payload: np.ndarray, dest: np.ndarray, row_t: np.ndarray,
           nc: int) -> None:
    """Step ``k``'s writes into the domain's buffers (ids ``position * chunks + chunk``), with
    :mod:`collsim.verify.reduction`'s checks in its order."""
    w = _Writes(s, k, payload, ~payload.any(axis=1), dest, row_t, nc)
    union = np.bitwise_or.reduceat(w.pay_o, w.starts, axis=0)
    current = state[w.gdest]
    if w.gred.any():  # incoming sets pairwise disjoint and disjoint from the buffer
        overlap = (current & union).any(axis=1)
        bad = w.gred & ((np.add.reduceat(_popcount(w.pay_o), w.starts) != _popcount(union)) | overlap)
        if bad.any():
            gi = int(np.argmax(bad))
            why = "already holds" if overlap[gi] else "receives twice in one step"
            at = w.where(int(w.order[w.ends[gi] - 1]))
            raise DoubleCountError(f"node {at.node} {why} a contribution to chunk {at.chunk}", at)
    w.differing_copies()
    state[w.gdest] = np.where(w.gred[:, None], current | union, union)


def _check_post(c, sym: SymmetricSchedule, dom: np.ndarray, state: np.ndarray, words: int) -> None:
    """The domain's postcondition buffers hold exactly the contributions they need (relative to the anchors)."""
    nc = c.chunks
    ids = np.flatnonzero((c.post.every_mask[None, :] | (c.post.holder[None, :] == dom[:, None])).reshape(-1))
    need = _Need(c, words)
    for lo in range(0, len(ids), 1 << 16):
        x = ids[lo:lo + (1 << 16)]
        want = need(dom[x // nc], x % nc)
        part = ~(want == need.all).all(axis=1)     # every node's contribution: the same set in any frame
        if part.any():
            want[part] = _move_sets(sym.group, want[part], _toward_anchor(sym, x[part] % nc), c.nodes)
        bad = (state[x] != want).any(axis=1)
        if bad.any():
            j = int(np.argmax(bad))
            v, k = int(dom[x[j] // nc]), int(x[j] % nc)
            raise PostconditionError(f"node {v} ends with {int(_popcount(state[x[j]:x[j] + 1])[0])} of "
                                     f"{int(_popcount(want[j:j + 1])[0])} contributions to chunk {k}",
                                     Where(node=v, chunk=k))
