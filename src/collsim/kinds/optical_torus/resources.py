"""Resource verification on an optical torus: ring routes, channels and bands, transceivers.

A torus schedule carries :class:`~collsim.kinds.optical_ring.routes.RingRoutes`; the ring of a
transfer is the row or column its endpoints share.  The checks are the ring's
(:mod:`.resources`) run per dimension, with the ring index in the conflict key:

1. **routes**: the endpoints share a row or a column; direction is +1 / -1;
   ``1 <= hops < L`` (``L`` the ring's length) and the arc ends at ``dst``;
2. **channels**: fiber < F, band inside ``0..w-1``; no two transfers of one step
   share a (ring, direction, fiber, wavelength) on any link of that ring;
3. **transceivers**: per step and node, the channels sourced (sunk) over all the
   node's rings are at most ``tx_channels`` (``rx_channels``): ``2 F w`` with shared
   transceivers, lowered by ``max_tx_channels`` / ``max_rx_channels``.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import ChannelConflictError, ChannelRangeError, RouteError, Where, located
from ...core.positions import schedule_position
from ...core.ring import first_overlap, link_id
from ...core.schedule import Schedule
from ..optical_ring.resources import _segment_rows, verify_transceivers

__all__ = ["verify_torus_channels", "verify_torus_resources", "verify_torus_routes"]


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


@located
def verify_torus_routes(s: Schedule) -> None:
    """Check that every route is a one-direction arc of its row or column ring, ending at ``dst``."""
    sysm = s.system
    dim, ring, a, b, length, ok = sysm.ring_coords(s.src, s.dst)
    i = _first(~ok)
    if i is not None:
        raise RouteError(f"transfer {int(s.src[i])}->{int(s.dst[i])} leaves its row and its column: a lightpath "
                         f"stays within one ring of the {sysm.rows}x{sysm.cols} torus",
                         Where(step=int(s.step[i]), transfer=i))
    i = _first((s.direction != 1) & (s.direction != -1))
    if i is not None:
        raise RouteError(f"direction must be +1 or -1, got {int(s.direction[i])}",
                         Where(step=int(s.step[i]), transfer=i))
    i = _first((s.hops < 1) | (s.hops >= length))
    if i is not None:
        what = "row" if dim[i] == 0 else "column"
        raise RouteError(f"route of {int(s.hops[i])} hops on a {int(length[i])}-node {what} ring",
                         Where(step=int(s.step[i]), transfer=i))
    end = (a + s.direction.astype(np.int64) * s.hops) % length
    i = _first(end != b)
    if i is not None:
        d = "cw" if s.direction[i] > 0 else "ccw"
        reached = int(sysm.node_of(dim[i], ring[i], end[i]))
        raise RouteError(f"route from {int(s.src[i])} going {d} for {int(s.hops[i])} hops along its "
                         f"{'row' if dim[i] == 0 else 'column'} ends at {reached}, not at destination "
                         f"{int(s.dst[i])}", Where(step=int(s.step[i]), transfer=i))


@located
def verify_torus_channels(s: Schedule) -> None:
    """Check channel ranges, and that no two transfers of a step share a channel on a link of one ring."""
    sysm = s.system
    w, f = sysm.wavelengths, sysm.fibers
    lo = s.wavelength.astype(np.int64)
    hi = lo + s.band
    i = _first((lo < 0) | (s.band < 1) | (hi > w))
    if i is not None:
        what = f"wavelength {int(lo[i])}" if s.band[i] == 1 else f"band {int(lo[i])}..{int(hi[i]) - 1}"
        raise ChannelRangeError(f"{what} not in 0..{w - 1}",
                                Where(step=int(s.step[i]), transfer=i, wavelength=int(lo[i])))
    i = _first((s.fiber < 0) | (s.fiber >= f))
    if i is not None:
        raise ChannelRangeError(f"fiber {int(s.fiber[i])} not in 0..{f - 1}",
                                Where(step=int(s.step[i]), transfer=i, fiber=int(s.fiber[i])))
    if len(s) < 2:
        return
    dim, ring, a, _, _, _ = sysm.ring_coords(s.src, s.dst)
    start = np.where(s.direction > 0, a, 0)
    for d, n in ((0, sysm.cols), (1, sysm.rows)):
        rows_d = np.flatnonzero(dim == d)
        if len(rows_d) < 2:
            continue
        start[rows_d] = np.where(s.direction[rows_d] > 0, a[rows_d], (-a[rows_d]) % n)
        # (step, ring, direction, fiber) ranked to 0..G-1: keys stay small whatever a file says
        side, nf = max(sysm.rows, sysm.cols), int(s.fiber.max()) + 1
        dirbit = (s.direction[rows_d] > 0).astype(np.int64)
        if (int(s.step[-1]) + 1) * side * 2 * nf < 2**40:
            grp = ((s.step[rows_d] * side + ring[rows_d]) * 2 + dirbit) * nf + s.fiber[rows_d]
        else:
            grp = np.unique(np.stack([s.step[rows_d], ring[rows_d], dirbit, s.fiber[rows_d].astype(np.int64)]),
                            axis=1, return_inverse=True)[1].reshape(-1)
        top = int(hi.max())
        if (int(grp.max()) + 1) * (top + 1) < 2**62:
            sub, key, seg_lo = _segment_rows(grp, lo[rows_d], hi[rows_d], top)
        else:  # channel numbers too far apart for one key: rank them too (same order)
            vals, inv = np.unique(np.concatenate([lo[rows_d], hi[rows_d]]), return_inverse=True)
            inv = inv.reshape(-1)
            sub, key, seg = _segment_rows(grp, inv[:len(rows_d)], inv[len(rows_d):], len(vals))
            seg_lo = vals[seg]
        pick = rows_d[sub]
        hit = first_overlap(key, start[pick], s.hops[pick], n)
        if hit is None:
            continue
        ra, rb, pos = hit
        x, y = sorted((int(pick[ra]), int(pick[rb])))
        local = int(link_id(np.array([pos]), s.direction[y:y + 1], n)[0])
        pos_node = local if local < n else local - n   # the link's source position on the ring
        node = int(sysm.node_of(d, ring[y], pos_node))
        link = (2 * d + (1 if s.direction[y] < 0 else 0)) * sysm.nodes + node
        raise ChannelConflictError(f"{schedule_position(s, x)} and {schedule_position(s, y)} share a "
                                   "channel on a link",
                                   Where(step=int(s.step[y]), transfer=y, link=sysm.link_name(link),
                                         fiber=int(s.fiber[y]), wavelength=int(seg_lo[rb])))


class _LimitView:
    """What :func:`verify_transceivers` reads: the node count and the limits the channels do not enforce."""

    def __init__(self, system) -> None:
        self.nodes = system.nodes
        self.max_tx_channels, self.max_rx_channels = system.tx_limit, system.rx_limit


@located
def verify_torus_resources(s: Schedule) -> None:
    """All resource checks of an optical-torus schedule: ring routes, channels and bands, transceivers."""
    verify_torus_routes(s)
    verify_torus_channels(s)
    verify_transceivers(s.replace(system=_LimitView(s.system)))
