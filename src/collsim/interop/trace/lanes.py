"""Lanes of a timeline track: interval partitioning, so that slices on one thread never overlap.

A trace-event thread cannot draw two partially overlapping slices (:mod:`collsim.interop.trace.events`),
so the concurrent slices of one track (a node sending to several peers at once, a link shared by
several flows, a wavelength reused on disjoint arcs) go on extra lanes.

References
----------
J. Kleinberg, É. Tardos, "Algorithm Design", Addison-Wesley, 2005, §4.1 (interval partitioning).
"""

from __future__ import annotations

import heapq

import numpy as np


def assign_lanes(track: np.ndarray, start_s: np.ndarray, end_s: np.ndarray) -> np.ndarray:
    """Lane of every interval, so that intervals on one (track, lane) never overlap.

    Intervals ``[start, end)`` are grouped per track into *clusters* (maximal runs, in start
    order, that overlap transitively); clusters never overlap each other, so each starts
    again at lane 0.  In a cluster whose intervals all share one instant (a clique: every
    step of a bulk-synchronous schedule, every optical slot) the lane is the interval's rank
    in (start, end, index) order, which is optimal and vectorised.  The other clusters (a
    dataflow simulation) are partitioned greedily in start order, each interval taking the
    lowest lane free at its start: optimal too (as many lanes as the most intervals open at
    once), one heap operation per interval of those clusters only.  Touching intervals
    (``end == start``) do not overlap.  Deterministic.

    References
    ----------
    J. Kleinberg, É. Tardos, "Algorithm Design", Addison-Wesley, 2005, §4.1 (interval
    partitioning: the greedy in start order uses as many resources as the depth).
    """
    n = len(track)
    lanes = np.zeros(n, np.int64)
    if n == 0:
        return lanes
    order = np.lexsort((np.arange(n), end_s, start_s, track))
    t, s, e = track[order], start_s[order], end_s[order]
    # exact comparisons on integer ranks of the times, so that a per-track offset can make the
    # running maximum of the ends restart at every track without losing precision
    _, rank = np.unique(np.concatenate([s, e]), return_inverse=True)
    rs, re_ = rank[:n], rank[n:]
    new_track = np.ones(n, bool)
    new_track[1:] = t[1:] != t[:-1]
    off = (np.cumsum(new_track) - 1) * (2 * n + 1)
    run_max = np.maximum.accumulate(re_ + off)
    new = new_track.copy()
    new[1:] |= rs[1:] + off[1:] >= run_max[:-1]
    cid = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    pos = np.arange(n) - first[cid]
    size = np.diff(np.append(first, n))
    clique = np.maximum.reduceat(rs, first) < np.minimum.reduceat(re_, first)
    lane = pos.copy()
    for c in np.flatnonzero(~clique & (size > 1)):  # only overlapping clusters that are not cliques
        a, b = first[c], first[c] + size[c]
        lane[a:b] = _greedy(rs[a:b].tolist(), re_[a:b].tolist())
    lanes[order] = lane
    return lanes


def _greedy(starts: list, ends: list) -> list:
    """Interval partitioning of intervals sorted by start: the lowest free lane each."""
    busy: list = []  # (end, lane) of open intervals
    free: list = []
    top = 0
    out = []
    for s, e in zip(starts, ends):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, top = top, top + 1
        heapq.heappush(busy, (e, lane))
        out.append(lane)
    return out
