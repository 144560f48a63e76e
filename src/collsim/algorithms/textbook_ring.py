"""Textbook ring algorithms that :mod:`collsim.algorithms.ring` lacks, and the direct shift.

* ``ring-personalized`` — all-to-all personalized on a ring: every node sends
  one consolidated message to its clockwise neighbour, which keeps the block
  meant for it and forwards the rest; p-1 steps, the message shrinking by m
  each step: ``(t_s + t_w m p/2)(p-1)``.
* ``ring-shift`` — circular q-shift in ``min(q, p-q)`` neighbour steps in the
  shorter direction: ``(t_s + t_w m) min(q, p-q)``.
* ``direct`` — circular q-shift in one step, node i sending straight to
  ``(i+q) mod p``; with E-cube routing on a hypercube no link carries two
  messages: ``t_s + t_w m``.

The chapter's ring (linear array) broadcast, reduction, scatter and gather are
``recursive-doubling`` run on a :class:`~collsim.kinds.network.electrical.Ring`; its
ring all-to-all broadcast and all-reduce are ``ring``.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import check_shift, ts_tw
from .latency import rounds_ts_s
from .registry import register

SEED = "[Grama03] ch. 4"  # Grama, Gupta, Karypis & Kumar, 'Basic Communication Operations' (and its slides)


def _personalized_ab(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    p = system.nodes
    r = np.arange(p)
    ts = rounds_ts_s(system, [(r, (r + 1) % p)] * (p - 1))   # p-1 neighbour steps, start-up + hops each
    return ts + tw * size_bytes * p / 2 * (p - 1)   # sum_{i=1}^{p-1} (t_s + t_w m (p-i))


@register(
    "ring-personalized", collectives=("alltoall",), systems=("network", "optical-ring"),
    alpha_beta=_personalized_ab, constraints="any N",
    reference=f"{SEED}: all-to-all personalized communication on a ring (p-1 steps, step i carries "
              "m(p-i) words, T = (t_s + t_w m p/2)(p-1))",
    summary="all-to-all on a ring: forward undelivered blocks to the neighbour, p-1 shrinking steps",
)
def ring_personalized(system, collective: CollectiveType, size_bytes):
    """Build the textbook ring all-to-all personalized communication.

    Step ``k`` (``0 <= k < p-1``): node ``r`` sends to ``r + 1`` the blocks that
    originated at ``s = r - k`` and are destined to ``s + j`` for ``k < j < p``,
    i.e. ``p - 1 - k`` blocks.

    Parameters
    ----------
    system : Network or OpticalRing
        Target ring (any network: node r talks to node r+1 mod p).
    collective : CollectiveType
        ``"alltoall"``.
    size_bytes : int
        Each (source, destination) block m.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    Seed 002 (Grama et al.), "All-to-All Personalized Communication on a Ring" and its cost.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Ring
    >>> collsim.build("ring-personalized", Ring(nodes=6), "alltoall", "1KiB").num_steps
    5
    """
    p = system.nodes
    r = np.arange(p)
    b = LogicalBuilder(make_collective("alltoall", p, size_bytes))
    for k in range(p - 1):
        s = (r - k) % p
        d = (s[:, None] + np.arange(k + 1, p)[None, :]) % p
        b.add(k, r, (r + 1) % p, s[:, None] * p + d, direction=1)
    return b.build(), {}


def _shift_steps(p: int, q: int) -> int:
    return min(q, p - q)


def _ring_shift_ab(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    p, q = system.nodes, params.get("shift", 1)
    r = np.arange(p)
    sign = 1 if q <= p - q else -1                  # the shorter direction
    steps = _shift_steps(p, q)
    return rounds_ts_s(system, [(r, (r + sign) % p)] * steps) + tw * size_bytes * steps


@register(
    "ring-shift", collectives=("shift",), systems=("network", "optical-ring"), params=("shift",),
    alpha_beta=_ring_shift_ab, constraints="any N, 1 <= q < N",
    reference=f"{SEED}: circular shift on a ring, min(q, p-q) neighbour communications",
    summary="circular q-shift by min(q, p-q) neighbour steps in the shorter direction",
)
def ring_shift(system, collective: CollectiveType, size_bytes, *, shift: int = 1):
    """Build the ring circular q-shift.

    For ``q <= p/2`` every node passes the block it holds clockwise ``q`` times;
    otherwise counter-clockwise ``p - q`` times.

    Parameters
    ----------
    system : Network or OpticalRing
        Target ring.
    collective : CollectiveType
        ``"shift"``.
    size_bytes : int
        Each node's block m.
    shift : int, optional
        q (default 1).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"shift": q})``.

    References
    ----------
    Seed 002 (Grama et al.), "Circular Shift": on a ring, min{q, p-q} neighbour communications.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Ring
    >>> collsim.build("ring-shift", Ring(nodes=8), "shift", "1KiB", shift=5).num_steps
    3
    """
    p = system.nodes
    q = check_shift(shift, p)
    steps = _shift_steps(p, q)
    sign = 1 if q <= p - q else -1
    r = np.arange(p)
    b = LogicalBuilder(make_collective("shift", p, size_bytes, shift=q))
    for k in range(steps):
        b.add(k, r, (r + sign) % p, ((r - sign * k) % p)[:, None], direction=sign)
    return b.build(), {"shift": q}


def _direct_ab(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    p = system.nodes
    r = np.arange(p)   # hypercube with E-cube routing: t_s + t_w m; t_s with the route's hops
    return rounds_ts_s(system, [(r, (r + params.get("shift", 1)) % p)]) + tw * size_bytes


@register(
    "direct", collectives=("shift",), systems=("network", "optical-ring"), params=("shift",),
    alpha_beta=_direct_ab, constraints="any N, 1 <= q < N (congestion-free on a hypercube with E-cube routing)",
    reference=f"{SEED}: circular shift on a hypercube with E-cube routing, T = t_s + t_w m",
    summary="circular q-shift in one step: node i sends straight to (i+q) mod p",
)
def direct(system, collective: CollectiveType, size_bytes, *, shift: int = 1):
    """Build the one-step circular q-shift.

    Parameters
    ----------
    system : Network or OpticalRing
        Target system; on a hypercube (E-cube routing) no link carries two blocks,
        on a ring each link carries up to ``min(q, p-q)``.
    collective : CollectiveType
        ``"shift"``.
    size_bytes : int
        Each node's block m.
    shift : int, optional
        q (default 1).

    Returns
    -------
    tuple
        ``(LogicalSchedule, {"shift": q})``.

    References
    ----------
    Seed 002 (Grama et al.), "Circular Shift on a Hypercube": with E-cube routing
    the time is t_s + t_w m.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.hypercube import Hypercube
    >>> collsim.build("direct", Hypercube(nodes=8), "shift", "1KiB", shift=3).num_steps
    1
    """
    p = system.nodes
    q = check_shift(shift, p)
    r = np.arange(p)
    b = LogicalBuilder(make_collective("shift", p, size_bytes, shift=q))
    b.add(0, r, (r + q) % p, r[:, None])
    return b.build(), {"shift": q}
