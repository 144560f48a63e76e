"""Resource checks of an optical ring: arcs, channels, bands and transceivers.

Every transfer must be a contiguous one-direction arc from its source to its destination holding
a band ``[wavelength, wavelength+band)`` of one fiber < F inside ``0..w-1``, and no two transfers
of one step may share a (direction, fiber, wavelength) on any link.  Two transfers conflict when
their arcs *and* their bands overlap.  The check never expands a band into one row per
wavelength: within each (step, direction, fiber) it cuts the wavelength axis at every band edge
into *elementary segments*, so each band is a run of whole segments and two bands overlap exactly
when they share one.  One row per (transfer, segment) then goes through the arc-interval check,
which sorts intervals per key and compares neighbours: O(R log R) with R the number of rows,
R = T when the bands of a step are aligned (always, for single wavelengths).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import (located, ChannelConflictError, ChannelRangeError, RouteError,
                            TransceiverLimitError, Where)
from ...core.positions import schedule_position
from ...core.ring import arc_start, first_overlap, link_id
from ...core.schedule import Schedule
from ...verify.resources import _first


@located
def verify_ring_routes(s: Schedule) -> None:
    """Check that each route is a one-direction arc from source to destination."""
    n = s.system.nodes
    i = _first((s.direction != 1) & (s.direction != -1))
    if i is not None:
        raise RouteError(f"direction must be +1 or -1, got {int(s.direction[i])}",
                         Where(step=int(s.step[i]), transfer=i))
    i = _first((s.hops < 1) | (s.hops >= n))
    if i is not None:
        raise RouteError(f"route of {int(s.hops[i])} hops on a {n}-node ring",
                         Where(step=int(s.step[i]), transfer=i))
    end = (s.src + s.direction.astype(np.int64) * s.hops) % n
    i = _first(end != s.dst)
    if i is not None:
        d = "cw" if s.direction[i] > 0 else "ccw"
        raise RouteError(f"route from {int(s.src[i])} going {d} for {int(s.hops[i])} hops ends at "
                         f"{int(end[i])}, not at destination {int(s.dst[i])}",
                         Where(step=int(s.step[i]), transfer=i))


def _segment_rows(group: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: int):
    """Rows (transfer, elementary segment) of bands ``[lo, hi)`` within ``group``.

    Returns ``(rows, key, seg_lo)``: the transfer of each row, a key unique per
    (group, segment), and the segment's lowest wavelength.
    """
    span = w + 1
    if (hi - lo == 1).all():  # single wavelengths: the wavelength is the segment
        return np.arange(len(lo)), group * span + lo, lo
    edges = np.concatenate([group * span + lo, group * span + hi])
    edges.sort(kind="stable")      # values alone: the same result, faster on the nearly sorted halves
    edges = edges[np.concatenate(([True], edges[1:] != edges[:-1]))]
    first = np.searchsorted(edges, group * span + lo)
    nseg = np.searchsorted(edges, group * span + hi) - first
    rows = np.repeat(np.arange(len(lo)), nseg)
    seg = np.repeat(first - (np.cumsum(nseg) - nseg), nseg) + np.arange(int(nseg.sum()))
    return rows, seg, edges[seg] % span


@located
def verify_channels(s: Schedule) -> None:
    """Check channel ranges and that no two transfers share a channel on a link in a step."""
    sysm = s.system
    n, w, f = sysm.nodes, sysm.wavelengths, sysm.fibers
    lo = s.wavelength.astype(np.int64)
    hi = lo + s.band
    i = _first((lo < 0) | (s.band < 1) | (hi > w))
    if i is not None:
        what = (f"wavelength {int(lo[i])}" if s.band[i] == 1 else f"band {int(lo[i])}..{int(hi[i]) - 1}")
        raise ChannelRangeError(f"{what} not in 0..{w - 1}",
                                Where(step=int(s.step[i]), transfer=i, wavelength=int(lo[i])))
    i = _first((s.fiber < 0) | (s.fiber >= f))
    if i is not None:
        raise ChannelRangeError(f"fiber {int(s.fiber[i])} not in 0..{f - 1}",
                                Where(step=int(s.step[i]), transfer=i, fiber=int(s.fiber[i])))
    if not len(s):
        return
    # keys from the channels in use, not the system's counts (a file may say fibers = 2**62)
    fibers = int(s.fiber.max()) + 1
    top = int(hi.max())
    if (int(s.step[-1]) * 2 + 2) * fibers * (top + 1) < 2**62:
        # blocks of whole steps (channels conflict only within a step), in step order: the first
        # block with a conflict holds the one a single pass finds first (keys are step-major)
        del lo, hi
        for b0, b1 in _step_blocks(s, CHANNEL_BLOCK):
            lo = s.wavelength[b0:b1].astype(np.int64)
            group = (s.step[b0:b1] * 2 + (s.direction[b0:b1] > 0)) * fibers + s.fiber[b0:b1]
            rows, key, seg_lo = _segment_rows(group, lo, lo + s.band[b0:b1], top)
            del group, lo
            rows += b0
            _raise_overlap(s, rows, key, seg_lo)
        return
    # hand-written channel numbers too far apart for one int64 key: rank them first (same order)
    group = (s.step * 2 + (s.direction > 0)) * fibers + s.fiber
    group = np.unique(group, return_inverse=True)[1].reshape(-1)
    vals, inv = np.unique(np.concatenate([lo, hi]), return_inverse=True)
    inv = inv.reshape(-1)
    rows, key, seg = _segment_rows(group, inv[:len(lo)], inv[len(lo):], len(vals))
    _raise_overlap(s, rows, key, vals[seg])


CHANNEL_BLOCK = 1 << 22
"""Transfers whose channels are checked at once (whole steps: in one pass, the striped-ring all-reduce on
4096 nodes, 67 M transfers, took 4 GiB for its channel keys in one pass)."""


def _step_blocks(s: Schedule, size: int):
    """``(lo, hi)`` transfer ranges of whole steps, about ``size`` transfers each (one step may be more)."""
    bounds = s.step_bounds
    total = len(s)
    cuts = bounds[np.searchsorted(bounds, np.arange(size, total, size), side="right") - 1]
    cuts = np.unique(np.concatenate(([0], cuts, [total])))
    return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))


def _raise_overlap(s: Schedule, rows: np.ndarray, key: np.ndarray, seg_lo: np.ndarray) -> None:
    """Raise the first channel shared on a link by two (segment) rows with one key, if any."""
    sysm = s.system
    n = sysm.nodes
    start = arc_start(s.src[rows], s.direction[rows], n)
    hit = first_overlap(key, start, s.hops[rows], n)
    if hit is not None:
        ra, rb, pos = hit
        a, b = sorted((int(rows[ra]), int(rows[rb])))
        link = int(link_id(np.array([pos]), s.direction[b:b + 1], n)[0])
        raise ChannelConflictError(
            f"{schedule_position(s, a)} and {schedule_position(s, b)} share a channel on a link",
            Where(step=int(s.step[b]), transfer=b, link=sysm.link_name(link),
                  fiber=int(s.fiber[b]), wavelength=int(seg_lo[rb])))


@located
def verify_transceivers(s: Schedule) -> None:
    """Check per-node limits on simultaneous transmit / receive channels."""
    n = s.system.nodes
    for attr, col, what in (("max_tx_channels", s.src, "transmits"), ("max_rx_channels", s.dst, "receives")):
        limit = getattr(s.system, attr, None)
        if limit is None or not len(col):
            continue
        key, present = s.step * n + col, None
        if s.num_steps * n <= 4 * len(key) + (1 << 20):
            counts = np.bincount(key, weights=s.routes.channels())
        else:  # few transfers over many (step, node) pairs: count the pairs present only
            present, inv = np.unique(key, return_inverse=True)
            counts = np.bincount(inv.reshape(-1), weights=s.routes.channels())
        j = _first(counts > limit)
        if j is not None:
            step, node = divmod(j if present is None else int(present[j]), n)
            t = _first((s.step == step) & (col == node))
            raise TransceiverLimitError(f"node {node} {what} on {int(counts[j])} channels, limit {limit}",
                                        Where(step=step, transfer=t, node=node))


@located
def verify_ring_resources(s: Schedule) -> None:
    """All resource checks of an optical-ring schedule: arcs, channels and bands, transceivers."""
    verify_ring_routes(s)
    verify_channels(s)
    verify_transceivers(s)


def verify_ring_orbit_resources(sym) -> None:
    """The resource checks of a symmetric schedule's expansion, on its representatives.

    The group rotates the ring by multiples of ``D`` (``D = 1``: every rotation), so an orbit is
    its representative's arc at every offset ``D g``.  Link ``e`` lies on the orbit's arcs as many
    times as the arc has positions congruent to ``e`` mod ``D``: folding every arc onto a ring of
    ``D`` positions, a channel (direction, fiber, elementary wavelength segment) of a step is
    shared on some link of the expansion iff an arc is longer than ``D`` or two folded arcs with
    that channel overlap.  Node ``u`` sends one transfer of every orbit whose representative's
    sender is congruent to ``u`` mod ``D`` (and receives likewise), so its channels per step are
    those representatives' bands summed.

    Parameters
    ----------
    sym : SymmetricSchedule
        Representatives (transfers into nodes ``0..D-1``) and the rotations.

    Raises
    ------
    collsim.core.errors.VerificationError
        A route, channel or transceiver violation, naming the representative.

    Examples
    --------
    >>> from collsim import build_symmetric
    >>> verify_ring_orbit_resources(build_symmetric("ring", "paper", "allgather", "1KiB", nodes=8))
    """
    _orbit_resources(sym.reps, sym.system.nodes // sym.group.order)


@located
def _orbit_resources(s: Schedule, d: int) -> None:
    """:func:`verify_ring_orbit_resources` on the representatives (errors located in them)."""
    sysm = s.system
    n = sysm.nodes
    verify_ring_routes(s)
    verify_channels(s)       # ranges, and two representatives on one channel of a link
    if len(s):
        long = np.flatnonzero(s.hops > d)
        if long.size:
            t = int(long[0])
            raise ChannelConflictError(
                f"the rotations of {schedule_position(s, t)} by multiples of {d} overlap: its arc of "
                f"{int(s.hops[t])} hops is longer than {d}", _at(s, t, int(s.wavelength[t])))
        lo = s.wavelength.astype(np.int64)
        fibers = int(s.fiber.max()) + 1
        group = (s.step.astype(np.int64) * 2 + (s.direction > 0)) * fibers + s.fiber
        rows, key, seg_lo = _segment_rows(group, lo, lo + s.band, int((lo + s.band).max()))
        start = arc_start(s.src[rows], s.direction[rows], n) % d
        hit = first_overlap(key, start, s.hops[rows], d)
        if hit is not None:
            ra, rb, _ = hit
            a, b = sorted((int(rows[ra]), int(rows[rb])))
            raise ChannelConflictError(
                f"the rotations of {schedule_position(s, a)} and of {schedule_position(s, b)} by multiples of "
                f"{d} share a channel on a link", _at(s, b, int(seg_lo[rb])))
    for attr, col, what in (("max_tx_channels", s.src, "transmits"), ("max_rx_channels", s.dst, "receives")):
        limit = getattr(sysm, attr, None)
        if limit is None or not len(s):
            continue
        key = s.step.astype(np.int64) * d + col % d
        counts = np.bincount(key, weights=s.routes.channels(), minlength=s.num_steps * d)
        j = _first(counts > limit)
        if j is not None:
            step, node = divmod(j, d)
            t = _first(key == j)
            raise TransceiverLimitError(f"node {node} (and its rotations) {what} on {int(counts[j])} channels, "
                                        f"limit {limit}", Where(step=int(step), transfer=t, node=node))


def _at(s: Schedule, t: int, wavelength: int) -> Where:
    link = int(link_id(arc_start(s.src[t:t + 1], s.direction[t:t + 1], s.system.nodes), s.direction[t:t + 1],
                       s.system.nodes)[0])
    return Where(step=int(s.step[t]), transfer=t, link=s.system.link_name(link), fiber=int(s.fiber[t]),
                 wavelength=wavelength)
