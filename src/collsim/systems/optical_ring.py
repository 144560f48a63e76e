"""Bidirectional WDM optical ring (TeraRack / SiP-Ring style).

Nodes ``0..N-1`` sit on a ring of ``fibers`` fibers per direction, each
carrying ``wavelengths`` wavelengths.  Directed link ``cw i`` goes from node
``i`` to ``i+1`` and ``ccw i`` from node ``i`` to ``i-1`` (mod N).  A
lightpath occupies one (fiber, wavelength) on every link of a contiguous
one-direction arc.  Parameter sources: seed 004 §III-A and §V-A (40 Gb/s per
wavelength, 25 µs MRR reconfiguration, 1 clock cycle of O/E/O per 32-byte
flit, 128-byte packets, w = 64); the clock rate is not given by the papers
and defaults to 1 GHz (docs/systems.md).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..core.errors import InputError
from ..core.system import System, register_system_kind
from ..core.units import require_positive_int as _positive_int


def _positive_float(name: str, value: object, allow_zero: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        raise InputError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} number, got {value!r}")


@register_system_kind
@dataclass(frozen=True)
class OpticalRing(System):
    """A bidirectional WDM ring.

    Attributes
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
        Device parameters for the insertion-loss and crosstalk checks (seed 004 §IV-B);
        None means collsim's documented defaults (docs/physical-layer.md).  A mapping
        (a ``[system.physical]`` TOML table) is converted.

    Examples
    --------
    >>> ring = OpticalRing(nodes=8, wavelengths=4)
    >>> ring.bandwidth_bytes_per_s, ring.channels_per_direction
    (5000000000.0, 4)
    """

    kind: ClassVar[str] = "optical-ring"
    optical: ClassVar[bool] = True
    ring_routes: ClassVar[bool] = True

    wavelengths: int = 64
    fibers: int = 1
    wavelength_rate_bits_per_s: float = 40e9
    mrr_reconfig_s: float = 25e-6
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
            from ..physical import PhysicalParams, params_from_mapping
            if not isinstance(self.physical, PhysicalParams):
                if not isinstance(self.physical, dict):
                    raise InputError(f"physical must be a table of parameters, got {self.physical!r}")
                object.__setattr__(self, "physical", params_from_mapping(self.physical))
        _positive_int("wavelengths", self.wavelengths)
        _positive_int("fibers", self.fibers)
        _positive_int("flit_bytes", self.flit_bytes)
        _positive_int("packet_bytes", self.packet_bytes)
        _positive_float("wavelength_rate_bits_per_s", self.wavelength_rate_bits_per_s)
        _positive_float("clock_hz", self.clock_hz)
        _positive_float("mrr_reconfig_s", self.mrr_reconfig_s, allow_zero=True)
        _positive_float("oeo_cycles_per_flit", self.oeo_cycles_per_flit, allow_zero=True)
        for name in ("max_tx_channels", "max_rx_channels"):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))

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
        from ..physical import PhysicalParams
        return self.physical or PhysicalParams()

    def link_name(self, link: int) -> str:
        """Name of directed link ``link``: ids ``0..N-1`` are cw, ``N..2N-1`` ccw."""
        n = self.nodes
        if link < n:
            return f"cw {link}->{(link + 1) % n}"
        i = link - n
        return f"ccw {i}->{(i - 1) % n}"

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
