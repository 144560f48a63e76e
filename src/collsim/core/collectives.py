"""The collectives as objects: one :class:`CollectiveType` per collective, registered in :data:`TYPES`.

Look one up by name or alias with :func:`collsim.core.collective.collective_type`.

Each object owns everything collsim knows about its collective: which chunks each node
holds before and after (:meth:`CollectiveType.holdings`), whether it reduces, whether it
has a root, how its data is cut into blocks and chunks, its sizes (collsim's size, nccl-tests'
total and bus-bandwidth factor), its traffic and per-cut volume lower bounds, the fewest
chunk deliveries any schedule needs, and its one-line description.  Algorithms, the
verifier, the bounds, the CLI and the exporters ask the object (``coll.type.reduction``,
``coll.type.cut_demand(...)``) instead of comparing the collective's name; the name stays
the canonical string for output (:attr:`CollectiveType.name`).

The blocks: all-gather, reduce-scatter, scatter, gather and shift have one block per node
(node ``b`` owns chunks ``b*split .. b*split+split-1``), all-to-all one per ordered pair
(block ``a*N + b``, empty for ``a == b``), the others one block, the vector.

References
----------
M. Cowan, S. Maleki, M. Musuvathi, O. Saarikivi, Y. Xiong, "MSCCLang: Microsoft Collective
Communication Language", ASPLOS 2023 (collectives stated once, as pre- and postconditions);
E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication: theory,
practice, and experience", Concurrency and Computation: Practice and Experience 19(13), 2007
(the traffic lower bounds; all-reduce as reduce-scatter then all-gather); NVIDIA, nccl-tests, doc/PERFORMANCE.md, 2017 (total size and
bus-bandwidth factors).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .collective_buffers import buffer_chunks, buffer_offsets
from .holdings import Holdings, holder_dtype

_BLOCKS = {"node": lambda n: n, "pair": lambda n: n * n, "vector": lambda n: 1}


@dataclass(frozen=True)
class CollectiveType:
    """One kind of collective and its predicates (look one up with ``collective_type``).

    Parameters
    ----------
    name : str
        Canonical name (``"allgather"``...), used in output and files.
    title : str
        Hyphenated name for prose (``"all-gather"``).
    description : str
        One line on what the nodes hold at the end.
    reduction : bool
        Whether buffers combine contributions.
    rooted : bool
        Whether the collective has a root node.
    blocks : str
        What one block (``split`` chunks) is: ``"node"`` (one per node), ``"pair"`` (one per
        ordered pair of nodes) or ``"vector"`` (the whole data).
    nccl_blocks : bool
        Whether nccl-tests' size (the total buffer) is N times collsim's size.
    size_unit, size_meaning : str
        What collsim's size is, short (``"per node"``) and long (``"each node's block"``).
    input_buffer, output_buffer : str
        The shape of a rank's input and output buffers as MPI and MSCCL lay them out (``"own"``,
        ``"all"``, ``"root"``, ``"row"``, ``"column"``, ``"shifted"``: :mod:`collsim.core.collective_buffers`).
    prefix : bool
        Prefix reduction (scan): node ``v`` needs exactly the contributions of ``0..v``.
    shifted : bool
        Circular q-shift: the instance carries its q.
    point_to_point : bool
        Every block has one source and one destination (:meth:`endpoints`).
    direction : str
        ``"in"`` if data flows from its sources towards the nodes that need it (all-gather,
        broadcast, scatter ...), ``"out"`` if towards fewer nodes (reduce-scatter, reduce,
        gather), ``"both"`` for all-reduce.
    exact_cut : str or None
        The exact cut search that bounds it (:mod:`collsim.kinds.network.cuts`): ``"ratio"`` (N - e(S)
        blocks through each node set S), ``"thinnest"`` (one vector across any cut), ``"root"``
        (one vector into or out of a side without the root) or None.
    mpi_function : str
        MPI's own call for it (:mod:`collsim.mpi.native`).
    msccl : bool
        Whether MSCCL's XML states it (its ``coll`` attribute is :attr:`name`; :mod:`collsim.interop.msccl.files`).
    dual : str or None
        The collective that is this one run backwards (reduce is broadcast's dual), if it has one.
    textbook_name : str
        Its name in Grama et al.'s chapter 4 (``"all-to-all broadcast"`` ...; :attr:`title` if none).
    composed_of : tuple of str
        The collectives that, run one after the other, make this one (all-reduce: reduce-scatter
        then all-gather); empty if it is not a composition (:attr:`phases`).

    Examples
    --------
    >>> ag = TYPES["allgather"]
    >>> ag.name, ag.reduction, ag.chunk_count(4, 2), ag.total_bytes(4, 10), ag.busbw_factor(4)
    ('allgather', False, 8, 40, 0.75)
    >>> pre, post = ag.holdings(3, 1)
    >>> pre.pairs()[0].tolist(), post.pairs()[0].tolist()
    ([0, 1, 2], [0, 0, 0, 1, 1, 1, 2, 2, 2])
    """

    name: str
    title: str
    description: str
    reduction: bool = False
    rooted: bool = False
    blocks: str = "node"
    nccl_blocks: bool = False
    size_unit: str = "per node"
    size_meaning: str = "each node's block"
    input_buffer: str = "all"
    output_buffer: str = "all"
    prefix: bool = False
    shifted: bool = False
    point_to_point: bool = False
    direction: str = "in"
    exact_cut: str | None = None
    mpi_function: str = ""
    msccl: bool = False
    dual: str | None = None
    composed_of: tuple[str, ...] = ()
    textbook_name: str = ""

    def __repr__(self) -> str:
        return f"<collective {self.name}>"

    # -- chunking and sizes -------------------------------------------------------------------
    @property
    def per_pair(self) -> bool:
        """Whether every ordered pair of nodes has its own block (personalised exchange: all-to-all)."""
        return self.blocks == "pair"

    @property
    def per_node(self) -> bool:
        """Whether every node has one block (all-gather, reduce-scatter, scatter, gather, shift)."""
        return self.blocks == "node"

    @property
    def whole_vector(self) -> bool:
        """Whether the data is one vector (all-reduce, broadcast, reduce, scan)."""
        return self.blocks == "vector"

    @property
    def phases(self) -> tuple[CollectiveType, ...]:
        """The collectives run one after the other to make this one (:attr:`composed_of`), or itself."""
        return tuple(TYPES[name] for name in self.composed_of) or (self,)

    def block_count(self, nodes: int) -> int:
        """Number of blocks on ``nodes`` nodes (N, N^2 or 1)."""
        return _BLOCKS[self.blocks](int(nodes))

    def chunk_count(self, nodes: int, split: int) -> int:
        """Number of chunks: blocks times ``split``."""
        return self.block_count(nodes) * int(split)

    def split_of(self, nodes: int, chunks: int) -> int:
        """Chunks per block of an instance with ``chunks`` chunks."""
        return int(chunks) // self.block_count(nodes)

    def total_bytes(self, nodes: int, size_bytes: int) -> int:
        """nccl-tests' size (the total buffer) for collsim's ``size_bytes``."""
        return int(size_bytes) * (int(nodes) if self.nccl_blocks else 1)

    def busbw_factor(self, nodes: int) -> float:
        """nccl-tests' bus-bandwidth factor on ``nodes`` nodes."""
        return 1.0

    def buffer_chunks(self, which: str, nodes: int, split: int, rank: int, root: int | None = None,
                      shift: int | None = None) -> np.ndarray:
        """The chunk at each offset of a rank's ``"input"`` or ``"output"`` buffer (-1: none).

        See :func:`collsim.core.collective_buffers.buffer_chunks`.
        """
        shape = self.input_buffer if which == "input" else self.output_buffer
        return buffer_chunks(shape, nodes, split, self.chunk_count(nodes, split), rank, root, shift)

    def buffer_offsets(self, which: str, nodes: int, split: int, rank, chunk_ids, root: int | None = None,
                       shift: int | None = None) -> np.ndarray:
        """Offsets of chunks in ranks' ``"input"`` or ``"output"`` buffers (-1: not there), vectorised."""
        shape = self.input_buffer if which == "input" else self.output_buffer
        return buffer_offsets(shape, nodes, split, rank, chunk_ids, root, shift)

    # -- semantics ----------------------------------------------------------------------------
    def holdings(self, nodes: int, split: int, root: int | None = None,
                 shift: int | None = None) -> tuple[Holdings, Holdings]:
        """The precondition and postcondition: chunk ``b * split + j`` is piece ``j`` of block ``b``."""
        raise NotImplementedError

    def min_deliveries(self, nodes: int, split: int) -> int:
        """Fewest chunk deliveries any explicit schedule needs (see :func:`~collsim.core.collective.min_deliveries`)."""
        raise NotImplementedError

    def endpoints(self, nodes: int, shift: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Source and destination of every block of a point-to-point collective (empty otherwise)."""
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty

    # -- lower bounds (per byte of collsim's size, or in bytes) ---------------------------------
    def traffic(self, nodes: int, size_bytes: float, shift: int | None = None) -> tuple[float, float, float]:
        """Bytes some node must receive, some node must send, and hops x bytes on a ring.

        See :func:`collsim.cost.bounds.traffic_bound`, which wraps it.
        """
        n, m = int(nodes), float(size_bytes)
        return m, m, (n - 1) * m

    def cut_demand(self, in_a: np.ndarray, root: int | None, shift: int | None,
                   m: float) -> tuple[np.ndarray, np.ndarray]:
        """Bytes that must cross each cut from side A to B and from B to A (``in_a``: K x N masks).

        Cuts with an empty side are not masked here (:func:`collsim.kinds.network.cuts.cut_demand_bytes` does).
        """
        raise NotImplementedError


def _owner(n: int, s: int) -> np.ndarray:
    return np.repeat(np.arange(n, dtype=holder_dtype(n)), s)


def _at(n: int, chunks: int, node: int) -> Holdings:
    return Holdings.single(n, np.full(chunks, node, dtype=holder_dtype(n)))


def _sides(in_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(in_a, dtype=bool).sum(axis=1).astype(float)
    return a, in_a.shape[1] - a


def _root_side(in_a, root, per_b, per_a, outward: bool):
    """From the root's side to the other (``outward``) or into the root's side."""
    root_a = np.asarray(in_a, dtype=bool)[:, int(root)]
    if outward:
        return np.where(root_a, per_b, 0.0), np.where(root_a, 0.0, per_a)
    return np.where(root_a, 0.0, per_b), np.where(root_a, per_a, 0.0)


class _AllGather(CollectiveType):
    def busbw_factor(self, nodes):
        return (nodes - 1) / nodes

    def holdings(self, nodes, split, root=None, shift=None):
        return Holdings.single(nodes, _owner(nodes, split)), Holdings.everyone(nodes, nodes * split)

    def min_deliveries(self, nodes, split):
        return (nodes - 1) * nodes * split

    def traffic(self, nodes, size_bytes, shift=None):
        n, m = int(nodes), float(size_bytes)
        return (n - 1) * m, m, n * (n - 1) * m

    def cut_demand(self, in_a, root, shift, m):
        a, b = _sides(in_a)
        return a * m, b * m


class _ReduceScatter(_AllGather):
    def holdings(self, nodes, split, root=None, shift=None):
        return Holdings.everyone(nodes, nodes * split), Holdings.single(nodes, _owner(nodes, split))

    def traffic(self, nodes, size_bytes, shift=None):
        n, m = int(nodes), float(size_bytes)
        return (n - 1) * m, (n - 1) * m, n * (n - 1) * m

    def cut_demand(self, in_a, root, shift, m):
        a, b = _sides(in_a)
        return b * m, a * m


class _AllReduce(CollectiveType):
    def busbw_factor(self, nodes):
        return 2 * (nodes - 1) / nodes

    def holdings(self, nodes, split, root=None, shift=None):
        return Holdings.everyone(nodes, split), Holdings.everyone(nodes, split)

    def min_deliveries(self, nodes, split):
        return nodes * split

    def traffic(self, nodes, size_bytes, shift=None):
        n, m = int(nodes), float(size_bytes)
        per = 2 * (n - 1) * m / n
        return per, per, 2 * (n - 1) * m

    def cut_demand(self, in_a, root, shift, m):
        full = np.full(len(in_a), m)
        return full, full.copy()


class _Broadcast(CollectiveType):
    def holdings(self, nodes, split, root=None, shift=None):
        return _at(nodes, split, root), Holdings.everyone(nodes, split)

    def min_deliveries(self, nodes, split):
        return (nodes - 1) * split

    def cut_demand(self, in_a, root, shift, m):
        return _root_side(in_a, root, m, m, outward=True)


class _Reduce(_Broadcast):
    def holdings(self, nodes, split, root=None, shift=None):
        return Holdings.everyone(nodes, split), _at(nodes, split, root)

    def cut_demand(self, in_a, root, shift, m):
        return _root_side(in_a, root, m, m, outward=False)


class _Scatter(_Broadcast):
    def busbw_factor(self, nodes):
        return (nodes - 1) / nodes

    def holdings(self, nodes, split, root=None, shift=None):
        return _at(nodes, nodes * split, root), Holdings.single(nodes, _owner(nodes, split))

    def traffic(self, nodes, size_bytes, shift=None):  # the root sends N-1 blocks
        n, m = int(nodes), float(size_bytes)
        return m, (n - 1) * m, (n - 1) * m

    def cut_demand(self, in_a, root, shift, m):
        a, b = _sides(in_a)
        return _root_side(in_a, root, b * m, a * m, outward=True)


class _Gather(_Scatter):
    def holdings(self, nodes, split, root=None, shift=None):
        return Holdings.single(nodes, _owner(nodes, split)), _at(nodes, nodes * split, root)

    def traffic(self, nodes, size_bytes, shift=None):  # the root receives N-1 blocks
        n, m = int(nodes), float(size_bytes)
        return (n - 1) * m, m, (n - 1) * m

    def cut_demand(self, in_a, root, shift, m):
        a, b = _sides(in_a)
        return _root_side(in_a, root, a * m, b * m, outward=False)


class _Scan(_AllReduce):
    def busbw_factor(self, nodes):
        return 1.0

    def min_deliveries(self, nodes, split):
        return (nodes - 1) * split

    def traffic(self, nodes, size_bytes, shift=None):  # nodes 1..N-1 each need node 0's contribution
        return CollectiveType.traffic(self, nodes, size_bytes)

    def cut_demand(self, in_a, root, shift, m):  # node j needs the contributions of nodes 0..j
        in_a = np.asarray(in_a, dtype=bool)
        n = in_a.shape[1]
        idx = np.arange(n)
        first_a = np.where(in_a, idx, n).min(axis=1)
        first_b = np.where(in_a, n, idx).min(axis=1)
        last_a = np.where(in_a, idx, -1).max(axis=1)
        last_b = np.where(in_a, -1, idx).max(axis=1)
        return np.where(first_a < last_b, m, 0.0), np.where(first_b < last_a, m, 0.0)


class _Shift(CollectiveType):
    def holdings(self, nodes, split, root=None, shift=None):
        owner = _owner(nodes, split)
        return Holdings.single(nodes, owner), Holdings.single(nodes, (owner + int(shift)) % nodes)

    def min_deliveries(self, nodes, split):
        return nodes * split

    def endpoints(self, nodes, shift=None):
        s = np.arange(int(nodes))
        return s, (s + int(shift or 1)) % int(nodes)

    def traffic(self, nodes, size_bytes, shift=None):
        n, m, q = int(nodes), float(size_bytes), int(shift or 1)
        return m, m, n * min(q, n - q) * m

    def cut_demand(self, in_a, root, shift, m):
        in_a = np.asarray(in_a, dtype=bool)
        tgt_a = np.roll(in_a, -int(shift), axis=1)   # tgt_a[:, i]: is node i + q in A
        return (in_a & ~tgt_a).sum(axis=1) * m, (~in_a & tgt_a).sum(axis=1) * m


class _AllToAll(_AllGather):
    def holdings(self, nodes, split, root=None, shift=None):
        n, s, dt = nodes, split, holder_dtype(nodes)   # block (a, b): chunks (a*n + b)*s + j, none for a == b
        a = np.repeat(np.arange(n, dtype=dt), n * s)
        b = np.tile(np.repeat(np.arange(n, dtype=dt), s), n)
        self_block = a == b
        a[self_block] = -1
        b[self_block] = -1
        return Holdings.single(n, a), Holdings.single(n, b)

    def endpoints(self, nodes, shift=None):
        n = int(nodes)
        s, d = np.divmod(np.arange(n * n), n)
        keep = s != d
        return s[keep], d[keep]

    def traffic(self, nodes, size_bytes, shift=None):  # each block crosses its shortest ring distance
        n, m = int(nodes), float(size_bytes)
        return (n - 1) * m, (n - 1) * m, n * (n * n // 4) * m

    def cut_demand(self, in_a, root, shift, m):
        a, b = _sides(in_a)
        return a * b * m, a * b * m


_VECTOR = {"blocks": "vector", "size_unit": "vector", "size_meaning": "the whole vector"}

TYPES: dict[str, CollectiveType] = {t.name: t for t in (
    _AllGather("allgather", "all-gather", "every node ends with every node's block",
               nccl_blocks=True, input_buffer="own", exact_cut="ratio",
               mpi_function="MPI_Allgather", msccl=True, textbook_name="all-to-all broadcast"),
    _ReduceScatter("reducescatter", "reduce-scatter", "node i ends with block i reduced over all nodes",
                   reduction=True, nccl_blocks=True, size_meaning="each node's result block", output_buffer="own",
                   direction="out", exact_cut="ratio", dual="allgather",
                   mpi_function="MPI_Reduce_scatter_block", msccl=True, textbook_name="all-to-all reduction"),
    _AllReduce("allreduce", "all-reduce", "every node ends with the vector reduced over all nodes",
               reduction=True, direction="both", exact_cut="thinnest", composed_of=("reducescatter", "allgather"),
               mpi_function="MPI_Allreduce", msccl=True, textbook_name="all-reduce", **_VECTOR),
    _Broadcast("broadcast", "broadcast", "every node ends with the root's vector",
               rooted=True, input_buffer="root", exact_cut="root",
               mpi_function="MPI_Bcast", msccl=True, textbook_name="one-to-all broadcast",
               **{**_VECTOR, "size_meaning": "the root's whole vector"}),
    _Reduce("reduce", "reduce", "the root ends with the vector reduced over all nodes",
            reduction=True, rooted=True, output_buffer="root", direction="out", exact_cut="root", dual="broadcast",
            mpi_function="MPI_Reduce", msccl=True, textbook_name="all-to-one reduction", **_VECTOR),
    _AllToAll("alltoall", "all-to-all", "node d ends with block (s, d) from every node s",
              blocks="pair", nccl_blocks=True, size_unit="per node pair",
              size_meaning="each (source, destination) pair's block", input_buffer="row", output_buffer="column",
              point_to_point=True, mpi_function="MPI_Alltoall", msccl=True, textbook_name="all-to-all personalized"),
    _Scatter("scatter", "scatter", "node i ends with block i of the root's data",
             rooted=True, nccl_blocks=True, input_buffer="root", output_buffer="own",
             mpi_function="MPI_Scatter", textbook_name="scatter"),
    _Gather("gather", "gather", "the root ends with every node's block",
            rooted=True, nccl_blocks=True, input_buffer="own", output_buffer="root", direction="out", dual="scatter",
            mpi_function="MPI_Gather", textbook_name="gather"),
    _Scan("scan", "scan", "node i ends with the vector reduced over nodes 0..i (inclusive prefix)",
          reduction=True, prefix=True, mpi_function="MPI_Scan", textbook_name="prefix sum", **_VECTOR),
    _Shift("shift", "circular shift", "node (i+q) mod N ends with node i's block (circular q-shift)",
           shifted=True, point_to_point=True, input_buffer="own", output_buffer="shifted",
           mpi_function="MPI_Sendrecv", textbook_name="circular shift"),
)}
"""Every collective, by canonical name."""
