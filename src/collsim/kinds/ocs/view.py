"""How optical circuit switches present their results: reconfiguration counts and, per size, the
fastest algorithm as the reconfiguration delay grows (:mod:`.crossovers`)."""

from __future__ import annotations

from typing import Any

from ...core.wording import counted
from ..network.view import NetworkView
from ..view import register_view
from .model import OCSModel, OCSPart
from .notes import crossover_notes, crossovers_by_size, trial_entries


class OCSView(NetworkView):
    """The circuit switch's words (:class:`~collsim.kinds.view.KindView`)."""

    legend_title = "compare on optical circuit switches"
    instance_keys = (*NetworkView.instance_keys, "ports", "reconfiguration_s")

    def report_facts(self, schedule, report) -> list[str]:
        """The switch's reconfigurations (phases - 1)."""
        return [counted(OCSModel().realised_facts(schedule)["reconfigurations"], "reconfiguration")]

    def captions(self, rows, keys) -> list[str]:
        """Under a table: per size, the fastest row as r grows from 4 ns to 10 ms (exact; ocs-auto left out)."""
        return crossover_notes(crossovers_by_size((r.size_bytes, r.algorithm, r.time_s, r.part.reconfigurations,
                                                   r.part.reconfiguration_time_s) for r in rows if r.time_s is not None
                                                  and isinstance(r.part, OCSPart) and r.algorithm != "ocs-auto"))

    def tune_fields(self, system, trials) -> dict[int, dict[str, Any]]:
        """Per size, ``crossovers``: ``[from_s, to_s, choice]`` as :meth:`captions` finds them among eligible trials."""
        spans = crossovers_by_size(trial_entries(trials))
        return {size: {"crossovers": [list(s) for s in runs]} for size, runs in spans.items()}

    def tune_notes(self, system, trials) -> list[str]:
        """:meth:`tune_fields` as :meth:`captions` words them, a line for every size (one winner: "throughout")."""
        return crossover_notes({s: f["crossovers"] for s, f in self.tune_fields(system, trials).items()}, every=True)


register_view(OCSModel, OCSView())
