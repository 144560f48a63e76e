"""OpTree's stage layout: each stage's lightpath pairs and their colour classes.

Shared by the builder (:mod:`collsim.algorithms.optree.build`) and the exact cost
evaluator (:mod:`collsim.algorithms.optree.cost`), so both compute colours
with the same code.

Stage ``j`` of a tree (:mod:`collsim.algorithms.optree.tree`) cuts each
level-``(j-1)`` group into children of ``G_j`` nodes.  The nodes at position ``p``
of sibling children form a subset that does a one-hop all-to-all: stage 1 on the
ring, with the optimal ring all-to-all colouring; later stages on disjoint line
segments, with the optimal line colouring :func:`line_alltoall_colours`.  A
partial child of ``r`` nodes also *receives* position ``p >= r`` of every complete
sibling at its node ``p mod r`` (the extra lightpaths).  Holdings stay pairwise
disjoint inside every group, so every node receives every foreign chunk exactly
once (``docs/algorithms/optree.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...core.csr import INDEX
from ...kinds.optical_ring.alltoall import uniform_alltoall_ring
from .tree import block_sizes

__all__ = ["StageTemplate", "stage_templates", "line_alltoall_colours"]


# ------------------------------------------------------------------- one-subset templates


@lru_cache(maxsize=64)
def line_alltoall_colours(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Optimal colouring of one-hop all-to-all among ``s`` nodes on a line.

    Pair ``a -> b`` goes clockwise (rightwards) when ``a < b``; both directions of
    a pair get the same colour (they use different fibers directions).  With
    ``h = s // 2`` the colour of the interval ``[lo, hi)`` is ``x (s - h) + y - h``
    where ``(x, y) = (lo, hi)`` for intervals crossing ``h`` (``lo < h <= hi``),
    ``(hi, h + lo)`` for intervals left of ``h`` and ``(hi - lo - 1, lo)`` for
    intervals right of it.  Each colour holds one crossing interval ``[x, y)``, at
    most one left interval ending at ``x`` and at most one right interval starting
    at ``y``, so its intervals are disjoint; ``h (s - h) = floor(s^2/4)`` colours are
    used, the load of the middle link, hence optimal.

    References
    ----------
    Seed 004 §III-C and the proof of Theorem 1 (later stages need
    ``ceil(m^2/4)`` wavelengths per subset on a ring segment; Lemma 1, line).
    """
    s = int(s)
    a, b = np.nonzero(~np.eye(s, dtype=bool))
    a = a.astype(INDEX)
    b = b.astype(INDEX)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    h = s // 2
    cross = (lo < h) & (hi >= h)
    left = hi < h
    x = np.where(cross, lo, np.where(left, hi, hi - lo - 1))
    y = np.where(cross, hi, np.where(left, h + lo, lo))
    return a, b, x * (s - h) + (y - h), h * (s - h)


