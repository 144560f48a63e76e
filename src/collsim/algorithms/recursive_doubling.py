"""Recursive doubling: the textbook's hypercube algorithms and MPICH's all-reduce.

One family, one idea: in round ``i`` a node talks to the node whose label
differs in one bit (or lies ``2**i`` away), so ``ceil(log2 N)`` rounds suffice.

* all-gather (the textbook's all-to-all broadcast on a hypercube): exchange with
  ``r XOR 2**i``, the message doubling every round; N a power of two.
* all-reduce: the same exchange with reductions and a constant message; any N
  with MPICH's folding of the ``N - 2**floor(log2 N)`` extra ranks (Thakur et al.).
* broadcast, reduce, scatter, gather: the textbook's one-to-all broadcast,
  all-to-one reduction and scatter, as recursive *halving* of the label range
  (:func:`halving_rounds`); for a power of two this is exactly the hypercube
  procedure with ``virtual id = id XOR root``, and it extends to any N (the
  chapter's ring picture: "two independent problems over halves").
* scan: distance doubling (node r sends to r + 2**i), because collsim keeps one
  buffer per (node, chunk) and the textbook's hypercube prefix sum needs two
  (``result`` and ``msg``); see docs/algorithms/textbook-and-mpi.md.

The helpers here (:func:`halving_rounds`, :func:`add_grouped`, :func:`ts_tw`) are
shared with :mod:`collsim.algorithms.textbook_mesh` and the other textbook modules.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.collective import make_collective
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder
from .registry import register

SEED = "seed 002 (Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations')"


# --- helpers shared by the textbook modules ---------------------------------------------
def is_pow2(n: int) -> bool:
    """Whether ``n`` is a power of two.

    Parameters
    ----------
    n : int
        A positive integer.

    Returns
    -------
    bool
        True for 1, 2, 4, 8, ...

    Examples
    --------
    >>> is_pow2(8), is_pow2(12)
    (True, False)
    """
    return n >= 1 and n & (n - 1) == 0


def ceil_log2(n: int) -> int:
    """``ceil(log2 n)`` computed exactly on integers.

    Parameters
    ----------
    n : int
        A positive integer.

    Returns
    -------
    int
        The number of halving (or doubling) rounds over ``n`` labels.

    Examples
    --------
    >>> ceil_log2(8), ceil_log2(9), ceil_log2(1)
    (3, 4, 0)
    """
    return (int(n) - 1).bit_length()


def ts_tw(system) -> tuple[float, float]:
    """The α–β model's start-up and per-byte times of an electrical network.

    Parameters
    ----------
    system : Network
        The network.

    Returns
    -------
    tuple of float
        ``(t_s, t_w)``: ``system.alpha_s`` (``startup_s`` if set, else the link
        latency) and ``1 / link_bandwidth_bytes_per_s``.
    """
    return float(system.alpha_s), 1.0 / float(system.link_bandwidth_bytes_per_s)


def check_root(root, n: int) -> int:
    """Validate a root node id.

    Parameters
    ----------
    root : int
        Proposed root.
    n : int
        Number of nodes.

    Returns
    -------
    int
        The root.

    Raises
    ------
    InputError
        If it is not a node id.
    """
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < n:
        raise InputError(f"root must be a node id in 0..{n - 1}, got {root!r}")
    return int(root)


def halving_rounds(n: int, root: int) -> list[tuple[np.ndarray, ...]]:
    """Rounds of the recursive-halving tree over labels ``0..n-1`` rooted at ``root``.

    The root owns ``[0, n)``.  In every round each owner of an interval of two or
    more labels splits it into a left half of ``ceil(len/2)`` and a right half,
    and sends to the node of the *other* half at the same offset (clamped to the
    interval), which becomes that half's owner.  For ``n = 2**d`` the partner is
    ``owner XOR 2**i`` — the textbook's hypercube broadcast with
    ``virtual id = id XOR root`` — and every round's routes on a line or ring are
    disjoint.

    Parameters
    ----------
    n : int
        Number of labels, >= 1.
    root : int
        Owner of the whole range.

    Returns
    -------
    list of tuple
        Per round ``(sender, receiver, lo, hi)``: the receiver owns ``[lo, hi)``.
        ``ceil(log2 n)`` rounds.

    Examples
    --------
    >>> [(s.tolist(), r.tolist()) for s, r, _, _ in halving_rounds(8, 5)]
    [([5], [1]), ([5, 1], [7, 3]), ([5, 1, 7, 3], [4, 0, 6, 2])]
    """
    lo, hi, own = np.array([0]), np.array([n]), np.array([root])
    out = []
    while True:
        big = hi - lo > 1
        if not big.any():
            return out
        lo, hi, own = lo[big], hi[big], own[big]
        half = (hi - lo + 1) // 2
        mid = lo + half
        left = own < mid
        to = np.where(left, np.minimum(own + half, hi - 1), own - half)
        rlo, rhi = np.where(left, mid, lo), np.where(left, hi, mid)
        out.append((own, to, rlo, rhi))
        lo = np.concatenate([np.where(left, lo, mid), rlo])
        hi = np.concatenate([np.where(left, mid, hi), rhi])
        own = np.concatenate([own, to])


def add_grouped(b: LogicalBuilder, rnd: int, src, dst, lengths, make, *, reduce=False) -> None:
    """Add transfers whose chunk lists vary in length, one 2-D block per distinct length.

    Parameters
    ----------
    b : LogicalBuilder
        Target builder.
    rnd : int
        Round.
    src, dst, lengths : numpy.ndarray
        Endpoints and number of chunks of each transfer.
    make : callable
        ``make(rows, k) -> (len(rows), k)`` chunk ids for the transfers ``rows`` of length ``k``.
    reduce : bool, optional
        Combine at the receiver.
    """
    for k in np.unique(lengths):
        rows = np.flatnonzero(lengths == k)
        if k > 0:
            b.add(rnd, src[rows], dst[rows], make(rows, int(k)), reduce=reduce)


def tree_schedule(b: LogicalBuilder, rounds, collective: str, *, count=None, chunks=None,
                  first_round: int = 0) -> int:
    """Emit a halving tree as broadcast, reduce, scatter or gather.

    Parameters
    ----------
    b : LogicalBuilder
        Target builder.
    rounds : list of tuple
        Output of :func:`halving_rounds` (possibly relabelled to node ids).
    collective : str
        ``broadcast`` and ``scatter`` run the rounds forwards; ``reduce`` and
        ``gather`` backwards with the endpoints swapped.
    count, chunks : callable, optional
        Scatter/gather payload: ``count(lo, hi)`` chunks per transfer for the labels
        ``[lo, hi)`` and ``chunks(lo, hi, k)`` their ``(T, k)`` ids.  Broadcast and
        reduce always send chunk 0.
    first_round : int, optional
        Round index of the first round.

    Returns
    -------
    int
        Rounds used.
    """
    forward = collective in ("broadcast", "scatter")
    order = rounds if forward else rounds[::-1]
    for j, (own, to, lo, hi) in enumerate(order):
        r = first_round + j
        src, dst = (own, to) if forward else (to, own)
        if collective in ("broadcast", "reduce"):
            b.add(r, src, dst, np.zeros((len(src), 1), np.int64), reduce=collective == "reduce")
        else:
            add_grouped(b, r, src, dst, count(lo, hi),
                        lambda rows, k, lo=lo, hi=hi: chunks(lo[rows], hi[rows], k))
    return len(order)


# --- registration -------------------------------------------------------------------------
def _requires(system, collective):
    n = system.nodes
    if collective == "allgather" and not is_pow2(n):
        return (f"recursive-doubling all-gather exchanges with r XOR 2^i and needs a power-of-two "
                f"node count, got {n} (use bruck for any N)")
    return None


def _alpha_beta(system, collective, size_bytes, params):
    ts, tw = ts_tw(system)
    n, m = system.nodes, size_bytes
    if collective == "allgather":          # t_s log p + t_w m (p-1)
        return ts * math.log2(n) + tw * m * (n - 1)
    if collective == "allreduce":          # (t_s + t_w m) log p, + 2 fold steps if N is not 2^k
        return (ts + tw * m) * ((n.bit_length() - 1) + (0 if is_pow2(n) else 2))
    if collective in ("scatter", "gather"):  # t_s log p + t_w m (p-1)
        return ts * ceil_log2(n) + tw * m * (n - 1)
    return (ts + tw * m) * ceil_log2(n)    # broadcast, reduce, scan


@register(
    "recursive-doubling", aliases=("rd",),
    collectives=("allgather", "allreduce", "broadcast", "reduce", "scan", "scatter", "gather"),
    systems=("network",), requires=_requires, params=("root",), alpha_beta=_alpha_beta,
    constraints="all-gather: N a power of two; every other collective: any N",
    reference=f"{SEED}: one-to-all broadcast / all-to-one reduction on a hypercube (procedures "
              "GENERAL_ONE_TO_ALL_BC, ALL_TO_ONE_REDUCE, cost (t_s + t_w m) log p), all-to-all broadcast "
              "on a hypercube (ALL_TO_ALL_BC_HCUBE, t_s log p + t_w m (p-1)), all-reduce ((t_s + t_w m) "
              "log p), scatter (t_s log p + t_w m (p-1)); Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005, "
              "§4 (recursive doubling; non-power-of-two all-reduce); scan: Kogge & Stone, IEEE TC 22(8) 1973",
    summary="log p rounds over label bits: hypercube all-gather/all-reduce/broadcast/reduce/scatter/gather/scan",
)
def recursive_doubling(system, collective, size_bytes, *, root: int = 0):
    """Build recursive-doubling (hypercube) schedules.

    * all-gather: round ``i`` node ``r`` exchanges with ``r XOR 2**i`` the ``2**i``
      blocks of its current sub-cube (N = 2**d).
    * all-reduce: same partners, whole vector, reduction.  For other N, with
      ``p' = 2**floor(log2 N)`` and ``rem = N - p'``: even ranks ``< 2 rem`` first
      send their vector to ``rank + 1`` (reduce), the ``p'`` survivors run the
      exchange, and the odd ranks finally copy the result back (Thakur et al.).
    * broadcast / reduce / scatter / gather: the halving tree of
      :func:`halving_rounds` from ``root`` (reduce and gather run it backwards);
      scatter sends the receiver's whole half of the blocks (messages halve).
    * scan (inclusive prefix): round ``i`` node ``r`` sends its partial
      ``[r - 2**i + 1, r]`` to ``r + 2**i``, which reduces it.

    Parameters
    ----------
    system : Network
        Target network (a hypercube makes every exchange one hop).
    collective : str
        Canonical collective name.
    size_bytes : int
        Message size m (per node block; whole vector for all-reduce, broadcast, reduce, scan).
    root : int, optional
        Root of broadcast, reduce, scatter and gather (default 0).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    Raises
    ------
    UnsupportedError
        All-gather on a node count that is not a power of two (via ``requires``).

    References
    ----------
    Seed 002 (Grama et al.), one-to-all broadcast, all-to-one reduction, all-to-all
    broadcast, all-reduce and prefix sums, scatter on a hypercube; R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations
    in MPICH", IJHPCA 19(1), 2005, §4; P. M. Kogge, H. S. Stone, IEEE Trans.
    Computers 22(8), 1973 (recursive doubling).

    Examples
    --------
    >>> import collsim
    >>> from collsim.systems.hypercube import Hypercube
    >>> collsim.build("recursive-doubling", Hypercube(nodes=8), "allgather", "1KiB").num_steps
    3
    """
    n = system.nodes
    i = np.arange(n)
    if collective == "allgather":
        b = LogicalBuilder(make_collective("allgather", n, size_bytes))
        for r in range(ceil_log2(n)):
            w = 1 << r
            base = (i >> r) << r
            b.add(r, i, i ^ w, base[:, None] + np.arange(w)[None, :])
        return b.build(), {}
    if collective == "allreduce":
        return _allreduce(n, size_bytes), {}
    if collective == "scan":
        b = LogicalBuilder(make_collective("scan", n, size_bytes))
        for r in range(ceil_log2(n)):
            src = np.arange(n - (1 << r))
            b.add(r, src, src + (1 << r), np.zeros((len(src), 1), np.int64), reduce=True)
        return b.build(), {}
    root = check_root(root, n)
    b = LogicalBuilder(make_collective(collective, n, size_bytes, root=root))
    tree_schedule(b, halving_rounds(n, root), collective, count=lambda lo, hi: hi - lo,
                  chunks=lambda lo, hi, k: lo[:, None] + np.arange(k)[None, :])
    return b.build(), {"root": root}


def fold_ranks(n: int) -> tuple[int, np.ndarray]:
    """MPICH's folding of a non-power-of-two node count onto ``p' = 2**floor(log2 n)`` ranks.

    The even ranks below ``2 rem`` (``rem = n - p'``) hand their data to the next
    odd rank and sit out; the survivors are renumbered ``0..p'-1``.

    Parameters
    ----------
    n : int
        Number of nodes.

    Returns
    -------
    tuple
        ``(rem, real)`` with ``real[v]`` the node of survivor ``v``.

    Examples
    --------
    >>> rem, real = fold_ranks(6)
    >>> rem, real.tolist()
    (2, [1, 3, 4, 5])
    """
    p2 = 1 << (n.bit_length() - 1)
    rem = n - p2
    v = np.arange(p2)
    return rem, np.where(v < rem, 2 * v + 1, v + rem)


def _allreduce(n: int, size_bytes: int):
    b = LogicalBuilder(make_collective("allreduce", n, size_bytes))
    rem, real = fold_ranks(n)
    zero = np.zeros((max(rem, len(real)), 1), np.int64)
    r0 = 0
    if rem:
        b.add(0, 2 * np.arange(rem), 2 * np.arange(rem) + 1, zero[:rem], reduce=True)
        r0 = 1
    v = np.arange(len(real))
    for k in range(len(real).bit_length() - 1):
        b.add(r0 + k, real, real[v ^ (1 << k)], zero[:len(real)], reduce=True)
    if rem:
        b.add(r0 + len(real).bit_length() - 1, 2 * np.arange(rem) + 1, 2 * np.arange(rem), zero[:rem])
    return b.build()


__all__ = ["add_grouped", "ceil_log2", "check_root", "fold_ranks", "halving_rounds", "is_pow2",
           "recursive_doubling", "tree_schedule", "ts_tw"]
