"""Shared fixtures and helpers."""

from __future__ import annotations

import os
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
