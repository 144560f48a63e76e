"""The optical torus's model: per-ring RWA, per-ring channel checks, the ring's step model, the torus bound.

References
----------
Seed 004: Dai et al., "OpTree: an efficient algorithm for all-gather operation in
optical interconnect systems", IEEE Open Journal of the Communications Society, 2024
(eq. 3, the time model; §VI-B, OpTree on the rows then the columns of a torus).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..cost.optical import paper_time_s, step_times
from ..cost.torus import torus_lower_bound_s
from ..physical import check_schedule
from ..rwa.torus import realize_torus
from ..systems.optical_torus import OpticalTorus
from ..verify.torus import verify_torus_resources
from .base import Timing, register_model
from .optical_ring import OpticalPart

__all__ = ["OpticalTorusModel"]


class OpticalTorusModel:
    """Optical tori (:class:`~collsim.systems.optical_torus.OpticalTorus`).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds import model_for
    >>> s = collsim.build("torus-striped", "optical-torus", "allgather", "1MiB", system_options={"rows": 4, "cols": 4})
    >>> model = model_for(s.system)
    >>> model.name, model.check_resources(s), s.num_steps
    ('optical-torus', None, 6)
    >>> from collsim.pipeline import run
    >>> row = run("torus-striped", s.system, "allgather", 1024)
    >>> type(row.part).__name__, row.part.feasible, row.slots, row.efficiency <= 1
    ('OpticalPart', True, 6, True)
    """

    name = "optical-torus"

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route on each transfer's row or column ring, colour per (round, ring, direction), lay out slots.

        Parameters
        ----------
        system : OpticalTorus
            The torus.
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
            With :class:`~collsim.core.routes.RingRoutes` along each transfer's ring.
        """
        params = dict(params or {})
        if isinstance(strategy, str):
            params.setdefault("strategy", strategy)
        return realize_torus(system, logical, strategy=strategy, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Ring routes, channels and bands per ring, transceivers (:func:`verify_torus_resources`)."""
        verify_torus_resources(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """The optical ring's step model (:func:`collsim.cost.optical.step_times`), slot by slot."""
        return Timing(step_times(schedule).total_s, "optical-step")

    def lower_bound_s(self, system, collective) -> float:
        """Node-channel, link-capacity and two-slot bound (:func:`collsim.cost.torus.torus_lower_bound_s`)."""
        return torus_lower_bound_s(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` (slots) and ``reconfigurations`` of the realised schedule."""
        return {"steps": schedule.num_steps,
                "reconfigurations": int(step_times(schedule).reconfigured.sum())}

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> OpticalPart:
        """Paper steps (if any), physical feasibility of the longest lightpath, channel use."""
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


register_model(OpticalTorus, OpticalTorusModel())
