"""Real data for a collective: the element layout of its chunks, each rank's input, the expected result.

A chunk of ``b`` bytes holds ``ceil(b / itemsize)`` elements of the run's data type (an
``int64`` run of a 1000-byte chunk moves 125 elements, 1000 bytes; 1001 bytes would move 126).
Chunk ``c`` (piece ``j = c % split`` of block ``c // split``) occupies a fixed range of a
*global element space*: blocks one after the other, the pieces of a block one after the other,
so a block is the contiguous run MPI's own collectives move (``MPI_Allgather``'s block, the
vector of ``MPI_Allreduce``).

Input values are deterministic: the value a rank contributes at global element ``g`` is a
hash of ``(rank, g)`` (:func:`values`), the same in every run and on every machine.
Integers lie in ``-2**19 .. 2**19 - 1`` (sums of up to ``2**44`` ranks cannot overflow; products
wrap the same way in any order), floats in ``[0.5, 1.5)``.  For non-reduction collectives a
chunk's value is its owner's (the node that holds it at the start); for reductions every rank
contributes to every chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.collective import Collective, split_bytes
from ..core.errors import InputError, UnknownNameError, did_you_mean
from ..core.holdings import Holdings

DTYPES = ("int64", "int32", "float64", "float32")
OPS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
       "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}
INTEGER_ONLY = ("band", "bor", "bxor")


def check_data(op: str, dtype: str) -> tuple[str, np.dtype]:
    """Validate a reduction operation and a data type."""
    key = str(op).strip().lower()
    if key not in OPS:
        raise UnknownNameError(f"unknown reduction operation {op!r}{_known(op, OPS)}")
    name = str(dtype).strip().lower()
    if name not in DTYPES:
        raise UnknownNameError(f"unknown data type {dtype!r}{_known(dtype, DTYPES)}")
    if key in INTEGER_ONLY and name.startswith("float"):
        raise InputError(f"--op {key} needs integer data, not {name}")
    return key, np.dtype(name)


def _known(name: object, choices) -> str:
    hint = did_you_mean(name, choices)
    return f"{hint + ' Known' if hint else '; known'}: {', '.join(choices)}"


@dataclass(frozen=True, eq=False)
class Layout:
    """Where each chunk of a collective lies in the global element space."""

    collective: Collective
    dtype: np.dtype
    piece_elems: np.ndarray
    piece_offset: np.ndarray
    block_elems: int

    @property
    def total_elems(self) -> int:
        """Elements of the whole global space (every chunk)."""
        return self.collective.chunks // self.collective.split * self.block_elems

    def elems_of(self, chunks) -> np.ndarray:
        """Elements of each chunk (``int64``)."""
        return self.piece_elems[np.asarray(chunks, dtype=np.int64) % self.collective.split]

    def offset_of(self, chunks) -> np.ndarray:
        """Global offset of each chunk's first element (``int64``)."""
        c = np.asarray(chunks, dtype=np.int64)
        s = self.collective.split
        return c // s * self.block_elems + self.piece_offset[c % s]

    def indices_of(self, chunks) -> np.ndarray:
        """Global element indices of the chunks, concatenated in the order given."""
        return ranges(self.offset_of(chunks), self.elems_of(chunks))


