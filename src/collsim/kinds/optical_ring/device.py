"""The devices of a WDM ring, written once for every system built of such rings.

:class:`WdmDevice` holds the optical device parameters (wavelengths, fibers, line rate,
micro-ring reconfiguration, slot latency, O/E/O cost, clock, flit and packet sizes,
transceiver limits, physical layer), their checks and the rates and times read from them.
:class:`~collsim.kinds.optical_ring.system.OpticalRing` and
:class:`~collsim.kinds.optical_torus.system.OpticalTorus` inherit it.

Dataclass fields are ordered base class first (the reverse of the method resolution order),
so a system lists ``WdmDevice`` before :class:`~collsim.core.system.System` among its bases:
``class OpticalRing(WdmDevice, System)`` has the fields ``nodes, name`` and then the device's.
Fields that a system puts between the two come from a base listed after ``WdmDevice``
(the optical torus's ``rows, cols, shared_transceivers``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ...core.errors import InputError
from ...core.units import parse_time
from ...core.validate import physical, positive_integer
from .physical import PhysicalParams, params_from_mapping


@dataclass(frozen=True)
class WdmDevice:
    """Optical device parameters of WDM rings, with their checks and the rates read from them.

    A base of frozen system dataclasses (module docstring); its checks run after the system's own
    (``nodes``, ``name``).  Integer fields are stored as plain ints and numpy scalars of the
    others as plain floats; a ``physical`` mapping becomes :class:`PhysicalParams`.
    """

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
        parent = getattr(super(), "__post_init__", None)
        if parent is not None:   # the system's own checks first (System: nodes, name)
            parent()
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

    def describe(self) -> dict[str, Any]:
        """JSON-able description (physical parameters as a table, or null)."""
        out = super().describe()  # type: ignore[misc]  # System.describe: the kind and every field
        out["physical"] = None if self.physical is None else asdict(self.physical)
        return out

    def physical_params(self):
        """The physical-layer parameters in force (defaults when unset)."""
        return self.physical or PhysicalParams()

    def transfer_time_s(self, size_bytes, band=1):
        """Serialisation plus O/E/O time of transfers, each over a band of wavelengths (vectorised).

        ``wire(size) / (band * B) + ceil(ceil(size / flit) / band) * t_oeo``: the band's
        transceivers serialise and convert its flits in parallel (docs/cost-models.md).
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


__all__ = ["WdmDevice"]
