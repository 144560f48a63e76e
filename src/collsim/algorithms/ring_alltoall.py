"""All-to-all on the optical ring at its bisection bound: store-and-forward over every channel.

Every pair block ``(a, b)`` travels its shortest way round the ring, one hop per
round, stored and re-sent (O/E/O) by every node on the way.  In round
``r = 1 .. floor(N/2)`` node ``i`` sends to ``i + 1`` every block it holds that
still has to travel further clockwise, and to ``i - 1`` the counter-clockwise
ones; for even N the blocks at distance exactly N/2 go half each way.  Each
message is cut over the ``F`` fibers and rides a band of all ``w`` wavelengths,
so every slot uses the same ``2NF`` one-hop lightpaths (one reconfiguration,
every lightpath feasible).  The bytes each link-direction carries are exactly
the ring all-to-all bound's ``floor(N^2/4) m / 2`` (docs/derivations/ring-alltoall.md).

References
----------
A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
Addison-Wesley, 2003, ch. 4 (all-to-all personalized communication on a ring,
store-and-forward); F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient
Algorithm for All-gather Operation in Optical Interconnect Systems", IEEE Open
Journal of the Communications Society, 2024, §III-B (the one-stage model it is
compared with).  Both directions at once, the half blocks and the bands over every
channel are collsim's own.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective, split_bytes
from ..core.collectives import CollectiveType
from ..core.limits import check_memory, limit_error, memory_limit_bytes
from ..core.schedule import INDEX, LogicalBuilder
from .registry import register
from .striped_ring import striped_ring_band

__all__ = ["ring_alltoall", "ring_alltoall_entries", "ring_alltoall_memory_bytes", "ring_alltoall_time_s"]

BYTES_PER_ENTRY = 16
"""Peak bytes of building and realising, per chunk entry (measured: docs/derivations/ring-alltoall.md)."""

def _split(n: int, f: int) -> int:
    return 2 * f if n % 2 == 0 else f


def ring_alltoall_entries(nodes: int, fibers: int = 1) -> tuple[int, int]:
    """Transfers and chunk entries of :func:`ring_alltoall`, without building it.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    Addison-Wesley, 2003, ch. 4 (ring all-to-all, sum of distances).
    """
    n, f = int(nodes), int(fibers)
    return 2 * n * f * (n // 2), _split(n, f) * n * (n * n // 4)


def ring_alltoall_memory_bytes(nodes: int, fibers: int = 1) -> int:
    """Estimated peak bytes of building, realising and verifying :func:`ring_alltoall`.

    References
    ----------
    docs/derivations/ring-alltoall.md, "Memory"; the limit: docs/model.md, "The memory limit".
    """
    n, f = int(nodes), int(fibers)
    t, e = ring_alltoall_entries(n, f)
    s = _split(n, f)
    c = n * n * s
    p = q = n * (n - 1) * s
    k = p + 2 * e + q
    verify = min(9 * n * c + 48 * min(e, 1 << 22) + 16 * (p + q), 30 * k + 24 * e + 9 * min(k, n * c))
    return max(BYTES_PER_ENTRY * e, 8 * e + verify) + 64 * t


def _sizes(system, size_bytes: int) -> np.ndarray:
    """Bytes of the largest transfer of every round (1 .. floor(N/2))."""
    n, f = system.nodes, system.fibers
    d = (n - 1) // 2                                   # full-block distances per direction
    r = np.arange(1, n // 2 + 1, dtype=np.int64)
    k = np.maximum(d - r + 1, 0)                       # full blocks a node forwards in round r
    q = split_bytes(size_bytes, _split(n, f))
    if n % 2:
        return k * q[0]
    return k * (q[0] + q[f]) + q[0]                    # fiber 0 clockwise carries the largest pieces


def ring_alltoall_time_s(system, size_bytes: int) -> float:
    """Closed-form time of :func:`ring_alltoall` under collsim's optical step model.

    References
    ----------
    A. Grama et al., "Introduction to Parallel Computing", 2003, ch. 4 (ring
    all-to-all, ``(t_s + t_w m p/2)(p-1)``); the band, O/E/O and reconfiguration
    terms are collsim's model (docs/cost-models.md).
    """
    per = system.transfer_time_s(_sizes(system, int(size_bytes)), striped_ring_band(system))
    return float(system.mrr_reconfig_s + np.sum(np.asarray(per) + system.slot_latency_s))


def _what(n: int, f: int) -> str:
    transfers, entries = ring_alltoall_entries(n, f)
    return f"the store-and-forward all-to-all on {n} nodes ({entries} chunk entries, {transfers} transfers)"


def _requires(system, collective: CollectiveType):
    """The memory refusal as a declared constraint, so ``compare`` skips the row instead of stopping."""
    n, f = system.nodes, system.fibers
    if ring_alltoall_memory_bytes(n, f) > memory_limit_bytes():
        return str(limit_error(ring_alltoall_memory_bytes(n, f), _what(n, f), "use fewer nodes or fibers"))
    return None


@register(
    "striped-relay-alltoall", collectives=("alltoall",), systems=("optical-ring",), aliases=("ring-relay",),
    params=(), requires=_requires, constraints="its chunk lists (s N floor(N^2/4) entries) within collsim's memory limit",
    reference="[Grama03] ch. 4 (all-to-all personalized on a ring, store-and-forward); [OpTree24] "
                         "§III-B (OSM, its one-hop-per-pair rival); both directions, half blocks at distance N/2 "
                         "and bands over every channel are collsim's own",
    summary="store-and-forward all-to-all over every channel of both directions, at the bisection bound",
)
def ring_alltoall(system, collective: CollectiveType, size_bytes):
    """Build the bidirectional store-and-forward ring all-to-all.

    Chunk ``(a N + b) s + p`` is piece ``p`` of block ``(a, b)``, ``s = F`` (odd N)
    or ``2F`` (even N).  In round ``r`` (0-based ``r - 1``) node ``i`` sends to
    ``i + 1``, on fiber ``f``, piece ``f`` (odd N; pieces ``f`` and ``F + f`` for even
    N) of every block ``(i - r + 1, i - r + 1 + d)`` with ``r <= d <= (N-1)//2``, and
    for even N piece ``f`` of the block at distance N/2; counter-clockwise mirrors it
    with piece ``F + f`` of the half block.  Colours are pre-assigned (fiber ``f``,
    wavelength 0, a band of :func:`striped_ring_band` wavelengths).

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        ``alltoall``.
    size_bytes : int
        Each pair's block m.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)`` with ``rounds`` and ``chunk_entries``.

    Raises
    ------
    collsim.core.limits.MemoryLimitError
        When the estimate (:func:`ring_alltoall_memory_bytes`) exceeds the limit (the
        registry's constraint refuses such an instance first, as an ``UnsupportedError``
        naming the same estimate, so ``collsim compare`` skips it with a note).

    References
    ----------
    A. Grama et al., "Introduction to Parallel Computing", 2003, ch. 4; F. Dai et al.,
    "OpTree", IEEE OJ-COMS 2024, §III-B.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("striped-relay-alltoall", "paper", "alltoall", "1MiB", nodes=8, wavelengths=4)
    >>> verify(s).steps, verify(s).max_hops, int(s.band.max())
    (4, 1, 4)
    """
    n, f = system.nodes, system.fibers
    entries = ring_alltoall_entries(n, f)[1]
    check_memory(ring_alltoall_memory_bytes(n, f), _what(n, f), "use fewer nodes or fibers")
    s = _split(n, f)
    even = n % 2 == 0
    coll = make_collective("alltoall", n, size_bytes, split=s)
    band = striped_ring_band(system)
    src = np.repeat(np.arange(n, dtype=INDEX), f)                   # node-major, fiber-minor
    fib = np.tile(np.arange(f, dtype=INDEX), n)[:, None]
    color = fib[:, 0] * (system.wavelengths // band)
    d_full = (n - 1) // 2
    b = LogicalBuilder(coll)
    for r in range(1, n // 2 + 1):
        ds = np.arange(r, d_full + 1, dtype=INDEX)[None, :]
        for sign in (1, -1):
            a = ((src - sign * (r - 1)) % n)[:, None]               # origin of the blocks forwarded now
            blocks = a * n + (a + sign * ds) % n
            parts = [blocks * s + fib]
            if even:
                parts += [blocks * s + f + fib, (a * n + (a + n // 2) % n) * s + fib + (f if sign < 0 else 0)]
            b.add(r - 1, src, (src + sign) % n, np.concatenate(parts, axis=1), direction=sign, color=color,
                  band=band)
    return b.build(), {"rounds": n // 2, "chunk_entries": entries}
