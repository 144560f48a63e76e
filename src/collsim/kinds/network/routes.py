"""How a transfer crosses an electrical network: a CSR list of directed link ids per path, one path
per transfer or, with ECMP, several paths per transfer each carrying a share of its bytes.
:class:`LinkRoutes` follows the route protocol of :class:`collsim.core.route_base.Routes`; its
schedule-file form is :mod:`.format`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from ...core.csr import INDEX, permute_csr, ptr_ok, row_blocks
from ...core.route_base import Routes


@dataclass(frozen=True, eq=False)
class LinkRoutes(Routes):
    """Routes of transfers on an electrical network: directed link ids in order, one or more paths each.

    Notes
    -----
    A multipath transfer is one transfer of the schedule (one row, one ``hops`` value: its
    longest path); what crosses a link is the share of its bytes on each path that crosses
    it.  Code that reads routes per transfer uses :attr:`path_owner` and :attr:`weights`
    (``arange`` and ones for single-path routes), so one code path serves both.
    """

    route_ptr: np.ndarray
    route_links: np.ndarray
    path_ptr: np.ndarray | None = None
    path_weight: np.ndarray | None = None

    COLUMNS: ClassVar[tuple[str, ...]] = ("route_ptr", "route_links")
    PATH_COLUMNS: ClassVar[tuple[str, ...]] = ("path_ptr", "path_weight")
    DTYPES: ClassVar[dict[str, Any]] = {"route_ptr": INDEX, "route_links": INDEX, "path_ptr": INDEX,
                                        "path_weight": np.float64}

    @property
    def multipath(self) -> bool:
        """Whether some transfers may be split over several paths (``path_ptr`` is set)."""
        return self.path_ptr is not None

    def columns(self) -> tuple[str, ...]:
        """Names of the columns this instance holds (the path columns only when multipath)."""
        return self.COLUMNS + (self.PATH_COLUMNS if self.multipath else ())

    def __len__(self) -> int:
        return len(self.path_ptr) - 1 if self.multipath else len(self.route_ptr) - 1

    @property
    def paths(self) -> int:
        """Number of paths (the transfers, for single-path routes)."""
        return len(self.route_ptr) - 1

    @cached_property
    def path_hops(self) -> np.ndarray:
        """Links on each path."""
        return np.diff(self.route_ptr)

    @cached_property
    def path_owner(self) -> np.ndarray:
        """Transfer of each path."""
        if not self.multipath:
            return np.arange(self.paths, dtype=INDEX)
        return np.repeat(np.arange(len(self), dtype=INDEX), np.diff(self.path_ptr))

    @cached_property
    def weights(self) -> np.ndarray:
        """Share of its transfer's bytes on each path (ones for single-path routes)."""
        return np.ones(self.paths) if self.path_weight is None else np.asarray(self.path_weight, np.float64)

    @cached_property
    def hops(self) -> np.ndarray:
        """Links on each transfer's route (its longest path; computed once)."""
        if not self.multipath:
            return self.path_hops
        out = np.zeros(len(self), INDEX)
        nz = np.diff(self.path_ptr) > 0
        if self.paths:
            out[nz] = np.maximum.reduceat(self.path_hops, self.path_ptr[:-1][nz])
        return out

    def path_bounds(self, transfer_bounds: np.ndarray) -> np.ndarray:
        """Path index of transfer boundaries (identity for single-path routes)."""
        return np.asarray(transfer_bounds) if not self.multipath else self.path_ptr[transfer_bounds]

    def channels(self) -> np.ndarray:
        """One flow per transfer."""
        return np.ones(len(self), np.int32)

    def take(self, rows: np.ndarray) -> "LinkRoutes":
        """Rows ``rows`` in that order."""
        if not self.multipath:
            return LinkRoutes(*permute_csr(self.hops, self.route_links, rows))
        pptr, pidx = permute_csr(np.diff(self.path_ptr), np.arange(self.paths, dtype=INDEX), rows)
        ptr, links = permute_csr(self.path_hops, self.route_links, pidx)
        return LinkRoutes(ptr, links, pptr, self.weights[pidx])

    def replace(self, **changes: Any) -> "LinkRoutes":
        """Copy with some columns replaced."""
        return replace(self, **changes)

    def check_shape(self, transfers: int) -> tuple[str, int | None] | None:
        """What is wrong with the CSR columns for ``transfers`` rows, or None (see :meth:`Routes.check_shape`)."""
        paths = len(self.route_ptr) - 1 if self.multipath else transfers  # ECMP: route_ptr runs over paths
        for name in self.columns():
            rows = len(getattr(self, name))
            want = {"route_ptr": paths + 1, "route_links": None, "path_ptr": transfers + 1,
                    "path_weight": paths}.get(name, transfers)
            if want is not None and rows != want:
                return f"routes column {name!r} has {rows} rows, expected {want}", None
        if not ptr_ok(self.route_ptr, len(self.route_links)):
            return "route_ptr must start at 0, never decrease and end at the length of route_links", None
        if not self.multipath:
            return None
        if not ptr_ok(self.path_ptr, paths) or (np.diff(self.path_ptr) < 1).any():
            return "path_ptr must start at 0, give every transfer at least one path and end at the number of paths", None
        w = np.asarray(self.path_weight, dtype=np.float64)
        share = np.add.reduceat(w, self.path_ptr[:-1]) if transfers else w[:0]
        bad = np.flatnonzero(~np.isfinite(share) | (np.abs(share - 1.0) > 1e-9))
        if not (np.isfinite(w).all() and (w > 0).all()) or bad.size:
            t = int(bad[0]) if bad.size else int(np.searchsorted(self.path_ptr, np.flatnonzero(~(w > 0))[0],
                                                                 side="right") - 1)
            return "the shares of its paths must be positive and sum to 1", t
        return None

    def link_load_blocks(self, step_bounds: np.ndarray, system: Any):
        """``(keys, counts)`` of flows per (step, link) of ``system`` (``key = step * links + link``), block by block.

        Bounded temporaries, whatever the schedule's size; with multipath routes a transfer counts
        the share of its bytes each path carries, so counts are floats.
        """
        nlinks = len(system.links)
        for a, _, _, local, w, dense in self._step_link_blocks(step_bounds, nlinks, self.weights if self.multipath
                                                               else None):
            if dense:
                cnt = np.bincount(local, weights=w, minlength=dense)
                k = np.flatnonzero(cnt)
                c = cnt[k]
            else:  # few entries over very many links: sort instead of counting
                order = np.argsort(local, kind="stable")
                local = local[order]
                starts = np.flatnonzero(np.concatenate(([True], local[1:] != local[:-1])))
                k = local[starts]
                c = np.diff(np.append(starts, local.size)) if w is None else np.add.reduceat(w[order], starts)
            yield k + a * nlinks, (c.astype(INDEX) if w is None else c)

    def entry_link_loads(self, step_bounds: np.ndarray, system: Any, amount: np.ndarray):
        """What every route entry's link carries in the entry's step, summed over the step's paths, block by block."""
        nlinks = len(system.links)
        for _, first, end, local, w, dense in self._step_link_blocks(step_bounds, nlinks, amount):
            if dense:
                yield first, end, np.bincount(local, weights=w, minlength=dense)[local]
                continue
            order = np.argsort(local, kind="stable")
            ordered = local[order]
            starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
            sums = np.add.reduceat(w[order], starts) if w.size else w
            out = np.empty(local.size)
            out[order] = np.repeat(sums, np.diff(np.append(starts, local.size)))
            yield first, end, out

    def _step_link_blocks(self, step_bounds: np.ndarray, nlinks: int, weights: np.ndarray | None):
        """Blocks of whole steps: ``(first step, first path, end path, local key, weight per entry, dense)``.

        ``local = step offset * nlinks + link`` per route entry; ``dense`` is the size of a counter over
        every (step, link) of the block when that fits (else 0: sort instead).
        """
        links = self.route_links
        pb = self.path_bounds(step_bounds)  # first path of every step
        ent = self.route_ptr[pb]  # first link entry of every step
        per_block = max(1, (1 << 18) // max(nlinks, 1))  # steps whose (step, link) counters fit 2 MiB
        for lo, hi in row_blocks(ent, 1 << 18):
            for a in range(lo, hi, per_block):
                b = min(hi, a + per_block)
                seg = links[ent[a]:ent[b]]
                local = np.repeat(np.arange(b - a, dtype=INDEX) * nlinks, np.diff(ent[a:b + 1])) + seg
                w = None if weights is None else np.repeat(weights[pb[a]:pb[b]], self.path_hops[pb[a]:pb[b]])
                dense = (b - a) * nlinks if (b - a) * nlinks <= 4 * max(seg.size, 1 << 16) else 0
                yield a, int(pb[a]), int(pb[b]), local, w, dense

    def nbytes(self) -> int:
        """Memory held by the columns."""
        return sum(getattr(self, c).nbytes for c in self.columns())
