"""Ring algorithms on an optical torus: every row ring at once, then every column ring (seed 004 §VI-B).

A phase runs one ring schedule, built by the ring algorithm on a ring of the
row's (column's) length, on every row (column) at once: ring node ``i`` of row
``r`` is torus node ``r C + i`` (of column ``c``: ``i C + c``), and the ring's
colours, directions and bands are kept, each ring having its own channels.
Chunk ``b s + p`` of the ring (piece ``p`` of ring block ``b``, ``s`` pieces per
block) stands for

* in the **first phase** (its own blocks): the torus chunk ``(r C + b) s + p`` on
  row ``r``, ``(b C + c) s + p`` on column ``c``;
* in the **second phase** (units of the other dimension's blocks): the ``C``
  chunks ``(b C + c') s + p`` on a column (``c' = 0..C-1``, the whole row ``b``
  gathered by the first phase), the ``R`` chunks ``(r' C + b) s + p`` on a row.

All-gather runs rows then columns; reduce-scatter runs the mirror, columns
(reducing units) then rows; all-reduce is the two in sequence.  With
``orders=2`` every block is halved and the second half runs the other way
round at the same time (a *stage* of two concurrent phases, one per
dimension).  A side of 1 has no ring and no phase.  Derivation and figures: docs/optical-torus.md.

References
----------
F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024, §VI-B (OpTree on each row, then each column, of an n x n torus);
P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
Workstations", JPDC 69(2), 2009 (ring reduce-scatter and all-gather).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import TYPES, CollectiveType
from ..core.csr import INDEX
from ..core.errors import InputError
from ..core.schedule import LogicalSchedule
from .optree import optree
from .registry import register
from .striped_ring import striped_ring

__all__ = ["lift_phases", "torus_optree", "torus_striped"]


def _phase_rounds(system, ring, dim: int, first: bool, s_ring: int, s: int, offset: int) -> list[dict]:
    """One ring schedule replicated on every ring of dimension ``dim``: one block of columns per round.

    Ring chunk ``b s_ring + p`` is torus piece ``offset + p`` of the block(s) it stands for.
    Within a round the transfers are ring-major (ring 0's, then ring 1's ...), so the rounds
    concatenate in order and the chunk lists are never permuted.
    """
    rings = system.rows if dim == 0 else system.cols
    other = system.rows if dim == 0 else system.cols   # blocks per unit in the second phase
    blk, p = np.divmod(ring.chunk_idx, s_ring)
    p = p + offset
    k = np.arange(rings, dtype=INDEX)[:, None]
    if first:   # own blocks: ring k adds k C s (rows: block (k, b)) or k s (columns: block (b, k))
        base = (blk if dim == 0 else blk * system.cols) * s + p
        delta, width = (system.cols * s if dim == 0 else s), 1
    else:       # units of `other` blocks, the same on every ring of this dimension
        j = np.arange(other, dtype=INDEX)[None, :]
        unit = (blk[:, None] * system.cols + j) if dim == 1 else (j * system.cols + blk[:, None])
        base, delta, width = (unit * s + p[:, None]).reshape(-1), 0, other
    lengths = np.diff(ring.chunk_ptr) * width
    ptr = ring.chunk_ptr * width
    cols = {"src": ring.src, "dst": ring.dst, "reduce": ring.reduce}
    for name, fill, dtype in (("direction", 0, np.int8), ("color", -1, INDEX), ("band", 1, np.int32)):
        col = getattr(ring, name)
        cols[name] = np.full(len(ring.src), fill, dtype) if col is None else col.astype(dtype, copy=False)
    starts = np.flatnonzero(np.concatenate([[True], ring.round[1:] != ring.round[:-1]])) if len(ring.src) else []
    out = []
    for lo, hi in zip(starts, [*starts[1:], len(ring.src)]):
        seg = {name: np.tile(col[lo:hi], rings) for name, col in cols.items()}
        rid = np.repeat(np.arange(rings, dtype=INDEX), hi - lo)
        seg["src"] = system.node_of(dim, rid, seg["src"])
        seg["dst"] = system.node_of(dim, rid, seg["dst"])
        seg["lens"] = np.tile(lengths[lo:hi], rings)
        seg["idx"] = (base[None, ptr[lo]:ptr[hi]] + delta * k).reshape(-1)
        out.append(seg)
    return out


def lift_phases(system, collective, stages) -> LogicalSchedule:
    """Join ring schedules run on every row or column ring into one torus logical schedule.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §VI-B.
    """
    s = collective.split // (system.nodes if collective.type.composed_of else 1)   # all-reduce: N blocks
    segments, rounds, start = [], [], 0
    for stage in stages:
        if len({ph[1] for ph in stage}) != len(stage):
            raise InputError("concurrent phases of a torus stage must run on different dimensions")
        lifted = [_phase_rounds(system, ring, dim, first, ring.collective.split, s, offset[0] if offset else 0)
                  for ring, dim, first, *offset in stage]
        depth = max(len(ph) for ph in lifted)
        for j in range(depth):   # the stage's phases interleaved round by round
            for ph in lifted:
                if j < len(ph):
                    segments.append(ph[j])
                    rounds.append(np.full(len(ph[j]["src"]), start + j, INDEX))
        start += depth
    cols = {k: np.concatenate([seg[k] for seg in segments]) for k in segments[0]}
    ptr = np.zeros(len(cols["src"]) + 1, INDEX)
    np.cumsum(cols.pop("lens"), out=ptr[1:])
    return LogicalSchedule(collective, np.concatenate(rounds), cols["src"], cols["dst"], ptr, cols["idx"],
                           cols["reduce"], direction=cols["direction"], color=cols["color"], band=cols["band"])


def _dims(system, collective: CollectiveType) -> list[int]:
    dims = [d for d, n in ((0, system.cols), (1, system.rows)) if n >= 2]
    return dims[::-1] if collective.direction == "out" else dims   # reduce-scatter: the other way


def _reference() -> str:
    return ("[OpTree24] §VI-B (OpTree on each row of an n x n torus, then on each column); the lifting to "
            "rings of units, the transceiver model and the reduce-scatter order are collsim's own")


def _orders_default(system, orders):
    both = system.rows >= 2 and system.cols >= 2
    if orders is None:
        return 2 if both and not system.shared_transceivers else 1
    if orders not in (1, 2):
        raise InputError(f"torus-striped orders must be 1 (rows then columns) or 2 (half the data each way "
                         f"at once), got {orders!r}")
    return orders if both else 1


def _tune_orders(system, collective: CollectiveType, size_bytes):
    return [{"orders": 1}, {"orders": 2}] if system.rows >= 2 and system.cols >= 2 else [{}]


@register(
    "torus-striped", collectives=("allgather", "reducescatter", "allreduce"), systems=("optical-torus",),
    params=("orders",), tune=_tune_orders,
    reference="[Patarasuk09] (ring reduce-scatter and all-gather); " + _reference(),
    summary="striped bidirectional ring on every row, then on every column (units of a row's blocks)",
)
def torus_striped(system, collective: CollectiveType, size_bytes, *, orders: int | None = None):
    """Build the striped ring on the rows then the columns of an optical torus.

    All-gather: the striped ring all-gather (:func:`~collsim.algorithms.striped_ring.striped_ring`,
    ``2F`` pieces per block, bands of all ``w`` wavelengths) on every row, then on every
    column with each ring block standing for the ``C`` blocks of a row.  Reduce-scatter:
    columns (reducing units of ``C`` blocks) then rows.  All-reduce: reduce-scatter then
    all-gather, the vector cut into ``N`` blocks.  With ``orders=2`` every block is halved:
    one half goes rows then columns while the other goes columns then rows, at the same
    time (both rings of a node busy: worth it only without shared transceivers).  Slots:
    ``(C-1) + (R-1)`` per all-gather or reduce-scatter (``orders=2``: ``2 max(R-1, C-1)``).

    Parameters
    ----------
    system : OpticalTorus
        Target torus.
    collective : CollectiveType
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size (all-gather: each node's block).
    orders : int, optional
        1 (rows then columns) or 2 (both orders at once, ``4F`` pieces per block); default 2
        when the transceivers are not shared and both sides are >= 2, else 1.

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"orders": orders})``.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
    Workstations", JPDC 69(2), 2009; F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree",
    IEEE Open Journal of the Communications Society, 2024, §VI-B.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("torus-striped", "optical-torus", "allgather", "1MiB", system_options={"rows": 4, "cols": 8})
    >>> verify(s).slots, int(s.band.max())
    (10, 64)
    """
    orders = _orders_default(system, orders)
    n, k = system.nodes, 2 * system.fibers
    s = k * orders
    composed = bool(collective.composed_of)   # all-reduce: the vector cut into N blocks
    coll = make_collective(collective, n, size_bytes, split=s * n if composed else s)
    block = max(1, size_bytes // n) if composed else size_bytes

    def phase(dim, kind, first, offset=0):
        ring = system.row_ring if dim == 0 else system.col_ring
        units = 1 if first else (system.cols if dim == 1 else system.rows)
        return striped_ring(ring, kind, block * units)[0], dim, first, offset

    def stages(kind: CollectiveType, dims):   # dims in time order; the last stage of a reduce-scatter holds own blocks
        own = (lambda i: i == len(dims) - 1) if kind.reduction else (lambda i: i == 0)
        out = [[phase(d, kind, own(i))] for i, d in enumerate(dims)]
        if orders == 2:   # the other half, the other way round, at the same time
            for i, d in enumerate(dims[::-1]):
                out[i].append(phase(d, kind, own(i), k))
        return out

    plan = [stage for kind in collective.phases for stage in stages(kind, _dims(system, kind))]
    return lift_phases(system, coll, plan), {"orders": orders}


@register(
    "torus-optree", collectives=("allgather",), systems=("optical-torus",), aliases=("optree-torus",),
    params=("tree", "orders"), realised=("steps", "reconfigurations"), tune=_tune_orders,
    reference="[OpTree24] §IV-A (OpTree on a ring), " + _reference(),
    summary="OpTree all-gather on every row at once, then on every column with units of a row's blocks",
)
def torus_optree(system, collective: CollectiveType, size_bytes, *, tree: str = "search", orders: int = 1):
    """Build OpTree on the rows, then on the columns, of an optical torus (seed 004 §VI-B).

    The row phase is OpTree's all-gather on a ring of ``C`` nodes (tree chosen for blocks of
    ``size_bytes``), run on every row at once; the column phase OpTree on a ring of ``R``
    nodes with blocks of ``C * size_bytes`` (each of its lightpaths carries a row's ``C``
    blocks), run on every column at once.  ``orders=2`` halves every block and runs the
    second half columns then rows at the same time (useful only with transceivers per ring).

    Parameters
    ----------
    system : OpticalTorus
        Target torus.
    collective : CollectiveType
        ``"allgather"``.
    size_bytes : int
        Each node's block.
    tree : str, optional
        OpTree's tree choice in every phase (``"search"``, ``"lemma3-ceil"``, ...).
    orders : int, optional
        1 (default, the paper's rows then columns) or 2 (both orders at once, half each).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``: ``orders``, ``row_radices`` (the rows' tree, own
        blocks), ``col_radices`` (the columns' tree, units of a row); with ``orders=2`` also
        ``col_first_radices`` and ``row_second_radices``; ``steps`` and ``reconfigurations``
        (recomputed from the realised schedule).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §IV-A and §VI-B.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("torus-optree", "optical-torus", "allgather", "4KiB", wavelengths=2,
    ...           system_options={"rows": 4, "cols": 4})
    >>> verify(s).slots, s.params["row_radices"], s.params["col_radices"]   # a one-stage all-to-all per ring
    (2, [4], [4])
    """
    if orders not in (1, 2):
        raise InputError(f"torus-optree orders must be 1 (rows then columns) or 2 (half the data each way at "
                         f"once), got {orders!r}")
    orders = orders if system.rows >= 2 and system.cols >= 2 else 1
    coll = make_collective("allgather", system.nodes, size_bytes, split=orders)
    part = -(-size_bytes // orders)
    params = {"tree": tree, "orders": orders}

    def phase(dim, first, offset, name):
        ring = system.row_ring if dim == 0 else system.col_ring
        units = 1 if first else (system.cols if dim == 1 else system.rows)
        logical, chosen = optree(ring, TYPES["allgather"], part * units, tree=tree)
        params[name] = chosen["radices"]
        return logical, dim, first, offset

    dims = _dims(system, TYPES["allgather"])
    names = {(0, True): "row_radices", (1, False): "col_radices", (1, True): "col_first_radices",
             (0, False): "row_second_radices"}
    stages = [[phase(d, i == 0, 0, names[d, i == 0])] for i, d in enumerate(dims)]
    if orders == 2:
        for i, d in enumerate(dims[::-1]):
            stages[i].append(phase(d, i == 0, 1, names[d, i == 0]))
    params.update(steps=None, reconfigurations=None)
    return lift_phases(system, coll, stages), params
