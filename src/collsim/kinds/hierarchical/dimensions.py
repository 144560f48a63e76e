"""The dimensions of a hierarchical system: each a topology of its own, with its bandwidth and latency.

A dimension is ``switch``, ``ring``, ``line`` or ``full`` (collsim draws these itself), or any
other electrical network kind (``fat-tree``, ``torus``, ``mesh``, ``hypercube`` ...), which is
built with the dimension's size, bandwidth and latency and copied onto every group
(:func:`group_system`): so a rail of a rail-optimised fabric can be a leaf-spine
(``fat-tree``, two levels) instead of one switch.  Read from ``topology:size[:bandwidth[:latency]]``
or a table (:func:`read_dims`); :class:`~collsim.kinds.hierarchical.system.Hierarchical` composes them.

>>> [d.text() for d in read_dims("switch:8:300GB/s,fat-tree:16:50GB/s", 1e9, 1e-6)]
['switch:8:300GB/s:1us', 'fat-tree:16:50GB/s:1us']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from ...core.errors import InputError
from ...core.numbers import parse_number
from ...core.system import SYSTEM_KINDS
from ...core.units import format_bandwidth, parse_bandwidth, parse_time
from ...core.validate import is_integer, physical

TOPOLOGIES = ("switch", "ring", "line", "full")
"""The topologies a dimension may have."""

DEFAULT_DIMS = ("switch:8:300GB/s", "switch:16:50GB/s")
"""The dimensions of ``--system hierarchical`` alone: 16 boxes of 8."""


@dataclass(frozen=True)
class Dimension:
    """One dimension of a :class:`Hierarchical` system."""

    topology: str
    size: int
    bandwidth_bytes_per_s: float
    latency_s: float

    @classmethod
    def read(cls, spec: Any, bandwidth_bytes_per_s: float, latency_s: float) -> "Dimension":
        """A dimension from ``topology:size[:bandwidth[:latency]]``, a mapping or a Dimension."""
        if isinstance(spec, Dimension):
            return spec
        if isinstance(spec, Mapping):
            bad = sorted(set(spec) - {"topology", "size", "bandwidth", "latency", "bandwidth_bytes_per_s",
                                      "latency_s"})
            if bad:
                raise InputError(f"hierarchical dimension: no key {', '.join(bad)} (topology, size, bandwidth, "
                                 "latency)")
            topo, size = spec.get("topology", "switch"), spec.get("size")
            bw = spec.get("bandwidth", spec.get("bandwidth_bytes_per_s"))
            lat = spec.get("latency", spec.get("latency_s"))
        elif isinstance(spec, str) or is_integer(spec):
            parts = [p.strip() for p in str(spec).split(":")]
            parts = ["switch", *parts] if len(parts) == 1 else parts
            if len(parts) > 4:
                raise InputError(f"hierarchical dimension {spec!r}: use topology:size[:bandwidth[:latency]]")
            topo, size, bw, lat = (parts + [None, None])[:4]
        else:
            raise InputError(f"hierarchical dimension: expected topology:size[:bandwidth[:latency]] or a table, "
                             f"got {spec!r}")
        topo = str(topo).strip().lower()
        if topo not in TOPOLOGIES and topo not in network_kinds():
            raise InputError(f"hierarchical dimension: topology must be one of {', '.join(TOPOLOGIES)} or a "
                             f"network kind ({', '.join(network_kinds())}), got {topo!r}")
        if isinstance(size, str):
            size = parse_number(size, "hierarchical dimension size", integer=True, otherwise=size)
        if not is_integer(size) or int(size) < 2:
            raise InputError(f"hierarchical dimension: size must be an integer >= 2, got {size!r}")
        bw = float(bandwidth_bytes_per_s) if bw in (None, "") else parse_bandwidth(bw)
        lat = float(latency_s) if lat in (None, "") else parse_time(lat)
        if not bw > 0 or not lat >= 0:
            raise InputError(f"hierarchical dimension: bandwidth must be > 0 and latency >= 0, got {bw}, {lat}")
        try:
            bw, lat = physical("bandwidth", bw, rate=True), physical("latency", lat)
        except InputError as exc:
            raise InputError(f"hierarchical dimension {topo}:{size}: {exc}") from None
        return cls(topo, int(size), float(bw), float(lat))

    def text(self) -> str:
        """The compact form ``topology:size:bandwidth:latency`` (what ``-S dims=`` reads)."""
        bw = format_bandwidth(self.bandwidth_bytes_per_s)
        return f"{self.topology}:{self.size}:{bw}:{self.latency_s * 1e6:g}us".replace(" ", "")

    __str__ = text

    def links_per_group(self) -> int:
        """Directed links of one group."""
        k = self.size
        if self.topology not in TOPOLOGIES:
            return len(group_system(self).links)
        return {"switch": 2 * k, "ring": 2 if k == 2 else 2 * k, "line": 2 * (k - 1), "full": k * (k - 1)}[
            self.topology]

    def switches_per_group(self) -> int:
        """Switch vertices of one group (1 for ``switch``, the kind's for a network kind, else 0)."""
        if self.topology not in TOPOLOGIES:
            return group_system(self).switches
        return int(self.topology == "switch")


def read_dims(dims: Any, bandwidth_bytes_per_s: float, latency_s: float) -> tuple[Dimension, ...]:
    """Dimensions from text (``"switch:8:300GB/s,switch:16:50GB/s"``, ``"8x16"``), a list or tables."""
    if isinstance(dims, str):
        items = [p for p in re.split(r"[,;\s]+", dims.strip()) if p]
        if len(items) == 1 and ":" not in items[0] and re.fullmatch(r"\d+([x×]\d+)+", items[0]):
            items = re.split(r"[x×]", items[0])
        dims = items
    elif isinstance(dims, Mapping) or isinstance(dims, Dimension) or is_integer(dims):
        dims = [dims]
    if not isinstance(dims, (list, tuple)) or not dims:
        raise InputError(f"hierarchical: dims must list at least one dimension, got {dims!r}")
    return tuple(Dimension.read(d, bandwidth_bytes_per_s, latency_s) for d in dims)


def network_kinds() -> tuple[str, ...]:
    """The network kinds a dimension may be besides the four built-in topologies."""
    from dataclasses import fields
    from ...core.plugins import model_for
    from ..network.network import Network   # the kinds the network model owns: electrical networks
    return tuple(sorted(k for k, cls in SYSTEM_KINDS.items()
                        if model_for(cls) is model_for(Network) and k != Network.topology and not cls.route_hints and k not in TOPOLOGIES
                        and "dimensions" not in {f.name for f in fields(cls)}))


@lru_cache(maxsize=64)
def group_system(dim: Dimension):
    """The network one group of a network-kind dimension is: the kind with the dimension's size and links."""
    cls = SYSTEM_KINDS[dim.topology]
    opts = {"nodes": dim.size, "link_bandwidth_bytes_per_s": dim.bandwidth_bytes_per_s,
            "link_latency_s": dim.latency_s, "name": f"{dim.topology}-dimension"}
    build = getattr(cls, "from_options", None)
    try:
        system = build(**opts) if build is not None else cls(**opts)
    except (InputError, TypeError) as exc:
        raise InputError(f"hierarchical dimension {dim.topology}:{dim.size}: {exc}") from None
    if system.nodes != dim.size:
        raise InputError(f"hierarchical dimension: a {dim.topology} of {dim.size} nodes builds {system.nodes}; "
                         f"give a size the kind can have")
    return system


def default_dims(nodes: int) -> tuple[str, ...]:
    """Boxes of the largest divisor of ``nodes`` in 2..8 that leaves >= 2 boxes (else one switch)."""
    box = next((b for b in range(8, 1, -1) if nodes % b == 0 and nodes // b >= 2), None)
    if box is None:
        return (f"switch:{nodes}:300GB/s",)
    return (f"switch:{box}:300GB/s", f"switch:{nodes // box}:50GB/s")
