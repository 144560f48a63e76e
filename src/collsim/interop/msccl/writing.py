"""collsim schedule -> MSCCL algorithm XML (docs/formats.md, "MSCCL algorithm XML").

The mapping (vectorised with numpy; only the final XML elements are made one by one):

* **locations**: every (rank, chunk) a schedule touches gets one place: the output buffer
  at the chunk's output offset if the rank must end with it (:mod:`.msccl_layout`), else,
  for copies, the input buffer if the rank starts with it and nothing overwrites it, else
  the next free scratch chunk of that rank (in chunk order);
* **copies**: a rank that starts with a chunk somewhere other than its place copies it there
  first (``cpy`` from the input, one step per contiguous run), in a thread block of its own;
* **transfers**: a transfer of step k from a to b becomes, per contiguous run of its chunks
  (contiguous on both sides, at most ``max_count`` long), an ``s`` step on a and an ``r``
  (``rrc`` if it reduces) on b, in the thread block a keeps for b and b for a: one thread
  block per (rank, peer), holding both directions, steps ordered by (step, sends before
  receives, transfer, run), so the k-th send of a to b is the k-th receive of b from a;
* **channels**: the pair {a, b} at ring distance d uses channel (d - 1) // 16, the same on
  both sides, so at most 32 thread blocks of a rank share a channel;
* **dependencies**: per location, in (step, reads before writes) order, a read waits for the
  last write, a write for the last write and every read since (read-after-write,
  write-after-write, write-after-read); waits inside one thread block are program order,
  waits another wait of the same thread block already implies are dropped, and each step
  keeps one (``depid``, ``deps``): the others become ``nop`` steps just before it.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import UnsupportedError
from .errors import MscclLimitError
from ...core.plugins import require
from ...core.schedule import Schedule
from .layout import Layout
from .xml_model import MscclAlgo, MscclGpu, MscclLimits, MscclStep, MscclThreadBlock

_BUF = np.array(["i", "o", "s"])
_SEND, _RECV, _RRC, _CPY = 0, 1, 2, 3
_TYPES = ("s", "r", "rrc", "cpy")
BIG = np.int64(1) << 40


def _segments(breaks: np.ndarray, cap: int) -> np.ndarray:
    """Run id per row: a new run where ``breaks`` is set or a run reaches ``cap`` rows."""
    rid = np.cumsum(breaks) - 1
    start = np.flatnonzero(breaks)
    pos = np.arange(len(breaks)) - start[rid]
    return np.cumsum(breaks | (pos % cap == 0)) - 1


def _locations(schedule: Schedule, lay: Layout, limits: MscclLimits):
    """Sorted pair keys (rank * ids + chunk) the schedule touches, with their buffer and offset."""
    n, ids = lay.ngpus, lay.chunk_ids
    rows = np.repeat(np.arange(len(schedule)), np.diff(schedule.chunk_ptr))
    chunk = schedule.chunk_idx
    reads = schedule.src[rows] * ids + chunk
    writes = schedule.dst[rows] * ids + chunk
    post = np.concatenate([v * ids + c[c >= 0] for v in range(n) for c in (lay.output_chunks(v),)])
    keys = np.unique(np.concatenate([reads, writes, post]))
    v, c = keys // ids, keys % ids
    out_off, in_off = lay.out_offset(v, c), lay.in_offset(v, c)
    written = np.isin(keys, writes)
    buf = np.where(out_off >= 0, 1, np.where(~lay.reduction & (in_off >= 0) & ~written, 0, 2))
    off = np.where(buf == 1, out_off, in_off)
    scratch = np.flatnonzero(buf == 2)
    first = np.searchsorted(v[scratch], v[scratch], side="left")
    off[scratch] = np.arange(len(scratch)) - first
    s_chunks = np.bincount(v[scratch], minlength=n)
    for what, size in (("input", lay.in_size), ("output", lay.out_size), ("scratch", int(s_chunks.max(initial=0)))):
        if size - 1 > limits.max_offset:
            raise MscclLimitError(f"the {what} buffer needs {size} chunks, above the executor's largest offset "
                                  f"{limits.max_offset} (offsets are int16): use fewer chunks")
    return keys, buf, off, in_off, s_chunks, rows, reads, writes


def schedule_to_msccl(schedule: Schedule, *, limits: MscclLimits = MscclLimits(), proto: str = "Simple",
                      name: str | None = None, min_bytes: int = 0, max_bytes: int = 1 << 40) -> MscclAlgo:
    """The MSCCL algorithm of an electrical collsim schedule (the mapping: module docstring)."""
    require(schedule.system, "msccl", "MSCCL export (steps that move data between GPUs over NCCL connections)")
    if proto not in ("Simple", "LL", "LL128"):
        raise UnsupportedError(f"proto must be Simple, LL or LL128, not {proto!r}")
    coll = schedule.collective
    lay = Layout(coll.name, coll.nodes, coll.split, coll.root)
    n, ids, cap = lay.ngpus, lay.chunk_ids, limits.max_count
    keys, buf, off, in_off, s_chunks, rows, reads, writes = _locations(schedule, lay, limits)
    ri, wi = np.searchsorted(keys, reads), np.searchsorted(keys, writes)
    order = np.lexsort((off[ri], buf[ri], rows))
    t, sb, so, rb, ro = rows[order], buf[ri][order], off[ri][order], buf[wi][order], off[wi][order]
    brk = np.ones(len(t), bool)
    brk[1:] = (t[1:] != t[:-1]) | (sb[1:] != sb[:-1]) | (so[1:] != so[:-1] + 1) | (rb[1:] != rb[:-1]) \
        | (ro[1:] != ro[:-1] + 1)
    run = _segments(brk, cap)
    st = np.flatnonzero(np.diff(run, prepend=-1))
    cnt = np.diff(np.append(st, len(run)))
    rt = t[st]
    a, b, step, red = schedule.src[rt], schedule.dst[rt], schedule.step[rt], schedule.reduce[rt]
    # initial copies: pairs whose place is not where the rank starts with them
    need = (in_off >= 0) & (buf != 0)
    cv, cin, cbuf, coff = keys[need] // ids, in_off[need], buf[need], off[need]
    o2 = np.lexsort((cin, cbuf, cv))
    cv, cin, cbuf, coff = cv[o2], cin[o2], cbuf[o2], coff[o2]
    cb = np.ones(len(cv), bool)
    cb[1:] = (cv[1:] != cv[:-1]) | (cbuf[1:] != cbuf[:-1]) | (cin[1:] != cin[:-1] + 1) | (coff[1:] != coff[:-1] + 1)
    crun = _segments(cb, cap)
    cst = np.flatnonzero(np.diff(crun, prepend=-1))
    ccnt = np.diff(np.append(cst, len(crun)))
    # thread blocks: one per (rank, peer), then a copy block on ranks that copy
    pairs = np.unique(np.concatenate([a * n + b, b * n + a]))
    pv, pp = pairs // n, pairs % n
    npeer = np.bincount(pv, minlength=n)
    tb_base = np.concatenate([[0], np.cumsum(npeer + (np.bincount(cv[cst], minlength=n) > 0))])
    tb_local = np.arange(len(pairs)) - np.searchsorted(pv, pv)
    dist = np.minimum((pp - pv) % n, (pv - pp) % n)
    chan = (dist - 1) // max(1, limits.max_tbs_per_channel // 2)
    has_send = np.isin(pairs, a * n + b)
    has_recv = np.isin(pairs, b * n + a)
    ntb = tb_base[-1]
    tb_gpu = np.repeat(np.arange(n), np.diff(tb_base))
    tb_id = np.arange(ntb) - tb_base[tb_gpu]
    tb_send = np.full(ntb, -1)
    tb_recv = np.full(ntb, -1)
    tb_chan = np.zeros(ntb, np.int64)
    g_of_pair = tb_base[pv] + tb_local
    tb_send[g_of_pair] = np.where(has_send, pp, -1)
    tb_recv[g_of_pair] = np.where(has_recv, pp, -1)
    tb_chan[g_of_pair] = chan
    _check_blocks(tb_gpu, tb_id, tb_send, tb_recv, tb_chan, limits)
    # events: sends, receives, copies
    tb_s = tb_base[a] + (np.searchsorted(pairs, a * n + b) - np.searchsorted(pv, a))
    tb_r = tb_base[b] + (np.searchsorted(pairs, b * n + a) - np.searchsorted(pv, b))
    nr, nc = len(st), len(cst)
    ev_tb = np.concatenate([tb_s, tb_r, tb_base[cv[cst]] + npeer[cv[cst]]])
    ev_step = np.concatenate([step, step, np.full(nc, -1)])
    ev_phase = np.concatenate([np.zeros(nr, np.int64), np.ones(nr, np.int64), np.zeros(nc, np.int64)])
    ev_seq = np.concatenate([np.arange(nr), np.arange(nr), np.arange(nc)])
    ev_type = np.concatenate([np.full(nr, _SEND), np.where(red, _RRC, _RECV), np.full(nc, _CPY)])
    ev_sbuf = np.concatenate([sb[st], rb[st], np.zeros(nc, np.int64)])
    ev_soff = np.concatenate([so[st], ro[st], cin[cst]])
    ev_dbuf = np.concatenate([sb[st], rb[st], cbuf[cst]])
    ev_doff = np.concatenate([so[st], ro[st], coff[cst]])
    ev_cnt = np.concatenate([cnt, cnt, ccnt])
    eo = np.lexsort((ev_seq, ev_phase, ev_step, ev_tb))
    ev = {k: v[eo] for k, v in dict(tb=ev_tb, step=ev_step, phase=ev_phase, type=ev_type, sbuf=ev_sbuf,
                                     soff=ev_soff, dbuf=ev_dbuf, doff=ev_doff, cnt=ev_cnt).items()}
    tb_start = np.searchsorted(ev["tb"], np.arange(ntb + 1))
    pos = np.arange(len(eo)) - tb_start[ev["tb"]]
    deps = _dependencies(ev, pos, tb_gpu, ids)
    steps = _steps(ev, pos, deps, tb_start, tb_gpu, tb_id, limits)
    gpus = []
    for v in range(n):
        tbs = tuple(MscclThreadBlock(int(tb_id[g]), int(tb_send[g]), int(tb_recv[g]), int(tb_chan[g]), steps[g])
                    for g in range(tb_base[v], tb_base[v + 1]))
        gpus.append(MscclGpu(v, lay.in_size, lay.out_size, int(s_chunks[v]), tbs))
    name = name or f"collsim {schedule.algorithm} {coll.name} N={n}"
    return MscclAlgo(name, proto, coll.name, int(tb_chan.max(initial=0)) + 1, lay.nchunksperloop, n, 0, 1,
                     int(min_bytes), int(max_bytes), tuple(gpus))


def _check_blocks(tb_gpu, tb_id, tb_send, tb_recv, tb_chan, limits: MscclLimits) -> None:
    """Refuse thread-block counts and channels beyond the executor's limits."""
    if len(tb_gpu):
        per_gpu = np.bincount(tb_gpu)
        g = int(per_gpu.argmax())
        if per_gpu[g] > limits.max_thread_blocks:
            raise MscclLimitError(f"gpu {g} needs {per_gpu[g]} thread blocks (one per peer), above the executor's "
                                  f"limit of {limits.max_thread_blocks} thread blocks per gpu (--max-thread-blocks)")
        top = int(tb_chan.max())
        if top >= limits.max_channels:
            raise MscclLimitError(f"gpu {int(tb_gpu[tb_chan.argmax()])} needs channel {top}, above the executor's "
                                  f"limit of {limits.max_channels} channels (--max-channels)")
    for peer, what in ((tb_send, "send"), (tb_recv, "receive")):
        key = tb_gpu[peer >= 0] * (limits.max_channels + 1) + tb_chan[peer >= 0]
        if key.size:
            u, c = np.unique(key, return_counts=True)
            if c.max() > limits.max_tbs_per_channel:
                k = int(u[c.argmax()])
                raise MscclLimitError(f"gpu {k // (limits.max_channels + 1)} has {c.max()} thread blocks with a "
                                      f"{what} peer on channel {k % (limits.max_channels + 1)}, above the executor's "
                                      f"limit of {limits.max_tbs_per_channel} (--max-tbs-per-channel)")