@lru_cache(maxsize=64)
def _ring_template(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    t = uniform_alltoall_ring(s)
    return t.src, t.dst, t.direction, t.wavelength, t.wavelengths_per_direction


# --------------------------------------------------------------------------- stage templates


@dataclass(frozen=True)
class StageTemplate:
    """The lightpath *pairs* of one stage, before chunks are attached (see :func:`stage_templates`).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    §III-C (Fig. 2: stage 1 of the two-stage 4-ary tree on 16 nodes needs
    ``4 ceil(4^2/8) = 8`` wavelengths) and §IV-A.1.
    """

    src: np.ndarray
    dst: np.ndarray
    direction: np.ndarray
    cls: np.ndarray
    classes: int
    extras: int


def _cat(parts, dtype=INDEX):
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def _ring_stage(n: int, g: int) -> StageTemplate:
    """Stage 1: children are blocks of ``g`` nodes on the whole ring."""
    a, r = divmod(n, g)
    src, dst, dirs, cls = [], [], [], []
    offset = 0
    for p0, p1, s in ((0, r, a + 1), (r, g, a)):
        npos = p1 - p0
        if npos <= 0 or s < 2:
            continue
        p = np.arange(p0, p1, dtype=INDEX)
        if s == 2:
            # both arcs of a 2-subset tile the ring in one direction: alternate directions
            i = np.arange(npos, dtype=INDEX)
            d = np.where(i % 2 == 0, 1, -1).astype(np.int8)
            src += [p, p + g]
            dst += [p + g, p]
            dirs += [d, d]
            cls += [offset + i // 2] * 2
            offset += (npos + 1) // 2
        else:
            ta, tb, td, tc, w_s = _ring_template(s)
            i = np.arange(npos, dtype=INDEX)[:, None]
            src.append((p[:, None] + ta[None, :] * g).ravel())
            dst.append((p[:, None] + tb[None, :] * g).ravel())
            dirs.append(np.broadcast_to(td, (npos, len(td))).ravel())
            cls.append((offset + i * w_s + tc[None, :]).ravel())
            offset += npos * w_s
    extras = 0
    if r > 0 and a >= 1 and g > r:
        p = np.arange(r, g, dtype=INDEX)
        gi = np.arange(a, dtype=INDEX)
        es = (gi[:, None] * g + p[None, :]).ravel()
        ed = np.broadcast_to(a * g + p % r, (a, g - r)).ravel().astype(INDEX)
        cw = 2 * ((ed - es) % n) <= n
        d = np.where(cw, 1, -1).astype(np.int8)
        rank = np.where(cw, np.cumsum(cw) - 1, np.cumsum(~cw) - 1)
        src.append(es)
        dst.append(ed)
        dirs.append(d)
        cls.append(offset + rank)
        extras = len(es)
        offset += int(max(cw.sum(), (~cw).sum()))
    return StageTemplate(_cat(src), _cat(dst), _cat(dirs, np.int8), _cat(cls), offset, extras)


def _line_group(starts: np.ndarray, p0: int, p1: int, s: int, g: int, offset: int):
    """Main pairs of positions ``p0..p1-1`` (subset size ``s``) in parents at ``starts``."""
    ta, tb, tc, L = line_alltoall_colours(s)
    p = np.arange(p0, p1, dtype=INDEX)
    i = np.arange(p1 - p0, dtype=INDEX)
    base = starts[:, None, None] + p[None, :, None]
    src = (base + ta[None, None, :] * g).ravel()
    dst = (base + tb[None, None, :] * g).ravel()
    d = np.where(ta < tb, 1, -1).astype(np.int8)
    dirs = np.broadcast_to(d, (len(starts), len(p), len(d))).ravel()
    cls = np.broadcast_to(offset + i[:, None] * L + tc[None, :], (len(starts), len(p), len(tc))).ravel()
    return src, dst, dirs, cls, (p1 - p0) * L


def _line_stage(n: int, gp: int, g: int) -> StageTemplate:
    """Stage j >= 2: parents are aligned blocks of ``gp`` nodes, children blocks of ``g``."""
    full, rem = divmod(n, gp)
    src, dst, dirs, cls = [], [], [], []
    main = 0
    if full:
        starts = np.arange(full, dtype=INDEX) * gp
        s_, d_, r_, c_, used = _line_group(starts, 0, g, gp // g, g, 0)
        src.append(s_), dst.append(d_), dirs.append(r_), cls.append(c_)
        main = used
    extras = 0
    ex_src = ex_dst = None
    if rem:
        a, r = divmod(rem, g)
        start = np.array([full * gp], dtype=INDEX)
        offset = 0
        for p0, p1, s in ((0, r, a + 1), (r, g, a)):
            if p1 > p0 and s >= 2:
                s_, d_, r_, c_, used = _line_group(start, p0, p1, s, g, offset)
                src.append(s_), dst.append(d_), dirs.append(r_), cls.append(c_)
                offset += used
        main = max(main, offset)
        if r > 0 and a >= 1 and g > r:
            p = np.arange(r, g, dtype=INDEX)
            gi = np.arange(a, dtype=INDEX)
            ex_src = (full * gp + gi[:, None] * g + p[None, :]).ravel()
            ex_dst = np.broadcast_to(full * gp + a * g + p % r, (a, g - r)).ravel().astype(INDEX)
            extras = len(ex_src)
    if extras:
        src.append(ex_src), dst.append(ex_dst)
        dirs.append(np.ones(extras, np.int8))
        cls.append(main + np.arange(extras, dtype=INDEX))
    return StageTemplate(_cat(src), _cat(dst), _cat(dirs, np.int8), _cat(cls), main + extras, extras)


def stage_templates(nodes: int, radices) -> list[StageTemplate]:
    """Lightpath pairs and colour classes of every stage of an OpTree.

    References
    ----------
    Seed 004 §IV-A.1 (routing of OpTree: stage 1 on the ring, stage ``j`` inside
    the groups of stage ``j-1``).
    """
    n = int(nodes)
    gs = block_sizes(radices)
    out = [_ring_stage(n, gs[0])]
    for j in range(1, len(gs)):
        out.append(_line_stage(n, gs[j - 1], gs[j]))
    return out
