"""Holdings: a set of (node, chunk) pairs stored per chunk, in memory that grows with what is held.

A collective's pre- and postconditions are sets of (node, chunk) pairs.  Storing
them as explicit pair arrays costs ``nodes * chunks`` entries for "every node
holds every chunk" (all-gather's postcondition) and ``N^3`` for all-to-all
blocks.  :class:`Holdings` stores instead, for every chunk,

* an *every-node* flag (the chunk is held by all ``nodes`` nodes: O(1) per chunk),
* otherwise its explicit holders, in one of two forms:

  - *single*: at most one holder per chunk, one integer per chunk (``-1``: none).
    Every built-in collective's explicit holdings have this form;
  - *CSR*: ``ptr`` (``chunks + 1`` offsets) and the holders of chunk ``c`` in
    ``holder[ptr[c]:ptr[c+1]]``, sorted, for any other set.

Memory is O(chunks + explicit pairs), never O(nodes * chunks).

The pairs' canonical order (what :meth:`Holdings.pairs` returns) is: the explicit
pairs by chunk (and by node within a chunk), then the pairs of every-node chunks
node-major (node 0 with each such chunk, node 1 ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import InputError

INDEX = np.int64


def holder_dtype(nodes: int) -> type:
    """Smallest integer dtype that stores node ids ``0..nodes-1`` and -1."""
    return np.int32 if nodes < 2**31 else np.int64


@dataclass(frozen=True, eq=False)
class Holdings:
    """A set of (node, chunk) pairs, per chunk."""

    nodes: int
    chunks: int
    every: np.ndarray | None
    holder: np.ndarray
    ptr: np.ndarray | None = None

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def single(cls, nodes: int, holder, every=None) -> "Holdings":
        """At most one explicit holder per chunk."""
        holder = np.asarray(holder)
        h = np.ascontiguousarray(holder, dtype=holder_dtype(nodes))
        if every is not None:
            every = np.ascontiguousarray(every, dtype=bool)
            if not every.any():
                every = None
            else:
                h = np.where(every, -1, h).astype(h.dtype, copy=False)
        return cls(int(nodes), len(h), every, h)

    @classmethod
    def everyone(cls, nodes: int, chunks: int) -> "Holdings":
        """Every node holds every chunk."""
        return cls(int(nodes), int(chunks), np.ones(chunks, dtype=bool),
                   np.full(chunks, -1, dtype=holder_dtype(nodes)))

    @classmethod
    def from_pairs(cls, nodes: int, chunks: int, node, chunk, every=None) -> "Holdings":
        """Holdings from explicit pairs (duplicates dropped), plus optional every-node chunks."""
        node = np.asarray(node, dtype=INDEX).reshape(-1)
        chunk = np.asarray(chunk, dtype=INDEX).reshape(-1)
        if node.shape != chunk.shape:
            raise InputError("node and chunk arrays differ in length")
        if node.size and (node.min() < 0 or node.max() >= nodes or chunk.min() < 0 or chunk.max() >= chunks):
            raise InputError(f"a pair is outside {nodes} nodes x {chunks} chunks")
        every = None if every is None else np.ascontiguousarray(every, dtype=bool)
        if every is not None:
            keep = ~every[chunk]
            node, chunk = node[keep], chunk[keep]
            if not every.any():
                every = None
        key = chunk * nodes + node
        key.sort()
        if key.size:
            key = key[np.concatenate(([True], key[1:] != key[:-1]))]
        chunk, node = np.divmod(key, nodes)
        counts = np.bincount(chunk, minlength=chunks)
        if counts.size == 0 or counts.max() <= 1:
            holder = np.full(chunks, -1, dtype=holder_dtype(nodes))
            holder[chunk] = node
            return cls(int(nodes), int(chunks), every, holder)
        ptr = np.zeros(chunks + 1, dtype=INDEX)
        np.cumsum(counts, out=ptr[1:])
        return cls(int(nodes), int(chunks), every, node.astype(holder_dtype(nodes)), ptr)

    # -- queries ------------------------------------------------------------------------------
    @property
    def every_mask(self) -> np.ndarray:
        """``bool`` per chunk: held by every node (materialised if stored as None)."""
        return np.zeros(self.chunks, dtype=bool) if self.every is None else self.every

    @property
    def num_every(self) -> int:
        """Number of chunks held by every node."""
        return 0 if self.every is None else int(np.count_nonzero(self.every))

    @property
    def num_explicit(self) -> int:
        """Number of explicitly listed pairs."""
        return int(self.ptr[-1]) if self.ptr is not None else int(np.count_nonzero(self.holder >= 0))

    def __len__(self) -> int:
        """Number of pairs (explicit plus ``nodes`` per every-node chunk)."""
        return self.num_explicit + self.nodes * self.num_every

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(a.nbytes for a in (self.every, self.holder, self.ptr) if a is not None)

    def counts(self) -> np.ndarray:
        """Explicit holders per chunk (``int64``; 0 for every-node chunks)."""
        if self.ptr is not None:
            return np.diff(self.ptr)
        return (self.holder >= 0).astype(INDEX)

    def explicit(self) -> tuple[np.ndarray, np.ndarray]:
        """The explicit pairs as ``int64`` (node, chunk) arrays, by chunk then node."""
        if self.ptr is not None:
            chunk = np.repeat(np.arange(self.chunks, dtype=INDEX), np.diff(self.ptr))
            return self.holder.astype(INDEX), chunk
        chunk = np.flatnonzero(self.holder >= 0).astype(INDEX, copy=False)
        return self.holder[chunk].astype(INDEX), chunk

    def every_chunks(self) -> np.ndarray:
        """Ids of the chunks held by every node, ascending."""
        if self.every is None:
            return np.zeros(0, dtype=INDEX)
        return np.flatnonzero(self.every).astype(INDEX, copy=False)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """All pairs as contiguous ``int64`` (node, chunk) arrays, in canonical order.

        This costs ``len(self)`` entries: for small instances and backward
        compatibility only.
        """
        node, chunk = self.explicit()
        ev = self.every_chunks()
        if ev.size:
            node = np.concatenate([node, np.repeat(np.arange(self.nodes, dtype=INDEX), ev.size)])
            chunk = np.concatenate([chunk, np.tile(ev, self.nodes)])
        return np.ascontiguousarray(node), np.ascontiguousarray(chunk)

    def contains(self, node, chunk) -> np.ndarray:
        """Whether each (node[i], chunk[i]) is in the set (vectorised)."""
        node = np.asarray(node, dtype=INDEX)
        chunk = np.asarray(chunk, dtype=INDEX)
        out = self.every_mask[chunk].copy() if self.every is not None else np.zeros(node.shape, bool)
        if self.ptr is None:
            return out | (self.holder[chunk] == node)
        keys = np.repeat(np.arange(self.chunks, dtype=INDEX), np.diff(self.ptr)) * self.nodes + self.holder
        q = chunk * self.nodes + node
        pos = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        return out | ((keys[pos] == q) if len(keys) else False)
