"""Collectives as data: pre- and postconditions over (node, chunk).

A :class:`Collective` says which chunks each node holds at the start and which
it must hold at the end.  For reductions, a buffer is a *set of contributions*:
node ``i`` starts with its own contribution to every chunk it contributes to,
and at the end the nodes named by the postcondition must hold the chunk with
every contribution combined exactly once.  Algorithms pick the chunking (how
many pieces the data is cut into); the semantics do not depend on it.

``size_bytes`` follows the textbook's message size *m* (first column); nccl-tests' size is the
total buffer (second column; :mod:`collsim.core.totals`):

=============== ================================================ ================
all-gather      each node's contribution (the papers' *d*)       N * size
scatter/gather  each node's block                                N * size
scan            the whole vector on each node                    size
shift           each node's block                                size
reduce-scatter  each node's resulting block (input is N * size)  N * size
all-reduce      the whole vector on each node                    size
broadcast       the root's vector                                size
reduce          the vector reduced onto the root                 size
all-to-all      each (source, destination) block                 N * size
=============== ================================================ ================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .collectives import TYPES, CollectiveType
from .errors import InputError, UnknownNameError, did_you_mean
from .holdings import Holdings, holder_dtype
from .limits import check_memory
from .placement import check_root, check_shift

__all__ = ["ALIASES", "BYTES_PER_DELIVERY", "Collective", "CollectiveType",
           "canonical_collective", "check_collective_memory", "collective_memory_bytes", "collective_type", "make_collective",
           "min_deliveries", "split_bytes"]




ALIASES = {
    "all-gather": "allgather", "all_gather": "allgather", "ag": "allgather",
    "reduce-scatter": "reducescatter", "reduce_scatter": "reducescatter", "rs": "reducescatter",
    "all-reduce": "allreduce", "all_reduce": "allreduce", "ar": "allreduce",
    "bcast": "broadcast", "all-to-all": "alltoall", "all_to_all": "alltoall", "a2a": "alltoall",
    # the textbook's all-to-all reduction (dual of all-to-all broadcast) is reduce-scatter
    "alltoallreduce": "reducescatter", "all-to-all-reduction": "reducescatter",
    "all-to-all-reduce": "reducescatter", "prefix-sum": "scan", "prefixsum": "scan",
    "circular-shift": "shift", "cshift": "shift", "qshift": "shift",
}


def canonical_collective(name: str | CollectiveType) -> str:
    """Return the canonical collective name for ``name`` or an alias.

    Parameters
    ----------
    name : str
        ``"all-gather"``, ``"allgather"``, ``"ag"`` ...

    Returns
    -------
    str
        Canonical name, a key of :data:`collsim.core.collectives.TYPES`.

    Raises
    ------
    UnknownNameError
        If the name is not a known collective.

    Examples
    --------
    >>> canonical_collective("all-reduce")
    'allreduce'
    """
    if isinstance(name, CollectiveType):
        return name.name
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in TYPES:
        hint = did_you_mean(name, TYPES)
        raise UnknownNameError(f"unknown collective {name!r}{hint + ' Known' if hint else '; known'}: {', '.join(sorted(TYPES))}")
    return key


def collective_type(name: str | CollectiveType) -> CollectiveType:
    """The registered object of a collective name, an alias, or an object (returned as is).

    Parameters
    ----------
    name : str or CollectiveType
        ``"all-gather"``, ``"allgather"``, ``"ag"`` ...

    Returns
    -------
    CollectiveType
        The entry of :data:`TYPES`.

    Raises
    ------
    UnknownNameError
        If the name is not a known collective.

    Examples
    --------
    >>> collective_type("bcast").rooted, collective_type("scan").prefix
    (True, True)
    """
    if isinstance(name, CollectiveType):
        return name
    return TYPES[canonical_collective(name)]


def split_bytes(total_bytes: int, parts: int) -> np.ndarray:
    """Split ``total_bytes`` into ``parts`` near-equal integer sizes.

    Parameters
    ----------
    total_bytes : int
        Bytes to split.
    parts : int
        Number of parts, >= 1.

    Returns
    -------
    numpy.ndarray
        ``int64`` sizes; the first ``total_bytes % parts`` are one byte larger.

    Examples
    --------
    >>> split_bytes(10, 4).tolist()
    [3, 3, 2, 2]
    """
    base, extra = divmod(int(total_bytes), int(parts))
    sizes = np.full(parts, base, dtype=np.int64)
    sizes[:extra] += 1
    return sizes


@dataclass(frozen=True, eq=False)
class Collective:
    """A collective instance: semantics, chunking and sizes.

    Pre- and postconditions are :class:`~collsim.core.holdings.Holdings`: per
    chunk, an every-node flag or its explicit holders, so their memory grows
    with the chunks, not with nodes x chunks.  The explicit pair arrays
    (``pre_node`` ...) are also available, computed on first
    use: they cost one entry per pair, so large-instance code should use
    ``pre`` and ``post``.  Build instances with :func:`make_collective`.

    Parameters
    ----------
    name : str
        Canonical collective name (schedule files store it under ``kind``).
    nodes : int
        Number of participating nodes.
    chunks : int
        Number of chunks the data is cut into.
    size_bytes : int
        Message size (see module docstring for its meaning per collective).
    root : int or None
        Root node of rooted collectives.
    pre : Holdings
        Pairs held at the start (for reductions: node holds its own contribution).
    post : Holdings
        Pairs required at the end (for reductions: with every contribution).
    prefix : bool
        Prefix reduction (scan): post pair (v, c) needs exactly the contributions
        of nodes ``0..v``.
    shift : int or None
        The q of a circular q-shift.

    Examples
    --------
    >>> c = make_collective("reducescatter", 4, 1024, split=2)
    >>> c.chunks, c.split, c.reduction, c.bytes_of([0, 1]).tolist()
    (8, 2, True, [512, 512])
    >>> c.post.pairs()[0].tolist()
    [0, 0, 1, 1, 2, 2, 3, 3]
    """

    name: str
    nodes: int
    chunks: int
    size_bytes: int
    root: int | None
    pre: Holdings = field(repr=False)
    post: Holdings = field(repr=False)
    prefix: bool = False
    shift: int | None = None

    @property
    def type(self) -> CollectiveType:
        """The collective's object: its predicates (:mod:`collsim.core.collectives`)."""
        return TYPES[self.name]

    @property
    def reduction(self) -> bool:
        """Whether buffers combine contributions."""
        return TYPES[self.name].reduction

    @property
    def rooted(self) -> bool:
        """Whether the collective has a root node."""
        return TYPES[self.name].rooted

    @property
    def split(self) -> int:
        """Chunks per block (per node block, per pair block, or per vector)."""
        return TYPES[self.name].split_of(self.nodes, self.chunks)

    @property
    def total_bytes(self) -> int:
        """nccl-tests' size: the total buffer (:mod:`collsim.core.totals`)."""
        return TYPES[self.name].total_bytes(self.nodes, self.size_bytes)

    def describe(self) -> dict:
        """Return the JSON-able description embedded in schedule files (``shift`` only for the shift)."""
        out = {"kind": self.name, "nodes": self.nodes, "size_bytes": self.size_bytes,
               "split": self.split, "root": self.root}
        if self.type.shifted:
            out["shift"] = self.shift
        return out

    # -- sizes --------------------------------------------------------------------------------
    def bytes_of(self, chunk_ids) -> np.ndarray:
        """Sizes in bytes of the given chunks, without materialising :attr:`chunk_bytes`.

        Examples
        --------
        >>> make_collective("allgather", 2, 10, split=4).bytes_of([0, 3, 4]).tolist()
        [3, 2, 3]
        """
        piece = split_bytes(self.size_bytes, self.split)
        return piece[np.asarray(chunk_ids, dtype=np.int64) % self.split]

    @cached_property
    def chunk_bytes(self) -> np.ndarray:
        """Size of each chunk in bytes (``int64``, one per chunk; computed on first use)."""
        s = self.split
        return np.ascontiguousarray(np.tile(split_bytes(self.size_bytes, s), self.chunks // s), dtype=np.int64)

    # -- explicit pairs (backward compatibility; one entry per pair, computed on first use) ----
    _pre_pairs = cached_property(lambda self: self.pre.pairs())
    _post_pairs = cached_property(lambda self: self.post.pairs())
    pre_node = property(lambda self: self._pre_pairs[0],
                        doc="Node of every precondition pair (``int64``; order: :meth:`Holdings.pairs`).")
    pre_chunk = property(lambda self: self._pre_pairs[1], doc="Chunk of every precondition pair.")
    post_node = property(lambda self: self._post_pairs[0], doc="Node of every postcondition pair.")
    post_chunk = property(lambda self: self._post_pairs[1], doc="Chunk of every postcondition pair.")

    @cached_property
    def post_upto(self) -> np.ndarray | None:
        """For prefix reductions (scan): post pair ``i`` needs exactly the contributions of
        nodes ``0..post_upto[i]``; None means every contribution."""
        return self.post_node.copy() if self.prefix else None


BYTES_PER_DELIVERY = 64
"""Lower bound on the bytes one chunk delivery costs: its chunk id in the logical and in the
physical schedule (16) and the data-flow verifier's sorted keys and pair ids for its two ends
(48).  Collectives whose explicit schedules cannot fit are refused before any algorithm runs."""


def min_deliveries(kind: str, nodes: int, split: int) -> int:
    """Fewest chunk deliveries (transfer rows) any valid explicit schedule needs.

    Every pair of the postcondition that the precondition does not already satisfy
    must receive at least one delivery (for reductions: each contribution but one
    per result must move).

    Parameters
    ----------
    kind : str
        Collective name or alias.
    nodes, split : int
        Node count and chunks per block.

    Returns
    -------
    int
        The lower bound (a Python int, exact for any size).

    Examples
    --------
    >>> min_deliveries("allgather", 4, 1), min_deliveries("alltoall", 4, 2)
    (12, 24)
    """
    return collective_type(kind).min_deliveries(int(nodes), int(split))


def collective_memory_bytes(kind: str, nodes: int, split: int) -> int:
    """Estimated bytes of a collective's holdings, chunk sizes and construction temporaries.

    Parameters
    ----------
    kind : str
        Collective name or alias.
    nodes, split : int
        Node count and chunks per block.

    Returns
    -------
    int
        About ``chunks * (2 * (holder bytes + 1) + 32)``: O(chunks), never O(nodes * chunks).

    Examples
    --------
    >>> collective_memory_bytes("alltoall", 4096, 1) / 2**30 < 2
    True
    """
    n, s = int(nodes), int(split)
    chunks = collective_type(kind).chunk_count(n, s)
    per_holder = np.dtype(holder_dtype(n)).itemsize
    # pre and post: one holder and one flag per chunk; chunk_bytes: 8; temporaries: 3 int64
    return chunks * (2 * (per_holder + 1) + 8 + 24)


def check_collective_memory(kind: str, nodes: int, split: int = 1) -> None:
    """Refuse a collective whose explicit schedules cannot fit in memory, before anything is built.

    Every explicit schedule of the collective holds its holdings and at least
    :func:`min_deliveries` chunk deliveries of :data:`BYTES_PER_DELIVERY` bytes each; with
    ``split=1`` this is a floor for every algorithm, known from the collective and ``N`` alone,
    so commands check it before building the system's tables or planning anything.

    Parameters
    ----------
    kind : str
        Collective name or alias.
    nodes, split : int
        Node count and chunks per block (1: the fewest any algorithm uses).

    Returns
    -------
    None

    Raises
    ------
    MemoryLimitError
        (an InputError) naming the estimate, the fewest deliveries and the limit
        (:func:`collsim.core.limits.check_memory`); the advice is fewer nodes, and fewer
        chunks only when ``split`` is above 1.

    Examples
    --------
    >>> check_collective_memory("broadcast", 1_000_000)
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"COLLSIM_MEMORY_LIMIT": "8GiB"}):
    ...     check_collective_memory("allgather", 262144)
    Traceback (most recent call last):
    ...
    collsim.core.limits.MemoryLimitError: allgather on 262144 nodes needs about 4 TiB, above collsim's memory limit of 8 GiB (COLLSIM_MEMORY_LIMIT=8GiB): explicit schedules are limited by memory (any schedule of it makes at least 6.87e+10 chunk deliveries): use fewer nodes
    """
    spec = collective_type(kind)
    n, s = int(nodes), int(split)
    deliveries = min_deliveries(spec.name, n, s)
    chunks = f" with {spec.chunk_count(n, s)} chunks" if s > 1 else ""
    check_memory(collective_memory_bytes(spec.name, n, s) + deliveries * BYTES_PER_DELIVERY,
                 f"{spec.name} on {n} nodes{chunks}", f"explicit schedules are limited by memory (any schedule "
                 f"of it makes at least {deliveries:.3g} chunk deliveries): use fewer nodes"
                 + (" or chunks" if s > 1 else ""))


def make_collective(kind: str, nodes: int, size_bytes: int, *, split: int = 1,
                    root: int | None = None, shift: int = 1, explicit: bool = True) -> Collective:
    """Build a collective's pre- and postconditions.

    Parameters
    ----------
    kind : str
        Collective name or alias.
    nodes : int
        Number of nodes, >= 2.
    size_bytes : int
        Message size in bytes, >= 1 (meaning per collective: module docstring).
    split : int, optional
        Number of chunks each block is cut into (default 1).  For all-gather,
        reduce-scatter and all-to-all a block is one node's (or one pair's) data;
        for all-reduce, broadcast and reduce it is the whole vector.
    root : int, optional
        Root of broadcast, reduce, scatter and gather (default 0).
    shift : int, optional
        q of the circular q-shift (default 1; 1 <= q < nodes).
    explicit : bool, optional
        For an explicit schedule (default): refuse the collective when the fewest chunk
        deliveries any explicit schedule needs would not fit.  False (a symmetric schedule's
        representatives, :mod:`collsim.core.symmetry`) checks the collective's own memory only.

    Returns
    -------
    Collective
        The instance, with chunk ``b * split + j`` being piece ``j`` of block ``b``.

    Raises
    ------
    InputError
        For fewer than 2 nodes, a non-positive size or split, a bad root, or a size whose whole
        data times the node count reaches 2^63 bytes.
    MemoryLimitError
        (an InputError) If the collective, or the fewest chunk deliveries any explicit
        schedule for it needs (:func:`min_deliveries` x :data:`BYTES_PER_DELIVERY`),
        would exceed collsim's memory limit (:mod:`collsim.core.limits`).

    Examples
    --------
    >>> c = make_collective("allgather", 4, 1024)
    >>> c.chunks, c.pre_node.tolist(), c.pre_chunk.tolist()
    (4, [0, 1, 2, 3], [0, 1, 2, 3])
    """
    spec = collective_type(kind)
    kind = spec.name
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 2:
        raise InputError(f"a collective needs at least 2 nodes, got {nodes!r}")
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, (int, np.integer)) or size_bytes < 1:
        raise InputError(f"size must be a positive number of bytes, got {size_bytes!r}")
    if split < 1:
        raise InputError(f"split must be >= 1, got {split}")
    n, s = int(nodes), int(split)
    root = check_root(0 if root is None else root, n) if spec.rooted else None
    if spec.shifted:
        shift = check_shift(shift, n)
    c = spec.chunk_count(n, s)
    if int(size_bytes) * (c // s) * n > 2**63 - 1:  # whole data x N: what schedules sum in int64
        raise InputError(f"{kind} of {int(size_bytes)} bytes on {n} nodes is too large for collsim's 64-bit byte "
                         f"counts (whole data x nodes < 2^63): " + (f"use at most {top} bytes" if (top := (2**63 - 1) // (c // s * n)) else "use fewer nodes"))
    if explicit:
        check_collective_memory(kind, n, s)
    else:
        check_memory(collective_memory_bytes(kind, n, s), f"{kind} on {n} nodes with {c} chunks")
    pre, post = spec.holdings(n, s, root, int(shift) if spec.shifted else None)
    return Collective(kind, n, c, int(size_bytes), root, pre, post, prefix=spec.prefix,
                      shift=int(shift) if spec.shifted else None)
