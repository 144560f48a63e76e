"""core.csr.permute_csr, which reorders a schedule's chunks when the ring's rwa sorts transfers by step (issue 21).

The ring realisation once kept a twin of it; it now calls permute_csr, so permute_csr is checked
here against plain Python rows on every path it takes: one entry per row (before and after),
one entry per kept row, rows of any length, and dropped, repeated and empty rows.
"""

import numpy as np
import pytest

from collsim.core.csr import INDEX, permute_csr


def python_rows(lengths, idx, order):
    """The reordered rows as lists (the reference)."""
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    rows = [idx[starts[r]:starts[r + 1]].tolist() for r in range(len(lengths))]
    return [rows[int(i)] for i in order]


def check(lengths, idx, order):
    ptr, out = permute_csr(lengths, idx, order)
    assert ptr.dtype == INDEX and out.dtype == idx.dtype
    assert ptr.tolist()[0] == 0 and len(ptr) == len(order) + 1
    assert [out[ptr[i]:ptr[i + 1]].tolist() for i in range(len(order))] == python_rows(lengths, idx, order)


@pytest.mark.parametrize("seed", range(24))
def test_permute_csr_matches_python_rows(seed):
    rng = np.random.default_rng(seed)
    t = int(rng.integers(1, 40))
    lengths = np.ones(t, np.int64) if seed % 3 == 0 else rng.integers(0, 4, t)
    idx = rng.integers(0, 100, int(lengths.sum())).astype(np.int32)
    check(lengths, idx, np.argsort(rng.integers(0, 5, t), kind="stable"))      # a stable sort, as in rwa
    check(lengths, idx, rng.permutation(t))
    check(lengths, idx, rng.integers(0, t, int(rng.integers(0, 2 * t))))      # rows dropped and repeated


def test_permute_csr_edge_cases():
    idx = np.array([5, 6, 7], np.int16)
    check(np.array([1, 1, 1]), idx, np.array([2, 0, 1]))                   # one entry per row
    check(np.array([1, 1, 1]), idx, np.array([2, 2]))                      # ... rows dropped and repeated
    check(np.array([0, 1, 2]), idx, np.array([1, 1]))                      # one entry per kept row
    check(np.array([0, 1, 2]), idx, np.array([2, 0, 1]))                   # an empty row
    check(np.array([0, 0]), idx[:0], np.array([1, 0]))                     # no entries at all
    check(np.zeros(0, np.int64), idx[:0], np.zeros(0, np.int64))            # no rows
    check(np.array([2, 1], np.int32), idx, np.array([1, 0], np.int32))     # int32 lengths and order
