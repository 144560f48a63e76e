"""How hierarchical systems present their results: as networks, with the hierarchy among the keys
that describe the system."""

from __future__ import annotations

from ..network.view import NetworkView
from ..view import register_view
from .model import HierarchicalModel


class HierarchicalView(NetworkView):
    """The hierarchical kind's words (:class:`~collsim.kinds.view.KindView`)."""

    legend_title = "compare on hierarchical systems"
    instance_keys = (*NetworkView.instance_keys, "hierarchy")


register_view(HierarchicalModel, HierarchicalView())