def layout(collective: Collective, dtype) -> Layout:
    """The element layout of a collective for a data type."""
    dtype = np.dtype(dtype)
    pieces = split_bytes(collective.size_bytes, collective.split)
    elems = -(-pieces // dtype.itemsize)
    offset = np.concatenate(([0], np.cumsum(elems)[:-1])).astype(np.int64)
    return Layout(collective, dtype, elems.astype(np.int64), offset, int(elems.sum()))


def ranges(starts, lengths) -> np.ndarray:
    """Concatenated ``arange(start, start + length)`` for every pair, without a Python loop."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    keep = lengths > 0
    starts, lengths = starts[keep], lengths[keep]
    step = np.ones(total, np.int64)
    heads = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    step[0] = starts[0]
    step[heads[1:]] = starts[1:] - (starts[:-1] + lengths[:-1] - 1)
    return np.cumsum(step)


def values(rank: int, indices, dtype) -> np.ndarray:
    """The value rank ``rank`` contributes at each global element index (deterministic)."""
    g = np.asarray(indices, dtype=np.int64).astype(np.uint64)
    h = g * np.uint64(2654435761) + np.uint64((int(rank) + 1) * 40503 % 2**32) * np.uint64(0x9E3779B1)
    h ^= h >> np.uint64(15)
    h &= np.uint64(2**20 - 1)
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (h.astype(np.float64) / 2**20 + 0.5).astype(dtype)
    return (h.astype(np.int64) - 2**19).astype(dtype)


def held_chunks(holdings: Holdings, node: int) -> np.ndarray:
    """Chunks a node holds in a pre- or postcondition, ascending."""
    ev = holdings.every_chunks()
    if holdings.ptr is None:
        mine = np.flatnonzero(holdings.holder == node)
    else:
        at = np.flatnonzero(holdings.holder == node)
        mine = np.searchsorted(holdings.ptr, at, side="right") - 1
    return np.union1d(ev, mine).astype(np.int64)


def owners(collective: Collective, chunks) -> np.ndarray:
    """For a non-reduction collective, the node whose data each chunk carries (its first holder)."""
    pre = collective.pre
    chunks = np.asarray(chunks, dtype=np.int64)
    if pre.ptr is None:
        return pre.holder[chunks].astype(np.int64)
    first = pre.holder[np.minimum(pre.ptr[chunks], len(pre.holder) - 1)].astype(np.int64)
    return np.where(np.diff(pre.ptr)[chunks] > 0, first, -1)


def initial(lay: Layout, rank: int, chunks) -> np.ndarray:
    """What ``rank`` holds of ``chunks`` at the start: its contribution (reductions) or the owner's data."""
    chunks = np.asarray(chunks, dtype=np.int64)
    if lay.collective.reduction:
        return values(rank, lay.indices_of(chunks), lay.dtype)
    who = np.repeat(owners(lay.collective, chunks), lay.elems_of(chunks))
    out = np.empty(len(who), lay.dtype)
    for owner in np.unique(who):
        sel = who == owner
        out[sel] = values(int(owner), lay.indices_of(chunks)[sel], lay.dtype)
    return out


def expected(lay: Layout, rank: int, op: str = "sum") -> tuple[np.ndarray, np.ndarray]:
    """What ``rank`` must hold at the end, computed with numpy alone (no MPI).

    Costs one pass per contributing rank: meant for tests and small instances; runs check
    against MPI's own collective instead (:mod:`collsim.mpi.native`).
    """
    c = lay.collective
    chunks = held_chunks(c.post, rank)
    if not c.reduction:
        return chunks, initial(lay, rank, chunks)
    idx = lay.indices_of(chunks)
    ufunc = OPS[check_data(op, lay.dtype.name)[0]]
    last = rank if c.prefix else c.nodes - 1
    acc = values(0, idx, lay.dtype)
    for r in range(1, last + 1):
        acc = ufunc(acc, values(r, idx, lay.dtype))
    return chunks, acc


def tolerance(dtype, op: str, nodes: int) -> float:
    """Largest difference allowed between a schedule's result and MPI's, per element.

    Integers: 0 (bit-exact, whatever the order).  Floats: ``max`` and ``min`` are exact;
    a sum of ``nodes`` values in ``[0.5, 1.5)`` combined in any order differs from any other
    order by at most ``(nodes - 1) * eps * 1.5 * nodes`` (each of ``nodes - 1`` roundings errs by
    at most ``eps/2`` of a partial sum below ``1.5 * nodes``, twice for two orders); a product
    is compared relatively, this value times ``|result|``.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or op in ("max", "min"):
        return 0.0
    eps = float(np.finfo(dtype).eps)
    if op == "prod":
        return (nodes - 1) * eps * 2
    return (nodes - 1) * eps * 1.5 * nodes


__all__ = ["DTYPES", "INTEGER_ONLY", "Layout", "OPS", "check_data", "expected", "held_chunks", "initial", "layout",
           "owners", "ranges", "values", "tolerance"]
