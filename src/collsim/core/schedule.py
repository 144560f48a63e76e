"""Schedules: ordered steps of transfers, stored column-wise in numpy.

A *transfer* moves a set of chunks from ``src`` to ``dst``; with
``reduce=True`` the destination combines them into its buffers, otherwise it
stores a copy.  How it crosses the system is the schedule's *routes* part,
owned by the kind of system (:class:`collsim.core.route_base.Routes`): on optical rings a
direction, a hop count and a band of wavelengths on one fiber (one lightpath
per wavelength); on networks a list of links.

Algorithms emit a :class:`LogicalSchedule` of *rounds* (what they mean to send
together); routing and wavelength assignment (:mod:`collsim.rwa`) turn it into
a :class:`Schedule` of physical *steps* (time slots), splitting a round into
as many steps as its wavelength assignment needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from .collective import Collective
from .errors import MalformedScheduleError
from .csr import INDEX, canonical_column, permute_csr
from .route_base import ROUTE_COLUMNS, Routes
from .system import System


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


LOGICAL_BYTES_PER_TRANSFER = 33
"""A logical transfer's columns apart from its chunk ids: round, source, destination and chunk
pointer (8 bytes each) and the reduce flag."""

CHUNK_ENTRY_BYTES = 8
"""One chunk id of a transfer's payload."""

ROUTE_BYTES_PER_TRANSFER = 32
"""What a realised transfer adds to its logical one, at least: its step and its route (a ring's
direction, hops, fiber, wavelength and band take 19 bytes; a network's route a pointer and a link)."""


def realised_floor_bytes(transfers: int, deliveries: int) -> int:
    """Bytes that realising a logical schedule of ``transfers`` transfers and ``deliveries`` chunk
    ids holds at least: the logical columns twice (the logical schedule stays held while its
    physical copy is made) and every transfer's step and route.

    A transfer of one chunk costs 114 bytes; :func:`collsim.pipeline.realise_bytes` is the same
    arithmetic on a built logical schedule's own columns, and the registry's ``transfers`` closed
    forms let it be checked before the algorithm builds anything.

    Parameters
    ----------
    transfers : int
        Logical transfers.
    deliveries : int
        Chunk ids they carry in all (at least one a transfer).

    Returns
    -------
    int
        :data:`LOGICAL_BYTES_PER_TRANSFER` twice and :data:`ROUTE_BYTES_PER_TRANSFER` a transfer,
        and :data:`CHUNK_ENTRY_BYTES` twice a chunk id.

    Examples
    --------
    >>> realised_floor_bytes(1, 1)
    114
    """
    return int(transfers) * (2 * LOGICAL_BYTES_PER_TRANSFER + ROUTE_BYTES_PER_TRANSFER) \
        + 2 * CHUNK_ENTRY_BYTES * int(deliveries)


def _malformed(message: str) -> MalformedScheduleError:
    return MalformedScheduleError(f"schedule {message}")


def _malformed_logical(message: str) -> MalformedScheduleError:
    return MalformedScheduleError(f"logical schedule {message}")


