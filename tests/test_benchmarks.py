"""Every benchmark workload still runs: ``benchmarks/run.py --smoke`` at small sizes (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def test_every_benchmark_workload_runs_at_a_small_size():
    names = subprocess.run([sys.executable, str(RUN), "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    assert len(names) >= 15
    proc = subprocess.run([sys.executable, str(RUN), "--smoke"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"smoke: {len(names)} workloads ran" in proc.stdout
    for name in names:
        assert any(line.startswith(name + " ") for line in proc.stdout.splitlines()), name
