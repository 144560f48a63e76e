"""Wavelength-assignment strategies: name -> function, as in graph colouring.

Assigning wavelengths to the lightpaths of one direction in one round is
colouring a circular-arc graph: arcs that share a link need different
colours.  A strategy receives arcs (start position, length) on an ``n``-link
ring and returns one colour per arc; colours are later mapped to (physical
step, fiber, wavelength).  Callers pass a strategy name or any callable of
the same shape (networkx's ``greedy_color`` convention).

All strategies process arcs in one deterministic order: longest first, then
by start position, then by input index.  They differ in which free colour an
arc takes:

``first-fit``
    the lowest-indexed free colour (Chlamtac et al. 1992; the papers' FF).
``best-fit``
    the free colour whose links are already the most occupied, i.e. the
    tightest fit (defined here: the papers cite Best Fit without a definition).
``most-used``
    the free colour already carrying the most lightpaths (Subramaniam &
    Barry 1997, "Most-Used").

Ties always go to the lowest index, so results are reproducible.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...core.errors import UnknownNameError

Strategy = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


def _arc_masks(start: np.ndarray, length: np.ndarray, n: int) -> list[int]:
    full = (1 << n) - 1
    masks = []
    for a, h in zip(start.tolist(), length.tolist()):
        m = ((1 << h) - 1) << a
        masks.append((m | (m >> n)) & full)
    return masks


def _greedy(start: np.ndarray, length: np.ndarray, n: int, pick: str) -> np.ndarray:
    start = np.asarray(start, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    order = np.lexsort((np.arange(len(start)), start, -length))
    masks = _arc_masks(start[order], length[order], n)
    occupied: list[int] = []   # links in use per colour (bitmask)
    counts: list[int] = []     # lightpaths per colour
    colors = np.empty(len(start), dtype=np.int64)
    for pos, mask in zip(order.tolist(), masks):
        best = -1
        if pick == "first":
            for c, occ in enumerate(occupied):
                if not occ & mask:
                    best = c
                    break
        else:
            score = -1
            for c, occ in enumerate(occupied):
                if not occ & mask:
                    s = occ.bit_count() if pick == "best" else counts[c]
                    if s > score:
                        best, score = c, s
        if best < 0:
            best = len(occupied)
            occupied.append(0)
            counts.append(0)
        occupied[best] |= mask
        counts[best] += 1
        colors[pos] = best
    return colors


def first_fit(start: np.ndarray, length: np.ndarray, n: int) -> np.ndarray:
    """Colour arcs with the lowest-indexed free colour.

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992.
    """
    return _greedy(start, length, n, "first")


def best_fit(start: np.ndarray, length: np.ndarray, n: int) -> np.ndarray:
    """Colour arcs with the free colour whose links are most occupied (tightest fit).

    References
    ----------
    P. Sathishkumar, V. Mahalingam, "Best-fit wavelength assignment algorithm for
    persistent communication in optical networks", International Journal of Computer
    Science and Information Technologies 6(1), 2015 (cited as Best Fit by seed 003:
    F. Dai et al., "Efficient All-reduce for Distributed DNN Training in Optical
    Interconnect Systems", PPoPP '23 poster, 2023); the tightest-fit rule here is
    collsim's reading.
    """
    return _greedy(start, length, n, "best")


def most_used(start: np.ndarray, length: np.ndarray, n: int) -> np.ndarray:
    """Colour arcs with the free colour already carrying the most lightpaths.

    References
    ----------
    R. Subramaniam, R. A. Barry, "Wavelength assignment in fixed routing WDM
    networks", ICC 1997.
    """
    return _greedy(start, length, n, "most")


STRATEGIES: dict[str, Strategy] = {
    "first-fit": first_fit,
    "best-fit": best_fit,
    "most-used": most_used,
}
ALIASES = {"ff": "first-fit", "firstfit": "first-fit", "bf": "best-fit", "bestfit": "best-fit",
           "mu": "most-used", "mostused": "most-used"}


def get_strategy(strategy: str | Strategy) -> Strategy:
    """Resolve a strategy name (or pass a callable through).

    References
    ----------
    H. Zang, J. P. Jue, B. Mukherjee, "A review of routing and wavelength assignment
    approaches for wavelength-routed optical WDM networks", Optical Networks Magazine
    1(1), 2000 (wavelength assignment as graph colouring; First-Fit, Most-Used);
    A. E. Ozdaglar, D. P. Bertsekas, "Routing and wavelength assignment in optical
    networks", IEEE/ACM Transactions on Networking 11(2), 2003 (seed 003's First Fit).
    """
    if callable(strategy):
        return strategy
    key = ALIASES.get(str(strategy).lower(), str(strategy).lower())
    if key not in STRATEGIES:
        raise UnknownNameError(
            f"unknown wavelength-assignment strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    return STRATEGIES[key]
