"""Faults that must not hang a job: the watchdog, and the faults tests inject.

Every rank runs a :class:`Watchdog` thread beside the schedule.  The rank's main thread
says where it is (:meth:`Watchdog.enter`: the step, and whether it is computing or waiting
in MPI for named peers).  When a rank stays in one place longer than the timeout, its
watchdog prints one line naming the rank and the step and calls ``MPI_Abort`` on the
communicator, which ends every rank of the job:

* a rank stuck *outside* MPI (a hang in its own code) reports itself after ``timeout_s``;
* a rank *waiting* in MPI reports after ``timeout_s`` plus a grace period
  (:data:`GRACE_S`, and :data:`STAGGER_S` more per step number), naming the ranks whose
  data it waits for, so that the stuck rank, if it can still run Python, names itself
  first, and otherwise the rank waiting in the earliest step names the rank it waits for.

A rank that raises is reported by the executor the same way (its rank, step and error),
then aborts.  The abort waits until the launcher has read the line (:func:`wait_until_read`):
MPICH's ``mpiexec`` exits as soon as it handles an ``MPI_Abort``, and its proxy passes the
abort on first when it finds both waiting, so that a line still in the pipe would be lost.

:class:`Fault` is an injected fault for tests: ``COLLSIM_MPI_FAULT`` holds
``raise:RANK:STEP``, ``sleep:RANK:STEP[:SECONDS]`` or ``stop:RANK:STEP`` (the process stops
with ``SIGSTOP``, its watchdog too: the ranks waiting for it report it).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..core.errors import InputError

GRACE_S = 2.0
"""How much longer a rank waiting in MPI waits than a stuck rank before it reports."""

STAGGER_S = 0.2
STAGGER_STEPS = 10
"""Extra wait per step number (:data:`STAGGER_S`, up to :data:`STAGGER_STEPS` steps; one more
outside the steps: barriers, MPI's own collective): a rank waiting in an earlier step reports
first, and the rank it waits for is the nearer to the fault."""

FAULT_ENV = "COLLSIM_MPI_FAULT"

REPORT_WAIT_S = 2.0
"""Longest a rank waits, before ``MPI_Abort``, for the launcher to read its report off the pipe."""


class InjectedFault(RuntimeError):
    """The error an injected ``raise`` fault raises (tests only)."""


@dataclass(frozen=True)
class Fault:
    """A fault to inject: rank ``rank`` raises, sleeps or stops when it starts step ``step``."""

    action: str
    rank: int
    step: int
    seconds: float = 3600.0

    def fire(self, rank: int, step: int) -> None:
        """Inject the fault if this is its rank and step."""
        if rank != self.rank or step != self.step:
            return None
        if self.action == "raise":
            raise InjectedFault(f"injected fault: rank {rank} raises in step {step}")
        if self.action == "stop":
            import signal
            os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(self.seconds)
        return None


def parse_fault(text: str | None) -> Fault | None:
    """Read a fault description (``raise:RANK:STEP``, ``sleep:RANK:STEP[:SECONDS]``, ``stop:RANK:STEP``)."""
    if not text:
        return None
    parts = text.strip().split(":")
    try:
        if parts[0] in ("raise", "sleep", "stop") and len(parts) in (3, 4 if parts[0] == "sleep" else 3):
            return Fault(parts[0], int(parts[1]), int(parts[2]), *(float(p) for p in parts[3:]))
    except ValueError:
        pass
    raise InputError(f"{FAULT_ENV}={text!r} is not raise:RANK:STEP, sleep:RANK:STEP[:SECONDS] "
                     "or stop:RANK:STEP")


def fault_from_env() -> Fault | None:
    """The fault ``COLLSIM_MPI_FAULT`` asks for, if any."""
    return parse_fault(os.environ.get(FAULT_ENV))


def wait_until_read(stream: Any, limit_s: float = REPORT_WAIT_S) -> bool:
    """Wait until the process reading ``stream`` (a pipe) has read everything written to it.

    Hydra's proxy reads a rank's standard error and its PMI socket in one loop, the socket
    first: a report still in the pipe when the rank sends ``MPI_Abort`` is passed on after the
    abort, and ``mpiexec`` has ended by then.  Once the pipe is empty the proxy has read the
    report and passes it on before it reads anything the rank sends next.
    """
    try:
        import array
        import fcntl
        import termios
        fd = stream.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return True
        unread = array.array("i", [0])
        deadline = time.monotonic() + limit_s
        while True:
            fcntl.ioctl(fd, termios.FIONREAD, unread)  # bytes in the pipe, not yet read by the other end
            if unread[0] == 0:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.001)
    except (ImportError, AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return True


class Watchdog:
    """A daemon thread that aborts the job when its rank makes no progress for ``timeout_s``."""

    def __init__(self, comm: Any, timeout_s: float, label: str) -> None:
        self.comm = comm
        self.rank = comm.Get_rank() if comm is not None else 0
        self.timeout_s = float(timeout_s)
        self.label = label
        self.where: tuple = ("start", None, time.monotonic())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def enter(self, step: Any, peers: tuple | None = None) -> None:
        """Record that the rank starts ``step`` (computing if ``peers`` is None, else waiting for them)."""
        self.where = (step, peers, time.monotonic())

    def describe(self, elapsed_s: float) -> str:
        """The one-line report for the current place, after ``elapsed_s`` seconds there."""
        step, peers, _ = self.where
        at = f"step {step}" if isinstance(step, int) else str(step)
        if peers is None:
            return (f"rank {self.rank} hung in {at} of {self.label}: no progress for {elapsed_s:.1f} s outside MPI "
                    f"(timeout {self.timeout_s:g} s); aborting the job")
        who = (f"rank{'s' if len(peers) > 1 else ''} {', '.join(str(p) for p in peers)}" if peers
               else "the other ranks")
        return (f"rank {self.rank} timed out in {at} of {self.label}: waited {elapsed_s:.1f} s for {who} "
                f"(timeout {self.timeout_s:g} s); aborting the job")

    def abort(self, message: str) -> None:
        """Print ``collsim: message`` on standard error and abort every rank of the job.

        The abort waits until the launcher has read the line (:func:`wait_until_read`), so
        that the line is shown before the job ends.
        """
        sys.stderr.write(f"collsim: {message}\n")
        sys.stderr.flush()
        if self.comm is not None:
            wait_until_read(sys.stderr)
            self.comm.Abort(2)

    @staticmethod
    def grace_s(step: object, peers: tuple | None) -> float:
        """Extra time before a rank reports: none outside MPI, more for later steps."""
        if peers is None:
            return 0.0
        return GRACE_S + STAGGER_S * (min(step, STAGGER_STEPS) if isinstance(step, int) else STAGGER_STEPS + 1)

    def _watch(self) -> None:
        tick = min(0.05, self.timeout_s / 10)
        while not self._stop.wait(tick):
            step, peers, since = self.where
            elapsed = time.monotonic() - since
            if elapsed > self.timeout_s + self.grace_s(step, peers):
                self.abort(self.describe(elapsed))
                return

    def __enter__(self) -> "Watchdog":
        self.where = ("start", None, time.monotonic())
        self._thread = threading.Thread(target=self._watch, name="collsim-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


__all__ = ["FAULT_ENV", "Fault", "GRACE_S", "REPORT_WAIT_S", "STAGGER_S", "STAGGER_STEPS", "InjectedFault", "Watchdog",
           "fault_from_env", "parse_fault", "wait_until_read"]
