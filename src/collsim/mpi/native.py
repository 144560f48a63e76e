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

from ..core.collectives import TYPES
from ..core.errors import DataFlowError, Where
from .buffers import Layout, held_chunks, ranges, tolerance, values

NATIVE = {name: t.mpi_function for name, t in TYPES.items()}
"""MPI's function for each collective (circular shift: point-to-point, one exchange per rank)."""


class ResultMismatchError(DataFlowError):
    """A rank ends a schedule's run with data that differs from MPI's own collective."""

    kind = "result mismatch"


@dataclass(frozen=True, eq=False)
class Native:
    """MPI's own collective, ready to run on one rank."""

    name: str
    run: Callable[[], Any]
    result: np.ndarray
    offsets: np.ndarray


def mpi_op(op: str) -> Any:
    """The mpi4py operation for a reduction name."""
    from mpi4py import MPI
    return getattr(MPI, op.upper())


def native_for(comm: Any, lay: Layout, op: str = "sum") -> Native:
    """Set up MPI's own collective for this rank, on the input the schedule starts from."""
    c = lay.collective
    r = comm.Get_rank()
    chunks = held_chunks(c.post, r)
    fn = c.type.mpi_function
    run, out, offsets = _CALLS[fn](comm, lay, r, chunks, lay.offset_of(chunks), op)
    return Native(fn, run, out, offsets)


# One builder per MPI call: (comm, layout, rank, the rank's postcondition chunks, their global
# offsets, op) -> (run, output buffer, offset of each of those chunks in it).
def _own(lay: Layout, r: int) -> np.ndarray:
    """The rank's own block, as it starts (all-gather, gather, shift)."""
    return values(r, np.arange(r * lay.block_elems, (r + 1) * lay.block_elems), lay.dtype)


def _vector(lay: Layout, r: int) -> np.ndarray:
    """The rank's contribution to every element (reductions)."""
    return values(r, np.arange(lay.total_elems), lay.dtype)


def _allgather(comm, lay, r, chunks, canon, op):
    own, out = _own(lay, r), np.empty(lay.collective.nodes * lay.block_elems, lay.dtype)
    return (lambda: comm.Allgather(own, out)), out, canon


def _gather(comm, lay, r, chunks, canon, op):
    c, own = lay.collective, _own(lay, r)
    out = np.empty(c.nodes * lay.block_elems if r == c.root else 0, lay.dtype)
    return (lambda: comm.Gather(own, out if r == c.root else None, root=c.root)), out, canon


def _sendrecv(comm, lay, r, chunks, canon, op):   # circular shift: one exchange per rank
    c, own, out = lay.collective, _own(lay, r), np.empty(lay.block_elems, lay.dtype)
    src = (r - c.shift) % c.nodes
    return (lambda: comm.Sendrecv(own, (r + c.shift) % c.nodes, 0, out, src, 0)), out, canon - src * lay.block_elems


def _reduce_scatter(comm, lay, r, chunks, canon, op):
    vector, out = _vector(lay, r), np.empty(lay.block_elems, lay.dtype)
    return (lambda: comm.Reduce_scatter_block(vector, out, mpi_op(op))), out, canon - r * lay.block_elems


def _scatter(comm, lay, r, chunks, canon, op):
    c, out = lay.collective, np.empty(lay.block_elems, lay.dtype)
    data = values(c.root, np.arange(c.nodes * lay.block_elems), lay.dtype) if r == c.root else None
    return (lambda: comm.Scatter(data, out, root=c.root)), out, canon - r * lay.block_elems


def _bcast(comm, lay, r, chunks, canon, op):
    c = lay.collective
    buf = values(c.root, np.arange(lay.total_elems), lay.dtype) if r == c.root else np.zeros(lay.total_elems, lay.dtype)
    return (lambda: comm.Bcast(buf, root=c.root)), buf, canon


def _alltoall(comm, lay, r, chunks, canon, op):
    c, b = lay.collective, lay.block_elems
    send = values(r, np.arange(r * c.nodes * b, (r + 1) * c.nodes * b), lay.dtype)
    out = np.empty(c.nodes * b, lay.dtype)
    offsets = chunks // c.split // c.nodes * b + lay.piece_offset[chunks % c.split]
    return (lambda: comm.Alltoall(send, out)), out, offsets


def _reduce(comm, lay, r, chunks, canon, op):
    c, vector, mop = lay.collective, _vector(lay, r), mpi_op(op)
    out = np.empty(lay.total_elems if r == c.root else 0, lay.dtype)
    return (lambda: comm.Reduce(vector, out if r == c.root else None, mop, root=c.root)), out, canon


def _allreduce(comm, lay, r, chunks, canon, op, scan=False):
    vector, out, mop = _vector(lay, r), np.empty(lay.total_elems, lay.dtype), mpi_op(op)
    call = comm.Scan if scan else comm.Allreduce
    return (lambda: call(vector, out, mop)), out, canon


_CALLS: dict[str, Callable] = {
    "MPI_Allgather": _allgather, "MPI_Gather": _gather, "MPI_Sendrecv": _sendrecv,
    "MPI_Reduce_scatter_block": _reduce_scatter, "MPI_Scatter": _scatter, "MPI_Bcast": _bcast,
    "MPI_Alltoall": _alltoall, "MPI_Reduce": _reduce, "MPI_Allreduce": _allreduce,
    "MPI_Scan": lambda *args: _allreduce(*args, scan=True)}
"""The mpi4py call of each MPI function a collective names (``CollectiveType.mpi_function``)."""

# What each builder above allocates on the rank that holds the most, in elements: (input, output), from the
# node count n, a block's elements b and the global element space t (reductions' whole vector).
_ELEMS: dict[str, Callable[[int, int, int], tuple[int, int]]] = {
    "MPI_Allgather": lambda n, b, t: (b, n * b), "MPI_Gather": lambda n, b, t: (b, n * b),
    "MPI_Sendrecv": lambda n, b, t: (b, b), "MPI_Reduce_scatter_block": lambda n, b, t: (t, b),
    "MPI_Scatter": lambda n, b, t: (n * b, b), "MPI_Bcast": lambda n, b, t: (t, 0),
    "MPI_Alltoall": lambda n, b, t: (n * b, n * b), "MPI_Reduce": lambda n, b, t: (t, t),
    "MPI_Allreduce": lambda n, b, t: (t, t), "MPI_Scan": lambda n, b, t: (t, t)}


def native_elems(lay: Layout) -> tuple[int, int]:
    """The elements MPI's own collective holds on the rank that holds the most: its input and its output.

    What :func:`native_for` allocates (the input computed with :func:`~collsim.mpi.buffers.values`,
    the output empty), without allocating it: :mod:`collsim.mpi.memory` estimates a run with it.
    """
    c = lay.collective
    return _ELEMS[c.type.mpi_function](c.nodes, lay.block_elems, lay.total_elems)


def first_mismatch(got: np.ndarray, want: np.ndarray, elems: np.ndarray, tol: float,
                   relative: bool = False) -> tuple[int, int] | None:
    """The first element where a result differs from the reference beyond a tolerance."""
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
    """Compare this rank's result with MPI's; every rank raises the lowest rank's mismatch."""
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


__all__ = ["NATIVE", "Native", "ResultMismatchError", "check_result", "first_mismatch", "mpi_op", "native_elems",
           "native_for"]
