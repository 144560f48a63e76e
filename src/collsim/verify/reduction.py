"""Data flow of reductions: exact contributor sets, or fingerprints, per tracked pair.

Every pair of the :class:`~collsim.verify.pairs.PairIndex` carries a bitset over
nodes: the contributions combined in that buffer.  Above 128 nodes, where those
sets would not fit in one block, it carries fingerprints instead (16 bytes a pair:
:mod:`collsim.verify.fingerprint`, :func:`choose_method`), propagated by the same
steps with sums for unions.  Step by step, every row
reads its source's set at the start of the step; a reduction ORs the incoming
set into the destination and fails if any contribution would be counted twice
(against the buffer or against another reduction into it in the same step);
two different copies into one buffer in one step, or a copy and a reduction,
conflict.  At the end every postcondition pair must hold exactly the required
set.

Chunks never interact, so the pairs are verified in chunk batches whose bitsets
take at most :data:`BLOCK_BYTES` (and fit in what the process may still
allocate, :func:`~collsim.core.limits.memory_budget_bytes`); the first violation
is then the smallest of the batches' first violations by (step, kind of check,
pair or row), which is the one a single pass would have raised.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import ConflictingWriteError, DoubleCountError, MissingDataError, PostconditionError, Where
from ..core.limits import check_memory, limit_error, memory_budget
from ..core.errors import located
from ..core.schedule import Schedule
from . import fingerprint
from .pairs import INDEX, PairIndex, first_absent, plan, stable_order

BLOCK_BYTES = 256 << 20
"""Most bytes of contributor bitsets held at once: larger states are verified in chunk batches (in one
batch, an all-reduce on 4096 nodes would allocate 5.8 GiB of bitsets)."""
MAX_PASS_STEPS = 4_000_000
"""Most (batch, step) iterations: each batch replays the steps, one Python iteration each, so more is
refused as too slow (about a minute per million)."""
_NEVER = np.iinfo(INDEX).max
_POST_BATCH = 1 << 18
_BATCH_PAIRS = 0  # > 0: verify in chunk batches of at most this many pairs (for tests)
_FORCE_METHOD: str | None = None  # tests: "exact" or "fingerprint" whatever the size
HINT = "verify fewer nodes or chunks, or raise the limit"


def _popcount(a: np.ndarray) -> np.ndarray:
    return np.bitwise_count(a).sum(axis=-1, dtype=INDEX)


def prefix_masks(upto: np.ndarray, words: int) -> np.ndarray:
    """Bitsets of the nodes ``0..upto[i]``."""
    lo = np.arange(words, dtype=INDEX) * 64
    nbits = np.clip(np.asarray(upto, dtype=INDEX)[:, None] + 1 - lo[None, :], 0, 64)
    partial = np.left_shift(np.uint64(1), np.minimum(nbits, 63).astype(np.uint64)) - np.uint64(1)
    return np.where(nbits >= 64, ~np.uint64(0), partial)


class _Need:
    """Contribution sets postcondition pairs must end with."""

    def __init__(self, c, words: int) -> None:
        self.c, self.words = c, words
        self.every = c.pre.every_mask
        self.all = prefix_masks(np.array([c.nodes - 1]), words)[0]
        pn, pc = c.pre.explicit()
        self.xc = None
        if pn.size:  # chunks with explicit holders: the OR of their bits
            self.xc = np.unique(pc)
            self.xfull = np.zeros((len(self.xc), words), dtype=np.uint64)
            np.bitwise_or.at(self.xfull, (np.searchsorted(self.xc, pc), pn >> 6),
                             np.left_shift(np.uint64(1), (pn & 63).astype(np.uint64)))

    def __call__(self, node: np.ndarray, chunk: np.ndarray) -> np.ndarray:
        need = np.zeros((len(chunk), self.words), dtype=np.uint64)
        need[self.every[chunk]] = self.all
        if self.xc is not None:
            pos = np.minimum(np.searchsorted(self.xc, chunk), len(self.xc) - 1)
            hit = self.xc[pos] == chunk
            need[hit] |= self.xfull[pos[hit]]
        if self.c.prefix:
            need &= prefix_masks(node, self.words)
        return need


def _post_error(c, v: int, k: int, have: int, need: int) -> PostconditionError:
    return PostconditionError(
        f"node {v} ends with {have} of {need} contributions to chunk {k}"
        + ("" if not c.prefix else f" (needs exactly those of nodes 0..{v})"), Where(node=v, chunk=k))


def _missing(s: Schedule, step: int, t: int, chunk: int) -> MissingDataError:
    node = int(s.src[t])
    return MissingDataError(f"node {node} sends chunk {chunk} it does not hold",
                            Where(step=step, transfer=t, node=node, chunk=chunk))


def _double(s: Schedule, step: int, t: int, chunk: int, what: str) -> DoubleCountError:
    node = int(s.dst[t])
    return DoubleCountError(f"node {node} {what} a contribution to chunk {chunk}",
                            Where(step=step, transfer=t, node=node, chunk=chunk))


def _conflict(s: Schedule, step: int, t: int, chunk: int, message: str) -> ConflictingWriteError:
    return ConflictingWriteError(message, Where(step=step, transfer=t, node=int(s.dst[t]), chunk=chunk))


class _Batch:
    """The rows and pairs of the chunks ``lo..hi-1`` (all of them when ``span`` is None), with local ids.

    In direct mode (id = node * chunks + chunk) the local id of (node, chunk) is
    ``node * (hi - lo) + chunk - lo``, computed, so a batch allocates nothing per pair of
    the whole index; in sorted mode a map from ids to local ids is made per batch.
    """

    def __init__(self, idx: PairIndex, s: Schedule, row_step: np.ndarray, span: tuple[int, int] | None) -> None:
        self.gids = self.rows = self.span = None
        if span is None:
            self.src, self.dst, self.t, self.ch, self.step = idx.read, idx.write, idx.row_t, s.chunk_idx, row_step
            self.size = idx.groups
            return
        lo, hi = span
        ch = s.chunk_idx
        self.rows = np.flatnonzero((ch >= lo) & (ch < hi))
        self.t, self.ch, self.step = idx.row_t[self.rows], ch[self.rows], row_step[self.rows]
        if idx.direct and idx.universe is None:
            self.span = (idx.width, lo, hi - lo)
            self.size = (idx.groups // idx.width) * (hi - lo)
            self.src, self.dst = self.local(idx.read[self.rows]), self.local(idx.write[self.rows])
            return
        mask = np.zeros(s.collective.chunks, dtype=bool)
        mask[lo:hi] = True
        self.gids = np.flatnonzero(mask[idx.chunk_of(slice(None))])
        self.loc = np.full(idx.groups, -1, dtype=idx.read.dtype)
        self.loc[self.gids] = np.arange(len(self.gids), dtype=self.loc.dtype)
        self.src, self.dst = self.loc[idx.read[self.rows]], self.loc[idx.write[self.rows]]
        self.size = len(self.gids)

    def glob(self, local):
        if self.span is not None:
            nc, lo, w = self.span
            return (local // w) * nc + lo + local % w
        return local if self.gids is None else self.gids[local]

    def row(self, local_row: int) -> int:
        return local_row if self.rows is None else int(self.rows[local_row])

    def local(self, g):
        if self.span is not None:
            nc, lo, w = self.span
            return (g // nc) * w + (g % nc - lo)
        return g if self.gids is None else self.loc[g]


def _steps(b: _Batch, stop_step: int):
    """Yield ``(step, lo, hi)``: the batch's rows ``lo:hi`` of each step up to ``stop_step``."""
    if not len(b.step):
        return
    cut = np.flatnonzero(b.step[1:] != b.step[:-1]) + 1
    bounds = np.concatenate(([0], cut, [len(b.step)])).tolist()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        step = int(b.step[lo])
        if step > stop_step:
            return
        yield step, lo, hi


