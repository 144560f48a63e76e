"""The electrical network's model: deterministic routing, route checks, alpha-beta, cut bounds.

References
----------
R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3), 1994 (the alpha-beta model).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ...core.collectives import TYPES
from .format import LINK_FORMAT
from . import symmetry
from ...core.symmetry import moved_routes, quotient_routes
from .network import Network
from ...core.units import format_bandwidth, format_time
from ...cost.loggp import loggp_time_s, system_model
from ...cost.network import alpha_beta_time_s
from .bound import bound_certificate, network_lower_bound_s
from .routing import realize_network
from ...sim import simulate
from ...verify.resources import verify_network_resources
from ...core.wording import format_number
from ..base import Column, KindModel, Timing, register_model

_ANSWERS_S: dict[int, float] = {}  # id(schedule) -> its simulated time, while the schedule lives
_TIMES: dict[tuple[int, str | None], Timing] = {}
"""Closed-form timings by (schedule id, algorithm): dropped when the schedule is (weakref.finalize)."""


@dataclass(frozen=True)
class NetworkPart:
    """The network's fields of a result row."""

    link_bandwidth_bytes_per_s: float
    link_latency_s: float
    max_link_load: int
    alpha_beta_time_s: float
    simulated_time_s: float
    per_node_throughput_bytes_per_s: float | None
    time_model: str
    min_link_bandwidth_bytes_per_s: float | None
    max_link_bandwidth_bytes_per_s: float | None
    min_link_latency_s: float | None
    max_link_latency_s: float | None

    def title(self) -> str:
        """The system part of a comparison table's title: what the links have, a range where they differ."""
        def span(lo: float | None, hi: float | None, default: float, fmt) -> str:
            lo, hi = (default, default) if lo is None or hi is None else (lo, hi)
            return fmt(lo) if lo == hi else f"{fmt(lo)}\u2013{fmt(hi)}"
        rate = span(self.min_link_bandwidth_bytes_per_s, self.max_link_bandwidth_bytes_per_s,
                    self.link_bandwidth_bytes_per_s, format_bandwidth)
        delay = span(self.min_link_latency_s, self.max_link_latency_s, self.link_latency_s, format_time)
        return f"{rate} links, {delay} latency"

    @staticmethod
    def columns() -> list[Column]:
        """This kind's columns of a comparison table, in order (after ``block times``)."""
        return list(_COLUMNS)



def _throughput(row) -> str:
    value = row.per_node_throughput_bytes_per_s
    return "-" if value is None else format_number(value / 1e9, 3)


def _alpha_beta(row) -> str:
    """The alpha-beta time, with a dagger where it is below the lower bound (contention ignored)."""
    text = format_time(row.alpha_beta_time_s)
    return text + "\u2020" if below_bound(row) else text


def below_bound(row) -> bool:
    """Whether a network row's alpha-beta time is below the lower bound (an algorithm's formula can be)."""
    lb = getattr(row, "lower_bound_s", None)
    estimate = getattr(row, "alpha_beta_time_s", None)
    return lb is not None and estimate is not None and estimate < lb * (1 - 1e-9)


def link_ranges(system) -> dict[str, float]:
    """The least and the most bandwidth and latency of the network's links (vectorised over its link table)."""
    lt = system.links
    bw, lat = lt.bandwidth_bytes_per_s, lt.latency_s
    if not len(bw):
        bw, lat = [system.link_bandwidth_bytes_per_s], [system.link_latency_s]
    return {"min_link_bandwidth_bytes_per_s": float(min(bw)), "max_link_bandwidth_bytes_per_s": float(max(bw)),
            "min_link_latency_s": float(min(lat)), "max_link_latency_s": float(max(lat))}


