"""The reproduction workloads of ``benchmarks/run.py`` still run at small sizes (no timing asserted).

The other workloads are smoke-run by tests/test_benchmarks.py; this file holds the two longest so
that the suite's workers share the smoke runs.
"""

from __future__ import annotations

import pytest

from test_benchmarks import REPRODUCE, smoke

pytestmark = pytest.mark.schedule_first(47)  # about 47 s of work: handed out early (tests/conftest.py)


def test_the_reproduction_workloads_run_at_a_small_size():
    smoke(list(REPRODUCE))
