"""Every registered algorithm, for every collective it supports, verifies at random sizes.

Each draw is an instance the algorithm declares it supports: a system of a family in its
``systems`` and, where it declares a constraint (``requires``), one that the constraint
accepts.  Every draw builds and verifies a schedule; nothing returns early.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collsim import build, verify
from collsim.algorithms import REGISTRY
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing
from collsim.core.collective import collective_type

pytestmark = pytest.mark.schedule_first(70)  # about 70 s of work: handed out early (tests/conftest.py)

PRIMES = [2, 3, 5, 7, 11, 13, 17, 97, 127, 251, 293]


def accepted(name: str, collective: str, systems: st.SearchStrategy) -> st.SearchStrategy:
    """The systems of ``systems`` that the algorithm's declared constraint accepts for the collective."""
    spec = REGISTRY[name]
    if spec.requires is None:
        return systems
    return systems.filter(lambda system: not spec.requires(system, collective_type(collective)))


def test_registry_is_not_empty_and_names_work():
    assert {"ring", "ne", "osm"} <= set(REGISTRY)
    for spec in REGISTRY.values():
        assert spec.reference and spec.summary and spec.collectives and spec.systems
        assert spec.builder.__doc__ and "Examples" in spec.builder.__doc__ and "References" in spec.builder.__doc__


# --- optical rings ---------------------------------------------------------------------------------
CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
         if "optical-ring" in spec.systems]


@st.composite
def optical_rings(draw):
    limit = draw(st.sampled_from([None, None, 1, 3]))
    return OpticalRing(nodes=draw(st.one_of(st.integers(2, 300), st.sampled_from(PRIMES))),
                       wavelengths=draw(st.integers(1, 64)), fibers=draw(st.integers(1, 2)),
                       max_tx_channels=limit, max_rx_channels=limit)


def test_the_optical_cases_cover_every_algorithm_declaring_optical_rings():
    assert {name for name, _ in CASES} == {n for n, s in REGISTRY.items() if "optical-ring" in s.systems}
    assert len(CASES) >= 25


@pytest.mark.parametrize("name,collective", CASES)
@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), size=st.integers(1, 1 << 22),
       strategy=st.sampled_from(["first-fit", "best-fit", "most-used"]))
def test_every_algorithm_builds_a_verified_schedule(name, collective, data, size, strategy):
    system = data.draw(accepted(name, collective, optical_rings()), label="system")
    # an instance the declared scope and constraint accept builds: only a declared constraint may refuse one
    sched = build(name, system, collective, size, strategy=strategy)
    report = verify(sched)
    assert report.steps >= 1 and report.transfers >= 1
    _declared_counts_hold(name, system, collective, sched)
    assert (sched.wavelength < system.wavelengths).all() and (sched.fiber < system.fibers).all()


def _declared_counts_hold(name, system, collective, sched) -> None:
    """The closed forms an algorithm declares to refuse what cannot fit (``deliveries``, ``transfers``)
    are floors of what it builds: a refusal from them never turns away a schedule that fits."""
    spec, coll = REGISTRY[name], collective_type(collective)
    params = {k: v for k, v in sched.params.items() if k in spec.params}
    for hook, made in ((spec.transfers, len(sched)), (spec.deliveries, len(sched.chunk_idx))):
        declared = hook(system, coll, params) if hook is not None else None   # None: not declared here
        assert declared is None or declared <= made, (name, collective, declared, made)


# --- electrical networks and MLFMs ----------------------------------------------------------------
KINDS = ["ring", "line", "star", "torus", "mesh", "hypercube", "fat-tree", "mlfm", "hierarchical", "ocs"]
NETWORK_CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
                 if {"network", "mlfm", "hierarchical"} & set(spec.systems)]


def _network(kind: str, n: int):
    if kind in ("torus", "mesh"):
        side = max(2, int(round(n ** 0.5)))
        return load_system(kind, dims=(side, side))
    if kind == "hypercube":
        return load_system(kind, nodes=1 << max(1, n.bit_length() - 1))
    if kind == "fat-tree":
        return load_system(kind, nodes=min(n, 128))
    if kind == "mlfm":
        return load_system(kind, d=3, selection=(2, 3, 2))
    if kind == "ocs":  # a port per peer: every point-to-point schedule fits (fewer ports: the ocs cases below)
        return load_system(kind, nodes=n, ports=n - 1)
    return load_system(kind, nodes=n)


