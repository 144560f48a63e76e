"""Closed forms charge the start-up and the latency of every link a message crosses (issue 25).

Before: the closed forms of bruck, recursive doubling, Rabenseifner (and the other textbook
families) used ``t_s = startup_s`` when a start-up was set, dropping the route latency: on a
calibrated 2-rank star they predicted 1.08 µs per step against α = 1.88 µs.  The expected
values here are derived by hand from the formulas, and checked against the schedule-level
α–β time (:func:`collsim.cost.network.alpha_beta_time_s`), which charges each transfer its
route.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import collsim
from collsim.algorithms.registry import REGISTRY
from collsim.cost.network import alpha_beta_time_s, transfer_bandwidth_bytes_per_s, transfer_fixed_s
from collsim.kinds.network.electrical import Ring, Star
from collsim.kinds.network.hypercube import Hypercube
from collsim.kinds.network.mesh_torus import Torus

S, L, B = 1.08e-6, 0.4e-6, 1e10   # start-up, link latency, bandwidth
ALPHA = S + 2 * L                  # a star message crosses two links: the calibrated α


def _closed(name, system, collective, size_bytes, **params):
    sched = collsim.build(name, system, collective, size_bytes, **params)
    spec = REGISTRY[name]
    return spec.alpha_beta(sched.system, sched.collective.type, sched.collective.size_bytes, dict(sched.params)), sched


def test_two_rank_star_step_costs_the_calibrated_alpha():
    star = Star(nodes=2, link_latency_s=L, startup_s=S, link_bandwidth_bytes_per_s=B)
    m = 1024
    for name, coll in [("recursive-doubling", "allgather"), ("bruck", "allgather"),
                       ("recursive-doubling", "allreduce")]:
        t, _ = _closed(name, star, coll, m)
        assert t == pytest.approx(ALPHA + m / B, rel=1e-12), name
    t, _ = _closed("rabenseifner", star, "allreduce", m)   # halving + doubling: 2 rounds of half the vector
    assert t == pytest.approx(2 * ALPHA + 2 * (m / 2) / B, rel=1e-12)


@pytest.mark.parametrize("n", [4, 8])
def test_star_formulas_power_of_two(n):
    star = Star(nodes=n, link_latency_s=L, startup_s=S, link_bandwidth_bytes_per_s=B)
    m, lg = 4096, int(math.log2(n))
    assert _closed("recursive-doubling", star, "allgather", m)[0] == pytest.approx(lg * ALPHA + (n - 1) * m / B)
    assert _closed("recursive-doubling", star, "allreduce", m)[0] == pytest.approx(lg * (ALPHA + m / B))
    assert _closed("bruck", star, "allgather", m)[0] == pytest.approx(lg * ALPHA + (n - 1) * m / B)
    assert _closed("rabenseifner", star, "allreduce", m)[0] == pytest.approx(
        2 * lg * ALPHA + 2 * (n - 1) / n * m / B)


def test_star_formulas_with_folding():
    n, m = 6, 4096  # p' = 4, two fold steps
    star = Star(nodes=n, link_latency_s=L, startup_s=S, link_bandwidth_bytes_per_s=B)
    assert _closed("bruck", star, "allgather", m)[0] == pytest.approx(3 * ALPHA + 5 * m / B)
    assert _closed("recursive-doubling", star, "allreduce", m)[0] == pytest.approx((2 + 2) * (ALPHA + m / B))
    assert _closed("rabenseifner", star, "allreduce", m)[0] == pytest.approx(
        2 * 2 * ALPHA + 2 * 3 / 4 * m / B + 2 * (ALPHA + m / B))


def test_ring_charges_every_hop_of_a_long_round():
    # recursive doubling on an 8-ring: distances 1, 2, 4 cross 1, 2 and 4 links
    ring = Ring(nodes=8, link_latency_s=1e-6, startup_s=2e-6, link_bandwidth_bytes_per_s=1e9)
    t, _ = _closed("recursive-doubling", ring, "allgather", 1000)
    assert t == pytest.approx(3 * 2e-6 + (1 + 2 + 4) * 1e-6 + 7 * 1000 / 1e9)


def test_hypercube_without_startup_is_the_textbook():
    # every exchange one hop, no start-up: t_s = link latency, as the chapter's table
    hc = Hypercube(nodes=8, link_latency_s=2e-6, link_bandwidth_bytes_per_s=1e9)
    t, _ = _closed("recursive-doubling", hc, "allgather", 1000)
    assert t == pytest.approx(2e-6 * 3 + 1e-9 * 1000 * 7)


SYSTEMS = {
    "star4": Star(nodes=4, link_latency_s=L, startup_s=S, link_bandwidth_bytes_per_s=B),
    "star6": Star(nodes=6, link_latency_s=L, startup_s=S, link_bandwidth_bytes_per_s=B),
    "ring8": Ring(nodes=8, link_latency_s=1e-6, startup_s=2e-6, link_bandwidth_bytes_per_s=1e9),
    "hypercube8": Hypercube(nodes=8, link_latency_s=1e-6, startup_s=2e-6, link_bandwidth_bytes_per_s=1e9),
    "torus4x4": Torus.from_dims((4, 4), link_latency_s=1e-6, startup_s=2e-6, link_bandwidth_bytes_per_s=1e9),
}
FAMILIES = ["recursive-doubling", "bruck", "rabenseifner", "binomial", "pairwise", "hypercube-personalized",
            "ring-personalized", "ring-shift", "direct", "mesh"]


def _applies(name: str, system) -> bool:
    """Whether the registry says the family builds some collective on this system."""
    spec = REGISTRY[name]
    return any(spec.refusal(system, c) is None
               for c in spec.collectives)


PAIRS = [(name, system) for name in FAMILIES for system in sorted(SYSTEMS) if _applies(name, SYSTEMS[system])]


def _unshared_alpha_beta(sched) -> float:
    """Per step, the slowest transfer as if alone on its links: route latency plus bytes at its bottleneck."""
    per = transfer_fixed_s(sched) + sched.size_bytes / transfer_bandwidth_bytes_per_s(sched)
    busy = np.zeros(sched.num_steps)
    np.maximum.at(busy, sched.step, per)
    return float(busy.sum())


@pytest.mark.parametrize("name,system", PAIRS)
def test_closed_form_equals_the_schedule_alpha_beta(name, system):
    """Every message of these schedules carries the same bytes within a step, so the closed
    form must equal the schedule's α–β time with each transfer alone on its links, which charges
    each transfer its whole route.  The schedule's α–β time also counts links that transfers of a
    step share (issue 31), which the sources' closed forms do not: it is never below them, and
    equal where no link is shared."""
    sys_ = SYSTEMS[system]
    checked = 0
    for coll in REGISTRY[name].collectives:
        try:
            t, sched = _closed(name, sys_, coll, 4096)
        except collsim.UnsupportedError:
            continue
        assert t == pytest.approx(_unshared_alpha_beta(sched), rel=1e-9), (name, system, coll)
        assert t <= alpha_beta_time_s(sched) * (1 + 1e-9), (name, system, coll)
        if sched.max_link_load() <= 1:
            assert t == pytest.approx(alpha_beta_time_s(sched), rel=1e-9), (name, system, coll)
        checked += 1
    assert checked, f"the registry says {name} applies to {system}, but it built nothing"