class _Writes:
    """The writes of one step's rows, grouped by destination buffer (rows sorted stably by it)."""

    def __init__(self, s: Schedule, b: _Batch, step: int, lo: int, hi: int, payload: np.ndarray) -> None:
        self.s, self.b, self.step, self.lo = s, b, step, lo
        self.did, self.t, self.ch = b.dst[lo:hi], b.t[lo:hi], b.ch[lo:hi]
        self.red = s.reduce[self.t]
        self.payload = payload
        self.order, self.did_o = stable_order(self.did)
        self.unique = len(self.did_o) < 2 or bool((self.did_o[1:] != self.did_o[:-1]).all())

    def group(self) -> None:
        """Group the rows by destination (several write one buffer)."""
        self.red_o = self.red[self.order]
        self.starts = np.flatnonzero(np.concatenate([[True], self.did_o[1:] != self.did_o[:-1]]))
        self.ends = np.append(self.starts[1:], len(self.order))
        self.gred = self.red_o[self.starts]
        self.gdid = self.did_o[self.starts]
        self.pay_o = self.payload[self.order]

    def mixed(self):
        """A buffer both copied into and reduced into in this step: ``(order key, error)`` or None."""
        st, red_o = self.starts, self.red_o
        mixed = np.logical_or.reduceat(red_o, st) & ~np.logical_and.reduceat(red_o, st)
        if not mixed.any():
            return None
        gi = int(np.argmax(mixed))
        i = int(self.order[st[gi]])
        return (self.step, 1, int(self.b.glob(self.did_o[st[gi]])), 0), _conflict(
            self.s, self.step, int(self.t[i]), int(self.ch[i]),
            "a buffer is both copied into and reduced into in one step")

    def differing_copies(self):
        """Copies into one buffer in this step that differ: ``(order key, error)`` or None."""
        if self.gred.all():
            return None
        group_of = np.repeat(np.arange(len(self.starts)), self.ends - self.starts)
        differ = (self.pay_o != self.pay_o[self.starts][group_of]).any(axis=1) & ~self.red_o
        if not differ.any():
            return None
        k = int(np.argmax(differ))
        i = int(self.order[k])
        return (self.step, 3, int(self.b.glob(self.did_o[k])), self.b.row(self.lo + i)), _conflict(
            self.s, self.step, int(self.t[i]), int(self.ch[i]), "two different buffers are copied to one place in one step")


