"""Typed exceptions raised by collsim.

Every verification failure names *where* it happened: the physical step, the
index of the offending transfer inside the schedule, and, where relevant, the
directed link and the channel (fiber, wavelength).  The command line turns
these into one line and an exit code; the library never prints.
"""

from __future__ import annotations

from dataclasses import dataclass


class CollsimError(Exception):
    """Base class of every error collsim raises on purpose."""


class InputError(CollsimError, ValueError):
    """A parameter or a size is nonsense (N < 2, w < 1, negative size, ...)."""


class UnknownNameError(InputError, KeyError):
    """An algorithm, collective, system or strategy name is not registered."""

    def __str__(self) -> str:  # KeyError would add quotes
        return str(self.args[0]) if self.args else ""


class UnsupportedError(CollsimError):
    """An algorithm cannot build this collective on this system (and says why)."""


class ScheduleFormatError(CollsimError):
    """A schedule or system file is unreadable or malformed."""


@dataclass(frozen=True)
class Where:
    """Location of a verification failure.

    Attributes
    ----------
    step : int or None
        Physical step (time slot) index.
    transfer : int or None
        Index of the transfer in the schedule's transfer table.
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
    """

    step: int | None = None
    transfer: int | None = None
    link: str | None = None
    fiber: int | None = None
    wavelength: int | None = None
    node: int | None = None
    chunk: int | None = None

    def describe(self) -> str:
        """Return ``"step 3, transfer 17, link cw 3->4, wavelength 2"``-style text."""
        parts = []
        for name in ("step", "transfer", "node", "chunk", "link", "fiber", "wavelength"):
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
    where : Where
        Step, transfer, link and channel at fault.
    """

    kind = "invalid schedule"

    def __init__(self, message: str, where: Where | None = None) -> None:
        self.where = where or Where()
        self.message = message
        loc = self.where.describe()
        super().__init__(f"{self.kind}: {message}" + (f" ({loc})" if loc else ""))

    @property
    def step(self) -> int | None:
        """Physical step at fault."""
        return self.where.step

    @property
    def transfer(self) -> int | None:
        """Transfer index at fault."""
        return self.where.transfer


class DataFlowError(VerificationError):
    """Data moved that was not there, or the result is wrong."""

    kind = "data-flow violation"


class MissingDataError(DataFlowError):
    """A node sends a chunk it does not hold at the start of the step."""

    kind = "missing data"


class DoubleCountError(DataFlowError):
    """A reduction would combine some contribution twice."""

    kind = "double-counted contribution"


class ConflictingWriteError(DataFlowError):
    """Two copies written to one buffer in one step disagree."""

    kind = "conflicting write"


class PostconditionError(DataFlowError):
    """At the end, some node lacks a chunk (or a contribution) it must have."""

    kind = "postcondition not met"


class ResourceError(VerificationError):
    """A link, channel or transceiver is over-used."""

    kind = "resource violation"


class ChannelConflictError(ResourceError):
    """Two lightpaths share a (fiber, direction, wavelength) on a link in one step."""

    kind = "wavelength conflict"


class ChannelRangeError(ResourceError):
    """A fiber or wavelength index is outside the system's range."""

    kind = "channel out of range"


class RouteError(ResourceError):
    """A route is not a contiguous one-direction path from source to destination."""

    kind = "bad route"


class TransceiverLimitError(ResourceError):
    """A node transmits or receives on more channels than it has."""

    kind = "transceiver limit"
