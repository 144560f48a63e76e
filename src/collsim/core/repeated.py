"""Schedules whose steps repeat: a data-flow group the system lacks, and one whole step per class.

Ring all-reduce on 65,536 GPUs (8,192 boxes of 8 on a fat tree) is 8.6 x 10^9 transfers.  Its data
flow is invariant under all 65,536 rotations of the ring (in round ``r`` node ``i`` sends chunk
``i - r`` to ``i + 1``), but the fat tree is not: only the rotations by a pod map it onto itself,
and under those 32 the representatives are still 2.7 x 10^8 transfers.  Yet every step moves the
same pairs ``i -> i + 1`` with the same bytes; the steps differ only in their chunks.

A :class:`RepeatedSteps` keeps both facts:

* ``flow``: a :class:`~collsim.core.symmetry.SymmetricSchedule` under the group of the data flow
  (the ring's rotations), its representatives routed on the system.  Its data flow is checked on
  the group's domain (:mod:`collsim.verify.orbits`), which reads nodes and chunks, never links.
* ``steps``: :class:`WeightedSteps`, one *whole* step of every *class*, every transfer routed by the
  system's rule, each weighted by the number of the schedule's steps in its class.  Two steps are
  in one class when their representatives are equal as multisets of (source, destination, bytes,
  reduce, chunk count): then the steps' expansions are equal apart from their chunk ids, so they
  take the same routes (a network routes a transfer by its ends), use the same resources and, in
  bulk-synchronous steps, the same time.  The kind checks the classes' steps and times them once
  each.

The argument is in ``docs/model.md``, "Steps that repeat".  Only kinds whose steps are timed
alone (:meth:`collsim.kinds.base.KindModel.times_steps_alone`: a network's bulk-synchronous
flow simulation, where a step starts when the last ends) take such schedules; an optical ring's
step model charges reconfiguration between consecutive steps.

References
----------
W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., Cambridge University Press, 1911
(orbits of a group acting on a set); L. G. Valiant, "A bridging model for parallel computation",
Communications of the ACM 33(8), 1990 (bulk-synchronous supersteps, each costed alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .collective import Collective
from .errors import InputError, MalformedScheduleError
from .schedule import LogicalSchedule, Schedule
from .symmetry import EXPANDED_BYTES_PER_TRANSFER, SymmetricSchedule
from .system import System


@dataclass(frozen=True, eq=False)
class WeightedSteps(Schedule):
    """A schedule of whole steps, each standing for ``step_weight`` steps alike.

    What a kind times for a :class:`RepeatedSteps`: its time is every step's time times its
    weight, summed (:func:`step_weights`); the rest of a schedule's columns read as usual.

    Parameters
    ----------
    step_weight : numpy.ndarray
        Steps of the schedule each step stands for (``num_steps`` positive integers).
    transfer_bytes : numpy.ndarray, optional
        Every transfer's bytes, where a transfer keeps only some of its chunk ids (what is routed,
        checked and timed reads no chunk id): :attr:`size_bytes` then reads this column.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("ring", "star", "allgather", 1024, nodes=4)
    >>> w = WeightedSteps(**{k: getattr(s, k) for k in ("system", "collective", "algorithm", "params",
    ...     "step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce", "routes")},
    ...     step_weight=np.array([1, 2, 3]))
    >>> step_weights(w).tolist(), step_weights(s)
    ([1, 2, 3], None)
    """

    step_weight: np.ndarray | None = None
    transfer_bytes: np.ndarray | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        w = np.asarray(self.step_weight if self.step_weight is not None else [], dtype=np.int64)
        if len(w) != self.num_steps or (w < 1).any():
            raise MalformedScheduleError(f"weighted steps need one positive weight per step: {len(w)} weights "
                                         f"for {self.num_steps} steps")
        object.__setattr__(self, "step_weight", w)
        if self.transfer_bytes is not None and len(self.transfer_bytes) != len(self):
            raise MalformedScheduleError(f"{len(self.transfer_bytes)} transfer sizes for {len(self)} transfers")

    @property
    def size_bytes(self) -> np.ndarray:
        """Bytes of every transfer: :attr:`transfer_bytes` where given, else from its chunks."""
        return Schedule.size_bytes.fget(self) if self.transfer_bytes is None else self.transfer_bytes


def step_weights(schedule) -> np.ndarray | None:
    """How many steps each of ``schedule``'s steps stands for, or None (each stands for itself).

    Examples
    --------
    >>> import collsim
    >>> step_weights(collsim.build("ring", "star", "allgather", 1024, nodes=4)) is None
    True
    """
    return schedule.step_weight if isinstance(schedule, WeightedSteps) else None


def weighted_sum(per_step: np.ndarray, schedule) -> float:
    """``per_step`` (one value a step of ``schedule``) summed, each times its step's weight.

    Examples
    --------
    >>> import collsim
    >>> weighted_sum(np.array([1.0, 2.0]), collsim.build("ring", "star", "allgather", 1024, nodes=3))
    3.0
    """
    w = step_weights(schedule)
    return float(per_step.sum()) if w is None else float(per_step @ w)


def step_classes(reps: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Classes of steps whose transfers are alike apart from their chunk ids.

    Two steps are in one class when their transfers are equal as multisets of (source,
    destination, bytes, reduce, chunk count).  Classes are numbered in the order their first step
    comes; a step without transfers is in none (-1).

    Parameters
    ----------
    reps : Schedule
        A schedule (the representatives of a symmetric one).

    Returns
    -------
    tuple of numpy.ndarray
        ``(step_class, first)``: every step's class (int32) and every class's first step.

    Examples
    --------
    >>> import collsim
    >>> cls, first = step_classes(collsim.build("ring", "star", "allreduce", 1024, nodes=4))
    >>> cls.tolist(), first.tolist()
    ([0, 0, 0, 1, 1, 1], [0, 3])
    """
    steps = reps.num_steps
    if steps == 0:
        return np.zeros(0, np.int32), np.zeros(0, np.int64)
    key = np.stack([reps.src.astype(np.int64), reps.dst.astype(np.int64), reps.size_bytes.astype(np.int64),
                    reps.reduce.astype(np.int64), np.diff(reps.chunk_ptr).astype(np.int64)])
    order = np.lexsort(key[::-1].tolist() + [reps.step.astype(np.int64)])   # by step, then the fields
    rows = key[:, order].T
    bounds = reps.step_bounds
    per = np.diff(bounds)
    if per[0] > 0 and (per == per[0]).all():   # as many transfers in every step: one row of fields a step
        table = rows.reshape(steps, -1)
        _, first, inverse = np.unique(table, axis=0, return_index=True, return_inverse=True)
    else:   # steps of different sizes (or empty ones): one key a step
        seen: dict[bytes, int] = {}
        inverse = np.array([seen.setdefault(rows[bounds[k]:bounds[k + 1]].tobytes(), len(seen)) if per[k] else -1
                            for k in range(steps)], dtype=np.int64)
        first = np.unique(inverse[inverse >= 0], return_index=True)[1]
        first = np.flatnonzero(inverse >= 0)[first]
    inverse = np.asarray(inverse).reshape(-1)
    by_first = np.argsort(first, kind="stable")              # classes in the order they first come
    rank = np.full(len(first) + 1, -1, np.int64)             # the last entry: empty steps stay -1
    rank[by_first] = np.arange(len(first))
    return rank[inverse].astype(np.int32), np.asarray(first, np.int64)[by_first]