def _empty(s: Schedule, b: _Batch, step: int, lo: int, empty: np.ndarray):
    """A row that sends an empty buffer: ``(order key, error)`` or None."""
    if not empty.any():
        return None
    i = int(np.argmax(empty))
    return (step, 0, b.row(lo + i), 0), _missing(s, step, int(b.t[lo + i]), int(b.ch[lo + i]))


def _run_steps(s: Schedule, b: _Batch, state: np.ndarray, stop_step: int):
    """Propagate one batch of contributor sets; return ``(order key, error)`` of its first violation, or None."""
    for step, lo, hi in _steps(b, stop_step):
        payload = state[b.src[lo:hi]]                          # (rows, words), read at step start
        found = _empty(s, b, step, lo, ~payload.any(axis=1))
        if found:
            return found
        w = _Writes(s, b, step, lo, hi, payload)
        did, red = w.did, w.red
        if w.unique:  # one write per buffer: only a reduction into a buffer that already holds it double-counts
            if red.any():
                current = state[did]
                dup = red & (current & payload).any(axis=1)
                if dup.any():
                    rows = np.flatnonzero(dup)
                    i = int(rows[np.argmin(did[rows])])
                    return ((step, 2, int(b.glob(did[i])), 0),
                            _double(s, step, int(w.t[i]), int(w.ch[i]), "already holds"))
                state[did] = np.where(red[:, None], current | payload, payload)
            else:
                state[did] = payload
            continue
        w.group()
        found = w.mixed()
        if found:
            return found
        union = np.bitwise_or.reduceat(w.pay_o, w.starts, axis=0)
        current = state[w.gdid]
        if w.gred.any():  # incoming sets pairwise disjoint and disjoint from the buffer
            counts = np.add.reduceat(_popcount(w.pay_o), w.starts)
            overlap = (current & union).any(axis=1)
            bad = w.gred & ((counts != _popcount(union)) | overlap)
            if bad.any():
                gi = int(np.argmax(bad))
                i = int(w.order[w.ends[gi] - 1])
                what = "already holds" if overlap[gi] else "receives twice in one step"
                return (step, 2, int(b.glob(w.gdid[gi])), 0), _double(s, step, int(w.t[i]), int(w.ch[i]), what)
        found = w.differing_copies()
        if found:
            return found
        state[w.gdid] = np.where(w.gred[:, None], current | union, union)
    return None


