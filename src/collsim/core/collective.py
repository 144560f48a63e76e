"""Collectives as data: pre- and postconditions over (node, chunk).

A :class:`Collective` says which chunks each node holds at the start and which
it must hold at the end.  For reductions, a buffer is a *set of contributions*:
node ``i`` starts with its own contribution to every chunk it contributes to,
and at the end the nodes named by the postcondition must hold the chunk with
every contribution combined exactly once.  Algorithms pick the chunking (how
many pieces the data is cut into); the semantics do not depend on it.

``size_bytes`` follows the textbook's message size *m*:

=============== ==========================================================
all-gather      each node's contribution (the papers' *d*)
scatter/gather  each node's block
scan            the whole vector on each node
shift           each node's block
reduce-scatter  each node's resulting block (input is ``nodes * size``)
all-reduce      the whole vector on each node
broadcast       the root's vector
reduce          the vector reduced onto the root
all-to-all      each (source, destination) block
=============== ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import InputError, UnknownNameError


@dataclass(frozen=True)
class CollectiveSpec:
    """Static facts about a kind of collective.

    Attributes
    ----------
    name : str
        Canonical name (``"allgather"``...).
    reduction : bool
        Whether buffers combine contributions.
    rooted : bool
        Whether the collective has a root node.
    nccl_size_factor : str
        How nccl-tests' reported size relates to ``size_bytes``: ``"n"`` (times the
        number of nodes) or ``"1"``.
    busbw_factor : Callable[[int], float]
        nccl-tests' bus-bandwidth factor as a function of the node count.
    """

    name: str
    reduction: bool
    rooted: bool
    nccl_size_factor: str
    busbw_factor: Callable[[int], float]
    description: str


SPECS: dict[str, CollectiveSpec] = {
    s.name: s
    for s in (
        CollectiveSpec("allgather", False, False, "n", lambda n: (n - 1) / n,
                       "every node ends with every node's block"),
        CollectiveSpec("reducescatter", True, False, "n", lambda n: (n - 1) / n,
                       "node i ends with block i reduced over all nodes"),
        CollectiveSpec("allreduce", True, False, "1", lambda n: 2 * (n - 1) / n,
                       "every node ends with the vector reduced over all nodes"),
        CollectiveSpec("broadcast", False, True, "1", lambda n: 1.0,
                       "every node ends with the root's vector"),
        CollectiveSpec("reduce", True, True, "1", lambda n: 1.0,
                       "the root ends with the vector reduced over all nodes"),
        CollectiveSpec("alltoall", False, False, "n", lambda n: (n - 1) / n,
                       "node d ends with block (s, d) from every node s"),
        CollectiveSpec("scatter", False, True, "n", lambda n: (n - 1) / n,
                       "node i ends with block i of the root's data"),
        CollectiveSpec("gather", False, True, "n", lambda n: (n - 1) / n,
                       "the root ends with every node's block"),
        CollectiveSpec("scan", True, False, "1", lambda n: 1.0,
                       "node i ends with the vector reduced over nodes 0..i (inclusive prefix)"),
        CollectiveSpec("shift", False, False, "1", lambda n: 1.0,
                       "node (i+q) mod N ends with node i's block (circular q-shift)"),
    )
}

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


def canonical_collective(name: str) -> str:
    """Return the canonical collective name for ``name`` or an alias.

    Parameters
    ----------
    name : str
        ``"all-gather"``, ``"allgather"``, ``"ag"`` ...

    Returns
    -------
    str
        Canonical name, a key of :data:`SPECS`.

    Raises
    ------
    UnknownNameError
        If the name is not a known collective.

    Examples
    --------
    >>> canonical_collective("all-reduce")
    'allreduce'
    """
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in SPECS:
        raise UnknownNameError(
            f"unknown collective {name!r}; known: {', '.join(sorted(SPECS))}")
    return key


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

    Attributes
    ----------
    kind : str
        Canonical collective name.
    nodes : int
        Number of participating nodes.
    chunks : int
        Number of chunks the data is cut into.
    size_bytes : int
        Message size (see module docstring for its meaning per collective).
    root : int or None
        Root node of rooted collectives.
    pre_node, pre_chunk : numpy.ndarray
        Pairs held at the start (for reductions: node holds its own contribution).
    post_node, post_chunk : numpy.ndarray
        Pairs required at the end (for reductions: with every contribution).
    chunk_bytes : numpy.ndarray
        Size of each chunk in bytes.
    post_upto : numpy.ndarray or None
        For prefix reductions (scan): post pair ``i`` needs exactly the contributions
        of nodes ``0..post_upto[i]``; None means every contribution.
    shift : int or None
        The q of a circular q-shift.
    """

    kind: str
    nodes: int
    chunks: int
    size_bytes: int
    root: int | None
    pre_node: np.ndarray = field(repr=False)
    pre_chunk: np.ndarray = field(repr=False)
    post_node: np.ndarray = field(repr=False)
    post_chunk: np.ndarray = field(repr=False)
    chunk_bytes: np.ndarray = field(repr=False)
    post_upto: np.ndarray | None = field(default=None, repr=False)
    shift: int | None = None

    @property
    def spec(self) -> CollectiveSpec:
        """Static facts about this kind of collective."""
        return SPECS[self.kind]

    @property
    def reduction(self) -> bool:
        """Whether buffers combine contributions."""
        return SPECS[self.kind].reduction

    @property
    def split(self) -> int:
        """Chunks per block (per node block, per pair block, or per vector)."""
        n = self.nodes
        if self.kind in ("allgather", "reducescatter", "scatter", "gather", "shift"):
            return self.chunks // n
        if self.kind == "alltoall":
            return self.chunks // (n * n)
        return self.chunks

    def describe(self) -> dict:
        """Return the JSON-able description embedded in schedule files."""
        out = {"kind": self.kind, "nodes": self.nodes, "size_bytes": self.size_bytes,
               "split": self.split, "root": self.root}
        if self.kind == "shift":
            out["shift"] = self.shift
        return out


