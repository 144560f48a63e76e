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

    Examples
    --------
    >>> issubclass(MscclFormatError, ScheduleFormatError)
    True
    """


class MscclLimitError(MscclFormatError):
    """An MSCCL algorithm exceeds one of its executor's limits (steps per thread block ...; exit 2).

    Examples
    --------
    >>> print(MscclLimitError("gpu 0, tb 1: 65 steps, above the executor's 64 steps per thread block"))
    gpu 0, tb 1: 65 steps, above the executor's 64 steps per thread block
    """


class MscclRaceError(DataFlowError):
    """Two steps of an MSCCL algorithm access one buffer location, one writes, and no dependency orders them.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(MscclRaceError("gpu 1 output offset 0: tb 0 step 2 writes, tb 1 step 0 reads, unordered"))
    race: gpu 1 output offset 0: tb 0 step 2 writes, tb 1 step 0 reads, unordered
    """

    kind = "race"


class MscclDeadlockError(DataFlowError):
    """The steps of an MSCCL algorithm wait for each other in a cycle: some never run.

    Parameters
    ----------
    message, where
        As for :class:`VerificationError`.

    Examples
    --------
    >>> print(MscclDeadlockError("gpu 0, tb 0, step 1 waits in a cycle"))
    deadlock: gpu 0, tb 0, step 1 waits in a cycle
    """

    kind = "deadlock"
