"""The reproduction workloads of ``benchmarks/run.py`` still run at small sizes (no timing asserted).

The other workloads are smoke-run by tests/test_benchmarks.py; this file holds the two longest so
that the suite's workers share the smoke runs.
"""

from __future__ import annotations

from test_benchmarks import REPRODUCE, smoke


def test_the_reproduction_workloads_run_at_a_small_size():
    smoke(list(REPRODUCE))
