"""Bidirectional WDM optical ring (TeraRack / SiP-Ring style).

Nodes ``0..N-1`` sit on a ring of ``fibers`` fibers per direction, each
carrying ``wavelengths`` wavelengths.  Directed link ``cw i`` goes from node
``i`` to ``i+1`` and ``ccw i`` from node ``i`` to ``i-1`` (mod N).  A
lightpath occupies one (fiber, wavelength) on every link of a contiguous
one-direction arc.  Parameter sources: [OpTree24] §III-A and §V-A (40 Gb/s per
wavelength, 25 µs MRR reconfiguration, 1 clock cycle of O/E/O per 32-byte
flit, 128-byte packets, w = 64); the clock rate is not given by the papers
and defaults to 1 GHz (docs/systems.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from ...core.routes import RingRoutes
from .physical import PhysicalParams, params_from_mapping
from ...core.system import System, register_system_kind
from ...core.units import parse_time
from ...core.validate import physical, positive_integer


DEFAULT_NODES = 1024
"""Nodes of ``--system optical-ring`` when none are given: the papers' 1024-node ring."""


@register_system_kind
@dataclass(frozen=True)
class OpticalRing(System):
    """A bidirectional WDM ring.

    Parameters
    ----------
    nodes : int
        Number of nodes N >= 2.
    name : str
        Preset name (``paper``, ``terarack``) or ``custom``.
    wavelengths : int
        Wavelengths per fiber, w >= 1.
    fibers : int
        Fibers per direction, F >= 1.
    wavelength_rate_bits_per_s : float
        Line rate of one wavelength (40 Gb/s).
    mrr_reconfig_s : float
        Micro-ring reconfiguration delay (25 µs).
    slot_latency_s : float
        Fixed latency charged once per physical slot (synchronisation and
        propagation); 0 by default, as in the papers.  A time string (``"2us"``)
        is accepted.  Not part of the papers' eq. 3 (docs/cost-models.md).
    oeo_cycles_per_flit : float
        O/E/O conversion cost in clock cycles per flit (1).
    clock_hz : float
        Clock rate that converts cycles to time (1 GHz; not given by the papers).
    flit_bytes : int
        Flit size (32 bytes).
    packet_bytes : int
        Optical packet size; transfers are padded to whole packets (128 bytes).
    max_tx_channels, max_rx_channels : int or None
        Per-node limit of simultaneous transmit / receive lightpaths (None: unlimited,
        as in the papers).
    physical : PhysicalParams or None
        Device parameters for the insertion-loss and crosstalk checks ([OpTree24] §IV-B);
        None means collsim's documented defaults (docs/physical-layer.md).  A mapping
        (a ``[system.physical]`` TOML table) is converted.

    Examples
    --------
    >>> ring = OpticalRing(nodes=8, wavelengths=4)
    >>> ring.bandwidth_bytes_per_s, ring.channels_per_direction
    (5000000000.0, 4)
    """

    kind: ClassVar[str] = "optical-ring"
    family: ClassVar[str] = "optical-ring"
    Routes: ClassVar[type] = RingRoutes

    wavelengths: int = 64
    fibers: int = 1
    wavelength_rate_bits_per_s: float = 40e9
    mrr_reconfig_s: float = 25e-6
    slot_latency_s: float = 0.0
    oeo_cycles_per_flit: float = 1.0
    clock_hz: float = 1e9
    flit_bytes: int = 32
    packet_bytes: int = 128
    max_tx_channels: int | None = None
    max_rx_channels: int | None = None
    physical: Any = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.physical is not None:
            if not isinstance(self.physical, PhysicalParams):
                if not isinstance(self.physical, dict):
                    raise InputError(f"physical must be a table of parameters, got {self.physical!r}")
                object.__setattr__(self, "physical", params_from_mapping(self.physical))
        for name in ("wavelengths", "fibers", "flit_bytes", "packet_bytes", "max_tx_channels", "max_rx_channels"):
            value = getattr(self, name)
            if value is None and name.startswith("max_"):   # unlimited
                continue
            object.__setattr__(self, name, positive_integer(name, value))   # a plain int
        # schedules store a wavelength per transfer as int32 and a fiber as int16
        for name, top in (("wavelengths", 2**31 - 1), ("fibers", 2**15 - 1)):
            if getattr(self, name) > top:
                raise InputError(f"{name} must be at most {top} (collsim's schedule columns), got {getattr(self, name)}")
        if isinstance(self.slot_latency_s, str):   # "2us", as -S slot_latency_s=2us gives it
            try:
                object.__setattr__(self, "slot_latency_s", parse_time(self.slot_latency_s))
            except InputError:
                raise InputError(f"slot_latency_s must be a non-negative time (2us, 500ns, seconds), "
                                 f"got {self.slot_latency_s!r}") from None
        for name, positive in (("wavelength_rate_bits_per_s", True), ("clock_hz", True),
                               ("mrr_reconfig_s", False), ("slot_latency_s", False),
                               ("oeo_cycles_per_flit", False)):
            value = getattr(self, name)
            checked = physical(name, value, rate=positive)
            if type(value) not in (int, float):      # numpy scalars: store a plain float
                object.__setattr__(self, name, checked)

    @classmethod
    def from_options(cls, nodes: int | None = None, **opts: Any) -> "OpticalRing":
        """Build from keyword options, as ``--system optical-ring`` does.

        Parameters
        ----------
        nodes : int, optional
            Number of nodes (default 1024, the papers' ring).
        **opts
            Other fields (``wavelengths``, ``fibers``, ``clock_hz`` ...); None values are ignored.

        Returns
        -------
        OpticalRing
            The ring; without options, the ``paper`` preset's values.

        Examples
        --------
        >>> OpticalRing.from_options().nodes, OpticalRing.from_options(nodes=8, fibers=2).fibers
        (1024, 2)
        """
        opts = {k: v for k, v in opts.items() if v is not None}
        return cls(nodes=DEFAULT_NODES if nodes is None else nodes, **opts)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """Rate of one wavelength in bytes per second."""
        return self.wavelength_rate_bits_per_s / 8.0

    @property
    def channels_per_direction(self) -> int:
        """Channels (fiber, wavelength) on each directed link: F * w."""
        return self.fibers * self.wavelengths

    @property
    def oeo_s_per_flit(self) -> float:
        """O/E/O conversion time per flit in seconds."""
        return self.oeo_cycles_per_flit / self.clock_hz

    @property
    def tx_channels(self) -> int:
        """Lightpaths a node can source at once (both directions, all channels)."""
        hw = 2 * self.channels_per_direction
        return hw if self.max_tx_channels is None else min(hw, self.max_tx_channels)

    @property
    def rx_channels(self) -> int:
        """Lightpaths a node can sink at once."""
        hw = 2 * self.channels_per_direction
        return hw if self.max_rx_channels is None else min(hw, self.max_rx_channels)

    def describe(self) -> dict[str, Any]:
        """JSON-able description (physical parameters as a table, or null)."""
        out = super().describe()
        out["physical"] = None if self.physical is None else asdict(self.physical)
        return out

    def physical_params(self):
        """The physical-layer parameters in force (defaults when unset)."""
        return self.physical or PhysicalParams()

    def link_name(self, link: int) -> str:
        """Name of directed link ``link``: ids ``0..N-1`` are cw, ``N..2N-1`` ccw."""
        n = self.nodes
        if link < n:
            return f"cw {link}->{(link + 1) % n}"
        i = link - n
        return f"ccw {i}->{(i - 1) % n}"

    def transfer_time_s(self, size_bytes, band=1):
        """Serialisation plus O/E/O time of transfers, each over a band of wavelengths (vectorised).

        ``wire(size) / (band * B) + ceil(ceil(size / flit) / band) * t_oeo``: the band's
        transceivers serialise and convert its flits in parallel (docs/cost-models.md).

        Parameters
        ----------
        size_bytes : int or numpy.ndarray
            Payload of each transfer.
        band : int or numpy.ndarray, optional
            Wavelengths carrying each transfer (default 1).

        Returns
        -------
        numpy.ndarray
            Seconds per transfer.

        Examples
        --------
        >>> float(OpticalRing(nodes=2).transfer_time_s(np.array([128]))[0])
        2.96e-08
        """
        size = np.asarray(size_bytes, dtype=np.int64)
        flits = -(-size // self.flit_bytes)
        if np.ndim(band) == 0 and band == 1:
            return self.wire_bytes(size) / self.bandwidth_bytes_per_s + flits * self.oeo_s_per_flit
        band = np.asarray(band, dtype=np.int64)
        return self.wire_bytes(size) / (band * self.bandwidth_bytes_per_s) + (-(-flits // band)) * self.oeo_s_per_flit

    def wire_bytes(self, size_bytes):
        """Bytes on the wire: ``size_bytes`` padded to whole packets (vectorised)."""
        p = self.packet_bytes
        return -(-size_bytes // p) * p

    def summary(self) -> dict:
        """Counts for ``collsim topology``: nodes, links, channels, diameter."""
        n = self.nodes
        return {"kind": self.kind, "nodes": n, "switches": 0, "links": 2 * n,
                "fibers_per_direction": self.fibers, "wavelengths_per_fiber": self.wavelengths,
                "channels_per_link": self.channels_per_direction, "node_degree": 2,
                "switch_radix": None, "diameter": n // 2}
