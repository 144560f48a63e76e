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
    """Flows currently sending: remaining bytes, rates, per-link counts and busy time."""

    def __init__(self, ptr: np.ndarray, links: np.ndarray, capacity: np.ndarray) -> None:
        self.ptr, self.links, self.cap = ptr, links, capacity
        self.count = np.zeros(len(capacity), np.int64)  # flows sending on each link
        self.busy, self.since = np.zeros(len(capacity)), np.zeros(len(capacity))
        self.ids, self.rem, self.rate = np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        self.now, self.peak, self.events = 0.0, 0, 0

    def _recompute(self) -> None:
        lens, sub = _gather(self.ptr, self.links, self.ids)
        sptr = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=sptr[1:])
        self.rate = max_min_rates(sptr, sub, self.cap)

    def admit(self, ids: np.ndarray, size: np.ndarray) -> None:
        """Start flows ``ids`` (each with bytes and at least one link) at ``self.now``."""
        if ids.size == 0:
            return
        lens, new = _gather(self.ptr, self.links, ids)
        idle = new[self.count[new] == 0]
        self.since[idle] = self.now
        np.add.at(self.count, new, 1)
        here = self.count[new]
        self.peak = max(self.peak, int(here.max()))
        self.ids = np.concatenate([self.ids, ids])
        self.rem = np.concatenate([self.rem, size[ids].astype(np.float64)])
        if (here == 1).all():  # the newcomers share no link with anyone: rates of the rest unchanged
            starts = np.cumsum(lens) - lens
            self.rate = np.concatenate([self.rate, np.minimum.reduceat(self.cap[new], starts)])
        else:
            self._recompute()

    def step_to(self, t_limit: float) -> np.ndarray:
        """Advance to ``t_limit`` or to the next data completion, whichever is first.

        Returns
        -------
        numpy.ndarray
            Flows whose last byte was sent (empty if ``t_limit`` came first).
        """
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
        finished = self.ids[done]
        keep = ~done
        self.ids, self.rem, self.rate = self.ids[keep], self.rem[keep] - self.rate[keep] * dt, self.rate[keep]
        _, gone = _gather(self.ptr, self.links, finished)
        np.subtract.at(self.count, gone, 1)
        still = self.count[gone] > 0
        freed = _unique(gone[~still])
        self.busy[freed] += self.now - self.since[freed]
        if still.any() and self.ids.size:
            self._recompute()  # a finished flow shared a link with a remaining one
        return finished


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based; faster than ``np.unique`` on large int arrays)."""
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if a.size else a
