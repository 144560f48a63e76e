"""The optical torus's model: per-ring RWA, per-ring channel checks, the ring's step model, the torus bound.

References
----------
Seed 004: Dai et al., "OpTree: an efficient algorithm for all-gather operation in
optical interconnect systems", IEEE Open Journal of the Communications Society, 2024
(eq. 3, the time model; §VI-B, OpTree on the rows then the columns of a torus).
"""

from __future__ import annotations

from .cost import torus_lower_bound_s
from .rwa import realize_torus
from .system import OpticalTorus
from .resources import verify_torus_resources
from ..base import register_model
from ..optical_ring.model import OpticalRingModel

__all__ = ["OpticalTorusModel"]


class OpticalTorusModel(OpticalRingModel):
    """Optical tori (:class:`~collsim.kinds.optical_torus.system.OpticalTorus`).

    The ring's model with the torus's realisation, resource check and bound; the step
    model, the realised facts and the result part (paper steps, feasibility, channel
    use) are the ring's, inherited.
    """

    name = "optical-torus"

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route on each transfer's row or column ring, colour per (round, ring, direction), lay out slots."""
        params = dict(params or {})
        if isinstance(strategy, str):
            params.setdefault("strategy", strategy)
        return realize_torus(system, logical, strategy=strategy, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Ring routes, channels and bands per ring, transceivers (:func:`verify_torus_resources`)."""
        verify_torus_resources(schedule)

    def lower_bound_s(self, system, collective) -> float:
        """Node-channel, link-capacity and two-slot bound (:func:`collsim.kinds.optical_torus.cost.torus_lower_bound_s`)."""
        return torus_lower_bound_s(system, collective)


register_model(OpticalTorus, OpticalTorusModel())
