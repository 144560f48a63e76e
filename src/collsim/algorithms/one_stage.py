"""One-stage model (OSM): every transfer is a direct lightpath, one logical round.

All-gather and all-to-all use the exact optimal wavelength construction for
uniform one-hop all-to-all on a ring (docs/derivations/alltoall-ring.md), so the
round needs exactly ceil(W / (F w)) physical steps with W = ceil(floor(N^2/4)/2)
wavelengths per direction.  Reduce-scatter uses the same lightpaths with
reductions; all-reduce is one-hop reduce-scatter then one-hop all-gather of the
reduced blocks; broadcast and reduce are a star of lightpaths at the root,
coloured by the chosen wavelength-assignment strategy.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from ..kinds.optical_ring.alltoall import uniform_alltoall_ring
from .registry import register


def _paper_steps(system, collective: CollectiveType, params):
    if collective.name != "allgather":
        return None
    return math.ceil(system.nodes**2 / (8 * system.wavelengths * system.fibers))


@register(
    "osm", collectives=("allgather", "alltoall", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("optical-ring",), aliases=("one-stage",), paper_steps=_paper_steps,
    reference="[OpTree24] §III-B Lemma 1 and Table 1 (OSM, ceil(N^2/8w) steps); wavelength optimum: [Opatrny03]",
    summary="one-stage model: direct lightpaths between all pairs, optimal wavelength construction",
)
def one_stage(system, collective: CollectiveType, size_bytes):
    """Build one-stage (single-hop) schedules.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        Canonical collective name.
    size_bytes : int
        Message size.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    Seed 004 (OpTree journal), §III-B, Lemma 1 and Table 1; seed 000 §III.

    Examples
    --------
    >>> from collsim import build
    >>> build("osm", "paper", "allgather", "1MiB", nodes=16, wavelengths=2).num_steps
    16
    """
    n = system.nodes
    if collective.name in ("allgather", "alltoall", "reducescatter", "allreduce"):
        split = {"allreduce": n}.get(collective.name, 1)
        coll = make_collective(collective, n, size_bytes, split=split)  # refuses oversized instances first
        a2a = uniform_alltoall_ring(n)
        s, d = a2a.src, a2a.dst
        color = a2a.wavelength
        direction = a2a.direction
        # in the order of the slots the colours fall in (a slot holds every fibre's wavelengths), keeping the
        # construction's order within a slot: realisation then lays the slots out without permuting the
        # transfers, so the physical schedule shares the logical one's columns instead of copying them
        slot = color // (system.fibers * system.wavelengths)
        if len(slot) > 1 and not (slot[1:] >= slot[:-1]).all():
            order = np.argsort(slot, kind="stable")
            s, d, color, direction = s[order], d[order], color[order], direction[order]
            del order
        del slot
        b = LogicalBuilder(coll)
        if collective.name == "allgather":
            b.add(0, s, d, s[:, None], direction=direction, color=color)
        elif collective.name == "alltoall":
            b.add(0, s, d, (s * n + d)[:, None], direction=direction, color=color)
        else:
            b.add(0, s, d, d[:, None], reduce=True, direction=direction, color=color)
            if collective.name == "allreduce":
                b.add(1, s, d, s[:, None], direction=direction, color=color)
        return b.build(), {"wavelengths_per_direction": a2a.wavelengths_per_direction}
    root = 0
    coll = make_collective(collective, n, size_bytes, root=root)
    b = LogicalBuilder(coll)
    others = np.arange(1, n)
    zeros = np.zeros((n - 1, 1), dtype=np.int64)
    if collective.name == "broadcast":
        b.add(0, np.full(n - 1, root), others, zeros)
    else:
        b.add(0, others, np.full(n - 1, root), zeros, reduce=True)
    return b.build(), {}
