"""Recursive doubling: the textbook's hypercube algorithms and MPICH's all-reduce.

One family, one idea: in round ``i`` a node talks to the node whose label
differs in one bit (or lies ``2**i`` away), so ``ceil(log2 N)`` rounds suffice.

* all-gather (the textbook's all-to-all broadcast on a hypercube): exchange with
  ``r XOR 2**i``, the message doubling every round; N a power of two.
* all-reduce: the same exchange with reductions and a constant message; any N
  with MPICH's folding of the ``N - 2**floor(log2 N)`` extra ranks (Thakur et al.).
* broadcast, reduce, scatter, gather: the textbook's one-to-all broadcast,
  all-to-one reduction and scatter, as recursive *halving* of the label range
  (:func:`~collsim.algorithms.common.halving_rounds`); for a power of two this
  is exactly the hypercube procedure with ``virtual id = id XOR root``, and it
  extends to any N (the
  chapter's ring picture: "two independent problems over halves").
* scan: distance doubling (node r sends to r + 2**i), because collsim keeps one
  buffer per (node, chunk) and the textbook's hypercube prefix sum needs two
  (``result`` and ``msg``); see docs/algorithms/textbook-and-mpi.md.

The halving tree, the folding of extra ranks and the other helpers it shares with
the textbook modules live in :mod:`collsim.algorithms.common`.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import (
    ceil_log2,
    check_root,
    fold_ranks,
    halving_rounds,
    is_pow2,
    tree_schedule,
    ts_tw,
)
from .latency import rounds_ts_s, xor_rounds
from .registry import register

SEED = "[Grama03] ch. 4"  # Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations' (and its slides)


# --- registration -------------------------------------------------------------------------
def _requires(system, collective: CollectiveType):
    n = system.nodes
    if collective.name == "allgather" and not is_pow2(n):
        return (f"recursive-doubling all-gather exchanges with r XOR 2^i and needs a power-of-two "
                f"node count, got {n} (use bruck for any N)")
    return None


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    # t_s per round is the start-up plus the latency of every link the round's farthest message
    # crosses (rounds_ts_s); t_w m as the sources give it
    _, tw = ts_tw(system)
    n, m = system.nodes, size_bytes
    if collective.name == "allgather":          # t_s log p + t_w m (p-1)
        return rounds_ts_s(system, xor_rounds(n)) + tw * m * (n - 1)
    if collective.name == "allreduce":          # (t_s + t_w m) log p, + 2 fold steps if N is not 2^k
        rem, real = fold_ranks(n)
        fold = [(2 * np.arange(rem), 2 * np.arange(rem) + 1), (2 * np.arange(rem) + 1, 2 * np.arange(rem))]
        rounds = xor_rounds(len(real), real) + (fold if rem else [])
        return rounds_ts_s(system, rounds) + tw * m * len(rounds)
    if collective.name == "scan":               # (t_s + t_w m) log p; round i: r -> r + 2^i
        rounds = [(np.arange(n - (1 << r)), np.arange(n - (1 << r)) + (1 << r)) for r in range(ceil_log2(n))]
        return rounds_ts_s(system, rounds) + tw * m * ceil_log2(n)
    tree = [(own, to) for own, to, _, _ in halving_rounds(n, int(params.get("root", 0)))]
    if collective.direction == "out":  # into the root (reduce, gather): the tree backwards
        tree = [(to, own) for own, to in tree]
    if collective.per_node:    # scatter, gather: t_s log p + t_w m (p-1)
        return rounds_ts_s(system, tree) + tw * m * (n - 1)
    return rounds_ts_s(system, tree) + tw * m * ceil_log2(n)    # broadcast, reduce


def _deliveries(system, collective: CollectiveType, params) -> int | None:
    """Chunk deliveries of the all-reduce and the scan (a log factor above their floors); None otherwise."""
    n = system.nodes
    if collective.name == "scan":     # round r: every node from 2^r on receives one
        return sum(n - (1 << r) for r in range(ceil_log2(n)))
    if collective.name == "allreduce":  # p = 2^floor(log2 N) real ranks exchange log2 p times; the rest fold in and out
        p = 1 << (n.bit_length() - 1)
        return p * (p.bit_length() - 1) + 2 * (n - p)
    return None


@register(
    "recursive-doubling", aliases=("rd",),
    collectives=("allgather", "allreduce", "broadcast", "reduce", "scan", "scatter", "gather"),
    systems=("network",), requires=_requires, params=("root",), alpha_beta=_alpha_beta, deliveries=_deliveries,
    constraints="all-gather: N a power of two; every other collective: any N",
    reference=f"{SEED}: one-to-all broadcast / all-to-one reduction on a hypercube (procedures "
              "GENERAL_ONE_TO_ALL_BC, ALL_TO_ONE_REDUCE, cost (t_s + t_w m) log p), all-to-all broadcast "
              "on a hypercube (ALL_TO_ALL_BC_HCUBE, t_s log p + t_w m (p-1)), all-reduce ((t_s + t_w m) "
              "log p), scatter (t_s log p + t_w m (p-1)); [Thakur05] §4 (recursive doubling; non-power-of-two "
              "all-reduce); scan: [KoggeStone73]",
    summary="log p rounds over label bits: hypercube all-gather/all-reduce/broadcast/reduce/scatter/gather/scan",
)
def recursive_doubling(system, collective: CollectiveType, size_bytes, *, root: int = 0):
    """Build recursive-doubling (hypercube) schedules.

    * all-gather: round ``i`` node ``r`` exchanges with ``r XOR 2**i`` the ``2**i``
      blocks of its current sub-cube (N = 2**d).
    * all-reduce: same partners, whole vector, reduction.  For other N, with
      ``p' = 2**floor(log2 N)`` and ``rem = N - p'``: even ranks ``< 2 rem`` first
      send their vector to ``rank + 1`` (reduce), the ``p'`` survivors run the
      exchange, and the odd ranks finally copy the result back (Thakur et al.).
    * broadcast / reduce / scatter / gather: the halving tree of
      :func:`~collsim.algorithms.common.halving_rounds` from ``root`` (reduce and gather run it backwards);
      scatter sends the receiver's whole half of the blocks (messages halve).
    * scan (inclusive prefix): round ``i`` node ``r`` sends its partial
      ``[r - 2**i + 1, r]`` to ``r + 2**i``, which reduces it.

    Parameters
    ----------
    system : Network
        Target network (a hypercube makes every exchange one hop).
    collective : CollectiveType
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
    >>> from collsim.kinds.network.hypercube import Hypercube
    >>> collsim.build("recursive-doubling", Hypercube(nodes=8), "allgather", "1KiB").num_steps
    3
    """
    n = system.nodes
    i = np.arange(n)
    if collective.name == "allgather":
        b = LogicalBuilder(make_collective("allgather", n, size_bytes))
        for r in range(ceil_log2(n)):
            w = 1 << r
            base = (i >> r) << r
            b.add(r, i, i ^ w, base[:, None] + np.arange(w)[None, :])
        return b.build(), {}
    if collective.name == "allreduce":
        return _allreduce(n, size_bytes), {}
    if collective.name == "scan":
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


__all__ = ["recursive_doubling"]
