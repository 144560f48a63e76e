"""The directed link table of a network: endpoints, bandwidths and latencies, one row per link.

>>> from collsim.kinds.network.electrical import Ring
>>> len(Ring(nodes=3).links)
6
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


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

    def index(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Link ids for vertex pairs; -1 where no link joins u to v."""
        keys, order = self._keys
        want = np.asarray(u, dtype=np.int64) * self.vertices + np.asarray(v, dtype=np.int64)
        pos = np.searchsorted(keys, want)
        pos_c = np.minimum(pos, len(keys) - 1)
        ok = (pos < len(keys)) & (keys[pos_c] == want)
        return np.where(ok, order[pos_c], -1)
