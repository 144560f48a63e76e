"""Contention-aware flow-level simulation of schedules on electrical networks.

:func:`simulate` runs a :class:`~collsim.core.schedule.Schedule` as fluid flows
sharing link bandwidth max-min fairly (:func:`max_min_rates`), in bulk-
synchronous steps, dependency-driven (``mode="dataflow"``) or as MPI ranks without
barriers (``mode="rank"``, :mod:`collsim.sim.ranks`).  See
``docs/flow-simulator.md`` for the model, its limits and measured speed.
"""

from __future__ import annotations

from .flow import MODES, SimResult, simulate
from .maxmin import check_max_min, max_min_rates

__all__ = ["MODES", "SimResult", "check_max_min", "max_min_rates", "simulate"]
