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
    """Size in chunks of a buffer of ``shape`` (the root's, for ``"root"``).

    Parameters
    ----------
    shape : str
        One of :data:`SHAPES`.
    nodes, split : int
        Ranks N and chunks per block s.
    chunks : int
        The collective's chunk ids (``CollectiveType.chunk_count``).

    Returns
    -------
    int
        s, N s or ``chunks``.

    Examples
    --------
    >>> buffer_size("own", 4, 2, 8), buffer_size("all", 4, 2, 8), buffer_size("row", 4, 2, 32)
    (2, 8, 8)
    """
    if shape in ("all", "root"):
        return int(chunks)
    return int(nodes) * int(split) if shape in ("row", "column") else int(split)


def buffer_chunks(shape: str, nodes: int, split: int, chunks: int, rank: int, root: int | None = None,
                  shift: int | None = None) -> np.ndarray:
    """The chunk id at each offset of rank ``rank``'s buffer (-1: nothing there).

    Parameters
    ----------
    shape : str
        One of :data:`SHAPES`.
    nodes, split, chunks : int
        Ranks N, chunks per block s, and the collective's chunk ids.
    rank : int
        The rank v.
    root, shift : int, optional
        The root (``"root"``) and the q of the shift (``"shifted"``).

    Returns
    -------
    numpy.ndarray
        ``int64`` chunk ids, :func:`buffer_size` long.

    Examples
    --------
    >>> buffer_chunks("column", 3, 1, 9, 2).tolist(), buffer_chunks("root", 4, 1, 1, 2, root=0).tolist()
    ([2, 5, 8], [-1])
    """
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
    """Offsets of chunks in ranks' buffers (-1 where the buffer does not hold them), vectorised.

    Parameters
    ----------
    shape : str
        One of :data:`SHAPES`.
    nodes, split : int
        Ranks N and chunks per block s.
    rank, chunk_ids : int or array_like
        Ranks and chunk ids (broadcast together).
    root, shift : int, optional
        The root (``"root"``) and the q of the shift (``"shifted"``).

    Returns
    -------
    numpy.ndarray
        ``int64`` offsets: the inverse of :func:`buffer_chunks`.

    Examples
    --------
    >>> buffer_offsets("own", 4, 2, 1, [2, 3, 4]).tolist(), buffer_offsets("column", 3, 1, 2, [2, 5, 8]).tolist()
    ([0, 1, -1], [0, 1, 2])
    """
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
