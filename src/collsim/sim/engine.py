"""The fluid engine of :func:`collsim.sim.simulate`: the flows sending, at max-min fair rates.

The engine holds the flows currently sending (a transfer, or with ECMP one
sub-flow per path), their remaining bytes and rates, how many flows send on
each link and how long each link was busy.  :func:`collsim.sim.simulate`
decides when flows start (by mode) and admits them; the engine advances time
to the next flow sending its last byte, recomputing the rates
(:func:`~collsim.sim.maxmin.max_min_rates`) only when they can change.

Cost: per event, O(E_active + used links) numpy work to recompute rates,
skipped when the flows that finished shared no link with the rest, and
replaced by one ``minimum.reduceat`` when new flows share no link with any
other; see :mod:`collsim.sim.maxmin`.
"""

from __future__ import annotations

import numpy as np

from .maxmin import max_min_rates

_DONE_RTOL = 1e-9  # flows finishing within this relative slack of the first one finish together


def _gather(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sub-CSR of ``rows``: ``(lengths, concatenated contents)``."""
    lens = ptr[rows + 1] - ptr[rows]
    total = int(lens.sum())
    if total == 0:
        return lens, idx[:0]
    base = np.repeat(ptr[rows] - (np.cumsum(lens) - lens), lens)
    return lens, idx[base + np.arange(total)]


class _Engine:
    """Flows currently sending: remaining bytes, rates, per-link counts and busy time.

    Identical flows started together (a run of consecutive paths marked ``same``: the same
    links, bytes and latency) keep identical rates and finish together, so they are one entry
    with ``copies``: a step of 100,000 one-piece flows on a few hundred routes costs what a
    few hundred flows cost.
    """

    def __init__(self, ptr: np.ndarray, links: np.ndarray, capacity: np.ndarray,
                 same: np.ndarray | None = None) -> None:
        self.ptr, self.links, self.cap = ptr, links, capacity
        self.same = np.zeros(len(ptr) - 1, bool) if same is None else same
        self.count = np.zeros(len(capacity), np.int64)  # flows sending on each link
        self.busy, self.since = np.zeros(len(capacity)), np.zeros(len(capacity))
        self.ids, self.rem, self.rate = np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        self.copies, self.first = np.zeros(0, np.int64), np.zeros(0, np.int64)
        self.pool, self.pooled = np.zeros(len(ptr) - 1, np.int64), 0  # every admitted flow, by entry
        self.now, self.peak, self.events = 0.0, 0, 0

    def _recompute(self) -> None:
        lens, sub = _gather(self.ptr, self.links, self.ids)
        sptr = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=sptr[1:])
        self.rate = max_min_rates(sptr, sub, self.cap, copies=None if (self.copies == 1).all() else self.copies)

    def admit(self, ids: np.ndarray, size: np.ndarray) -> None:
        """Start flows ``ids`` (each with bytes and at least one link) at ``self.now``."""
        if ids.size == 0:
            return
        ids = np.sort(ids)
        run = np.r_[True, ~(self.same[ids[1:]] & (ids[1:] == ids[:-1] + 1))]
        starts = np.flatnonzero(run)
        copies = np.diff(np.r_[starts, ids.size])
        self.pool[self.pooled:self.pooled + ids.size] = ids
        first = self.pooled + starts
        self.pooled += ids.size
        ids = ids[starts]
        lens, new = _gather(self.ptr, self.links, ids)
        idle = new[self.count[new] == 0]
        self.since[idle] = self.now
        np.add.at(self.count, new, np.repeat(copies, lens))
        here = self.count[new]
        self.peak = max(self.peak, int(here.max()))
        self.ids = np.concatenate([self.ids, ids])
        self.copies = np.concatenate([self.copies, copies])
        self.first = np.concatenate([self.first, first])
        self.rem = np.concatenate([self.rem, size[ids].astype(np.float64)])
        if (here == np.repeat(copies, lens)).all():  # the newcomers share no link with anyone else
            heads = np.cumsum(lens) - lens
            self.rate = np.concatenate([self.rate, np.minimum.reduceat(self.cap[new], heads) / copies])
        else:
            self._recompute()

    def step_to(self, t_limit: float) -> np.ndarray:
        """Advance to ``t_limit`` or to the next data completion, whichever is first."""
        if self.ids.size == 0:
            if np.isfinite(t_limit):
                self.now = t_limit
            return self.ids
        self.events += 1
        ttf = self.rem / self.rate
        dt = float(ttf.min())
        horizon = max(t_limit - self.now, 0.0)  # time never runs backwards (rounding)
        if dt > horizon:
            self.rem -= self.rate * horizon
            self.now = max(t_limit, self.now)
            return np.zeros(0, np.int64)
        done = ttf <= dt * (1.0 + _DONE_RTOL)
        self.now += dt
        finished, copies = self.ids[done], self.copies[done]
        members = self.pool[np.repeat(self.first[done] - (np.cumsum(copies) - copies), copies)
                            + np.arange(int(copies.sum()))]
        keep = ~done
        self.ids, self.rem, self.rate = self.ids[keep], self.rem[keep] - self.rate[keep] * dt, self.rate[keep]
        self.copies, self.first = self.copies[keep], self.first[keep]
        lens, gone = _gather(self.ptr, self.links, finished)
        np.subtract.at(self.count, gone, np.repeat(copies, lens))
        still = self.count[gone] > 0
        freed = _unique(gone[~still])
        self.busy[freed] += self.now - self.since[freed]
        if still.any() and self.ids.size:
            self._recompute()  # a finished flow shared a link with a remaining one
        return members


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; faster than ``np.unique`` on large int arrays)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if a.size else a
