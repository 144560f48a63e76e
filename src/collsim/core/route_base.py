"""The protocol of a kind's route class: what a schedule's *routes* part offers every caller.

A :class:`~collsim.core.schedule.Schedule` keeps its routes in an object of its kind's route
class (:class:`~collsim.kinds.optical_ring.routes.RingRoutes` on optical rings,
:class:`~collsim.kinds.network.routes.LinkRoutes` on networks); the generic code (the schedule, its
well-formedness check, the file formats) asks only what :class:`Routes` declares.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from .csr import canonical_column
from .errors import MalformedScheduleError

ROUTE_COLUMNS: set[str] = set()
"""Every route class's columns: a schedule reads them as its own (``s.hops``, ``s.wavelength``)."""


class Routes:
    """What every kind's route class offers, with defaults (subclasses are frozen dataclasses).

    ``COLUMNS`` names the per-row columns (and ``PATH_COLUMNS`` optional ones); defining a
    subclass adds them to :data:`ROUTE_COLUMNS`.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    PATH_COLUMNS: ClassVar[tuple[str, ...]] = ()
    DTYPES: ClassVar[dict[str, Any]] = {}
    """Each column's type: a column given in another is converted (checked,
    :func:`~collsim.core.csr.canonical_column`); an optional column may be None."""
    multipath: ClassVar[bool] = False

    def __post_init__(self) -> None:
        for name, dtype in self.DTYPES.items():
            value = getattr(self, name)
            if value is not None and not (isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == 1):
                object.__setattr__(self, name, canonical_column(
                    value, dtype, name, lambda message: MalformedScheduleError(f"routes {message}")))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        ROUTE_COLUMNS.update(cls.COLUMNS, cls.PATH_COLUMNS)

    def columns(self) -> tuple[str, ...]:
        """Names of the columns this instance holds."""
        return self.COLUMNS

    def check_shape(self, transfers: int) -> tuple[str, int | None] | None:
        """What is wrong with the columns for ``transfers`` rows, or None."""
        for name in self.columns():
            rows = len(getattr(self, name))
            if rows != transfers:
                return f"routes column {name!r} has {rows} rows, expected {transfers}", None
        return None

    def wavelengths_used(self) -> int:
        """Distinct wavelengths any transfer holds (0 for routes without wavelengths)."""
        return 0

    def link_load_blocks(self, step_bounds: np.ndarray, system: Any):
        """``(keys, counts)`` of flows per (step, link), block by block (none for routes without links)."""
        return iter(())


__all__ = ["ROUTE_COLUMNS", "Routes"]
