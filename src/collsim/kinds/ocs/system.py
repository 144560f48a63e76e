"""The reconfigurable optical circuit switch (``ocs``): the system, its circuits and its phases.

N nodes, each with ``p`` optical ports into a circuit switch.  A *configuration* is a set of circuits
in which every node uses at most ``p`` outgoing and ``p`` incoming ones; changing it takes the
reconfiguration delay ``r`` (nanoseconds for Sirius-class switches, milliseconds for MEMS ones).
:class:`OCS` is a :class:`~collsim.kinds.network.network.Network` whose links are every possible circuit (the
complete digraph, each at the port bandwidth), so routing, the flow simulator and the verifier's walks
apply unchanged; what the kind adds is the *phase*: consecutive steps share one configuration while
their circuits fit the ports (:func:`group_phases`), and :func:`ocs_time_s` is the kind's closed form.
A transfer crosses its direct circuit, or circuits relayed through other nodes' electronics (explicit
routes), each circuit hop costing ``link_latency_s + relay_latency_s``.  The kind's model is
:class:`collsim.kinds.ocs.model.OCSModel`.

References
----------
H. Ballani et al., "Sirius: A Flat Datacenter Network with Nanosecond Optical Switching", SIGCOMM 2020;
N. P. Jouppi et al., "TPU v4: An Optically Reconfigurable Supercomputer for Machine Learning with
Hardware Support for Embeddings", ISCA 2023 (MEMS OCS); W. M. Mellette et al., "Expanding across time to
deliver bandwidth efficiency and low latency", NSDI 2020 (relaying over circuits).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError, ResourceError, UnsupportedError
from ..network.network import LinkTable, Network
from ...core.system import register_system_kind
from ...core.validate import is_integer, physical
from .configurations import circuit_configurations, circuit_ids


def group_phases(step: np.ndarray, links: np.ndarray, nodes: int, ports: int) -> np.ndarray:
    """The phase of every step: greedy maximal runs of steps whose circuits fit in ``ports`` per node.

    A run of consecutive steps can share one configuration iff the union of their circuits gives
    no node more than ``ports`` outgoing or incoming circuits; starting a new phase only when the
    next step does not fit gives the fewest phases for the steps' order (an exchange argument:
    any partition's k-th phase ends no later than the greedy one's).
    """
    step = np.asarray(step, dtype=np.int64)
    links = np.asarray(links, dtype=np.int64)
    steps = int(step.max()) + 1 if len(step) else 0
    phase = np.zeros(steps, np.int64)
    if not steps:
        return phase
    order = np.argsort(step, kind="stable")
    bounds = np.searchsorted(step[order], np.arange(steps + 1))
    present = np.zeros(nodes * (nodes - 1), bool)
    out_deg = np.zeros(nodes, np.int64)
    in_deg = np.zeros(nodes, np.int64)
    held: list[np.ndarray] = []
    current = 0
    for s in range(steps):
        mine = np.unique(links[order[bounds[s]:bounds[s + 1]]])
        new = mine[~present[mine]]
        if new.size:
            src, dst = np.divmod(new, nodes - 1)
            dst = dst + (dst >= src)
            o = out_deg + np.bincount(src, minlength=nodes)
            i = in_deg + np.bincount(dst, minlength=nodes)
            if o.max() > ports or i.max() > ports:  # does not fit: a new configuration
                for h in held:
                    present[h] = False
                held, current = [], current + (s > 0)
                src, dst = np.divmod(mine, nodes - 1)
                dst = dst + (dst >= src)
                o, i = np.bincount(src, minlength=nodes), np.bincount(dst, minlength=nodes)
                if o.max() > ports or i.max() > ports:
                    way, deg = ("outgoing", o) if o.max() > ports else ("incoming", i)
                    node = int(np.argmax(deg))
                    raise ResourceError(f"ocs phase {current} (step {s}): node {node} uses {int(deg[node])} "
                                        f"{way} circuits, more than its {ports} port(s)")
                new = mine
            present[new] = True
            held.append(new)
            out_deg, in_deg = o, i
        phase[s] = current
    return phase


def circuit_uses(system, n_transfers: int, routes, src, dst) -> tuple[np.ndarray, ...]:
    """Per path: its transfer, circuit count and share of the bytes; then the circuit of each use.

    Explicit routes (relaying; several weighted paths per transfer allowed), else one direct circuit
    per transfer.
    """
    if routes is None:
        ones = np.ones(n_transfers, np.int64)
        return np.arange(n_transfers), ones, ones.astype(float), circuit_ids(src, dst, system.nodes)
    return (np.asarray(routes.path_owner, np.int64), np.diff(routes.route_ptr), routes.weights,
            np.asarray(routes.route_links, np.int64))


def ocs_time_s(system, step, src, dst, size_bytes, routes=None) -> tuple[float, int]:
    """The OCS closed form: per step, slowest route latency + busiest circuit's bytes / port bandwidth."""
    step = np.asarray(step, np.int64)
    if not len(step):
        return 0.0, 0
    owner, hops, weight, links = circuit_uses(system, len(step), routes, src, dst)
    use_step = step[np.repeat(owner, hops)]
    phase = group_phases(use_step, links, system.nodes, system.ports)
    steps = len(phase)
    fixed = np.zeros(steps)
    np.maximum.at(fixed, step[owner], (system.startup_s or 0.0) + hops * system.hop_latency_s)
    circuits = system.nodes * (system.nodes - 1)
    uniq, inv = np.unique(use_step * circuits + links, return_inverse=True)
    load = np.bincount(inv, weights=np.repeat(np.asarray(size_bytes, float)[owner] * weight, hops))
    busiest = np.zeros(steps)
    np.maximum.at(busiest, uniq // circuits, load)
    reconfigurations = int(phase[-1])
    total = float((fixed + busiest / system.link_bandwidth_bytes_per_s).sum())
    return total + reconfigurations * system.reconfiguration_s, reconfigurations



@register_system_kind
@dataclass(frozen=True)
class OCS(Network):
    """A reconfigurable optical circuit switch joining N nodes with ``p`` ports each.

    Parameters
    ----------
    nodes, name, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    link_bandwidth_bytes_per_s : float
        Rate of one port, so of one circuit (50e9 bytes/s = 400 Gb/s by default); the options
        accept it as ``port_bandwidth_bytes_per_s`` too.
    link_latency_s : float
        Propagation and switch latency of one circuit (500 ns by default).
    ports : int
        Optical ports per node, ``p`` (1 by default): circuits per node each way in one configuration.
    reconfiguration_s : float
        Time to change the configuration, ``r`` (10 µs by default; 4 ns to 10 ms are realistic).
    relay_latency_s : float
        Electronic (O/E/O) delay at the node a circuit ends in (100 ns by default): a route relayed
        through ``k`` nodes pays ``k`` of them more than the direct circuit.

    Examples
    --------
    >>> sw = OCS(nodes=4, ports=2)
    >>> len(sw.links), sw.hop_latency_s, sw.port_bandwidth_bytes_per_s
    (12, 6e-07, 50000000000.0)
    >>> ptr, links = sw.route(np.array([0, 3]), np.array([3, 1]))
    >>> ptr.tolist(), links.tolist()
    ([0, 1, 2], [2, 10])
    """

    topology: ClassVar[str] = "ocs"
    link_bandwidth_bytes_per_s: float = 50e9
    link_latency_s: float = 500e-9
    ports: int = 1
    reconfiguration_s: float = 10e-6
    relay_latency_s: float = 100e-9

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_integer(self.ports) or not 1 <= int(self.ports) <= self.nodes - 1:
            raise InputError(f"ocs: ports must be an integer from 1 to nodes - 1 = {self.nodes - 1}, "
                             f"got {self.ports!r}")
        object.__setattr__(self, "ports", int(self.ports))
        for name in ("reconfiguration_s", "relay_latency_s"):
            object.__setattr__(self, name, physical(name, getattr(self, name)))

    @classmethod
    def from_options(cls, nodes: int | None = None, port_bandwidth_bytes_per_s: float | None = None, **opts: Any):
        """Build for the CLI and TOML files: ``port_bandwidth_bytes_per_s`` names the circuit rate.

        Parameters
        ----------
        nodes : int, optional
            N (default 16).
        port_bandwidth_bytes_per_s : float, optional
            Rate of one port: ``link_bandwidth_bytes_per_s`` by its OCS name.
        **opts
            Other fields.

        Returns
        -------
        OCS
            The switch.

        Raises
        ------
        InputError
            Both rate names given, with different values.

        Examples
        --------
        >>> OCS.from_options(nodes=8, port_bandwidth_bytes_per_s=25e9).link_bandwidth_bytes_per_s
        25000000000.0
        """
        if port_bandwidth_bytes_per_s is not None:
            physical("port_bandwidth_bytes_per_s", port_bandwidth_bytes_per_s, rate=True)   # named as given
            other = opts.setdefault("link_bandwidth_bytes_per_s", port_bandwidth_bytes_per_s)
            if other != port_bandwidth_bytes_per_s:
                raise InputError("ocs: give port_bandwidth_bytes_per_s or link_bandwidth_bytes_per_s, not both")
        return cls(nodes=16 if nodes is None else nodes, **opts)

    @property
    def port_bandwidth_bytes_per_s(self) -> float:
        """Rate of one port (one circuit): ``link_bandwidth_bytes_per_s``."""
        return self.link_bandwidth_bytes_per_s

    @property
    def hop_latency_s(self) -> float:
        """Latency of one circuit hop: ``link_latency_s + relay_latency_s``."""
        return self.link_latency_s + self.relay_latency_s

    @property
    def alpha_s(self) -> float:
        """The α–β model's t_s: ``startup_s`` if set, else one circuit hop's latency."""
        return self.hop_latency_s if self.startup_s is None else self.startup_s

    def link_count(self) -> int:
        """``N (N - 1)``: every possible circuit."""
        return self.nodes * (self.nodes - 1)

    def edges(self):
        """Every circuit ``u -> v``, ``u != v``, in :func:`circuit_ids` order."""
        n = self.nodes
        u = np.repeat(np.arange(n), n - 1)
        v = np.tile(np.arange(n - 1), n)
        return u, v + (v >= u)

    @cached_property
    def links(self) -> LinkTable:
        """The circuits, each at the port bandwidth with one hop's latency (circuit plus electronics)."""
        base = super().links
        return LinkTable(base.src, base.dst, base.bandwidth_bytes_per_s, np.full(len(base), self.hop_latency_s),
                         base.vertices)

    def configurations(self):
        """Candidate configurations (:func:`~collsim.kinds.ocs.configurations.circuit_configurations`),
        or None when ``p = N - 1``: then every circuit fits at once."""
        if self.ports >= self.nodes - 1:
            return None
        return circuit_configurations(self.nodes, self.ports)

    def translations(self) -> np.ndarray:
        """Rotations ``u -> u + g`` (mod N): they keep every circulant configuration.

        Examples
        --------
        >>> OCS(nodes=3).translations().tolist()
        [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
        """
        n = self.nodes
        return (np.arange(n)[:, None] + np.arange(n)[None, :]) % n

    def next_hop(self, cur, src, dst):
        """Straight to ``dst`` over its circuit."""
        return dst

    def distance(self, src, dst):
        """One circuit per direct route."""
        return np.ones(len(np.asarray(src)), np.int64)

    def route(self, src, dst, via=None):
        """Direct circuits, computed arithmetically (relayed routes are explicit, not hints).

        Parameters
        ----------
        src, dst : numpy.ndarray
            Distinct end nodes per transfer.
        via : numpy.ndarray, optional
            Refused: a relayed route is given whole (``LogicalSchedule.routes``).

        Returns
        -------
        tuple of numpy.ndarray
            ``(ptr, links)``, one circuit per transfer.
        """
        if via is not None and (np.asarray(via) >= 0).any():
            raise UnsupportedError("ocs switches take no route hints (via); give relayed routes explicitly")
        src = np.asarray(src, dtype=np.int64)
        return np.arange(len(src) + 1, dtype=np.int64), circuit_ids(src, dst, self.nodes)
