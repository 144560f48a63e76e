"""OpTree exact cost: the collsim time of a tree without building its schedule.

:func:`evaluate_tree` reproduces what ``realize`` + :func:`collsim.kinds.optical_ring.cost.step_times`
give for the builder's schedule without building chunks; :func:`regular_tree_cost` is its
closed form for trees whose radices multiply to N.  :mod:`collsim.algorithms.optree.search`
minimises it over radix vectors (``docs/algorithms/optree.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.errors import InputError
from ...core.csr import INDEX
from ...kinds.optical_ring.alltoall import uniform_alltoall_wavelengths
from .colours import arrange_colours, divisor_blocks
from .layout import stage_templates
from .tree import block_sizes, validate_radices

__all__ = ["StageCost", "TreeCost", "evaluate_tree", "regular_tree_cost", "uniform_stage_cost"]


# --------------------------------------------------------------------------- exact cost


@dataclass(frozen=True)
class StageCost:
    """Physical steps and MRR reconfigurations of one stage (one logical round).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.2 (steps per stage) and §IV-A.3, eq. (3) (the reconfiguration delay).
    """

    steps: int
    reconfigurations: int


@dataclass(frozen=True)
class TreeCost:
    """Exact collsim cost of an OpTree (what ``realize`` + ``step_times`` give).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.3, eq. (3): ``T = (d/B + a) S``; collsim charges the reconfiguration part
    of ``a`` only on steps that change lightpaths.
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
    if nw == 1:  # one window: no padding to ``cap`` slots (which grows with w, not with the data)
        busy = int((n > 0).any())
        return StageCost(busy, busy)
    sig_t = np.full(nw * cap, -1, INDEX)  # nw > 1: nw * cap < 2 * total
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

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.2, proof of Theorem 1 (a stage's steps from its wavelength demand and w);
    collsim packs the colours of all subsets, ``ceil(K / (F w))`` steps.
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
    """One step: a block over one wavelength plus the system's per-slot latency (0 in the papers)."""
    return float(system.transfer_time_s(np.array([size_bytes]))[0]) + float(getattr(system, "slot_latency_s", 0.0))


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
    ``realize`` + :func:`collsim.kinds.optical_ring.cost.step_times` of the built schedule on a
    system without transceiver limits (``docs/algorithms/optree.md`` has the proof;
    ``optree/tests/test_optree.py`` checks it).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §III-C (the two-stage 4-ary tree on 16 nodes with w = 2 takes 12 steps) and §IV-A.
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

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.2: stage 1 needs ``ceil(m^2/8)`` and stage ``j >= 2`` ``ceil(m^2/4)``
    wavelengths per subset (Theorem 1 and its proof).
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
