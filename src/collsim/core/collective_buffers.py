"""A rank's input and output buffers of a collective, as MPI and MSCCL lay them out.

Every collective object (:class:`~collsim.core.collectives.CollectiveType`) names the shape of
a rank's input buffer (``input_buffer``) and output buffer (``output_buffer``), one of
:data:`SHAPES`.  With ``s`` chunks per block, N ranks and rank ``v``, the buffer holds, at
offset ``o``, the chunk:

========= ================================================ ================ ===================
shape     holds                                            size (chunks)    chunk at offset o
========= ================================================ ================ ===================
own       the rank's own block                             s                v s + o
all       every chunk (every rank)                         all chunks       o
root      every chunk, on the root only                    all chunks       o (root), else none
row       the pair blocks (v, b) for every b               N s              v N s + o
column    the pair blocks (a, v) for every a               N s              (o // s) N s + v s + o % s
shifted   the block of rank v - q                          s                ((v - q) mod N) s + o
========= ================================================ ================ ===================

Row and column include the block (v, v) a rank keeps for itself: MSCCL's and MPI's
all-to-all buffers hold it, collsim's all-to-all has no such chunk (nobody holds or needs it).

References
----------
Message Passing Interface Forum, "MPI: A Message-Passing Interface Standard, Version 4.0",
2021 (chapter 6: each collective's send and receive buffers); M. Cowan, S. Maleki,
M. Musuvathi, O. Saarikivi, Y. Xiong, "MSCCLang: Microsoft Collective Communication Language",
ASPLOS 2023 (the same buffers in MSCCL's chunks).
"""

from __future__ import annotations

import numpy as np

SHAPES = ("own", "all", "root", "row", "column", "shifted")
"""The buffer shapes, as in the module's table."""


def buffer_size(shape: str, nodes: int, split: int, chunks: int) -> int:
    """Size in chunks of a buffer of ``shape`` (the root's, for ``"root"``)."""
    if shape in ("all", "root"):
        return int(chunks)
    return int(nodes) * int(split) if shape in ("row", "column") else int(split)


def buffer_chunks(shape: str, nodes: int, split: int, chunks: int, rank: int, root: int | None = None,
                  shift: int | None = None) -> np.ndarray:
    """The chunk id at each offset of rank ``rank``'s buffer (-1: nothing there)."""
    n, s, v = int(nodes), int(split), int(rank)
    off = np.arange(buffer_size(shape, n, s, chunks), dtype=np.int64)
    if shape == "own":
        return v * s + off
    if shape == "row":
        return v * n * s + off
    if shape == "column":
        return (off // s) * n * s + v * s + off % s
    if shape == "shifted":
        return (v - int(shift or 1)) % n * s + off
    if shape == "root" and v != root:
        return np.full(len(off), -1, np.int64)
    return off


def buffer_offsets(shape: str, nodes: int, split: int, rank, chunk_ids, root: int | None = None,
                   shift: int | None = None) -> np.ndarray:
    """Offsets of chunks in ranks' buffers (-1 where the buffer does not hold them), vectorised."""
    v, c = np.broadcast_arrays(np.asarray(rank, np.int64), np.asarray(chunk_ids, np.int64))
    n, s = int(nodes), int(split)
    if shape in ("own", "shifted"):
        owner = v if shape == "own" else (v - int(shift or 1)) % n
        off = c - owner * s
        return np.where((off >= 0) & (off < s), off, -1)
    if shape == "row":
        return np.where(c // (n * s) == v, c % (n * s), -1)
    if shape == "column":
        return np.where((c // s) % n == v, (c // (n * s)) * s + c % s, -1)
    if shape == "root":
        return np.where(v == root, c, -1)
    return c.copy()
