"""All-gather along every dimension of a mesh at once: each block cut into ``d`` parts, part ``j``
gathered dimension by dimension in the order ``j, j+1, ..., j-1`` (rotated).

On a ``d``-dimensional mesh every line (nodes that differ in one coordinate) runs the *linear-array
all-gather*: in step ``t = 1 .. L-1`` node ``i`` sends to ``i + 1`` the unit that started at
``i - t + 1`` and to ``i - 1`` the unit that started at ``i + t - 1``, so that every link of the line
carries one unit a step each way and every node receives every unit once.  A *phase* runs it on
every line of one dimension; a unit is what a node holds of its part after the earlier phases (the
part of every node that differs from it only in the dimensions already gathered).  The ``d`` parts
run their phases side by side, part ``j`` on dimension ``(j + p) mod d`` in phase ``p``, so that no
two parts share a link in a phase and every link of every dimension is busy in every phase.  On
a torus whose sides all exceed 2 every line is a ring, and there are ``2 d`` parts, one per order
and direction, each sent around its rings in ``L - 1`` steps a phase.

On the square mesh ``a^d`` with equal links this meets the bound.  A corner has ``d`` in-links and
must receive ``(N - 1) m`` bytes, so no schedule beats ``(N - 1) m / (d B)``.  Phase ``p`` takes
``a - 1`` steps of ``a^p m / (d B)`` each, and ``sum_p (a - 1) a^p = a^d - 1``.  So the schedule
takes ``(N - 1) m / (d B)`` plus one latency and start-up a step, ``d (a - 1)`` of them.  Gathering
the dimensions in one order for the whole block (the textbook's rows then columns) keeps the other
dimensions' links idle in each phase and reaches half the bound on a 2-D mesh.  On other meshes
(sides that differ) it stays correct and its parts wait for the longest line of each phase.
Reduce-scatter is the mirror image (every transfer reversed in time and direction, reducing);
all-reduce is the reduce-scatter then the all-gather, on blocks of ``1/N`` of the vector.

Derivation: docs/synthesis.md, "Meshes: every dimension at once".

References
----------
A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
Addison-Wesley, 2003, ch. 4 (all-to-all broadcast on a linear array and on a mesh, dimension by
dimension); W. Won et al., "TACOS: Topology-Aware Collective Algorithm Synthesizer for Distributed
Machine Learning", arXiv 2304.05301, 2023 (the meshes this serves).  Splitting the block among the rotated
dimension orders is collsim's own (as the optical torus's ``orders=2``, docs/optical-torus.md).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.csr import INDEX
from ..core.schedule import LogicalBuilder
from .registry import register

__all__ = ["rotated_dims"]


def _requires(system, collective: CollectiveType):
    dims = getattr(system, "dims", None)
    if dims is None or getattr(system, "topology", None) not in ("mesh", "torus"):
        return (f"rotated-dims needs a mesh or torus with dims; {getattr(system, 'topology', 'this')} systems "
                "have none")
    return None


def _strides(dims: tuple[int, ...]) -> np.ndarray:
    """Row-major strides (the last dimension fastest), as the grid numbers its nodes."""
    out = np.ones(len(dims), INDEX)
    for k in range(len(dims) - 2, -1, -1):
        out[k] = out[k + 1] * dims[k + 1]
    return out


def _offsets(dims, strides, gathered) -> np.ndarray:
    """Node offsets spanning the ``gathered`` dimensions (0 first): a unit's members from its base node."""
    out = np.zeros(1, INDEX)
    for g in gathered:
        out = (out[:, None] + np.arange(dims[g], dtype=INDEX)[None, :] * strides[g]).reshape(-1)
    return np.sort(out)


def ring_mode(system) -> bool:
    """Whether every line is a ring: a torus whose every side is above 2 (a side of 2 has one link each
    way, no wrap-around of its own)."""
    return bool(getattr(system, "wrap", False)) and min(system.dims) > 2


