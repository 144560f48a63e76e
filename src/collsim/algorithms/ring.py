"""Ring algorithms: every node talks only to its clockwise neighbour.

All-gather in N-1 rounds (the papers' baseline, one wavelength); reduce-scatter
in N-1 rounds; all-reduce as reduce-scatter followed by all-gather, 2(N-1)
rounds (Patarasuk & Yuan 2009; seed 002's last slides); broadcast and reduce
as a pipelined chain.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.errors import UnsupportedError
from ..core.plugins import model_for
from ..core.limits import check_memory
from ..core.schedule import LogicalBuilder, realised_floor_bytes
from ..core.symmetry import Translations
from ..core.validate import positive_integer
from .common import rotations, rotations_by, stripe_band  # noqa: F401  (rotations: this family's, shared)
from .registry import register


def _paper_steps(system, collective: CollectiveType, params):
    # the paper's Ring sends each block on one wavelength; a striped ring has no paper formula
    return system.nodes - 1 if collective.name == "allgather" and params.get("stripe", 1) == 1 else None


def _tune(system, collective: CollectiveType, size_bytes):
    # collsim tune: bands of 1, 2, 4 ... w wavelengths on optical rings; pipeline depths for broadcast/reduce
    w = getattr(system, "wavelengths", 0) if model_for(system).name == "optical-ring" else 0
    stripes = [{"stripe": s} for s in sorted({1 << j for j in range(w.bit_length())} | {w})] if w else [{}]
    depths = [{"chunks": c} for c in (1, 4, 16, 64, 256, 1024) if c <= min(size_bytes, (1 << 18) // system.nodes)] \
        if collective.rooted else [{}]
    return [{**s, **c} for s in stripes for c in depths]


def _orbits(system, collective: CollectiveType, size_bytes, *, chunks: int = 1, stripe: int = 1, group=None):
    # the transfers into the domain 0..D-1 of the ring's rotations by multiples of D (D = 1: all of
    # them): in round r, node v-1 sends chunk (v-1-r) mod N (all-gather) or its partial of (v-2-r)
    # mod N (reduce-scatter); rotating them gives every node's (node i sends chunk i-r to i+1).
    # ``group``: the rotations given (the data flow's, _flow_group), not the system's
    if collective.rooted or positive_integer("chunks", chunks) != 1:
        return None
    group = rotations(system) if group is None else group
    if group is None:
        return None
    n = system.nodes
    d = len(group.domain())                                   # the domain: nodes 0..D-1
    reps = len(collective.phases) * (n - 1) * d               # one chunk each; refused before they are made
    check_memory(realised_floor_bytes(reps, reps), f"building ring's {collective.name} representatives on {n} nodes "
                 f"({reps} transfers into {d} nodes, under {group.order} rotations)",
                 "use fewer nodes or another algorithm")
    band = stripe_band(system, stripe)
    b = LogicalBuilder(make_collective(collective, n, size_bytes, split=n if collective.composed_of else 1,
                                       explicit=False))
    r = np.repeat(np.arange(n - 1, dtype=np.int64), d)        # round by round, receivers in order
    v = np.tile(np.arange(d, dtype=np.int64), n - 1)
    src = (v - 1) % n
    for p, phase in enumerate(collective.phases):
        reduce = phase.reduction
        b.add(p * (n - 1) + r, src, v, ((v - 1 - int(reduce) - r) % n)[:, None], reduce=reduce, direction=1,
              band=band)
    return b.build(), ({"stripe": band} if band > 1 else {}), group


def _flow_group(system, collective: CollectiveType):
    # every rotation moves the ring's data flow onto itself, whatever links join the nodes
    return None if collective.rooted else Translations((system.nodes,))


def _transfers(system, collective: CollectiveType, params) -> int:
    # one chunk a transfer: every node sends once a round, N - 1 rounds a phase; a pipelined chain
    # sends each of its pieces over N - 1 hops
    n = system.nodes
    if collective.rooted:
        return int(params.get("chunks", 1)) * (n - 1)
    return n * (n - 1) * len(collective.phases)


@register(
    "ring", collectives=("allgather", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("optical-ring", "network"), aliases=("ring-allgather",), paper_steps=_paper_steps,
    params=("chunks", "stripe"), tune=_tune, orbits=_orbits, transfers=_transfers, flow_group=_flow_group,
    reference="[OpTree24] §IV-A.2 and Table 1 (Ring all-gather, N-1 steps, after [Chen05b]); ring "
              "all-reduce: [Patarasuk09], and [Grama03] (the slides' ring all-reduce in ML training)",
    summary="neighbour ring: N-1 rounds per phase, one wavelength",
)
def ring(system, collective: CollectiveType, size_bytes, *, chunks: int = 1, stripe: int = 1):
    """Build ring schedules.

    Round ``r`` of all-gather: node ``i`` sends chunk ``(i - r) mod N`` to ``i + 1``.
    Reduce-scatter: node ``i`` sends its partial of chunk ``(i - 1 - r) mod N`` to
    ``i + 1``, which reduces it; node ``i`` ends with chunk ``i``.  All-reduce is the
    two in sequence over N chunks.  Broadcast and reduce pipeline ``chunks`` pieces
    along the chain ``root, root+1, ...`` in ``chunks + N - 2`` rounds.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        Canonical collective name.
    size_bytes : int
        Message size.
    chunks : int, optional
        Pipeline depth for broadcast and reduce (default 1).
    stripe : int, optional
        On optical rings, send every block over a band of ``stripe`` consecutive
        wavelengths at once (default 1, the papers' single wavelength): each
        transfer's serialisation time is its size over ``stripe`` wavelengths' rate.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    Seed 004 (Dai et al., OpTree journal version), §IV-A.2 and Table 1: Ring
    all-gather takes N-1 steps of size d.

    Examples
    --------
    >>> from collsim import build
    >>> build("ring", "paper", "allgather", "1MiB", nodes=16).num_steps
    15
    >>> build("ring", "paper", "allgather", "1MiB", nodes=16, stripe=64).band.max()
    np.int32(64)
    """
    n = system.nodes
    i = np.arange(n)
    band = stripe_band(system, stripe)
    extra = {"stripe": band} if band > 1 else {}
    k = positive_integer("chunks", chunks)
    if k != 1 and not collective.rooted:  # never silently ignore a parameter
        raise UnsupportedError(f"ring: chunks={k} pipelines broadcast and reduce; {collective.name} sends one block "
                               f"(or one N-th of the vector) per transfer")
    if not collective.rooted:   # all-gather, reduce-scatter, or the two in sequence over N chunks (all-reduce)
        b = LogicalBuilder(make_collective(collective, n, size_bytes, split=n if collective.composed_of else 1))
        for p, phase in enumerate(collective.phases):
            reduce = phase.reduction   # reduce-scatter: the partial of chunk i-1-r; all-gather: chunk i-r
            for r in range(n - 1):
                b.add(p * (n - 1) + r, i, (i + 1) % n, ((i - int(reduce) - r) % n)[:, None], reduce=reduce, direction=1,
                      band=band)
        return b.build(), extra
    root = 0
    coll = make_collective(collective, n, size_bytes, split=k, root=root)
    b = LogicalBuilder(coll)
    j = np.arange(n - 1)
    for r in range(k + n - 2):
        c = r - j
        ok = (c >= 0) & (c < k)
        if not collective.reduction:   # broadcast: chain root -> root+1 -> ...
            b.add(r, (root + j[ok]) % n, (root + j[ok] + 1) % n, c[ok][:, None], direction=1, band=band)
        else:  # reduce: chain root+1 -> ... -> root-1 -> root
            b.add(r, (root + 1 + j[ok]) % n, (root + 2 + j[ok]) % n, c[ok][:, None], reduce=True, direction=1,
                  band=band)
    return b.build(), {"chunks": k, **extra}
