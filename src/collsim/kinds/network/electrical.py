"""Simple electrical topologies: line, ring (uni- or bidirectional) and a single switch.

Each is a :class:`~collsim.kinds.network.network.Network` with an edge list and a
vectorised next-hop rule.  Meshes, tori, hypercubes, fat trees and custom
graphs follow the same pattern in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...core.commmodel import LogGPPiecewise, model_from
from ...core.errors import InputError
from .network import Network
from ...core.ring import hops_along, shortest_direction
from ...core.system import register_system_kind


class _Arcs:
    """The cut family of a line or ring: its arcs ``[0, L)``, which with single nodes attain every
    cut's maximum (:meth:`Network.cut_masks <collsim.kinds.network.network.Network.cut_masks>`)."""

    cuts_are_exact: ClassVar[bool] = True

    def cut_masks(self) -> list[np.ndarray]:
        """Arcs ``[0, L)`` for every L: one link each way on a line, two on a ring."""
        return [np.arange(self.vertices)[None, :] < np.arange(1, self.nodes)[:, None]]

    def bound_memory_bytes(self) -> int:
        """Its cut masks: N - 1 arcs of V vertices, a byte each."""
        return self.nodes * self.vertices


@register_system_kind
@dataclass(frozen=True)
class Line(_Arcs, Network):
    """A linear array: node i joined to i+1 by a full-duplex link.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.

    Examples
    --------
    >>> ptr, links = Line(nodes=4).route(np.array([0]), np.array([3]))
    >>> np.diff(ptr).tolist()
    [3]
    """

    topology: ClassVar[str] = "line"

    def link_count(self) -> int:
        """``2 (N - 1)``."""
        return 2 * (self.nodes - 1)

    def edges(self):
        """Both directions of each of the N-1 links."""
        i = np.arange(self.nodes - 1)
        return np.concatenate([i, i + 1]), np.concatenate([i + 1, i])

    def next_hop(self, cur, src, dst):
        """Step towards ``dst``."""
        return cur + np.sign(dst - cur)

    def distance(self, src, dst):
        """``|dst - src|`` hops."""
        return np.abs(np.asarray(dst, dtype=np.int64) - np.asarray(src, dtype=np.int64))


@register_system_kind
@dataclass(frozen=True)
class Ring(_Arcs, Network):
    """An electrical ring; bidirectional by default, shortest direction, parity tie split.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    bidirectional : bool, optional
        Links in both directions (True) or clockwise only (False).

    Examples
    --------
    >>> ptr, links = Ring(nodes=8).route(np.array([0, 0]), np.array([7, 4]))
    >>> np.diff(ptr).tolist()
    [1, 4]
    """

    topology: ClassVar[str] = "ring"
    bidirectional: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.bidirectional, (bool, np.bool_)):
            raise InputError(f"ring: bidirectional must be true or false, got {self.bidirectional!r}")
        object.__setattr__(self, "bidirectional", bool(self.bidirectional))

    def link_count(self) -> int:
        """``2N`` (``N`` one-way)."""
        return 2 * self.nodes if self.bidirectional else self.nodes

    def edges(self):
        """Clockwise links i -> i+1 (ids 0..N-1), then counter-clockwise i -> i-1."""
        i = np.arange(self.nodes)
        if not self.bidirectional:
            return i, (i + 1) % self.nodes
        return np.concatenate([i, i]), np.concatenate([(i + 1) % self.nodes, (i - 1) % self.nodes])

    def distance(self, src, dst):
        """Hops of :meth:`route`: clockwise, or the shorter way round."""
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        d = np.ones(len(src), np.int8) if not self.bidirectional else shortest_direction(src, dst, self.nodes)
        return hops_along(src, dst, d, self.nodes)

    def next_hop(self, cur, src, dst):
        """Clockwise, or the shortest direction from the source (ties: even sources go cw)."""
        if not self.bidirectional:
            return (cur + 1) % self.nodes
        return (cur + shortest_direction(src, dst, self.nodes)) % self.nodes

    def route(self, src, dst, via=None):
        """The routes :meth:`next_hop` walks, computed arithmetically (one pass, no per-hop loop).

        Parameters
        ----------
        src, dst : numpy.ndarray
            End-node endpoints.
        via : numpy.ndarray, optional
            Route hints; a ring takes none (every entry must be -1).

        Returns
        -------
        tuple of numpy.ndarray
            ``(ptr, links)``: clockwise link ``i`` is ``i -> i+1``, counter-clockwise ``N + i`` is ``i -> i-1``.
        """
        n = self.nodes
        if n == 2 or (via is not None and (np.asarray(via) >= 0).any()):
            return super().route(src, dst, via)  # parallel links (N=2) / refuses hints, as the base class
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        d = np.ones(len(src), np.int8) if not self.bidirectional else shortest_direction(src, dst, n)
        hops = hops_along(src, dst, d, n)
        ptr = np.zeros(len(src) + 1, np.int64)
        np.cumsum(hops, out=ptr[1:])
        if int(hops.max(initial=0)) <= 1:  # neighbour traffic: one link each
            links = np.where(d > 0, src, n + src)[hops == 1]
            return ptr, links
        k = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], hops)
        s = np.repeat(src, hops)
        cw = np.repeat(d > 0, hops)
        return ptr, np.where(cw, (s + k) % n, n + (s - k) % n)


@register_system_kind
@dataclass(frozen=True)
class Star(Network):
    """All nodes on one switch (the switch is vertex N).

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`.
    model : LogGPPiecewise or mapping, optional
        A calibrated communication model (``collsim calibrate --model loggp-piecewise``
        writes it as the ``[system.model]`` table, :mod:`collsim.core.commmodel`).  When set,
        the closed form and the flow simulator time schedules with it instead of the plain
        α–β of the links (docs/calibration.md).

    Examples
    --------
    >>> Star(nodes=4).summary()["switch_radix"]
    4
    >>> star = Star(nodes=2, model={"breakpoints_bytes": [], "alpha_s": [2e-6], "beta_bytes_per_s": [1e10]})
    >>> star.model.name, star.describe()["model"]["alpha_s"]
    ('loggp-piecewise', [2e-06])
    """

    topology: ClassVar[str] = "star"
    cuts_are_exact: ClassVar[bool] = True  # its single nodes attain every cut's maximum
    model: LogGPPiecewise | None = None

    def cut_masks(self) -> list[np.ndarray]:
        """None: the switch with every end node is the whole network (:meth:`Network.cut_masks`).

        Returns
        -------
        list of numpy.ndarray
            Empty.

        Examples
        --------
        >>> Star(nodes=4).cut_masks()
        []
        """
        return []

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "model", model_from(self.model))

    def describe(self) -> dict:
        """As :meth:`System.describe`; the model as plain data, left out when there is none."""
        out = super().describe()
        if self.model is None:
            out.pop("model", None)
        else:
            out["model"] = self.model.to_dict()
        return out

    @property
    def switches(self) -> int:
        """One switch."""
        return 1

    def link_count(self) -> int:
        """``2N``."""
        return 2 * self.nodes

    def edges(self):
        """Node -> switch and switch -> node for every node."""
        i = np.arange(self.nodes)
        s = np.full(self.nodes, self.nodes)
        return np.concatenate([i, s]), np.concatenate([s, i])

    def next_hop(self, cur, src, dst):
        """Up to the switch, then down to the destination."""
        return np.where(cur == self.nodes, dst, self.nodes)
