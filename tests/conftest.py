"""Shared fixtures and helpers."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True, print_blob=True)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


# matplotlib keeps its font cache under $XDG_CACHE_HOME/matplotlib unless MPLCONFIGDIR says where: pin it to
# where it is now, so that the per-test cache folders below do not make every plotting subprocess rebuild it
os.environ.setdefault("MPLCONFIGDIR", str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                          / "matplotlib"))


@pytest.fixture(autouse=True)
def _own_cache_folder(tmp_path_factory, monkeypatch):
    """Each test gets its own empty ``$XDG_CACHE_HOME``: ``collsim tune``'s default results store
    (``$XDG_CACHE_HOME/collsim/tune.sqlite``) is never the user's, and no test sees what another
    test (or another pytest-xdist worker) stored there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    """No progress line off a terminal (every 30 s of work, docs/output.md) in what a test reads: how long a
    command runs depends on the machine's load, so such lines would come and go.  The progress tests set
    their own interval (and clock)."""
    monkeypatch.setenv("COLLSIM_PROGRESS_INTERVAL", "1e9")


def collsim_exe() -> str:
    """The installed console script (next to the running interpreter, else on PATH)."""
    here = Path(sys.executable).parent / "collsim"
    if here.exists():
        return str(here)
    found = shutil.which("collsim")
    if not found:
        pytest.fail("the collsim console script is not installed")
    return found


@pytest.fixture
def run_cli(tmp_path):
    """Run the installed ``collsim`` script in an isolated folder."""
    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run([collsim_exe(), *args], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"collsim {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc
    return run


def mpiexec() -> str:
    """The mpiexec of the ``[mpi]`` extra (MPICH's, next to the interpreter), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if not found:
        pytest.fail("mpiexec not found: pip install '.[mpi]' installs MPICH's")
    return found


def refusal(proc: subprocess.CompletedProcess, status: int = 2) -> str:
    """The one line a refused command printed on stderr, after checking the facts every refusal must have:
    the exit status, one line, collsim's prefix and no traceback (never its wording: see :func:`names`)."""
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsim: "), proc.stderr
    assert not any(leak in proc.stderr for leak in ("Traceback", "internal error", "[Errno")), proc.stderr
    return lines[0]


def names(text: str, *facts: str) -> None:
    """Assert that a message names every fact it must (a file, an option, a value, a limit), in any wording.

    A fact is found as a whole: ``"4"`` is not found in ``"4096"``, nor ``"HOME"`` in ``"XDG_CACHE_HOME"``."""
    def found(fact: str) -> bool:
        head = r"(?<!\w)" if re.match(r"\w", fact) else ""
        tail = r"(?!\w)" if re.search(r"\w$", fact) else ""
        return re.search(head + re.escape(fact) + tail, text) is not None
    missing = [fact for fact in facts if not found(fact)]
    assert not missing, f"{missing} not named in: {text}"


@contextlib.contextmanager
def raises_naming(error: type[BaseException], *facts: str):
    """``pytest.raises(error)``, then :func:`names` on its message: the facts it must name, in any wording."""
    with pytest.raises(error) as info:
        yield info
    names(str(info.value), *facts)


def rejected_alike(sym, mutants) -> int:
    """Verify every ``(what, representatives)`` mutant of the symmetric schedule ``sym`` on its orbits
    and expanded: both pass, or both fail with the same error class in the same step.  Returns how
    many were rejected (a test asserts enough were, so that it checks something)."""
    from collsim import verify
    from collsim.core.errors import ScheduleFormatError, VerificationError
    from collsim.core.symmetry import SymmetricSchedule

    def verdict(s):
        try:
            verify(s)
            return ("passed",)
        except VerificationError as exc:
            return type(exc).__name__, exc.where.step if exc.where else None
        except ScheduleFormatError as exc:
            return type(exc).__name__, None

    rejected = 0
    for what, reps in mutants:
        mutant = SymmetricSchedule(reps, sym.group, sym.interleaved)
        a, b = verdict(mutant), verdict(mutant.expand())
        assert a == b, what
        rejected += a[0] != "passed"
    return rejected
