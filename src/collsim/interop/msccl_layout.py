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

from ..core.errors import UnsupportedError
from .msccl_errors import MscclFormatError

COLLECTIVES = ("allgather", "reducescatter", "allreduce", "alltoall", "broadcast", "reduce")
REDUCTIONS = frozenset({"reducescatter", "allreduce", "reduce"})


@dataclass(frozen=True)
class Layout:
    """A collective's buffers in MSCCL's chunks, and collsim's chunk ids in them.

    Parameters
    ----------
    coll : str
        One of :data:`COLLECTIVES`.
    ngpus : int
        Ranks N.
    split : int
        collsim chunks per block, s.
    root : int or None
        Root of broadcast and reduce.

    Examples
    --------
    >>> lay = Layout("allgather", 4, 2, None)
    >>> lay.nchunksperloop, lay.in_size, lay.out_size, lay.in_offset(1, [2, 3, 4]).tolist()
    (8, 2, 8, [0, 1, -1])
    >>> Layout("alltoall", 3, 1, None).out_offset(2, [2, 5, 8]).tolist()
    [0, 1, 2]
    """

    coll: str
    ngpus: int
    split: int
    root: int | None

    def __post_init__(self) -> None:
        if self.coll not in COLLECTIVES:
            raise UnsupportedError(f"MSCCL export and import cover {', '.join(COLLECTIVES)}, not {self.coll}")

    @property
    def reduction(self) -> bool:
        """Whether buffers combine contributions."""
        return self.coll in REDUCTIONS

    @property
    def in_size(self) -> int:
        """Input buffer size in chunks."""
        n, s = self.ngpus, self.split
        return n * s if self.coll in ("reducescatter", "alltoall") else s

    @property
    def out_size(self) -> int:
        """Output buffer size in chunks."""
        n, s = self.ngpus, self.split
        return n * s if self.coll in ("allgather", "alltoall") else s

    @property
    def nchunksperloop(self) -> int:
        """MSCCL's ``nchunksperloop``: the larger buffer in chunks."""
        return max(self.in_size, self.out_size)

    @property
    def chunk_ids(self) -> int:
        """Number of chunk ids (collsim's chunks, plus all-to-all's own blocks)."""
        n, s = self.ngpus, self.split
        return {"allgather": n * s, "reducescatter": n * s, "alltoall": n * n * s}.get(self.coll, s)

    def in_offset(self, rank, chunks) -> np.ndarray:
        """Input offsets of ``chunks`` on ``rank`` (-1 where not in its input), vectorised.

        Parameters
        ----------
        rank, chunks : int or array_like
            Ranks and chunk ids (broadcast together).

        Returns
        -------
        numpy.ndarray
            ``int64`` offsets.
        """
        v, c = np.broadcast_arrays(np.asarray(rank, np.int64), np.asarray(chunks, np.int64))
        n, s = self.ngpus, self.split
        if self.coll == "allgather":
            off = c - v * s
            return np.where((off >= 0) & (off < s), off, -1)
        if self.coll == "alltoall":
            return np.where(c // (n * s) == v, c % (n * s), -1)
        if self.coll == "broadcast":
            return np.where(v == self.root, c, -1)
        return c.copy()

    def out_offset(self, rank, chunks) -> np.ndarray:
        """Output offsets of ``chunks`` on ``rank`` (-1 where its output does not hold them).

        Parameters
        ----------
        rank, chunks : int or array_like
            Ranks and chunk ids (broadcast together).

        Returns
        -------
        numpy.ndarray
            ``int64`` offsets.
        """
        v, c = np.broadcast_arrays(np.asarray(rank, np.int64), np.asarray(chunks, np.int64))
        n, s = self.ngpus, self.split
        if self.coll == "reducescatter":
            off = c - v * s
            return np.where((off >= 0) & (off < s), off, -1)
        if self.coll == "alltoall":
            return np.where((c // s) % n == v, (c // (n * s)) * s + c % s, -1)
        if self.coll == "reduce":
            return np.where(v == self.root, c, -1)
        return c.copy()

    def input_chunks(self, rank: int) -> np.ndarray:
        """The chunk id at each input offset of ``rank`` (-1: nothing defined there).

        Parameters
        ----------
        rank : int
            The rank.

        Returns
        -------
        numpy.ndarray
            One id per offset, ``in_size`` long.
        """
        n, s, off = self.ngpus, self.split, np.arange(self.in_size, dtype=np.int64)
        if self.coll == "allgather":
            return rank * s + off
        if self.coll == "alltoall":
            return rank * n * s + off
        if self.coll == "broadcast" and rank != self.root:
            return np.full(self.in_size, -1, np.int64)
        return off

    def output_chunks(self, rank: int) -> np.ndarray:
        """The chunk id each output offset of ``rank`` must hold at the end (-1: nothing required).

        Parameters
        ----------
        rank : int
            The rank.

        Returns
        -------
        numpy.ndarray
            One id per offset, ``out_size`` long.
        """
        n, s, off = self.ngpus, self.split, np.arange(self.out_size, dtype=np.int64)
        if self.coll == "reducescatter":
            return rank * s + off
        if self.coll == "alltoall":
            return (off // s) * n * s + rank * s + off % s
        if self.coll == "reduce" and rank != self.root:
            return np.full(self.out_size, -1, np.int64)
        return off


def layout_of(coll: str, ngpus: int, nchunksperloop: int, root: int | None = None) -> Layout:
    """The layout an MSCCL file's ``coll``, ``ngpus`` and ``nchunksperloop`` describe.

    Parameters
    ----------
    coll : str
        The ``coll`` attribute.
    ngpus, nchunksperloop : int
        The ``ngpus`` and ``nchunksperloop`` attributes.
    root : int, optional
        Root of broadcast and reduce.

    Returns
    -------
    Layout
        With ``split`` = nchunksperloop / N for all-gather, reduce-scatter and all-to-all, else nchunksperloop.

    Raises
    ------
    UnsupportedError
        For a collective outside :data:`COLLECTIVES`.
    MscclFormatError
        If ``nchunksperloop`` is not a positive multiple of N where it must be.

    Examples
    --------
    >>> layout_of("reducescatter", 4, 8).split
    2
    >>> layout_of("alltoall", 4, 6)
    Traceback (most recent call last):
    ...
    collsim.interop.msccl_errors.MscclFormatError: nchunksperloop=6 is not a multiple of ngpus=4 (alltoall divides every buffer among the ranks)
    """
    if coll not in COLLECTIVES:
        raise UnsupportedError(f"MSCCL import covers {', '.join(COLLECTIVES)}, not coll={coll!r}")
    if nchunksperloop < 1:
        raise MscclFormatError(f"nchunksperloop must be at least 1, got {nchunksperloop}")
    if coll in ("allgather", "reducescatter", "alltoall"):
        if nchunksperloop % ngpus:
            raise MscclFormatError(f"nchunksperloop={nchunksperloop} is not a multiple of ngpus={ngpus} "
                                   f"({coll} divides every buffer among the ranks)")
        return Layout(coll, ngpus, nchunksperloop // ngpus, root)
    return Layout(coll, ngpus, nchunksperloop, root)
