"""Helpers shared by several algorithm families.

Integer arithmetic on node counts (:func:`is_pow2`, :func:`ceil_log2`), the
α–β model's parameters of a network (:func:`ts_tw`; the start-up plus route latency of a
closed form's rounds is :func:`collsim.algorithms.latency.rounds_ts_s`), validation of a root or a
shift (:func:`check_root`, :func:`check_shift`: :mod:`collsim.core.placement`'s, re-exported), the recursive-halving tree
(:func:`halving_rounds`, emitted by :func:`tree_schedule`), MPICH's folding of a
non-power-of-two node count (:func:`fold_ranks`) and the batching of transfers of
varying length into a builder (:func:`add_grouped`).

The modules that use them: :mod:`~collsim.algorithms.recursive_doubling`,
:mod:`~collsim.algorithms.binomial`, :mod:`~collsim.algorithms.bruck`,
:mod:`~collsim.algorithms.pairwise`, :mod:`~collsim.algorithms.rabenseifner`,
:mod:`~collsim.algorithms.textbook_hypercube`, :mod:`~collsim.algorithms.textbook_mesh`
and :mod:`~collsim.algorithms.textbook_ring`.
"""

from __future__ import annotations

import numpy as np

from ..core.collectives import TYPES
from ..core.schedule import LogicalBuilder
from ..core.placement import check_root, check_shift  # noqa: F401  (the builders' root and shift checks)
from ..core.validate import integer

__all__ = ["stripe_band", "add_grouped", "ceil_log2", "check_root", "check_shift", "fold_ranks", "halving_rounds", "is_pow2",
           "tree_schedule", "ts_tw"]


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

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: recursive doubling and halving, exact on
    power-of-two node counts; A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction
    to Parallel Computing", 2nd ed., Addison-Wesley, 2003, ch. 4 (hypercube algorithms).

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

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4: one-to-all broadcast in ``log p`` steps;
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005 (binomial trees).

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

    References
    ----------
    Seed 002 (Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations'): a
    message of m words costs ``t_s + t_w m``.

    Examples
    --------
    >>> from collsim.kinds.network.hypercube import Hypercube
    >>> ts_tw(Hypercube(nodes=8, link_bandwidth_bytes_per_s=1e9, link_latency_s=2e-6))
    (2e-06, 1e-09)
    """
    return float(system.alpha_s), 1.0 / float(system.link_bandwidth_bytes_per_s)


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

    References
    ----------
    Seed 002 (Grama et al.), one-to-all broadcast on a hypercube (procedure
    GENERAL_ONE_TO_ALL_BC) and, on a ring, the recursive split into "two independent
    problems over halves".

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

    Returns
    -------
    None
        The transfers are added to ``b``; those of length 0 are skipped.

    References
    ----------
    The scatter and gather trees whose messages shrink and grow round by round:
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4, "Scatter and Gather"; R. Thakur,
    R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005 (binomial scatter and gather).

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> b = LogicalBuilder(make_collective("scatter", 4, 8))
    >>> src, dst = np.array([0, 0, 0]), np.array([2, 1, 3])
    >>> add_grouped(b, 0, src, dst, np.array([2, 1, 0]), lambda rows, k: dst[rows, None] + np.arange(k))
    >>> s = b.build()
    >>> s.dst.tolist(), s.chunk_ptr.tolist(), s.chunk_idx.tolist()
    ([1, 2], [0, 1, 3], [1, 2, 3])
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

    References
    ----------
    Seed 002 (Grama et al.): one-to-all broadcast, all-to-one reduction (the broadcast
    reversed), scatter and gather (scatter reversed) on a hypercube.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> b = LogicalBuilder(make_collective("reduce", 4, 8, root=0))
    >>> tree_schedule(b, halving_rounds(4, 0), "reduce")
    2
    >>> s = b.build()
    >>> s.round.tolist(), s.src.tolist(), s.dst.tolist()   # 1->0 and 3->2, then 2->0
    ([0, 0, 1], [1, 3, 2], [0, 2, 0])
    """
    t = TYPES[collective]
    forward = t.direction == "in"   # out of the root (broadcast, scatter), else into it
    order = rounds if forward else rounds[::-1]
    for j, (own, to, lo, hi) in enumerate(order):
        r = first_round + j
        src, dst = (own, to) if forward else (to, own)
        if t.whole_vector:   # broadcast, reduce: the whole vector
            b.add(r, src, dst, np.zeros((len(src), 1), np.int64), reduce=t.reduction)
        else:
            add_grouped(b, r, src, dst, count(lo, hi),
                        lambda rows, k, lo=lo, hi=hi: chunks(lo[rows], hi[rows], k))
    return len(order)


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

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005, §4 (non-power-of-two node counts).

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


def stripe_band(system, stripe) -> int:
    """Validate ``stripe``: the number of wavelengths each block is sent over at once.

    Parameters
    ----------
    system : System
        Target system.  Whether the band fits (on one fiber of an optical ring; not at
        all on an electrical network) is the realisation's check, with the system's reason.
    stripe : int
        Requested band width (1: the papers' single wavelength).

    Returns
    -------
    int
        The band width.

    Raises
    ------
    InputError
        For a stripe that is not a positive integer of 32 bits (the schedule's band column).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §I and §IV-A.2: a lightpath occupies one wavelength, which carries
    d per step.  A band of several is collsim's extension, not the papers'.

    Examples
    --------
    >>> from collsim.kinds.optical_ring import OpticalRing
    >>> stripe_band(OpticalRing(nodes=4, wavelengths=8), 8)
    8
    """
    # a band's width is a schedule column of int32 (core/schedule.py): wider is no band any ring has
    return integer("stripe", stripe, lo=1, hi=int(np.iinfo(np.int32).max), what="a positive integer")