def declared_kinds(name: str) -> list[str]:
    """The kinds of :data:`KINDS` in the algorithm's declared families (``spec.runs_on``)."""
    return [kind for kind in KINDS if REGISTRY[name].runs_on(_network(kind, 8))]


SYNTHESIZERS_UP_TO = 40
"""Largest network drawn for the synthesizers, whose builds grow steeply with the network (a
70-host fat tree's synth-trees reduce-scatter takes 27 s, a 48-node mesh's 11 s, a 32-host fat
tree's 1.8 s): larger ones are left to their own tests and benchmarks, which draw seeded random
networks of every class (tests/test_synth_trees*.py, benchmarks/synth_trees.py), so that this
property stays within the suite's time."""


SYNTHESIZERS_FULL_MESH_UP_TO = 12
"""Largest ``ocs`` with a port per peer drawn for the synthesizers: its n(n - 1) circuits make a rooted
packing's column generation long (synth-trees' broadcast or reduce: 3 s at 12 nodes, 12 s at 16).  The
packing runs the same code on every graph, drawn up to :data:`SYNTHESIZERS_UP_TO` on the other kinds."""


def _synthesizer_network(kind: str, n: int):
    return _network(kind, min(n, SYNTHESIZERS_FULL_MESH_UP_TO) if kind == "ocs" else n)


def networks(name: str) -> st.SearchStrategy:
    """Systems of the kinds the algorithm declares it runs on (never one it does not)."""
    synthesizer = name.startswith("synth-")
    most = SYNTHESIZERS_UP_TO if synthesizer else 70
    return st.builds(_synthesizer_network if synthesizer else _network, st.sampled_from(declared_kinds(name)),
                     st.one_of(st.integers(2, most), st.sampled_from([p for p in PRIMES[:8] if p <= most])))


def test_the_network_strategy_draws_only_declared_families():
    for name, _ in NETWORK_CASES:
        kinds = declared_kinds(name)
        if "network" in REGISTRY[name].systems:  # an MLFM is an electrical network too
            assert kinds == KINDS, (name, kinds)
        else:   # MLFM's own algorithms, or the hierarchical kind's
            assert kinds in (["mlfm"], ["hierarchical"]), (name, kinds)


@pytest.mark.parametrize("name,collective", NETWORK_CASES)
@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), size=st.integers(1, 1 << 20))
def test_every_network_algorithm_builds_a_verified_schedule(name, collective, data, size):
    system = data.draw(accepted(name, collective, networks(name)), label="system")
    assert REGISTRY[name].runs_on(system)
    sched = build(name, system, collective, size)
    report = verify(sched)
    assert report.transfers >= 1 and sched.route_ptr is not None
    _declared_counts_hold(name, system, collective, sched)


# --- optical circuit switches -------------------------------------------------------------------------
OCS_CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
             if "ocs" in spec.systems]


@st.composite
def circuit_switches(draw):
    n = draw(st.one_of(st.integers(2, 40), st.sampled_from(PRIMES[:7])))
    return load_system("ocs", nodes=n, ports=draw(st.integers(1, min(3, n - 1))),
                       reconfiguration_s=draw(st.sampled_from([4e-9, 1e-6, 1e-3])))


def test_the_ocs_cases_cover_every_algorithm_declaring_ocs():
    assert {name for name, _ in OCS_CASES} >= {"pairwise-relay", "ocs-auto"}


@pytest.mark.parametrize("name,collective", OCS_CASES)
@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), size=st.integers(1, 1 << 20))
def test_every_ocs_algorithm_builds_a_verified_schedule(name, collective, data, size):
    system = data.draw(accepted(name, collective, circuit_switches()), label="system")
    sched = build(name, system, collective, size)
    report = verify(sched)
    assert report.transfers >= 1 and sched.route_ptr is not None
