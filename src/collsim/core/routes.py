"""The per-kind part of a schedule: how each transfer crosses the system.

A :class:`~collsim.core.schedule.Schedule` has columns every system shares
(step, round, endpoints, chunks, reduce) and one *routes* part owned by the kind
of system it runs on:

:class:`RingRoutes` (optical WDM rings)
    direction (+1 clockwise, -1 counter-clockwise), hop count, fiber, and a *band*
    of consecutive wavelengths ``wavelength .. wavelength + band - 1`` held on
    every link of the arc.  ``band = 1`` is one lightpath (the papers' case); a
    wider band is ``band`` lightpaths moving one transfer in parallel.
:class:`LinkRoutes` (electrical networks)
    a CSR list of directed link ids per transfer.

Both offer ``hops``, ``take(rows)`` (a row subset in a new order), ``replace``
and their JSON row fields, so the code that handles schedules never asks which
kind it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

INDEX = np.int64


def permute_csr(lengths: np.ndarray, idx: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder (or subset) CSR rows.

    Parameters
    ----------
    lengths : numpy.ndarray
        Row lengths in the current order.
    idx : numpy.ndarray
        Concatenated row contents in the current order.
    order : numpy.ndarray
        New order: row ``i`` of the result is old row ``order[i]`` (rows may be
        dropped or repeated).

    Returns
    -------
    tuple of numpy.ndarray
        ``(ptr, idx)`` in the new order.

    Examples
    --------
    >>> ptr, idx = permute_csr(np.array([1, 2]), np.array([7, 8, 9]), np.array([1, 0]))
    >>> ptr.tolist(), idx.tolist()
    ([0, 2, 3], [8, 9, 7])
    """
    order = np.asarray(order, dtype=INDEX)
    old_ptr = np.zeros(len(lengths) + 1, dtype=INDEX)
    np.cumsum(lengths, out=old_ptr[1:])
    new_len = np.asarray(lengths, dtype=INDEX)[order]
    ptr = np.zeros(len(order) + 1, dtype=INDEX)
    np.cumsum(new_len, out=ptr[1:])
    if len(idx) == 0:
        return ptr, idx[:0]
    starts = np.repeat(old_ptr[:-1][order] - ptr[:-1], new_len)
    return ptr, idx[starts + np.arange(ptr[-1], dtype=INDEX)]


def dense_rank(sorted_values: np.ndarray) -> np.ndarray:
    """Rank of each value among the distinct values of a non-decreasing array.

    The inverse of ``np.unique(..., return_inverse=True)`` for sorted input in one
    linear pass; when the values are already ``0, 1, 2, ...`` with no gap the input
    array itself is returned (no copy).

    Parameters
    ----------
    sorted_values : numpy.ndarray
        Non-decreasing integers (logical rounds, say).

    Returns
    -------
    numpy.ndarray
        int64 ranks, ``0`` for the smallest value.

    Examples
    --------
    >>> dense_rank(np.array([2, 2, 5, 7, 7])).tolist()
    [0, 0, 1, 2, 2]
    """
    v = np.asarray(sorted_values)
    if v.size == 0:
        return np.zeros(0, INDEX)
    change = v[1:] != v[:-1]
    if v.dtype == INDEX and v[0] == 0 and int(v[-1]) == int(np.count_nonzero(change)):
        return v  # already dense
    out = np.zeros(v.size, INDEX)
    np.cumsum(change, out=out[1:])
    return out


def row_blocks(ptr: np.ndarray, max_entries: int = 1 << 20) -> list[tuple[int, int]]:
    """Split CSR rows into consecutive blocks of at most ``max_entries`` entries.

    Work over CSR contents (every link of every route, say) done block by block
    keeps its temporaries bounded by the block, not by the whole schedule.  A row
    longer than ``max_entries`` is a block of its own.

    Parameters
    ----------
    ptr : numpy.ndarray
        CSR row pointer (``len = rows + 1``).
    max_entries : int, optional
        Entries per block (default 2**20, 8 MiB of int64).

    Returns
    -------
    list of tuple of int
        ``(lo, hi)`` row ranges covering every row in order.

    Examples
    --------
    >>> row_blocks(np.array([0, 2, 4, 5, 9]), max_entries=4)
    [(0, 2), (2, 3), (3, 4)]
    """
    rows = len(ptr) - 1
    out, lo = [], 0
    while lo < rows:
        hi = int(np.searchsorted(ptr, ptr[lo] + max_entries, side="right")) - 1
        hi = min(max(hi, lo + 1), rows)
        out.append((lo, hi))
        lo = hi
    return out


