"""Geometry of arcs on a ring, vectorised.

Clockwise link ``i`` joins node ``i`` to ``i+1``; counter-clockwise link ``i``
joins node ``i`` to ``i-1``.  An arc leaving ``src`` in direction ``d`` over
``h`` links occupies, in that direction's *position space*, the half-open
interval ``[a, a+h)`` modulo N with ``a = src`` (cw) or ``a = -src mod N``
(ccw): consecutive links of the route have consecutive positions.  Both the
wavelength assignment and the verifier use these helpers; the verifier does
not trust a schedule's channels, only this geometry.
"""

from __future__ import annotations

import numpy as np


def arc_start(src: np.ndarray, direction: np.ndarray, n: int) -> np.ndarray:
    """Start position of arcs in their direction's position space."""
    src = np.asarray(src, dtype=np.int64)
    return np.where(np.asarray(direction) > 0, src, (-src) % n)


def link_id(position: np.ndarray, direction: np.ndarray, n: int) -> np.ndarray:
    """Directed link id of a position: cw links are ``0..n-1``, ccw ``n..2n-1``."""
    position = np.asarray(position, dtype=np.int64) % n
    return np.where(np.asarray(direction) > 0, position, n + (-position) % n)


def shortest_direction(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Shortest direction from ``src`` to ``dst``; antipodal ties split by source parity.

    For even ``n`` a pair at distance ``n/2`` goes clockwise when ``src`` is even and
    counter-clockwise when it is odd, so a round in which every node sends to its
    antipode loads both directions equally.
    """
    src = np.asarray(src, dtype=np.int64)
    cw = np.asarray(dst, dtype=np.int64) - src
    cw %= n
    twice = cw
    twice *= 2                      # 2 * clockwise distance, in place
    out = np.ones(len(src), np.int8)
    out[twice > n] = -1
    if n % 2 == 0:
        tie = np.flatnonzero(twice == n)
        if tie.size:
            out[tie] = 1 - 2 * (src[tie] & 1)
    return out


def hops_along(src: np.ndarray, dst: np.ndarray, direction: np.ndarray, n: int) -> np.ndarray:
    """Number of links from ``src`` to ``dst`` going in ``direction``."""
    delta = np.asarray(dst, dtype=np.int64) - np.asarray(src, dtype=np.int64)
    delta *= np.asarray(direction, dtype=np.int64) if np.ndim(direction) else int(direction)
    delta %= n  # cw: (dst - src) mod n; ccw: (src - dst) mod n
    return delta


def _no_overlap_packed(key, start, end, wrap, n) -> bool:
    """Fast check: pack (key, start, end) into one int64 with bit fields, sort values only.

    Returns True when no two intervals of one key overlap; False when they may (or when
    the values do not fit in 62 bits), in which case the indexed path finds the pair.
    """
    bits = int(n).bit_length()
    kmax = int(key.max()) if key.size else 0
    if key.min() < 0 or kmax.bit_length() + 2 * bits > 62:
        return False
    packed = (key << (2 * bits)) | (start << bits) | np.minimum(end, n)
    if wrap.any():
        packed = np.concatenate([packed, (key[wrap] << (2 * bits)) | (end[wrap] - n)])
    packed.sort(kind="stable")     # the same values; nearly sorted already (step-major), which merges in linear time
    mask = (1 << bits) - 1
    same = (packed[1:] >> (2 * bits)) == (packed[:-1] >> (2 * bits))
    return not (same & (((packed[1:] >> bits) & mask) < (packed[:-1] & mask))).any()


def first_overlap(key: np.ndarray, start: np.ndarray, length: np.ndarray, n: int):
    """Find two arcs with the same key that share a position.

    Wrapping arcs are cut in two; intervals are sorted by (key, start) and only
    neighbours are compared, which suffices because intervals are half-open.
    """
    m = len(key)
    if m < 2:
        return None
    start = np.asarray(start, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    end = start + length
    wrap = end > n
    key = np.asarray(key, dtype=np.int64)
    if _no_overlap_packed(key, start, end, wrap, n):
        return None
    idx = np.concatenate([np.arange(m), np.flatnonzero(wrap)])
    s = np.concatenate([start, np.zeros(int(wrap.sum()), np.int64)])
    e = np.concatenate([np.minimum(end, n), end[wrap] - n])
    k = np.concatenate([key, key[wrap]])
    order = np.lexsort((s, k))
    k, s, e, idx = k[order], s[order], e[order], idx[order]
    bad = np.flatnonzero((k[1:] == k[:-1]) & (s[1:] < e[:-1]))
    if bad.size == 0:
        return None
    a, b = int(idx[bad[0]]), int(idx[bad[0] + 1])
    return min(a, b), max(a, b), int(s[bad[0] + 1])
