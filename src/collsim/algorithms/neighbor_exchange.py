"""Neighbour-exchange all-gather (Chen et al. 2005), N/2 rounds for even N."""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from ..core.limits import check_memory
from ..core.schedule import realised_floor_bytes
from .common import rotations_by, stripe_band
from .registry import register


def _even(system, collective: CollectiveType):
    return None if system.nodes % 2 == 0 else f"needs an even number of nodes, got {system.nodes}"


def _orbits(system, collective: CollectiveType, size_bytes, *, stripe: int = 1):
    # the transfers into the domain 0..D-1 (D even) of the ring's rotations by multiples of D (D = 2
    # where every rotation keeps the system): pairs, and the chunk pairs they forward, move with
    # every even rotation.  After round t, node u = 2c + e holds as its newest the chunk pair
    # c + t/2 (e = 0) or c - t/2 (e = 1) for even t, c - (t+1)/2 or c + (t+1)/2 for odd t
    # (pairs mod N/2), by induction on neighbor_exchange's "last_pair[partner]"
    group = rotations_by(system, 2)
    n = system.nodes
    if group is None or n % 2:
        return None
    d, half = n // group.order, n // 2
    check_memory(realised_floor_bytes(d * half, d * (n - 1)), f"building ne's representatives on {n} nodes "
                 f"({d * half} transfers into {d} nodes, under {group.order} rotations)",
                 "use fewer nodes or another algorithm")
    band = stripe_band(system, stripe)
    b = LogicalBuilder(make_collective("allgather", n, size_bytes, explicit=False))
    v = np.arange(d, dtype=np.int64)
    u = v ^ 1                                                   # round 0: within pairs (2a, 2a + 1)
    b.add(0, u, v, u[:, None], direction=np.where(u % 2 == 0, 1, -1), band=band)
    if half > 1:
        s = np.repeat(np.arange(1, half, dtype=np.int64), d)    # rounds 1 .. N/2 - 1, receivers in order
        v = np.tile(v, half - 1)
        right = (v % 2 == 0) == (s % 2 == 0)                    # v's partner is its right neighbour
        u = (v + np.where(right, 1, -1)) % n                    # the sender, v's partner
        t, c, e = s - 1, u // 2, u % 2                          # u's newest pair after round t
        shift = np.where(t % 2 == 0, t // 2, -((t + 1) // 2))
        pair = (c + np.where(e == 0, shift, -shift)) % half
        b.add(s, u, v, np.stack([2 * pair, 2 * pair + 1], axis=1), direction=np.where(right, -1, 1), band=band)
    return b.build(), ({"stripe": band} if band > 1 else {}), group


def _paper_steps(system, collective: CollectiveType, params):
    return system.nodes // 2 if params.get("stripe", 1) == 1 else None


@register(
    "ne", collectives=("allgather",), systems=("optical-ring", "network"), aliases=("neighbor-exchange",),
    requires=_even, constraints="N even", paper_steps=_paper_steps,
    reference="[Chen05] (neighbour exchange; the same authors' [Chen05b] is what [OpTree24] cites); "
              "[OpTree24] §IV-A.2 and Table 1 (N/2 steps)",
    summary="neighbour exchange: pairs swap 1 then 2 chunks with alternating neighbours, N/2 rounds",
    params=("stripe",), orbits=_orbits,
)
def neighbor_exchange(system, collective: CollectiveType, size_bytes, *, stripe: int = 1):
    """Build the neighbour-exchange all-gather.

    Round 0: nodes ``2a`` and ``2a+1`` swap their own chunks.  Round ``s >= 1``:
    even nodes talk to their left neighbour when ``s`` is odd and to their right
    one when ``s`` is even (odd nodes the opposite), and each node forwards the
    pair of chunks it received in the previous round.  After N/2 rounds every
    node holds all N chunks; every round but the first carries 2 chunks (2d).

    Parameters
    ----------
    system : OpticalRing
        Target ring with an even node count.
    collective : CollectiveType
        ``"allgather"``.
    size_bytes : int
        Each node's contribution.
    stripe : int, optional
        On optical rings, send every transfer over a band of ``stripe`` consecutive
        wavelengths (default 1, the papers' single wavelength).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    Chen et al., DCABES 2005; seed 004 (OpTree journal), Table 1: NE takes N/2 steps.

    Examples
    --------
    >>> from collsim import build
    >>> build("ne", "paper", "allgather", "1MiB", nodes=16).num_steps
    8
    """
    n = system.nodes
    band = stripe_band(system, stripe)
    i = np.arange(n)
    even = i % 2 == 0
    b = LogicalBuilder(make_collective("allgather", n, size_bytes))
    first = np.where(even, i + 1, i - 1)
    b.add(0, i, first, i[:, None], direction=np.where(even, 1, -1), band=band)
    last_pair = i // 2  # pair of chunks each node received most recently (its own pair after round 0)
    for s in range(1, n // 2):
        to_right = even if s % 2 == 0 else ~even
        partner = np.where(to_right, (i + 1) % n, (i - 1) % n)
        chunks = np.stack([2 * last_pair, 2 * last_pair + 1], axis=1)
        b.add(s, i, partner, chunks, direction=np.where(to_right, 1, -1), band=band)
        last_pair = last_pair[partner]
    return b.build(), ({"stripe": band} if band > 1 else {})
