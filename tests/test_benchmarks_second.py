"""The second half of ``benchmarks/run.py``'s workloads still run at small sizes (no timing asserted).

tests/test_benchmarks.py smoke-runs the first half (every other workload) and
tests/test_benchmarks_reproduce.py the reproductions: three files, so that the suite's workers
(one file each at a time) share the smoke runs.
"""

from __future__ import annotations

import pytest

from test_benchmarks import smoke, workloads

pytestmark = pytest.mark.schedule_first(38)  # about 38 s of work: handed out early (tests/conftest.py)


def test_the_second_half_of_the_benchmark_workloads_runs_at_a_small_size():
    names = workloads(1)
    assert len(names) >= 7
    smoke(names)
