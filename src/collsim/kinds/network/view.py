"""How electrical networks present their results: the legend, the dagger on α–β times below the
bound, the idle-link warning and the keys that describe a network."""

from __future__ import annotations

from ..view import KindView, register_view
from .model import NetworkModel, below_bound, idle_note


class NetworkView(KindView):
    """The network kind's words (:class:`~collsim.kinds.view.KindView`)."""

    legend_title = "compare on electrical networks"
    instance_keys = ("link_bandwidth_bytes_per_s", "link_latency_s", "min_link_bandwidth_bytes_per_s",
                     "max_link_bandwidth_bytes_per_s", "min_link_latency_s", "max_link_latency_s")

    def system_notes(self, system, collective=None) -> list[str]:
        """The switches or links the routing leaves idle (:func:`~collsim.kinds.network.model.idle_note`), if any."""
        note = idle_note(system, collective)
        return [note] if note else []

    def captions(self, rows, keys) -> list[str]:
        """What the alpha-beta time's dagger means, when a shown one has it."""
        if "alpha_beta_time_s" in keys and any(below_bound(r) for r in rows):
            return ["\u2020 below the lower bound: the alpha-beta estimate ignores that flows share links, "
                    "so no schedule reaches it; the answer (time_s) is the simulated time"]
        return []


register_view(NetworkModel, NetworkView())
