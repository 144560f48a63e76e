"""The software a run used: collsim's version and git commit, Python, numpy and matplotlib.

A reproduction report names them in its provenance section (:mod:`collsim.experiments.report.html`),
so that a reader can tell which code produced which numbers.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

NOT_A_CHECKOUT = "not a git checkout"
"""What the provenance says for the git commit when collsim is not run from a git checkout."""


def _git_commit(folder: Path) -> str:
    """The commit checked out in ``folder`` if it is part of a git checkout that tracks collsim."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    try:
        head = git("rev-parse", "--verify", "HEAD")
        tracked = git("ls-files", "--error-unmatch", "__init__.py")  # not merely a venv inside some repo
        if head.returncode != 0 or tracked.returncode != 0 or not head.stdout.strip():
            return NOT_A_CHECKOUT
        commit = head.stdout.strip()
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return commit + (" (with uncommitted changes)" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return NOT_A_CHECKOUT


def environment(package_dir: str | Path | None = None) -> dict[str, str]:
    """What ran the reproduction: collsim's version and git commit, Python, numpy, matplotlib.

    Never fails: the commit is :data:`NOT_A_CHECKOUT` when collsim's source folder is
    not tracked by git (an installed wheel) or git is missing, and a library that is
    not installed is ``"not installed"``.
    """
    from ..._version import __version__
    folder = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parents[1]
    versions = {}
    for name in ("numpy", "matplotlib"):
        try:
            versions[name] = str(__import__(name).__version__)
        except ImportError:
            versions[name] = "not installed"
    return {"collsim": str(__version__), "git commit": _git_commit(folder),
            "Python": f"{platform.python_version()} ({platform.python_implementation()})", **versions}
