"""Resource checks every kind with links shares: endpoints in range, and every route a walk of
existing links from source to destination (networks, circuit switches, hierarchical systems; the
flow simulator's precondition).  The optical ring's channel and band checks are its own
(:mod:`collsim.kinds.optical_ring.resources`).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import (located, RouteError,
                           Where)
from ..core.positions import transfer_position
from ..core.csr import row_blocks
from ..core.schedule import Schedule
from ..core.wellformed import check_wellformed


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


@located
def verify_endpoints(s: Schedule) -> None:
    """Check that the schedule is well-formed, then its node ids."""
    check_wellformed(s)
    n = s.system.nodes
    for name, col in (("source", s.src), ("destination", s.dst)):
        i = _first((col < 0) | (col >= n))
        if i is not None:
            raise RouteError(f"{name} node {int(col[i])} does not exist", Where(step=int(s.step[i]), transfer=i))
    i = _first(s.src == s.dst)
    if i is not None:
        raise RouteError(f"node {int(s.src[i])} sends to itself", Where(step=int(s.step[i]), transfer=i))


def check_network_routes(system, src: np.ndarray, dst: np.ndarray, ptr: np.ndarray, links: np.ndarray,
                         step: np.ndarray, owner: np.ndarray | None = None) -> None:
    """Check that each route is a contiguous walk of existing links from src to dst."""
    lt = system.links

    def _at(t: int, **more) -> Where:  # route t's transfer; named as a file does when routes are transfers
        if owner is not None:  # multipath: the caller's @located names the owning transfer
            return Where(step=int(step[t]), transfer=int(owner[t]), **more)
        return Where(step=int(step[t]), transfer=t, position=transfer_position(step, t), **more)

    if len(ptr) != len(src) + 1 or ptr[-1] != len(links):
        raise RouteError(f"route table covers {len(ptr) - 1} transfers and {len(links)} links, "
                         f"but the schedule has {len(src)} transfers")
    blocks = row_blocks(ptr)  # three passes of bounded temporaries, in the order errors are reported
    for lo, hi in blocks:
        seg = links[ptr[lo]:ptr[hi]]
        wrong = (seg < 0) | (seg >= len(lt))
        if wrong.any():
            k = int(ptr[lo]) + int(np.flatnonzero(wrong)[0])
            t = int(np.searchsorted(ptr, k, side="right") - 1)
            raise RouteError(f"link id {int(links[k])} does not exist", _at(t))
    lengths = np.diff(ptr)
    if (lengths < 1).any():
        t = int(np.flatnonzero(lengths < 1)[0])
        raise RouteError(f"route does not run from {int(src[t])} to {int(dst[t])}",
                         _at(t))
    for lo, hi in blocks:
        seg = links[ptr[lo]:ptr[hi]]
        joins = lt.dst[seg[:-1]] != lt.src[seg[1:]]
        joins[ptr[lo + 1:hi] - ptr[lo] - 1] = False  # boundaries between transfers
        if joins.any():
            k = int(ptr[lo]) + int(np.flatnonzero(joins)[0])
            t = int(np.searchsorted(ptr, k, side="right") - 1)
            raise RouteError(f"route breaks after link {system.link_name(int(links[k]))}",
                             _at(t, link=system.link_name(int(links[k + 1]))))
    for lo, hi in blocks:
        bad = (lt.src[links[ptr[lo:hi]]] != src[lo:hi]) | (lt.dst[links[ptr[lo + 1:hi + 1] - 1]] != dst[lo:hi])
        if bad.any():
            t = lo + int(np.flatnonzero(bad)[0])
            raise RouteError(f"route does not run from {int(src[t])} to {int(dst[t])}",
                             _at(t))


@located
def verify_network_resources(s: Schedule) -> None:
    """Resource check of a network schedule: every route is a walk of existing links."""
    r = s.routes
    if not r.multipath:
        check_network_routes(s.system, s.src, s.dst, s.route_ptr, s.route_links, s.step)
        return
    check_wellformed(s)
    own = r.path_owner
    check_network_routes(s.system, s.src[own], s.dst[own], r.route_ptr, r.route_links, s.step[own], owner=own)
