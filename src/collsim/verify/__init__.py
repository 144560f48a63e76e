"""Schedule verification: the checks.

Data flow (:mod:`.dataflow`) is the same for every system; resources are
checked per kind of system (:func:`verify_ring_resources`,
:func:`verify_network_resources`), and each kind's model
(:mod:`collsim.kinds`) calls its own.  :func:`collsim.verify` runs them all.

>>> from collsim import build, verify
>>> report = verify(build("ring", "paper", "allgather", "4KiB", nodes=8))
>>> report.steps
7
"""

from __future__ import annotations

from dataclasses import dataclass

from .dataflow import verify_dataflow
from .resources import verify_endpoints, verify_network_resources, verify_ring_resources


@dataclass(frozen=True)
class VerifyReport:
    """Summary of a schedule that passed verification.

    Parameters
    ----------
    steps : int
        Physical steps (time slots); also readable as ``slots``.
    rounds : int
        Logical rounds.
    transfers : int
        Number of transfers (lightpaths on optical systems).
    wavelengths_used : int
        Distinct wavelength indices used (0 on electrical systems).
    max_hops : int
        Longest route in links.

    Examples
    --------
    >>> from collsim import build, verify
    >>> report = verify(build("ring", "paper", "allgather", 1024, nodes=8))
    >>> report
    VerifyReport(steps=7, rounds=7, transfers=56, wavelengths_used=1, max_hops=1)
    >>> report.slots
    7
    """

    steps: int
    rounds: int
    transfers: int
    wavelengths_used: int
    max_hops: int

    @property
    def slots(self) -> int:
        """Physical time slots (the same as ``steps``)."""
        return self.steps

    def describes(self, schedule) -> bool:
        """Whether this report's counts are those of ``schedule`` (a report passed as proof of verification).

        A report says a schedule passed the verifier; the functions that time a schedule accept one
        instead of verifying again (:func:`collsim.evaluate`, :func:`collsim.simulate`).  This check
        catches a report of another schedule; it cannot tell two schedules with equal counts apart.

        Parameters
        ----------
        schedule : Schedule
            The schedule the report is offered for.

        Returns
        -------
        bool
            True when steps, rounds, transfers and the longest route agree.

        Examples
        --------
        >>> from collsim import build, verify
        >>> s = build("ring", "paper", "allgather", 1024, nodes=8)
        >>> report = verify(s)
        >>> report.describes(s), report.describes(s.take(list(range(len(s) - 1))))
        (True, False)
        """
        return (self.steps == schedule.num_steps and self.rounds == schedule.num_rounds
                and self.transfers == len(schedule)
                and self.max_hops == (int(schedule.hops.max()) if len(schedule) else 0))


__all__ = ["VerifyReport", "verify_dataflow", "verify_endpoints", "verify_network_resources",
           "verify_ring_resources"]
