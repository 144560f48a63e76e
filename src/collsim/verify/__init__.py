"""Schedule verification: the checks.

Data flow (:mod:`.dataflow`) is the same for every system; resources are
checked by each kind's model (:mod:`collsim.kinds`): link routes here
(:func:`verify_network_resources`), an optical ring's channels in
:mod:`collsim.kinds.optical_ring.resources`.  :func:`collsim.verify` runs them all.

>>> from collsim import build, verify
>>> report = verify(build("ring", "paper", "allgather", "4KiB", nodes=8))
>>> report.steps
7
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .dataflow import verify_dataflow
from .resources import verify_endpoints, verify_network_resources


@dataclass(frozen=True)
class VerifyReport:
    """Summary of a schedule that passed verification: what :func:`collsim.verify` returns.

    The one report class (``collsim.VerifyReport``, ``collsim.pipeline.VerifyReport``): the counts of
    the checks here, and the times :func:`collsim.verify` adds (NaN when it is asked not to time).

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
    time_s : float, optional
        The schedule's time as a result reports it (:func:`collsim.pipeline.schedule_time_s`), never
        below the lower bound: the optical step model's, or on networks the flow simulator's.
    closed_form_time_s : float, optional
        The kind's closed-form time: the same as ``time_s`` on optical systems; on networks the
        alpha-beta estimate (an algorithm's own formula, which ignores shared links and can be below
        the lower bound, or the schedule's, which counts every link's load and never is).
    data_flow : str, optional
        How the data flow was checked: ``"exact"`` (holdings, or exact contributor sets of a
        reduction), ``"fingerprint"`` (a large reduction checked on random data, wrong with
        probability below 2^-95: :mod:`collsim.verify.fingerprint`), ``"not checked"``, or for a
        symmetric schedule ``"orbits"`` or ``"orbits, fingerprint"`` (:mod:`collsim.verify.orbits`).

    Examples
    --------
    >>> from collsim import build, verify
    >>> report = verify(build("ring", "paper", "allgather", 1024, nodes=8))
    >>> report
    VerifyReport(steps=7, rounds=7, transfers=56, wavelengths_used=1, max_hops=1)
    >>> report.slots, round(report.time_s * 1e6, 2), report.time_s == report.closed_form_time_s
    (7, 26.66, True)
    >>> r = verify(build("pairwise", "line", "alltoall", "64KiB", nodes=8))
    >>> round(r.time_s * 1e6, 2), round(r.closed_form_time_s * 1e6, 2)   # simulated vs alpha-beta
    (123.89, 76.7)
    """

    steps: int
    rounds: int
    transfers: int
    wavelengths_used: int
    max_hops: int
    time_s: float = field(default=math.nan, repr=False)  # the counts are the report's repr
    closed_form_time_s: float = field(default=math.nan, repr=False)
    data_flow: str = field(default="exact", repr=False)

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
        from ..core.repeated import RepeatedSteps
        # a symmetric schedule: its counts, its representatives' routes; steps that repeat: their classes' routes
        reps = schedule.steps if isinstance(schedule, RepeatedSteps) else getattr(schedule, "reps", schedule)
        transfers = getattr(schedule, "transfers", None)
        return (self.steps == schedule.num_steps and self.rounds == schedule.num_rounds
                and self.transfers == (len(schedule) if transfers is None else transfers)
                and self.max_hops == (int(reps.hops.max()) if len(reps) else 0))


__all__ = ["VerifyReport", "verify_dataflow", "verify_endpoints", "verify_network_resources"]
