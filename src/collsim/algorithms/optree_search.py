"""OpTree cost and search: the exact collsim time of a tree, and the best tree.

:func:`evaluate_tree` reproduces what ``realize`` + :func:`collsim.cost.optical.step_times`
give for the builder's schedule without building chunks; :func:`search_tree`
minimises it over radix vectors (``docs/algorithms/optree.md``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..rwa.alltoall_ring import uniform_alltoall_wavelengths
from .optree_layout import (INDEX, arrange_colours, block_sizes, divisor_blocks, max_depth,
                            stage_templates, validate_radices)

__all__ = ["StageCost", "TreeCost", "evaluate_tree", "uniform_stage_cost", "regular_tree_cost",
           "search_tree", "enumerate_trees"]


# --------------------------------------------------------------------------- exact cost


@dataclass(frozen=True)
class StageCost:
    """Physical steps and MRR reconfigurations of one stage (one logical round)."""

    steps: int
    reconfigurations: int


@dataclass(frozen=True)
class TreeCost:
    """Exact collsim cost of an OpTree (what ``realize`` + ``step_times`` give).

    Attributes
    ----------
    radices : tuple of int
        The tree.
    steps, reconfigurations : int
        Physical steps and steps paying the MRR reconfiguration delay.
    time_s : float
        ``steps * t(d) + reconfigurations * t_reconf``.
    stages : tuple of StageCost
        Per-stage detail.
    """

    radices: tuple
    steps: int
    reconfigurations: int
    time_s: float
    stages: tuple

    @property
    def k(self) -> int:
        """Depth (number of stages)."""
        return len(self.radices)

    def key(self):
        """Sort key: time, then steps, depth and radices (deterministic ties)."""
        return (self.time_s, self.steps, self.k, tuple(-m for m in self.radices))


def _windows_general(blocks, order, total, cap, cls_sorted_keys, class_end, kmul) -> StageCost:
    """Exact steps and reconfigurations from the per-slot signature (class, lightpath count)."""
    if total == 0:
        return StageCost(0, 0)
    nw = -(-total // cap)
    x = np.arange(total, dtype=INDEX)
    bi = np.searchsorted(blocks[:, 0], x, side="right") - 1
    off = x - blocks[bi, 0]
    width = blocks[bi, 1]
    r = off // width
    t = order[blocks[bi, 3] + off % width]
    n = class_end[t] - np.searchsorted(cls_sorted_keys, t * kmul + r, side="right")
    sig_t = np.full(nw * cap, -1, INDEX)
    sig_n = np.zeros(nw * cap, INDEX)
    sig_t[:total] = np.where(n > 0, t, -1)
    sig_n[:total] = n
    sig_t = sig_t.reshape(nw, cap)
    sig_n = sig_n.reshape(nw, cap)
    keep = (sig_n > 0).any(axis=1)
    sig_t, sig_n = sig_t[keep], sig_n[keep]
    if len(sig_t) == 0:
        return StageCost(0, 0)
    same = (sig_t[1:] == sig_t[:-1]).all(axis=1) & (sig_n[1:] == sig_n[:-1]).all(axis=1)
    return StageCost(int(len(sig_t)), int(1 + (~same).sum()))


def uniform_stage_cost(classes: int, copies: int, cap: int) -> StageCost:
    """Closed-form steps and reconfigurations of a stage whose classes all need ``copies`` copies.

    With ``K = classes * copies`` colours the stage takes ``ceil(K / cap)`` steps.  A
    step repeats the previous one's lightpaths exactly when both lie inside one
    block of :func:`arrange_colours` (block sizes divide ``cap``); every other step
    reconfigures.

    Parameters
    ----------
    classes, copies, cap : int
        Colour classes, copies per class and channels per direction ``F w``.

    Returns
    -------
    StageCost
        Steps and reconfigurations.

    Examples
    --------
    >>> uniform_stage_cost(16, 64, 64)
    StageCost(steps=16, reconfigurations=1)
    >>> uniform_stage_cost(512, 1, 64)
    StageCost(steps=8, reconfigurations=8)
    """
    if classes <= 0:
        return StageCost(0, 0)
    total = classes * copies
    steps = -(-total // cap)
    nfull = classes // cap
    saved = nfull * (copies - 1)
    cursor = nfull * cap * copies
    for b in divisor_blocks(classes - nfull * cap, cap):
        end = cursor + b * copies
        first = -(-cursor // cap)
        last = end // cap - 1
        saved += max(last - first, 0)
        cursor = end
    return StageCost(steps, steps - saved)


def _transfer_time(system, size_bytes: int) -> float:
    return float(system.transfer_time_s(np.array([size_bytes]))[0])


def _finish(radices, stages, system, size_bytes) -> TreeCost:
    steps = sum(s.steps for s in stages)
    rec = sum(s.reconfigurations for s in stages)
    t = steps * _transfer_time(system, size_bytes) + rec * system.mrr_reconfig_s
    return TreeCost(tuple(radices), steps, rec, t, tuple(stages))


def evaluate_tree(system, size_bytes: int, radices) -> TreeCost:
    """Exact steps, reconfigurations and collsim time of OpTree with these radices.

    Builds only the stage *templates* (one entry per communicating pair, not per
    chunk), the holdings sizes and the colour layout the builder uses, then reads
    every physical step's lightpath set off its per-slot signature ``(class,
    number of pairs of the class carrying that copy)``.  Two steps carry the same
    lightpaths exactly when their signatures agree, so the result equals
    ``realize`` + :func:`collsim.cost.optical.step_times` of the built schedule on a
    system without transceiver limits (``docs/algorithms/optree.md`` has the proof;
    ``tests/test_optree.py`` checks it).

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    size_bytes : int
        Each node's block ``d`` (all chunks have this size).
    radices : sequence of int
        A valid radix vector.

    Returns
    -------
    TreeCost
        Steps, reconfigurations and time.

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> evaluate_tree(OpticalRing(nodes=16, wavelengths=2), 1024, (4, 4)).steps
    12
    """
    n = system.nodes
    cap = system.channels_per_direction
    radices = validate_radices(n, radices)
    h = np.ones(n, INDEX)
    stages = []
    for tpl in stage_templates(n, radices):
        c = h[tpl.src]
        ct = np.zeros(tpl.classes, INDEX)
        np.maximum.at(ct, tpl.cls, c)
        base, stride, blocks, order, total = arrange_colours(ct, cap)
        kmul = int(c.max()) + 1 if len(c) else 1
        keys = np.sort(tpl.cls * kmul + c)
        class_end = np.searchsorted(keys, np.arange(1, tpl.classes + 1, dtype=INDEX) * kmul)
        stages.append(_windows_general(blocks, order, total, cap, keys, class_end, kmul))
        h = h + np.bincount(tpl.dst, weights=c, minlength=n).astype(INDEX)
    return _finish(radices, stages, system, size_bytes)


# --------------------------------------------------------------------------- regular trees


def _ring_classes(g: int, m: int) -> int:
    return (g + 1) // 2 if m == 2 else g * uniform_alltoall_wavelengths(m)


def regular_tree_cost(system, size_bytes: int, radices) -> TreeCost:
    """Closed-form cost of a tree whose radices multiply to exactly ``N``.

    Every node then holds ``P_{j-1} = m_1 ... m_{j-1}`` chunks before stage ``j``;
    stage 1 has ``G_1 W(m_1)`` classes (``ceil(G_1/2)`` for ``m_1 = 2``) and stage
    ``j >= 2`` has ``G_j floor(m_j^2/4)`` classes, each of ``P_{j-1}`` copies, costed by
    :func:`uniform_stage_cost`.  Equal to :func:`evaluate_tree` on such trees.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    size_bytes : int
        Each node's block.
    radices : sequence of int
        Radix vector with product ``N``.

    Returns
    -------
    TreeCost
        Steps, reconfigurations and time.

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> regular_tree_cost(OpticalRing(nodes=16, wavelengths=2), 1024, (4, 4)).steps
    12
    """
    n = system.nodes
    radices = tuple(int(m) for m in radices)
    if math.prod(radices) != n:
        raise InputError(f"regular_tree_cost needs radices with product N = {n}, got {radices}")
    cap = system.channels_per_direction
    gs = block_sizes(radices)
    stages = [uniform_stage_cost(_ring_classes(gs[0], radices[0]), 1, cap)]
    p = radices[0]
    for j in range(1, len(radices)):
        m = radices[j]
        stages.append(uniform_stage_cost(gs[j] * (m * m // 4), p, cap))
        p *= m
    return _finish(radices, stages, system, size_bytes)


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
    form :func:`regular_tree_cost` (exhaustive); (2) vectors with product ``> N``
    whose radices are within one of ``N^(1/k)`` (stage-1 radix canonical,
    later radices ascending or descending), ranked by a cheap estimate, of which
    the ``uneven`` best are scored exactly with :func:`evaluate_tree`.

    Parameters
    ----------
    system : OpticalRing
        Target ring (transceiver limits are ignored by the scoring).
    size_bytes : int
        Each node's block.
    k : int, optional
        Restrict to depth ``k``.
    uneven : int, optional
        How many product > N candidates to score exactly (default 16).

    Returns
    -------
    tuple
        ``(best TreeCost, per-depth best TreeCost dict)``.

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> best, per_k = search_tree(OpticalRing(nodes=16, wavelengths=2), 1024)
    >>> best.steps <= 12
    True
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
