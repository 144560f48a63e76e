"""Meshes and tori of any dimension, with dimension-order routing.

Node ids are row-major with the LAST dimension fastest: on a 2-D ``(rows, cols)``
grid node ``(r, c)`` is ``r * cols + c``.  Routes correct the coordinates one
dimension at a time, the **last dimension first** (in 2-D: along the source's row
to the destination's column, then along that column — the textbook's XY
routing).  On a ``2 x 2 x ... x 2`` grid this is E-cube routing (lowest bit
first), so meshes, tori and hypercubes agree.  A torus takes the shorter way
round in each dimension; a tie (distance exactly k/2) goes ``+`` when the
source's coordinate in that dimension is even and ``-`` when it is odd, as
:func:`collsim.core.ring.shortest_direction` does on a ring.

>>> t = Torus.from_dims((4, 4))
>>> t.nodes, t.coords(np.array([6])).tolist()
(16, [[1, 2]])
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from .network import Network
from ...core.numbers import parse_number
from ...core.ring import shortest_direction
from ...core.system import register_system_kind
from ...core.validate import integer, is_integer, positive_integer


def _parse_dims(dims: Any) -> tuple[int, ...]:
    """Dims from a tuple/list of ints or a string such as ``"4x4x2"`` / ``"4,4"``."""
    if isinstance(dims, str):
        parts = [p for p in re.split(r"[x×,\s]+", dims.strip()) if p]
        sizes = [parse_number(p, "dims", integer=True, otherwise=None) for p in parts]  # ASCII digits only
        if not parts or any(k is None or not p.isdigit() for k, p in zip(sizes, parts)):
            raise InputError(f"invalid dims {dims!r}: use e.g. 4x4 or 4x4x2")
        return tuple(sizes)
    if not isinstance(dims, (tuple, list)) or not dims or not all(is_integer(k) for k in dims):
        shown = ",".join(map(str, dims)) if isinstance(dims, (tuple, list)) else repr(dims)
        raise InputError(f"dims must be a non-empty list of integers, got {shown}")
    if any(int(k) < 2 for k in dims):
        raise InputError(f"every dimension needs at least 2 nodes, got dims {_show(dims)}")
    return tuple(int(k) for k in dims)


def _show(dims) -> str:
    """``4x4x2``: dims as the user writes them."""
    return "x".join(map(str, dims))


def _balanced(n: int, nd: int) -> tuple[int, ...] | None:
    """The most balanced factorisation of ``n`` into ``nd`` factors >= 2 (None if none)."""
    if nd == 1:
        return (n,) if n >= 2 else None
    best = None
    for a in range(2, int(round(n ** (1 / nd))) + 2):
        if n % a == 0:
            rest = _balanced(n // a, nd - 1)
            if rest is not None and a <= rest[0] and (best is None or max(rest) < max(best)):
                best = (a, *rest)
    return best


def _construct(cls, **kw: Any):
    """``cls(**kw)`` with None values dropped and unknown names reported as InputError."""
    kw = {k: v for k, v in kw.items() if v is not None}
    names = {f.name for f in fields(cls)}
    bad = sorted(set(kw) - names)
    if bad:
        raise InputError(f"{cls.topology} systems have no parameter {', '.join(bad)}; "
                         f"known: {', '.join(sorted(names))}")
    return cls(**kw)


@dataclass(frozen=True)
class _Grid(Network):
    """Shared machinery of :class:`Mesh` and :class:`Torus` (not a registered kind)."""

    topology: ClassVar[str] = "grid"
    wrap: ClassVar[bool] = False
    dims: tuple[int, ...] = field(kw_only=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        dims = _parse_dims(self.dims)
        if any(k < 2 for k in dims):
            raise InputError(f"{self.topology}: every dimension needs at least 2 nodes, got dims {_show(dims)}")
        if math.prod(dims) != self.nodes:
            raise InputError(f"{self.topology}: nodes={self.nodes} does not match dims {_show(dims)} "
                             f"(product {math.prod(dims)}); use {self.__class__.__name__}.from_dims")
        object.__setattr__(self, "dims", dims)

    def cut_masks(self) -> list[np.ndarray]:
        """Slabs: coordinate d below p, for every dimension d and p (:meth:`Network.cut_masks`).

        Returns
        -------
        list of numpy.ndarray
            One ``(k_d - 1, N)`` mask array per dimension.

        Examples
        --------
        >>> [m.shape for m in Mesh.from_dims((4, 2)).cut_masks()]
        [(3, 8), (1, 8)]
        """
        coords = self.coords(np.arange(self.nodes))
        slabs = [coords[None, :, d] < np.arange(1, k)[:, None] for d, k in enumerate(self.dims)]
        return [*slabs, *super().cut_masks()]

    @classmethod
    def from_dims(cls, dims, **kw: Any):
        """Build from the dimensions alone (``nodes`` is their product).

        Parameters
        ----------
        dims : sequence of int or str
            Sizes per dimension, e.g. ``(4, 4)``, ``(4, 4, 4)`` or ``"8x8"``.
        **kw
            Other fields (``link_bandwidth_bytes_per_s``, ``name`` ...).

        Returns
        -------
        Mesh or Torus
            The grid.
        """
        dims = _parse_dims(dims)
        return _construct(cls, nodes=math.prod(dims), dims=dims, **kw)

    @classmethod
    def from_options(cls, nodes: int | None = None, dims=None, ndim: int | None = None, **opts: Any):
        """Build for the CLI: ``dims`` if given, else an ``ndim``-D cube of ``nodes`` (default 16).

        Parameters
        ----------
        nodes : int, optional
            Number of nodes; must be a perfect square (cube for ``ndim=3``) when
            ``dims`` is not given, and equal ``prod(dims)`` when it is.
        dims : sequence of int or str, optional
            Explicit dimensions (``(4, 4, 2)`` or ``"4x4x2"``).
        ndim : int, optional
            Number of dimensions when only ``nodes`` is given (default 2).
        **opts
            Other fields.

        Returns
        -------
        Mesh or Torus
            The grid.

        Raises
        ------
        InputError
            If the sizes do not fit, naming sizes that would.
        """
        if ndim is not None:
            ndim = positive_integer(f"{cls.topology}: ndim", ndim)
        if dims is not None:
            dims = _parse_dims(dims)
            if ndim is not None and ndim != len(dims):
                raise InputError(f"{cls.topology}: ndim={ndim} but dims {_show(dims)} have {len(dims)}")
            if nodes is not None and nodes != math.prod(dims):
                raise InputError(f"{cls.topology}: nodes={nodes} but dims {_show(dims)} hold {math.prod(dims)} nodes")
            return cls.from_dims(dims, **opts)
        nd = positive_integer(f"{cls.topology}: ndim", 2 if ndim is None else ndim)
        n = integer(f"{cls.topology}: nodes", 16 if nodes is None else nodes, lo=2)
        side = max(2, int(round(n ** (1 / nd))))
        if side ** nd == n:
            return cls.from_dims((side,) * nd, **opts)
        lo = side if side ** nd < n else side - 1
        shape = {1: "", 2: "perfect square", 3: "perfect cube"}.get(nd, f"perfect {nd}th power")
        near = sorted({s ** nd for s in (lo, lo + 1) if s >= 2})
        hint = _balanced(n, nd)
        raise InputError(f"{cls.topology}: {n} nodes is not a {shape}; use nodes "
                         f"{' or '.join(map(str, near))}, or give dims"
                         + (f" such as {'x'.join(map(str, hint))}" if hint else " explicitly"))

    # --- geometry ---------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    @property
    def _strides(self) -> tuple[int, ...]:
        return tuple(math.prod(self.dims[d + 1:]) for d in range(self.ndim))

    def coords(self, ids: np.ndarray) -> np.ndarray:
        """Coordinates of node ids, shape ``(len(ids), ndim)`` (last dimension fastest).

        Parameters
        ----------
        ids : numpy.ndarray
            Node ids.

        Returns
        -------
        numpy.ndarray
            One row of coordinates per id.
        """
        ids = np.asarray(ids, dtype=np.int64)
        return np.stack([(ids // s) % k for s, k in zip(self._strides, self.dims)], axis=-1)

    def ids(self, coords: np.ndarray) -> np.ndarray:
        """Node ids of coordinates (inverse of :meth:`coords`).

        Parameters
        ----------
        coords : numpy.ndarray
            Shape ``(..., ndim)``.

        Returns
        -------
        numpy.ndarray
            Node ids, shape ``coords.shape[:-1]``.
        """
        c = np.asarray(coords, dtype=np.int64)
        return (c * np.asarray(self._strides, dtype=np.int64)).sum(axis=-1)

    def _steps(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """Directed links along dimension ``d``: ``+`` links then ``-`` links (deduplicated on wrap)."""
        i = np.arange(self.nodes)
        s, k = self._strides[d], self.dims[d]
        c = (i // s) % k
        if self.wrap and k > 2:
            plus = i + (((c + 1) % k) - c) * s
            minus = i + (((c - 1) % k) - c) * s
            return np.concatenate([i, i]), np.concatenate([plus, minus])
        up, down = c < k - 1, c > 0  # mesh, or a torus dimension of size 2 (one link each way)
        return np.concatenate([i[up], i[down]]), np.concatenate([i[up] + s, i[down] - s])

    def link_count(self) -> int:
        """Per dimension of size k: ``2N`` with wrap-around (k > 2), else ``2N (k-1) / k``."""
        n = self.nodes
        return sum(2 * n if self.wrap and k > 2 else 2 * n * (k - 1) // k for k in self.dims)

    def edges(self):
        """Links dimension by dimension (0 first), ``+`` direction then ``-`` direction."""
        parts = [self._steps(d) for d in range(self.ndim)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _direction(self, cs: np.ndarray, cd: np.ndarray, k: int) -> np.ndarray:
        """+1/-1 per flow along one dimension given source and destination coordinates."""
        if self.wrap:
            return shortest_direction(cs, cd, k).astype(np.int64)
        return np.sign(cd - cs)

    def next_hop(self, cur, src, dst):
        """Correct the last differing coordinate (dimension order ndim-1, ..., 0)."""
        cur = np.asarray(cur, dtype=np.int64)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        nxt = cur.copy()
        todo = np.ones(len(cur), dtype=bool)
        for d in reversed(range(self.ndim)):
            s, k = self._strides[d], self.dims[d]
            cc, cd = (cur // s) % k, (dst // s) % k
            move = todo & (cc != cd)
            if move.any():
                step = self._direction(((src // s) % k)[move], cd[move], k)
                nxt[move] = cur[move] + (((cc[move] + step) % k) - cc[move]) * s
                todo &= ~move
        return nxt

    def distance(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Hop count of the route (Manhattan distance; on a torus, with wrap-around).

        Parameters
        ----------
        src, dst : numpy.ndarray
            Node ids.

        Returns
        -------
        numpy.ndarray
            Hops per pair.
        """
        delta = np.abs(self.coords(src) - self.coords(dst))
        if self.wrap:
            delta = np.minimum(delta, np.asarray(self.dims) - delta)
        return delta.sum(axis=-1)

    def summary(self) -> dict[str, Any]:
        """Base counts plus ``dims``; the diameter is analytic for large grids."""
        out = super().summary()
        out["dims"] = "x".join(map(str, self.dims))
        if out["diameter"] is None:
            out["diameter"] = int(sum((k // 2) if self.wrap else (k - 1) for k in self.dims))
        return out


@register_system_kind
@dataclass(frozen=True)
class Mesh(_Grid):
    """A mesh (grid without wrap-around) of any dimension, dimension-order routed.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    dims : tuple of int
        Size of each dimension; ``nodes`` must equal their product.

    Examples
    --------
    >>> m = Mesh.from_dims((3, 4))
    >>> ptr, links = m.route(np.array([0]), np.array([11]))
    >>> [m.link_name(int(x)) for x in links]  # along row 0 first, then down column 3
    ['n0->n1', 'n1->n2', 'n2->n3', 'n3->n7', 'n7->n11']
    """

    topology: ClassVar[str] = "mesh"


@register_system_kind
@dataclass(frozen=True)
class Torus(_Grid):
    """A torus (wrap-around mesh) of any dimension, dimension-order routed, shorter way round.

    A dimension of size 2 has a single link each way between its two nodes
    (the ``+`` and wrap-around ``-`` neighbours coincide), i.e. it is a mesh
    dimension; no parallel links are created.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    dims : tuple of int
        Size of each dimension; ``nodes`` must equal their product.

    Examples
    --------
    >>> t = Torus.from_dims((4, 4))
    >>> ptr, links = t.route(np.array([0]), np.array([15]))
    >>> [t.link_name(int(x)) for x in links]  # wrap left along row 0, then up column 3
    ['n0->n3', 'n3->n15']
    """

    topology: ClassVar[str] = "torus"
    wrap: ClassVar[bool] = True

    def translations(self) -> np.ndarray:
        """Shifts by every node's coordinates (mod each dimension): they keep the links.

        Examples
        --------
        >>> Torus.from_dims((2, 3)).translations()[4].tolist()     # by (1, 1)
        [4, 5, 3, 1, 2, 0]
        """
        c = self.coords(np.arange(self.nodes))
        return self.ids((c[:, None, :] + c[None, :, :]) % np.asarray(self.dims))