_UPDATE_ROWS = 1 << 20
"""Most rows of one step whose fingerprints :func:`_run_steps_fingerprint` combines at once."""

_INIT_PAIRS = 1 << 22
"""Most pairs whose starting contributions :func:`verify_reduction` sets at once."""

FINGERPRINT_ROW_BYTES = 2 * (fingerprint.HASHES + 1) * 4 + 34
"""Bytes a row of a step costs while its fingerprints are propagated, apart from the bounded blocks
of :data:`_UPDATE_ROWS` rows and a position a pair (:func:`_distinct`): its payload, read at the
step's start (16) and, where a buffer is written twice, the destinations' stable order (key and
position, 16; the sorted destinations, 8; the reduce flags, 2) and a copy of the payload in that
order (16)."""


def _run_steps_fingerprint(s: Schedule, b: _Batch, state: np.ndarray, stop_step: int):
    """Propagate one batch of fingerprints (:mod:`collsim.verify.fingerprint`): as :func:`_run_steps`,
    with sums for unions and no check for contributions counted twice (the result check sees those).

    A step's payloads are read at its start; the writes are then combined in blocks of
    :data:`_UPDATE_ROWS` rows (whole buffers' groups of rows where a buffer is written twice), so
    that a step of tens of millions of rows (recursive halving's first on 8,192 nodes: 3.4e7) holds
    its payloads and its order, not every temporary of the sums at once.  The checks run in
    :func:`_run_steps`' order: a buffer both copied and reduced into anywhere in the step first,
    then differing copies, each the first in the order of the buffers.
    """
    scratch = None
    for step, lo, hi in _steps(b, stop_step):
        payload = state[b.src[lo:hi]]
        found = _empty(s, b, step, lo, fingerprint.count(payload) == 0)
        if found:
            return found
        did = b.dst[lo:hi]
        if scratch is None and hi - lo > 1:
            scratch = np.empty(b.size, np.int32 if len(b.step) < 2**31 else INDEX)
        if hi - lo < 2 or _distinct(did, scratch):   # one write a buffer: each row's update stands alone
            red = s.reduce[b.t[lo:hi]]
            if not red.any():
                state[did] = payload
                continue
            for a in range(0, len(did), _UPDATE_ROWS):
                d, r, pay = did[a:a + _UPDATE_ROWS], red[a:a + _UPDATE_ROWS], payload[a:a + _UPDATE_ROWS]
                state[d] = np.where(r[:, None], fingerprint.add(state[d], pay), pay)
            continue
        found = _fingerprint_groups(_Writes(s, b, step, lo, hi, payload), state)
        if found:
            return found
    return None


def _distinct(ids: np.ndarray, scratch: np.ndarray) -> bool:
    """Whether ``ids`` (below ``len(scratch)``) are pairwise distinct, in linear time: each writes its
    position into ``scratch`` and reads it back; a repeated id reads a later one's."""
    pos = np.arange(len(ids), dtype=scratch.dtype)
    scratch[ids] = pos
    return bool((scratch[ids] == pos).all())


def _fingerprint_groups(w: "_Writes", state: np.ndarray):
    """A step's writes where some buffer is written more than once, in blocks of whole groups."""
    order, did_o = w.order, w.did_o
    red_o = w.red[order]
    starts = np.flatnonzero(np.concatenate([[True], did_o[1:] != did_o[:-1]]))
    mixed = np.logical_or.reduceat(red_o, starts) & ~np.logical_and.reduceat(red_o, starts)
    if mixed.any():
        w.starts = starts
        w.red_o, w.did_o = red_o, did_o
        return w.mixed()
    n = len(order)
    # block edges at group starts, about _UPDATE_ROWS rows apart
    at = np.searchsorted(starts, np.arange(0, n, _UPDATE_ROWS), side="left")
    cut = starts[np.unique(at[at < len(starts)])]
    edges = np.append(cut, n)
    blocks = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
    pay_o = w.payload[order]                                  # the payloads in the order of their buffers
    for a, z in blocks:                                       # differing copies: the first in that order
        st = starts[(starts >= a) & (starts < z)] - a
        ro = red_o[a:z]
        if ro[st].all():
            continue
        group_of = np.repeat(np.arange(len(st)), np.diff(np.append(st, z - a)))
        differ = (pay_o[a:z] != pay_o[a:z][st][group_of]).any(axis=1) & ~ro
        if differ.any():
            k = a + int(np.argmax(differ))
            i = int(order[k])
            return (w.step, 3, int(w.b.glob(did_o[k])), w.b.row(w.lo + i)), _conflict(
                w.s, w.step, int(w.t[i]), int(w.ch[i]), "two different buffers are copied to one place in one step")
    for a, z in blocks:
        st = starts[(starts >= a) & (starts < z)]
        gdid, gred = did_o[st], red_o[st]
        new = pay_o[st]
        if gred.any():
            new = np.where(gred[:, None], fingerprint.add(state[gdid], fingerprint.group_sums(pay_o[a:z], st - a)), new)
        state[gdid] = new
    return None


