"""The binary hypercube with E-cube routing.

Node ``i`` of a ``d``-dimensional hypercube (``2**d`` nodes) is joined to
``i XOR 2**b`` for every bit ``b``.  E-cube routing corrects the differing bits
from the lowest to the highest (the textbook's rule), so a route has
``popcount(src XOR dst)`` hops.  Seen as a ``2 x 2 x ... x 2`` mesh with
row-major ids, bit 0 is the last (fastest) dimension, so E-cube is the same
dimension order as :class:`~collsim.kinds.network.mesh_torus.Mesh` routing.

>>> Hypercube(nodes=8).dimension
3
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from .network import Network
from ...core.system import MAX_NODES, register_system_kind
from ...core.validate import integer


def _popcount(x: np.ndarray) -> np.ndarray:
    """Number of set bits per element (non-negative int64)."""
    x = np.asarray(x, dtype=np.uint64)
    return np.bitwise_count(x).astype(np.int64)


@register_system_kind
@dataclass(frozen=True)
class Hypercube(Network):
    """A ``d``-dimensional binary hypercube (``nodes = 2**d``), E-cube routed.

    Links are listed bit by bit: for bit 0 every node's link ``i -> i^1``, then
    bit 1, and so on.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`; ``nodes`` must be a power of two.

    Examples
    --------
    >>> h = Hypercube(nodes=8)
    >>> ptr, links = h.route(np.array([0]), np.array([7]))
    >>> [h.link_name(int(x)) for x in links]  # lowest differing bit first
    ['n0->n1', 'n1->n3', 'n3->n7']
    """

    topology: ClassVar[str] = "hypercube"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.nodes & (self.nodes - 1):
            lo = 1 << (self.nodes.bit_length() - 1)
            raise InputError(f"hypercube: nodes must be a power of two, got {self.nodes}; "
                             f"use {lo} or {2 * lo}")

    @property
    def dimension(self) -> int:
        """``d = log2(nodes)``."""
        return self.nodes.bit_length() - 1

    def cut_masks(self) -> list[np.ndarray]:
        """Sub-cubes ``x < 2^j`` and the halves ``bit b = 0`` (:meth:`Network.cut_masks`).

        Returns
        -------
        list of numpy.ndarray
            Two ``(d, N)`` mask arrays.

        Examples
        --------
        >>> [m.sum(axis=1).tolist() for m in Hypercube(nodes=8).cut_masks()]
        [[1, 2, 4], [4, 4, 4]]
        """
        idx, dim = np.arange(self.vertices), self.dimension
        return [idx[None, :] < (1 << np.arange(dim))[:, None],
                ((idx[None, :] >> np.arange(dim)[:, None]) & 1) == 0, *super().cut_masks()]

    @classmethod
    def from_options(cls, nodes: int | None = None, dimension: int | None = None, **opts: Any) -> "Hypercube":
        """Build for the CLI from ``nodes`` (default 16) or ``dimension``.

        Parameters
        ----------
        nodes : int, optional
            A power of two; must equal ``2**dimension`` if both are given.
        dimension : int, optional
            Number of dimensions d.
        **opts
            Other fields (``link_bandwidth_bytes_per_s`` ...); None values are ignored.

        Returns
        -------
        Hypercube
            The hypercube.

        Raises
        ------
        InputError
            If the sizes do not fit, naming the nearest powers of two.
        """
        if dimension is not None:
            dimension = integer("hypercube: dimension", dimension, lo=1, hi=MAX_NODES.bit_length() - 1)
            if nodes is not None and nodes != 1 << dimension:
                raise InputError(f"hypercube: nodes={nodes} but dimension {dimension} has {1 << dimension} nodes")
            nodes = 1 << dimension
        opts = {k: v for k, v in opts.items() if v is not None}
        bad = sorted(set(opts) - {f.name for f in fields(cls)})
        if bad:
            raise InputError(f"hypercube systems have no parameter {', '.join(bad)}")
        return cls(nodes=16 if nodes is None else nodes, **opts)

    def link_count(self) -> int:
        """``N log2 N``."""
        return self.nodes * self.dimension

    def translations(self) -> np.ndarray:
        """``u -> u XOR g`` for every label ``g``: they keep the links.

        Examples
        --------
        >>> Hypercube(nodes=4).translations().tolist()
        [[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]]
        """
        i = np.arange(self.nodes)
        return i[:, None] ^ i[None, :]

    def edges(self):
        """``i -> i XOR 2**b`` for every node, bit 0 first."""
        i = np.arange(self.nodes)
        bits = 1 << np.arange(self.dimension)
        return np.tile(i, self.dimension), (i[None, :] ^ bits[:, None]).ravel()

    def next_hop(self, cur, src, dst):
        """Flip the lowest bit in which ``cur`` and ``dst`` differ."""
        cur = np.asarray(cur, dtype=np.int64)
        diff = cur ^ np.asarray(dst, dtype=np.int64)
        return cur ^ (diff & -diff)

    def distance(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Hop count of the route: the Hamming distance of the labels.

        Parameters
        ----------
        src, dst : numpy.ndarray
            Node ids.

        Returns
        -------
        numpy.ndarray
            Hops per pair.
        """
        return _popcount(np.asarray(src, dtype=np.int64) ^ np.asarray(dst, dtype=np.int64))

    def summary(self) -> dict[str, Any]:
        """Base counts plus ``dimension``; diameter ``d`` analytically for large cubes."""
        out = super().summary()
        out["dimension"] = self.dimension
        if out["diameter"] is None:
            out["diameter"] = self.dimension
        return out
