"""Progress of long work: a bar with an ETA on a terminal, a line at least every 30 s elsewhere.

On a terminal (stderr, not ``TERM=dumb``) the bar appears only once the work has taken
``delay`` seconds (2 by default; ``COLLSIM_PROGRESS_DELAY`` overrides it) and disappears when
the work ends.  When stderr is not a terminal (a file, a pipe, a batch job's log) there is no
bar and no terminal control code; instead, work that runs for a while says so in plain lines,
one at least every ``interval`` seconds (:data:`INTERVAL_S`, 30; ``COLLSIM_PROGRESS_INTERVAL``
overrides it, 0 for a line at every step): what runs and how far it is (``tuning 4MiB: 120 of
900, 0:00:30 elapsed, ETA 0:01:40``).  Work shorter than the interval prints nothing.  A line
is written when the work reports progress and the interval has passed, and by a timer thread
when it does not (one long build): every command that shows a :class:`ProgressBar` gets both.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable


def progress_enabled() -> bool:
    """Whether a progress bar may be drawn: stderr is a terminal that is not ``TERM=dumb``."""
    try:
        return sys.stderr.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def _hms(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


INTERVAL_S = 30.0
"""When stderr is not a terminal, the longest time long work goes without a line saying how far it is."""


def _seconds(variable: str, default: float) -> float:
    """A non-negative number of seconds from the environment variable, else ``default`` (a bad value too)."""
    from ..core.errors import InputError
    from ..core.numbers import parse_number
    text = os.environ.get(variable, "").strip()
    try:
        return max(0.0, float(parse_number(text, variable))) if text else default
    except InputError:
        return default


def _delay(default: float) -> float:
    return _seconds("COLLSIM_PROGRESS_DELAY", default)


class ProgressBar:
    """A context manager drawing one rich progress bar (description, bar, count, elapsed, ETA)."""

    def __init__(self, description: str, total: int | None = None, *, delay: float = 2.0,
                 clock: Callable[[], float] = time.monotonic, console: Any = None, interval: float | None = None,
                 log: Any = None) -> None:
        self.description = self._base = description
        self.total = total
        self._begun = 0
        self.completed = 0
        self._delay = _delay(delay)
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task: Any = None
        self._timer: threading.Timer | None = None
        self._done = False
        self._last = 0.0
        self._now = clock
        self._console = console
        self._t0 = clock()
        self._first: tuple[float, int] | None = None  # when the first unit was done, and how many
        self._interval = _seconds("COLLSIM_PROGRESS_INTERVAL", INTERVAL_S) if interval is None else max(0.0, interval)
        self._log = log
        self._lines = False  # off a terminal: progress lines instead of a bar
        self._said = 0.0  # when the last line was written (or the work began)
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __enter__(self) -> ProgressBar:
        self._t0 = self._said = self._now()
        if not (progress_enabled() if self._console is None else self._console.is_terminal):
            self._lines = True
            if self._interval > 0:  # a line even when the work says nothing for a while (one long build)
                self._beat = threading.Thread(target=self._beating, name="collsim-progress", daemon=True)
                self._beat.start()
            return self
        if self._delay == 0:  # drawn before the work starts, whatever the machine's load
            self._start()
        else:
            self._timer = threading.Timer(self._delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def clock(self) -> str:
        """Time since the work began and the estimated time left, from the units done so far."""
        now = self._now()
        done, total = self.completed, self.total
        left = None
        if total and done and done <= total:  # the pace since the first unit was done, else since the start
            t1, d1 = self._first or (self._t0, 0)
            t1, d1 = (t1, d1) if done > d1 else (self._t0, 0)
            left = (now - t1) * (total - done) / (done - d1)
        return f"{_hms(now - self._t0)} elapsed, ETA {'-:--:--' if left is None else _hms(left)}"

    def line(self) -> str:
        """What runs and how far it is, in one line (what is written off a terminal)."""
        if self.total:
            return f"{self.description}: {self.completed} of {self.total}, {self.clock()}"
        done = f": {self.completed} done" if self.completed else ""
        return f"{self.description}{done}, {_hms(self._now() - self._t0)} elapsed"

    def _say(self, force: bool = False) -> None:
        """Off a terminal: write :meth:`line` if ``interval`` seconds have passed since the last one."""
        with self._lock:
            now = self._now()
            if self._done or not self._lines or (now - self._said < self._interval and not force):
                return
            self._said = now
            text = self.line()
        stream = self._log if self._log is not None else sys.stderr
        if stream is None:
            return
        from .text import plain
        try:
            stream.write(plain(text, stream) + "\n")
            stream.flush()
        except (OSError, ValueError):  # stderr gone (closed, a full disk): progress is not worth failing for
            pass

    def _beating(self) -> None:
        """The timer thread off a terminal: a line whenever the work has said nothing for ``interval`` seconds."""
        while True:
            with self._lock:
                left = self._interval - (self._now() - self._said)
            if self._stop.wait(max(left, 0.05 * self._interval, 0.01)):
                return
            self._say()

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn
        from rich.text import Text
        bar = self

        class Clock(ProgressColumn):  # from the work's own start: the bar appears only after a delay
            def render(self, task) -> Text:
                return Text(bar.clock())
        with self._lock:
            if self._done:
                return
            progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), Clock(),
                                console=self._console or Console(stderr=True, highlight=False), transient=True)
            self._task = progress.add_task(self.description, total=self.total, completed=self.completed)
            progress.start()
            self._progress = progress

    def update(self, completed: int | None = None, *, total: int | None = None, description: str | None = None,
               advance: int = 0) -> None:
        """Record progress (cheap when no bar is shown)."""
        with self._lock:
            if completed is not None:
                self.completed = completed
            self.completed += advance
            if self._first is None and self.completed > 0:
                self._first = (self._now(), self.completed)
            if total is not None:
                self.total = total
            if description is not None:
                self.description = description
            if self._progress is not None:
                self._progress.update(self._task, completed=self.completed, total=self.total,
                                      description=self.description)
        if self._lines:
            self._say()

    def begin(self, label: str) -> None:
        """One more unit starts (the one before it is done): ``compare``'s ``progress`` hook."""
        with self._lock:
            self._begun += 1
            begun = self._begun
        self.update(begun - 1, description=f"{self._base} {label}")

    def callback(self, done: int, total: int | None = None) -> None:
        """``callback(done, total)``: the form library hooks call (``collsim.core.serialize.load`` ...).

        Called once per step of a file, it passes at most 20 updates a second on to the bar.
        """
        now = self._now()
        if now - self._last < 0.05 and done != total:
            return
        self._last = now
        self.update(done, total=total)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._done = True
            if self._timer is not None:
                self._timer.cancel()
            progress, self._progress = self._progress, None
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=1.0)
        if progress is not None:
            progress.stop()
