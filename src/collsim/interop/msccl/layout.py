"""Where collsim's chunks sit in MSCCL's buffers, per collective.

MSCCL measures every buffer in chunks of ``count * sizeMultiplier / nchunksperloop``
elements, where ``sizeMultiplier`` is the number of ranks for all-gather, reduce-scatter
and all-to-all and 1 otherwise (msccl-executor-nccl, ``msccl_parser.cc`` and
``msccl_setup.cc``).  ``nchunksperloop`` is therefore the larger of the input and the
output buffer, in chunks.  With ``s`` collsim chunks per block (``Collective.split``) and
N ranks, collsim chunk ``c`` sits at these offsets (-1: not in that buffer):

============== ============ ============================ ==============================
collective     in / out     input offset on rank v       output offset on rank v
============== ============ ============================ ==============================
allgather      s / N s      c - v s (own block)          c
reducescatter  N s / s      c                            c - v s (own block)
allreduce      s / s        c                            c
reduce         s / s        c                            c on the root
broadcast      s / s        c on the root                c
alltoall       N s / N s    b s + j on a (c = (a N + b) s + j)   a s + j on b
============== ============ ============================ ==============================

All-to-all's chunk ids include the blocks (a, a) a rank keeps for itself: collsim's
collective has no such chunk (nobody holds or needs it), MSCCL's output must hold it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.collectives import TYPES, CollectiveType
from ...core.collective_buffers import buffer_size
from ...core.errors import UnsupportedError
from .errors import MscclFormatError

COLLECTIVES = tuple(name for name, t in TYPES.items() if t.msccl)
"""The collectives MSCCL's XML states (``CollectiveType.msccl``)."""
REDUCTIONS = frozenset(name for name in COLLECTIVES if TYPES[name].reduction)


@dataclass(frozen=True)
class Layout:
    """A collective's buffers in MSCCL's chunks, and collsim's chunk ids in them."""

    coll: str
    ngpus: int
    split: int
    root: int | None

    def __post_init__(self) -> None:
        if not (self.coll in TYPES and TYPES[self.coll].msccl):
            raise UnsupportedError(f"MSCCL export and import cover {', '.join(COLLECTIVES)}, not {self.coll}")

    @property
    def type(self) -> CollectiveType:
        """The collective's object (its buffers: ``input_buffer``, ``output_buffer``)."""
        return TYPES[self.coll]

    @property
    def reduction(self) -> bool:
        """Whether buffers combine contributions."""
        return self.type.reduction

    @property
    def in_size(self) -> int:
        """Input buffer size in chunks."""
        return buffer_size(self.type.input_buffer, self.ngpus, self.split, self.chunk_ids)

    @property
    def out_size(self) -> int:
        """Output buffer size in chunks."""
        return buffer_size(self.type.output_buffer, self.ngpus, self.split, self.chunk_ids)

    @property
    def nchunksperloop(self) -> int:
        """MSCCL's ``nchunksperloop``: the larger buffer in chunks."""
        return max(self.in_size, self.out_size)

    @property
    def chunk_ids(self) -> int:
        """Number of chunk ids (collsim's chunks, plus all-to-all's own blocks)."""
        return self.type.chunk_count(self.ngpus, self.split)

    def in_offset(self, rank, chunks) -> np.ndarray:
        """Input offsets of ``chunks`` on ``rank`` (-1 where not in its input), vectorised."""
        return self.type.buffer_offsets("input", self.ngpus, self.split, rank, chunks, self.root)

    def out_offset(self, rank, chunks) -> np.ndarray:
        """Output offsets of ``chunks`` on ``rank`` (-1 where its output does not hold them)."""
        return self.type.buffer_offsets("output", self.ngpus, self.split, rank, chunks, self.root)

    def input_chunks(self, rank: int) -> np.ndarray:
        """The chunk id at each input offset of ``rank`` (-1: nothing defined there)."""
        return self.type.buffer_chunks("input", self.ngpus, self.split, rank, self.root)

    def output_chunks(self, rank: int) -> np.ndarray:
        """The chunk id each output offset of ``rank`` must hold at the end (-1: nothing required)."""
        return self.type.buffer_chunks("output", self.ngpus, self.split, rank, self.root)


def layout_of(coll: str, ngpus: int, nchunksperloop: int, root: int | None = None) -> Layout:
    """The layout an MSCCL file's ``coll``, ``ngpus`` and ``nchunksperloop`` describe."""
    if not (coll in TYPES and TYPES[coll].msccl):
        raise UnsupportedError(f"MSCCL import covers {', '.join(COLLECTIVES)}, not coll={coll!r}")
    if nchunksperloop < 1:
        raise MscclFormatError(f"nchunksperloop must be at least 1, got {nchunksperloop}")
    if not TYPES[coll].whole_vector:   # N blocks in the larger buffer: nchunksperloop = N s
        if nchunksperloop % ngpus:
            raise MscclFormatError(f"nchunksperloop={nchunksperloop} is not a multiple of ngpus={ngpus} "
                                   f"({coll} divides every buffer among the ranks)")
        return Layout(coll, ngpus, nchunksperloop // ngpus, root)
    return Layout(coll, ngpus, nchunksperloop, root)