@dataclass(frozen=True, eq=False)
class RingRoutes:
    """Routes and channels of transfers on an optical ring.

    Parameters
    ----------
    direction : numpy.ndarray
        ``int8`` +1 (clockwise) or -1 (counter-clockwise).
    hops : numpy.ndarray
        Links on the arc, ``1 .. N-1``.
    fiber : numpy.ndarray
        ``int16`` fiber index in the direction, ``0 .. F-1``.
    wavelength : numpy.ndarray
        ``int32`` lowest wavelength of the band, ``0 .. w-1``.
    band : numpy.ndarray
        ``int32`` number of consecutive wavelengths, ``>= 1``; the band must fit on
        its fiber (``wavelength + band <= w``).

    Examples
    --------
    >>> r = RingRoutes.create(direction=[1, -1], hops=[1, 2], fiber=[0, 0], wavelength=[0, 4])
    >>> r.band.tolist(), r.channels().tolist()
    ([1, 1], [1, 1])
    """

    direction: np.ndarray
    hops: np.ndarray
    fiber: np.ndarray
    wavelength: np.ndarray
    band: np.ndarray

    COLUMNS: ClassVar[tuple[str, ...]] = ("direction", "hops", "fiber", "wavelength", "band")

    @classmethod
    def create(cls, *, direction, hops, fiber, wavelength, band=None) -> "RingRoutes":
        """Build with the canonical dtypes (``band`` defaults to one wavelength).

        Parameters
        ----------
        direction, hops, fiber, wavelength : array_like
            Per-transfer columns.
        band : array_like, optional
            Band widths (default 1 everywhere).

        Returns
        -------
        RingRoutes
            The routes part.
        """
        hops = np.asarray(hops, dtype=INDEX)
        band = np.ones(len(hops), np.int32) if band is None else np.asarray(band, dtype=np.int32)
        return cls(np.asarray(direction, dtype=np.int8), hops, np.asarray(fiber, dtype=np.int16),
                   np.asarray(wavelength, dtype=np.int32), np.broadcast_to(band, hops.shape).copy()
                   if band.ndim == 0 else band)

    def __len__(self) -> int:
        return len(self.hops)

    def channels(self) -> np.ndarray:
        """Channels (lightpaths) each transfer holds on every link of its arc: its band width."""
        return self.band

    def take(self, rows: np.ndarray) -> "RingRoutes":
        """Rows ``rows`` in that order.

        Parameters
        ----------
        rows : numpy.ndarray
            Row indices.

        Returns
        -------
        RingRoutes
            The subset.
        """
        return RingRoutes(*(getattr(self, c)[rows] for c in self.COLUMNS))

    def replace(self, **changes: Any) -> "RingRoutes":
        """Copy with some columns replaced."""
        return replace(self, **changes)

    def nbytes(self) -> int:
        """Memory held by the columns."""
        return sum(getattr(self, c).nbytes for c in self.COLUMNS)


@dataclass(frozen=True, eq=False)
class LinkRoutes:
    """Routes of transfers on an electrical network: directed link ids in order.

    Parameters
    ----------
    route_ptr, route_links : numpy.ndarray
        CSR: transfer ``t`` crosses ``route_links[route_ptr[t]:route_ptr[t+1]]``.

    Examples
    --------
    >>> r = LinkRoutes(np.array([0, 1, 3]), np.array([5, 2, 7]))
    >>> r.hops.tolist(), r.take(np.array([1])).route_links.tolist()
    ([1, 2], [2, 7])
    """

    route_ptr: np.ndarray
    route_links: np.ndarray

    COLUMNS: ClassVar[tuple[str, ...]] = ("route_ptr", "route_links")

    def __len__(self) -> int:
        return len(self.route_ptr) - 1

    @cached_property
    def hops(self) -> np.ndarray:
        """Links on each route (computed once)."""
        return np.diff(self.route_ptr)

    def channels(self) -> np.ndarray:
        """One flow per transfer."""
        return np.ones(len(self), np.int32)

    def take(self, rows: np.ndarray) -> "LinkRoutes":
        """Rows ``rows`` in that order.

        Parameters
        ----------
        rows : numpy.ndarray
            Row indices.

        Returns
        -------
        LinkRoutes
            The subset.
        """
        return LinkRoutes(*permute_csr(self.hops, self.route_links, rows))

    def replace(self, **changes: Any) -> "LinkRoutes":
        """Copy with some columns replaced."""
        return replace(self, **changes)

    def nbytes(self) -> int:
        """Memory held by the columns."""
        return self.route_ptr.nbytes + self.route_links.nbytes


ROUTE_COLUMNS = {c for cls in (RingRoutes, LinkRoutes) for c in (f.name for f in fields(cls))}