_COLUMNS = (  # block_steps replaces the common column of that key: on a network it goes first when narrow
    Column("block_steps", "block\ntimes", lambda r: format_number(r.block_steps, 6),
           "A duration, not a count: the schedule's length in block times (one block, the message size, over "
           "one link): per slot the largest transfer's bytes, summed over slots and divided by the message "
           "size; the bandwidth term of alpha-beta in units of m/B, without start-up or latency. JSON "
           "block_steps (the key keeps its first name).", drop=1),
    Column("max_hops", "max\nhops", lambda r: str(r.max_hops), "The longest route, in links.",
           drop=2),
    Column("max_link_load", "link\nload", lambda r: str(r.max_link_load),
           "The most flows sharing one directed link in one slot; 1 means no link is ever shared. A transfer "
           "split over equal-cost paths (ECMP) counts its share of the bytes on each path, and the sum is "
           "rounded up.", drop=4),
    Column("alpha_beta_time_s", "\u03b1\u2013\u03b2\ntime", _alpha_beta,
           "An estimate, not the answer: the alpha-beta (Hockney) closed form, the algorithm's own formula "
           "where it registers one, else the schedule's (per slot, the slowest transfer's start-up and route "
           "latency plus the time its busiest link needs for every byte crossing it in that slot; never below "
           "the lower bound, docs/cost-models.md). An algorithm's formula ignores links that its messages "
           "share, so it can be below simulated and even below the lower bound, which counts every link and "
           "cut: such a time is marked \u2020 and is not attainable.", drop=3),
    Column("time_s", "simulated", lambda r: format_time(r.time_s),
           "The answer (JSON time_s, also simulated_time_s): the flow simulator's contention-aware time, "
           "bulk-synchronous slots with max-min fair sharing of links (docs/flow-simulator.md); never below "
           "the lower bound. Efficiency and bandwidths use this time."),
    Column("time_model", "\u03b1\u2013\u03b2\nmodel",
           lambda r: (r.time_model[len("alpha-beta ("):-1] if r.time_model.startswith("alpha-beta (")
                      else r.time_model),
           "Which alpha-beta formula the alpha-beta time is: 'closed form' (the algorithm's registered "
           "formula), 'schedule' (computed over the schedule's slots), or 'loggp-piecewise (closed form)' on a "
           "system with a calibrated model (docs/calibration.md).", wide=True),
    Column("per_node_throughput_bytes_per_s", "GB/s per\nnode", _throughput,
           "All-to-all only: the bytes each node sends to the others per simulated second, in GB/s "
           "(10^9 bytes/s); '-' for other collectives.", wide=True),
)


_SHOWN = 6


def _listed(names: list[str]) -> str:
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f", ... ({more} more)" if more > 0 else "")


def idle_note(system, collective: str | None = None) -> str | None:
    """The warning about switches or links on minimum-hop paths that no route crosses, or None.

    A bound counts every link, so a network whose routing never uses some of them (single-path
    routing over two spines, D-mod-k on a partly filled fat tree) reads as inefficient when it is
    the routing, not the schedule, that wastes them (:meth:`Network.idle_resources`; networks
    with switches, and custom ones, up to 1024 end nodes).
    """
    if not (system.switches or system.topology == "custom"):  # switchless grids: nothing to warn
        return None
    info = system.idle_resources()
    if not info or not (info["switches"] or info["links"]):
        return None
    where = f"in this {TYPES[collective].title if collective in TYPES else collective}" if collective else "under its routing"
    idle = info["switches"] or info["links"]
    what = "switches" if info["switches"] else "links on shortest paths"
    total = info["switches_on_paths"] if info["switches"] else info["links_on_paths"]
    routing = getattr(system, "routing", None)  # topologies with a choice of routing
    why = f"no route crosses {'it' if len(idle) == 1 else 'them'}"
    if routing:
        why += f' under routing = "{routing}"'
    if "ecmp" in getattr(system, "ROUTINGS", ()) and routing != "ecmp":
        why += "; -S routing=ecmp splits traffic over the equal-cost paths"
    return (f"warning: {len(idle)} of {total} {what} {'carries' if len(idle) == 1 else 'carry'} no traffic "
            f"{where}: {_listed(idle)} ({why})")


