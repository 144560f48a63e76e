"""MPI's own collective on the same input, and the check of a schedule's result against it.

Each kind of collective has its MPI counterpart (:data:`NATIVE`), run on the same data the
schedule starts from (:mod:`collsim.mpi.buffers`).  Circular shift has no MPI collective:
its reference is one ``MPI_Sendrecv`` per rank.  A rank's result is compared chunk by chunk
with the native result: bit-exact for integers, within :func:`collsim.mpi.buffers.tolerance`
for floats.  mpi4py is imported only by the functions that need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..core.errors import DataFlowError, Where
from .buffers import Layout, held_chunks, ranges, tolerance, values

NATIVE = {"allgather": "MPI_Allgather", "reducescatter": "MPI_Reduce_scatter_block", "allreduce": "MPI_Allreduce",
          "broadcast": "MPI_Bcast", "reduce": "MPI_Reduce", "alltoall": "MPI_Alltoall", "scatter": "MPI_Scatter",
          "gather": "MPI_Gather", "scan": "MPI_Scan", "shift": "MPI_Sendrecv"}
"""MPI's function for each collective (circular shift: point-to-point, one exchange per rank)."""


class ResultMismatchError(DataFlowError):
    """A rank ends a schedule's run with data that differs from MPI's own collective.

    Parameters
    ----------
    message : str
        What differs: the rank, the chunk, the element and both values.
    where : Where, optional
        The last step writing the chunk on that rank, the rank (``node``) and the chunk.

    Examples
    --------
    >>> from collsim.core.errors import Where
    >>> print(ResultMismatchError("rank 1 chunk 2 differs", Where(step=3, node=1, chunk=2)))
    result mismatch: rank 1 chunk 2 differs (step 3, node 1, chunk 2)
    """

    kind = "result mismatch"


@dataclass(frozen=True, eq=False)
class Native:
    """MPI's own collective, ready to run on one rank.

    Parameters
    ----------
    name : str
        The MPI function (``MPI_Allgather`` ...).
    run : callable
        Runs it once (same input every time).
    result : numpy.ndarray
        Its output buffer on this rank (empty where the rank gets nothing).
    offsets : numpy.ndarray
        Offset in ``result`` of each of the rank's postcondition chunks, ascending by chunk.

    Examples
    --------
    >>> nat = Native("MPI_Barrier", lambda: None, np.zeros(0), np.zeros(0, np.int64))
    >>> nat.name, nat.result.size
    ('MPI_Barrier', 0)
    """

    name: str
    run: Callable[[], Any]
    result: np.ndarray
    offsets: np.ndarray


def mpi_op(op: str) -> Any:
    """The mpi4py operation for a reduction name.

    Parameters
    ----------
    op : str
        ``sum``, ``prod``, ``max``, ``min``, ``band``, ``bor`` or ``bxor``.

    Returns
    -------
    mpi4py.MPI.Op
        ``MPI.SUM`` ...

    Examples
    --------
    >>> mpi_op("sum")  # doctest: +SKIP
    <mpi4py.MPI.Op object at ...>
    """
    from mpi4py import MPI
    return getattr(MPI, op.upper())


def native_for(comm: Any, lay: Layout, op: str = "sum") -> Native:
    """Set up MPI's own collective for this rank, on the input the schedule starts from.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator (its size is the collective's node count).
    lay : Layout
        The collective's element layout.
    op : str, optional
        Reduction operation.

    Returns
    -------
    Native
        The call, its output buffer and where each postcondition chunk lies in it.

    Examples
    --------
    >>> from mpi4py import MPI  # doctest: +SKIP
    >>> native_for(MPI.COMM_WORLD, lay).name  # doctest: +SKIP
    'MPI_Allgather'
    """
    c = lay.collective
    r, n, b, dt = comm.Get_rank(), c.nodes, lay.block_elems, lay.dtype
    s, kind = c.split, c.kind
    chunks = held_chunks(c.post, r)
    canon = lay.offset_of(chunks)
    own = values(r, np.arange(r * b, (r + 1) * b), dt) if kind in ("allgather", "gather", "shift") else None
    vector = values(r, np.arange(lay.total_elems), dt) if c.reduction else None
    empty = np.zeros(0, dt)
    if kind == "allgather":
        out = np.empty(n * b, dt)
        return Native(NATIVE[kind], lambda: comm.Allgather(own, out), out, canon)
    if kind == "gather":
        out = np.empty(n * b, dt) if r == c.root else empty
        return Native(NATIVE[kind], lambda: comm.Gather(own, out if r == c.root else None, root=c.root), out, canon)
    if kind == "shift":
        out = np.empty(b, dt)
        src = (r - c.shift) % n
        return Native(NATIVE[kind], lambda: comm.Sendrecv(own, (r + c.shift) % n, 0, out, src, 0), out,
                      canon - src * b)
    if kind in ("reducescatter", "scatter"):
        out = np.empty(b, dt)
        if kind == "scatter":
            data = values(c.root, np.arange(n * b), dt) if r == c.root else None
            return Native(NATIVE[kind], lambda: comm.Scatter(data, out, root=c.root), out, canon - r * b)
        return Native(NATIVE[kind], lambda: comm.Reduce_scatter_block(vector, out, mpi_op(op)), out, canon - r * b)
    if kind == "broadcast":
        buf = values(c.root, np.arange(lay.total_elems), dt) if r == c.root else np.zeros(lay.total_elems, dt)
        return Native(NATIVE[kind], lambda: comm.Bcast(buf, root=c.root), buf, canon)
    if kind == "alltoall":
        send = values(r, np.arange(r * n * b, (r + 1) * n * b), dt)
        out = np.empty(n * b, dt)
        offsets = chunks // s // n * b + lay.piece_offset[chunks % s]
        return Native(NATIVE[kind], lambda: comm.Alltoall(send, out), out, offsets)
    mop = mpi_op(op)
    if kind == "reduce":
        out = np.empty(lay.total_elems, dt) if r == c.root else empty
        return Native(NATIVE[kind], lambda: comm.Reduce(vector, out if r == c.root else None, mop, root=c.root),
                      out, canon)
    out = np.empty(lay.total_elems, dt)
    call = comm.Scan if kind == "scan" else comm.Allreduce
    return Native(NATIVE[kind], lambda: call(vector, out, mop), out, canon)


