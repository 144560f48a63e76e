"""``collsim systems`` and ``collsim algorithms NAME``: parameters and defaults read from the code."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from collsim.algorithms import REGISTRY
from collsim.core.system import SYSTEM_KINDS
from collsim.systems import PRESETS, kind_names, kind_parameters, preset_description


def _systems(run_cli, *args):
    return {e["name"]: e for e in json.loads(run_cli("systems", *args, "--json", check=True).stdout)}


def test_systems_lists_every_kind_and_preset_with_every_field(run_cli):
    entries = _systems(run_cli)
    assert set(entries) == set(PRESETS) | set(kind_names())
    for name, e in entries.items():
        cls = SYSTEM_KINDS[e["kind"]]
        listed = [p["name"] for p in e["parameters"]]
        assert listed == list(kind_parameters(cls)), name
        assert {f.name for f in dataclasses.fields(cls)} <= set(listed)
        assert e["description"] and all(p["description"] for p in e["parameters"] if p["name"] != "name"), name


def test_system_defaults_are_the_dataclass_defaults(run_cli):
    entries = _systems(run_cli)
    ring = {p["name"]: p["default"] for p in entries["optical-ring"]["parameters"]}
    for f in dataclasses.fields(SYSTEM_KINDS["optical-ring"]):
        if f.default is not dataclasses.MISSING and f.name != "name":
            assert ring[f.name] == f.default, f.name
    assert ring["nodes"] == 1024
    torus = {p["name"]: p["default"] for p in entries["torus"]["parameters"]}
    assert torus["dims"] == [4, 4] and torus["nodes"] == 16 and torus["ndim"] is None
    terarack = {p["name"]: p["default"] for p in entries["terarack"]["parameters"]}
    assert terarack["fibers"] == preset_description("terarack")["fibers"] == 2


def test_systems_one_name_any_case_and_the_table(run_cli):
    assert list(_systems(run_cli, "Fat-Tree")) == ["fat-tree"]
    out = run_cli("systems", "mlfm", check=True).stdout
    assert "radix" in out and "selection" in out and "last_layer_servers" in out
    csv = run_cli("systems", "--format", "csv", check=True).stdout.splitlines()
    assert csv[0] == "system,kind,preset,parameter,default,type,description"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_algorithm_parameters_come_from_the_signature(run_cli, name):
    info = json.loads(run_cli("algorithms", name, "--json", check=True).stdout)
    spec = REGISTRY[name]
    sig = list(inspect.signature(spec.builder).parameters.values())[3:]
    assert [p["name"] for p in info["parameters"]] == [p.name for p in sig] == list(spec.params)
    for p, s in zip(info["parameters"], sig):
        assert p["default"] == (None if s.default is s.empty else s.default)
        assert p["description"], (name, p["name"])
    assert info["collectives"] == list(spec.collectives) and info["systems"] == list(spec.systems)
    assert [c["key"] for c in info["citations"]] == [c.key for c in spec.citations]
    assert all(c["authors"] and c["title"] and c["venue"] for c in info["citations"])


def test_algorithm_table_shows_scope_parameters_and_references(run_cli):
    out = run_cli("algorithms", "OpTree", check=True).stdout
    for word in ("optree", "collectives: allgather", "constraints:", "tree", "search", "radices", "[OpTree24]",
                 "IEEE Open Journal of the Communications Society", "2024"):
        assert word in out, word
