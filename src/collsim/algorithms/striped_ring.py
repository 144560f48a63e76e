"""Striped bidirectional ring: every block over every channel, lightpaths fixed throughout.

Each block is cut into ``2F`` pieces; ``F`` of them travel clockwise and ``F``
counter-clockwise, piece ``p`` of a direction on fiber ``p`` over a band of all
``w`` wavelengths.  Every node keeps the same ``2F`` one-hop lightpaths (to each
neighbour, on every fiber) for the whole collective, so the MRRs are configured
once.  All-gather and reduce-scatter take N-1 slots, all-reduce 2(N-1)
(reduce-scatter then all-gather).  Derivation: docs/derivations/striped-ring.md.

References
----------
P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
Workstations", Journal of Parallel and Distributed Computing 69(2), 2009 (the ring
reduce-scatter / all-gather pipeline); F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree:
An Efficient Algorithm for All-gather Operation in Optical Interconnect Systems",
IEEE Open Journal of the Communications Society, 2024, §IV-A.2 (the Ring all-gather
on one wavelength).  Splitting every block over both directions, all fibers and a
band of every wavelength is collsim's own construction.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import collective_type, make_collective
from ..core.collectives import CollectiveType
from ..core.csr import INDEX
from ..core.schedule import LogicalSchedule
from .registry import register

__all__ = ["striped_ring", "striped_ring_band", "striped_ring_time_s"]


def striped_ring_band(system) -> int:
    """Band width of every piece: all ``w`` wavelengths, within the transceiver limits.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §I (one lightpath per wavelength).  Bands of wavelengths are
    collsim's extension.
    """
    band = int(system.wavelengths)
    limits = [x for x in (system.max_tx_channels, system.max_rx_channels) if x is not None]
    if limits:
        band = min(band, max(1, min(limits) // (2 * system.fibers)))
    return band


def _slots(collective: CollectiveType, n: int) -> int:
    return len(collective.phases) * (n - 1)   # N-1 per phase (all-reduce: two)


def striped_ring_time_s(system, collective: str | CollectiveType, size_bytes: int) -> float:
    """Closed-form time of :func:`striped_ring` under collsim's optical step model.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
    Workstations", JPDC 69(2), 2009 (2(N-1) steps of m/N).  The band and
    reconfiguration terms are collsim's model (docs/cost-models.md).
    """
    collective = collective_type(collective)
    n, f = system.nodes, system.fibers
    pieces = 2 * f * (n if collective.composed_of else 1)   # all-reduce: N blocks
    piece = -(-int(size_bytes) // pieces)
    t_piece = float(np.asarray(system.transfer_time_s(np.array([piece]), striped_ring_band(system))).ravel()[0])
    t_slot = float(getattr(system, "slot_latency_s", 0.0))   # per-slot latency, where the system has one
    return float(system.mrr_reconfig_s + _slots(collective, n) * (t_piece + t_slot))


def _orbits(system, collective: CollectiveType, size_bytes):
    # the transfers into node 0: clockwise from node N-1 (pieces p < F of block N-1-shift-r),
    # counter-clockwise from node 1 (pieces F + p of block 1+shift+r), each on fiber p
    n, f = system.nodes, system.fibers
    band = striped_ring_band(system)
    k = 2 * f
    coll = make_collective(collective, n, size_bytes, split=k * n if collective.composed_of else k, explicit=False)
    phases = collective.phases
    rounds = len(phases) * (n - 1)
    shape = (rounds, 2, f)
    r = np.tile(np.arange(n - 1, dtype=INDEX), len(phases))
    shift = np.repeat(np.array([int(ph.reduction) for ph in phases], dtype=INDEX), n - 1)
    p = np.arange(f, dtype=INDEX)
    chunks = np.empty(shape, INDEX)
    chunks[:, 0] = ((n - 1 - shift - r) % n * k)[:, None] + p
    chunks[:, 1] = ((1 + shift + r) % n * k + f)[:, None] + p
    rnd = np.repeat(np.arange(rounds, dtype=INDEX), 2 * f)
    src = np.empty(shape, INDEX)
    src[:, 0], src[:, 1] = n - 1, 1
    direction = np.empty(shape, np.int8)
    direction[:, 0], direction[:, 1] = 1, -1
    reduce = np.repeat(np.array([ph.reduction for ph in phases]), (n - 1) * 2 * f)
    t = rounds * 2 * f
    color = np.empty(shape, INDEX)
    color[:] = p * (system.wavelengths // band)
    logical = LogicalSchedule(coll, rnd, src.reshape(-1), np.zeros(t, INDEX), np.arange(t + 1, dtype=INDEX),
                              chunks.reshape(-1), reduce, direction=direction.reshape(-1), color=color.reshape(-1),
                              band=np.full(t, band, np.int32))
    return logical, {}


@register(
    "striped-ring", collectives=("allgather", "reducescatter", "allreduce"), systems=("optical-ring",),
    aliases=("bidirectional-striped-ring",), params=(), orbits=_orbits,
    reference="[Patarasuk09] (ring reduce-scatter and all-gather, all-reduce as the two in sequence); "
              "[OpTree24] §IV-A.2 (Ring all-gather on one wavelength); splitting each block over both "
              "directions, every fiber and a band of all w wavelengths is collsim's own",
    summary="ring over every channel: 2F pieces per block, both directions, fixed lightpaths",
)
def striped_ring(system, collective: CollectiveType, size_bytes):
    """Build striped bidirectional ring schedules.

    Chunk ``2F b + p`` is piece ``p`` of block ``b``.  Clockwise, piece ``p < F``
    rides fiber ``p``: in round ``r`` node ``i`` sends its piece of block
    ``(i - r) mod N`` (all-gather) or its partial of block ``(i - 1 - r) mod N``
    (reduce-scatter, reduced at the receiver) to ``i + 1``.  Counter-clockwise,
    piece ``F + p`` rides fiber ``p`` with the mirrored blocks ``(i + r)`` and
    ``(i + 1 + r)`` to ``i - 1``.  Every transfer holds a band of all ``w``
    wavelengths (:func:`striped_ring_band`) and its channel is pre-assigned, so the
    ``2NF`` lightpaths are the same in every slot and the MRRs are configured once.
    All-reduce cuts the vector into N blocks and runs reduce-scatter then all-gather.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        ``allgather``, ``reducescatter`` or ``allreduce``.
    size_bytes : int
        Message size.

    Returns
    -------
    tuple
        ``(LogicalSchedule, {})``: it takes no parameters.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth Optimal All-reduce Algorithms for Clusters of
    Workstations", JPDC 69(2), 2009; seed 004 (Dai et al., OpTree journal version),
    §IV-A.2.  The bidirectional, all-fiber, all-wavelength striping is collsim's own.

    Examples
    --------
    >>> from collsim import build
    >>> s = build("striped-ring", "paper", "allgather", "1MiB", nodes=16)
    >>> s.num_steps, int(s.band.max()), sorted(set(s.direction.tolist()))
    (15, 64, [-1, 1])
    """
    n, f = system.nodes, system.fibers
    band = striped_ring_band(system)
    per_fiber = system.wavelengths // band
    k = 2 * f
    split = k * n if collective.composed_of else k   # all-reduce: N blocks
    coll = make_collective(collective, n, size_bytes, split=split)
    phases = collective.phases   # all-reduce: reduce-scatter, then all-gather
    rounds = len(phases) * (n - 1)
    t = rounds * 2 * n * f
    # Every column is written in place into its final array, viewed as (round, direction, node, fiber):
    # round by round, the clockwise transfers of all nodes (node-major, fiber-minor), then the
    # counter-clockwise ones.  No per-round blocks, no concatenation, no sort (rounds are in order):
    # the build holds little more than the schedule itself.
    shape = (rounds, 2, n, f)
    i = np.arange(n, dtype=INDEX)[:, None]
    p = np.arange(f, dtype=INDEX)
    rnd = np.empty(t, INDEX)
    rnd.reshape(rounds, -1)[:] = np.arange(rounds, dtype=INDEX)[:, None]
    src = np.empty(t, INDEX)
    src.reshape(shape)[:] = i
    dst = np.empty(t, INDEX).reshape(shape)
    dst[:, 0] = (i + 1) % n
    dst[:, 1] = (i - 1) % n
    direction = np.empty(t, np.int8).reshape(shape)
    direction[:, 0] = 1
    direction[:, 1] = -1
    reduce = np.zeros(t, bool)
    if phases[0].reduction:
        reduce[:t // len(phases)] = True
    # chunk 2F b + p: clockwise pieces p < F, counter-clockwise F + p, one chunk per transfer
    chunks = np.empty(t, INDEX).reshape(shape)
    node = i[:, 0]
    for ph, phase in enumerate(phases):
        shift = int(phase.reduction)   # reduce-scatter sends the partial of block i-1-r
        for r in range(n - 1):
            out = chunks[ph * (n - 1) + r]
            np.add(((node - shift - r) % n * k)[:, None], p, out=out[0])
            np.add(((node + shift + r) % n * k + f)[:, None], p, out=out[1])
    ptr = np.arange(t + 1, dtype=INDEX)
    if f == 1:   # colour 0 everywhere: one read-only broadcast element, not 8 bytes per transfer held
        #          through realisation (rwa.ring only reads pre-assigned colours)
        color = np.broadcast_to(np.zeros(1, INDEX), (t,))
    else:        # colour -> fiber p, lowest wavelength 0
        color = np.empty(t, INDEX)
        color.reshape(shape)[:] = p * per_fiber
    logical = LogicalSchedule(coll, rnd, src, dst.reshape(-1), ptr, chunks.reshape(-1), reduce,
                              direction=direction.reshape(-1), color=color,
                              band=np.full(t, band, np.int32))
    return logical, {}
