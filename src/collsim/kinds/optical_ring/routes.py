"""How a transfer crosses an optical WDM ring: direction (+1 clockwise, -1 counter-clockwise), hop
count, fiber, and a *band* of consecutive wavelengths ``wavelength .. wavelength + band - 1`` held
on every link of the arc.  ``band = 1`` is one lightpath (the papers' case); a wider band is
``band`` lightpaths moving one transfer in parallel.  :class:`RingRoutes` follows the route protocol
of :class:`collsim.core.route_base.Routes`; its schedule-file form is :mod:`.format`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ...core.csr import INDEX
from ...core.route_base import Routes


@dataclass(frozen=True, eq=False)
class RingRoutes(Routes):
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

    def wavelengths_used(self) -> int:
        """Distinct wavelengths any band covers (:func:`wavelengths_covered`)."""
        return wavelengths_covered(self.wavelength, self.band)


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
