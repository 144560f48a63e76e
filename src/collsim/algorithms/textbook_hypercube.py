"""The textbook's dimension-exchange all-to-all personalized algorithm on a hypercube.

``log p`` steps; in step ``i`` every node sends to its neighbour across
dimension ``i`` the ``p/2`` blocks it holds whose destination differs from it
in bit ``i`` (consolidated into one message of ``m p / 2`` words):
``T = (t_s + t_w m p/2) log p``.  The chapter notes this is not optimal in
``t_w``; the optimal algorithm (``r XOR j`` in ``p - 1`` steps) is
``pairwise`` with ``exchange="xor"``.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import is_pow2, ts_tw
from .latency import rounds_ts_s, xor_rounds
from .registry import register


def _requires(system, collective: CollectiveType):
    n = system.nodes
    if not is_pow2(n):
        return f"dimension exchange pairs r with r XOR 2^i and needs a power-of-two node count, got {n}"
    return None


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    p = system.nodes
    return rounds_ts_s(system, xor_rounds(p)) + tw * size_bytes * p / 2 * math.log2(p)   # (t_s + t_w m p/2) log p


@register(
    "hypercube-personalized", aliases=("dimension-exchange",), collectives=("alltoall",),
    systems=("network",), requires=_requires, alpha_beta=_alpha_beta, constraints="N a power of two",
    reference="[Grama03] ch. 4: all-to-all "
              "personalized communication on a hypercube (log p steps of m p/2 words, "
              "T = (t_s + t_w m p/2) log p)",
    summary="all-to-all by dimension exchange: log p steps, p/2 blocks per message",
)
def hypercube_personalized(system, collective: CollectiveType, size_bytes):
    """Build the dimension-exchange all-to-all.

    Block ``(s, d)`` before step ``i`` sits at the node whose bits ``0..i-1`` are
    ``d``'s and whose other bits are ``s``'s; in step ``i`` it crosses dimension
    ``i`` if ``s`` and ``d`` differ there.

    Parameters
    ----------
    system : Network
        Target network with a power-of-two node count (one hop per message on a hypercube).
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
    Seed 002 (Grama et al.), "All-to-All Personalized Communication on a Hypercube"
    and its cost analysis.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.hypercube import Hypercube
    >>> collsim.build("hypercube-personalized", Hypercube(nodes=8), "alltoall", "1KiB").num_steps
    3
    """
    p = system.nodes
    c = np.arange(p)
    b = LogicalBuilder(make_collective("alltoall", p, size_bytes))
    for i in range(p.bit_length() - 1):
        bit = 1 << i
        low = bit - 1
        # blocks at node c: sources s with s's bits < i free (= x), destinations d with
        # d's bits < i equal to c's, bit i opposite to c's, higher bits free (= y)
        x = np.arange(1 << i)
        y = np.arange(p >> (i + 1))
        src = (c[:, None] & ~low) | x[None, :]                     # (p, 2^i)
        hi_d = ((y << (i + 1)) | ((~c[:, None] & bit))) | (c[:, None] & low)   # (p, p/2^(i+1))
        chunks = src[:, :, None] * p + hi_d[:, None, :]
        b.add(i, c, c ^ bit, chunks.reshape(p, -1))
    return b.build(), {}
