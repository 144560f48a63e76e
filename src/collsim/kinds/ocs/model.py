"""The optical circuit switch's model (``ocs``): its lower bound, its part of a result and its model.

The system, its circuits and phases are :mod:`collsim.kinds.ocs.system`.  The model verifies that every
step fits the ports (a typed ``ResourceError`` names the phase, node and count), times a schedule by
:func:`~collsim.kinds.ocs.system.ocs_time_s`, answers with the flow simulator's time plus ``r`` per
reconfiguration, and bounds it by :func:`ocs_lower_bound_s` (derived in docs/derivations/ocs-bound.md):
a schedule with ``c`` configurations pays ``(c - 1) r`` while no data moves, and its circuits over all
phases form a digraph of out-degree at most ``c p``.  With ``h`` one circuit hop's latency and ``s`` the
start-up, its time is at least ``(c - 1) r + max(s + H(c) h, s + h + V(c) / (p b))``: ``H(c) =
max(ceil(log_{p+1} N), D(N, c p))`` circuits on the longest chain (each hop at most multiplies the
holders by ``p + 1``; :func:`moore_diameter`), and ``V(c)`` the bytes the busiest node sends or receives
(for all-to-all, each block crossing at least its distance in that digraph: :func:`moore_distance_sum`).

References
----------
M. Miller, J. Širáň, "Moore graphs and beyond: A survey of the degree/diameter problem", Electronic
Journal of Combinatorics, Dynamic Survey DS14, 2013 (the Moore bound); E. Chan, M. Heimlich,
A. Purkayastha, R. van de Geijn, "Collective communication: theory, practice, and experience",
Concurrency and Computation: Practice and Experience 19(13), 2007 (bandwidth bounds); H. Ballani et al.,
"Sirius: A Flat Datacenter Network with Nanosecond Optical Switching", SIGCOMM 2020 (reconfiguration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...core.collective import Collective
from ...core.errors import ResourceError, UnsupportedError
from ...core.units import format_bandwidth, format_time
from ...cost.bounds import traffic_bound
from .system import OCS, group_phases, ocs_time_s
from ..base import Column, Timing, register_model
from ..network.model import NetworkModel, NetworkPart
from .paths import moore_diameter, moore_distance_sum, spread_rounds

__all__ = ["OCS", "OCSBound", "OCSModel", "OCSPart", "bound_terms", "moore_diameter", "moore_distance_sum",
           "ocs_bound", "ocs_lower_bound_s", "spread_rounds"]


@dataclass(frozen=True)
class OCSBound:
    """The bound's terms for one number of configurations."""

    configurations: int
    latency_s: float
    bandwidth_s: float
    reconfiguration_s: float
    hops: int

    @property
    def time_s(self) -> float:
        """``reconfiguration_s + max(latency_s, bandwidth_s)`` (they overlap; reconfiguration does not)."""
        return self.reconfiguration_s + max(self.latency_s, self.bandwidth_s)

    @property
    def certificate(self) -> str:
        """The binding term in words (docs/derivations/ocs-bound.md)."""
        c = self.configurations
        why = (f"{self.hops} circuit hops must chain, {format_time(self.latency_s)}" if self.latency_s >= self.bandwidth_s
               else f"the busiest node's bytes over its ports take {format_time(self.bandwidth_s)}")
        return f"{c} configuration{'s' if c != 1 else ''} ({format_time(self.reconfiguration_s)} reconfiguring); {why}"


def bound_terms(system, collective: Collective, configurations: int) -> OCSBound:
    """The bound's terms for schedules with exactly ``configurations`` configurations."""
    n, p, c = system.nodes, system.ports, configurations
    start, hop = system.startup_s or 0.0, system.hop_latency_s
    hops = 1 if collective.type.shifted else max(spread_rounds(n, p), moore_diameter(n, c * p))
    traffic = traffic_bound(collective)
    volume = max(traffic.recv_bytes, traffic.send_bytes)
    if collective.type.per_pair:  # all-to-all: every block crosses at least its distance in the union of the configurations
        volume = max(volume, collective.size_bytes * moore_distance_sum(n, c * p))
    bandwidth = start + hop + volume / (p * system.link_bandwidth_bytes_per_s)
    return OCSBound(c, start + hops * hop, bandwidth, (c - 1) * system.reconfiguration_s, hops)


