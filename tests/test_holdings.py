"""Holdings, the scalable data-flow verifier and the memory limit.

Two oracles are kept here verbatim from before "core model v2": the explicit
(node, chunk) construction of every collective and the dense data-flow verifier
(a nodes x chunks bit matrix, or a nodes x chunks x words contributor array).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core import errors as E
from collsim.core.collective import Collective, make_collective, min_deliveries, split_bytes
from collsim.core.collectives import TYPES
from collsim.core.holdings import Holdings
from collsim.core.errors import located
from collsim.core.limits import (ENV_VAR, MemoryLimitError, check_memory, format_bytes, memory_limit_bytes,
                                 parse_memory_limit)
from collsim.verify import pairs, reduction
from collsim.verify.dataflow import dataflow_memory_bytes, verify_dataflow
from conftest import names, raises_naming

KINDS = sorted(TYPES)


# -- oracle 1: the explicit construction --------------------------------------------------------

def _p(nodes, chunks):
    return np.ascontiguousarray(nodes, dtype=np.int64), np.ascontiguousarray(chunks, dtype=np.int64)


def _all(n, c):
    return _p(np.repeat(np.arange(n), c), np.tile(np.arange(c), n))


def old_arrays(kind, n, size, split=1, root=None, shift=1):
    """(pre_node, pre_chunk, post_node, post_chunk, chunk_bytes, post_upto) as collsim built them."""
    s, ar, upto = split, np.arange, None
    root = (0 if root is None else root) if TYPES[kind].rooted else None
    if kind == "allgather":
        c = n * s
        pre, post, sizes = _p(np.repeat(ar(n), s), ar(c)), _all(n, c), np.tile(split_bytes(size, s), n)
    elif kind == "reducescatter":
        c = n * s
        pre, post, sizes = _all(n, c), _p(np.repeat(ar(n), s), ar(c)), np.tile(split_bytes(size, s), n)
    elif kind in ("allreduce", "scan"):
        c = s
        pre, post, sizes = _all(n, c), _all(n, c), split_bytes(size, s)
        upto = post[0].copy() if kind == "scan" else None
    elif kind == "broadcast":
        c = s
        pre, post, sizes = _p(np.full(c, root), ar(c)), _all(n, c), split_bytes(size, s)
    elif kind == "reduce":
        c = s
        pre, post, sizes = _all(n, c), _p(np.full(c, root), ar(c)), split_bytes(size, s)
    elif kind in ("scatter", "gather"):
        c = n * s
        owner = np.repeat(ar(n), s)
        pre = _p(np.full(c, root), ar(c)) if kind == "scatter" else _p(owner, ar(c))
        post = _p(owner, ar(c)) if kind == "scatter" else _p(np.full(c, root), ar(c))
        sizes = np.tile(split_bytes(size, s), n)
    elif kind == "shift":
        c = n * s
        owner = np.repeat(ar(n), s)
        pre, post, sizes = _p(owner, ar(c)), _p((owner + shift) % n, ar(c)), np.tile(split_bytes(size, s), n)
    else:
        c = n * n * s
        src = np.repeat(ar(n), n * s)
        dst = np.tile(np.repeat(ar(n), s), n)
        keep = src != dst
        pre, post = _p(src[keep], ar(c)[keep]), _p(dst[keep], ar(c)[keep])
        sizes = np.tile(split_bytes(size, s), n * n)
    return pre[0], pre[1], post[0], post[1], np.ascontiguousarray(sizes, dtype=np.int64), upto


# -- oracle 2: the dense verifier ---------------------------------------------------------------

class BitMatrix:
    def __init__(self, rows, cols):
        self.words = np.zeros((rows, (cols + 63) // 64), dtype=np.uint64)

    def get(self, r, c):
        c = np.asarray(c, dtype=np.int64)
        w = self.words[r, c >> 6]
        return ((w >> (c & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)

    def set(self, r, c):
        c = np.asarray(c, dtype=np.int64)
        np.bitwise_or.at(self.words, (r, c >> 6), np.left_shift(np.uint64(1), (c & 63).astype(np.uint64)))


def _steps(s):
    bounds = s.step_bounds
    for step in range(s.num_steps):
        lo, hi = int(bounds[step]), int(bounds[step + 1])
        if lo == hi:
            continue
        lengths = np.diff(s.chunk_ptr[lo:hi + 1])
        t = np.repeat(np.arange(lo, hi, dtype=np.int64), lengths)
        yield step, t, s.chunk_idx[s.chunk_ptr[lo]:s.chunk_ptr[hi]]


def _missing(s, step, t, ch, bad):
    i = int(np.flatnonzero(bad)[0])
    node, chunk = int(s.src[t[i]]), int(ch[i])
    return E.MissingDataError(f"node {node} sends chunk {chunk} it does not hold",
                              E.Where(step=step, transfer=int(t[i]), node=node, chunk=chunk))


def _check_ranges(s):
    c = s.collective
    if len(s.chunk_idx) and (s.chunk_idx.min() < 0 or s.chunk_idx.max() >= c.chunks):
        bad = int(np.flatnonzero((s.chunk_idx < 0) | (s.chunk_idx >= c.chunks))[0])
        t = int(np.searchsorted(s.chunk_ptr, bad, side="right") - 1)
        raise E.MissingDataError(f"chunk id {int(s.chunk_idx[bad])} does not exist "
                                 f"(collective has {c.chunks} chunks)", E.Where(step=int(s.step[t]), transfer=t))
    empty = np.flatnonzero(np.diff(s.chunk_ptr) == 0)
    if empty.size:
        t = int(empty[0])
        raise E.MissingDataError("transfer carries no chunk", E.Where(step=int(s.step[t]), transfer=t))


def old_verify(s):
    _check_ranges(s)
    if s.collective.reduction:
        _old_reduction(s)
    else:
        _old_copies(s)


def _old_copies(s):
    c = s.collective
    if s.reduce.any():
        t = int(np.flatnonzero(s.reduce)[0])
        raise E.UnexpectedReductionError(f"the transfer reduces, but {c.name} has no reduction; its transfers "
                                         "copy (\"reduce\": false)", E.Where(step=int(s.step[t]), transfer=t))
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
        raise E.PostconditionError(f"node {int(c.post_node[i])} lacks chunk {int(c.post_chunk[i])}",
                                   E.Where(node=int(c.post_node[i]), chunk=int(c.post_chunk[i])))


def _popcount(a):
    return np.bitwise_count(a).sum(axis=-1, dtype=np.int64)


def _old_reduction(s):
    c = s.collective
    n, nc = c.nodes, c.chunks
    words = (n + 63) // 64
    state = np.zeros((n, nc, words), dtype=np.uint64)
    one = np.uint64(1)
    state[c.pre_node, c.pre_chunk, c.pre_node >> 6] |= np.left_shift(one, (c.pre_node & 63).astype(np.uint64))
    full = np.zeros((nc, words), dtype=np.uint64)
    np.bitwise_or.at(full, (c.pre_chunk, c.pre_node >> 6), np.left_shift(one, (c.pre_node & 63).astype(np.uint64)))
    for step, t, ch in _steps(s):
        payload = state[s.src[t], ch]
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
            raise E.ConflictingWriteError("a buffer is both copied into and reduced into in one step",
                                          E.Where(step=step, transfer=int(t[i]), node=int(dst[i]), chunk=int(ch[i])))
        gred = red_o[starts]
        pay_o = payload[order]
        union = np.bitwise_or.reduceat(pay_o, starts, axis=0)
        gdst, gch = dst[order][starts], ch[order][starts]
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
                raise E.DoubleCountError(
                    f"node {int(gdst[g])} {what} a contribution to chunk {int(gch[g])}",
                    E.Where(step=step, transfer=int(t[i]), node=int(gdst[g]), chunk=int(gch[g])))
        copy_g = ~gred
        if copy_g.any():
            first = pay_o[starts]
            group_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(order))))
            differ = (pay_o != first[group_of]).any(axis=1) & ~red_o
            if differ.any():
                r = int(np.flatnonzero(differ)[0])
                i = int(order[r])
                raise E.ConflictingWriteError("two different buffers are copied to one place in one step",
                                              E.Where(step=step, transfer=int(t[i]), node=int(dst[i]),
                                                      chunk=int(ch[i])))
        state[gdst, gch] = np.where(gred[:, None], state[gdst, gch] | union, union)
    final = state[c.post_node, c.post_chunk]
    need = full[c.post_chunk]
    if c.post_upto is not None:
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
        raise E.PostconditionError(
            f"node {int(c.post_node[i])} ends with {have} of {need_i} contributions to chunk {int(c.post_chunk[i])}"
            + ("" if c.post_upto is None else f" (needs exactly those of nodes 0..{int(c.post_upto[i])})"),
            E.Where(node=int(c.post_node[i]), chunk=int(c.post_chunk[i])))


# -- schedules without a system: the columns the data-flow check reads --------------------------

@dataclass(eq=False)
class Sched:
    collective: Collective
    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    chunk_ptr: np.ndarray
    chunk_idx: np.ndarray
    reduce: np.ndarray

    @property
    def num_steps(self):
        return int(self.step.max()) + 1 if len(self.step) else 0

    @property
    def step_bounds(self):
        return np.searchsorted(self.step, np.arange(self.num_steps + 1))


def sched(c, step, src, dst, chunks, reduce=False):
    """Schedule from per-transfer columns; ``chunks`` is a list of chunk lists or a (T, k) array."""
    step = np.asarray(step, dtype=np.int64)
    lengths = np.array([len(x) for x in chunks], dtype=np.int64)
    ptr = np.zeros(len(step) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.concatenate([np.asarray(x, dtype=np.int64) for x in chunks]) if len(chunks) else np.zeros(0, np.int64)
    red = np.broadcast_to(np.asarray(reduce, dtype=bool), step.shape).copy()
    return Sched(c, step, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), ptr, idx, red)


def verdict(fn, s):
    try:
        fn(s)
    except E.VerificationError as exc:
        return type(exc).__name__, exc.where, str(exc)
    return None


def same_verdict(s):
    new = verdict(verify_dataflow, s)
    assert new == verdict(located(old_verify), s)  # transfers named as files name them
    return new


# -- holdings and collectives ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n,split", [(2, 1), (3, 2), (5, 1), (7, 3), (64, 1), (65, 2)])
def test_lazy_pairs_equal_the_explicit_construction(kind, n, split):
    root = n - 1 if TYPES[kind].rooted else None
    shift = n // 2 if kind == "shift" else 1
    c = make_collective(kind, n, 1000 + n, split=split, root=root, shift=shift)
    pre_n, pre_c, post_n, post_c, sizes, upto = old_arrays(kind, n, 1000 + n, split, root, shift)
    for got, want in ((c.pre_node, pre_n), (c.pre_chunk, pre_c), (c.post_node, post_n), (c.post_chunk, post_c),
                      (c.chunk_bytes, sizes)):
        assert got.dtype == np.int64 and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    if upto is None:
        assert c.post_upto is None
    else:
        assert c.post_upto.dtype == np.int64
        np.testing.assert_array_equal(c.post_upto, upto)
    assert c.split == split and c.chunks == len(sizes)
    assert c.describe()["split"] == split
    np.testing.assert_array_equal(c.bytes_of(np.arange(c.chunks)), sizes)
    assert len(c.pre) == len(pre_n) and len(c.post) == len(post_n)
    assert c.pre.contains(pre_n, pre_c).all() and c.post.contains(post_n, post_c).all()


def test_holdings_memory_is_per_chunk():
    c = make_collective("allgather", 4096, 1024)
    assert c.post.nbytes <= 8 * c.chunks  # "every node holds every chunk": not nodes x chunks
    a2a = make_collective("alltoall", 600, 1024)  # 2.2e8 pairs: refused by the old 1.5e8 cap
    assert a2a.nodes * a2a.chunks > 1.5e8
    assert a2a.pre.nbytes + a2a.post.nbytes <= 10 * a2a.chunks


@given(st.integers(2, 6), st.integers(1, 6), st.data())
def test_holdings_from_pairs(n, chunks, data):
    node = data.draw(st.lists(st.integers(0, n - 1), max_size=20))
    chunk = data.draw(st.lists(st.integers(0, chunks - 1), min_size=len(node), max_size=len(node)))
    every = np.array(data.draw(st.lists(st.booleans(), min_size=chunks, max_size=chunks)))
    h = Holdings.from_pairs(n, chunks, node, chunk, every)
    want = {(v, c) for v, c in zip(node, chunk) if not every[c]} | {(v, c) for c in range(chunks) if every[c]
                                                                     for v in range(n)}
    got_n, got_c = h.pairs()
    explicit = sorted(((v, c) for v, c in want if not every[c]), key=lambda p: (p[1], p[0]))  # by chunk
    node_major = [(v, c) for v in range(n) for c in range(chunks) if every[c]]
    assert list(zip(got_n.tolist(), got_c.tolist())) == explicit + node_major
    assert len(h) == len(want)
    allv, allc = np.divmod(np.arange(n * chunks), chunks)
    assert h.contains(allv, allc).tolist() == [(v, c) in want for v, c in zip(allv.tolist(), allc.tolist())]
    assert h.counts().tolist() == [0 if every[c] else len({v for v, k in want if k == c}) for c in range(chunks)]


def test_min_deliveries_bounds_the_textbook_schedules():
    for kind, n, split in (("allgather", 8, 1), ("alltoall", 8, 2), ("broadcast", 8, 4)):
        assert min_deliveries(kind, n, split) <= (n - 1) * make_collective(kind, n, 64, split=split).chunks


# -- random schedules: the new verifier's verdict is the old one's --------------------------------

def _collectives():
    @st.composite
    def build(draw):
        kind = draw(st.sampled_from(KINDS))
        n = draw(st.integers(2, 5))
        split = draw(st.integers(1, 2))
        root = draw(st.integers(0, n - 1)) if TYPES[kind].rooted else None
        shift = draw(st.integers(1, n - 1))
        return make_collective(kind, n, draw(st.integers(1, 100)), split=split, root=root, shift=shift)

    @st.composite
    def custom(draw):  # arbitrary holdings, with several explicit holders per chunk
        kind = draw(st.sampled_from(["allgather", "allreduce", "scan"]))
        n = draw(st.integers(2, 5))
        chunks = draw(st.integers(1, 4))

        def holdings():
            every = np.array(draw(st.lists(st.booleans(), min_size=chunks, max_size=chunks)))
            k = draw(st.integers(0, 8))
            node = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
            chunk = draw(st.lists(st.integers(0, chunks - 1), min_size=k, max_size=k))
            return Holdings.from_pairs(n, chunks, node, chunk, every)
        return Collective(kind, n, chunks, 8, None, holdings(), holdings(), prefix=kind == "scan")
    return st.one_of(build(), custom())


@st.composite
def schedules(draw):
    """Random schedules, mostly sending what the sender plausibly holds, so many run to the end."""
    c = draw(_collectives())
    n = c.nodes
    held = {(int(v), int(k)) for v, k in zip(c.pre_node, c.pre_chunk)}
    copies = draw(st.sampled_from([0, 0, 1, 3]))  # in ten, for reductions
    stray = draw(st.integers(0, 9)) == 0  # a reduction flag somewhere, for copies
    steps, src, dst, chunks, red = [], [], [], [], []
    for step in range(draw(st.integers(0, 2 * n + 2))):
        new = set()
        for _ in range(draw(st.integers(0, n + 1))):
            a = draw(st.integers(0, n - 1))
            b = (a + draw(st.integers(1, n - 1))) % n
            mine = sorted(k for v, k in held if v == a)
            pick = st.sampled_from(mine) if mine and draw(st.integers(0, 9)) else st.integers(0, c.chunks - 1)
            ks = draw(st.lists(pick, min_size=1, max_size=3))
            steps.append(step)
            src.append(a)
            dst.append(b)
            chunks.append(ks)
            red.append(draw(st.integers(0, 9)) >= copies if c.reduction else stray and draw(st.integers(0, 5)) == 0)
            new |= {(b, k) for k in ks}
        held |= new
    return sched(c, steps, src, dst, chunks, red)


@settings(max_examples=300)  # with the three below, 850 differential cases a run (derandomized in CI)
@given(schedules())
def test_verdicts_match_the_dense_verifier(s):
    same_verdict(s)


@pytest.mark.parametrize("direct", [True, False])
@settings(max_examples=150)
@given(s=schedules())
def test_verdicts_match_in_either_index_mode(direct, s):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pairs, "_FORCE_DIRECT", direct)
        mp.setattr(pairs, "BLOCK_ROWS", 3)  # several row blocks
        same_verdict(s)


@settings(max_examples=150)
@given(schedules(), st.integers(1, 4), st.sampled_from([None, True, False]))
def test_verdicts_match_in_chunk_batches(s, batch, direct):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reduction, "_BATCH_PAIRS", batch)
        mp.setattr(pairs, "_FORCE_DIRECT", direct)
        same_verdict(s)


@settings(max_examples=100)
@given(schedules())
def test_verdicts_match_with_rank_compressed_keys(s):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pairs, "KEY_SPACE", 0)  # (direct mode is then impossible)
        same_verdict(s)


# -- sizes the dense code refused ---------------------------------------------------------------

def pairwise_alltoall(n, split=1):
    c = make_collective("alltoall", n, 4096, split=split)
    r = np.arange(n)
    p = np.repeat(np.arange(1, n), n)
    a = np.tile(r, n - 1)
    b = (a + p) % n
    base = (a * n + b) * split
    return sched(c, p - 1, a, b, base[:, None] + np.arange(split)[None, :])


@pytest.fixture(scope="module")
def a2a600():
    return pairwise_alltoall(600)


def test_alltoall_600_verifies(a2a600):
    assert a2a600.collective.nodes * a2a600.collective.chunks > 1.5e8  # the old cap refused this
    verify_dataflow(a2a600)


def _replace(s, **cols):
    kw = {k: getattr(s, k) for k in ("collective", "step", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")}
    kw.update(cols)
    return Sched(**kw)


def test_alltoall_600_dropped_transfer(a2a600):
    s = a2a600
    t = len(s.src) // 2
    keep = np.delete(np.arange(len(s.src)), t)
    bad = _replace(s, step=s.step[keep], src=s.src[keep], dst=s.dst[keep], chunk_idx=s.chunk_idx[keep],
                   chunk_ptr=np.arange(len(keep) + 1), reduce=s.reduce[keep])
    got = same_verdict(bad)
    assert got[0] == "PostconditionError"
    assert (got[1].node, got[1].chunk) == (int(s.dst[t]), int(s.chunk_idx[t]))


def test_alltoall_600_sending_what_is_not_held(a2a600):
    s = a2a600
    t = 5000
    idx = s.chunk_idx.copy()
    idx[t] = (int(s.dst[t]) * 600 + int(s.src[t]))  # the block the receiver sends back, not the sender's
    got = same_verdict(_replace(s, chunk_idx=idx))
    assert got[0] == "MissingDataError" and got[1].transfer == t and got[1].step == int(s.step[t])


def test_alltoall_600_relay_and_same_step_forward(a2a600):
    s = a2a600
    last = int(s.step[-1])
    # in a later step, a receiver forwards what it received: valid; in the same step: missing data
    t = 0
    for extra_step, want in ((last + 1, None), (int(s.step[t]), "MissingDataError")):
        step = np.append(s.step, extra_step)
        order = np.argsort(step, kind="stable")
        src = np.append(s.src, s.dst[t])[order]
        dst = np.append(s.dst, (s.dst[t] + 1) % 600)[order]
        idx = np.append(s.chunk_idx, s.chunk_idx[t])[order]
        got = verdict(verify_dataflow, _replace(s, step=step[order], src=src, dst=dst, chunk_idx=idx,
                                               chunk_ptr=np.arange(len(idx) + 1), reduce=np.zeros(len(idx), bool)))
        assert (got and got[0]) == want


def test_pairwise_fat_tree_alltoall_1024():
    s = collsim.build("pairwise", "fat-tree", "alltoall", "64KiB", nodes=1024)
    verify_dataflow(s)
    assert dataflow_memory_bytes(s) < 2**30
    keep = np.arange(len(s.src) - 1)
    bad = _replace(s, step=s.step[keep], src=s.src[keep], dst=s.dst[keep], chunk_idx=s.chunk_idx[keep],
                   chunk_ptr=s.chunk_ptr[:-1], reduce=s.reduce[keep])
    with pytest.raises(E.PostconditionError) as info:
        verify_dataflow(bad)
    assert info.value.where.node == int(s.dst[-1])


def ring_reducescatter(n, split=1):
    """Ring reduce-scatter: in step k node i reduces block (i - k - 1) mod n into node i + 1."""
    c = make_collective("reducescatter", n, 64, split=split)
    k = np.repeat(np.arange(n - 1), n)
    i = np.tile(np.arange(n), n - 1)
    block = (i - k - 1) % n
    return sched(c, k, i, (i + 1) % n, block[:, None] * split + np.arange(split)[None, :], reduce=True)


@pytest.mark.parametrize("n", [3, 70, 300])
def test_ring_reducescatter_and_breakages_match(n):
    s = ring_reducescatter(n)
    assert same_verdict(s) is None
    t = len(s.src) - 3
    dup_rows = np.insert(np.arange(len(s.src)), t, t)  # one reduction twice in its step
    assert same_verdict(_replace(s, step=s.step[dup_rows], src=s.src[dup_rows], dst=s.dst[dup_rows],
                                 chunk_idx=s.chunk_idx[dup_rows], chunk_ptr=np.arange(len(dup_rows) + 1),
                                 reduce=s.reduce[dup_rows]))[0] == "DoubleCountError"
    red = s.reduce.copy()
    red[t] = False  # a copy overwrites partial sums: the postcondition sees a short count
    assert same_verdict(_replace(s, reduce=red))[0] in ("PostconditionError", "DoubleCountError")


def test_copy_conflicts_and_cross_batch_order():
    c = make_collective("allreduce", 3, 64, split=2)
    # two different sets copied into (2, chunk 0) in one step
    got = same_verdict(sched(c, [0, 0], [0, 1], [2, 2], [[0], [0]]))
    assert got[0] == "ConflictingWriteError" and "two different buffers" in got[2]
    # a copy and a reduction into one buffer
    got = same_verdict(sched(c, [0, 0], [0, 1], [2, 2], [[0], [0]], reduce=[True, False]))
    assert got[0] == "ConflictingWriteError"
    names(got[2], "copied", "reduced")
    # in one step: (2, chunk 0) and (0, chunk 1) both double-count; the smaller pair is named,
    # whether the chunks are verified together or one per batch
    s = sched(c, [0, 0, 0, 0], [0, 0, 1, 1], [2, 2, 0, 0], [[0], [0], [1], [1]], reduce=True)
    for batch in (0, 1):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(reduction, "_BATCH_PAIRS", batch)
            got = same_verdict(s)
        assert got[0] == "DoubleCountError" and (got[1].node, got[1].chunk) == (0, 1)


def test_scan_chain():
    n = 9
    c = make_collective("scan", n, 64, split=2)
    s = sched(c, np.arange(n - 1), np.arange(n - 1), np.arange(1, n), [[0, 1]] * (n - 1), reduce=True)
    assert same_verdict(s) is None
    s2 = sched(c, np.arange(n - 2), np.arange(n - 2), np.arange(1, n - 1), [[0, 1]] * (n - 2), reduce=True)
    got = same_verdict(s2)
    assert got[0] == "PostconditionError" and got[1].node == n - 1 and "0..8" in got[2]


# -- the memory limit ---------------------------------------------------------------------------

def test_parse_memory_limit():
    assert parse_memory_limit("4GiB") == 4 * 2**30
    # issue #11: one unit rule, SI prefixes decimal (512MB was 512 * 2**20 before)
    assert parse_memory_limit(" 512MB ") == 512 * 10**6 and parse_memory_limit("512MiB") == 512 * 2**20
    assert parse_memory_limit("1048576") == 2**20
    assert 0 < parse_memory_limit("50%") <= parse_memory_limit("100%")
    for bad in ("0", "-1GiB", "lots", "150%", "0%", "1.5B"):
        with pytest.raises(E.InputError, match=ENV_VAR):
            parse_memory_limit(bad)


def test_default_limit_is_half_of_physical_memory(monkeypatch):
    from collsim.core import limits
    monkeypatch.delenv(ENV_VAR, raising=False)
    phys = limits.physical_memory_bytes()
    assert memory_limit_bytes() == (phys // 2 if phys else 8 * 2**30)
    monkeypatch.setattr(limits, "physical_memory_bytes", lambda: None)
    assert memory_limit_bytes() == 8 * 2**30
    monkeypatch.setenv(ENV_VAR, "3GiB")
    assert memory_limit_bytes() == 3 * 2**30


def test_check_memory_message(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "1MiB")
    check_memory(2**20, "x")
    with pytest.raises(MemoryLimitError) as info:
        check_memory(3 * 2**29, "sorting the universe", "use a smaller universe")
    names(str(info.value), "sorting the universe", "1.5 GiB", "1 MiB", f"{ENV_VAR}=1MiB", "use a smaller universe")
    assert isinstance(info.value, E.InputError)
    assert format_bytes(300 * 2**20) == "300 MiB" and format_bytes(10) == "10 B"


def test_a_tiny_limit_refuses_the_collective_in_one_line(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "1MiB")
    with pytest.raises(MemoryLimitError) as info:
        make_collective("alltoall", 600, 4096)
    msg = str(info.value)
    assert "\n" not in msg and "MiB" in msg and "limit of 1 MiB" in msg and ENV_VAR in msg
    assert "alltoall on 600 nodes" in msg and msg.endswith("use fewer nodes")  # one block a pair: no chunks to cut
    with pytest.raises(MemoryLimitError, match="with 1440000 chunks .*use fewer nodes or chunks$"):
        make_collective("alltoall", 600, 4096, split=4)  # the algorithm's chunking: fewer chunks would help
    make_collective("allgather", 16, 4096)  # small ones still fit


def test_a_tiny_limit_refuses_verification(monkeypatch, a2a600):
    monkeypatch.setenv(ENV_VAR, "16MiB")
    with raises_naming(MemoryLimitError, "alltoall", "600 nodes", "16 MiB"):   # the work, and the limit
        verify_dataflow(a2a600)


def star_reduce(n, split):
    """Every node reduces all its chunks into the root, one node per step."""
    c = make_collective("reduce", n, 64 * split, split=split)
    return sched(c, np.arange(n - 1), np.arange(1, n), np.zeros(n - 1, np.int64), [list(range(split))] * (n - 1),
                 reduce=True)


def test_reduction_state_is_batched_or_refused(monkeypatch):
    s = star_reduce(4096, 16)  # 65536 tracked pairs x 64 words: 32 MiB of contributor sets
    monkeypatch.setenv(ENV_VAR, "16MiB")
    assert verify_dataflow(s) == "fingerprint"  # by default: 16 bytes a pair, no batches
    bad = _replace(s, chunk_idx=np.where(np.arange(len(s.chunk_idx)) == 9000, 3, s.chunk_idx))
    with pytest.raises(E.PostconditionError, match="4097 of 4096 contributions"):
        verify_dataflow(bad)
    monkeypatch.setattr(reduction, "_FORCE_METHOD", "exact")  # exact sets, in chunk batches
    verify_dataflow(s)
    bad = _replace(s, chunk_idx=np.where(np.arange(len(s.chunk_idx)) == 9000, 3, s.chunk_idx))
    with pytest.raises(E.DoubleCountError) as info:
        verify_dataflow(bad)
    monkeypatch.delenv(ENV_VAR)
    with pytest.raises(E.DoubleCountError) as whole:
        verify_dataflow(bad)
    assert str(info.value) == str(whole.value)
    monkeypatch.setenv(ENV_VAR, "4MiB")  # one chunk's 4096 sets (and their rows) no longer fit beside the index
    with raises_naming(MemoryLimitError, "65536 pairs", "4096 nodes", "4 MiB"):
        verify_dataflow(s)


def test_cli_refuses_in_one_line(run_cli, monkeypatch):
    monkeypatch.setenv(ENV_VAR, "2GiB")
    proc = run_cli("compare", "--nodes", "100000")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "memory limit of 2 GiB" in proc.stderr
