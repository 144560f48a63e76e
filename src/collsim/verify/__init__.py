"""Schedule verification: one entry point, several checks.

>>> from collsim import build, verify
>>> report = verify(build("ring", "paper", "allgather", "4KiB", nodes=8))
>>> report.steps
7
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.schedule import Schedule
from .dataflow import verify_dataflow
from .resources import (check_network_routes, verify_channels, verify_endpoints, verify_ring_routes,
                        verify_transceivers)


@dataclass(frozen=True)
class VerifyReport:
    """Summary of a schedule that passed verification.

    Attributes
    ----------
    steps : int
        Physical steps.
    rounds : int
        Logical rounds.
    transfers : int
        Number of transfers (lightpaths on optical systems).
    wavelengths_used : int
        Distinct wavelength indices used (0 on electrical systems).
    max_hops : int
        Longest route in links.
    """

    steps: int
    rounds: int
    transfers: int
    wavelengths_used: int
    max_hops: int


def verify(schedule: Schedule, *, dataflow: bool = True, resources: bool = True) -> VerifyReport:
    """Verify a schedule; raise the first violation found.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check.
    dataflow : bool, optional
        Check data movement, reductions and the postcondition (default True).
    resources : bool, optional
        Check routes, channels and transceiver limits (default True).

    Returns
    -------
    VerifyReport
        Summary counts.

    Raises
    ------
    collsim.core.errors.VerificationError
        A subclass naming the step, transfer, link and wavelength at fault.
    """
    verify_endpoints(schedule)
    if resources:
        if schedule.system.ring_routes:
            verify_ring_routes(schedule)
        elif schedule.route_ptr is not None:
            check_network_routes(schedule.system, schedule.src, schedule.dst, schedule.route_ptr,
                                 schedule.route_links, schedule.step)
        if schedule.system.optical:
            verify_channels(schedule)
        verify_transceivers(schedule)
    if dataflow:
        verify_dataflow(schedule)
    return VerifyReport(steps=schedule.num_steps, rounds=schedule.num_rounds, transfers=len(schedule),
                        wavelengths_used=schedule.wavelengths_used(),
                        max_hops=int(schedule.hops.max()) if len(schedule) else 0)


__all__ = ["verify", "VerifyReport"]