def _bits_post_error(c, v: int, k: int, final: np.ndarray, want: np.ndarray) -> PostconditionError:
    return _post_error(c, v, k, int(_popcount(final)), int(_popcount(want)))


def _check_post(c, idx: PairIndex, b: _Batch, state: np.ndarray, need, post_n, post_c, post_in,
                post_error=_bits_post_error):
    """First failing explicit post pair (by index) and every-node pair (by (node, chunk)) of a batch."""
    first_expl = first_every = None
    sel = np.arange(idx.q) if post_in is None else np.flatnonzero(post_in)
    for lo in range(0, len(sel), _POST_BATCH):
        j = sel[lo:lo + _POST_BATCH]
        final, want = state[b.local(idx.post[j])], need(post_n[j], post_c[j])
        wrong = (final != want).any(axis=1)
        if wrong.any():
            i = int(np.argmax(wrong))
            first_expl = (int(j[i]), post_error(c, int(post_n[j[i]]), int(post_c[j[i]]), final[i], want[i]))
            break
    if c.post.every is None:
        return first_expl, None
    for lo in range(0, b.size, _POST_BATCH):
        loc = np.arange(lo, min(lo + _POST_BATCH, b.size))
        g = b.glob(loc)
        gc = idx.chunk_of(g)
        keep = c.post.every[gc]
        if not keep.any():
            continue
        loc, g, gc = loc[keep], g[keep], gc[keep]
        gn = idx.node_of(g)
        final, want = state[loc], need(gn, gc)
        wrong = (final != want).any(axis=1)
        if wrong.any():
            i = int(np.argmax(wrong))
            first_every = ((int(gn[i]), int(gc[i])), post_error(c, int(gn[i]), int(gc[i]), final[i], want[i]))
            break
    return first_expl, first_every


def _rows_per_step(s: Schedule) -> np.ndarray:
    if not len(s.step):
        return np.zeros(0, INDEX)
    cut = np.flatnonzero(s.step[1:] != s.step[:-1]) + 1
    return np.add.reduceat(np.diff(s.chunk_ptr), np.concatenate(([0], cut)))


