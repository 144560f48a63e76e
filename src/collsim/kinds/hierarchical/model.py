"""The hierarchical kind: multi-dimensional electrical systems, with their per-dimension cuts named.

A :class:`~collsim.kinds.hierarchical.system.Hierarchical` system is a network, so it is routed,
checked, timed and flow-simulated as one (:class:`~collsim.kinds.network.model.NetworkModel`), and every
algorithm for networks runs on it besides its own (``hier-allreduce`` ...).  Its bound is the
network's (:func:`collsim.kinds.network.bound.network_bound`), whose cut families include every
per-dimension cut (the system's ``cut_masks``; docs/derivations/hierarchical-bound.md); what this
kind adds is its result part, which names the cut family that binds (:func:`dimension_bounds_s`).

References
----------
L. R. Ford, D. R. Fulkerson, "Maximal flow through a network", Canadian Journal of Mathematics 8,
1956 (flow across a cut is at most its capacity); E. Chan, M. Heimlich, A. Purkayastha, R. van de
Geijn, "Collective communication: theory, practice, and experience", Concurrency and Computation:
Practice and Experience 19(13), 2007 (per-node bandwidth bounds).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

import numpy as np

from ..network.cuts import cut_demand_bytes
from .system import Hierarchical
from ..base import Column, register_model
from ..network.model import NetworkModel, NetworkPart

_CHUNK_CELLS = 1 << 22
"""Cuts x nodes (or cuts x links) evaluated per numpy pass (as :mod:`collsim.kinds.network.cuts`)."""


def dimension_bounds_s(system: Hierarchical, collective) -> dict[str, float]:
    """Seconds of link time no schedule beats, per family of cuts of a hierarchical system.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : Collective
        The collective.

    Returns
    -------
    dict
        ``"injection"``: the worst single node's demand over the bandwidth of all its links (every
        dimension's); ``"dim d"``: the worst cut among those that cross only dimension ``d``'s links
        (the block of nodes sharing coordinate ``d``, and for a ring or line dimension its slabs);
        ``"dims d,e"``: blocks whose cut crosses several dimensions.  Demands are
        :func:`collsim.kinds.network.cuts.cut_demand_bytes`'s, capacities the links crossing each way.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> h = Hierarchical(nodes=8, dimensions="switch:4:1GB/s,switch:2:1GB/s")
    >>> {k: round(v * 1e6, 3) for k, v in dimension_bounds_s(h, make_collective("allgather", 8, 1000)).items()}
    {'injection': 3.5, 'dim 0': 3.0, 'dim 1': 1.0}
    """
    lt = system.links
    bw = lt.bandwidth_bytes_per_s
    n = system.nodes
    out: dict[str, float] = {"injection": 0.0}
    out_bw = np.bincount(lt.src, weights=bw, minlength=system.vertices)[:n]
    in_bw = np.bincount(lt.dst, weights=bw, minlength=system.vertices)[:n]
    step = max(1, _CHUNK_CELLS // max(n, 1))   # single nodes a pass: never the N x N identity at once
    for lo in range(0, n, step):
        rows = np.arange(lo, min(n, lo + step))
        single = np.zeros((len(rows), n), bool)
        single[np.arange(len(rows)), rows] = True
        ab, ba = cut_demand_bytes(collective, single)
        out["injection"] = max(out["injection"], float((ab / out_bw[rows]).max()), float((ba / in_bw[rows]).max()))
    masks = [m for m in system.cut_masks() if len(m)]
    masks = np.concatenate(masks) if masks else np.zeros((0, system.vertices), bool)
    dim = system.link_dimension
    step = max(1, _CHUNK_CELLS // max(len(bw), 1))   # cuts a pass, as collsim.kinds.network.cuts does
    for lo in range(0, len(masks), step):
        mk = masks[lo:lo + step]
        ms, md = mk[:, lt.src], mk[:, lt.dst]
        cross = ms != md
        ab, ba = cut_demand_bytes(collective, mk[:, :n])
        cab, cba = (ms & ~md) @ bw, (~ms & md) @ bw
        ratio = np.maximum(np.divide(ab, cab, out=np.zeros(len(ab)), where=cab > 0),
                           np.divide(ba, cba, out=np.zeros(len(ba)), where=cba > 0))
        for i, r in enumerate(ratio):
            used = sorted(set(dim[cross[i]].tolist()))
            label = ("dim " if len(used) == 1 else "dims ") + ",".join(map(str, used))
            out[label] = max(out.get(label, 0.0), float(r))
    return {"injection": out.pop("injection"), **dict(sorted(out.items()))}


def dimension_busy_s(schedule) -> np.ndarray:
    """Per dimension, the longest any one of its links is busy over the whole schedule.

    Parameters
    ----------
    schedule : Schedule
        A schedule on a :class:`~collsim.kinds.hierarchical.system.Hierarchical` system.

    Returns
    -------
    numpy.ndarray
        Seconds per dimension: the largest, over the dimension's links, of the bytes the schedule
        sends over the link divided by its bandwidth (ECMP paths weighted by their share).

    Examples
    --------
    >>> from collsim import build
    >>> s = build("hier-allreduce", "hierarchical", "allreduce", "1MiB", nodes=16, pieces=1, orders="inner")
    >>> [round(float(t) * 1e6, 3) for t in dimension_busy_s(s)]   # 2 x 7/8 MiB at 300 GB/s; 2 x 1/16 MiB at 50
    [6.117, 2.621]
    """
    system, routes = schedule.system, schedule.routes
    lt = system.links
    per_path = np.asarray(schedule.size_bytes, float)[routes.path_owner] * routes.weights
    load = np.bincount(routes.route_links, weights=np.repeat(per_path, routes.path_hops), minlength=len(lt))
    busy = load / lt.bandwidth_bytes_per_s
    out = np.zeros(len(system.dimensions))
    np.maximum.at(out, system.link_dimension, busy)
    return out


@dataclass(frozen=True)
class HierarchicalPart(NetworkPart):
    """The hierarchical system's fields of a result row: the network's, its dimensions and the binding cut.

    Parameters
    ----------
    link_bandwidth_bytes_per_s, link_latency_s, max_link_load, alpha_beta_time_s, simulated_time_s : float
        As for :class:`~collsim.kinds.network.model.NetworkPart` (the link parameters are the system's
        defaults; each dimension has its own).
    per_node_throughput_bytes_per_s : float or None
        As for :class:`~collsim.kinds.network.model.NetworkPart`.
    time_model : str
        As for :class:`~collsim.kinds.network.model.NetworkPart`.
    hierarchy : str
        The dimensions, inner to outer (``switch:8:300GB/s:1us,switch:16:50GB/s:1us``).
    bottleneck : str
        The cut family of :func:`dimension_bounds_s` with the largest bound (``injection``,
        ``dim 1`` ...).
    busiest_dimension : int
        The dimension whose busiest link is busy longest in this schedule (:func:`dimension_busy_s`).

    Examples
    --------
    >>> from collsim import build
    >>> s = build("hier-allreduce", "hierarchical", "allreduce", "1MiB", nodes=16)
    >>> part = HierarchicalModel().row_part(s, None, {})
    >>> part.bottleneck, part.title()
    ('injection', 'switch:8:300GB/s:1us x switch:2:50GB/s:1us')
    """

    hierarchy: str
    bottleneck: str
    busiest_dimension: int

    def title(self) -> str:
        """The system part of a comparison table's title: its dimensions."""
        return self.hierarchy.replace(",", " x ")

    @staticmethod
    def columns() -> list[Column]:
        """The network's columns, then the binding cut family (wide tables).

        Returns
        -------
        list of Column
            Key, header, cell text and meaning of each.

        Examples
        --------
        >>> [c.key for c in HierarchicalPart.columns()][-2:]
        ['bottleneck', 'busiest_dimension']
        """
        return [*NetworkPart.columns(), *_COLUMNS]



