"""The optical ring's model: RWA with bands, channel checks, the step model, the optical bound.

References
----------
Seed 004: Dai et al., "OpTree: an efficient algorithm for all-gather operation in
optical interconnect systems", IEEE Open Journal of the Communications Society, 2024
(eq. 3, the papers' time model; §IV-B, the physical layer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..core.units import format_time
from ..cost.bounds import optical_lower_bound_s
from ..cost.optical import paper_time_s, step_times
from ..physical import check_schedule
from ..rwa.ring import realize_ring
from ..systems.optical_ring import OpticalRing
from ..verify.resources import verify_ring_resources
from .base import Timing, register_model


@dataclass(frozen=True)
class OpticalPart:
    """The optical ring's fields of a result row.

    Parameters
    ----------
    wavelengths, fibers : int
        The ring's w and F.
    wavelengths_used : int
        Distinct wavelengths any band covers.
    reconfigurations : int
        Steps that paid the MRR reconfiguration.
    paper_steps : int or None
        The paper's closed-form step count (block-steps), if the algorithm has one.
    paper_time_s : float or None
        The papers' eq. 3 at ``paper_steps``.
    feasible : bool
        Every lightpath meets the physical layer's power and BER limits.
    max_feasible_hops : int
        Longest lightpath the physical layer allows.
    worst_ber : float or None
        BER of the longest lightpath.
    time_model : str, optional
        ``"optical-step"``.

    Examples
    --------
    >>> from collsim.pipeline import run
    >>> from collsim.systems import load_system
    >>> part = run("ring", load_system("paper", nodes=4), "allgather", 1024).part
    >>> part.paper_steps, part.reconfigurations, part.feasible, part.title()
    (3, 1, True, 'w=64, F=1')
    """

    wavelengths: int
    fibers: int
    wavelengths_used: int
    reconfigurations: int
    paper_steps: int | None
    paper_time_s: float | None
    feasible: bool
    max_feasible_hops: int
    worst_ber: float | None
    time_model: str = "optical-step"

    def title(self) -> str:
        """The system part of a comparison table's title."""
        return f"w={self.wavelengths}, F={self.fibers}"

    def cells(self, row) -> list[tuple[str, str]]:
        """``(column, text)`` of this kind's columns in a comparison table, after ``block steps``."""
        opt = lambda v, f=str: "-" if v is None else f(v)  # noqa: E731
        return [("paper steps", opt(self.paper_steps)), ("λ used", str(self.wavelengths_used)),
                ("max hops", str(row.max_hops)),
                ("feasible", "yes" if self.feasible else f"no (>{self.max_feasible_hops} hops)"),
                ("time", format_time(row.time_s)), ("paper time", opt(self.paper_time_s, format_time))]


class OpticalRingModel:
    """Optical WDM rings (:class:`~collsim.systems.optical_ring.OpticalRing`).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds import model_for
    >>> s = collsim.build("ring", "paper", "allgather", "1MiB", nodes=8)
    >>> model = model_for(s.system)
    >>> model.check_resources(s); round(model.time(s).time_s * 1e3, 3)
    1.722
    """

    name = "optical-ring"

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route (shortest or given direction), colour bands of channels, lay out slots.

        Parameters
        ----------
        system : OpticalRing
            The ring.
        logical : LogicalSchedule
            The algorithm's rounds.
        strategy : str or callable, optional
            Wavelength-assignment strategy.
        algorithm : str, optional
            Name recorded in the schedule.
        params : Mapping, optional
            Parameters recorded (the strategy is added when it has a name).

        Returns
        -------
        Schedule
            With :class:`~collsim.core.routes.RingRoutes`.
        """
        params = dict(params or {})
        if isinstance(strategy, str):
            params.setdefault("strategy", strategy)
        return realize_ring(system, logical, strategy=strategy, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Arcs, channel ranges, band overlaps and transceiver limits (:func:`verify_ring_resources`)."""
        verify_ring_resources(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """collsim's optical step model (:func:`collsim.cost.optical.step_times`)."""
        return Timing(step_times(schedule).total_s, "optical-step")

    def lower_bound_s(self, system, collective) -> float:
        """Channel-capacity bound (:func:`collsim.cost.bounds.optical_lower_bound_s`)."""
        return optical_lower_bound_s(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` (slots) and ``reconfigurations`` of the realised schedule."""
        return {"steps": schedule.num_steps,
                "reconfigurations": int(step_times(schedule).reconfigured.sum())}

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> OpticalPart:
        """Paper model, physical feasibility and channel use of a verified schedule."""
        system = schedule.system
        coll = schedule.collective
        pst = spec.paper_steps(system, coll.kind, chosen) if spec is not None and spec.paper_steps else None
        phys = check_schedule(schedule, system.physical_params())
        return OpticalPart(
            wavelengths=system.wavelengths, fibers=system.fibers, wavelengths_used=schedule.wavelengths_used(),
            reconfigurations=int(step_times(schedule).reconfigured.sum()), paper_steps=pst,
            paper_time_s=paper_time_s(system, coll.size_bytes, pst), feasible=phys.feasible,
            max_feasible_hops=phys.max_feasible_hops,
            worst_ber=phys.worst_ber if np.isfinite(phys.worst_ber) else None)


register_model(OpticalRing, OpticalRingModel())
