"""Every algorithm's hooks receive the collective as its object and never compare it with a name.

While this test runs, a ``CollectiveType`` refuses to equal a string, to hash as a dictionary key
a name could match, or to be formatted into text: a builder, ``requires``, ``tune``,
``deliveries`` or closed form that still branched on the name (``collective == "allgather"``,
``TABLE[collective]``, ``f"{collective}"``) raises instead of silently taking the wrong branch.
Each registered (algorithm, collective) pair runs through the whole pipeline (build, verify,
evaluate with its closed form) and the tuner's candidates, on the first small system it accepts.
"""

from __future__ import annotations

import pytest

from collsim.algorithms import REGISTRY
from collsim.core.collective import collective_type
from collsim.core.collectives import CollectiveType
from collsim.core.errors import CollsimError
from collsim.core.system import SYSTEM_KINDS
from collsim.kinds.optical_ring import OpticalRing
from collsim.pipeline import run
from collsim.systems import load_system

CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives]


def _strict_eq(self, other):
    if isinstance(other, str):
        raise AssertionError(f"{self!r} compared with the name {other!r}")
    return self is other


def _no_text(self, *args):
    raise AssertionError(f"{self!r} formatted as text (use .name)")


def _system(kind: str, nodes: int):
    if kind == "optical-ring":
        return OpticalRing(nodes=nodes, wavelengths=8)
    if kind in ("torus", "mesh"):
        return load_system(kind, dims=(nodes // 4, 4))
    if kind == "mlfm":
        return load_system("mlfm", d=2)
    if kind == "optical-torus":
        return load_system(kind, rows=nodes // 4, cols=4, wavelengths=4)
    cls = SYSTEM_KINDS[kind]
    return cls.from_options(nodes=nodes) if hasattr(cls, "from_options") else cls(nodes=nodes)


def _instance(name: str, coll: CollectiveType):
    """The first small system of any kind that the algorithm builds ``coll`` on."""
    spec = REGISTRY[name]
    for kind in sorted(set(SYSTEM_KINDS) - {"abstract", "custom"}):
        for nodes in (8, 16, 4):
            try:
                system = _system(kind, nodes)
            except CollsimError:
                continue
            if spec.refusal(system, coll) is None:
                return system
    pytest.fail(f"{name} builds {coll.name} on no small system")


@pytest.mark.parametrize("name,coll", CASES)
def test_hooks_never_read_the_collective_as_a_name(name, coll, monkeypatch):
    obj = collective_type(coll)
    system = _instance(name, obj)
    monkeypatch.setattr(CollectiveType, "__eq__", _strict_eq)
    monkeypatch.setattr(CollectiveType, "__hash__", lambda self: hash(self.name))  # lookups in name-keyed dicts
    monkeypatch.setattr(CollectiveType, "__str__", _no_text)
    monkeypatch.setattr(CollectiveType, "__format__", _no_text)
    spec = REGISTRY[name]
    candidates = spec.candidates(system, obj, 4096)
    result = run(name, system, coll, 4096)
    assert result.verified and result.time_s > 0 and candidates
