"""Each rank's part of a schedule, prepared once: its buffer, and per step its requests and copies.

Every rank holds one contiguous numpy buffer with a slot for each chunk it ever holds, sends
or receives (:mod:`collsim.mpi.buffers`).  A send whose chunks lie contiguously in the buffer
and are not overwritten in the same step is sent from the buffer itself, else packed first; a
copy whose target is contiguous and not read in the same step is received in place, anything
else (reductions) into a staging buffer and combined after the step's ``MPI_Waitall``: the
verifier's semantics, where a transfer reads its sender's state at the start of the step.
Plans are plain numpy; persistent MPI requests are made only if a communicator is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.schedule import Schedule
from .buffers import OPS, check_data, held_chunks, initial, layout, ranges

TAG_LIMIT = 32767  # every MPI library accepts tags up to this


@dataclass(frozen=True, eq=False)
class StepPlan:
    """One rank's part of one step: its requests and how to pack and unpack their data."""

    step: int
    requests: list
    packs: list
    unpacks: list
    peers: tuple
    sends: list = field(default_factory=list)
    recvs: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class RankPlan:
    """Everything one rank needs to run a schedule, prepared once."""

    rank: int
    buffer: np.ndarray
    start: np.ndarray
    steps: list
    post_chunks: np.ndarray
    post_index: np.ndarray
    last_step: np.ndarray
    ufunc: Any = field(default=np.add)


def plan_rank(schedule: Schedule, rank: int, dtype: Any = "int64", op: str = "sum", comm: Any = None) -> RankPlan:
    """Prepare one rank's buffer and per-step plan (requests only if ``comm`` is given)."""
    s, c = schedule, schedule.collective
    lay = layout(c, dtype)
    rows = np.flatnonzero((s.src == rank) | (s.dst == rank))
    counts = np.diff(s.chunk_ptr)[rows]
    flat = s.chunk_idx[ranges(s.chunk_ptr[rows], counts)]
    pre, post = held_chunks(c.pre, rank), held_chunks(c.post, rank)
    touched = np.unique(np.concatenate([pre, post, flat]))
    elems = lay.elems_of(touched)
    offset = np.concatenate(([0], np.cumsum(elems)[:-1])).astype(np.int64)
    buf = np.empty(int(elems.sum()), lay.dtype)
    start = np.full(buf.size, np.nan if lay.dtype.kind == "f" else np.iinfo(lay.dtype).min, lay.dtype)
    where = np.searchsorted(touched, pre)
    start[ranges(offset[where], elems[where])] = initial(lay, rank, pre)
    slot = np.searchsorted(touched, flat)
    row_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    last = np.full(touched.size, -1, np.int64)
    steps = []
    step_of = s.step[rows]
    bounds = np.flatnonzero(np.diff(step_of)) + 1
    for group in np.split(np.arange(rows.size), bounds) if rows.size else []:
        steps.append(_plan_step(s, rank, rows, group, slot, row_ptr, offset, elems, buf, comm, last))
    where = np.searchsorted(touched, post)
    return RankPlan(rank, buf, start, steps, post, ranges(offset[where], elems[where]), last[where],
                    OPS[check_data(op, lay.dtype.name)[0]])


def _plan_step(s, rank, rows, group, slot, row_ptr, offset, elems, buf, comm, last) -> StepPlan:
    step = int(s.step[rows[group[0]]])
    segs = [slot[row_ptr[i]:row_ptr[i + 1]] for i in group]
    sending = [bool(s.src[rows[i]] == rank) for i in group]
    recv_slots = np.concatenate([g for g, out in zip(segs, sending) if not out] or [np.zeros(0, np.int64)])
    send_slots = np.concatenate([g for g, out in zip(segs, sending) if out] or [np.zeros(0, np.int64)])
    recv_once = np.unique(recv_slots, return_counts=True)
    written_twice = recv_once[0][recv_once[1] > 1]
    recvs, sends, packs, unpacks = [], [], [], []
    tag = step % TAG_LIMIT
    for i, seg, out in zip(group, segs, sending):
        row = rows[i]
        n = int(elems[seg].sum())
        target = where_in_buffer(offset[seg], elems[seg])
        contiguous = isinstance(target, slice)
        if out:
            peer = int(s.dst[row])
            if contiguous and not np.isin(seg, recv_slots).any():
                data = buf[target]
            else:
                data = np.empty(n, buf.dtype)
                packs.append((target, data))
            sends.append((data, peer))
        else:
            peer = int(s.src[row])
            reduce = bool(s.reduce[row])
            last[seg] = step
            if (not reduce and contiguous and not np.isin(seg, send_slots).any()
                    and not np.isin(seg, written_twice).any()):
                data = buf[target]
            else:
                data = np.empty(n, buf.dtype)
                unpacks.append((target, data, reduce))
            recvs.append((data, peer))
    requests = []
    if comm is not None:
        requests = [comm.Recv_init(d, p, tag) for d, p in recvs] + [comm.Send_init(d, p, tag) for d, p in sends]
    peers = {p for _, p in recvs} or {p for _, p in sends}
    return StepPlan(step, requests, packs, unpacks, tuple(sorted(peers)), sends, recvs)


RUNS_LIMIT = 64
"""A transfer of non-contiguous chunks is copied run by run (one slice each) when it has at most
this many runs, or runs of 1024 elements or more on average; else with one index array."""


def where_in_buffer(offsets: np.ndarray, elems: np.ndarray):
    """Where a transfer's chunks lie in a rank's buffer, in the cheapest form to copy."""
    ends = offsets + elems
    brk = np.flatnonzero(offsets[1:] != ends[:-1]) + 1
    lo = offsets[np.concatenate(([0], brk))] if offsets.size else np.zeros(1, np.int64)
    hi = ends[np.concatenate((brk - 1, [offsets.size - 1]))] if offsets.size else np.zeros(1, np.int64)
    if lo.size == 1:
        return slice(int(lo[0]), int(hi[0]))
    total = int(elems.sum())
    if lo.size <= RUNS_LIMIT or total >= 1024 * lo.size:
        at = np.concatenate(([0], np.cumsum(hi - lo)))
        return [(slice(int(a), int(b)), slice(int(c), int(d))) for a, b, c, d in zip(lo, hi, at[:-1], at[1:])]
    return ranges(offsets, elems)


def pack(plan: RankPlan, st: StepPlan) -> None:
    """Gather the step's non-contiguous sends into their staging buffers (start of the step)."""
    buf = plan.buffer
    for target, stage in st.packs:
        if isinstance(target, slice):
            stage[...] = buf[target]
        elif isinstance(target, list):
            for at, part in target:
                stage[part] = buf[at]
        else:
            np.take(buf, target, out=stage)


def unpack(plan: RankPlan, st: StepPlan) -> None:
    """Copy or combine the step's staged receives into the buffer (after its ``MPI_Waitall``)."""
    buf, ufunc = plan.buffer, plan.ufunc
    for target, stage, reduce in st.unpacks:
        if isinstance(target, list):  # runs: one slice copy or combine each
            for at, part in target:
                if reduce:
                    view = buf[at]
                    ufunc(view, stage[part], out=view)
                else:
                    buf[at] = stage[part]
        elif not reduce:
            buf[target] = stage
        elif isinstance(target, slice):
            view = buf[target]
            ufunc(view, stage, out=view)
        else:
            buf[target] = ufunc(buf[target], stage)


__all__ = ["RUNS_LIMIT", "RankPlan", "StepPlan", "TAG_LIMIT", "pack", "plan_rank", "unpack", "where_in_buffer"]
