"""The directed link table of a network: endpoints, bandwidths and latencies, one row per link.

>>> from collsim.kinds.network.electrical import Ring
>>> len(Ring(nodes=3).links)
6
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

DENSE_ENTRIES = 1 << 24
"""Networks of at most this many vertex pairs (4,096 vertices) answer large :meth:`LinkTable.index`
queries from a dense ``V x V`` table of link ids (int32, at most 64 MiB, made on the first large
query): one gather instead of a binary search per pair (8 M pairs on 1,792 vertices: 0.05 s
instead of 1.5 s)."""

DENSE_QUERY = 1 << 14
"""Queries of at least this many pairs read the dense table (smaller ones search the sorted keys)."""


@dataclass(frozen=True, eq=False)
class LinkTable:
    """Directed links of a network."""

    src: np.ndarray
    dst: np.ndarray
    bandwidth_bytes_per_s: np.ndarray
    latency_s: np.ndarray
    vertices: int

    def __len__(self) -> int:
        return len(self.src)

    @cached_property
    def _keys(self) -> tuple[np.ndarray, np.ndarray]:
        key = self.src * self.vertices + self.dst
        order = np.argsort(key, kind="stable")
        return key[order], order

    @cached_property
    def _dense(self) -> np.ndarray:
        """``V x V`` link ids (-1: no link), flattened: the first link of a pair, as the search finds it."""
        keys, order = self._keys
        table = np.full(self.vertices * self.vertices, -1, np.int32 if len(order) < 2**31 else np.int64)
        first = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, bool)
        table[keys[first]] = order[first]
        return table

    def index(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Link ids for vertex pairs; -1 where no link joins u to v.

        Examples
        --------
        >>> t = LinkTable(np.array([0, 1]), np.array([1, 2]), np.ones(2), np.zeros(2), 3)
        >>> t.index([0, 1, 2], [1, 2, 0]).tolist()
        [0, 1, -1]
        """
        u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
        nv = self.vertices
        inside = (u >= 0) & (u < nv) & (v >= 0) & (v < nv)   # a pair outside the vertices has no link
        want = np.where(inside, u * nv + v, 0)
        if not len(self.src):
            return np.full(want.shape, -1, np.int64)
        if want.size >= DENSE_QUERY and nv * nv <= DENSE_ENTRIES:
            return np.where(inside, self._dense[want], -1).astype(np.int64)
        keys, order = self._keys
        pos = np.searchsorted(keys, want)
        pos_c = np.minimum(pos, len(keys) - 1)
        ok = inside & (pos < len(keys)) & (keys[pos_c] == want)
        return np.where(ok, order[pos_c], -1)