def allgather_rounds(dims: tuple[int, ...], rings: bool = False):
    """Yield ``(round, src, dst, chunks)`` of the all-gather, phase by phase and part by part.

    On a mesh (``rings`` False) there are ``d`` parts, each line running the linear-array
    all-gather; on a torus ``2 d``: part ``(j, h)`` gathers in order ``j``'s dimensions around
    its rings in one direction (``h = 0`` up, ``1`` down), ``L - 1`` steps a phase.  ``chunks`` is
    ``(T, unit)``: chunk ``w P + q`` is part ``q`` (``q = 2 j + h`` on a torus) of node ``w``'s
    block, ``P`` parts a block.
    """
    d = len(dims)
    n = int(np.prod(dims))
    parts = 2 * d if rings else d
    strides = _strides(dims)
    node = np.arange(n, dtype=INDEX)
    coord = [(node // strides[k]) % dims[k] for k in range(d)]
    start = 0
    for p in range(d):
        for q in range(parts):
            j = q // 2 if rings else q
            dim = (j + p) % d
            gathered = [(j + r) % d for r in range(p)]
            offs = _offsets(dims, strides, gathered)
            base_of = node.copy()
            for g in gathered:
                base_of -= coord[g] * strides[g]
            length, stride, c = dims[dim], strides[dim], coord[dim]
            for t in range(1, length):
                for sign in ((1 - 2 * (q % 2),) if rings else (1, -1)):
                    if rings:   # every node sends to its neighbour the unit that started t - 1 behind it
                        src = node
                        dst = src + (((c + sign) % length) - c) * stride
                        origin = src + (((c - sign * (t - 1)) % length) - c) * stride
                    else:       # i -> i + 1 carries the unit from i - t + 1; i -> i - 1 from i + t - 1
                        ok = (c >= t - 1) & (c <= length - 2) if sign > 0 else (c >= 1) & (c <= length - t)
                        src = node[ok]
                        dst = src + sign * stride
                        origin = src - sign * (t - 1) * stride
                    members = base_of[origin][:, None] + offs[None, :]
                    yield start + t - 1, src, dst, members * parts + q
        start += max(dims[(j + p) % d] for j in range(d)) - 1


def _build(system, collective: CollectiveType, size_bytes):
    dims = tuple(int(k) for k in system.dims)
    d, n = len(dims), system.nodes
    rings = ring_mode(system)
    parts = 2 * d if rings else d
    rounds = list(allgather_rounds(dims, rings))
    total = max(r for r, *_ in rounds) + 1 if rounds else 0
    if collective.name == "allgather":
        coll = make_collective(collective, n, size_bytes, split=parts)
        phases = [(False, 0)]
    elif collective.name == "reducescatter":
        coll = make_collective(collective, n, size_bytes, split=parts)
        phases = [(True, 0)]
    else:  # all-reduce: the reduce-scatter of blocks of 1/N of the vector, then their all-gather
        coll = make_collective(collective, n, size_bytes, split=n * parts)
        phases = [(True, 0), (False, total)]
    b = LogicalBuilder(coll)
    for reduce, offset in phases:
        for rnd, src, dst, chunks in rounds:
            if reduce:      # the mirror image: reversed in time and direction, combining at the receiver
                b.add(offset + total - 1 - rnd, dst, src, chunks, reduce=True)
            else:
                b.add(offset + rnd, src, dst, chunks)
    return b.build(), {}


def _transfers(system, collective: CollectiveType, params) -> int:
    # per phase and part, each line of L nodes delivers its L units to the L - 1 others, one
    # transfer each: L (L - 1) a line, N (L - 1) over the N / L lines; twice the parts on a torus
    dims = tuple(int(k) for k in system.dims)
    d, n = len(dims), system.nodes
    per = sum(n * (dims[(j + p) % d] - 1) for p in range(d) for j in range(d))
    return per * (2 if ring_mode(system) else 1) * (2 if collective.composed_of else 1)


@register("rotated-dims", collectives=("allgather", "reducescatter", "allreduce"), systems=("network",),
          requires=_requires, transfers=_transfers,
          constraints="a mesh or torus (its dims); meets the bound on a square mesh a^d with equal links",
          reference="[Grama03] ch. 4 (all-to-all broadcast on a linear array and a mesh, dimension by dimension); "
                    "[TACOS23] (the meshes); the block split among the d rotated dimension orders is collsim's own",
          summary="every line's linear all-gather, d parts of each block gathering the dimensions in rotated orders")
def rotated_dims(system, collective: CollectiveType, size_bytes):
    """Build the all-gather (reduce-scatter, all-reduce) that gathers every dimension at once.

    Parameters
    ----------
    system : Mesh or Torus
        A grid network (``dims``); on a torus the wrap-around links stay unused.
    collective : CollectiveType
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        collsim's size: a node's block (all-gather, reduce-scatter) or the vector (all-reduce).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {})``.

    References
    ----------
    A. Grama et al., "Introduction to Parallel Computing", 2nd ed., 2003, ch. 4; docs/synthesis.md,
    "Meshes: every dimension at once".

    Examples
    --------
    >>> from collsim import build, evaluate
    >>> s = build("rotated-dims", "mesh", "allgather", "1MiB", system_options={"dims": (4, 4)})
    >>> s.num_rounds, len(s), round(evaluate(s).efficiency, 2)
    (6, 192, 0.99)
    """
    return _build(system, collective, size_bytes)
