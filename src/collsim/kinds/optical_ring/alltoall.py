"""Exact wavelength assignment for uniform one-hop all-to-all on a WDM ring.

Every ordered pair ``(s, d)`` of an ``n``-node bidirectional ring gets one
lightpath on its shortest direction; this module gives every lightpath a
wavelength so that lightpaths of one direction sharing a directed link
differ, using exactly ``W(n) = ceil(floor(n**2 / 4) / 2)`` wavelengths per
direction, which is the lower bound (the maximum link load).  The proof is in
``docs/derivations/alltoall-ring.md``; in short:

* A *chord* is an unordered pair ``{u, v}``.  Both of its lightpaths, ``u->v``
  and ``v->u``, cover the same stretch of fibre in opposite directions, so a
  wavelength is a function of the chord and serves both directions.
* ``m = n // 2``.  Node ``v`` gets the *class* ``v % m`` (even ``n``) or
  ``(v - 1) % m`` (odd ``n``, node 0 left out).  A class is an antipodal pair
  ``{x, x + m}``, or ``{x + 1, x + 1 + m}`` for odd ``n``.
* The four chords between classes ``x < y`` form a quadrilateral
  ``x -> y -> x+m -> y+m -> x`` (shifted by one for odd ``n``) whose sides are
  all shorter than ``n / 2``; it tiles the circle in each direction and gets
  wavelength ``y (y - 1) / 2 + x``.
* Even ``n``: the chord inside class ``x`` is antipodal; its lightpaths get
  ``C(m, 2) + x // 2`` (two classes share it, one per direction).  Odd ``n``:
  the chord inside class ``x`` and the chords from node 0 to it form the
  triangle ``0 -> x+1 -> x+1+m -> 0``, wavelength ``C(m, 2) + x``.

Tie rule for even ``n`` (distance exactly ``m``): the lightpath ``s -> s+m``
goes clockwise iff ``s % m`` is even and ``s != n - 1``.  For ``n % 4 == 0``
this is plain source parity; for ``n % 4 == 2`` class ``m - 1`` is split
(clockwise ``m-1 -> n-1``, counter-clockwise ``n-1 -> m-1``).  Either way
every direction carries ``n / 2`` antipodal lightpaths and has maximum link
load ``W(n)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.validate import node_count

__all__ = [
    "OneHopAllToAll",
    "uniform_alltoall_ring",
    "uniform_alltoall_wavelengths",
]


@dataclass(frozen=True)
class OneHopAllToAll:
    """One lightpath per ordered pair of a ring, with its wavelength (see :func:`uniform_alltoall_ring`).

    References
    ----------
    J. Opatrny, "Uniform multi-hop all-to-all optical routings in rings", Theoretical
    Computer Science 297 (2003) 385-397; F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree:
    An Efficient Algorithm for All-gather Operation in Optical Interconnect Systems",
    IEEE Open Journal of the Communications Society (2024), Lemma 1.
    """

    src: np.ndarray
    dst: np.ndarray
    direction: np.ndarray
    hops: np.ndarray
    wavelength: np.ndarray
    wavelengths_per_direction: int

    @property
    def n(self) -> int:
        """Number of ring nodes."""
        return int(self.src[-1]) + 1

    def __len__(self) -> int:
        return int(self.src.shape[0])


def _check_n(n: int) -> int:
    return node_count(n, owner="a ring")   # InputError, a ValueError


def uniform_alltoall_wavelengths(n: int) -> int:
    """Wavelengths per direction for one-hop all-to-all on an ``n``-ring.

    ``W(n) = ceil(floor(n**2 / 4) / 2)``, i.e. ``(n**2 - 1) / 8`` for odd
    ``n``, ``n**2 / 8`` for ``n % 4 == 0`` and ``(n**2 + 4) / 8`` for
    ``n % 4 == 2``.  It equals the maximum link load of shortest-path routing
    (with antipodal ties split evenly), so no assignment can use fewer, and
    :func:`uniform_alltoall_ring` uses exactly this many.

    References
    ----------
    .. [1] J. Opatrny, "Uniform multi-hop all-to-all optical routings in
       rings", Theoretical Computer Science 297 (2003) 385-397.
    .. [2] F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient
       Algorithm for All-gather Operation in Optical Interconnect Systems",
       IEEE Open Journal of the Communications Society (2024), Lemma 1.
    """
    n = _check_n(n)
    return -(-((n * n) // 4) // 2)


def uniform_alltoall_ring(n: int) -> OneHopAllToAll:
    """Optimal one-hop all-to-all routing and wavelength assignment.

    Every ordered pair is routed on its shortest direction (antipodal ties:
    clockwise iff ``src % (n // 2)`` is even and ``src != n - 1``) and gets a
    wavelength from the closed-form chord decomposition described in the
    module docstring.  Per direction, every wavelength's lightpaths tile the
    ring (for ``n % 4 == 2`` one wavelength holds a single half-ring
    lightpath), hence no two share a link, and exactly
    :func:`uniform_alltoall_wavelengths` wavelengths are used, which is
    optimal.  Fully vectorised: O(n**2) time and memory.

    References
    ----------
    .. [1] J. Opatrny, "Uniform multi-hop all-to-all optical routings in
       rings", Theoretical Computer Science 297 (2003) 385-397.
    .. [2] F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient
       Algorithm for All-gather Operation in Optical Interconnect Systems",
       IEEE Open Journal of the Communications Society (2024), Lemma 1.
    """
    n = _check_n(n)
    m, p = n // 2, n - 1  # half ring, lightpaths per source
    odd = n % 2 == 1
    nodes = np.arange(n, dtype=np.int64)
    src = np.repeat(nodes, p)
    dst = np.tile(nodes[:p], n)
    np.add(dst, dst >= src, out=dst)  # skip the diagonal; keeps (src, dst) order

    # The few "special" chords (antipodal, and for odd n those of the
    # triangles) sit at one known position per source: O(n) index arrays.
    # ``_flat`` maps (s, d), s != d, to its position in the sorted order.
    def _flat(s: np.ndarray, d: np.ndarray) -> np.ndarray:
        return s * p + d - (d > s)

    hops = dst - src  # clockwise distance 1 .. n-1, computed in place
    np.add(hops, n, out=hops, where=hops < 0)
    cw = hops <= (n - 1) // 2  # strictly shorter clockwise
    np.subtract(n, hops, out=hops, where=hops > m)
    if not odd:  # ties: clockwise iff s % m is even and s != n - 1
        tie = _flat(nodes, (nodes + m) % n)
        cw[tie] = ((nodes % m) % 2 == 0) & (nodes != n - 1)
    direction = np.where(cw, np.int8(1), np.int8(-1))
    del cw

    # Quadrilaterals: wavelength hi*(hi-1)/2 + lo from the classes lo < hi
    # of the two ends.  Rows are sources, so the source class broadcasts.
    idx_t = np.int32 if m < 2**30 else np.int64
    node_cls = ((nodes - odd) % m).astype(idx_t)  # odd n: node 0 unused
    tri = nodes[:m] * (nodes[:m] - 1) // 2
    cls_dst = np.take(node_cls, dst).reshape(n, p)
    lo = np.minimum(node_cls[:, None], cls_dst)
    hi = np.maximum(node_cls[:, None], cls_dst, out=cls_dst)
    wavelength = np.take(tri, hi).reshape(-1)
    np.add(wavelength, lo.reshape(-1), out=wavelength)
    del lo, hi, cls_dst

    # Chords inside a class: antipodal 2-tilings (even n, two classes per
    # wavelength, the even ones clockwise) or triangles (odd n).
    base = m * (m - 1) // 2
    if odd:
        other = nodes[1:]  # chords {0, v}: row 0 and column 0
        wavelength[:p] = base + node_cls[1:]
        wavelength[p::p] = base + node_cls[1:]
        part = np.where(other <= m, other + m, other - m)  # chords {v, v+m}
        wavelength[_flat(other, part)] = base + node_cls[1:]
    else:
        wavelength[tie] = base + (nodes % m) // 2

    return OneHopAllToAll(
        src=src,
        dst=dst,
        direction=direction,
        hops=hops,
        wavelength=wavelength,
        wavelengths_per_direction=uniform_alltoall_wavelengths(n),
    )
