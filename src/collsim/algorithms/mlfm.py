"""Congestion-free all-to-all among a partial server selection of an MLFM (seed 001 §2).

Selection ``(n, l, m)``: the servers ``(i, j, k)`` with ``i < n`` (layers),
``j < l`` (columns), ``k < m`` (servers per leaf).  Ranks are these servers in
``(i, j, k)`` lexicographic order, ``rank = (i*l + j)*m + k``; they are exactly
the end nodes of ``MLFM(..., selection=(n, l, m))`` (see
:mod:`collsim.systems.mlfm`).

There are ``n*l*m`` phases ``(s, t, u)``, ``0 <= s < n, 0 <= t < l, 0 <= u < m``,
run in lexicographic order; logical round ``r`` is phase ``r + 1`` (phase
``(0, 0, 0)`` sends every server to itself and has no transfer).  In phase
``(s, t, u)`` server ``(i, j, k)`` sends its block to

* ``t != 0`` (different column): ``((i+s)%n, (j+o)%l, (k+u)%m)`` with
  ``o = t+k+1`` if ``t+k+1 < l`` else ``t+k+2``, through spine ``{j, (j+o)%l}``;
* ``t == 0`` (same column): ``((i+s)%n, j, (k+u)%m)`` through spine
  ``{j, (j+k+1)%l}`` (directly through the leaf when ``s = 0``).

The paper states the rule for ``1 <= l-1 <= m <= d`` and ``1 <= n <= d``.  That
condition is wrong: for ``m >= l`` server ``k = l-1`` never sends to column
``j+1`` (its offsets are ``t+1 mod l``), its same-column spine
``{j, (j+k+1)%l}`` is the non-existent ``{j, j}``, and in phase ``t = 1`` two
servers of one leaf (``k = 0`` and ``k = l-1``; ``k = 0`` and ``k = 2`` when
``l = 2``) are sent to the same column, sharing the link leaf ``(i, j)`` ->
spine; for ``m < l-1`` (excluded by the paper, yet its own 24-server pattern
A, ``(3, 4, 2)``, is one) the rule is congestion-free.  The rule is
congestion-free and a complete all-to-all iff ``1 <= m <= l-1 <= d`` (with
``1 <= n <= d``); proof in docs/mlfm.md, exhaustive check in
:mod:`collsim.experiments.mlfm_congestion`.  This module enforces that corrected condition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.collective import make_collective
from ..core.errors import InputError
from ..core.schedule import LogicalBuilder, LogicalSchedule, Schedule
from ..core.validate import integer
from ..rwa.network import realize_network
from .registry import register

I64 = np.int64

PAPER_CONDITION = "1 <= l-1 <= m <= d and 1 <= n <= d (seed 001 §2)"
CORRECT_CONDITION = "1 <= m <= l-1 <= d and 1 <= n <= d"


def parse_select(select: Any) -> tuple[int, int, int]:
    """Parse a selection.

    Parameters
    ----------
    select : tuple, list or str
        ``(n, l, m)``, or a string ``"n,l,m"`` / ``"nxlxm"``.

    Returns
    -------
    tuple of int
        ``(n, l, m)`` (InputError if it is not three integers).
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

    Returns
    -------
    bool
        True if it holds.
    """
    return 1 <= l - 1 <= m <= d and 1 <= n <= d


def correct_condition_holds(d: int, n: int, l: int, m: int) -> bool:
    """Whether ``(n, l, m)`` meets the corrected condition ``1 <= m <= l-1 <= d``, ``1 <= n <= d``.

    Returns
    -------
    bool
        True if it holds (exactly when the rule is congestion-free, docs/mlfm.md).
    """
    return 1 <= m <= l - 1 <= d and 1 <= n <= d


def validate_select(d: int, select: Any, servers_per_leaf=None) -> tuple[int, int, int]:
    """Check a selection against the corrected condition (and the hardware); name what fails.

    Parameters
    ----------
    d : int
        The MLFM's d.
    select : tuple or str
        ``(n, l, m)``.
    servers_per_leaf : array_like, optional
        Servers per leaf in each layer (the test bed has fewer in the last layer).

    Returns
    -------
    tuple of int
        ``(n, l, m)``.

    Raises
    ------
    InputError
        Naming the violated inequality; for ``m >= l`` (allowed by the paper) citing both
        the paper's condition and the corrected one.

    Examples
    --------
    >>> validate_select(3, (2, 4, 3))
    (2, 4, 3)
    >>> validate_select(3, (1, 3, 3))
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: mlfm: select (n, l, m) = (1, 3, 3) violates m <= l-1 ...
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

    Parameters
    ----------
    d : int
        The MLFM's d.
    last_layer_servers : int, optional
        Servers per leaf in the last layer (default d).

    Returns
    -------
    tuple of int
        ``(n, l, m)`` satisfying the corrected condition and the hardware.

    Examples
    --------
    >>> largest_selection(3), largest_selection(3, last_layer_servers=2)
    ((3, 4, 3), (3, 4, 2))
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