class NetworkModel(KindModel):
    """Electrical networks (:class:`~collsim.kinds.network.network.Network` and every topology)."""

    name = "network"
    part_class = NetworkPart
    capabilities = frozenset({"flow-simulation", "msccl", "simgrid", "smpi-replay", "trace-network", "mpi"})
    route_format = LINK_FORMAT

    def realize(self, system, logical, *, strategy="first-fit", algorithm="custom", params=None):
        """Route every transfer with the network's rule (route hints honoured); strategy unused."""
        return realize_network(system, logical, algorithm=algorithm, params=params)

    def check_resources(self, schedule) -> None:
        """Routes are walks of existing links (:func:`verify_network_resources`)."""
        verify_network_resources(schedule)

    def time(self, schedule, spec=None) -> Timing:
        """The algorithm's own alpha-beta closed form if it has one, else alpha-beta over the schedule;
        on a system with a calibrated ``loggp-piecewise`` model, that model's closed form
        (:func:`collsim.cost.loggp.loggp_time_s`)."""
        if system_model(schedule.system) is not None:
            return Timing(loggp_time_s(schedule), "loggp-piecewise (closed form)")
        key = (id(schedule), None if spec is None else spec.name)
        if key not in _TIMES:  # once per schedule object: verify and evaluate (twice) all ask
            _TIMES[key] = self._time(schedule, spec)
            weakref.finalize(schedule, _TIMES.pop, key, None)
        return _TIMES[key]

    def _time(self, schedule, spec) -> Timing:
        coll = schedule.collective
        alpha_beta = self.closed_form(spec)  # ``(system, collective, size_bytes, params) -> seconds``
        closed = alpha_beta(schedule.system, coll.type, coll.size_bytes, dict(schedule.params)) \
            if alpha_beta is not None else None
        if closed is not None:
            return Timing(float(closed), "alpha-beta (closed form)")
        return Timing(alpha_beta_time_s(schedule), "alpha-beta (schedule)")

    def answer_time_s(self, schedule, closed: Timing) -> float:
        """The flow simulator's time (bulk mode): the alpha-beta estimate ``closed`` can be below the bound.

        Simulated once per schedule object (schedules are never mutated): :func:`collsim.verify`
        and then :func:`collsim.evaluate` of the same schedule share it.
        """
        key = id(schedule)
        if key not in _ANSWERS_S:
            _ANSWERS_S[key] = float(simulate(schedule, check=False).total_time_s)
            weakref.finalize(schedule, _ANSWERS_S.pop, key, None)  # before the id can name another schedule
        return _ANSWERS_S[key]

    def lower_bound_s(self, system, collective) -> float:
        """Every bound collsim knows on a network (:func:`collsim.kinds.network.bound.network_bound`): node,
        total-link, cut, hop-chain and, for all-to-all, max-concurrent-flow terms."""
        return network_lower_bound_s(system, collective)

    def bound_certificate(self, system, collective) -> Any:
        """The certificate of the term that binds :meth:`lower_bound_s`
        (:func:`collsim.kinds.network.bound.bound_certificate`)."""
        return bound_certificate(system, collective)

    def realised_facts(self, schedule) -> dict[str, Any]:
        """``steps`` of the realised schedule (networks never reconfigure)."""
        return {"steps": schedule.num_steps, "reconfigurations": 0}

    # -- symmetric schedules: the kind's translations (``symmetry``: a module of this subpackage's
    # shape, collsim.kinds.network.symmetry here, collsim.kinds.hierarchical.symmetry there) --
    symmetry = symmetry

    def symmetry_group(self, system, cyclic: bool = False):
        """The network's translation group (a torus's shifts, boxes on rails moved box by box and GPU
        by GPU), or None; ``cyclic``: its whole coordinates' translations alone (a hierarchical
        system's fat-tree dimension fixed)."""
        return self.symmetry.translation_group(system, cyclic=cyclic)

    def binary_group(self, system):
        """The XORs of the node ids' bits where the kind's symmetry module declares them (its
        ``binary_group``; a hierarchical system of switches, full meshes and full fat trees of powers
        of two), else None."""
        find = getattr(self.symmetry, "binary_group", None)
        return None if find is None else find(system)

    def accepts_group(self, system, group) -> bool:
        """That group alone, mapping every link onto a link alike."""
        return self.symmetry.accepts(system, group)

    def translate_routes(self, system, group, routes, rows, elements):
        """Every link of a representative's route moved by its element."""
        return moved_routes(routes, rows, elements, lambda e, links: self.symmetry.link_images(system, group, e, links))

    def times_steps_alone(self, system) -> bool:
        """Yes without a calibrated model: routes follow a transfer's ends (and hint), link checks
        are per route, and the bulk-synchronous flow simulation starts a step when the last ends.
        A calibrated ``loggp-piecewise`` model's closed form is not split by steps."""
        return system_model(system) is None

    def check_orbit_resources(self, schedule) -> None:
        """The representatives' routes are walks of existing links; their images are too."""
        verify_network_resources(schedule.reps)

    def orbit_schedule(self, schedule):
        """The representatives on the quotient network: every link of their routes replaced by its
        orbit's representative, so that the flow simulator's rates, times and link loads are the
        expansion's (:func:`~collsim.core.symmetry.quotient_routes`).  One object per symmetric schedule, so that its
        simulation is shared by verify and evaluate."""
        out = _QUOTIENTS.get(schedule)
        if out is None:
            reps = schedule.reps
            out = reps.replace(routes=quotient_routes(
                reps.routes, lambda links: self.symmetry.orbit_representatives(reps.system, schedule.group, links),
                len(reps.system.links.src)))
            _QUOTIENTS[schedule] = out
        return out

    def simulate_compact(self, schedule, *, verified: bool):
        """The flow simulation (bulk mode) of a symmetric schedule or one whose steps repeat, as the
        whole schedule's: what ``evaluate`` times, with its step times and link statistics expanded.

        A symmetric schedule's stand-in (:meth:`orbit_schedule`) keeps the schedule's steps, and its
        representative links carry exactly the bytes and busy time of every link of their orbits
        (max-min fair rates are the group's, docs/model.md, "One flow per orbit"); a schedule whose
        steps repeat is simulated one whole step of each class, each weighted by its class's steps
        (:func:`collsim.sim.simulate` on :class:`~collsim.core.repeated.WeightedSteps`), and every
        step takes its class's time.

        Parameters
        ----------
        schedule : SymmetricSchedule or RepeatedSteps
            What :func:`collsim.pipeline.build_compact` returns, verified or not.
        verified : bool
            Whether the verifier passed it (the caller ran it).

        Returns
        -------
        SimResult
            ``form`` ``"symmetric"`` or ``"repeated"``; ``transfers`` the whole schedule's.

        References
        ----------
        D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall, 1992, ch. 6 (max-min
        fair rates, unique, so kept by any symmetry of the flows).

        Examples
        --------
        >>> import collsim
        >>> from collsim.pipeline import build_symmetric
        >>> sym = build_symmetric("ring", "ring", "allgather", "1MiB", nodes=8)
        >>> r = NetworkModel().simulate_compact(sym, verified=True)
        >>> r.form, r.transfers, len(r.step_time_s), r.total_time_s == collsim.simulate(sym.expand()).total_time_s
        ('symmetric', 56, 7, True)
        """
        from dataclasses import replace

        from ...core.repeated import RepeatedSteps
        if isinstance(schedule, RepeatedSteps):
            res = simulate(schedule.steps, check=False)
            cls = np.asarray(schedule.step_class, np.int64)
            steps = np.where(cls >= 0, res.step_time_s[np.maximum(cls, 0)], 0.0)
            return replace(res, step_time_s=steps, verified=verified, form="repeated", transfers=schedule.transfers)
        stand_in = self.orbit_schedule(schedule)
        res = simulate(stand_in, check=False)
        links = np.arange(len(schedule.system.links.src), dtype=np.int64)
        rep = np.asarray(self.symmetry.orbit_representatives(schedule.system, schedule.group, links), np.int64)
        steps = np.zeros(schedule.num_steps)
        steps[:len(res.step_time_s)] = res.step_time_s
        return replace(res, step_time_s=steps, link_bytes=res.link_bytes[rep], link_busy_s=res.link_busy_s[rep],
                       verified=verified, form="symmetric", transfers=schedule.transfers)

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> NetworkPart:
        """Link parameters, link load, the alpha-beta estimate and the flow-simulated time (the row's answer)."""
        system = schedule.system
        coll = schedule.collective
        timing = self.time(schedule, spec)
        sim_s = self.answer_time_s(schedule, timing)  # evaluate() records the verification
        throughput = ((system.nodes - 1) * coll.size_bytes / sim_s
                      if coll.type.per_pair and sim_s else None)  # all-to-all: seed 001 §3
        return NetworkPart(
            link_bandwidth_bytes_per_s=system.link_bandwidth_bytes_per_s, link_latency_s=system.link_latency_s,
            max_link_load=schedule.max_link_load(), alpha_beta_time_s=timing.time_s, simulated_time_s=sim_s,
            per_node_throughput_bytes_per_s=throughput, time_model=timing.model, **link_ranges(system))


_QUOTIENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


register_model(Network, NetworkModel())
