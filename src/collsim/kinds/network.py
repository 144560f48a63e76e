"""The electrical network's model: deterministic routing, route checks, alpha-beta, cut bounds.

References
----------
R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3), 1994 (the alpha-beta model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..core.network import Network
from ..core.units import format_time
from ..cost.network import alpha_beta_time_s, network_lower_bound_s
from ..rwa.network import realize_network
from ..sim import simulate
from ..verify.resources import verify_network_resources
from .base import Timing, register_model


@dataclass(frozen=True)
class NetworkPart:
    """The network's fields of a result row.

    Parameters
    ----------
    link_bandwidth_bytes_per_s, link_latency_s : float
        The network's link parameters.
    max_link_load : int
        The most flows sharing one directed link in one step.
    simulated_time_s : float
        The flow simulator's time (bulk-synchronous steps, max-min fair sharing).
    per_node_throughput_bytes_per_s : float or None
        All-to-all only: bytes each node sends to the others per simulated second.
    time_model : str
        Which closed form ``time_s`` is.

    Examples
    --------
    >>> from collsim import build
    >>> s = build("ring", "ring", "allgather", 1024, nodes=4)
    >>> part = NetworkModel().row_part(s, None, {})
    >>> part.max_link_load, part.time_model, part.title()
    (1, 'alpha-beta (schedule)', '12.5 GB/s links, 1 µs latency')
    """

    link_bandwidth_bytes_per_s: float
    link_latency_s: float
    max_link_load: int
    simulated_time_s: float
    per_node_throughput_bytes_per_s: float | None
    time_model: str

    def title(self) -> str:
        """The system part of a comparison table's title."""
        return f"{self.link_bandwidth_bytes_per_s / 1e9:g} GB/s links, {format_time(self.link_latency_s)} latency"

    def cells(self, row) -> list[tuple[str, str]]:
        """``(column, text)`` of this kind's columns in a comparison table, after ``block steps``."""
        return [("max hops", str(row.max_hops)), ("max link load", str(self.max_link_load)),
                ("α–β time", format_time(row.time_s)), ("simulated", format_time(self.simulated_time_s))]


class NetworkModel:
    """Electrical networks (:class:`~collsim.core.network.Network` and every topology).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds import model_for
    >>> s = collsim.build("ring", "ring", "allgather", 1000, nodes=4)
    >>> model_for(s.system).time(s).time_s > 0
    True
    """

    name = "network"

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route every transfer with the network's rule (route hints honoured); strategy unused.

        Parameters
        ----------
        system : Network
            The network.
        logical : LogicalSchedule
            The algorithm's rounds.
        strategy : str or callable, optional
            Ignored (networks have no channels to assign).
        algorithm : str, optional
            Name recorded in the schedule.
        params : Mapping, optional
            Parameters recorded.

        Returns
        -------
        Schedule
            With :class:`~collsim.core.routes.LinkRoutes`.
        """
        return realize_network(system, logical, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Routes are walks of existing links (:func:`verify_network_resources`)."""
        verify_network_resources(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """The algorithm's own alpha-beta closed form if it has one, else alpha-beta over the schedule."""
        coll = schedule.collective
        closed = spec.alpha_beta(schedule.system, coll.kind, coll.size_bytes, dict(schedule.params)) \
            if spec is not None and spec.alpha_beta else None
        if closed is not None:
            return Timing(float(closed), "alpha-beta (closed form)")
        return Timing(alpha_beta_time_s(schedule), "alpha-beta (schedule)")

    def lower_bound_s(self, system, collective) -> float:
        """Node-capacity and total-link bound (:func:`collsim.cost.network.network_lower_bound_s`)."""
        return network_lower_bound_s(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` of the realised schedule (networks never reconfigure)."""
        return {"steps": schedule.num_steps, "reconfigurations": 0}

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> NetworkPart:
        """Link parameters, link load and the flow-simulated time of a verified schedule."""
        system = schedule.system
        coll = schedule.collective
        sim_s = float(simulate(schedule).total_time_s)
        throughput = ((system.nodes - 1) * coll.size_bytes / sim_s
                      if coll.kind == "alltoall" and sim_s else None)  # seed 001 §3
        return NetworkPart(
            link_bandwidth_bytes_per_s=system.link_bandwidth_bytes_per_s, link_latency_s=system.link_latency_s,
            max_link_load=schedule.max_link_load(), simulated_time_s=sim_s,
            per_node_throughput_bytes_per_s=throughput, time_model=self.time(schedule, spec).model)


register_model(Network, NetworkModel())