def phase_destinations(n: int, l: int, m: int, s, t, u, i, j, k):
    """The paper's rule, vectorised over broadcastable phase and server arrays.

    Parameters
    ----------
    n, l, m : int
        Selection.
    s, t, u : array_like
        Phase.
    i, j, k : array_like
        Source server.

    Returns
    -------
    tuple of numpy.ndarray
        ``(i2, j2, k2, via)``: destination server and the other column ``c`` of the spine
        ``{j, c}`` the rule names (for ``t != 0`` that is the destination column).  No
        validation: with ``m >= l`` ``via`` may equal ``j`` (a spine that does not exist).
    """
    s, t, u, i, j, k = (np.asarray(x, dtype=I64) for x in (s, t, u, i, j, k))
    i2 = (i + s) % n
    k2 = (k + u) % m
    o = t + k + 1
    o = np.where(o < l, o, o + 1)
    j2 = np.where(t == 0, j, (j + o) % l)
    via = np.where(t == 0, (j + k + 1) % l, j2)
    return i2, j2, k2, via


def _requires(system, collective):
    if system.selection is None and system.last_layer_servers not in (None, system.d):
        return (f"its {system.nodes} servers are not an n x l x m box (the last layer has "
                f"{system.last_layer_servers} servers per leaf); build the MLFM with a selection, e.g. "
                f"selection={largest_selection(system.d, system.last_layer_servers)}")
    return None


def _box(system) -> tuple[int, int, int]:
    if system.selection is not None:
        return tuple(system.selection)
    return (system.d, system.d + 1, system.d)


def mlfm_logical(system, size_bytes: int, select=None) -> tuple[LogicalSchedule, dict[str, Any], np.ndarray]:
    """Build the logical schedule; it names each same-column transfer's spine as its route hint.

    Parameters
    ----------
    system : MLFM
        Network whose end nodes are the selection.
    size_bytes : int
        Block size per pair.
    select : tuple, optional
        ``(n, l, m)`` (default: the system's).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params, via)``; ``via`` (also the schedule's ``via`` column) is the
        other column of the spine for same-column transfers (-1 for transfers inside one leaf
        or between columns, whose route is unique).

    Examples
    --------
    >>> from collsim.systems.mlfm import MLFM
    >>> logical, params, via = mlfm_logical(MLFM.from_options(d=2), 64)
    >>> params["select"], int((via >= 0).sum()) > 0
    ([2, 3, 2], True)
    """
    reason = _requires(system, "alltoall")
    if reason:
        raise InputError(f"mlfm: {reason}")
    box = _box(system)
    sel = validate_select(system.d, box if select is None else select, system.servers_per_leaf())
    if sel != box:
        raise InputError(f"mlfm: select={sel} but the system's end nodes are the selection {box}; build the "
                         f"system as MLFM.from_options(d={system.d}, "
                         + (f"last_layer_servers={system.last_layer_servers}, " if system.last_layer_servers else "")
                         + f"selection={sel})")
    n, l, m = sel
    N = n * l * m
    coll = make_collective("alltoall", N, size_bytes)
    r = np.arange(N, dtype=I64)
    i, j, k = r // (l * m), (r // m) % l, r % m
    p = np.arange(1, N, dtype=I64)                          # phase (0,0,0) sends nothing
    s, t, u = p // (l * m), (p // m) % l, p % m
    i2, j2, k2, via = phase_destinations(n, l, m, s[:, None], t[:, None], u[:, None], i, j, k)
    dst = ((i2 * l + j2) * m + k2).ravel()
    src = np.broadcast_to(r, (N - 1, N)).ravel()
    rnd = np.repeat(p - 1, N)
    same_col = np.broadcast_to((t == 0)[:, None], (N - 1, N)).ravel() & ((i2.ravel() != i[src]))
    via = np.where(same_col, via.ravel(), -1)
    b = LogicalBuilder(coll)
    b.add(rnd, src, dst, (src * N + dst)[:, None], via=via)
    params = {"select": [n, l, m], "phases": N, "rank_order": "(i, j, k) lexicographic"}
    return b.build(), params, via


