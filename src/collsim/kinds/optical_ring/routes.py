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
    """Routes and channels of transfers on an optical ring."""

    direction: np.ndarray
    hops: np.ndarray
    fiber: np.ndarray
    wavelength: np.ndarray
    band: np.ndarray

    COLUMNS: ClassVar[tuple[str, ...]] = ("direction", "hops", "fiber", "wavelength", "band")
    DTYPES: ClassVar[dict[str, Any]] = {"direction": np.int8, "hops": INDEX, "fiber": np.int16,
                                        "wavelength": np.int32, "band": np.int32}

    @classmethod
    def create(cls, *, direction, hops, fiber, wavelength, band=None) -> "RingRoutes":
        """Build with the canonical dtypes (``band`` defaults to one wavelength)."""
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
        """Rows ``rows`` in that order."""
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