def ocs_bound(system, collective: Collective) -> OCSBound:
    """The terms of the least bound over every number of configurations (the binding ``c``).

    ``c`` beyond ``ceil((N-1)/p)`` changes no term but the reconfiguration, so the search stops there.
    """
    last = max(1, -(-(system.nodes - 1) // system.ports)) + 1
    best = None
    for c in range(1, last + 1):
        terms = bound_terms(system, collective, c)
        if best is None or terms.time_s < best.time_s * (1 - 1e-12):
            best = terms
        if terms.reconfiguration_s >= best.time_s:  # later c only cost more
            break
    return best


def ocs_lower_bound_s(system, collective: Collective) -> float:
    """No schedule of ``collective`` on the switch ends sooner (docs/derivations/ocs-bound.md)."""
    return ocs_bound(system, collective).time_s


@dataclass(frozen=True)
class OCSPart(NetworkPart):
    """The switch's fields of a result row: the network's, plus ports, phases and reconfiguration."""

    ports: int = 1
    reconfiguration_s: float = 0.0
    phases: int = 1
    reconfigurations: int = 0
    reconfiguration_time_s: float = 0.0

    def title(self) -> str:
        """The system part of a comparison table's title: ``"1 port of 50GB/s per node, reconfiguration 10 µs"``."""
        plural = "s" if self.ports != 1 else ""
        return (f"{self.ports} port{plural} of {format_bandwidth(self.link_bandwidth_bytes_per_s)} per node, "
                f"reconfiguration {format_time(self.reconfiguration_s)}")

    @staticmethod
    def columns() -> list[Column]:
        """This kind's columns: the network's (the answer's legend says what it adds), then phases."""
        return list(_COLUMNS)


def _replace_legend(col: Column) -> Column:
    if col.key == "time_s":
        return Column("time_s", "simulated\n+ reconf", col.text,
                      "The answer (JSON time_s, also simulated_time_s): the flow simulator's contention-aware time "
                      "over the circuits plus r per reconfiguration (phases - 1); never below the lower bound.")
    if col.key == "alpha_beta_time_s":
        return Column(col.key, "closed\nform", lambda r: format_time(r.alpha_beta_time_s),
                      "The OCS closed form: per step, the slowest route's latency plus the busiest circuit's "
                      "bytes over the port bandwidth, plus r per reconfiguration (docs/systems.md, ocs).", drop=3)
    return col


_COLUMNS = tuple(_replace_legend(c) for c in NetworkPart.columns()) + (
    Column("phases", "phases", lambda r: str(r.phases),
           "Configurations the schedule uses in turn: consecutive steps share one while their circuits fit the "
           "ports (greedy maximal runs, the fewest for the steps' order).", drop=5),
    Column("reconfiguration_time_s", "reconf\ntime", lambda r: format_time(r.reconfiguration_time_s),
           "r times the reconfigurations (phases - 1), included in the answer.", drop=6),
)


class OCSModel(NetworkModel):
    """Reconfigurable optical circuit switches (:class:`OCS`)."""

    name = "ocs"
    part_class = OCSPart
    capabilities = frozenset({"flow-simulation", "mpi"})  # ranks run the data flow; circuits are not emulated

    @property
    def accepts(self) -> tuple[str, ...]:
        """``("ocs", "network")``: any point-to-point schedule runs over circuits."""
        return ("ocs", "network")

    def phases(self, schedule) -> np.ndarray:
        """The phase of every step (:func:`~collsim.kinds.ocs.system.group_phases`)."""
        routes = schedule.routes
        owner = np.repeat(routes.path_owner, np.diff(routes.route_ptr))
        return group_phases(schedule.step[owner], routes.route_links, schedule.system.nodes, schedule.system.ports)

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route as a network does (direct circuits, or the algorithm's relayed routes); refuse, as
        unsupported on this switch, an algorithm whose step needs more circuits at a node than it has ports."""
        schedule = super().realize(system, logical, strategy=strategy, algorithm=algorithm, params=params)
        try:
            self.phases(schedule)
        except ResourceError as exc:
            raise UnsupportedError(f"{algorithm} does not fit an ocs switch with {system.ports} port(s) per "
                                   f"node: {exc}") from None
        return schedule

    def symmetry_group(self, system, cyclic: bool = False):
        """None: a step's circuits must fit the ports, and grouping steps into phases of one
        configuration is not checked on orbits; every schedule is expanded."""
        return None

    def check_resources(self, schedule) -> None:
        """Routes are walks of circuits, and every step's circuits fit the ports (phase, node and count named)."""
        super().check_resources(schedule)
        self.phases(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """The algorithm's ``closed_forms["ocs"]`` if it has one, else :func:`~collsim.kinds.ocs.system.ocs_time_s`."""
        form = self.closed_form(spec)
        coll = schedule.collective
        closed = form(schedule.system, coll.type, coll.size_bytes, dict(schedule.params)) if form else None
        if closed is not None:
            return Timing(float(closed), "ocs (closed form)")
        total, _ = ocs_time_s(schedule.system, schedule.step, schedule.src, schedule.dst, schedule.size_bytes,
                              schedule.routes)
        return Timing(total, "ocs (schedule)")

    def answer_time_s(self, schedule, closed: Timing) -> float:
        """The flow simulator's time over the circuits plus ``r`` per reconfiguration (disjoint in time)."""
        reconf = int(self.phases(schedule)[-1]) if schedule.num_steps else 0
        return super().answer_time_s(schedule, closed) + reconf * schedule.system.reconfiguration_s

    def lower_bound_s(self, system, collective) -> float:
        """Bandwidth, circuit-hop latency and reconfiguration (:func:`ocs_lower_bound_s`)."""
        return ocs_lower_bound_s(system, collective)

    def bound_certificate(self, system, collective) -> OCSBound:
        """The binding number of configurations and term (:func:`ocs_bound`), not the network's cut."""
        return ocs_bound(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` and ``reconfigurations`` (phases - 1) of the realised schedule."""
        reconf = int(self.phases(schedule)[-1]) if schedule.num_steps else 0
        return {"steps": schedule.num_steps, "reconfigurations": reconf}

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> OCSPart:
        """The network's fields (closed form and answer as this kind defines them), ports and phases."""
        system = schedule.system
        net = super().row_part(schedule, spec, chosen)  # its simulated time is this kind's answer
        reconf = int(self.phases(schedule)[-1]) if schedule.num_steps else 0
        return OCSPart(**net.__dict__, ports=system.ports, reconfiguration_s=system.reconfiguration_s,
                       phases=reconf + 1, reconfigurations=reconf,
                       reconfiguration_time_s=reconf * system.reconfiguration_s)


register_model(OCS, OCSModel())
