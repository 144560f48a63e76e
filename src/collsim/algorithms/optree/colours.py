"""OpTree colour layout: which colour (channel of a step) each copy of a pair class gets.

A pair whose sender holds ``c`` chunks needs ``c`` copies of its colour class;
:func:`arrange_colours` lays the copies out so that consecutive steps carry the
same lightpaths, which collsim's optical model charges no MRR reconfiguration for
(:func:`collsim.kinds.optical_ring.cost.step_times`).  Shared by the builder
(:mod:`collsim.algorithms.optree.build`) and the exact cost evaluator
(:mod:`collsim.algorithms.optree.cost`); ``docs/algorithms/optree.md``,
"Chunk copies and reconfigurations".
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...core.csr import INDEX

__all__ = ["arrange_colours", "divisor_blocks"]


@functools.lru_cache(maxsize=64)
def _divisors_descending(cap: int) -> tuple[int, ...]:
    """Divisors of ``cap``, largest first: O(sqrt(cap)) once per ``cap`` (the search asks often)."""
    small = [d for d in range(1, math.isqrt(cap) + 1) if cap % d == 0]
    return tuple(sorted({*small, *(cap // d for d in small)}, reverse=True))


def divisor_blocks(count: int, cap: int) -> list[int]:
    """Split ``count`` classes into blocks whose sizes divide ``cap`` (greedy, largest first).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.3, eq. (3), charges the MRR reconfiguration on every step; laying colours out
    so that steps repeat lightpaths and skip it is collsim's (docs/algorithms/optree.md).
    """
    out, left = [], count
    for d in _divisors_descending(cap):
        while left >= d:
            out.append(d)
            left -= d
    return out


def arrange_colours(copies: np.ndarray, cap: int):
    """Lay out ``(class, copy)`` colours so that consecutive steps reuse lightpaths.

    Classes are sorted by copy count (largest first, stable) and cut into blocks
    whose sizes divide ``cap = F w``: whole blocks of ``cap`` classes, then the rest
    split greedily into divisors of ``cap``.  Inside a block of ``b`` classes with
    ``c`` copies, copy ``r`` of the ``i``-th class gets colour ``base + r b + i``: the
    block fills ``b c`` consecutive colours with period ``b``, so every step that
    lies inside one block carries the same lightpaths as the step before it and
    pays no MRR reconfiguration (:func:`collsim.kinds.optical_ring.cost.step_times`).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §IV-A.2 (each wavelength carries d per step) and §IV-A.3, eq. (3) (a reconfiguration
    delay per step); the layout that lets repeated steps skip it is collsim's
    (docs/algorithms/optree.md).
    """
    copies = np.asarray(copies, dtype=INDEX)
    nc = len(copies)
    order = np.argsort(-copies, kind="stable")
    cs = copies[order]
    base = np.zeros(nc, INDEX)
    stride = np.ones(nc, INDEX)
    rows = []
    cursor = 0
    if nc:
        cuts = np.flatnonzero(np.diff(cs)) + 1
        bounds = np.concatenate([[0], cuts, [nc]])
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            c = int(cs[lo])
            g = hi - lo
            nfull = g // cap
            if nfull:
                i = np.arange(nfull * cap, dtype=INDEX)
                base[order[lo:lo + nfull * cap]] = cursor + (i // cap) * cap * c + i % cap
                stride[order[lo:lo + nfull * cap]] = cap
                f = np.arange(nfull, dtype=INDEX)
                rows.append(np.stack([cursor + f * cap * c, np.full(nfull, cap), np.full(nfull, c),
                                      lo + f * cap], axis=1))
                cursor += nfull * cap * c
            pos = lo + nfull * cap
            for b in divisor_blocks(g - nfull * cap, cap):
                base[order[pos:pos + b]] = cursor + np.arange(b, dtype=INDEX)
                stride[order[pos:pos + b]] = b
                rows.append(np.array([[cursor, b, c, pos]], dtype=INDEX))
                cursor += b * c
                pos += b
    blocks = np.concatenate(rows).astype(INDEX) if rows else np.zeros((0, 4), INDEX)
    return base, stride, blocks, order, cursor
