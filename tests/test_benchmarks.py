"""Every benchmark workload still runs: ``benchmarks/run.py --smoke`` at small sizes (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.schedule_first(40)  # about 40 s of work: handed out early (tests/conftest.py)

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


REPRODUCE = ("reproduce-all", "reproduce-beyond")
"""The two longest smoke runs (about a minute together), run by tests/test_benchmarks_reproduce.py: in a file
of their own, the suite's workers (one file each at a time) share the smoke runs more evenly."""


def smoke(names: list[str]) -> None:
    """Run ``benchmarks/run.py --smoke`` on ``names``; every one must run."""
    proc = subprocess.run([sys.executable, str(RUN), "--smoke", *names], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"smoke: {len(names)} workloads ran" in proc.stdout
    for name in names:
        assert any(line.startswith(name + " ") for line in proc.stdout.splitlines()), name


def workloads(half: int) -> list[str]:
    """Every other workload but the reproductions, from the first (``half=0``) or the second: two
    smoke runs in two files, so that no single test holds the suite's last minutes."""
    names = subprocess.run([sys.executable, str(RUN), "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert len(names) >= 15 and set(REPRODUCE) <= set(names)
    return [n for n in names if n not in REPRODUCE][half::2]


def test_every_other_benchmark_workload_runs_at_a_small_size():
    smoke(workloads(0))      # the others: tests/test_benchmarks_second.py


def test_against_runs_a_workload_on_the_old_revision_and_on_this_tree(tmp_path):
    """``--against REV``: both sides run (the old one from a worktree of REV), side by side with a ratio."""
    root = RUN.parents[1]
    if not (root / ".git").exists():  # an sdist has no history to compare with: the command must say so
        proc = subprocess.run([sys.executable, str(RUN), "--against", "HEAD", "--smoke", "cli-version"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode != 0
        return
    proc = subprocess.run([sys.executable, str(RUN), "--against", "HEAD", "--smoke", "cli-version"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # 1: slower by chance under load, still compared
    row = [line for line in proc.stdout.splitlines() if line.startswith("cli-version")]
    assert len(row) == 1, proc.stdout
    cells = row[0].split()
    assert cells[1] != "n/a" and cells[3] != "FAILED", row[0]   # the old revision ran, and so did this tree
    assert float(cells[-1]) > 0
    listed = subprocess.run(["git", "-C", str(root), "worktree", "list"], capture_output=True, text=True).stdout
    assert "collsim-against-" not in listed  # the worktree is removed afterwards
