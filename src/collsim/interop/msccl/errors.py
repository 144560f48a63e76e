"""The MSCCL import's and export's errors (docs/model.md's error table).

They subclass collsim's own categories: a broken rule of the format is malformed
(:class:`~collsim.core.errors.ScheduleFormatError`, exit 2), a race or a deadlock is a
data-flow violation (:class:`~collsim.core.errors.DataFlowError`, exit 1).
"""

from __future__ import annotations

from ...core.errors import DataFlowError, ScheduleFormatError


class MscclFormatError(ScheduleFormatError):
    """An MSCCL algorithm XML breaks a rule of the format or of its executor (exit 2).

    A missing attribute, thread blocks numbered with a gap, a peer that is the gpu
    itself, a dependency on a step that does not exist, a send without its receive
    (:mod:`collsim.interop.msccl.files`; M. Cowan et al., "MSCCLang: Microsoft Collective
    Communication Language", ASPLOS 2023).  The message names the gpu, thread block and step.
    """


class MscclLimitError(MscclFormatError):
    """An MSCCL algorithm exceeds one of its executor's limits (steps per thread block ...; exit 2)."""


class MscclRaceError(DataFlowError):
    """Two steps of an MSCCL algorithm access one buffer location, one writes, and no dependency orders them."""

    kind = "race"


class MscclDeadlockError(DataFlowError):
    """The steps of an MSCCL algorithm wait for each other in a cycle: some never run."""

    kind = "deadlock"
