"""User-defined electrical networks read from TOML, shortest-path routed.

A custom network lists its links; each has its own bandwidth and latency
(default: the system's ``link_bandwidth_bytes_per_s`` / ``link_latency_s``)
and is full duplex unless ``duplex = false``.  Vertices ``0..nodes-1`` are end
nodes and ``nodes..nodes+switches-1`` switches; a link endpoint is a vertex id
or a name, ``"n3"`` (end node 3) or ``"s0"`` (switch 0 = vertex ``nodes``).
Routes are shortest by hop count.  With ``routing = "ecmp"`` (the default) every
transfer is split evenly, hop by hop, over all its minimum-hop paths (equal-cost
multipath); with ``routing = "single-path"`` it takes one, the lowest vertex id
winning every tie.  An all-pairs next-hop table is computed once (a breadth-first
search towards every vertex, vectorised over blocks of targets), which suits
graphs of up to a few thousand vertices.

.. code-block:: toml

    [system]
    kind = "custom"
    nodes = 4
    switches = 1
    [[system.link]]
    a = 0
    b = "s0"
    bandwidth = "100Gb/s"
    latency = "1us"

The TOML array is ``[[system.link]]`` (one table per link): the dataclass
field cannot be called ``links``, which is the network's link table.
:meth:`CustomNetwork.from_toml` also accepts ``[[system.links]]``.

>>> net = CustomNetwork(nodes=3, link=((0, 1), (1, 2)))
>>> net.route(np.array([0]), np.array([2]))[1].tolist()
[0, 2]
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ...core.errors import InputError
from .network import LinkTable, Network
from ...core.reading import read_text
from ...core.system import register_system_kind
from ...core.units import parse_bandwidth, parse_time
from ...core.validate import integer, is_integer, physical

LinkSpec = tuple[int, int, float, float, bool]
_KEYS = ("a", "b", "bandwidth", "latency", "duplex")


@register_system_kind
@dataclass(frozen=True)
class CustomNetwork(Network):
    """An arbitrary graph of end nodes and switches with per-link rates and latencies.

    Parameters
    ----------
    nodes, name, link_bandwidth_bytes_per_s, link_latency_s, startup_s
        As for :class:`~collsim.kinds.network.network.Network`; the rate and latency are
        the defaults of links that declare none.
    switches : int
        Number of switch vertices.
    routing : {"ecmp", "single-path"}
        ``"ecmp"`` (default) splits every transfer evenly, hop by hop, over all its minimum-hop
        paths; ``"single-path"`` takes one, the lowest vertex id winning every tie
        (:func:`collsim.kinds.network.ecmp.ecmp_routes`, docs/electrical-systems.md).
    link : tuple of tuple
        Declared links ``(a, b, bandwidth_bytes_per_s, latency_s, duplex)``.  On
        input an entry may also be a mapping with keys ``a, b, bandwidth,
        latency, duplex`` (bandwidth like ``"100Gb/s"``, latency like ``"1us"``,
        numbers are bytes/s and seconds) or a shorter sequence ``(a, b, ...)``.

    Notes
    -----
    Link ids follow the declaration order: declared link i gives ``a -> b`` and,
    if duplex, ``b -> a`` right after it.

    Examples
    --------
    >>> net = CustomNetwork(nodes=2, switches=1,
    ...                     link=({"a": 0, "b": "s0", "bandwidth": "10GB/s"}, (1, "s0")))
    >>> net.link[0], net.links.bandwidth_bytes_per_s.tolist()
    ((0, 2, 10000000000.0, 1e-06, True), [10000000000.0, 10000000000.0, 12500000000.0, 12500000000.0])
    """

    topology: ClassVar[str] = "custom"
    ROUTINGS: ClassVar[tuple[str, ...]] = ("ecmp", "single-path")
    switches: int = 0
    link: tuple[LinkSpec, ...] = ()
    routing: str = "ecmp"

    def __post_init__(self) -> None:
        for name, parse in (("link_bandwidth_bytes_per_s", parse_bandwidth), ("link_latency_s", parse_time),
                            ("startup_s", parse_time)):
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, parse(getattr(self, name)))
        super().__post_init__()
        object.__setattr__(self, "switches", integer("custom network: switches", self.switches, lo=0))
        if isinstance(self.link, (str, bytes, Mapping)) or not isinstance(self.link, Sequence) or not self.link:
            raise InputError("custom network: needs a non-empty list of links ([[system.link]] tables)")
        specs = tuple(self._parse_link(i, entry) for i, entry in enumerate(self.link))
        object.__setattr__(self, "link", specs)
        u, v = self.edges()
        key = u * self.vertices + v
        uniq, first, count = np.unique(key, return_index=True, return_counts=True)
        if (count > 1).any():
            a, b = divmod(int(uniq[np.flatnonzero(count > 1)[0]]), self.vertices)
            raise InputError(f"custom network: more than one link {self.vertex_name(a)}->{self.vertex_name(b)} "
                             f"(a duplex link already covers both directions)")
        deg = np.bincount(np.concatenate([u, v]), minlength=self.vertices)
        if (deg[self.nodes:] == 0).any():
            s = int(np.flatnonzero(deg[self.nodes:] == 0)[0])
            raise InputError(f"custom network: switch s{s} has no links")
        self._check_connected(u, v)

    # --- parsing ------------------------------------------------------------------------
    def _vertex(self, i: int, value: Any) -> int:
        if isinstance(value, str):
            m = re.fullmatch(r"\s*([ns])([0-9]+)\s*", value)  # ASCII digits only (core.numbers)
            if not m:
                raise InputError(f"custom link {i}: unknown vertex {value!r} (use an id, 'n3' or 's0')")
            idx = int(m.group(2))
            limit = self.nodes if m.group(1) == "n" else self.switches
            if idx >= limit:
                raise InputError(f"custom link {i}: unknown vertex {value!r} "
                                 f"({self.nodes} nodes n0..n{self.nodes - 1}, {self.switches} switches)")
            return idx if m.group(1) == "n" else self.nodes + idx
        if not is_integer(value) or not 0 <= value < self.vertices:
            raise InputError(f"custom link {i}: unknown vertex {value!r} "
                             f"(vertices are 0..{self.vertices - 1}: {self.nodes} nodes, then {self.switches} switches)")
        return int(value)

    def _parse_link(self, i: int, entry: Any) -> LinkSpec:
        if isinstance(entry, Mapping):
            bad = sorted(set(entry) - set(_KEYS))
            if bad:
                raise InputError(f"custom link {i}: unknown key(s) {', '.join(bad)}; known: {', '.join(_KEYS)}")
            if "a" not in entry or "b" not in entry:
                raise InputError(f"custom link {i}: needs both 'a' and 'b'")
            vals = [entry.get(k) for k in _KEYS]
        elif isinstance(entry, Sequence) and not isinstance(entry, str) and 2 <= len(entry) <= 5:
            vals = list(entry) + [None] * (5 - len(entry))
        else:
            raise InputError(f"custom link {i}: expected a table with a, b (bandwidth, latency, duplex), got {entry!r}")
        a, b = self._vertex(i, vals[0]), self._vertex(i, vals[1])
        if a == b:
            raise InputError(f"custom link {i}: self-loop at {self.vertex_name(a)}")
        try:
            bw = float(self.link_bandwidth_bytes_per_s) if vals[2] is None else parse_bandwidth(vals[2])
            lat = float(self.link_latency_s) if vals[3] is None else parse_time(vals[3])
            bw, lat = physical("bandwidth", bw, rate=True), physical("latency", lat)
        except InputError as exc:
            raise InputError(f"custom link {i}: {exc}") from None
        duplex = True if vals[4] is None else vals[4]
        if not isinstance(duplex, (bool, np.bool_)):
            raise InputError(f"custom link {i}: duplex must be true or false, got {duplex!r}")
        return (a, b, bw, lat, bool(duplex))

    def _check_connected(self, u: np.ndarray, v: np.ndarray) -> None:
        """Every end node reaches node 0 and is reached from it (so all pairs are routable)."""
        for tail, head, phrase in ((u, v, "cannot be reached from n0"), (v, u, "cannot reach n0")):
            seen = np.zeros(self.vertices, dtype=bool)
            seen[0] = True
            frontier = np.array([0])
            while frontier.size:
                mask = np.isin(tail, frontier)
                new = np.unique(head[mask])
                new = new[~seen[new]]
                seen[new] = True
                frontier = new
            if not seen[:self.nodes].all():
                bad = int(np.flatnonzero(~seen[:self.nodes])[0])
                raise InputError(f"custom network is disconnected: n{bad} {phrase}")

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> "CustomNetwork":
        """Read a ``[system]`` table (``kind = "custom"``) from a TOML file.

        Parameters
        ----------
        path : str or Path
            The file; links as ``[[system.link]]`` (or ``[[system.links]]``) tables.
        **overrides
            Field values replacing the file's; None values are ignored.

        Returns
        -------
        CustomNetwork
            The network.

        Raises
        ------
        InputError
            Unreadable file, wrong kind, unknown fields or a bad graph.
        """
        path = Path(path)
        text = read_text(path, name=f"system file {path}")  # the one reader: no folder, device or socket
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: not valid TOML ({exc})") from None
        table = dict(data.get("system", {})) if isinstance(data.get("system"), dict) else None
        if table is None:
            raise InputError(f"{path}: needs a [system] table")
        if table.pop("kind", "custom") != "custom":
            raise InputError(f"{path}: kind must be \"custom\"")
        if "links" in table:
            table["link"] = [*table.get("link", []), *table.pop("links")]
        table.setdefault("name", path.stem)
        table.update({k: v for k, v in overrides.items() if v is not None})
        bad = sorted(set(table) - {f.name for f in fields(cls)})
        if bad:
            raise InputError(f"{path}: custom systems have no field {', '.join(bad)}")
        return cls(**table)

    @classmethod
    def from_options(cls, nodes: int | None = None, path: str | Path | None = None, **opts: Any) -> "CustomNetwork":
        """Build for the CLI from a TOML file (or ``link=`` given directly).

        Parameters
        ----------
        nodes : int, optional
            Must match the file's ``nodes`` when given.
        path : str or Path, optional
            The TOML file.
        **opts
            Other fields; None values are ignored.

        Returns
        -------
        CustomNetwork
            The network.

        Raises
        ------
        InputError
            Without a file or links, or if ``nodes`` disagrees with the file.
        """
        opts = {k: v for k, v in opts.items() if v is not None}
        if path is None:
            if "link" not in opts or nodes is None:
                raise InputError("a custom network needs nodes and a list of links ([[system.link]] tables in a "
                                 "TOML file: --system FILE, or -S path=FILE)")
            bad = sorted(set(opts) - {f.name for f in fields(cls)})
            if bad:
                raise InputError(f"custom systems have no parameter {', '.join(bad)}")
            return cls(nodes=nodes, **opts)
        net = cls.from_toml(path, **opts)
        if nodes is not None and nodes != net.nodes:
            raise InputError(f"{path} describes {net.nodes} nodes, not {nodes}")
        return net

    # --- graph and routing --------------------------------------------------------------
    def edges(self):
        """Declared links in order, each duplex link's reverse right after it."""
        spec = self.link
        dup = np.array([s[4] for s in spec], dtype=bool)
        a = np.array([s[0] for s in spec], dtype=np.int64)
        b = np.array([s[1] for s in spec], dtype=np.int64)
        u = np.stack([a, b], axis=1).ravel()
        v = np.stack([b, a], axis=1).ravel()
        keep = np.stack([np.ones_like(dup), dup], axis=1).ravel()
        return u[keep], v[keep]

    @cached_property
    def links(self) -> LinkTable:
        """The directed link table with per-link bandwidth and latency."""
        u, v = self.edges()
        dup = np.array([s[4] for s in self.link], dtype=bool)
        reps = np.where(dup, 2, 1)
        bw = np.repeat(np.array([s[2] for s in self.link], dtype=float), reps)
        lat = np.repeat(np.array([s[3] for s in self.link], dtype=float), reps)
        return LinkTable(u, v, bw, lat, self.vertices)

    @cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        """``(next_hop, dist)`` matrices indexed ``[vertex, target]`` (-1: none / unreachable)."""
        return self.hop_table

    def next_hop(self, cur, src, dst):
        """Lowest-id neighbour on a shortest path to ``dst``."""
        return self._tables[0][np.asarray(cur, dtype=np.int64), np.asarray(dst, dtype=np.int64)].astype(np.int64)

    def distance(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Hop count of the route (the shortest-path distance).

        Parameters
        ----------
        src, dst : numpy.ndarray
            Vertices.

        Returns
        -------
        numpy.ndarray
            Hops per pair.
        """
        return self._tables[1][np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)].astype(np.int64)

    def summary(self) -> dict[str, Any]:
        """Base counts plus the number of declared links; diameter from the table when large."""
        out = super().summary()
        out["declared_links"] = len(self.link)
        if out["diameter"] is None:
            out["diameter"] = int(self._tables[1][:self.nodes, :self.nodes].max())
        return out
