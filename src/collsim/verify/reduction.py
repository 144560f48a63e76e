"""Data flow of reductions: exact contributor sets per tracked pair.

Every pair of the :class:`~collsim.verify.pairs.PairIndex` carries a bitset over
nodes: the contributions combined in that buffer.  Step by step, every row
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
from .pairs import INDEX, PairIndex, first_absent, plan

BLOCK_BYTES = 256 << 20
"""Most bytes of contributor bitsets held at once: larger states are verified in chunk batches (in one
batch, an all-reduce on 4096 nodes would allocate 5.8 GiB of bitsets)."""
MAX_PASS_STEPS = 4_000_000
"""Most (batch, step) iterations: each batch replays the steps, one Python iteration each, so more is
refused as too slow (about a minute per million)."""
_NEVER = np.iinfo(INDEX).max
_POST_BATCH = 1 << 18
_BATCH_PAIRS = 0  # > 0: verify in chunk batches of at most this many pairs (for tests)
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


def _run_steps(s: Schedule, b: _Batch, state: np.ndarray, stop_step: int):
    """Propagate one batch; return ``(order key, error)`` of its first violation, or None."""
    if not len(b.step):
        return None
    cut = np.flatnonzero(b.step[1:] != b.step[:-1]) + 1
    bounds = np.concatenate(([0], cut, [len(b.step)])).tolist()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        step = int(b.step[lo])
        if step > stop_step:
            return None
        sid, did, t, ch = b.src[lo:hi], b.dst[lo:hi], b.t[lo:hi], b.ch[lo:hi]
        payload = state[sid]                                   # (rows, words), read at step start
        empty = ~payload.any(axis=1)
        if empty.any():
            i = int(np.argmax(empty))
            return (step, 0, b.row(lo + i), 0), _missing(s, step, int(t[i]), int(ch[i]))
        red = s.reduce[t]
        order = np.argsort(did, kind="stable")
        did_o = did[order]
        if len(did_o) < 2 or bool((did_o[1:] != did_o[:-1]).all()):
            # one write per buffer: only a reduction into a buffer that already holds it double-counts
            if red.any():
                current = state[did]
                dup = red & (current & payload).any(axis=1)
                if dup.any():
                    rows = np.flatnonzero(dup)
                    i = int(rows[np.argmin(did[rows])])
                    return ((step, 2, int(b.glob(did[i])), 0),
                            _double(s, step, int(t[i]), int(ch[i]), "already holds"))
                state[did] = np.where(red[:, None], current | payload, payload)
            else:
                state[did] = payload
            continue
        red_o = red[order]
        starts = np.flatnonzero(np.concatenate([[True], did_o[1:] != did_o[:-1]]))
        ends = np.append(starts[1:], len(order))
        mixed = np.logical_or.reduceat(red_o, starts) & ~np.logical_and.reduceat(red_o, starts)
        if mixed.any():
            gi = int(np.argmax(mixed))
            i = int(order[starts[gi]])
            return (step, 1, int(b.glob(did_o[starts[gi]])), 0), _conflict(
                s, step, int(t[i]), int(ch[i]), "a buffer is both copied into and reduced into in one step")
        gred = red_o[starts]
        pay_o = payload[order]
        union = np.bitwise_or.reduceat(pay_o, starts, axis=0)
        gdid = did_o[starts]
        current = state[gdid]
        if gred.any():  # incoming sets pairwise disjoint and disjoint from the buffer
            counts = np.add.reduceat(_popcount(pay_o), starts)
            overlap = (current & union).any(axis=1)
            bad = gred & ((counts != _popcount(union)) | overlap)
            if bad.any():
                gi = int(np.argmax(bad))
                i = int(order[ends[gi] - 1])
                what = "already holds" if overlap[gi] else "receives twice in one step"
                return (step, 2, int(b.glob(gdid[gi])), 0), _double(s, step, int(t[i]), int(ch[i]), what)
        if (~gred).any():  # all copies to one buffer in one step must agree
            group_of = np.repeat(np.arange(len(starts)), ends - starts)
            differ = (pay_o != pay_o[starts][group_of]).any(axis=1) & ~red_o
            if differ.any():
                k = int(np.argmax(differ))
                i = int(order[k])
                return (step, 3, int(b.glob(did_o[k])), b.row(lo + i)), _conflict(
                    s, step, int(t[i]), int(ch[i]), "two different buffers are copied to one place in one step")
        state[gdid] = np.where(gred[:, None], current | union, union)
    return None


def _check_post(c, idx: PairIndex, b: _Batch, state: np.ndarray, need: _Need, post_n, post_c, post_in):
    """First failing explicit post pair (by index) and every-node pair (by (node, chunk)) of a batch."""
    first_expl = first_every = None
    sel = np.arange(idx.q) if post_in is None else np.flatnonzero(post_in)
    for lo in range(0, len(sel), _POST_BATCH):
        j = sel[lo:lo + _POST_BATCH]
        final, want = state[b.local(idx.post[j])], need(post_n[j], post_c[j])
        wrong = (final != want).any(axis=1)
        if wrong.any():
            i = int(np.argmax(wrong))
            first_expl = (int(j[i]), _post_error(c, int(post_n[j[i]]), int(post_c[j[i]]),
                                                 int(_popcount(final[i])), int(_popcount(want[i]))))
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
            first_every = ((int(gn[i]), int(gc[i])), _post_error(
                c, int(gn[i]), int(gc[i]), int(_popcount(final[i])), int(_popcount(want[i]))))
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


@located
def verify_reduction(s: Schedule, what: str) -> None:
    """Propagate exact contributor sets through a reduction's schedule and check its postcondition."""
    c = s.collective
    n = c.nodes
    words = (n + 63) // 64
    r, p, q = len(s.chunk_idx), c.pre.num_explicit, c.post.num_explicit
    per_step = _rows_per_step(s)
    # per-step temporaries (payload, sorted payload, unions, current, new ...) and post-check batches
    post_rows = min(_POST_BATCH, max(q, p + 2 * r + q if c.post.every is not None else 0))
    temps = ((int(per_step.max()) if per_step.size else 0) * 8 + 3 * post_rows) * words * 8
    direct, index_bytes, _ = plan(n, c.chunks, p, r, q, words * 8)
    check_memory(index_bytes + temps, what, HINT)
    idx = PairIndex(s, direct)
    # allocated while the state lives: group ids, group keys and first elements, row columns
    fixed = (p + 2 * r + q) * idx.read.itemsize + (0 if direct else 16 * idx.groups) + 24 * r + temps
    state_bytes = idx.groups * words * 8

    # the index is allocated: what is left is measured (the default limit minus resident memory,
    # and the machine's available memory); the row steps and per-step temporaries come first
    budget, held_counted = memory_budget()
    rest = budget - (8 * r + temps if held_counted else fixed)
    steps = len(per_step)

    def refuse():
        return limit_error(fixed + state_bytes, f"{what}: exact contributor sets of {idx.groups} pairs over {n} "
                           f"nodes", HINT + f" (this process may allocate about {max(rest, 0) >> 20} MiB more; "
                           f"split into chunk batches that fit, they would replay the {steps} steps more than "
                           f"{MAX_PASS_STEPS} times, or one chunk alone does not fit)")

    if _BATCH_PAIRS:  # tests: force batches
        spans = _chunk_batches(idx, c.chunks, _BATCH_PAIRS, None)
    elif state_bytes <= min(BLOCK_BYTES, rest):
        spans = [None]
    else:  # chunk batches: bitsets of at most BLOCK_BYTES, each with its rows' columns (and an id map)
        per_pair = words * 8 + 48 * r / max(idx.groups, 1)
        room = rest - (0 if idx.direct and idx.universe is None else 9 * idx.groups)
        fit = int(min(BLOCK_BYTES // (words * 8), room // per_pair))
        if fit < 1:
            raise refuse()
        spans = _chunk_batches(idx, c.chunks, fit, refuse, max(1, MAX_PASS_STEPS // max(steps, 1)))
    row_step = s.step[idx.row_t]
    need = _Need(c, words)
    post_n, post_c = c.post.explicit()
    pre_every = c.pre.every_mask
    best_step = best_expl = best_every = None
    pre_held = idx.pre_held()
    for span in spans:
        b = _Batch(idx, s, row_step, span)
        state = np.zeros((b.size, words), dtype=np.uint64)
        g = b.glob(np.arange(b.size))
        gn = idx.node_of(g)
        init = np.flatnonzero(pre_held[g] | pre_every[idx.chunk_of(g)])
        state[init, gn[init] >> 6] = np.left_shift(np.uint64(1), (gn[init] & 63).astype(np.uint64))
        del g, gn, init
        found = _run_steps(s, b, state, _NEVER if best_step is None else best_step[0][0])
        if found is not None and (best_step is None or found[0] < best_step[0]):
            best_step = found
        if best_step is None:
            expl, every = _check_post(c, idx, b, state, need, post_n, post_c,
                                      None if span is None else (post_c >= span[0]) & (post_c < span[1]))
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
        return
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
        want = int(_popcount(need(np.array([v]), np.array([k]))[0]))
        best_every = (absent, _post_error(c, v, k, 1 if pre_every[k] else 0, want))
    if best_every is not None:
        raise best_every[1]
