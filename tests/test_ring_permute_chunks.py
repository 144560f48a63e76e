"""rwa.ring._permute_chunks gives exactly permute_csr's result (issue 21)."""

import numpy as np
import pytest

from collsim.core.routes import permute_csr
from collsim.kinds.optical_ring.rwa import _permute_chunks


@pytest.mark.parametrize("seed", range(6))
def test_permute_chunks_matches_permute_csr(seed):
    rng = np.random.default_rng(seed)
    t = int(rng.integers(1, 40))
    lengths = np.ones(t, np.int64) if seed % 2 else rng.integers(0, 4, t)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    idx = rng.integers(0, 100, int(ptr[-1])).astype(np.int32)
    order = np.argsort(rng.integers(0, 5, t), kind="stable")
    want_ptr, want_idx = permute_csr(np.diff(ptr), idx, order)
    got_ptr, got_idx = _permute_chunks(ptr, idx, order)
    assert got_ptr.dtype == want_ptr.dtype and got_idx.dtype == want_idx.dtype
    np.testing.assert_array_equal(got_ptr, want_ptr)
    np.testing.assert_array_equal(got_idx, want_idx)
