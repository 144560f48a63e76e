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

from .format import RING_FORMAT
from ...core.units import format_time
from .bound import optical_lower_bound_s
from .cost import paper_time_s, step_times
from .physical import check_schedule
from .rwa import realize_ring
from .system import OpticalRing
from .resources import verify_ring_orbit_resources, verify_ring_resources
from ...core.symmetry import Translations
from ...core.wording import format_number
from ..base import Column, KindModel, Timing, register_model


@dataclass(frozen=True)
class OpticalPart:
    """The optical ring's fields of a result row."""

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

    @staticmethod
    def columns() -> list[Column]:
        """This kind's columns of a comparison table, in order (after ``block times``)."""
        return list(_COLUMNS)



def _feasible(row) -> str:
    return "yes" if row.feasible else f"no (>{row.max_feasible_hops})"


def _efficiency(row) -> str:  # a * marks an efficiency the physical layer does not allow
    text = format_number(100 * row.efficiency, 3, strip=False) + "%"
    return text + "*" if row.feasible is False else text


def _opt_time(value) -> str:
    return "-" if value is None else format_time(value)


_COLUMNS = (
    Column("paper_steps", "paper\nsteps", lambda r: format_number(r.paper_steps, 6),
           "The papers' closed-form step count S for this algorithm, evaluated at this N and w (their formula, "
           "not the value printed in their table: `collsim reproduce optree-table1` shows both, "
           "docs/papers/discrepancies.md says where they differ). Compare it with block times (the same unit), "
           "not with slots. '-' where the algorithm has no paper formula.", drop=3),
    Column("wavelengths_used", "\u03bb\nused", lambda r: str(r.wavelengths_used),
           "Distinct wavelengths the schedule uses (of the w per fiber in the title).", drop=1),
    Column("max_hops", "max\nhops", lambda r: str(r.max_hops), "The longest lightpath, in ring links.", drop=2),
    Column("feasible", "feasible", _feasible,
           "yes: every lightpath closes the physical layer's power budget with BER below 1e-9 "
           "(docs/physical-layer.md). no (>h): some lightpath is longer than h hops, the most the "
           "physical layer allows (JSON max_feasible_hops); the schedule would need amplification, and "
           "its times are those of a ring that could carry it."),
    Column("time_s", "time", lambda r: format_time(r.time_s),
           "collsim's optical step model (docs/cost-models.md): per slot, the slowest transfer's "
           "serialisation of its padded bytes plus O/E/O per flit, plus the MRR reconfiguration only when "
           "the slot's lightpaths differ from the previous slot's; the slots' times add up. Efficiency "
           "and bandwidths use this time."),
    Column("paper_time_s", "paper\ntime", lambda r: _opt_time(r.paper_time_s),
           "The papers' eq. 3, T = S (d/B + a), at S = paper steps, with a = one reconfiguration plus the "
           "O/E/O of one message. It differs from time wherever eq. 3 differs from the schedule: it "
           "charges a reconfiguration every step (Ring keeps its lightpaths and pays once), one message "
           "per step (NE sends two after its first step), and counts the formula's steps, not the "
           "explicit schedule's.", drop=5),
    Column("efficiency", "effi-\nciency", _efficiency,
           "lower bound / t, with t the time above; 100% would be optimal. A * marks an infeasible schedule "
           "(feasible: no): its time assumes lightpaths the physical layer cannot carry, so that efficiency "
           "is not attainable as built."),
    Column("reconfigurations", "reconf", lambda r: str(r.reconfigurations),
           "Slots that pay the MRR reconfiguration (the first slot always does).", wide=True),
    Column("worst_ber", "worst\nBER", lambda r: "-" if r.worst_ber is None else f"{r.worst_ber:.2e}",
           "Bit-error rate of the longest lightpath ('-' when it is too small to compute).", wide=True),
)


class OpticalRingModel(KindModel):
    """Optical WDM rings (:class:`~collsim.kinds.optical_ring.system.OpticalRing`)."""

    name = "optical-ring"
    part_class = OpticalPart
    capabilities = frozenset({"trace-lightpaths", "physical-layer", "mpi"})
    route_format = RING_FORMAT

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route (shortest or given direction), colour bands of channels, lay out slots."""
        params = dict(params or {})
        if isinstance(strategy, str):
            params.setdefault("strategy", strategy)
        return realize_ring(system, logical, strategy=strategy, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Arcs, channel ranges, band overlaps and transceiver limits (:func:`verify_ring_resources`)."""
        verify_ring_resources(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """collsim's optical step model (:func:`collsim.kinds.optical_ring.cost.step_times`)."""
        return Timing(step_times(schedule).total_s, "optical-step")

    def answer_time_s(self, schedule, closed: Timing) -> float:
        """The optical step model's time: it charges every slot the bound counts."""
        return closed.time_s

    def lower_bound_s(self, system, collective) -> float:
        """Channel-capacity bound (:func:`collsim.kinds.optical_ring.bound.optical_lower_bound_s`)."""
        return optical_lower_bound_s(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` (slots) and ``reconfigurations`` of the realised schedule."""
        return {"steps": schedule.num_steps,
                "reconfigurations": int(step_times(schedule).reconfigured.sum())}

    def symmetry_group(self, system, cyclic: bool = False) -> Translations:
        """The ring's rotations: every node has the same fibers, wavelengths and transceivers."""
        return Translations((system.nodes,))

    def accepts_group(self, system, group) -> bool:
        """Rotations of the ring: all of them, ``(N,)``, or those by multiples of ``D``, ``(N/D, D)``
        with the first digit moving."""
        n = system.nodes
        return group.nodes == n and (group.radices == (n,) and group.regular
                                     or len(group.radices) == 2 and group.moving == (True, False))

    def translate_routes(self, system, group, routes, rows, elements):
        """A rotated arc keeps its direction, hop count, fiber and band."""
        return routes.take(rows)

    def check_orbit_resources(self, schedule) -> None:
        """Channels and transceivers of the rotations (:func:`verify_ring_orbit_resources`)."""
        verify_ring_orbit_resources(schedule)

    def orbit_schedule(self, schedule):
        """The representatives: a step's time is a maximum over its transfers, its reconfiguration
        a comparison of lightpath sets (a rotation-invariant set is equal iff its transfers into
        node 0 are), and the physical layer and wavelengths used read maxima and sets."""
        return schedule.reps

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> OpticalPart:
        """Paper model, physical feasibility and channel use of a verified schedule."""
        system = schedule.system
        coll = schedule.collective
        paper_steps = self.closed_form(spec)  # the paper's step count: ``(system, collective, params) -> int``
        pst = paper_steps(system, coll.type, chosen) if paper_steps is not None else None
        phys = check_schedule(schedule, system.physical_params())
        return OpticalPart(
            wavelengths=system.wavelengths, fibers=system.fibers, wavelengths_used=schedule.wavelengths_used(),
            reconfigurations=int(step_times(schedule).reconfigured.sum()), paper_steps=pst,
            paper_time_s=paper_time_s(system, coll.size_bytes, pst), feasible=phys.feasible,
            max_feasible_hops=phys.max_feasible_hops,
            worst_ber=phys.worst_ber if np.isfinite(phys.worst_ber) else None)


register_model(OpticalRing, OpticalRingModel())
