"""Every registered algorithm builds a verified schedule on every family of systems it declares.

For each (algorithm, collective, declared family) hypothesis draws a system of a kind
of that family; instances the algorithm's declared constraint refuses are *rejected*
(``assume``), never silently passed: a case whose every draw is refused fails
(hypothesis raises ``Unsatisfiable``), so each (algorithm, collective, family) builds at
least one verified schedule.  A separate test builds every algorithm on a fixed system of
each family it declares, and checks that it refuses every family it does not declare;
no test reads what another test did.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from collsim import build, verify
from collsim.algorithms import REGISTRY
from collsim.core.errors import UnsupportedError
from collsim.core.system import SYSTEM_KINDS
from collsim.kinds.base import model_for, models
from collsim.kinds.network.routes import LinkRoutes
from collsim.kinds.optical_ring.routes import RingRoutes
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing
from collsim.core.collective import collective_type

pytestmark = pytest.mark.schedule_first(40)  # about 40 s of work: handed out early (tests/conftest.py)

# family name in ``spec.systems`` -> system kinds drawn for it (each with its own strategy below)
FAMILY_KINDS = {
    "optical-ring": ["optical-ring"],
    "network": ["ring", "line", "star", "torus", "mesh", "hypercube", "fat-tree"],
    "mlfm": ["mlfm"],
    "optical-torus": ["optical-torus"],
}


def _plain(kind: str, nodes: int):
    """A system of a kind this test has no strategy for: its own defaults at ``nodes`` nodes."""
    cls = SYSTEM_KINDS[kind]
    return cls.from_options(nodes=nodes) if hasattr(cls, "from_options") else cls(nodes=nodes)


# every other kind a registered model owns (a plug-in: the ocs and hierarchical kinds) is drawn with its
# defaults, under its model's name
_KNOWN = {k for kinds in FAMILY_KINDS.values() for k in kinds} | {"abstract", "network", "custom"}
for _model in models():
    if _model.name not in FAMILY_KINDS:
        FAMILY_KINDS[_model.name] = sorted(k for k in SYSTEM_KINDS if k not in _KNOWN
                                           and model_for(_plain(k, 16)).name == _model.name)


def kinds_for(name: str) -> list[str]:
    """System kinds drawn for an algorithm, over all the families it declares."""
    return [k for fam in REGISTRY[name].systems for k in FAMILY_KINDS[fam]]


# every declared family is one we know how to draw
assert all(fam in FAMILY_KINDS for spec in REGISTRY.values() for fam in spec.systems), \
    {n: s.systems for n, s in REGISTRY.items()}
# mlfm only declares its own family, and is only ever drawn on MLFMs
assert REGISTRY["mlfm"].systems == ("mlfm",) and kinds_for("mlfm") == ["mlfm"]
assert "mlfm" not in kinds_for("ring") and "optical-ring" in kinds_for("ring")

CASES = [(name, coll, fam) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
         for fam in spec.systems]

NODES = st.one_of(st.integers(2, 64), st.sampled_from([2, 3, 4, 5, 7, 8, 9, 16, 25, 27, 32, 64]))


@st.composite
def systems(draw, family: str):
    kind = draw(st.sampled_from(FAMILY_KINDS[family]))
    if kind == "optical-ring":
        limit = draw(st.sampled_from([None, None, 2, 4]))
        return OpticalRing(nodes=draw(NODES), wavelengths=draw(st.integers(1, 16)),
                           fibers=draw(st.integers(1, 2)), max_tx_channels=limit, max_rx_channels=limit)
    if kind == "mlfm":
        d = draw(st.integers(2, 3))
        if draw(st.booleans()):
            return load_system("mlfm", d=d)
        # a selection breaking 1 <= m <= l-1 is not an MLFM the algorithm accepts: the build refuses it with
        # an InputError naming the condition (tests/test_cli.py::test_mlfm_bad_selection_is_one_line)
        l = draw(st.integers(2, d + 1))
        sel = (draw(st.integers(1, d)), l, draw(st.integers(1, min(d, l - 1))))
        return load_system("mlfm", d=d, selection=sel)
    if kind == "optical-torus":
        limit = draw(st.sampled_from([None, None, 2, 4]))
        return load_system(kind, rows=draw(st.integers(1, 6)), cols=draw(st.integers(2, 6)),
                           wavelengths=draw(st.integers(1, 8)), fibers=draw(st.integers(1, 2)),
                           shared_transceivers=draw(st.booleans()), max_tx_channels=limit, max_rx_channels=limit)
    if kind in ("torus", "mesh"):
        return load_system(kind, dims=(draw(st.integers(2, 8)), draw(st.integers(2, 8))))
    if kind == "hypercube":
        return load_system(kind, nodes=1 << draw(st.integers(1, 6)))
    if kind not in FAMILY_KINDS["network"]:  # a plug-in kind: its defaults, at a few sizes
        return _plain(kind, draw(st.sampled_from([4, 8, 16])))
    return load_system(kind, nodes=draw(NODES))


@pytest.mark.parametrize("name,collective,family", CASES)
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), size=st.integers(1, 1 << 16))
def test_algorithm_on_every_declared_family(name, collective, family, data, size):
    spec = REGISTRY[name]
    system = data.draw(systems(family), label="system")
    assert spec.runs_on(system), (name, system.topology)
    reason = spec.requires(system, collective_type(collective)) if spec.requires is not None else None
    if reason:
        assume(False)  # a declared constraint refuses this instance: not a pass
    sched = build(name, system, collective, size)
    report = verify(sched)
    assert report.transfers >= 1 and len(sched) >= 1
    assert isinstance(sched.routes, system.Routes)
    assert isinstance(sched.routes, RingRoutes if family in ("optical-ring", "optical-torus") else LinkRoutes) \
        or family not in ("optical-ring", "optical-torus", "network", "mlfm")


# a few fixed systems of each family, small enough to build anything on
FIXED = {
    "optical-ring": [OpticalRing(nodes=8, wavelengths=4), OpticalRing(nodes=7, wavelengths=4),
                     OpticalRing(nodes=16, wavelengths=8, fibers=2)],
    "network": [load_system("ring", nodes=8), load_system("torus", dims=(3, 3)),
                load_system("hypercube", nodes=8), load_system("fat-tree", nodes=16)],
    "mlfm": [load_system("mlfm", d=2), load_system("mlfm", d=3, selection=(2, 3, 2))],
    "optical-torus": [load_system("optical-torus", rows=2, cols=4, wavelengths=4)],
}
FIXED.update({fam: [_plain(k, 16) for k in kinds] for fam, kinds in FAMILY_KINDS.items() if fam not in FIXED})
assert set(FIXED) == set(FAMILY_KINDS) and all(FIXED.values())


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_algorithm_builds_on_every_declared_family_and_refuses_the_others(name):
    spec = REGISTRY[name]
    for family, systems_ in FIXED.items():
        assert all(family in (system.topology, model_for(system).name) for system in systems_), family
        if family in spec.systems:
            built = 0
            for system in systems_:
                for coll in spec.collectives:
                    if spec.requires is not None and spec.requires(system, collective_type(coll)):
                        continue  # declared unsupported here; another fixed system of the family is not
                    sched = build(name, system, coll, 1024)
                    assert verify(sched).transfers >= 1
                    built += 1
            assert built, (name, family)  # at least one fixed system of every declared family builds
        else:
            for system in systems_:
                if spec.runs_on(system):  # an MLFM is an electrical network: "network" covers it; so may a plug-in
                    assert "network" in spec.systems and "network" in model_for(system).accepts, (name, family)
                    continue
                with pytest.raises(UnsupportedError, match="does not run on"):
                    build(name, system, spec.collectives[0], 1024)
