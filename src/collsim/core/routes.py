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
    a CSR list of directed link ids per path, one path per transfer or, with ECMP,
    several paths per transfer each carrying a share of its bytes.

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


def wavelengths_covered(wavelength: np.ndarray, band: np.ndarray) -> int:
    """Number of distinct wavelength indices any band covers: the length of the union of ``[lo, lo + band)``.

    Where the wavelengths are few for the transfers, band starts and ends are counted per
    wavelength, in blocks of 4 M transfers; otherwise the bands are sorted by their start.
    Either way memory and time grow with the transfers, never with the wavelength count.

    Parameters
    ----------
    wavelength, band : numpy.ndarray
        :class:`RingRoutes` columns: the lowest wavelength and the width of every band.

    Returns
    -------
    int
        Wavelengths covered by at least one band (0 without bands).

    Examples
    --------
    >>> wavelengths_covered(np.array([0, 2, 6]), np.array([4, 3, 1]))   # 0..3 and 2..4 overlap: 0..4 and 6
    6
    """
    lo = wavelength
    if not len(lo):
        return 0
    top = int(lo.max()) + int(band.max())
    if top <= 4 * len(lo) + 1024:  # few wavelengths for the transfers: count band ends per wavelength
        cover = np.zeros(top + 1, INDEX)
        for a in range(0, len(lo), 1 << 22):   # bounded temporaries for tens of millions of transfers
            blo = lo[a:a + (1 << 22)].astype(INDEX)
            cover += np.bincount(blo, minlength=top + 1)
            blo += band[a:a + (1 << 22)]
            cover -= np.bincount(blo, minlength=top + 1)
        return int(np.count_nonzero(np.cumsum(cover)[:top] > 0))
    lo = lo.astype(INDEX)
    hi = lo + band
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    del order
    reach = np.maximum.accumulate(hi)        # the furthest end of the bands started so far
    start = np.maximum(lo[1:], reach[:-1])   # what a band adds begins after every earlier band's end
    return int(hi[0] - lo[0]) + int(np.maximum(hi[1:] - start, 0).sum())


@dataclass(frozen=True, eq=False)
class LinkRoutes:
    """Routes of transfers on an electrical network: directed link ids in order, one or more paths each.

    Parameters
    ----------
    route_ptr, route_links : numpy.ndarray
        CSR over *paths*: path ``p`` crosses ``route_links[route_ptr[p]:route_ptr[p+1]]``.
        Without ``path_ptr`` there is one path per transfer, so path ``t`` is transfer ``t``'s route.
    path_ptr : numpy.ndarray or None
        Multipath routes (ECMP): transfer ``t`` is split over paths ``path_ptr[t]:path_ptr[t+1]``
        (at least one each).  None: one path per transfer.
    path_weight : numpy.ndarray or None
        Share of its transfer's bytes each path carries (a fluid split; each transfer's shares
        sum to 1).  None: every path carries its whole transfer.

    Notes
    -----
    A multipath transfer is one transfer of the schedule (one row, one ``hops`` value: its
    longest path); what crosses a link is the share of its bytes on each path that crosses
    it.  Code that reads routes per transfer uses :attr:`path_owner` and :attr:`weights`
    (``arange`` and ones for single-path routes), so one code path serves both.

    Examples
    --------
    >>> r = LinkRoutes(np.array([0, 1, 3]), np.array([5, 2, 7]))
    >>> r.hops.tolist(), r.take(np.array([1])).route_links.tolist()
    ([1, 2], [2, 7])
    >>> m = LinkRoutes(np.array([0, 2, 4, 5]), np.array([1, 3, 2, 4, 9]), np.array([0, 2, 3]),
    ...                np.array([0.5, 0.5, 1.0]))     # transfer 0 split over two paths
    >>> len(m), m.multipath, m.hops.tolist(), m.path_owner.tolist()
    (2, True, [2, 1], [0, 0, 1])
    >>> m.take(np.array([1, 0])).route_links.tolist()
    [9, 1, 3, 2, 4]
    """

    route_ptr: np.ndarray
    route_links: np.ndarray
    path_ptr: np.ndarray | None = None
    path_weight: np.ndarray | None = None

    COLUMNS: ClassVar[tuple[str, ...]] = ("route_ptr", "route_links")
    PATH_COLUMNS: ClassVar[tuple[str, ...]] = ("path_ptr", "path_weight")

    @property
    def multipath(self) -> bool:
        """Whether some transfers may be split over several paths (``path_ptr`` is set)."""
        return self.path_ptr is not None

    def columns(self) -> tuple[str, ...]:
        """Names of the columns this instance holds (the path columns only when multipath)."""
        return self.COLUMNS + (self.PATH_COLUMNS if self.multipath else ())

    def __len__(self) -> int:
        return len(self.path_ptr) - 1 if self.multipath else len(self.route_ptr) - 1

    @property
    def paths(self) -> int:
        """Number of paths (the transfers, for single-path routes)."""
        return len(self.route_ptr) - 1

    @cached_property
    def path_hops(self) -> np.ndarray:
        """Links on each path."""
        return np.diff(self.route_ptr)

    @cached_property
    def path_owner(self) -> np.ndarray:
        """Transfer of each path."""
        if not self.multipath:
            return np.arange(self.paths, dtype=INDEX)
        return np.repeat(np.arange(len(self), dtype=INDEX), np.diff(self.path_ptr))

    @cached_property
    def weights(self) -> np.ndarray:
        """Share of its transfer's bytes on each path (ones for single-path routes)."""
        return np.ones(self.paths) if self.path_weight is None else np.asarray(self.path_weight, np.float64)

    @cached_property
    def hops(self) -> np.ndarray:
        """Links on each transfer's route (its longest path; computed once)."""
        if not self.multipath:
            return self.path_hops
        out = np.zeros(len(self), INDEX)
        nz = np.diff(self.path_ptr) > 0
        if self.paths:
            out[nz] = np.maximum.reduceat(self.path_hops, self.path_ptr[:-1][nz])
        return out

    def path_bounds(self, transfer_bounds: np.ndarray) -> np.ndarray:
        """Path index of transfer boundaries (identity for single-path routes).

        Parameters
        ----------
        transfer_bounds : numpy.ndarray
            Transfer indices (``0..len``), e.g. a schedule's step bounds.

        Returns
        -------
        numpy.ndarray
            The first path of each of those transfers (``paths`` at the end).
        """
        return np.asarray(transfer_bounds) if not self.multipath else self.path_ptr[transfer_bounds]

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
        if not self.multipath:
            return LinkRoutes(*permute_csr(self.hops, self.route_links, rows))
        pptr, pidx = permute_csr(np.diff(self.path_ptr), np.arange(self.paths, dtype=INDEX), rows)
        ptr, links = permute_csr(self.path_hops, self.route_links, pidx)
        return LinkRoutes(ptr, links, pptr, self.weights[pidx])

    def replace(self, **changes: Any) -> "LinkRoutes":
        """Copy with some columns replaced."""
        return replace(self, **changes)

    def nbytes(self) -> int:
        """Memory held by the columns."""
        return sum(getattr(self, c).nbytes for c in self.columns())


ROUTE_COLUMNS = {c for cls in (RingRoutes, LinkRoutes) for c in (f.name for f in fields(cls))}
