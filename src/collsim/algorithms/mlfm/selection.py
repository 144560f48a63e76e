"""Server selections of an MLFM all-to-all and the conditions on them (seed 001 §2).

A selection ``(n, l, m)`` takes the servers ``(i, j, k)`` with ``i < n`` (layers),
``j < l`` (columns) and ``k < m`` (servers per leaf).  The paper states its rule for
``1 <= l-1 <= m <= d``; the rule is congestion-free and a complete all-to-all iff
``1 <= m <= l-1 <= d`` (both with ``1 <= n <= d``): :mod:`collsim.algorithms.mlfm.schedule`
explains why, docs/mlfm.md proves it.  The ``mlfm`` algorithm enforces the corrected
condition through :func:`validate_select`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import InputError
from ...core.validate import integer

I64 = np.int64

PAPER_CONDITION = "1 <= l-1 <= m <= d and 1 <= n <= d (seed 001 §2)"
CORRECT_CONDITION = "1 <= m <= l-1 <= d and 1 <= n <= d"


def parse_select(select: Any) -> tuple[int, int, int]:
    """Parse a selection.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2 (the selection) and §3 (the selections of the test bed).
    """
    if isinstance(select, str):
        parts = select.replace("x", ",").replace(" ", ",").split(",")
        parts = [p for p in parts if p]
        try:
            select = tuple(int(p) for p in parts)
        except ValueError:
            raise InputError(f"mlfm: select must be three integers n,l,m, got {select!r}") from None
    if not hasattr(select, "__len__") or len(select) != 3:
        raise InputError(f"mlfm: select must be (n, l, m), got {select!r}")
    return tuple(integer(f"mlfm: select {name}", v) for name, v in zip(("n", "l", "m"), select))  # type: ignore


def paper_condition_holds(d: int, n: int, l: int, m: int) -> bool:
    """Whether ``(n, l, m)`` meets the paper's stated condition ``1 <= l-1 <= m <= d``, ``1 <= n <= d``.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2.
    """
    return 1 <= l - 1 <= m <= d and 1 <= n <= d


def correct_condition_holds(d: int, n: int, l: int, m: int) -> bool:
    """Whether ``(n, l, m)`` meets the corrected condition ``1 <= m <= l-1 <= d``, ``1 <= n <= d``.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2 states the rule; the corrected condition is collsim's (docs/mlfm.md).
    """
    return 1 <= m <= l - 1 <= d and 1 <= n <= d


def validate_select(d: int, select: Any, servers_per_leaf=None) -> tuple[int, int, int]:
    """Check a selection against the corrected condition (and the hardware); name what fails.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2; the corrected condition is collsim's (docs/mlfm.md).
    """
    n, l, m = parse_select(select)
    sel = f"select (n, l, m) = ({n}, {l}, {m})"
    if not 1 <= n:
        raise InputError(f"mlfm: {sel} violates 1 <= n (paper: {PAPER_CONDITION})")
    if not n <= d:
        raise InputError(f"mlfm: {sel} violates n <= d = {d}: there are only {d} layers (paper: {PAPER_CONDITION})")
    if not 1 <= l - 1:
        raise InputError(f"mlfm: {sel} violates 1 <= l-1: a selection needs at least two columns "
                         f"(paper: {PAPER_CONDITION})")
    if not l - 1 <= d:
        raise InputError(f"mlfm: {sel} violates l-1 <= d = {d}: there are only {d + 1} columns "
                         f"(paper: {PAPER_CONDITION})")
    if not 1 <= m:
        raise InputError(f"mlfm: {sel} violates 1 <= m (paper: {PAPER_CONDITION})")
    if not m <= d:
        raise InputError(f"mlfm: {sel} violates m <= d = {d}: a leaf has only {d} servers "
                         f"(paper: {PAPER_CONDITION})")
    if not m <= l - 1:
        extra = (" although it satisfies the paper's stated condition " + PAPER_CONDITION
                 if paper_condition_holds(d, n, l, m) else f" (paper: {PAPER_CONDITION})")
        raise InputError(
            f"mlfm: {sel} violates m <= l-1{extra}: with m >= l the rule is not an all-to-all (server "
            f"k = l-1 never sends to column j+1 and reaches its own column twice), in phase t = 1 two servers "
            f"of one leaf share their leaf->spine link (k = 0 and k = l-1, or k = 0 and k = 2 if l = 2; "
            f"none only for l = m = 2), and same-column phases (n >= 2) route k = l-1 via the non-existent spine "
            f"{{j, (j+k+1)%l}} = {{j, j}}; "
            f"the rule is congestion-free iff {CORRECT_CONDITION} (docs/mlfm.md)")
    if servers_per_leaf is not None:
        per = np.asarray(servers_per_leaf, dtype=I64)[:n]
        if m > int(per.min()):
            raise InputError(f"mlfm: {sel}: layers 0..{n - 1} have only {int(per.min())} servers on some leaf")
    return n, l, m


def largest_selection(d: int, last_layer_servers: int | None = None) -> tuple[int, int, int]:
    """The valid selection with the most servers (ties: more layers, then more columns).

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2 (selections) and §3 (the test bed's last layer has two servers per leaf).
    """
    per = np.full(d, d, dtype=I64)
    if last_layer_servers is not None:
        per[-1] = last_layer_servers
    best = None
    for n in range(1, d + 1):
        mmax = int(per[:n].min())
        for l in range(2, d + 2):
            m = min(mmax, l - 1)
            key = (n * l * m, n, l)
            if best is None or key > best[0]:
                best = (key, (n, l, m))
    return best[1]


__all__ = ["CORRECT_CONDITION", "PAPER_CONDITION", "correct_condition_holds", "largest_selection",
           "paper_condition_holds", "parse_select", "validate_select"]