@dataclass(frozen=True, eq=False)
class LogicalSchedule:
    """What an algorithm emits: transfers grouped into logical rounds.

    Parameters
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
    band : numpy.ndarray or None
        Wavelengths each transfer occupies at once on optical rings (a band of
        consecutive channels on one fiber); None means one.
    via : numpy.ndarray or None
        Route hint per transfer, read by the system's routing (on an MLFM the other
        column of the spine a same-column transfer crosses); -1 or None: default route.
    routes : Routes or None
        Explicit routes on an electrical network, one row per transfer (several weighted paths
        each allowed), used instead of the network's routing; None: the network routes.  A
        synthesizer that chooses its own paths (``synth-alltoall``) supplies them here.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> b = LogicalBuilder(make_collective("allgather", 3, 8))
    >>> b.add(0, [0, 1, 2], [1, 2, 0], [[0], [1], [2]])
    >>> b.add(1, [0, 1, 2], [1, 2, 0], [[2], [0], [1]])
    >>> ls = b.build()
    >>> ls.rounds, ls.round.tolist(), ls.chunk_idx.tolist()
    (2, [0, 0, 0, 1, 1, 1], [0, 1, 2, 2, 0, 1])
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
    band: np.ndarray | None = None
    via: np.ndarray | None = None
    routes: Routes | None = None

    DTYPES: ClassVar[dict[str, Any]] = {"round": INDEX, "src": INDEX, "dst": INDEX, "chunk_ptr": INDEX,
                                        "chunk_idx": INDEX, "reduce": np.bool_, "direction": np.int8,
                                        "color": INDEX, "band": np.int32, "via": INDEX}
    """Every column's type, as :attr:`Schedule.DTYPES`: an algorithm's (a plug-in's) columns of
    another type are converted, checked, before realisation forms keys from them."""

    def __post_init__(self) -> None:
        for name, dtype in self.DTYPES.items():
            value = getattr(self, name)
            if value is not None and not (isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == 1):
                object.__setattr__(self, name, canonical_column(value, dtype, name, _malformed_logical))

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
    receivers : int or array of bool, optional
        Keep only the transfers into nodes ``0..receivers-1`` (or into the nodes whose entry is
        True): the representatives of a schedule invariant under rotations by multiples of
        ``receivers``, or under a group whose domain the mask is (:mod:`collsim.core.symmetry`),
        built by the same code as the whole schedule.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> b = LogicalBuilder(make_collective("allgather", 2, 8))
    >>> b.add(0, [0, 1], [1, 0], [[0], [1]])
    >>> b.build().rounds
    1
    """

    def __init__(self, collective: Collective, *, receivers: int | np.ndarray | None = None) -> None:
        self.collective = collective
        self.receivers = receivers if receivers is None or isinstance(receivers, (int, np.integer)) \
            else np.asarray(receivers, dtype=bool)
        self._blocks: list[tuple] = []
        self._optional = {"direction": False, "color": False, "band": False, "via": False}

    _FILL = {"direction": (np.int8, 0), "color": (INDEX, -1), "band": (np.int32, 1), "via": (INDEX, -1)}

    def add(self, rnd, src, dst, chunks, *, reduce=False, direction=None, color=None, band=None,
            via=None, chunk_ptr=None) -> None:
        """Add transfers to a round.

        Parameters
        ----------
        rnd : int or array_like
            Round index (scalar or one per transfer).
        src, dst : array_like
            Sender and receiver per transfer.
        chunks : array_like
            2-D ``(T, k)`` chunk ids, or a list of T 1-D arrays; with ``chunk_ptr``, every
            transfer's chunk ids one after the other (1-D).
        reduce : bool or array_like, optional
            Combine at the receiver.
        direction : int or array_like, optional
            +1 (clockwise) or -1 per transfer, on ring systems.
        color : array_like, optional
            Pre-assigned channel class per transfer.
        band : int or array_like, optional
            Wavelengths per transfer on optical rings (default 1).
        via : int or array_like, optional
            Route hint per transfer (-1: the system's default route).
        chunk_ptr : array_like, optional
            ``T + 1`` offsets into ``chunks``: transfer ``t`` carries ``chunks[chunk_ptr[t]:chunk_ptr[t+1]]``
            (CSR, as :class:`LogicalSchedule` holds it; no per-transfer Python work for varying widths).

        Examples
        --------
        >>> from collsim.core.collective import make_collective
        >>> b = LogicalBuilder(make_collective("allgather", 3, 8))
        >>> b.add(0, [0, 1], [1, 2], [0, 1, 0], chunk_ptr=[0, 2, 3])
        >>> b.build().chunk_ptr.tolist()
        [0, 2, 3]
        """
        src = np.asarray(src, dtype=INDEX).reshape(-1)
        t = len(src)
        if t == 0:
            return
        dst = np.asarray(dst, dtype=INDEX).reshape(-1)
        if chunk_ptr is not None:
            ptr, idx = np.asarray(chunk_ptr, dtype=INDEX).reshape(-1), np.asarray(chunks, dtype=INDEX).reshape(-1)
            if len(ptr) != t + 1 or ptr[0] != 0 or ptr[-1] != len(idx) or (np.diff(ptr) < 0).any():
                raise ValueError(f"chunk_ptr must rise from 0 to {len(idx)} in {t + 1} offsets")
        else:
            if isinstance(chunks, np.ndarray) or (len(chunks) and np.ndim(chunks[0]) == 1
                                                   and len({len(c) for c in chunks}) == 1):
                chunks = np.asarray(chunks, dtype=INDEX).reshape(t, -1)
            if isinstance(chunks, np.ndarray):  # uniform width: keep the width, not a pointer array
                ptr, idx = chunks.shape[1], chunks.reshape(-1).astype(INDEX, copy=False)
            else:
                ptr, idx = _csr_from_lists(chunks)
        rnd = np.broadcast_to(np.asarray(rnd, dtype=INDEX), (t,))
        red = np.broadcast_to(np.asarray(reduce, dtype=bool), (t,))
        extra = {}
        for name, value in (("direction", direction), ("color", color), ("band", band), ("via", via)):
            if value is not None:
                self._optional[name] = True
                value = np.broadcast_to(np.asarray(value, dtype=self._FILL[name][0]), (t,))
            extra[name] = value
        if self.receivers is not None:  # a symmetric schedule's representatives: the transfers into the domain
            keep = dst < self.receivers if isinstance(self.receivers, (int, np.integer)) else self.receivers[dst]
            if not keep.all():
                rows = np.flatnonzero(keep)
                if isinstance(ptr, int):
                    idx = idx.reshape(t, ptr)[rows].reshape(-1)
                else:
                    lengths = np.diff(ptr)[rows]
                    idx = idx[np.repeat(ptr[:-1][rows], lengths) + np.arange(int(lengths.sum()))
                              - np.repeat(np.cumsum(lengths) - lengths, lengths)]
                    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(INDEX)
                rnd, src, dst, red = rnd[rows], src[rows], dst[rows], red[rows]
                extra = {k: None if v is None else v[rows] for k, v in extra.items()}
                if not len(rows):
                    return
        self._blocks.append((rnd, src, dst, ptr, idx, red, extra))

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
        sizes = [len(b[1]) for b in self._blocks]
        cols = list(zip(*self._blocks))
        self._blocks = []  # each column's blocks are freed once concatenated: peak ~ one column, not two copies

        def column(i: int) -> np.ndarray:
            if i == 3:  # chunk counts: a width per uniform block, else the block's pointer array
                out = np.concatenate([np.full(size, p, INDEX) if isinstance(p, int) else np.diff(p)
                                      for p, size in zip(cols[3], sizes)])
            else:
                out = np.concatenate(cols[i])
            cols[i] = None
            return out

        rnd, src, dst, lengths, idx, red = (column(i) for i in range(6))
        extra = {}
        for name, used in self._optional.items():
            if used:
                dtype, fill = self._FILL[name]
                extra[name] = np.concatenate([e[name] if e[name] is not None else np.full(size, fill, dtype)
                                              for e, size in zip(cols[6], sizes)])
        if len(rnd) < 2 or (rnd[1:] >= rnd[:-1]).all():  # blocks already in round order
            ptr = np.zeros(len(rnd) + 1, dtype=INDEX)
            np.cumsum(lengths, out=ptr[1:])
            return LogicalSchedule(self.collective, rnd, src, dst, ptr, idx, red, **extra)
        order = np.argsort(rnd, kind="stable")
        ptr, idx = permute_csr(lengths, idx, order)
        return LogicalSchedule(self.collective, rnd[order], src[order], dst[order], ptr, idx, red[order],
                               **{k: v[order] for k, v in extra.items()})




@dataclass(frozen=True, eq=False)
class Schedule:
    """A physical schedule: transfers in time slots, with routes owned by the system's kind.

    Parameters
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
    routes : Routes
        How each transfer crosses the system (a kind's :class:`~collsim.core.route_base.Routes`).  Its
        columns read as attributes of the schedule: ``s.hops``, and on optical rings
        ``s.direction``, ``s.fiber``, ``s.wavelength``, ``s.band``; on networks
        ``s.route_ptr``, ``s.route_links``.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("ring", "paper", "allgather", "1KiB", nodes=4, stripe=8)
    >>> s.num_steps, s.band.tolist()[:3], type(s.routes).__name__
    (3, [8, 8, 8], 'RingRoutes')
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
    routes: Routes
    _cache: dict = field(default_factory=dict, repr=False)

    COMMON: ClassVar[tuple[str, ...]] = ("step", "round", "src", "dst", "reduce")
    DTYPES: ClassVar[dict[str, Any]] = {"step": INDEX, "round": INDEX, "src": INDEX, "dst": INDEX,
                                        "chunk_ptr": INDEX, "chunk_idx": INDEX, "reduce": np.bool_}
    """Every common column's type: columns given in another are converted (checked,
    :func:`~collsim.core.csr.canonical_column`), so that no key formed from them wraps round."""

    def __post_init__(self) -> None:
        for name, dtype in self.DTYPES.items():
            value = getattr(self, name)
            if not (isinstance(value, np.ndarray) and value.dtype == dtype and value.ndim == 1):
                object.__setattr__(self, name, canonical_column(value, dtype, name, _malformed))
        t = len(self.src)
        for name in self.COMMON:
            if len(getattr(self, name)) != t:
                raise MalformedScheduleError(f"schedule column {name!r} has {len(getattr(self, name))} rows, expected {t}")
        if len(self.chunk_ptr) != t + 1 or len(self.routes) != t:
            raise MalformedScheduleError(f"schedule payload or routes do not cover its {t} transfers")

    def __getattr__(self, name: str) -> Any:
        # the routes part's columns read as the schedule's own (s.hops, s.wavelength, s.route_links ...)
        if name.startswith("_") or name in ("routes", "system"):
            raise AttributeError(name)
        try:
            return getattr(self.routes, name)
        except AttributeError:
            raise AttributeError(f"a schedule on {self.system.topology} systems has no {name!r}") from None

    def __len__(self) -> int:
        return len(self.src)

    @property
    def num_steps(self) -> int:
        """Number of physical steps (time slots)."""
        return int(self.step.max()) + 1 if len(self.step) else 0

    @property
    def num_rounds(self) -> int:
        """Number of logical rounds."""
        return int(self.round.max()) + 1 if len(self.round) else 0

    @property
    def size_bytes(self) -> np.ndarray:
        """Bytes carried by each transfer (sum of its chunks' sizes)."""
        if "size" not in self._cache:
            c = self.collective
            pieces = c.bytes_of(np.arange(c.split))
            if (pieces == pieces[0]).all():  # equal chunks: chunk count x chunk size, no per-chunk gather
                sizes = np.diff(self.chunk_ptr) * pieces[0]
            else:
                per_chunk = c.bytes_of(self.chunk_idx)
                sizes = np.zeros(len(self.src), dtype=INDEX)
                nz = np.diff(self.chunk_ptr) > 0
                if per_chunk.size:
                    sizes[nz] = np.add.reduceat(per_chunk, self.chunk_ptr[:-1][nz])
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
        """Number of distinct wavelength indices any band covers (0 without wavelengths).

        The length of the union of the bands ``[lo, lo + band)``
        (:func:`~collsim.kinds.optical_ring.routes.wavelengths_covered`): memory and time grow with
        the transfers, never with the wavelength count (a band of 10^9 wavelengths costs what
        a band of one does).

        Examples
        --------
        >>> import collsim
        >>> collsim.build("striped-ring", "paper", "allgather", "1KiB", nodes=4, wavelengths=10**9
        ...               ).wavelengths_used()
        1000000000
        """
        return self.routes.wavelengths_used()

    def link_loads(self) -> tuple[np.ndarray, np.ndarray]:
        """Flows per (step, link) on networks.

        Returns
        -------
        tuple of numpy.ndarray
            ``(keys, counts)`` with ``key = step * links + link`` for every (step, link)
            used at least once (empty without link routes).  With multipath (ECMP) routes a
            transfer counts the share of its bytes each path carries, so counts are floats.
        """
        keys, counts = [np.zeros(0, INDEX)], [np.zeros(0, INDEX)]
        for k, c in self._link_load_blocks():
            keys.append(k)
            counts.append(c)
        return np.concatenate(keys), np.concatenate(counts)

    def _link_load_blocks(self):
        """:meth:`link_loads` block by block of steps (the routes part's; none without links)."""
        return self.routes.link_load_blocks(self.step_bounds, self.system)

    def max_link_load(self) -> int:
        """The most flows sharing one directed link in one step (0 on rings).

        With multipath (ECMP) routes a transfer counts its share on each of its paths, and
        the largest sum is rounded up: two halves of split transfers on a link count 1.
        """
        if "max_link_load" not in self._cache:
            top = max((float(c.max()) for _, c in self._link_load_blocks() if c.size), default=0.0)
            self._cache["max_link_load"] = int(np.ceil(top - 1e-9))
        return self._cache["max_link_load"]

    def take(self, rows, **changes: Any) -> "Schedule":
        """The schedule made of transfers ``rows`` in that order, with columns replaced.

        Parameters
        ----------
        rows : array_like
            Transfer indices (may drop or repeat transfers).
        **changes
            Columns to replace afterwards (common or routes columns).

        Returns
        -------
        Schedule
            A new schedule (not verified).
        """
        rows = np.asarray(rows, dtype=INDEX)
        ptr, idx = permute_csr(np.diff(self.chunk_ptr), self.chunk_idx, rows)
        cols = {k: getattr(self, k)[rows] for k in self.COMMON}
        out = self.replace(chunk_ptr=ptr, chunk_idx=idx, routes=self.routes.take(rows), **cols)
        return out.replace(**changes) if changes else out

    def replace(self, **changes: Any) -> "Schedule":
        """Copy with some columns replaced (routes columns go to the routes part; caches dropped unless
        only ``params`` or ``algorithm`` change).

        Parameters
        ----------
        **changes
            New values by column name (``src=``, ``wavelength=``, ``route_links=``, ``system=`` ...).

        Returns
        -------
        Schedule
            The copy.
        """
        kw = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "_cache"}
        route_changes = {k: changes.pop(k) for k in list(changes) if k in ROUTE_COLUMNS}
        labels_only = not route_changes and set(changes) <= {"params", "algorithm"}
        kw.update(changes)
        if route_changes:
            kw["routes"] = kw["routes"].replace(**route_changes)
        out = type(self)(**kw)
        if labels_only:   # the same transfers: what was computed from them still holds
            out._cache.update(self._cache)
        return out

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value derived from the transfers, computed by ``compute()`` once per schedule object.

        Schedules are never mutated, so a kind's model may keep what it derives from one (the
        optical step model's times are read by the time, the realised facts and the row).

        Examples
        --------
        >>> from collsim import build
        >>> s = build("ring", "paper", "allgather", 1024, nodes=4)
        >>> s.memo("answer", lambda: 42), s.memo("answer", lambda: 0)
        (42, 42)
        """
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def nbytes(self) -> int:
        """Memory held by the schedule's columns (without caches)."""
        common = sum(getattr(self, k).nbytes for k in self.COMMON)
        return common + self.chunk_ptr.nbytes + self.chunk_idx.nbytes + self.routes.nbytes()


__all__ = ["CHUNK_ENTRY_BYTES", "INDEX", "LOGICAL_BYTES_PER_TRANSFER", "LogicalBuilder", "LogicalSchedule",
           "ROUTE_BYTES_PER_TRANSFER", "Schedule", "permute_csr", "realised_floor_bytes"]
