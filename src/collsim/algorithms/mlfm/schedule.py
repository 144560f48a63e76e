"""Congestion-free all-to-all among a partial server selection of an MLFM (seed 001 §2).

Selection ``(n, l, m)``: the servers ``(i, j, k)`` with ``i < n`` (layers),
``j < l`` (columns), ``k < m`` (servers per leaf).  Ranks are these servers in
``(i, j, k)`` lexicographic order, ``rank = (i*l + j)*m + k``; they are exactly
the end nodes of ``MLFM(..., selection=(n, l, m))`` (see
:mod:`collsim.kinds.network.mlfm`).

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
:mod:`collsim.experiments.papers.mlfm.congestion`.  This module enforces that corrected condition
(:mod:`collsim.algorithms.mlfm.selection`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.collective import make_collective
from ...core.collectives import CollectiveType
from ...core.errors import InputError
from ...core.schedule import LogicalBuilder, LogicalSchedule, Schedule
from ...kinds.network.routing import realize_network
from ..registry import register
from .selection import largest_selection, validate_select

I64 = np.int64


def phase_destinations(n: int, l: int, m: int, s, t, u, i, j, k):
    """The paper's rule, vectorised over broadcastable phase and server arrays.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2 and Fig. 2 (the different-column and same-column rules).
    """
    s, t, u, i, j, k = (np.asarray(x, dtype=I64) for x in (s, t, u, i, j, k))
    i2 = (i + s) % n
    k2 = (k + u) % m
    o = t + k + 1
    o = np.where(o < l, o, o + 1)
    j2 = np.where(t == 0, j, (j + o) % l)
    via = np.where(t == 0, (j + k + 1) % l, j2)
    return i2, j2, k2, via


def _requires(system, collective: CollectiveType):
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

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2, Fig. 2.
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
    reference="[MLFM16] §2, Fig. 2; selection condition corrected to 1 <= m <= l-1 <= d (docs/mlfm.md)",
    summary="MLFM partial-server all-to-all: n*l*m permutation phases (s, t, u), one flow per link",
    constraints="the system's end nodes are an (n, l, m) box with 1 <= m <= l-1 <= d, 1 <= n <= d "
                "(the paper states 1 <= l-1 <= m <= d, which congests for m >= l)",
)
def mlfm_alltoall(system, collective: CollectiveType, size_bytes, select=None):
    """Build the MLFM all-to-all among the selected servers (seed 001 §2).

    Parameters
    ----------
    system : MLFM
        Network whose end nodes are the selection (``MLFM(..., selection=(n, l, m))``, or a full
        machine, which is the selection ``(d, d+1, d)``).
    collective : CollectiveType
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
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2 (phases (s, t, u), different-column and same-column rules), Fig. 2.

    Examples
    --------
    >>> from collsim import build, verify
    >>> from collsim.kinds.network.mlfm import MLFM
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

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §2, Fig. 2.
    """
    logical, params, _ = mlfm_logical(system, size_bytes, select)
    return realize_network(system, logical, algorithm="mlfm", params=params)


__all__ = ["mlfm_alltoall", "mlfm_logical", "mlfm_schedule", "phase_destinations"]
