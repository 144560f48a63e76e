"""OpTree's trees: radix vectors, their block sizes, depths and canonical forms.

A radix vector ``(m_1, ..., m_k)`` defines block sizes ``G_j = m_{j+1} ... m_k``
(``G_k = 1``).  Stage ``j`` works inside the level-``(j-1)`` groups (the whole
ring for ``j = 1``, else aligned blocks of ``G_{j-1}`` consecutive nodes) and
cuts each into children: aligned blocks of ``G_j`` nodes, the last one possibly
short when the product of the radices exceeds ``N`` (``docs/algorithms/optree.md``).
Which vectors are valid, and which are distinct, is all the builder, the cost
evaluator and the search need to agree on.
"""

from __future__ import annotations

import math

from ...core.errors import InputError
from ...core.validate import is_integer

__all__ = ["max_depth", "block_sizes", "validate_radices", "enumerate_trees"]


def max_depth(nodes: int) -> int:
    """Deepest tree on ``nodes`` nodes: every radix 2 and ``2**(k-1) < N``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A (a k-stage m-ary tree) and §V-B (depth k = 1 is the One-Stage model).
    """
    return max(1, (int(nodes) - 1).bit_length())


def block_sizes(radices) -> list[int]:
    """Child block sizes ``G_j = m_{j+1} * ... * m_k`` for ``j = 1..k``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.1: stage ``j`` partitions each group into ``m_j`` children (the paper's
    trees have one radix m; mixed radices are collsim's generalisation).
    """
    g, out = 1, []
    for m in reversed(list(radices)):
        out.append(g)
        g *= int(m)
    return out[::-1]


def validate_radices(nodes: int, radices) -> tuple[int, ...]:
    """Check a radix vector for an ``N``-node ring and return it as a tuple of ints.

    Valid vectors have every ``m_j >= 2``, ``m_2 * ... * m_k < N`` (stage 1 has at
    least two groups) and ``m_1 * ... * m_k >= N`` (the last stage reaches single
    nodes).  Stage 1 then has ``ceil(N / G_1)`` groups, which may be fewer than ``m_1``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.1 (an m-ary tree of depth k over the N nodes, ``m^k >= N``).
    """
    if is_integer(radices):
        radices = (radices,)  # the CLI's --param radices=16 gives an int
    if isinstance(radices, (str, bytes)) or not hasattr(radices, "__iter__"):
        raise InputError(f"OpTree radices must be a sequence of integers >= 2, got {radices!r}")
    radices = list(radices)
    if not all(is_integer(m) and m >= 2 for m in radices):
        raise InputError(f"OpTree radices must be integers >= 2, got {radices!r}")
    out = [int(m) for m in radices]
    if not out:
        raise InputError("OpTree radices must not be empty")
    n = int(nodes)
    g1 = math.prod(out[1:])
    if g1 >= n:
        raise InputError(f"OpTree radices {tuple(out)} leave stage 1 with a single group on {n} nodes: "
                         f"the product of radices 2..k ({g1}) must be < N")
    if math.prod(out) < n:
        raise InputError(f"OpTree radices {tuple(out)} cover only {math.prod(out)} < N = {n} nodes: "
                         "their product must be >= N")
    return tuple(out)


def enumerate_trees(nodes: int, k: int | None = None):
    """Every canonical radix vector: ``(ceil(N / G_1), m_2, ..., m_k)`` with ``G_1 < N``.

    A tree's layout depends only on ``G_1 = m_2 ... m_k`` and the later radices, so
    ``m_1 = ceil(N / G_1)`` (the number of stage-1 groups) is canonical.  Only for
    small ``N``: the count grows like ``N^1.73``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A (k-stage m-ary trees; here each stage may have its own radix).
    """
    n = int(nodes)

    def tails(limit):  # ordered factorisations (m_2..m_k) with product < limit
        yield ()
        for m in range(2, limit):
            for t in tails(-(-limit // m)):
                if m * math.prod(t) < limit:
                    yield (m,) + t

    seen = set()
    for t in tails(n):
        g1 = math.prod(t)
        if g1 >= n:
            continue
        vec = (-(-n // g1),) + t
        if vec[0] < 2 or (k is not None and len(vec) != k) or vec in seen:
            continue
        seen.add(vec)
        yield vec
