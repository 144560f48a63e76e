"""Every registered algorithm, for every collective it supports, verifies at random sizes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim import build, verify
from collsim.algorithms import REGISTRY
from collsim.core.errors import UnsupportedError
from collsim.systems import OpticalRing

CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives]
PRIMES = [2, 3, 5, 7, 11, 13, 17, 97, 127, 251, 293]


def test_registry_is_not_empty_and_names_work():
    assert {"ring", "ne", "osm"} <= set(REGISTRY)
    for spec in REGISTRY.values():
        assert spec.reference and spec.summary and spec.collectives and spec.systems
        assert spec.builder.__doc__ and "Examples" in spec.builder.__doc__ and "References" in spec.builder.__doc__


@pytest.mark.parametrize("name,collective", CASES)
@settings(max_examples=12)
@given(n=st.one_of(st.integers(2, 300), st.sampled_from(PRIMES)), w=st.integers(1, 64),
       f=st.integers(1, 2), size=st.integers(1, 1 << 22), strategy=st.sampled_from(["first-fit", "best-fit", "most-used"]),
       limit=st.sampled_from([None, None, 1, 3]))
def test_every_algorithm_builds_a_verified_schedule(name, collective, n, w, f, size, strategy, limit):
    spec = REGISTRY[name]
    if "optical-ring" not in spec.systems:
        return
    system = OpticalRing(nodes=n, wavelengths=w, fibers=f, max_tx_channels=limit, max_rx_channels=limit)
    try:
        sched = build(name, system, collective, size, strategy=strategy)
    except UnsupportedError as exc:
        # only a declared constraint may refuse an instance
        assert spec.requires is not None and spec.requires(system, collective), exc
        return
    report = verify(sched)
    assert report.steps >= 1 and report.transfers >= 1
    assert (sched.wavelength < w).all() and (sched.fiber < f).all()


NETWORK_CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
                 if "network" in spec.systems or "mlfm" in spec.systems]


def _network(kind: str, n: int):
    from collsim.systems import load_system
    if kind in ("torus", "mesh"):
        side = max(2, int(round(n ** 0.5)))
        return load_system(kind, dims=(side, side))
    if kind == "hypercube":
        return load_system(kind, nodes=1 << max(1, n.bit_length() - 1))
    if kind == "fat-tree":
        return load_system(kind, nodes=min(n, 128))
    if kind == "mlfm":
        return load_system(kind, d=3, selection=(2, 3, 2))
    return load_system(kind, nodes=n)


@pytest.mark.parametrize("name,collective", NETWORK_CASES)
@settings(max_examples=10)
@given(kind=st.sampled_from(["ring", "line", "star", "torus", "mesh", "hypercube", "fat-tree", "mlfm"]),
       n=st.one_of(st.integers(2, 70), st.sampled_from(PRIMES[:8])), size=st.integers(1, 1 << 20))
def test_every_network_algorithm_builds_a_verified_schedule(name, collective, kind, n, size):
    spec = REGISTRY[name]
    system = _network(kind, n)
    if not spec.runs_on(system):
        return
    try:
        sched = build(name, system, collective, size)
    except UnsupportedError as exc:
        assert spec.requires is not None and spec.requires(system, collective), exc
        return
    report = verify(sched)
    assert report.transfers >= 1 and sched.route_ptr is not None
