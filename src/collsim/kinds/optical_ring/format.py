"""The optical rings' route format: the ``path``/``dir``/``hops``, fiber, wavelength and band of a transfer.

A ring transfer's route is written as the nodes it visits (``"path"``) or, compactly, as
``"dir"`` (``"cw"``/``"ccw"``) and ``"hops"``; its channels as ``"fiber"``, ``"wavelength"`` and
``"band"`` (written when not 1).  A ``path`` must go one way round; a ``dir`` or ``hops`` beside it
must agree; on a 2-node ring a path needs a ``dir`` (both ways round are one hop).  A torus's
lightpaths stay in one row or column ring, so they are always written compactly
(``ring_paths = False``).  The optical kinds register :data:`RING_FORMAT`
(:attr:`collsim.kinds.base.KindModel.route_format`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import RouteError, ScheduleFormatError, Where
from ...core.fields import _path, int_column, need, optional
from ...core.plugins import RouteFormat
from ...core.csr import INDEX
from .routes import RingRoutes
from ...core.schedule import Schedule


_DIRS = {"cw": 1, "ccw": -1}


def _dir(tr: dict, where: str) -> int:
    """A transfer's ``dir``: +1 for ``"cw"``, -1 for ``"ccw"``; anything else is malformed."""
    d = _DIRS.get(tr["dir"]) if isinstance(tr["dir"], str) else None
    if d is None:
        raise ScheduleFormatError(f"{where}: 'dir' must be 'cw' or 'ccw', got {tr['dir']!r}")
    return d


def _route(tr: dict, n: int, step: int, t: int, where: str) -> tuple[int, int]:
    if "path" in tr:
        path = _path(tr, n, "node", step, t, where)
        loc = Where(step=step, transfer=t, position=where)
        steps = {(b - a) % n for a, b in zip(path, path[1:])}
        if len(steps) != 1 or steps.pop() not in (1, n - 1):
            raise RouteError("path is not a contiguous one-direction walk around the ring", loc)
        h = len(path) - 1
        if n == 2:  # both ways round are one hop from 0 to 1: only 'dir' says which
            if "dir" not in tr:
                raise ScheduleFormatError(f"{where}: on a 2-node ring a path runs either way round; "
                                          "give 'dir' ('cw' or 'ccw') beside it")
            d = _dir(tr, where)
        else:
            d = 1 if (path[1] - path[0]) % n == 1 else -1
            if "dir" in tr and _dir(tr, where) != d:
                raise ScheduleFormatError(f"{where}: 'dir' is {tr['dir']!r} but 'path' {path} runs "
                                          f"{'cw' if d > 0 else 'ccw'}")
        if "hops" in tr and need(tr, "hops", int, where) != h:
            raise ScheduleFormatError(f"{where}: 'hops' is {tr['hops']} but 'path' {path} has {h} hop{'s' if h != 1 else ''}")
        return d, h
    if "dir" in tr:
        return _dir(tr, where), need(tr, "hops", int, where)
    if "hops" in tr:
        raise ScheduleFormatError(f"{where}: 'hops' needs a 'dir' ('cw' or 'ccw') beside it")
    raise ScheduleFormatError(f"{where}: needs a route ('path', or 'dir' and 'hops')")


class RingReader:
    """Collects the route and channel fields of optical-ring transfers."""

    KEYS = frozenset({"path", "dir", "hops", "fiber", "wavelength", "band"})  # a transfer's route fields

    def __init__(self, system) -> None:
        self.system = system
        self.cols: dict[str, list] = {k: [] for k in RingRoutes.COLUMNS}

    def add(self, tr: dict, step: int, t: int, where: str) -> None:
        if "path" in tr and not getattr(self.system, "ring_paths", True):
            raise ScheduleFormatError(f"{where}: {self.system.topology} transfers give 'dir' and 'hops', not 'path'")
        d, h = _route(tr, self.system.nodes, step, t, where)
        band = optional(tr, "band", 1, where)
        for name, val in (("direction", d), ("hops", h), ("fiber", need(tr, "fiber", int, where)),
                          ("wavelength", need(tr, "wavelength", int, where)), ("band", band)):
            self.cols[name].append(val)

    def finish(self, where_of) -> RingRoutes:
        dtypes = {"direction": np.int8, "hops": INDEX, "fiber": np.int16, "wavelength": np.int32, "band": np.int32}
        return RingRoutes(**{k: int_column(v, dtypes[k], k, where_of) for k, v in self.cols.items()})


def ring_fields(s: Schedule, t: int, with_path: bool) -> dict[str, Any]:
    """Transfer ``t``'s route and channel fields in a schedule file."""
    n = s.system.nodes
    src, d, h = int(s.src[t]), int(s.direction[t]), int(s.hops[t])
    out: dict[str, Any] = {}
    if with_path and getattr(s.system, "ring_paths", True):  # a torus: 'path' would read as one big ring
        out["path"] = [(src + d * k) % n for k in range(h + 1)]
        if n == 2:  # both directions join the same two nodes: say which
            out["dir"] = "cw" if d > 0 else "ccw"
    else:
        out["dir"], out["hops"] = ("cw" if d > 0 else "ccw"), h
    out["fiber"], out["wavelength"] = int(s.fiber[t]), int(s.wavelength[t])
    if s.band[t] != 1:  # written whenever it is not the default, even a band of 0 that the verifier refuses
        out["band"] = int(s.band[t])
    return out


RING_FORMAT = RouteFormat(RingRoutes, RingReader, ring_fields)
"""The route format of optical rings and tori."""

__all__ = ["RING_FORMAT", "RingReader", "ring_fields"]
