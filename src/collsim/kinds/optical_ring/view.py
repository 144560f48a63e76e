"""How optical rings present their results: wavelengths used and reconfigurations, the mark on
efficiencies the physical layer does not allow, and the keys that describe a ring."""

from __future__ import annotations

from ...core.wording import counted
from ..base import model_for
from ..view import KindView, register_view
from .model import OpticalRingModel


class OpticalRingView(KindView):
    """The optical ring's words (:class:`~collsim.kinds.view.KindView`); the optical torus uses them too."""

    legend_title = "compare on optical rings"
    instance_keys = ("wavelengths", "fibers")

    def report_facts(self, schedule, report) -> list[str]:
        """The wavelengths the schedule uses, and its reconfigurations if any."""
        reconf = model_for(schedule.system).realised_facts(schedule)["reconfigurations"]
        used = counted(report.wavelengths_used, "wavelength")
        return [used, counted(reconf, "reconfiguration")] if reconf else [used]

    def captions(self, rows, keys) -> list[str]:
        """What the efficiency's * means, when a shown efficiency has one."""
        if "efficiency" in keys and any(r.feasible is False for r in rows):
            return ["* infeasible (feasible: no): lightpaths beyond the physical layer's reach, so this "
                    "efficiency is not attainable as built"]
        return []


register_view(OpticalRingModel, OpticalRingView())
