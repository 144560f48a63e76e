"""The textbook's algorithms on a square 2-D mesh (or torus) of p = a x a nodes.

Node ``(row, col)`` is ``row * a + col`` (row-major, last dimension fastest, as
:class:`~collsim.kinds.network.mesh_torus.Mesh` numbers them).  Every algorithm works
row-wise, then column-wise, each row or column behaving as a linear array of
``a = sqrt(p)`` nodes:

* one-to-all broadcast / all-to-one reduction: the halving tree
  (:func:`~collsim.algorithms.common.halving_rounds`) along the
  root's row, then along every column (reduction: columns first, reversed);
* scatter / gather: the same trees, the row phase carrying whole columns;
* all-to-all broadcast: a ring all-gather in every row, then in every column
  with the row's ``a`` blocks consolidated (messages of ``m sqrt(p)``);
* all-to-all reduction (reduce-scatter): the dual, columns first;
* all-reduce: all-to-all reduction then all-to-all broadcast of p blocks of m/p;
* all-to-all personalized: the ring algorithm in every row with messages
  grouped by destination column, then in every column;
* circular q-shift: ``q mod a`` row shifts, one compensation step for the data
  that wrapped around its row, then ``q // a`` column shifts, each by
  neighbour steps in the shorter direction.

On a mesh without wrap-around links the "ring" neighbour of the last node of a
row is its first node, reached over the row's reverse links; no other flow of
the step uses them, so every step stays congestion-free.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder
from .common import (
    ceil_log2,
    check_root,
    check_shift,
    halving_rounds,
    tree_schedule,
    ts_tw,
)
from .latency import logical_rounds, rounds_ts_s
from .registry import register

SEED = "[Grama03] ch. 4"  # Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations' (and its slides)


def _side(system) -> int | None:
    dims = getattr(system, "dims", None)
    if dims is None or len(dims) != 2 or dims[0] != dims[1]:
        return None
    return int(dims[0])


def _requires(system, collective: CollectiveType):
    dims = getattr(system, "dims", None)
    if dims is None or len(dims) != 2:
        return (f"the textbook mesh algorithms need a 2-D mesh or torus with dims (a, a); "
                f"{system.topology} systems have {'no dims' if dims is None else f'dims {tuple(dims)}'}")
    if dims[0] != dims[1]:
        return f"the textbook mesh algorithms need a square sqrt(p) x sqrt(p) grid, got dims {tuple(dims)}"
    return None


def shift_rounds(a: int, q: int) -> tuple[int, int, int]:
    """Neighbour steps of the chapter's q-shift on an ``a x a`` mesh.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4, "Circular Shift on a Mesh": at most
    ``sqrt(p) + 1`` neighbour steps (seed 002).
    """
    qr, qc = divmod(q, a)
    return min(qc, a - qc), int(qc > 0), min(qr, a - qr)


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    # t_s per round: the start-up plus the latency of every link of the round's farthest message
    # (rounds_ts_s over the rounds the builder emits; the chapter's t_s counts are its round counts)
    _, tw = ts_tw(system)
    logical, _ = mesh(system, collective, size_bytes, **{k: params[k] for k in ("root", "shift") if k in params})
    t_s = rounds_ts_s(system, logical_rounds(logical))
    a = _side(system)
    p, m = a * a, size_bytes
    if collective.name in ("broadcast", "reduce"):        # (t_s + t_w m) log p  (2 log sqrt(p))
        return t_s + tw * m * 2 * ceil_log2(a)
    if collective.name in ("scatter", "gather"):          # t_s log p + t_w m (p-1)
        return t_s + tw * m * (p - 1)
    if collective.name in ("allgather", "reducescatter"):  # 2 t_s (sqrt(p)-1) + t_w m (p-1)
        return t_s + tw * m * (p - 1)
    if collective.name == "allreduce":                    # the above twice, on blocks of m/p
        return t_s + 2 * tw * (m / p) * (p - 1)
    if collective.name == "alltoall":                     # (2 t_s + t_w m p)(sqrt(p)-1)
        return t_s + tw * m * p * (a - 1)
    return t_s + tw * m * sum(shift_rounds(a, params.get("shift", 1)))  # <= (t_s + t_w m)(sqrt(p)+1)


@register(
    "mesh", aliases=("textbook-mesh",),
    collectives=("broadcast", "reduce", "scatter", "gather", "allgather", "reducescatter", "allreduce",
                 "alltoall", "shift"),
    systems=("network",), requires=_requires, params=("root", "shift"), alpha_beta=_alpha_beta,
    constraints="a 2-D mesh or torus with dims (a, a)",
    reference=f"{SEED}: broadcast and reduction on a mesh (row, then columns), all-to-all broadcast on a "
              "mesh (ALL_TO_ALL_BC_MESH, 2 t_s (sqrt(p)-1) + t_w m (p-1)), scatter (t_s log p + t_w m (p-1) "
              "holds for a 2-D mesh), all-to-all personalized on a mesh ((2 t_s + t_w m p)(sqrt(p)-1)), "
              "circular shift on a mesh (<= (t_s + t_w m)(sqrt(p)+1)); all-reduce as reduce-scatter + "
              "all-gather (the slides' ML-training section)",
    summary="square-mesh textbook algorithms: row phase, then column phase",
)
def mesh(system, collective: CollectiveType, size_bytes, *, root: int = 0, shift: int = 1):
    """Build the textbook's square-mesh schedules.

    Parameters
    ----------
    system : Mesh or Torus
        A 2-D grid with ``dims == (a, a)``.
    collective : CollectiveType
        Canonical collective name.
    size_bytes : int
        Message size m (see :mod:`collsim.core.collective`).
    root : int, optional
        Root of broadcast, reduce, scatter and gather (default 0).
    shift : int, optional
        q of the circular shift (default 1).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    Raises
    ------
    UnsupportedError
        On a system that is not a square 2-D mesh or torus (via ``requires``).

    References
    ----------
    Seed 002 (Grama et al.), sections on broadcast and reduction, all-to-all broadcast,
    scatter, all-to-all personalized communication and circular shift on a mesh.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.mesh_torus import Mesh
    >>> collsim.build("mesh", Mesh.from_dims((3, 3)), "allgather", "1KiB").num_steps
    4
    """
    a = _side(system)
    if a is None:
        raise InputError(_requires(system, collective))
    p = a * a
    node = np.arange(p)
    row, col = np.divmod(node, a)
    right, down = row * a + (col + 1) % a, ((row + 1) % a) * a + col
    cols = np.arange(a)
    t = collective
    if t.rooted:
        root = check_root(root, p)
        b = LogicalBuilder(make_collective(collective, p, size_bytes, root=root))
        rr, rc = divmod(root, a)
        along_row = [(rr * a + o, rr * a + t, lo, hi) for o, t, lo, hi in halving_rounds(a, rc)]
        along_col = [tuple((x[:, None] * a + cols[None, :]).ravel() for x in rnd)
                     for rnd in halving_rounds(a, rr)]
        # row phase: columns [lo, hi) whole; column phase: rows [lo, hi) of one column (ids lo*a + c)
        row_kw = {"count": lambda lo, hi: (hi - lo) * a,
                  "chunks": lambda lo, hi, k: (np.arange(a)[None, :, None] * a + lo[:, None, None]
                                               + np.arange(k // a)[None, None, :]).reshape(len(lo), k)}
        col_kw = {"count": lambda lo, hi: (hi - lo) // a,
                  "chunks": lambda lo, hi, k: lo[:, None] + a * np.arange(k)[None, :]}
        if t.direction == "in":   # out of the root (broadcast, scatter): its row first
            used = tree_schedule(b, along_row, collective, **row_kw)
            tree_schedule(b, along_col, collective, first_round=used, **col_kw)
        else:
            used = tree_schedule(b, along_col, collective, **col_kw)
            tree_schedule(b, along_row, collective, first_round=used, **row_kw)
        return b.build(), {"root": root}
    if t.shifted:
        return _shift(size_bytes, a, check_shift(shift, p))
    if t.per_pair:   # all-to-all personalized
        return _alltoall(size_bytes, a), {}
    b = LogicalBuilder(make_collective(collective, p, size_bytes, split=p if t.composed_of else 1))
    for phase, r0 in zip(t.phases, (0, 2 * (a - 1))):   # all-reduce: reduce-scatter, then all-gather
        if phase.reduction:
            for k in range(a - 1):  # columns: partial sums of the a blocks of destination row g
                g = (row - 1 - k) % a
                b.add(r0 + k, node, down, g[:, None] * a + cols[None, :], reduce=True)
            for k in range(a - 1):  # rows: block (r, (c-1-k) mod a)
                b.add(r0 + a - 1 + k, node, right, (row * a + (col - 1 - k) % a)[:, None], reduce=True)
        else:
            for k in range(a - 1):  # rows: block (r, c-k)
                b.add(r0 + k, node, right, (row * a + (col - k) % a)[:, None])
            for k in range(a - 1):  # columns: the a blocks of row r-k
                b.add(r0 + a - 1 + k, node, down, ((row - k) % a)[:, None] * a + cols[None, :])
    return b.build(), {}


def _alltoall(size_bytes: int, a: int):
    """Ring all-to-all personalized along rows (grouped by destination column), then columns."""
    p = a * a
    node = np.arange(p)
    row, col = np.divmod(node, a)
    b = LogicalBuilder(make_collective("alltoall", p, size_bytes))
    allr = np.arange(a)
    for k in range(a - 1):
        j = np.arange(k + 1, a)
        src = row * a + (col - k) % a                                 # group's origin in the row
        dcol = ((col - k)[:, None] + j[None, :]) % a                   # (p, a-1-k) destination columns
        dst = allr[None, None, :] * a + dcol[:, :, None]               # every destination row
        b.add(k, node, row * a + (col + 1) % a, (src[:, None, None] * p + dst).reshape(p, -1))
    for k in range(a - 1):
        j = np.arange(k + 1, a)
        orow = (row - k) % a                                           # group's origin row
        src = orow[:, None] * a + allr[None, :]                        # (p, a) sources in that row
        drow = (orow[:, None] + j[None, :]) % a                        # (p, a-1-k)
        dst = drow * a + col[:, None]
        b.add(a - 1 + k, node, ((row + 1) % a) * a + col,
              (src[:, :, None] * p + dst[:, None, :]).reshape(p, -1))
    return b.build()


def _shift(size_bytes: int, a: int, q: int):
    """Row shifts, compensation of wrapped data, column shifts (chapter's mesh q-shift)."""
    p = a * a
    node = np.arange(p)
    row, col = np.divmod(node, a)
    qr, qc = divmod(q, a)
    n_row, n_comp, n_col = shift_rounds(a, q)
    b = LogicalBuilder(make_collective("shift", p, size_bytes, shift=q))
    sign = 1 if qc <= a - qc else -1
    for k in range(n_row):  # node (r, c) holds the block of (r, c - sign k)
        b.add(k, node, row * a + (col + sign) % a, (row * a + (col - sign * k) % a)[:, None])
    # after the row phase node (r, c) holds the block of (r, c - qc); it wrapped iff c < qc
    origin = row * a + (col - qc) % a
    wrapped = col < qc
    if n_comp:
        w = node[wrapped]
        b.add(n_row, w, ((row[w] + 1) % a) * a + col[w], origin[w][:, None])
        origin = np.where(wrapped, ((row - 1) % a) * a + (col - qc) % a, origin)
    sign = 1 if qr <= a - qr else -1
    for k in range(n_col):  # column shifts of the (compensated) blocks
        b.add(n_row + n_comp + k, node, ((row + sign) % a) * a + col,
              origin[((row - sign * k) % a) * a + col][:, None])
    return b.build(), {"shift": q}
