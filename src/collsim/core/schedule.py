"""Schedules: ordered steps of transfers, stored column-wise in numpy.

A *transfer* moves a set of chunks from ``src`` to ``dst``; with
``reduce=True`` the destination combines them into its buffers, otherwise it
stores a copy.  Its *route* on ring systems is a direction (+1 clockwise,
-1 counter-clockwise) and a hop count; on optical systems it also holds a
channel (fiber, wavelength) on every link of the route: a *lightpath*.

Algorithms emit a :class:`LogicalSchedule` of *rounds* (what they mean to send
together); routing and wavelength assignment (:mod:`collsim.rwa`) turn it into
a :class:`Schedule` of physical *steps* (time slots), splitting a round into
as many steps as its wavelength assignment needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .collective import Collective
from .system import System

INDEX = np.int64


def _csr_from_lists(chunks) -> tuple[np.ndarray, np.ndarray]:
    """Build (ptr, idx) from a 2-D array (T, k) or a list of 1-D arrays."""
    if isinstance(chunks, np.ndarray) and chunks.ndim == 2:
        t, k = chunks.shape
        return np.arange(t + 1, dtype=INDEX) * k, chunks.reshape(-1).astype(INDEX, copy=False)
    lengths = np.fromiter((len(c) for c in chunks), dtype=INDEX, count=len(chunks))
    ptr = np.zeros(len(chunks) + 1, dtype=INDEX)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.concatenate([np.asarray(c, dtype=INDEX) for c in chunks]) if len(chunks) else np.zeros(0, INDEX)
    return ptr, idx


@dataclass(frozen=True, eq=False)
class LogicalSchedule:
    """What an algorithm emits: transfers grouped into logical rounds.

    Attributes
    ----------
    collective : Collective
        The collective it implements (with the algorithm's chunking).
    round, src, dst : numpy.ndarray
        Round index, sender and receiver of every transfer.
    chunk_ptr, chunk_idx : numpy.ndarray
        CSR payload: transfer ``t`` carries ``chunk_idx[chunk_ptr[t]:chunk_ptr[t+1]]``.
    reduce : numpy.ndarray
        Whether the receiver combines (True) or copies (False).
    direction : numpy.ndarray or None
        Route direction chosen by the algorithm (+1/-1); None lets RWA route.
    color : numpy.ndarray or None
        Channel class pre-assigned by the algorithm (an exact construction), or None
        to let a wavelength-assignment strategy choose.
    """

    collective: Collective
    round: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    chunk_ptr: np.ndarray
    chunk_idx: np.ndarray
    reduce: np.ndarray
    direction: np.ndarray | None = None
    color: np.ndarray | None = None

    @property
    def rounds(self) -> int:
        """Number of logical rounds."""
        return int(self.round.max()) + 1 if len(self.round) else 0


class LogicalBuilder:
    """Accumulates rounds of transfers as numpy blocks (no per-transfer Python work).

    Parameters
    ----------
    collective : Collective
        The collective being implemented.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> b = LogicalBuilder(make_collective("allgather", 2, 8))
    >>> b.add(0, [0, 1], [1, 0], [[0], [1]])
    >>> b.build().rounds
    1
    """

    def __init__(self, collective: Collective) -> None:
        self.collective = collective
        self._blocks: list[tuple] = []
        self._any_direction = False
        self._any_color = False

    def add(self, rnd, src, dst, chunks, *, reduce=False, direction=None, color=None) -> None:
        """Add transfers to a round.

        Parameters
        ----------
        rnd : int or array_like
            Round index (scalar or one per transfer).
        src, dst : array_like
            Sender and receiver per transfer.
        chunks : array_like
            2-D ``(T, k)`` chunk ids, or a list of T 1-D arrays.
        reduce : bool or array_like, optional
            Combine at the receiver.
        direction : int or array_like, optional
            +1 (clockwise) or -1 per transfer, on ring systems.
        color : array_like, optional
            Pre-assigned channel class per transfer.
        """
        src = np.asarray(src, dtype=INDEX).reshape(-1)
        t = len(src)
        if t == 0:
            return
        dst = np.asarray(dst, dtype=INDEX).reshape(-1)
        if isinstance(chunks, np.ndarray) or (len(chunks) and np.ndim(chunks[0]) == 1
                                               and len({len(c) for c in chunks}) == 1):
            chunks = np.asarray(chunks, dtype=INDEX).reshape(t, -1)
        ptr, idx = _csr_from_lists(chunks)
        rnd = np.broadcast_to(np.asarray(rnd, dtype=INDEX), (t,))
        red = np.broadcast_to(np.asarray(reduce, dtype=bool), (t,))
        if direction is not None:
            self._any_direction = True
            direction = np.broadcast_to(np.asarray(direction, dtype=np.int8), (t,))
        if color is not None:
            self._any_color = True
            color = np.broadcast_to(np.asarray(color, dtype=INDEX), (t,))
        self._blocks.append((rnd, src, dst, ptr, idx, red, direction, color))

    def build(self) -> LogicalSchedule:
        """Concatenate the blocks, sorted stably by round.

        Returns
        -------
        LogicalSchedule
            The logical schedule.
        """
        if not self._blocks:
            z = np.zeros(0, INDEX)
            return LogicalSchedule(self.collective, z, z, z, np.zeros(1, INDEX), z, np.zeros(0, bool))
        cols = list(zip(*self._blocks))
        rnd = np.concatenate(cols[0])
        src = np.concatenate(cols[1])
        dst = np.concatenate(cols[2])
        lengths = np.concatenate([np.diff(p) for p in cols[3]])
        idx = np.concatenate(cols[4])
        red = np.concatenate(cols[5])
        dirs = np.concatenate([d if d is not None else np.zeros(len(b[1]), np.int8)
                               for d, b in zip(cols[6], self._blocks)]) if self._any_direction else None
        colors = np.concatenate([c if c is not None else np.full(len(b[1]), -1, INDEX)
                                 for c, b in zip(cols[7], self._blocks)]) if self._any_color else None
        if len(rnd) < 2 or (rnd[1:] >= rnd[:-1]).all():  # blocks already in round order
            ptr = np.zeros(len(rnd) + 1, dtype=INDEX)
            np.cumsum(lengths, out=ptr[1:])
            return LogicalSchedule(self.collective, rnd, src, dst, ptr, idx, red, dirs, colors)
        order = np.argsort(rnd, kind="stable")
        ptr, idx = permute_csr(lengths, idx, order)
        return LogicalSchedule(
            self.collective, rnd[order], src[order], dst[order], ptr, idx, red[order],
            None if dirs is None else dirs[order], None if colors is None else colors[order])


def permute_csr(lengths: np.ndarray, idx: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder CSR rows.

    Parameters
    ----------
    lengths : numpy.ndarray
        Row lengths in the current order.
    idx : numpy.ndarray
        Concatenated row contents in the current order.
    order : numpy.ndarray
        New order: row ``i`` of the result is old row ``order[i]``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(ptr, idx)`` in the new order.
    """
    old_ptr = np.zeros(len(lengths) + 1, dtype=INDEX)
    np.cumsum(lengths, out=old_ptr[1:])
    new_len = lengths[order]
    ptr = np.zeros(len(order) + 1, dtype=INDEX)
    np.cumsum(new_len, out=ptr[1:])
    if len(idx) == 0:
        return ptr, idx
    # gather positions: for each new row, old_ptr[order] + offset within row
    starts = np.repeat(old_ptr[:-1][order] - ptr[:-1], new_len)
    return ptr, idx[starts + np.arange(ptr[-1], dtype=INDEX)]


@dataclass(frozen=True, eq=False)
class Schedule:
    """A physical schedule: transfers with steps, routes and channels.

    Attributes
    ----------
    system : System
        The system it runs on.
    collective : Collective
        What it implements.
    algorithm : str
        Registry name of the algorithm that built it (or ``"file"``).
    params : Mapping
        The algorithm's chosen parameters.
    step : numpy.ndarray
        Physical step (time slot) of each transfer, non-decreasing.
    round : numpy.ndarray
        Logical round of each transfer.
    src, dst : numpy.ndarray
        Endpoints.
    chunk_ptr, chunk_idx : numpy.ndarray
        CSR payload.
    reduce : numpy.ndarray
        Combine at the receiver.
    direction : numpy.ndarray
        +1 clockwise, -1 counter-clockwise (ring systems; 0 elsewhere).
    hops : numpy.ndarray
        Number of links on the route.
    fiber, wavelength : numpy.ndarray
        Channel on every link of the route (-1 on electrical systems).
    route_ptr, route_links : numpy.ndarray or None
        CSR routes as link ids on graph (electrical) systems; None on rings, whose
        routes are direction and hop count.
    """

    system: System
    collective: Collective
    algorithm: str
    params: Mapping[str, Any]
    step: np.ndarray
    round: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    chunk_ptr: np.ndarray
    chunk_idx: np.ndarray
    reduce: np.ndarray
    direction: np.ndarray
    hops: np.ndarray
    fiber: np.ndarray
    wavelength: np.ndarray
    route_ptr: np.ndarray | None = None
    route_links: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.src)

    @property
    def num_steps(self) -> int:
        """Number of physical steps."""
        return int(self.step.max()) + 1 if len(self.step) else 0

    @property
    def num_rounds(self) -> int:
        """Number of logical rounds."""
        return int(self.round.max()) + 1 if len(self.round) else 0

    @property
    def size_bytes(self) -> np.ndarray:
        """Bytes carried by each transfer (sum of its chunks' sizes)."""
        if "size" not in self._cache:
            per_chunk = self.collective.chunk_bytes[self.chunk_idx]
            sizes = np.zeros(len(self.src), dtype=INDEX)
            nz = np.diff(self.chunk_ptr) > 0
            if per_chunk.size:
                sums = np.add.reduceat(per_chunk, self.chunk_ptr[:-1][nz])
                sizes[nz] = sums
            self._cache["size"] = sizes
        return self._cache["size"]

    @property
    def step_bounds(self) -> np.ndarray:
        """``b`` such that step ``s`` is transfers ``b[s]:b[s+1]``."""
        if "bounds" not in self._cache:
            self._cache["bounds"] = np.searchsorted(self.step, np.arange(self.num_steps + 1))
        return self._cache["bounds"]

    def chunks_of(self, t: int) -> np.ndarray:
        """Chunk ids carried by transfer ``t``."""
        return self.chunk_idx[self.chunk_ptr[t]:self.chunk_ptr[t + 1]]

    def wavelengths_used(self) -> int:
        """Number of distinct wavelength indices used (0 on electrical systems)."""
        w = self.wavelength[self.wavelength >= 0]
        return int(np.unique(w).size)

    def link_loads(self) -> tuple[np.ndarray, np.ndarray]:
        """Flows per (step, link) on graph systems.

        Returns
        -------
        tuple of numpy.ndarray
            ``(keys, counts)`` with ``key = step * links + link`` for every (step, link)
            used at least once.
        """
        if self.route_links is None:
            return np.zeros(0, INDEX), np.zeros(0, INDEX)
        nlinks = len(self.system.links)
        steps = np.repeat(self.step, np.diff(self.route_ptr))
        return np.unique(steps * nlinks + self.route_links, return_counts=True)

    def max_link_load(self) -> int:
        """The most flows sharing one directed link in one step (0 on rings)."""
        _, counts = self.link_loads()
        return int(counts.max()) if counts.size else 0

    def replace(self, **changes) -> "Schedule":
        """Return a copy with some columns replaced (caches dropped)."""
        kw = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "_cache"}
        kw.update(changes)
        return Schedule(**kw)
