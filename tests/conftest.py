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
