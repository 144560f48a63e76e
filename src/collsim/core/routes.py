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


@dataclass(frozen=True, eq=False)
class RingRoutes:
    """Routes and channels of transfers on an optical ring.

    Attributes
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

    Attributes
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

    @property
    def hops(self) -> np.ndarray:
        """Links on each route."""
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