_COLUMNS = (
    Column("bottleneck", "binding\ncut", lambda r: str(r.bottleneck),
           "Hierarchical systems: the cut family whose bound is largest (docs/derivations/"
           "hierarchical-bound.md): 'injection' (one node's links of every dimension) or 'dim d' "
           "(a cut crossing only dimension d's links).", wide=True),
    Column("busiest_dimension", "busiest\ndim", lambda r: str(r.busiest_dimension),
           "Hierarchical systems: the dimension (0 = inner) whose busiest link is busy longest in this "
           "schedule: its bytes over its bandwidth, summed over the schedule.", wide=True),
)


class HierarchicalModel(NetworkModel):
    """Hierarchical systems: a network whose result rows name the binding per-dimension cut.

    Examples
    --------
    >>> from collsim.kinds import model_for
    >>> from collsim.systems import load_system
    >>> m = model_for(load_system("dgx-16x8"))
    >>> m.name, m.accepts
    ('hierarchical', ('hierarchical', 'network'))
    """

    name = "hierarchical"
    part_class = HierarchicalPart

    @property
    def accepts(self) -> tuple[str, ...]:
        """Its own algorithms and every network algorithm (it realises any point-to-point schedule)."""
        return ("hierarchical", "network")

    def row_part(self, schedule, spec, chosen: Mapping[str, Any]) -> HierarchicalPart:
        """The network's part plus the dimensions and the binding cut family."""
        net = super().row_part(schedule, spec, chosen)
        terms = dimension_bounds_s(schedule.system, schedule.collective)
        values: dict[str, Any] = {f.name: getattr(net, f.name) for f in fields(NetworkPart)}
        return HierarchicalPart(**values, hierarchy=",".join(d.text() for d in schedule.system.dimensions),
                                bottleneck=max(terms, key=terms.get),
                                busiest_dimension=int(np.argmax(dimension_busy_s(schedule))))


register_model(Hierarchical, HierarchicalModel())
