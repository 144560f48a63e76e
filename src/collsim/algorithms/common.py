"""Helpers shared by several algorithm families.

Integer arithmetic on node counts (:func:`is_pow2`, :func:`ceil_log2`), the
α–β model's parameters of a network (:func:`ts_tw`; the start-up plus route latency of a
closed form's rounds is :func:`collsim.algorithms.latency.rounds_ts_s`), validation of a root or a
shift (:func:`check_root`, :func:`check_shift`: :mod:`collsim.core.placement`'s, re-exported), the recursive-halving tree
(:func:`halving_rounds`, emitted by :func:`tree_schedule`), MPICH's folding of a
non-power-of-two node count (:func:`fold_ranks`), the batching of transfers of
varying length into a builder (:func:`add_grouped`), and the ring's rotations a system keeps
(:func:`rotations`, :func:`rotations_by`: ``ring``'s and ``ne``'s symmetry).

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
from ..core.plugins import model_for
from ..core.schedule import LogicalBuilder
from ..core.symmetry import Translations
from ..core.validate import integer

__all__ = ["stripe_band", "rotations", "rotations_by", "add_grouped", "ceil_log2", "check_root", "check_shift", "fold_ranks", "halving_rounds", "is_pow2",
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


def rotations(system):
    """The ring's rotations that the system's kind checks schedules under, as a translation group.

    All of them, ``(N,)``, where the kind's group is the rotations (an optical ring, a network
    ring); else the rotations by multiples of ``D = N / n_1`` where the kind's group translates its
    leading (most significant) digit of radix ``n_1``: adding ``g`` to that digit adds ``g D`` to the
    node, without a carry (boxes of 8 on a fat tree of ``k``-port switches: the pods, ``k`` of them).
    None where neither is a symmetry of the system.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> rotations(load_system("paper", nodes=8))
    Translations(radices=(8,), moving=(True,))
    >>> rotations(load_system("hierarchical", dims="switch:8,fat-tree:128")).act(512, [5, 1020]).tolist()
    [517, 508]
    """
    n = system.nodes
    model = model_for(system)
    group = model.symmetry_group(system)
    if group is None:
        return None
    if group.radices == (n,) and group.regular:
        return group
    if not group.moving[0] or group.radices[0] < 2:
        return None
    lead = Translations(group.radices, (True,) + (False,) * (len(group.radices) - 1))
    return lead if model.accepts_group(system, lead) else None


def rotations_by(system, stride: int):
    """The ring's rotations by multiples of ``stride`` that the system's kind checks schedules under.

    The subgroup of :func:`rotations` (``stride`` divides ``N``): on a ring whose kind keeps every
    rotation, the ``N / stride`` rotations by multiples of ``stride`` (radices ``(N / stride,
    stride)``, the first digit moving), where the kind accepts them; where :func:`rotations` already
    moves by multiples of ``D``, that group if ``stride`` divides ``D``.  None otherwise.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> rotations_by(load_system("paper", nodes=8), 2)
    Translations(radices=(4, 2), moving=(True, False))
    """
    n, stride = system.nodes, int(stride)
    group = rotations(system)
    if group is None or stride < 1 or n % stride:
        return None
    if stride == 1:
        return group
    if group.radices == (n,):
        sub = Translations((n // stride, stride), (True, False))
        return sub if model_for(system).accepts_group(system, sub) else None
    return group if (n // group.order) % stride == 0 else None