@register(
    "mlfm", collectives=("alltoall",), systems=("mlfm",), requires=_requires, params=("select",),
    reference="Seed 001 (Shimizu, Miwa, Nakashima: all-to-all on multi-layer full mesh) §2, Fig. 2; "
              "selection condition corrected to 1 <= m <= l-1 <= d (docs/mlfm.md)",
    summary="MLFM partial-server all-to-all: n*l*m permutation phases (s, t, u), one flow per link",
    constraints="the system's end nodes are an (n, l, m) box with 1 <= m <= l-1 <= d, 1 <= n <= d "
                "(the paper states 1 <= l-1 <= m <= d, which congests for m >= l)",
)
def mlfm_alltoall(system, collective, size_bytes, select=None):
    """Build the MLFM all-to-all among the selected servers (seed 001 §2).

    Parameters
    ----------
    system : MLFM
        Network whose end nodes are the selection (``MLFM(..., selection=(n, l, m))``, or a full
        machine, which is the selection ``(d, d+1, d)``).
    collective : str
        ``"alltoall"``.
    size_bytes : int
        Block size per (source, destination) pair.
    select : tuple or str, optional
        ``(n, l, m)``; default the system's own box (the largest valid selection on a full
        machine).  Must match the system's end nodes.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``; same-column transfers name the paper's spine
        ``{j, (j+k+1)%l}`` as their route hint (``via``).

    References
    ----------
    Seed 001 §2 (phases (s, t, u), different-column and same-column rules), Fig. 2.

    Examples
    --------
    >>> from collsim import build, verify
    >>> from collsim.systems.mlfm import MLFM
    >>> net = MLFM.from_options(d=3, last_layer_servers=2, selection=(2, 4, 3))
    >>> sched = build("mlfm", net, "alltoall", "1KiB")
    >>> verify(sched).steps, sched.max_link_load()
    (23, 1)
    """
    logical, params, _ = mlfm_logical(system, size_bytes, select)
    return logical, params


def mlfm_schedule(system, size_bytes: int, select=None) -> Schedule:
    """Physical MLFM schedule with the same-column spines named explicitly per transfer.

    ``build("mlfm", ...)`` produces the same schedule (the spines are the logical
    schedule's route hints, which every realisation reads); this shortcut skips the
    registry for experiments that build many selections.

    Parameters
    ----------
    system : MLFM
        Network whose end nodes are the selection.
    size_bytes : int
        Block size per pair.
    select : tuple, optional
        ``(n, l, m)`` (default: the system's).

    Returns
    -------
    Schedule
        Routed by :func:`collsim.rwa.network.realize_network` (not verified).

    Examples
    --------
    >>> from collsim.systems.mlfm import MLFM
    >>> mlfm_schedule(MLFM.from_options(d=2), 64).max_link_load()
    1
    """
    logical, params, _ = mlfm_logical(system, size_bytes, select)
    return realize_network(system, logical, algorithm="mlfm", params=params)


__all__ = ["CORRECT_CONDITION", "PAPER_CONDITION", "correct_condition_holds", "largest_selection",
           "mlfm_alltoall", "mlfm_logical", "mlfm_schedule", "paper_condition_holds", "parse_select",
           "phase_destinations", "validate_select"]