def first_mismatch(got: np.ndarray, want: np.ndarray, elems: np.ndarray, tol: float,
                   relative: bool = False) -> tuple[int, int] | None:
    """The first element where a result differs from the reference beyond a tolerance.

    Parameters
    ----------
    got, want : numpy.ndarray
        The schedule's and the reference's elements, chunk after chunk.
    elems : numpy.ndarray
        Elements of each chunk, in the same order.
    tol : float
        Allowed difference (0: bit-exact).
    relative : bool, optional
        ``tol`` is relative to the reference's magnitude.

    Returns
    -------
    tuple of int or None
        ``(chunk position, element index in the chunk)``, or None if they agree.

    Examples
    --------
    >>> first_mismatch(np.array([1, 2, 3, 4]), np.array([1, 2, 3, 5]), np.array([2, 2]), 0.0)
    (1, 1)
    >>> first_mismatch(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-15]), np.array([2]), 1e-12) is None
    True
    """
    if tol == 0.0:
        bad = got != want
        if got.dtype.kind == "f":
            bad &= ~(np.isnan(got) & np.isnan(want))
    else:
        limit = tol * np.abs(want) if relative else tol
        with np.errstate(invalid="ignore"):
            bad = ~((got == want) | (np.abs(got - want) <= limit))
    if not bad.any():
        return None
    at = int(np.argmax(bad))
    ends = np.cumsum(elems)
    pos = int(np.searchsorted(ends, at, side="right"))
    return pos, at - int(ends[pos] - elems[pos])


def check_result(comm: Any, lay: Layout, rank: int, chunks: np.ndarray, last_step: np.ndarray, got: np.ndarray,
                 native: Native, op: str) -> None:
    """Compare this rank's result with MPI's; every rank raises the lowest rank's mismatch.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator (every rank calls this).
    lay : Layout
        The collective's layout.
    rank : int
        This rank.
    chunks : numpy.ndarray
        The rank's postcondition chunks, ascending.
    last_step : numpy.ndarray
        The last step writing each of them (-1: never).
    got : numpy.ndarray
        The schedule's result: the chunks' elements, chunk after chunk.
    native : Native
        MPI's collective, run on the same input.
    op : str
        Reduction operation.

    Returns
    -------
    None

    Raises
    ------
    ResultMismatchError
        On every rank, naming the lowest differing rank, its first wrong chunk, the last step
        writing it and the element's two values.

    Examples
    --------
    >>> check_result(comm, lay, 0, chunks, last, got, native, "sum")  # doctest: +SKIP
    """
    elems = lay.elems_of(chunks)
    want = native.result[ranges(native.offsets, elems)]
    tol = tolerance(lay.dtype, op, lay.collective.nodes)
    bad = first_mismatch(got, want, elems, tol, relative=op == "prod")
    mine = None
    if bad is not None:
        pos, at = bad
        base = int(elems[:pos].sum()) + at
        mine = (rank, int(chunks[pos]), int(last_step[pos]), at, got[base].item(),
                want[base].item())
    found = [m for m in comm.allgather(mine) if m is not None]
    if found:
        rank, chunk, step, at, value, ref = found[0]
        when = f"last written in step {step}" if step >= 0 else "never written by the schedule"
        raise ResultMismatchError(
            f"rank {rank} ends with chunk {chunk} wrong ({when}): element {at} is {value}, {native.name} gives "
            f"{ref} ({lay.dtype.name}, op {op}; {len(found)} rank{'s' if len(found) > 1 else ''} differ)",
            Where(step=step if step >= 0 else None, node=rank, chunk=chunk))


__all__ = ["NATIVE", "Native", "ResultMismatchError", "check_result", "first_mismatch", "mpi_op", "native_for"]