def _chunk_batches(idx: PairIndex, chunks: int, fit: int, refuse, max_batches: int | None = None):
    """Greedy chunk ranges ``(lo, hi)`` of at most ``fit`` pairs each, decided up front (``refuse``
    None: any number of batches, oversized chunks alone; else refused when a chunk alone does not
    fit or more than ``max_batches`` are needed)."""
    if idx.direct and idx.universe is None:  # every chunk has one pair per node
        cum = np.arange(1, chunks + 1, dtype=INDEX) * (idx.groups // max(idx.width, 1))
    else:
        cum = np.cumsum(np.bincount(idx.chunk_of(slice(None)), minlength=chunks))
    edges = [0]
    while edges[-1] < chunks:
        done = int(cum[edges[-1] - 1]) if edges[-1] else 0
        hi = int(np.searchsorted(cum, done + fit, side="right"))
        if refuse is not None and (hi == edges[-1] or (max_batches is not None and len(edges) > max_batches)):
            raise refuse()
        edges.append(max(hi, edges[-1] + 1))
    del cum
    return list(zip(edges[:-1], edges[1:]))


def choose_method(nodes: int, pairs: int, budget_bytes: float | None = None) -> str:
    """``"exact"`` (contributor sets) or ``"fingerprint"`` (:mod:`collsim.verify.fingerprint`) for a reduction.

    Exact sets are kept wherever they are no larger than fingerprints (up to 128 nodes) or
    their whole state fits in one block of :data:`BLOCK_BYTES` (and in ``budget_bytes``);
    above that, fingerprints: :data:`~collsim.verify.fingerprint.PAIR_BYTES` a pair whatever N.

    >>> choose_method(64, 10**9), choose_method(1024, 1000), choose_method(1024, 10**7)
    ('exact', 'exact', 'fingerprint')
    """
    words = (nodes + 63) // 64
    if words * 8 <= fingerprint.PAIR_BYTES:
        return "exact"
    limit = BLOCK_BYTES if budget_bytes is None else min(BLOCK_BYTES, budget_bytes)
    return "exact" if pairs * words * 8 <= limit else "fingerprint"


def state_bytes_per_pair(nodes: int, method: str) -> int:
    """Bytes of verifier state per (node, chunk) pair under ``method``.

    >>> state_bytes_per_pair(1024, "exact"), state_bytes_per_pair(1024, "fingerprint")
    (128, 16)
    """
    return (nodes + 63) // 64 * 8 if method == "exact" else fingerprint.PAIR_BYTES


def _plan_run(s: Schedule, what: str, method: str | None):
    """Choose the method, build the pair index and the chunk batches (refusing what would not fit)."""
    c = s.collective
    n = c.nodes
    r, p, q = len(s.chunk_idx), c.pre.num_explicit, c.post.num_explicit
    per_step = _rows_per_step(s)
    # the index's shape, then the method: exact sets where they are small or fit at once
    direct0, _, _ = plan(n, c.chunks, p, r, q, 16)
    est_pairs = n * c.chunks if direct0 else min(p + 2 * r + q, n * c.chunks)
    method = method or _FORCE_METHOD or choose_method(n, est_pairs, memory_budget()[0])
    exact = method == "exact"
    words = (n + 63) // 64 if exact else fingerprint.HASHES + 1
    item = 8 if exact else 4
    row_bytes = words * item
    # per-step temporaries (payload, sorted payload, unions, current, new ...) and post-check batches
    post_rows = min(_POST_BATCH, max(q, p + 2 * r + q if c.post.every is not None else 0))
    most = int(per_step.max()) if per_step.size else 0
    if exact:
        temps = (most * 8 + 3 * post_rows) * row_bytes
    else:   # a step's rows at FINGERPRINT_ROW_BYTES, its sums in bounded blocks (_run_steps_fingerprint)
        temps = most * FINGERPRINT_ROW_BYTES + (min(most, _UPDATE_ROWS) * 12 + 3 * post_rows) * row_bytes \
            + 4 * est_pairs
    direct, index_bytes, _ = plan(n, c.chunks, p, r, q, row_bytes)
    check_memory(index_bytes + temps, what, HINT)
    idx = PairIndex(s, direct)
    # allocated while the state lives: group ids, group keys and first elements, row columns
    fixed = (p + 2 * r + q) * idx.read.itemsize + (0 if direct else 16 * idx.groups) + 24 * r + temps
    state_bytes = idx.groups * row_bytes

    # the index is allocated: what is left is measured (the default limit minus resident memory,
    # and the machine's available memory); the row steps and per-step temporaries come first
    budget, held_counted = memory_budget()
    rest = budget - (8 * r + temps if held_counted else fixed)
    steps = len(per_step)
    sets = "exact contributor sets" if exact else "fingerprints"

    def refuse():
        return limit_error(fixed + state_bytes, f"{what}: {sets} of {idx.groups} pairs over {n} "
                           f"nodes", HINT + f" (this process may allocate about {max(rest, 0) >> 20} MiB more; "
                           f"split into chunk batches that fit, they would replay the {steps} steps more than "
                           f"{MAX_PASS_STEPS} times, or one chunk alone does not fit)")

    if _BATCH_PAIRS:  # tests: force batches
        spans = _chunk_batches(idx, c.chunks, _BATCH_PAIRS, None)
    elif state_bytes <= min(BLOCK_BYTES if exact else 4 * BLOCK_BYTES, rest):
        spans = [None]
    else:  # chunk batches: state of at most BLOCK_BYTES, each with its rows' columns (and an id map)
        per_pair = row_bytes + 48 * r / max(idx.groups, 1)
        room = rest - (0 if idx.direct and idx.universe is None else 9 * idx.groups)
        fit = int(min((BLOCK_BYTES if exact else 4 * BLOCK_BYTES) // row_bytes, room // per_pair))
        if fit < 1:
            raise refuse()
        spans = _chunk_batches(idx, c.chunks, fit, refuse, max(1, MAX_PASS_STEPS // max(steps, 1)))
    return method, exact, words, idx, spans


def _untouched(c, idx: PairIndex, need, exact: bool, best_every):
    """The first failing every-node postcondition pair, counting the pairs no element mentions."""
    n = c.nodes
    pre_every = c.pre.every_mask
    # untouched pairs of every-node chunks keep their initial set: {v} if pre-held, else empty
    if c.prefix:
        minh = np.full(c.chunks, n, dtype=INDEX)
        pn, pc = c.pre.explicit()
        np.minimum.at(minh, pc, pn)
        thr = np.where(pre_every, 1, minh)
    else:
        thr = np.where(pre_every | (c.pre.counts() > 0), 0, n)
    g = np.flatnonzero(c.post.every[idx.chunk_of(slice(None))])
    absent = first_absent(n, c.post.every, thr, idx.node_of(g), idx.chunk_of(g))
    if absent is not None and (best_every is None or absent < best_every[0]):
        v, k = absent
        want = need(np.array([v]), np.array([k]))[0]
        want_count = int(_popcount(want)) if exact else int(fingerprint.count(want))
        best_every = (absent, _post_error(c, v, k, 1 if pre_every[k] else 0, want_count))
    return best_every


@located
def verify_reduction(s: Schedule, what: str, method: str | None = None) -> str:
    """Propagate contributor sets (or fingerprints) through a reduction's schedule and check its postcondition.

    Returns the method used: ``"exact"`` or ``"fingerprint"`` (``method`` None chooses by
    :func:`choose_method`).
    """
    c = s.collective
    n = c.nodes
    method, exact, words, idx, spans = _plan_run(s, what, method)
    row_step = s.step[idx.row_t]
    if len(row_step) and int(s.step[-1]) < 2**31:   # steps are non-decreasing: the last is the largest
        row_step = row_step.astype(np.int32)
    if exact:
        need, post_error = _Need(c, words), _bits_post_error
    else:
        x = fingerprint.draw_values(n)
        need, post_error = fingerprint.Need(c, x), fingerprint.post_error
    post_n, post_c = c.post.explicit()
    pre_every = c.pre.every_mask
    best_step = best_expl = best_every = None
    pre_held = idx.pre_held()
    for span in spans:
        b = _Batch(idx, s, row_step, span)
        stop = _NEVER if best_step is None else best_step[0][0]
        state = np.zeros((b.size, words), dtype=np.uint64 if exact else np.uint32)
        for a in range(0, b.size, _INIT_PAIRS):   # each pair's own contribution, a block of pairs at a time
            loc = np.arange(a, min(a + _INIT_PAIRS, b.size))
            g = b.glob(loc)
            held = pre_held[g] | pre_every[idx.chunk_of(g)]
            init, gn = loc[held], idx.node_of(g[held])
            del g, held
            if exact:
                state[init, gn >> 6] = np.left_shift(np.uint64(1), (gn & 63).astype(np.uint64))
            else:
                state[init] = x[gn]
            del loc, init, gn
        found = (_run_steps if exact else _run_steps_fingerprint)(s, b, state, stop)
        if found is not None and (best_step is None or found[0] < best_step[0]):
            best_step = found
        if best_step is None:
            expl, every = _check_post(c, idx, b, state, need, post_n, post_c,
                                      None if span is None else (post_c >= span[0]) & (post_c < span[1]),
                                      post_error)
            if expl is not None and (best_expl is None or expl[0] < best_expl[0]):
                best_expl = expl
            if every is not None and (best_every is None or every[0] < best_every[0]):
                best_every = every
        del state, b
    if best_step is not None:
        raise best_step[1]
    if best_expl is not None:
        raise best_expl[1]
    if c.post.every is None or idx.direct:  # direct mode: no pair is untouched
        if best_every is not None:
            raise best_every[1]
        return method
    best_every = _untouched(c, idx, need, exact, best_every)
    if best_every is not None:
        raise best_every[1]
    return method
