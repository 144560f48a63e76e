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
    """Directed links of a network.

    Parameters
    ----------
    src, dst : numpy.ndarray
        Endpoint vertices of each link.
    bandwidth_bytes_per_s, latency_s : numpy.ndarray
        Per-link rate and latency.
    vertices : int
        Number of vertices (end nodes plus switches).

    Examples
    --------
    >>> from collsim.kinds.network.electrical import Ring
    >>> links = Ring(nodes=4).links
    >>> len(links), links.src.tolist(), links.dst.tolist()
    (8, [0, 1, 2, 3, 0, 1, 2, 3], [1, 2, 3, 0, 3, 0, 1, 2])
    >>> links.index([0, 1], [1, 3]).tolist()     # 1 -> 3 is not a link
    [0, -1]
    """

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
        """Link ids for vertex pairs; -1 where no link joins u to v.

        Parameters
        ----------
        u, v : numpy.ndarray
            Tail and head vertices.

        Returns
        -------
        numpy.ndarray
            Link id per pair (the first such link if there are parallel ones).
        """
        keys, order = self._keys
        want = np.asarray(u, dtype=np.int64) * self.vertices + np.asarray(v, dtype=np.int64)
        pos = np.searchsorted(keys, want)
        pos_c = np.minimum(pos, len(keys) - 1)
        ok = (pos < len(keys)) & (keys[pos_c] == want)
        return np.where(ok, order[pos_c], -1)
