"""OpTree search: the radix vector with the smallest exact collsim time.

:func:`search_tree` minimises :func:`~collsim.algorithms.optree_cost.evaluate_tree`
over radix vectors (``docs/algorithms/optree.md``).  The cost model
(:class:`StageCost`, :class:`TreeCost`, :func:`evaluate_tree`,
:func:`uniform_stage_cost`, :func:`regular_tree_cost`) lives in
:mod:`collsim.algorithms.optree_cost` and is re-exported here.
"""

from __future__ import annotations

import itertools
import math

from ..core.errors import InputError
from .optree_cost import (StageCost, TreeCost, _ring_classes, _transfer_time, evaluate_tree, regular_tree_cost,
                          uniform_stage_cost)
from .optree_layout import block_sizes, max_depth

__all__ = ["StageCost", "TreeCost", "evaluate_tree", "uniform_stage_cost", "regular_tree_cost",
           "search_tree", "enumerate_trees"]


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _regular_dp(n: int, cap: int, td: float, trc: float, k: int | None) -> dict[int, tuple]:
    """Best product-``n`` radix vector per depth: DP over divisor chains.

    Returns ``{depth: (time, steps, radices)}``; stage costs come from
    :func:`uniform_stage_cost`, so the time is exact for regular trees.
    """
    kmax = max_depth(n) if k is None else k

    def cost(sc: StageCost) -> float:
        return sc.steps * td + sc.reconfigurations * trc

    def better(a, b):
        return b is None or (a[0], a[1], tuple(-x for x in a[2])) < (b[0], b[1], tuple(-x for x in b[2]))

    frontier = {}
    for m in _divisors(n)[1:]:
        sc = uniform_stage_cost(_ring_classes(n // m, m), 1, cap)
        frontier[m] = (cost(sc), sc.steps, (m,))
    best: dict[int, tuple] = {}
    depth = 1
    while frontier:
        if n in frontier and (k is None or depth == k):
            best[depth] = frontier[n]
        if depth >= kmax:
            break
        nxt: dict[int, tuple] = {}
        for p, (t, s, rad) in frontier.items():
            if p == n:
                continue
            for m in _divisors(n // p)[1:]:
                q = p * m
                sc = uniform_stage_cost((n // q) * (m * m // 4), p, cap)
                cand = (t + cost(sc), s + sc.steps, rad + (m,))
                if better(cand, nxt.get(q)):
                    nxt[q] = cand
        frontier = nxt
        depth += 1
    return best


def _regular_best(system, size_bytes: int, k: int | None) -> dict[int, TreeCost]:
    """Best product-N tree for every depth (or depth ``k``)."""
    td = _transfer_time(system, size_bytes)
    dp = _regular_dp(system.nodes, system.channels_per_direction, td, system.mrr_reconfig_s, k)
    return {d: regular_tree_cost(system, size_bytes, rad) for d, (_, _, rad) in dp.items()}


# --------------------------------------------------------------------------- search


def enumerate_trees(nodes: int, k: int | None = None):
    """Every canonical radix vector: ``(ceil(N / G_1), m_2, ..., m_k)`` with ``G_1 < N``.

    A tree's layout depends only on ``G_1 = m_2 ... m_k`` and the later radices, so
    ``m_1 = ceil(N / G_1)`` (the number of stage-1 groups) is canonical.  Only for
    small ``N``: the count grows like ``N^1.73``.

    Parameters
    ----------
    nodes : int
        Ring size.
    k : int, optional
        Only this depth.

    Yields
    ------
    tuple of int
        Radix vectors.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A (k-stage m-ary trees; here each stage may have its own radix).

    Examples
    --------
    >>> sorted(enumerate_trees(6))
    [(2, 2, 2), (2, 3), (2, 4), (2, 5), (3, 2), (6,)]
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


def _completed_time(n: int, radices, cap: int, td: float, trc: float) -> float:
    """Closed-form time of the tree completed to ``N' = prod(radices)`` nodes (a ranking proxy)."""
    gs = block_sizes(radices)
    t = 0.0
    p = 1
    for j, m in enumerate(radices):
        sc = uniform_stage_cost(_ring_classes(gs[0], m) if j == 0 else gs[j] * (m * m // 4), p, cap)
        t += sc.steps * td + sc.reconfigurations * trc
        p *= m
    return t


def _canonical(n: int, tail) -> tuple[int, ...] | None:
    g1 = math.prod(tail)
    if g1 >= n:
        return None
    m1 = -(-n // g1)
    return (m1,) + tuple(tail) if m1 >= 2 else None


def _uneven_candidates(n: int, cap: int, td: float, trc: float, k: int | None,
                       spread: int = 48) -> list[tuple[int, ...]]:
    """Product > N candidates: completions of the best regular trees of N' = N+1 .. N+spread,
    and radices within one of N^(1/k) (stage-1 radix canonical, tail ascending or descending)."""
    out = set()
    for n2 in range(n + 1, n + spread + 1):
        for _, _, rad in _regular_dp(n2, cap, td, trc, k).values():
            c = _canonical(n, rad[1:])
            if c is not None and math.prod(c) > n:
                out.add(c)
    ks = range(2, max_depth(n) + 1) if k is None else [k]
    for kk in ks:
        if kk < 2:
            continue
        q = n ** (1.0 / kk)
        vals = range(max(2, math.floor(q) - 1), max(2, math.ceil(q) + 1) + 1)
        for combo in itertools.combinations_with_replacement(vals, kk - 1):
            for tail in {combo, combo[::-1]}:
                c = _canonical(n, tail)
                if c is not None and math.prod(c) > n:
                    out.add(c)
    if k is not None:
        out = {c for c in out if len(c) == k}
    return sorted(out)


BRUTE_FORCE_NODES = 40


def search_tree(system, size_bytes: int, *, k: int | None = None, uneven: int = 24) -> tuple[TreeCost, dict]:
    """Find the radix vector with the smallest exact collsim time.

    Two candidate sets, both scored exactly: (1) every radix vector whose product
    is exactly ``N``, by a dynamic programme over divisor chains with the closed
    form :func:`regular_tree_cost` (exhaustive); (2) vectors with product ``> N``,
    scored with :func:`evaluate_tree`: for ``N <= 40`` every canonical one
    (:func:`enumerate_trees`); otherwise the best product-``N'`` trees of
    ``N' = N+1 .. N+48`` re-rooted on N and the vectors whose radices are within one
    of ``N^(1/k)`` (stage-1 radix canonical, later radices ascending or descending),
    ranked by a cheap estimate, of which the ``uneven`` best are scored.

    Parameters
    ----------
    system : OpticalRing
        Target ring (transceiver limits are ignored by the scoring).
    size_bytes : int
        Each node's block.
    k : int, optional
        Restrict to depth ``k``.
    uneven : int, optional
        How many product > N candidates to score exactly when ``N > 40`` (default 24).

    Returns
    -------
    tuple
        ``(best TreeCost, per-depth best TreeCost dict)``.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Lemma 3 (the optimal depth k*), Theorems 2 and 3, and §V-B, Fig. 4 (the best depth
    per N found by simulation); collsim searches the exact step-and-reconfiguration cost.

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> best, per_k = search_tree(OpticalRing(nodes=16, wavelengths=2), 1024)
    >>> best.radices, best.steps, best.reconfigurations, sorted(per_k)
    ((4, 4), 12, 6, [1, 2, 3, 4])
    """
    n = system.nodes
    cap = system.channels_per_direction
    td = _transfer_time(system, size_bytes)
    trc = system.mrr_reconfig_s
    per_k: dict[int, TreeCost] = dict(_regular_best(system, size_bytes, k))
    if n <= BRUTE_FORCE_NODES:
        cands = [r for r in enumerate_trees(n, k) if math.prod(r) > n]
    else:
        cands = _uneven_candidates(n, cap, td, trc, k)
        cands = sorted(cands, key=lambda r: (_completed_time(n, r, cap, td, trc), r))[:uneven]
    for rad in cands:
        cost = evaluate_tree(system, size_bytes, rad)
        old = per_k.get(cost.k)
        if old is None or cost.key() < old.key():
            per_k[cost.k] = cost
    if not per_k:
        raise InputError(f"no OpTree of depth {k} exists on {n} nodes (depth must be 1..{max_depth(n)})")
    best = min(per_k.values(), key=TreeCost.key)
    return best, per_k