def _moved_rows(sym: SymmetricSchedule, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(round, representative row, element)`` of every transfer of the steps' expansion, in order:
    round ``j`` is step ``steps[j]``, element-major within it."""
    s, g = sym.reps, sym.group
    bounds = s.step_bounds
    rows = np.concatenate([np.arange(bounds[k], bounds[k + 1]) for k in steps]) if len(steps) else np.zeros(0, np.int64)
    rnd = np.repeat(np.arange(len(steps), dtype=np.int64), np.diff(bounds)[steps])
    elements = g.elements()
    n = len(elements)
    # within a round, element-major: every representative moved by element 0, then by element 1 ...
    order = np.lexsort((np.tile(np.arange(len(rows)), n), np.repeat(np.arange(n), len(rows)),
                        np.tile(rnd, n)))
    return np.tile(rnd, n)[order], np.tile(rows, n)[order], np.repeat(elements, len(rows))[order]


def expand_steps(sym: SymmetricSchedule, steps, *, whole_chunks: bool = True) -> LogicalSchedule:
    """The whole of some steps of a symmetric schedule, as a logical schedule without routes.

    Step ``steps[j]``'s representatives, each moved by every element of the group, are round
    ``j``: the transfers of that step, which the system's rule then routes.

    Parameters
    ----------
    sym : SymmetricSchedule
        The representatives and their group.
    steps : array_like of int
        Steps of ``sym`` to expand.
    whole_chunks : bool, optional
        Every transfer with all its chunks (default); False: with its first chunk alone (what
        :class:`RepeatedSteps` routes, checks and times reads no chunk id, and a transfer of a
        lane schedule may carry hundreds).

    Returns
    -------
    LogicalSchedule
        ``len(steps)`` rounds, element-major within each (as :meth:`SymmetricSchedule.expand`).

    Examples
    --------
    >>> from collsim import build_symmetric
    >>> s = build_symmetric("ring", "paper", "allgather", 1024, nodes=8)
    >>> ls = expand_steps(s, [2])
    >>> ls.src.tolist(), ls.chunk_idx.tolist()
    ([7, 0, 1, 2, 3, 4, 5, 6], [5, 6, 7, 0, 1, 2, 3, 4])
    """
    s, g = sym.reps, sym.group
    rnd, out_rows, elem = _moved_rows(sym, np.asarray(steps, dtype=np.int64))
    lengths = np.diff(s.chunk_ptr)[out_rows]
    if not whole_chunks:
        lengths = np.minimum(lengths, 1)
    ptr = np.zeros(len(out_rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    first = np.repeat(s.chunk_ptr[:-1][out_rows], lengths)
    within = np.arange(int(ptr[-1]), dtype=np.int64) - np.repeat(ptr[:-1], lengths)
    idx = sym.act_chunks(np.repeat(elem, lengths), s.chunk_idx[first + within])
    return LogicalSchedule(s.collective, rnd, g.act(elem, s.src[out_rows]), g.act(elem, s.dst[out_rows]), ptr,
                           idx.astype(np.int64), s.reduce[out_rows].copy())


@dataclass(frozen=True, eq=False)
class RepeatedSteps:
    """A symmetric data flow on a system without its group, whose steps fall into a few classes.

    Parameters
    ----------
    flow : SymmetricSchedule
        The representatives under the data flow's group (the system need not map onto itself
        under it), routed on the system.
    steps : WeightedSteps
        Step ``c`` is the whole first step of class ``c``, routed by the system's rule, weighted
        by the number of steps of the class.
    step_class : numpy.ndarray
        Every step's class (:func:`step_classes` of ``flow.reps``; -1: a step without transfers, which
        takes no time).

    Raises
    ------
    InputError
        If the classes do not match the representatives' steps or the weighted steps.

    Examples
    --------
    >>> from collsim import build_repeated, verify
    >>> s = build_repeated("ring", "star", "allreduce", "1MiB", nodes=8)
    >>> len(s.flow.reps), s.steps.step_weight.tolist(), s.transfers, verify(s).transfers
    (14, [7, 7], 112, 112)
    """

    flow: SymmetricSchedule
    steps: WeightedSteps
    step_class: np.ndarray

    def __post_init__(self) -> None:
        cls = np.asarray(self.step_class)
        if len(cls) != self.flow.num_steps:
            raise InputError(f"{len(cls)} step classes for {self.flow.num_steps} steps")
        counts = np.bincount(cls[cls >= 0], minlength=self.steps.num_steps)
        if len(counts) != self.steps.num_steps or not np.array_equal(counts, self.steps.step_weight):
            raise InputError("the weighted steps' weights are not the classes' step counts")
        if self.steps.system is not self.flow.system:
            raise InputError("the weighted steps and the representatives are on different systems")

    @classmethod
    def of(cls, flow: SymmetricSchedule, realise: Callable[[System, LogicalSchedule], Schedule],
           classes: tuple[np.ndarray, np.ndarray] | None = None) -> "RepeatedSteps":
        """Classify ``flow``'s steps and route one whole step of each with ``realise``.

        Parameters
        ----------
        flow : SymmetricSchedule
            Representatives (routed) and the data flow's group.
        realise : callable
            ``realise(system, logical) -> Schedule``: the system's routing, round ``r`` to step ``r``.
        classes : tuple of numpy.ndarray, optional
            ``flow.reps``'s :func:`step_classes`, when already computed.

        Returns
        -------
        RepeatedSteps
        """
        step_class, first = step_classes(flow.reps) if classes is None else classes
        whole = realise(flow.system, expand_steps(flow, first, whole_chunks=False))   # one chunk id a transfer
        if whole.num_steps != len(first) or not np.array_equal(whole.step, whole.round):
            raise InputError("the system's routing did not keep one step a round")
        weights = np.bincount(step_class[step_class >= 0], minlength=len(first))
        sizes = np.asarray(flow.reps.size_bytes)[_moved_rows(flow, first)[1]]   # realised in the same order
        steps = WeightedSteps(whole.system, whole.collective, flow.algorithm, dict(flow.params), whole.step,
                              whole.round, whole.src, whole.dst, whole.chunk_ptr, whole.chunk_idx, whole.reduce,
                              whole.routes, step_weight=weights, transfer_bytes=sizes)
        return cls(flow, steps, step_class)

    # -- what the pipeline and the reports read (as a SymmetricSchedule's) -----------------------
    @property
    def system(self) -> System:
        """The system."""
        return self.flow.system

    @property
    def collective(self) -> Collective:
        """The collective."""
        return self.flow.collective

    @property
    def algorithm(self) -> str:
        """The algorithm that built it."""
        return self.flow.algorithm

    @property
    def params(self) -> Mapping[str, Any]:
        """The algorithm's parameters."""
        return self.flow.params

    @property
    def transfers(self) -> int:
        """Transfers of the whole schedule."""
        return self.flow.transfers

    @property
    def num_steps(self) -> int:
        """Physical steps of the whole schedule."""
        return self.flow.num_steps

    @property
    def num_rounds(self) -> int:
        """Logical rounds."""
        return self.flow.num_rounds

    @property
    def classes(self) -> int:
        """Classes of steps alike."""
        return self.steps.num_steps

    def nbytes(self) -> int:
        """Memory held: the representatives' and the classes' columns."""
        return self.flow.nbytes() + self.steps.nbytes() + self.step_class.nbytes

    def expand(self, realise: Callable[[System, LogicalSchedule], Schedule] | None = None) -> Schedule:
        """The ordinary schedule: every step expanded and routed by ``realise`` (default: the system's
        kind, as the whole steps were), refused before it starts where it would not fit.

        Examples
        --------
        >>> from collsim import build_repeated
        >>> len(build_repeated("ring", "star", "allgather", 1024, nodes=4).expand())
        12
        """
        from .limits import check_memory
        from .plugins import model_for
        check_memory(EXPANDED_BYTES_PER_TRANSFER * self.transfers + 24 * len(self.flow.reps.chunk_idx) * self.flow.group.order,
                     f"expanding {self.algorithm}'s {self.collective.name} on {self.system.nodes} nodes "
                     f"({self.transfers} transfers)", "verify and time it as repeated steps (compare, run), or use fewer nodes")
        if realise is None:
            model = model_for(self.system)
            realise = lambda system, logical: model.realize(system, logical, algorithm=self.algorithm,  # noqa: E731
                                                            params=dict(self.params))
        return realise(self.system, expand_steps(self.flow, np.arange(self.num_steps)))


__all__ = ["RepeatedSteps", "WeightedSteps", "expand_steps", "step_classes", "step_weights", "weighted_sum"]
