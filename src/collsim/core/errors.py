"""Typed exceptions raised by collsim.

Every verification failure names *where* it happened: the offending transfer as
its schedule file names it, ``steps[i].transfers[j]`` (:mod:`collsim.core.positions`),
or the step, and the node, chunk, directed link and channel (fiber, wavelength).
The command line turns these into one line and an exit code; the library never prints.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from .positions import schedule_position
from .names import close_matches, did_you_mean, unknown_names  # noqa: F401 - their home was here


class CollsimError(Exception):
    """Base class of every error collsim raises on purpose.

    Examples
    --------
    >>> from collsim import build
    >>> try:
    ...     build("ring", "paper", "alltoall", "1KiB", nodes=8)
    ... except CollsimError as exc:
    ...     print(type(exc).__name__)
    UnsupportedError
    """


class InputError(CollsimError, ValueError):
    """A parameter or a size is nonsense (N < 2, w < 1, negative size, ...).

    It is also a ``ValueError``, so callers that expect one keep working.

    Examples
    --------
    >>> from collsim.core.units import parse_size
    >>> try:
    ...     parse_size("-3KB")
    ... except ValueError as exc:
    ...     print(type(exc).__name__, exc)
    InputError invalid size '-3KB': must be a positive whole number of bytes
    """


class UnknownNameError(InputError, KeyError):
    """An algorithm, collective, system or strategy name is not registered.

    It is also a ``KeyError`` (and an :class:`InputError`); its text carries no quotes.

    Examples
    --------
    >>> from collsim.core.collective import canonical_collective
    >>> try:
    ...     canonical_collective("allgahter")
    ... except KeyError as exc:
    ...     print(exc)
    unknown collective 'allgahter'; did you mean allgather or gather? Known: allgather, allreduce, alltoall, ...
    """

    def __str__(self) -> str:  # KeyError would add quotes
        return str(self.args[0]) if self.args else ""


class TraceTooLargeError(InputError):
    """A timeline trace would be too large to write or to open (refused before it is built).

    Parameters
    ----------
    message : str
        What was refused.
    estimate_bytes, limit_bytes : int
        The estimated size of the trace file, and the largest trace collsim writes.

    Examples
    --------
    >>> exc = TraceTooLargeError("the trace would be about 2 GiB", estimate_bytes=2**31, limit_bytes=2**29)
    >>> isinstance(exc, InputError), exc.estimate_bytes > exc.limit_bytes
    (True, True)
    """

    def __init__(self, message: str, *, estimate_bytes: int = 0, limit_bytes: int = 0) -> None:
        super().__init__(message)
        self.estimate_bytes = int(estimate_bytes)
        self.limit_bytes = int(limit_bytes)


class UnsupportedError(CollsimError):
    """An algorithm cannot build this collective on this system (and says why).

    Examples
    --------
    >>> from collsim import build
    >>> build("mlfm", "paper", "allgather", "1KiB", nodes=8)
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnsupportedError: mlfm does not implement allgather (it implements alltoall)
    """


class ScheduleFormatError(CollsimError):
    """A schedule or system file is unreadable or malformed.

    Examples
    --------
    >>> from collsim.core.serialize import loads
    >>> loads("{}")
    Traceback (most recent call last):
    ...
    collsim.core.errors.ScheduleFormatError: not a collsim schedule (expected "format": "collsim-schedule")
    """


class MalformedScheduleError(ScheduleFormatError, ValueError):
    """A schedule's columns disagree with each other (lengths, payload, routes).

    It is also a ``ValueError``, so callers of :class:`~collsim.core.schedule.Schedule`
    that catch ``ValueError`` keep working.

    Examples
    --------
    >>> issubclass(MalformedScheduleError, ScheduleFormatError), issubclass(MalformedScheduleError, ValueError)
    (True, True)
    """


@dataclass(frozen=True)
class Where:
    """Location of a verification failure.

    A transfer is named as its file names it, ``steps[i].transfers[j]``, once ``position`` is
    set (:func:`collsim.core.positions.located`); ``transfer`` stays its row, for programs.

    Parameters
    ----------
    step : int or None
        Physical step (time slot) index.
    transfer : int or None
        Index of the transfer in the schedule's transfer table (its row).
    link : str or None
        Human-readable directed link, e.g. ``"cw 3->4"``.
    fiber : int or None
        Fiber index within the link's direction.
    wavelength : int or None
        Wavelength index.
    node : int or None
        Node concerned (sender, receiver, or node of the postcondition).
    chunk : int or None
        Chunk concerned.
    position : str or None
        The transfer's place in the file, ``"steps[3].transfers[2]"``: described in
        place of the step and the transfer index.

    Examples
    --------
    >>> Where(step=3, transfer=17, position="steps[3].transfers[2]", link="cw 3->4", wavelength=2).describe()
    'steps[3].transfers[2], link cw 3->4, wavelength 2'
    >>> Where(step=3, node=1).describe()
    'step 3, node 1'
    >>> Where(step=3, transfer=17, position="steps[4].transfers[0]").describe()   # a file that split step 2
    'steps[4].transfers[0], step 3'
    >>> Where().describe()
    ''
    """

    step: int | None = None
    transfer: int | None = None
    link: str | None = None
    fiber: int | None = None
    wavelength: int | None = None
    node: int | None = None
    chunk: int | None = None
    position: str | None = None

    def describe(self) -> str:
        """Return ``"steps[3].transfers[2], link cw 3->4, wavelength 2"``-style text."""
        parts, names = [], ("step", "transfer", "node", "chunk")
        if self.position is not None:  # the step too when the file's entry is not numbered as the step
            parts.append(self.position)
            names = ("node", "chunk") if self.position.startswith(f"steps[{self.step}]") else ("step", "node", "chunk")
        for name in names + ("link", "fiber", "wavelength"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name} {value}")
        return ", ".join(parts)


class VerificationError(CollsimError):
    """A schedule violates the collective's semantics or the system's resources.

    Parameters
    ----------
    message : str
        What is wrong.
    where : Where, optional
        Step, transfer, link and channel at fault (default: nowhere in particular).

    Examples
    --------
    >>> err = VerificationError("3 transfers left over", Where(step=2))
    >>> print(err)
    invalid schedule: 3 transfers left over (step 2)
    >>> err.step, err.transfer, err.message
    (2, None, '3 transfers left over')
    """

    kind = "invalid schedule"

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.where = where or Where()
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        loc = self.where.describe()
        return f"{self.kind}: {self.message}" + (f" ({loc})" if loc else "")

    def locate(self, schedule) -> "VerificationError":
        """Name the transfer at fault as the schedule's file does (``steps[i].transfers[j]``).

        Parameters
        ----------
        schedule : Schedule
            The schedule the error is about.

        Returns
        -------
        VerificationError
            ``self``, renamed (unchanged without a transfer).

        Examples
        --------
        >>> import collsim
        >>> s = collsim.build("ring", "paper", "allgather", 1000, nodes=4)
        >>> print(RouteError("path leaves the ring", Where(step=1, transfer=5)).locate(s))
        bad route: path leaves the ring (steps[1].transfers[1])
        """
        if self.where.transfer is not None:  # the schedule knows the file's entries: its name wins
            self.where = replace(self.where, position=schedule_position(schedule, self.where.transfer))
            self.args = (self._text(),)
        return self

    @property
    def step(self) -> int | None:
        """Physical step at fault."""
        return self.where.step

    @property
    def transfer(self) -> int | None:
        """Transfer index at fault."""
        return self.where.transfer


class DataFlowError(VerificationError):
    """Data moved that was not there, or the result is wrong.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> issubclass(DataFlowError, VerificationError), issubclass(DataFlowError, ResourceError)
    (True, False)
    """

    kind = "data-flow violation"


class MissingDataError(DataFlowError):
    """A node sends a chunk it does not hold at the start of the step.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(MissingDataError("node 1 sends chunk 0 it does not hold", Where(step=0, node=1, chunk=0)))
    missing data: node 1 sends chunk 0 it does not hold (step 0, node 1, chunk 0)
    """

    kind = "missing data"


class DoubleCountError(DataFlowError):
    """A reduction would combine some contribution twice.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> try:
    ...     raise DoubleCountError("contribution of node 2 to chunk 0 added twice", Where(node=4, chunk=0))
    ... except DataFlowError as exc:
    ...     print(exc.kind, "|", exc.where.describe())
    double-counted contribution | node 4, chunk 0
    """

    kind = "double-counted contribution"


class UnexpectedReductionError(DataFlowError):
    """A transfer reduces (``"reduce": true``) in a collective without reduction (all-gather, broadcast, ...).

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(UnexpectedReductionError("the transfer reduces, but allgather has no reduction",
    ...                                Where(step=1, transfer=3, position="steps[1].transfers[0]")))
    unexpected reduction: the transfer reduces, but allgather has no reduction (steps[1].transfers[0])
    """

    kind = "unexpected reduction"


class ConflictingWriteError(DataFlowError):
    """Two copies written to one buffer in one step disagree.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(ConflictingWriteError("two different partials of chunk 1", Where(step=5, node=3, chunk=1)))
    conflicting write: two different partials of chunk 1 (step 5, node 3, chunk 1)
    """

    kind = "conflicting write"


class PostconditionError(DataFlowError):
    """At the end, some node lacks a chunk (or a contribution) it must have.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> err = PostconditionError("node 6 lacks chunk 2", Where(node=6, chunk=2))
    >>> isinstance(err, DataFlowError), err.step
    (True, None)
    """

    kind = "postcondition not met"


class ResourceError(VerificationError):
    """A link, channel or transceiver is over-used.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> issubclass(ResourceError, VerificationError), issubclass(ResourceError, DataFlowError)
    (True, False)
    """

    kind = "resource violation"


class ChannelConflictError(ResourceError):
    """Two lightpaths share a (fiber, direction, wavelength) on a link in one step.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> err = ChannelConflictError("wavelength 2 used twice", Where(step=3, link="cw 3->4", wavelength=2))
    >>> print(err)
    wavelength conflict: wavelength 2 used twice (step 3, link cw 3->4, wavelength 2)
    >>> err.step
    3
    """

    kind = "wavelength conflict"


class ChannelRangeError(ResourceError):
    """A fiber or wavelength index is outside the system's range.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(ChannelRangeError("wavelength 64 >= 64", Where(transfer=9, wavelength=64)))
    channel out of range: wavelength 64 >= 64 (transfer 9, wavelength 64)
    """

    kind = "channel out of range"


class RouteError(ResourceError):
    """A route is not a contiguous one-direction path from source to destination.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> try:
    ...     raise RouteError("route of 0->2 ends at 3", Where(transfer=0))
    ... except ResourceError as exc:
    ...     print(exc.kind, exc.transfer)
    bad route 0
    """

    kind = "bad route"


class TransceiverLimitError(ResourceError):
    """A node transmits or receives on more channels than it has.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(TransceiverLimitError("node 0 transmits on 3 channels, has 2", Where(step=1, node=0)))
    transceiver limit: node 0 transmits on 3 channels, has 2 (step 1, node 0)
    """

    kind = "transceiver limit"


def located(check):
    """Decorate a check of a schedule so its violations name transfers as the file does.

    Parameters
    ----------
    check : callable
        ``check(schedule, ...)``, raising :class:`~collsim.core.errors.VerificationError` with a global transfer index.

    Returns
    -------
    callable
        The same check; a violation it raises is :meth:`~collsim.core.errors.VerificationError.locate`'d first.

    Examples
    --------
    >>> import collsim
    >>> from collsim.core.errors import RouteError, Where
    >>> @located
    ... def no_transfer_5(s):
    ...     raise RouteError("bad", Where(step=int(s.step[5]), transfer=5))
    >>> no_transfer_5(collsim.build("ring", "paper", "allgather", 1000, nodes=4))
    Traceback (most recent call last):
    ...
    collsim.core.errors.RouteError: bad route: bad (steps[1].transfers[1])
    """
    @functools.wraps(check)
    def run(schedule, *args, **kwargs):
        try:
            return check(schedule, *args, **kwargs)
        except VerificationError as exc:
            raise exc.locate(schedule)
    return run
