"""Physical layer of optical rings: insertion loss, crosstalk, SNR and BER of lightpaths.

Seed 004 §IV-B, eqs. (4)-(9), evaluated per lightpath with its hop count in
place of the paper's ``L_max``.  :mod:`collsim.kinds.optical_ring.physical.budget` holds the
per-lightpath physics; this module adds the configuration (``[system.physical]``
tables) and the schedule-level check.  Readings of the ambiguous points and the
source of every default: ``docs/physical-layer.md``.

Examples
--------
>>> from collsim.kinds.optical_ring.physical import PhysicalParams, max_feasible_hops
>>> max_feasible_hops(PhysicalParams())
25
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Mapping

import numpy as np

from ....core.errors import InputError
from ....core.plugins import require
from .budget import (
    HOPS_CAP,
    PhysicalParams,
    ber,
    insertion_loss_db,
    lightpath_feasible,
    max_feasible_hops,
    power_feasible,
    required_snr_db,
    snr_db,
)

__all__ = [
    "HOPS_CAP",
    "PhysicalParams",
    "PhysicalReport",
    "ber",
    "check_schedule",
    "insertion_loss_db",
    "lightpath_feasible",
    "max_feasible_hops",
    "params_from_mapping",
    "power_feasible",
    "required_snr_db",
    "snr_db",
]


def params_from_mapping(d: Mapping[str, Any] | None) -> PhysicalParams:
    """Build parameters from a mapping such as a ``[system.physical]`` TOML table."""
    d = {} if d is None else d
    if not isinstance(d, Mapping):
        raise InputError(f"physical parameters must be a table/mapping, got {type(d).__name__}")
    names = [f.name for f in fields(PhysicalParams)]
    unknown = sorted(str(k) for k in d if k not in names)
    if unknown:
        raise InputError(f"unknown physical parameter(s) {', '.join(unknown)}; valid: {', '.join(names)}")
    return PhysicalParams(**dict(d))


@dataclass(frozen=True)
class PhysicalReport:
    """Physical-layer check of a schedule; the worst lightpath is the longest."""

    max_hops: int
    worst_loss_db: float
    worst_snr_db: float
    worst_ber: float
    power_ok: bool
    ber_ok: bool
    feasible: bool
    max_feasible_hops: int
    infeasible_lightpaths: int
    worst_index: int | None
    worst_step: int | None


def check_schedule(schedule, params: PhysicalParams = PhysicalParams()) -> PhysicalReport:
    """Check every lightpath of an optical schedule, vectorised over its ``hops`` column.

    A transfer over a band of ``b`` wavelengths is ``b`` lightpaths of the same
    length, each checked (and counted) on its own.

    References
    ----------
    Seed 004 §IV-B; §V-A assumes "the optical power can support the maximum
    communication length", which this check tests.
    """
    require(schedule.system, "physical-layer", "the physical-layer check (power budget and BER of lightpaths)")
    band = schedule.routes.band
    limit = max_feasible_hops(params)
    hops = np.asarray(schedule.hops)
    if hops.size == 0:
        return PhysicalReport(0, math.nan, math.nan, math.nan, True, True, True, limit, 0, None, None)
    idx = int(np.argmax(hops))
    h = int(hops[idx])
    snr = snr_db(h, params)
    worst_ber = ber(snr)
    p_ok, b_ok = power_feasible(h, params), worst_ber < params.ber_target
    return PhysicalReport(
        max_hops=h, worst_loss_db=insertion_loss_db(h, params), worst_snr_db=snr, worst_ber=worst_ber,
        power_ok=p_ok, ber_ok=b_ok, feasible=p_ok and b_ok, max_feasible_hops=limit,
        infeasible_lightpaths=int(band[hops > limit].sum()),  # a band is band lightpaths
        worst_index=idx, worst_step=int(np.asarray(schedule.step)[idx]))
