"""Timeline traces in the Chrome trace-event format (read by Perfetto and ``chrome://tracing``).

A trace is one JSON object ``{"traceEvents": [...], "displayTimeUnit": ..., "otherData": {...}}``.
collsim writes two kinds of event:

* complete events (``"ph": "X"``): one slice with ``ts`` and ``dur`` in microseconds, on the
  track chosen by ``pid`` (a *process*: a node, a link, a fiber) and ``tid`` (a *thread*: one
  lane of it);
* metadata events (``"ph": "M"``): ``process_name``, ``process_sort_index``, ``thread_name``
  and ``thread_sort_index``, so that the tracks carry names and appear in node order.

Slices on one thread must nest or be disjoint (the format has no way to draw two partially
overlapping slices on one thread).  Concurrent slices of one track therefore go on extra
*lanes* (threads of the track's process), assigned by interval partitioning
(:func:`collsim.interop.trace.lanes.assign_lanes`).  ``pid`` and ``tid`` start at 1 and every ``tid`` is unique in the
file (some readers merge threads that share a tid across processes, or mishandle tid 0).

What the tracks hold is decided by :mod:`collsim.interop.trace.network` (flow-simulated and
α–β timelines of electrical schedules) and :mod:`collsim.interop.trace.optical` (the
lightpaths of optical schedules, per fiber and wavelength); this module holds the writer
they share.  The format and the layout are described in ``docs/formats.md``.

References
----------
N. Duca, D. Sinclair et al. (Google, the Chromium project), "Trace Event Format", 2016
(``https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU``):
complete events, metadata events, ``displayTimeUnit``, ``otherData``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ...core.errors import TraceTooLargeError
from ...core.files import atomic_write
from .lanes import assign_lanes

MAX_TRACE_BYTES = 512 * 2**20
"""The largest trace collsim writes by default (Perfetto's UI and chrome://tracing struggle beyond)."""

_BLOCK = 1 << 15  # events formatted and written per block: bounded memory whatever the trace's size


def check_trace_size(estimate_bytes: int, what: str, max_bytes: int = MAX_TRACE_BYTES) -> None:
    """Refuse a trace whose JSON would exceed ``max_bytes`` (before anything is built)."""
    if estimate_bytes > max_bytes:
        raise TraceTooLargeError(f"{what} would be about {_approx(estimate_bytes)} of JSON, above the "
                                 f"{_approx(max_bytes)} collsim writes (max_bytes): trace a smaller instance",
                                 estimate_bytes=estimate_bytes, limit_bytes=max_bytes)


def _approx(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Slices:
    """A set of complete events of one kind, column-wise (what a trace's layout hands the writer)."""

    pid: np.ndarray
    group: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    body: Callable[[np.ndarray], list]
    thread_name: Callable[[int, int, int], str]
    bytes_per_slice: int

    def __len__(self) -> int:
        return len(self.pid)


@dataclass(frozen=True)
class TraceSummary:
    """What :func:`write_trace` wrote."""

    path: str
    events: int
    processes: int
    threads: int
    size_bytes: int


@dataclass
class _Layout:
    processes: dict = field(default_factory=dict)  # pid -> (name, sort index)


def _us(start_s: np.ndarray, end_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ts`` and ``dur`` in microseconds such that ``ts + dur`` never exceeds the end in µs.

    ``ts = start * 1e6`` exactly as a double; ``dur`` is the difference of the ends in µs,
    lowered by one ulp where adding it back to ``ts`` would round above the end (so that a
    slice ending where the next one on its lane starts does not overlap it in any reader).
    """
    ts = start_s * 1e6
    end = np.maximum(end_s, start_s) * 1e6
    dur = end - ts
    over = ts + dur > end
    while over.any():
        dur[over] = np.nextafter(dur[over], 0.0)
        over = ts + dur > end
    return ts, np.maximum(dur, 0.0)


def estimate_bytes(slice_sets: list, processes: int, extra: int = 0) -> int:
    """Estimated size of a trace's JSON."""
    return int(sum(c * b for c, b in slice_sets) + processes * 344 + extra + 1024)


def write_trace(path: str | Path, processes: dict, slice_sets: list, other: dict[str, Any], *,
                display_time_unit: str = "ns") -> TraceSummary:
    """Write a trace: lanes assigned, tracks named, slices formatted block by block, atomically."""
    sets = [s for s in slice_sets if len(s)]
    # lanes: per (pid, group) track, over every set at once
    pid = np.concatenate([s.pid for s in sets]) if sets else np.zeros(0, np.int64)
    grp = np.concatenate([s.group for s in sets]) if sets else np.zeros(0, np.int64)
    start = np.concatenate([s.start_s for s in sets]) if sets else np.zeros(0)
    end = np.concatenate([np.maximum(s.end_s, s.start_s) for s in sets]) if sets else np.zeros(0)
    kind = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    if len(pid):
        _, prank = np.unique(pid, return_inverse=True)  # dense ranks keep the packed keys small
        gkeys, track = np.unique(prank.reshape(-1) * (int(grp.max()) + 1) + grp, return_inverse=True)
        track = track.reshape(-1)
        lane = assign_lanes(track, start, end)
        _, at, tid = np.unique(track * (int(lane.max()) + 1) + lane, return_index=True, return_inverse=True)
        tid = tid.reshape(-1) + 1
        threads = np.stack([pid[at], grp[at], lane[at]])
    else:
        threads, at, tid = np.zeros((3, 0), np.int64), np.zeros(0, np.int64), pid
    owner = kind[at].tolist()  # the set that names each thread: the one of its first slice
    ts, dur = _us(start, end)

    def meta() -> list[str]:
        lines, first_tid = [], {}
        rows = threads.T.tolist()
        for i, (p, _, _) in enumerate(rows):
            first_tid.setdefault(p, i + 1)
        for p in sorted(first_tid):
            name, order = processes[p]
            lines.append(_m("process_name", p, first_tid[p], {"name": name}))
            lines.append(_m("process_sort_index", p, first_tid[p], {"sort_index": order}))
        for i, (p, g, ln) in enumerate(rows):
            lines.append(_m("thread_name", p, i + 1, {"name": sets[owner[i]].thread_name(p, g, ln)}))
            lines.append(_m("thread_sort_index", p, i + 1, {"sort_index": i + 1 - first_tid[p]}))
        return lines

    def write(fh) -> None:
        head = {"displayTimeUnit": display_time_unit, "otherData": other}
        text = json.dumps(head, sort_keys=True, separators=(",", ":"), allow_nan=False)
        fh.write((text[:-1] + ',"traceEvents":[\n').encode())
        first = True
        for line in meta():
            fh.write(((",\n" if not first else "") + line).encode())
            first = False
        base = 0
        for s in sets:
            for lo in range(0, len(s), _BLOCK):
                rows = np.arange(lo, min(len(s), lo + _BLOCK))
                g = rows + base
                bodies = s.body(rows)
                parts = [f'{{"ph":"X","pid":{p},"tid":{t},"ts":{a!r},"dur":{d!r},{b}}}'
                         for p, t, a, d, b in zip(pid[g].tolist(), tid[g].tolist(), ts[g].tolist(),
                                                  dur[g].tolist(), bodies)]
                if parts:
                    fh.write(((",\n" if not first else "") + ",\n".join(parts)).encode())
                    first = False
            base += len(s)
        fh.write(b"\n]}\n")

    atomic_write(path, write)
    return TraceSummary(str(path), int(len(pid)), len({int(p) for p in threads[0]}) if threads.size else 0,
                        int(threads.shape[1]), Path(path).stat().st_size if Path(path).exists() else 0)


def _m(what: str, pid: int, tid: int, args: dict) -> str:
    return json.dumps({"name": what, "ph": "M", "pid": pid, "tid": tid, "args": args}, separators=(",", ":"))


def json_str(text: str) -> str:
    """A JSON string literal (ASCII, escaped as JSON requires)."""
    return json.dumps(text)


def first_chunk_ids(chunk_ptr: np.ndarray, chunk_idx: np.ndarray, rows: np.ndarray, k: int = 4) -> list[str]:
    """Up to the first ``k`` chunk ids of every row, as JSON array text (``"[3,4]"``)."""
    lo = chunk_ptr[rows]
    n = np.minimum(chunk_ptr[rows + 1] - lo, k)
    pad = np.full((len(rows), k), -1, np.int64)
    for j in range(k):  # k columns, each vectorised over the rows
        has = n > j
        pad[has, j] = chunk_idx[lo[has] + j]
    out = []
    for r, m in zip(pad.tolist(), n.tolist()):
        out.append("[" + ",".join(map(str, r[:m])) + "]")
    return out