MAX_TRACKED_PAIRS = 150_000_000
"""Largest number of (node, chunk) pairs a collective may track: explicit schedules of
all-gather or all-to-all need at least that many chunk deliveries (N=12247 for all-gather)."""


def _pairs(nodes: np.ndarray, chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.ascontiguousarray(nodes, dtype=np.int64), np.ascontiguousarray(chunks, dtype=np.int64)


def _all_pairs(n: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    return _pairs(np.repeat(np.arange(n), c), np.tile(np.arange(c), n))


def make_collective(kind: str, nodes: int, size_bytes: int, *, split: int = 1,
                    root: int | None = None, shift: int = 1) -> Collective:
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

    Returns
    -------
    Collective
        The instance, with chunk ``b * split + j`` being piece ``j`` of block ``b``.

    Raises
    ------
    InputError
        For fewer than 2 nodes, a non-positive size or split, or a bad root.

    Examples
    --------
    >>> c = make_collective("allgather", 4, 1024)
    >>> c.chunks, c.pre_node.tolist(), c.pre_chunk.tolist()
    (4, [0, 1, 2, 3], [0, 1, 2, 3])
    """
    kind = canonical_collective(kind)
    spec = SPECS[kind]
    if isinstance(nodes, bool) or not isinstance(nodes, (int, np.integer)) or nodes < 2:
        raise InputError(f"a collective needs at least 2 nodes, got {nodes!r}")
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, (int, np.integer)) or size_bytes < 1:
        raise InputError(f"size must be a positive number of bytes, got {size_bytes!r}")
    if split < 1:
        raise InputError(f"split must be >= 1, got {split}")
    n, s = int(nodes), int(split)
    chunks_total = {"allgather": n * s, "reducescatter": n * s, "scatter": n * s, "gather": n * s,
                    "shift": n * s, "alltoall": n * n * s}.get(kind, s)
    if n * chunks_total > MAX_TRACKED_PAIRS:
        raise InputError(f"{kind} on {n} nodes with {chunks_total} chunks tracks {n * chunks_total:.3g} "
                         f"(node, chunk) pairs; collsim's explicit schedules are limited to "
                         f"{MAX_TRACKED_PAIRS:.3g}: use fewer nodes or chunks")
    if spec.rooted:
        root = 0 if root is None else int(root)
        if not 0 <= root < n:
            raise InputError(f"root {root} is not a node of a {n}-node system")
    else:
        root = None
    ar = np.arange
    if kind == "allgather":
        c = n * s
        pre = _pairs(np.repeat(ar(n), s), ar(c))
        post = _all_pairs(n, c)
        sizes = np.tile(split_bytes(size_bytes, s), n)
    elif kind == "reducescatter":
        c = n * s
        pre = _all_pairs(n, c)
        post = _pairs(np.repeat(ar(n), s), ar(c))
        sizes = np.tile(split_bytes(size_bytes, s), n)
    elif kind == "allreduce":
        c = s
        pre = _all_pairs(n, c)
        post = _all_pairs(n, c)
        sizes = split_bytes(size_bytes, s)
    elif kind == "broadcast":
        c = s
        pre = _pairs(np.full(c, root), ar(c))
        post = _all_pairs(n, c)
        sizes = split_bytes(size_bytes, s)
    elif kind == "reduce":
        c = s
        pre = _all_pairs(n, c)
        post = _pairs(np.full(c, root), ar(c))
        sizes = split_bytes(size_bytes, s)
    elif kind in ("scatter", "gather"):
        c = n * s
        owner = np.repeat(ar(n), s)
        pre = _pairs(np.full(c, root), ar(c)) if kind == "scatter" else _pairs(owner, ar(c))
        post = _pairs(owner, ar(c)) if kind == "scatter" else _pairs(np.full(c, root), ar(c))
        sizes = np.tile(split_bytes(size_bytes, s), n)
    elif kind == "scan":
        c = s
        pre = _all_pairs(n, c)
        post = _all_pairs(n, c)
        sizes = split_bytes(size_bytes, s)
        return Collective(kind, n, c, int(size_bytes), root, pre[0], pre[1], post[0], post[1],
                          np.ascontiguousarray(sizes, dtype=np.int64), post_upto=post[0].copy())
    elif kind == "shift":
        if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) or not 1 <= shift < n:
            raise InputError(f"shift q must be an integer in 1..{n - 1}, got {shift!r}")
        c = n * s
        owner = np.repeat(ar(n), s)
        pre = _pairs(owner, ar(c))
        post = _pairs((owner + shift) % n, ar(c))
        sizes = np.tile(split_bytes(size_bytes, s), n)
        return Collective(kind, n, c, int(size_bytes), None, pre[0], pre[1], post[0], post[1],
                          np.ascontiguousarray(sizes, dtype=np.int64), shift=int(shift))
    else:  # alltoall: block (src, dst) -> chunks (src*n + dst)*s + j
        c = n * n * s
        src = np.repeat(ar(n), n * s)
        dst = np.tile(np.repeat(ar(n), s), n)
        keep = src != dst
        chunk = ar(c)[keep]
        pre = _pairs(src[keep], chunk)
        post = _pairs(dst[keep], chunk)
        sizes = np.tile(split_bytes(size_bytes, s), n * n)
    return Collective(kind, n, c, int(size_bytes), root, pre[0], pre[1], post[0], post[1],
                      np.ascontiguousarray(sizes, dtype=np.int64))
