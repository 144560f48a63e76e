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

from dataclasses import dataclass
from typing import Any, ClassVar

from .routes import RingRoutes
from ...core.system import System, register_system_kind
from .device import WdmDevice

DEFAULT_NODES = 1024
"""Nodes of ``--system optical-ring`` when none are given: the papers' 1024-node ring."""


@register_system_kind
@dataclass(frozen=True)
class OpticalRing(WdmDevice, System):
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

    Notes
    -----
    The device fields (``wavelengths`` to ``physical``), their checks and the rates read from
    them are :class:`~collsim.kinds.optical_ring.device.WdmDevice`'s.

    Examples
    --------
    >>> ring = OpticalRing(nodes=8, wavelengths=4)
    >>> ring.bandwidth_bytes_per_s, ring.channels_per_direction
    (5000000000.0, 4)
    """

    topology: ClassVar[str] = "optical-ring"
    Routes: ClassVar[type] = RingRoutes

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
    def tx_channels(self) -> int:
        """Lightpaths a node can source at once (both directions, all channels)."""
        hw = 2 * self.channels_per_direction
        return hw if self.max_tx_channels is None else min(hw, self.max_tx_channels)

    @property
    def rx_channels(self) -> int:
        """Lightpaths a node can sink at once."""
        hw = 2 * self.channels_per_direction
        return hw if self.max_rx_channels is None else min(hw, self.max_rx_channels)

    def link_name(self, link: int) -> str:
        """Name of directed link ``link``: ids ``0..N-1`` are cw, ``N..2N-1`` ccw."""
        n = self.nodes
        if link < n:
            return f"cw {link}->{(link + 1) % n}"
        i = link - n
        return f"ccw {i}->{(i - 1) % n}"

    def summary(self) -> dict:
        """Counts for ``collsim topology``: nodes, links, channels, diameter."""
        n = self.nodes
        return {"kind": self.topology, "nodes": n, "switches": 0, "links": 2 * n,
                "fibers_per_direction": self.fibers, "wavelengths_per_fiber": self.wavelengths,
                "channels_per_link": self.channels_per_direction, "node_degree": 2,
                "switch_radix": None, "diameter": n // 2}
