"""Optical torus: every row and every column of an R x C grid is a bidirectional WDM ring.

Node ``(r, c)`` has id ``r * C + c``.  Row ``r`` is a ring of the ``C`` nodes
``r*C .. r*C + C-1`` in column order; column ``c`` a ring of the ``R`` nodes
``c, C + c, ...`` in row order.  Every ring has ``fibers`` fibers per direction,
each carrying ``wavelengths`` wavelengths, with the device parameters of
:class:`~collsim.kinds.optical_ring.system.OpticalRing`.  A lightpath stays inside
one ring (no optical switching between a row and a column): a transfer runs
between two nodes of one row or of one column, and its route is a one-direction
arc of that ring.  A dimension of size 1 has no ring (``1 x n`` is the ring of
``n`` nodes).

Transceivers (``shared_transceivers``, docs/optical-torus.md):

* ``True`` (default): a node has the transceivers of one ring node, ``2 F w``
  transmitters and ``2 F w`` receivers, which it can couple to either of its
  rings; in one slot it sources (sinks) at most ``2 F w`` lightpaths in total
  over its row and column rings.
* ``False``: each ring has its own transceivers; a node sources (sinks) up to
  ``F w`` lightpaths on each of its ring-directions, ``4 F w`` in all.

``max_tx_channels`` / ``max_rx_channels`` lower either limit further.
Directed link ids: ``dim_dir * N + v`` is the link leaving node ``v`` in row cw
(0), row ccw (1), column cw (2, towards row ``r+1``) or column ccw (3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from ..optical_ring.routes import RingRoutes
from ...core.system import System, register_system_kind
from ...core.validate import is_integer
from ..optical_ring.device import WdmDevice
from ..optical_ring.system import OpticalRing

DEFAULT_SIDE = 32
"""Rows and columns of ``--system optical-torus`` when none are given: 32 x 32 = 1024 nodes."""

_LINKS = ("row cw", "row ccw", "col cw", "col ccw")


def _side(name: str, value: Any) -> int:
    if not is_integer(value) or int(value) < 1:
        raise InputError(f"optical-torus: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _flag(name: str, value: Any) -> bool:
    """A boolean from a bool, 0/1, or the words -S gives (``true``/``false``, ``yes``/``no``)."""
    words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
    if isinstance(value, (bool, np.bool_)) or (is_integer(value) and int(value) in (0, 1)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in words:
        return words[value.strip().lower()]
    raise InputError(f"optical-torus: {name} must be true or false, got {value!r}")


def balanced_sides(nodes: int) -> tuple[int, int]:
    """The most square ``rows x cols`` with ``rows <= cols`` and ``rows * cols = nodes``."""
    rows = max(r for r in range(1, math.isqrt(nodes) + 1) if nodes % r == 0)
    return rows, nodes // rows


@dataclass(frozen=True)
class _Sides:
    """The torus's own fields, a base listed after WdmDevice so that they precede the device's fields."""

    rows: int = DEFAULT_SIDE
    cols: int = DEFAULT_SIDE
    shared_transceivers: bool = True


@register_system_kind
@dataclass(frozen=True)
class OpticalTorus(WdmDevice, _Sides, System):
    """An R x C torus of bidirectional WDM rings (one per row and per column).

    Parameters
    ----------
    nodes : int or None
        ``rows * cols`` (None: computed; another value is refused).
    name : str
        Name reported in results.
    rows, cols : int
        Grid sides R, C >= 1 with R * C >= 2.
    shared_transceivers : bool
        True: a node's ``2 F w`` transmitters and receivers are shared by its row and
        column rings; False: each ring has its own (module docstring).
    wavelengths : int
        Wavelengths per fiber of every ring, w >= 1.
    fibers : int
        Fibers per direction of every ring, F >= 1.
    wavelength_rate_bits_per_s : float
        Line rate of one wavelength (40 Gb/s).
    mrr_reconfig_s : float
        Micro-ring reconfiguration delay (25 µs).
    slot_latency_s : float
        Fixed latency charged once per physical slot (0 by default, as in the papers).
    oeo_cycles_per_flit : float
        O/E/O conversion cost in clock cycles per flit (1).
    clock_hz : float
        Clock rate that converts cycles to time (1 GHz).
    flit_bytes : int
        Flit size (32 bytes).
    packet_bytes : int
        Optical packet size; transfers are padded to whole packets (128 bytes).
    max_tx_channels : int or None
        Per-node limit of simultaneous transmit lightpaths over all its rings (None: the hardware's).
    max_rx_channels : int or None
        Per-node limit of simultaneous receive lightpaths (None: the hardware's).
    physical : PhysicalParams or None
        Device parameters of the insertion-loss and crosstalk checks (as for OpticalRing).

    Notes
    -----
    The device fields (``wavelengths`` to ``physical``), their checks and the rates read from
    them are :class:`~collsim.kinds.optical_ring.device.WdmDevice`'s, as for OpticalRing.

    Examples
    --------
    >>> t = OpticalTorus(rows=4, cols=8, wavelengths=4)
    >>> t.nodes, t.tx_channels, OpticalTorus(rows=4, cols=8, wavelengths=4, shared_transceivers=False).tx_channels
    (32, 8, 16)
    >>> OpticalTorus(rows=0, cols=8)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: optical-torus: rows must be an integer >= 1, got 0
    """

    topology: ClassVar[str] = "optical-torus"
    Routes: ClassVar[type] = RingRoutes
    ring_paths: ClassVar[bool] = False
    """A route's nodes are not ``src + d k mod N``: files must give ``dir`` and ``hops`` (docs/optical-torus.md)."""

    # fields: nodes, name (System), rows, cols, shared_transceivers (_Sides), the devices' (WdmDevice)
    nodes: int | None = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        rows, cols = _side("rows", self.rows), _side("cols", self.cols)
        if rows * cols < 2:
            raise InputError(f"optical-torus: {rows}x{cols} has {rows * cols} node; a torus needs at least 2")
        if self.nodes is not None and (not is_integer(self.nodes) or int(self.nodes) != rows * cols):
            raise InputError(f"optical-torus: nodes={self.nodes!r} does not match rows x cols = {rows}x{cols} "
                             f"= {rows * cols}")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "cols", cols)
        object.__setattr__(self, "nodes", rows * cols)
        object.__setattr__(self, "shared_transceivers", _flag("shared_transceivers", self.shared_transceivers))
        super().__post_init__()   # System's checks, then WdmDevice's (a ring's device parameters)

    @classmethod
    def from_options(cls, nodes: int | None = None, rows: int | None = None, cols: int | None = None,
                     **opts: Any) -> "OpticalTorus":
        """Build from keyword options, as ``--system optical-torus`` does.

        Parameters
        ----------
        nodes : int, optional
            Node count; without ``rows``/``cols`` the most square grid of it
            (:func:`balanced_sides`); default 32 x 32.
        rows, cols : int, optional
            Grid sides (one of them and ``nodes`` give the other).
        **opts
            Other fields; None values are ignored.

        Returns
        -------
        OpticalTorus
            The torus.

        Examples
        --------
        >>> OpticalTorus.from_options().nodes, OpticalTorus.from_options(nodes=32).cols
        (1024, 8)
        >>> OpticalTorus.from_options(nodes=12, rows=3).cols
        4
        """
        opts = {k: v for k, v in opts.items() if v is not None}
        if nodes is not None and rows is None and cols is None:
            if not is_integer(nodes) or int(nodes) < 2:
                raise InputError(f"nodes must be an integer >= 2, got {nodes!r}")
            rows, cols = balanced_sides(int(nodes))
        elif nodes is not None and (rows is None) != (cols is None):
            side = _side("rows" if rows is not None else "cols", rows if rows is not None else cols)
            if int(nodes) % side:
                raise InputError(f"optical-torus: nodes={nodes} is not a multiple of {side}")
            rows, cols = (side, int(nodes) // side) if rows is not None else (int(nodes) // side, side)
        rows = DEFAULT_SIDE if rows is None else rows
        cols = DEFAULT_SIDE if cols is None else cols
        return cls(nodes=nodes, rows=rows, cols=cols, **opts)

    @cached_property
    def row_ring(self) -> OpticalRing:
        """One row as an :class:`OpticalRing` of ``cols`` nodes (same devices; needs ``cols >= 2``)."""
        return self._ring(self.cols, "row")

    @cached_property
    def col_ring(self) -> OpticalRing:
        """One column as an :class:`OpticalRing` of ``rows`` nodes (needs ``rows >= 2``)."""
        return self._ring(self.rows, "column")

    def _ring(self, n: int, what: str) -> OpticalRing:
        if n < 2:
            raise InputError(f"a {self.rows}x{self.cols} optical torus has no {what} rings (a {what} of 1 node)")
        dev = {f.name: getattr(self, f.name) for f in fields(WdmDevice)}
        return OpticalRing(nodes=n, name=f"{self.name}-{what}", **dev)

    @property
    def rings_per_node(self) -> int:
        """Rings a node belongs to: 2, or 1 when a side is 1."""
        return int(self.rows >= 2) + int(self.cols >= 2)

    def _hardware(self) -> int:
        rings = 1 if self.shared_transceivers else self.rings_per_node
        return 2 * rings * self.channels_per_direction

    @property
    def tx_channels(self) -> int:
        """Lightpaths a node can source in one slot (over all its rings)."""
        hw = self._hardware()
        return hw if self.max_tx_channels is None else min(hw, self.max_tx_channels)

    @property
    def rx_channels(self) -> int:
        """Lightpaths a node can sink in one slot (over all its rings)."""
        hw = self._hardware()
        return hw if self.max_rx_channels is None else min(hw, self.max_rx_channels)

    @property
    def tx_limit(self) -> int | None:
        """The transmit limit a schedule must be checked against (None: the channels already enforce it)."""
        return None if self.tx_channels >= 2 * self.rings_per_node * self.channels_per_direction else self.tx_channels

    @property
    def rx_limit(self) -> int | None:
        """The receive limit a schedule must be checked against (None: the channels already enforce it)."""
        return None if self.rx_channels >= 2 * self.rings_per_node * self.channels_per_direction else self.rx_channels

    @property
    def link_count(self) -> int:
        """Directed links: ``2 N`` per dimension of size >= 2."""
        return 2 * self.nodes * self.rings_per_node

    def ring_coords(self, src, dst):
        """Ring of each transfer (vectorised): dimension, ring index, local endpoints, ring length.

        Parameters
        ----------
        src, dst : array_like
            Node ids.

        Returns
        -------
        tuple of numpy.ndarray
            ``(dim, ring, a, b, length, ok)``: ``dim`` 0 (row) or 1 (column), the row or
            column index, the endpoints' positions on that ring, its length, and ``ok``
            False where the endpoints share neither a row nor a column.

        Examples
        --------
        >>> t = OpticalTorus(rows=3, cols=4)
        >>> [x.tolist() for x in t.ring_coords([0, 1], [3, 9])]   # along row 0; down column 1
        [[0, 1], [0, 1], [0, 0], [3, 2], [4, 3], [True, True]]
        >>> bool(t.ring_coords([0], [5])[-1][0])                 # (0, 0) -> (1, 1): no ring
        False
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        rs, cs = np.divmod(src, self.cols)
        rd, cd = np.divmod(dst, self.cols)
        row = rs == rd
        dim = (~row).astype(np.int64)
        ring = np.where(row, rs, cs)
        a = np.where(row, cs, rs)
        b = np.where(row, cd, rd)
        length = np.where(row, self.cols, self.rows)
        return dim, ring, a, b, length, row | (cs == cd)

    def node_of(self, dim, ring, position):
        """Node id at ``position`` of ring ``ring`` in dimension ``dim`` (vectorised).

        Parameters
        ----------
        dim, ring, position : array_like
            As :meth:`ring_coords` returns them (position taken modulo the ring length).

        Returns
        -------
        numpy.ndarray
            Node ids.

        Examples
        --------
        >>> OpticalTorus(rows=3, cols=4).node_of([0, 1], [2, 1], [5, 2]).tolist()
        [9, 9]
        """
        dim, ring, position = (np.asarray(x, dtype=np.int64) for x in (dim, ring, position))
        return np.where(dim == 0, ring * self.cols + position % self.cols, (position % self.rows) * self.cols + ring)

    def path(self, src: int, dst: int, direction: int, hops: int) -> list[int]:
        """The nodes a route visits along the ring ``src`` and ``dst`` share (for files and messages).

        Parameters
        ----------
        src, dst : int
            Endpoints, in one row or one column.
        direction : int
            +1 (cw) or -1 (ccw) along that ring.
        hops : int
            Links crossed.

        Returns
        -------
        list of int
            ``hops + 1`` node ids from ``src``.

        Examples
        --------
        >>> t = OpticalTorus(rows=3, cols=4)
        >>> t.path(5, 6, -1, 3), t.path(1, 9, -1, 1)
        ([5, 4, 7, 6], [1, 9])
        """
        dim, ring, a, _, _, _ = self.ring_coords([src], [dst])
        pos = int(a[0]) + int(direction) * np.arange(int(hops) + 1)
        return self.node_of(np.full(len(pos), dim[0]), np.full(len(pos), ring[0]), pos).tolist()

    def link_name(self, link: int) -> str:
        """Name of directed link ``link``, e.g. ``"row cw 5->6"`` or ``"col ccw 9->5"``."""
        n = self.nodes
        kind, v = divmod(int(link), n)
        if not 0 <= kind < 4:
            return f"link {link}"
        r, c = divmod(v, self.cols)
        step = 1 if kind % 2 == 0 else -1
        to = r * self.cols + (c + step) % self.cols if kind < 2 else ((r + step) % self.rows) * self.cols + c
        return f"{_LINKS[kind]} {v}->{to}"

    def summary(self) -> dict:
        """Counts for ``collsim topology``: nodes, links, channels, diameter."""
        return {"kind": self.topology, "nodes": self.nodes, "switches": 0, "links": self.link_count,
                "fibers_per_direction": self.fibers, "wavelengths_per_fiber": self.wavelengths,
                "channels_per_link": self.channels_per_direction, "node_degree": 2 * self.rings_per_node,
                "switch_radix": None, "diameter": self.rows // 2 + self.cols // 2,
                "rows": self.rows, "cols": self.cols, "shared_transceivers": self.shared_transceivers}


__all__ = ["DEFAULT_SIDE", "OpticalTorus", "balanced_sides"]
