"""``rotated-dims``: every dimension of a mesh (torus) gathered at once, one part of each block per
rotated dimension order (algorithms/rotated_dims.py).

Golden times are derived, not measured: on the square grid ``a^d`` with links of bandwidth ``B``
and latency ``λ``, with ``P`` parts a block (``d`` on a mesh, ``2d`` on a torus of sides above 2),
phase ``p`` takes ``a - 1`` one-hop steps of ``a^p m / P`` bytes, so the flow-simulated time is
``sum_p (a - 1) (a^p m / (P B) + λ) = (N - 1) m / (P B) + d (a - 1) λ``, and ``(N - 1) m / (P B)``
is what a corner (``P`` in-links) needs to receive ``(N - 1) m`` bytes: the bound's bandwidth.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim import build, evaluate, verify
from collsim.algorithms import REGISTRY
from collsim.core.collective import collective_type
from collsim.core.errors import UnsupportedError
from collsim.systems import load_system


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["mesh", "torus"]), a=st.integers(2, 5), d=st.integers(1, 3),
       coll=st.sampled_from(["allgather", "reducescatter"]), units=st.integers(1, 50))
def test_square_grids_take_the_corners_bound_plus_a_latency_a_step(kind, a, d, coll, units):
    system = load_system(kind, dims=(a,) * d, link_bandwidth_bytes_per_s=10**10, link_latency_s=1e-6)
    parts = 2 * d if kind == "torus" and a > 2 else d
    m = parts * 1000 * units
    s = build("rotated-dims", system, coll, m)
    report = verify(s)
    n = a**d
    assert s.num_rounds == d * (a - 1)
    assert report.time_s == pytest.approx((n - 1) * m / (parts * 1e10) + d * (a - 1) * 1e-6, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["mesh", "torus"]), dims=st.lists(st.integers(2, 5), min_size=1, max_size=3),
       coll=st.sampled_from(["allgather", "reducescatter", "allreduce"]))
def test_any_grid_verifies_with_its_declared_transfers(kind, dims, coll):
    """Sides that differ: the parts wait for each phase's longest line, and the schedule stays right."""
    system = load_system(kind, dims=tuple(dims))
    s = build("rotated-dims", system, coll, 64 * (system.nodes if coll == "allreduce" else 1))
    assert evaluate(s).verified
    assert len(s) == REGISTRY["rotated-dims"].transfers(system, collective_type(coll), {})


def test_synthesize_returns_it_on_a_large_mesh_at_the_bound():
    """A 16x16 mesh (TACOS's class), 1 GiB of total output: the greedy stops near 0.98 here; every
    dimension at once reaches the bound up to 2 x 15 latencies."""
    system = load_system("mesh", dims=(16, 16), link_bandwidth_bytes_per_s=50 * 2**30, link_latency_s=0.5e-6)
    found = collsim.synthesize(system, "allgather", 2**30 // system.nodes)
    assert found.schedule.algorithm == "rotated-dims" and found.result.verified
    assert found.efficiency >= 0.99


def test_other_networks_are_refused_with_the_reason():
    with pytest.raises(UnsupportedError, match="mesh or torus"):
        build("rotated-dims", load_system("hypercube", nodes=8), "allgather", 64)
