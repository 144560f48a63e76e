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

from ..core.collectives import CollectiveType
from ..core.placement import check_root, check_shift  # noqa: F401  (the builders' root and shift checks)
from ..core.schedule import LogicalBuilder
from ..core.validate import integer

__all__ = ["stripe_band", "add_grouped", "ceil_log2", "check_root", "check_shift", "fold_ranks", "halving_rounds", "is_pow2",
           "tree_schedule", "ts_tw"]


def is_pow2(n: int) -> bool:
    """Whether ``n`` is a power of two.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: recursive doubling and halving, exact on
    power-of-two node counts; A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction
    to Parallel Computing", 2nd ed., Addison-Wesley, 2003, ch. 4 (hypercube algorithms).
    """
    return n >= 1 and n & (n - 1) == 0


def ceil_log2(n: int) -> int:
    """``ceil(log2 n)`` computed exactly on integers.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4: one-to-all broadcast in ``log p`` steps;
    R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005 (binomial trees).
    """
    return (int(n) - 1).bit_length()


def ts_tw(system) -> tuple[float, float]:
    """The α–β model's start-up and per-byte times of an electrical network.

    References
    ----------
    Seed 002 (Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations'): a
    message of m words costs ``t_s + t_w m``.
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

    References
    ----------
    Seed 002 (Grama et al.), one-to-all broadcast on a hypercube (procedure
    GENERAL_ONE_TO_ALL_BC) and, on a ring, the recursive split into "two independent
    problems over halves".
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

    References
    ----------
    The scatter and gather trees whose messages shrink and grow round by round:
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4, "Scatter and Gather"; R. Thakur,
    R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005 (binomial scatter and gather).
    """
    for k in np.unique(lengths):
        rows = np.flatnonzero(lengths == k)
        if k > 0:
            b.add(rnd, src[rows], dst[rows], make(rows, int(k)), reduce=reduce)


def tree_schedule(b: LogicalBuilder, rounds, collective: CollectiveType, *, count=None, chunks=None,
                  first_round: int = 0) -> int:
    """Emit a halving tree as broadcast, reduce, scatter or gather.

    References
    ----------
    Seed 002 (Grama et al.): one-to-all broadcast, all-to-one reduction (the broadcast
    reversed), scatter and gather (scatter reversed) on a hypercube.
    """
    forward = collective.direction == "in"   # out of the root (broadcast, scatter), else into it
    order = rounds if forward else rounds[::-1]
    for j, (own, to, lo, hi) in enumerate(order):
        r = first_round + j
        src, dst = (own, to) if forward else (to, own)
        if collective.whole_vector:   # broadcast, reduce: the whole vector
            b.add(r, src, dst, np.zeros((len(src), 1), np.int64), reduce=collective.reduction)
        else:
            add_grouped(b, r, src, dst, count(lo, hi),
                        lambda rows, k, lo=lo, hi=hi: chunks(lo[rows], hi[rows], k))
    return len(order)


def fold_ranks(n: int) -> tuple[int, np.ndarray]:
    """MPICH's folding of a non-power-of-two node count onto ``p' = 2**floor(log2 n)`` ranks.

    The even ranks below ``2 rem`` (``rem = n - p'``) hand their data to the next
    odd rank and sit out; the survivors are renumbered ``0..p'-1``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005, §4 (non-power-of-two node counts).
    """
    p2 = 1 << (n.bit_length() - 1)
    rem = n - p2
    v = np.arange(p2)
    return rem, np.where(v < rem, 2 * v + 1, v + rem)


def stripe_band(system, stripe) -> int:
    """Validate ``stripe``: the number of wavelengths each block is sent over at once.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §I and §IV-A.2: a lightpath occupies one wavelength, which carries
    d per step.  A band of several is collsim's extension, not the papers'.
    """
    # a band's width is a schedule column of int32 (core/schedule.py): wider is no band any ring has
    return integer("stripe", stripe, lo=1, hi=int(np.iinfo(np.int32).max), what="a positive integer")
