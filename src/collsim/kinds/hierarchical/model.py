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

from ...core.repeated import step_weights
from ..network.cuts import cut_demand_bytes
from . import symmetry
from .system import Hierarchical
from ..base import Column, register_model
from ..network.model import NetworkModel, NetworkPart

_CHUNK_CELLS = 1 << 22
"""Cuts x nodes (or cuts x links) evaluated per numpy pass (as :mod:`collsim.kinds.network.cuts`)."""


def dimension_bounds_s(system: Hierarchical, collective) -> dict[str, float]:
    """Seconds of link time no schedule beats, per family of cuts of a hierarchical system."""
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
    """Per dimension, the longest any one of its links is busy over the whole schedule."""
    system, routes = schedule.system, schedule.routes
    lt = system.links
    per_transfer = np.asarray(schedule.size_bytes, float)
    weights = step_weights(schedule)   # a step standing for several loads its links as many times
    if weights is not None:
        per_transfer = per_transfer * weights[schedule.step]
    per_path = per_transfer[routes.path_owner] * routes.weights
    load = np.bincount(routes.route_links, weights=np.repeat(per_path, routes.path_hops), minlength=len(lt))
    busy = load / lt.bandwidth_bytes_per_s
    out = np.zeros(len(system.dimensions))
    np.maximum.at(out, system.link_dimension, busy)
    return out


@dataclass(frozen=True)
class HierarchicalPart(NetworkPart):
    """The hierarchical system's fields of a result row: the network's, its dimensions and the binding cut."""

    hierarchy: str
    bottleneck: str
    busiest_dimension: int

    def title(self) -> str:
        """The system part of a comparison table's title: its dimensions."""
        return self.hierarchy.replace(",", " x ")

    @staticmethod
    def columns() -> list[Column]:
        """The network's columns, then the binding cut family (wide tables)."""
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
    """Hierarchical systems: a network whose result rows name the binding per-dimension cut."""

    name = "hierarchical"
    part_class = HierarchicalPart
    symmetry = symmetry    # translations of the coordinates (collsim.kinds.hierarchical.symmetry)

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
