"""OpTree's tree choice: the exact search, and the paper's rules for the depth.

:func:`search_tree` finds the radix vector with the smallest exact collsim time
(:func:`~collsim.algorithms.optree.cost.evaluate_tree`, ``docs/algorithms/optree.md``).
:func:`choose_tree` turns the builder's ``tree``, ``k`` and ``radices`` parameters
into a radix vector: ``"search"`` (default) is that search; ``"lemma3-ceil"`` /
``"lemma3-round"`` (Lemma 3's ``k*`` with the printed ceiling or with nearest-integer
rounding) and ``"theorem1"`` (the ``k`` minimising Theorem 1's ``S(k)``) pick a depth
from the paper's formulas (:mod:`collsim.algorithms.optree.formulas`), which
:func:`integral_radices` makes an integral tree.
"""

from __future__ import annotations

import functools

import itertools
import math

from ...core.errors import InputError
from .cost import (
    StageCost,
    TreeCost,
    _ring_classes,
    _transfer_time,
    evaluate_tree,
    regular_tree_cost,
    uniform_stage_cost,
)
from .formulas import _TOL, _check, _root, lemma3_k, theorem1_k
from .tree import block_sizes, enumerate_trees, max_depth, validate_radices

__all__ = ["search_tree", "integral_radices", "choose_tree", "TREE_MODES"]


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

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Lemma 3 (the optimal depth k*), Theorems 2 and 3, and §V-B, Fig. 4 (the best depth
    per N found by simulation); collsim searches the exact step-and-reconfiguration cost.
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


TREE_MODES = ("lemma3-ceil", "lemma3-round", "theorem1", "search")


def _paper_model_factorisation(n: int, k: int) -> tuple[int, ...] | None:
    """Depth-k factorisation of n minimising m_1 + 2 (m_2 + ... + m_k), or None."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def best(rest: int, depth: int):  # (sum, max, tail) with product rest, depth factors >= 2
        if depth == 0:
            return (0, 0, ()) if rest == 1 else None
        out = None
        for m in range(2, rest + 1):
            if rest % m:
                continue
            sub = best(rest // m, depth - 1)
            if sub is not None:
                cand = (sub[0] + m, max(sub[1], m), tuple(sorted((m,) + sub[2], reverse=True)))
                if out is None or cand < out:
                    out = cand
        return out

    found = None
    for m1 in range(2, n + 1):
        if n % m1:
            continue
        tail = best(n // m1, k - 1)
        if tail is not None:
            vec = (m1,) + tail[2]
            key = (m1 + 2 * tail[0], max(m1, tail[1]), tuple(-m for m in vec))
            if found is None or key < found[0]:
                found = (key, vec)
    return None if found is None else found[1]


def integral_radices(nodes: int, k: int) -> tuple[int, ...]:
    """Make ``m = N^(1/k)`` integral for a tree of depth ``k``.

    If ``N`` has factorisations into ``k`` radices ``>= 2``, take the one that
    minimises the paper's cost model: Theorem 1's proof with the ceilings dropped
    charges stage 1 ``N m_1 / 8w`` and stage ``j >= 2`` ``N m_j / 4w`` steps, so
    minimise ``m_1 + 2 (m_2 + ... + m_k)`` (ties: smallest largest radix, then
    lexicographically largest).  This
    is ``(m, ..., m)`` when ``N = m^k``.  Otherwise (e.g. prime ``N``) take ``k``
    radices from ``{q, q+1}``, ``q = floor(N^(1/k))``, with as few ``q + 1`` as make
    the product reach ``N``, the larger ones first; the last groups are then short.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Lemma 2 (at most ``m = N^(1/k)`` children per tree node) and the proof of Theorem 1.
    """
    n, k = _check("nodes", nodes, 2), _check("k", k, 1)
    if k > max_depth(n):
        raise InputError(f"OpTree depth k={k} is too deep for {n} nodes (at most {max_depth(n)})")
    exact = _paper_model_factorisation(n, k)
    if exact is not None:
        return validate_radices(n, exact)
    q = max(2, int(math.floor(_root(n, k) + _TOL)))
    while q ** k > n and q > 2:
        q -= 1
    for t in range(k + 1):
        if q ** (k - t) * (q + 1) ** t >= n:
            return validate_radices(n, (q + 1,) * t + (q,) * (k - t))
    raise AssertionError("unreachable")  # pragma: no cover


@functools.lru_cache(maxsize=4)
def _searched(system, size_bytes: int, k: int | None) -> tuple[int, ...]:
    """The searched radix vector, remembered for the last few (system, size, depth): ``collsim compare``
    searches it for OpTree's row and again for ``relay``'s base (0.3 s at N = 4096)."""
    best, _ = search_tree(system, size_bytes, k=k)
    return tuple(best.radices)


def choose_tree(system, size_bytes: int, tree: str = "search", k: int | None = None,
                radices=None) -> tuple[tuple[int, ...], str]:
    """Pick the radix vector for the builder's ``tree``, ``k`` and ``radices`` parameters.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Theorem 1 (steps for depth k), Lemma 3 (the optimal depth k*) and §V-B, Fig. 4.
    """
    n = system.nodes
    if tree not in TREE_MODES:
        raise InputError(f"OpTree tree must be one of {', '.join(TREE_MODES)}; got {tree!r}")
    if k is not None:
        k = _check("k", k, 1)
        if k > max_depth(n):
            raise InputError(f"OpTree depth k={k} is too deep for {n} nodes (at most {max_depth(n)})")
    if radices is not None:
        rad = validate_radices(n, radices)
        if k is not None and k != len(rad):
            raise InputError(f"OpTree k={k} disagrees with radices {rad} (depth {len(rad)})")
        return rad, "radices"
    w = system.channels_per_direction
    if tree == "search":
        return _searched(system, int(size_bytes), k), tree
    if k is None:
        if tree == "theorem1":
            k = theorem1_k(n, w)
        else:
            k = lemma3_k(n, "ceil" if tree == "lemma3-ceil" else "round")
    return integral_radices(n, k), tree
