"""Neighbour-exchange all-gather (Chen et al. 2005), N/2 rounds for even N."""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import stripe_band
from .registry import register


def _even(system, collective: CollectiveType):
    return None if system.nodes % 2 == 0 else f"needs an even number of nodes, got {system.nodes}"


def _paper_steps(system, collective: CollectiveType, params):
    return system.nodes // 2 if params.get("stripe", 1) == 1 else None


@register(
    "ne", collectives=("allgather",), systems=("optical-ring", "network"), aliases=("neighbor-exchange",),
    requires=_even, constraints="N even", paper_steps=_paper_steps,
    reference="[Chen05] (neighbour exchange; the same authors' [Chen05b] is what [OpTree24] cites); "
              "[OpTree24] §IV-A.2 and Table 1 (N/2 steps)",
    summary="neighbour exchange: pairs swap 1 then 2 chunks with alternating neighbours, N/2 rounds",
    params=("stripe",),
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
