"""The networks' route format: each transfer's ``path`` of vertices, or ``paths`` with ``shares`` (ECMP).

A network transfer's route is the list of vertices it visits (switches are vertices too),
read back as link ids; a transfer split over several equal-cost paths gives ``"paths"`` and the
``"shares"`` of its bytes on each.  The network kind registers :data:`LINK_FORMAT`
(:attr:`collsim.kinds.base.KindModel.route_format`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import RouteError, ScheduleFormatError, Where
from ...core.fields import _path
from ...core.plugins import RouteFormat
from ...core.csr import INDEX
from .routes import LinkRoutes
from ...core.schedule import Schedule


def _vertex_path(tr: dict, system, step: int, t: int, where: str) -> list:
    """A network transfer's ``path`` of vertices, checked (its links are looked up in :meth:`LinkReader.finish`)."""
    if "path" not in tr:
        raise ScheduleFormatError(f"{where}: 'path' must be a list of at least 2 vertex ids")
    return _path(tr, system.vertices, "vertex", step, t, where)


class LinkReader:
    """Collects the vertex paths of network transfers as link ids (ECMP: ``paths`` and ``shares``).

    The paths' vertices are kept as read; :meth:`finish` looks up every hop's link in one query of the
    link table (a lookup per transfer cost a quarter of reading a file), and names the first hop, in
    file order, that no link joins.
    """

    KEYS = frozenset({"path", "paths", "shares"})  # a transfer's route fields

    def __init__(self, system) -> None:
        self.system = system
        self.hops: list[int] = []
        self.vertices: list[int] = []
        self.origin: list[tuple[int, int, str]] = []  # per path: its transfer's step, index and position
        self.npaths: list[int] = []
        self.shares: list[float] = []

    def _take(self, path: list, step: int, t: int, where: str) -> None:
        self.vertices.extend(path)
        self.hops.append(len(path) - 1)
        self.origin.append((step, t, where))

    def add(self, tr: dict, step: int, t: int, where: str) -> None:
        if "paths" in tr and "path" in tr:  # one route or several, never both (neither is ignored)
            raise ScheduleFormatError(f"{where}: give 'path' or 'paths' (with 'shares'), not both")
        if "paths" not in tr:
            if "shares" in tr:
                raise ScheduleFormatError(f"{where}: 'shares' goes with 'paths' (a route split over several paths)")
            self._take(_vertex_path(tr, self.system, step, t, where), step, t, where)
            self.npaths.append(1)
            self.shares.append(1.0)
            return
        paths, shares = tr["paths"], tr.get("shares")
        if not isinstance(paths, list) or not paths:
            raise ScheduleFormatError(f"{where}: 'paths' must be a non-empty list of vertex paths")
        if (not isinstance(shares, list) or len(shares) != len(paths)
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in shares)):
            raise ScheduleFormatError(f"{where}: 'shares' must be a list of {len(paths)} numbers, the share of "
                                      f"the transfer's bytes on each path")
        for path in paths:
            one = {"path": path, "src": tr.get("src"), "dst": tr.get("dst")}  # each path as a transfer's 'path'
            self._take(_vertex_path(one, self.system, step, t, where), step, t, where)
        self.npaths.append(len(paths))
        self.shares.extend(float(x) for x in shares)

    def _links(self) -> np.ndarray:
        """Every hop's link id, in order; a hop no link joins is a :class:`RouteError` naming its transfer."""
        verts = np.asarray(self.vertices, dtype=INDEX)
        last = np.cumsum(np.asarray(self.hops, dtype=INDEX) + 1) - 1   # each path's last vertex
        first_of_hop = np.delete(np.arange(len(verts), dtype=INDEX), last)
        links = self.system.links.index(verts[first_of_hop], verts[first_of_hop + 1])
        missing = np.flatnonzero(links < 0)
        if len(missing):
            k = int(first_of_hop[missing[0]])
            step, t, where = self.origin[int(np.searchsorted(last, k))]
            raise RouteError(f"no link from vertex {int(verts[k])} to vertex {int(verts[k + 1])}",
                             Where(step=step, transfer=t, position=where))
        return links.astype(INDEX, copy=False)

    def finish(self, where_of) -> LinkRoutes:
        ptr = np.zeros(len(self.hops) + 1, dtype=INDEX)
        np.cumsum(np.asarray(self.hops, dtype=INDEX), out=ptr[1:])
        links = self._links()
        if len(self.hops) == len(self.npaths):  # one path per transfer
            return LinkRoutes(ptr, links)
        path_ptr = np.zeros(len(self.npaths) + 1, dtype=INDEX)
        np.cumsum(np.asarray(self.npaths, dtype=INDEX), out=path_ptr[1:])
        return LinkRoutes(ptr, links, path_ptr, np.asarray(self.shares, np.float64))


def link_fields(s: Schedule, t: int, with_path: bool) -> dict[str, Any]:
    """Transfer ``t``'s route in a schedule file: its ``path`` of vertices, or ECMP ``paths`` and ``shares``."""
    r = s.routes
    p0, p1 = (int(r.path_ptr[t]), int(r.path_ptr[t + 1])) if r.multipath else (t, t + 1)
    paths = [[int(s.src[t])] + s.system.links.dst[r.route_links[r.route_ptr[p]:r.route_ptr[p + 1]]].tolist()
             for p in range(p0, p1)]
    if len(paths) == 1:
        return {"path": paths[0]}
    return {"paths": paths, "shares": r.weights[p0:p1].tolist()}  # ECMP: the bytes split over several paths


LINK_FORMAT = RouteFormat(LinkRoutes, LinkReader, link_fields)
"""The route format of electrical networks."""

__all__ = ["LINK_FORMAT", "LinkReader", "link_fields"]
