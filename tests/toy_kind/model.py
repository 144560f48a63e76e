"""The toy kind's model and view: the network's, with one more result field, registered with its system."""

from __future__ import annotations

from dataclasses import dataclass

from collsim.core.plugins import _MODELS, _ROUTE_FORMATS
from collsim.core.system import SYSTEM_KINDS, register_system_kind
from collsim.kinds.base import Column, register_model
from collsim.kinds.network.model import NetworkModel, NetworkPart
from collsim.kinds.network.view import NetworkView
from collsim.kinds.view import _VIEWS, register_view

from .system import ToyRing


@dataclass(frozen=True)
class ToyPart(NetworkPart):
    """A network row plus the number of links of the toy ring."""

    toy_links: int = 0

    @staticmethod
    def columns() -> list[Column]:
        return NetworkPart.columns() + [Column("toy_links", "toy", lambda r: str(r.toy_links), "Toy links.")]


class ToyModel(NetworkModel):
    """Times like a network; reports ``toy_links``."""

    name = "toy"
    part_class = ToyPart
    capabilities = frozenset({"flow-simulation"})
    accepts = ("network",)       # every point-to-point algorithm runs on it

    def row_part(self, schedule, spec, chosen):
        base = super().row_part(schedule, spec, chosen)
        return ToyPart(**{**base.__dict__, "toy_links": len(schedule.system.links)})


class ToyView(NetworkView):
    """How toy rows are worded: the network's words under their own legend title."""

    legend_title = "compare on toy rings"


def register() -> None:
    """Register the toy system kind and its model (what a kind's package does on import)."""
    register_system_kind(ToyRing)
    register_model(ToyRing, ToyModel())
    register_view(ToyModel, ToyView())


def unregister() -> None:
    """Remove the toy kind from collsim's registries."""
    _MODELS.pop(ToyRing, None)
    _ROUTE_FORMATS.pop(ToyRing, None)
    SYSTEM_KINDS.pop("toy-ring", None)
    _VIEWS.pop(ToyModel, None)