def _dependencies(ev: dict, pos: np.ndarray, tb_gpu: np.ndarray, ids: int):
    """(waiting event, awaited event) pairs across thread blocks, redundant ones dropped."""
    tb, typ, cnt = ev["tb"], ev["type"], ev["cnt"]
    e = np.repeat(np.arange(len(tb)), cnt)
    within = np.arange(len(e)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    write = typ[e] != _SEND
    lbuf = np.where(write, ev["dbuf"][e], ev["sbuf"][e])
    loff = np.where(write, ev["doff"][e], ev["soff"][e]) + within
    loc = (tb_gpu[tb[e]] * 3 + lbuf) * BIG + loff
    o = np.lexsort((pos[e], tb[e], ev["phase"][e], ev["step"][e], loc))
    e, write, loc = e[o], write[o], loc[o]
    idx = np.arange(len(e))
    gstart = np.searchsorted(loc, loc, side="left")
    gend = np.searchsorted(loc, loc, side="right")
    last = np.maximum.accumulate(np.where(write, idx, -1))
    prev_w = np.concatenate([[-1], last[:-1]]) if len(e) else last
    nxt = np.minimum.accumulate(np.where(write, idx, len(e))[::-1])[::-1]
    next_w = np.concatenate([nxt[1:], [len(e)]]) if len(e) else nxt
    m1 = prev_w >= gstart
    m2 = ~write & (next_w < gend)
    waiter = np.concatenate([e[m1], e[next_w[m2]]])
    awaited = np.concatenate([e[prev_w[m1]], e[m2]])
    cross = tb[waiter] != tb[awaited]
    waiter, awaited = waiter[cross], awaited[cross]
    # one wait per (waiter, awaited thread block): the latest step; then drop implied waits
    o = np.lexsort((pos[awaited], tb[awaited], pos[waiter], tb[waiter]))
    waiter, awaited = waiter[o], awaited[o]
    keep = np.ones(len(waiter), bool)
    keep[:-1] = (waiter[1:] != waiter[:-1]) | (tb[awaited][1:] != tb[awaited][:-1])
    waiter, awaited = waiter[keep], awaited[keep]
    o = np.lexsort((pos[waiter], tb[awaited], tb[waiter]))
    waiter, awaited = waiter[o], awaited[o]
    group = np.cumsum(np.concatenate([[True], (tb[waiter][1:] != tb[waiter][:-1])
                                      | (tb[awaited][1:] != tb[awaited][:-1])])) if len(waiter) else waiter
    acc = np.maximum.accumulate(group * BIG + pos[awaited]) if len(waiter) else waiter
    before = np.concatenate([[-1], acc[:-1]]) if len(waiter) else acc
    implied = before - group * BIG >= pos[awaited]
    return waiter[~implied], awaited[~implied]


def _steps(ev: dict, pos, deps, tb_start, tb_gpu, tb_id, limits: MscclLimits) -> list:
    """Each thread block's steps: nops for extra waits, final indices, ``hasdep``."""
    waiter, awaited = deps
    o = np.lexsort((ev["tb"][awaited], waiter))
    waiter, awaited = waiter[o], awaited[o]
    nev = len(ev["tb"])
    ndep = np.bincount(waiter, minlength=nev)
    nops = np.maximum(ndep - 1, 0)
    csum = np.cumsum(nops)
    final = pos + csum - np.concatenate([[0], csum])[tb_start[:-1]][ev["tb"]]
    hasdep = np.zeros(nev, bool)
    hasdep[awaited] = True
    first_dep = np.searchsorted(waiter, np.arange(nev))
    out = []
    for g in range(len(tb_start) - 1):
        lo, hi = tb_start[g], tb_start[g + 1]
        total = int(hi - lo + nops[lo:hi].sum())
        if total > limits.max_steps:
            raise MscclLimitError(f"gpu {tb_gpu[g]}, tb {tb_id[g]}: {total} steps ({int(nops[lo:hi].sum())} of them "
                                  f"nop), above the executor's limit of {limits.max_steps} steps per thread block "
                                  f"(--max-steps; 64 in msccl-executor-nccl, 256 in RCCL)")
        steps = []
        for i in range(lo, hi):
            waits = [(int(tb_id[ev["tb"][w]]), int(final[w])) for w in awaited[first_dep[i]:first_dep[i] + ndep[i]]]
            for dt, ds in waits[:-1]:
                steps.append(MscclStep(len(steps), "nop", "i", -1, "o", -1, 0, dt, ds, 0))
            dt, ds = waits[-1] if waits else (-1, -1)
            steps.append(MscclStep(len(steps), _TYPES[ev["type"][i]], str(_BUF[ev["sbuf"][i]]), int(ev["soff"][i]),
                                   str(_BUF[ev["dbuf"][i]]), int(ev["doff"][i]), int(ev["cnt"][i]), dt, ds,
                                   int(hasdep[i])))
        out.append(tuple(steps))
    return out
