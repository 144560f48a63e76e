"""Every kind of system is a complete plug-in (issue 23): nothing outside ``kinds/`` names a kind.

What counts as naming a kind (a *kind dispatch site*) is defined, and counted, by
``benchmarks/arch_counts.py`` (read its docstring): comparing a system's ``kind``/``family`` (or a
model's ``name``) with a literal that names a kind, ``isinstance`` or an identity test against a
concrete system, route, part or model class, importing a kind's model, part or route class (or
anything from a concrete module of ``kinds/``), and ``getattr``/``hasattr`` probes of attributes
that only some kinds have.  Docstrings and comments do not count.

The rules checked here:

- a module outside ``kinds/`` may name a kind only if a kind owns it
  (:meth:`collsim.kinds.base.KindModel.owns`: listed in the model's ``modules``, or named after
  the kind), and a class or route class it names must be of a kind that owns it;
- the generic modules (:data:`GENERIC`: the pipeline, the CLI's tables, the simulators, the
  schedule and its file formats, the registry...) are owned by no kind and name none;
- a toy kind registered in a few lines flows through build, verify, evaluate, the table, its
  legend and the JSON keys with no edit anywhere else.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

import collsim
from collsim.core.plugins import _MODELS, _ROUTE_FORMATS, CAPABILITIES, require
from collsim.core.errors import UnsupportedError
from collsim.core.system import SYSTEM_KINDS, register_system_kind
from collsim.kinds.base import models
from conftest import raises_naming

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "collsim"
_spec = importlib.util.spec_from_file_location("arch_counts", ROOT / "benchmarks" / "arch_counts.py")
arch = sys.modules.setdefault("arch_counts", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(arch)

GENERIC = ("pipeline.py", "synthesis.py", "cli/", "sim/", "verify/__init__.py", "verify/dataflow.py",
           "verify/reduction.py", "verify/pairs.py", "interop/trace.py", "interop/msccl.py", "experiments/compare.py",
           "experiments/sweep", "algorithms/registry.py", "algorithms/__init__.py", "core/schedule.py",
           "core/fields.py", "core/serialize.py", "core/binary.py", "core/wellformed.py", "core/plugins.py",
           "core/route_base.py", "core/routes.py", "core/csr.py", "core/system.py", "core/collective.py")
"""Modules (or package prefixes) that serve every kind alike."""


@pytest.fixture(scope="module")
def vocab():
    return arch.vocabulary()


@pytest.fixture(scope="module")
def found(vocab):
    return arch.sites(SRC, vocab)


def _generic(found, vocab):
    return arch.split(found, vocab)[0]


def test_no_module_outside_the_kinds_names_a_kind_it_does_not_own(found, vocab):
    generic = _generic(found, vocab)
    assert not generic, "modules no kind owns name a kind (list them in a model's modules, or ask the " \
                        "model):\n" + "\n".join(map(str, generic))


def test_the_generic_modules_are_nobodys_and_name_no_kind(found, vocab):
    owned = sorted(m for m in vocab.owner if m.startswith(GENERIC))
    assert not owned, f"generic modules owned by a kind: {owned}"
    named = [str(s) for s in found if s.module.startswith(GENERIC)]
    assert not named, "generic modules name a kind:\n" + "\n".join(named)


def test_classes_named_in_an_owned_module_are_its_owners(found, vocab):
    bad = []
    for s in found:
        if s.category not in ("class", "import"):
            continue  # a literal such as "ring" may name a topology inside a kind's own options
        names = [n.rsplit(".", 1)[-1] for n in s.names.split(", ")]
        kinds = set().union(*(vocab.kind_of.get(n, frozenset()) for n in names))
        if kinds and not kinds & set(vocab.owner.get(s.module, ())):
            bad.append(f"{s} (of {sorted(kinds)}, owned by {vocab.owner.get(s.module)})")
    assert not bad, "\n".join(bad)


def test_every_listed_module_exists():
    missing = [(m.name, mod) for m in models() for mod in m.modules
               if not (SRC / mod).is_file() and not (SRC / (mod.replace(".", "/") + ".py")).is_file()]
    assert not missing


def test_the_counter_sees_each_kind_of_site(vocab):
    src = "\n".join([
        'from ..core.routes import LinkRoutes',                  # import of a route class
        'from ..kinds.network import below_bound',               # import from a concrete kind
        'if system.kind == "torus": pass',                       # compare a kind with a literal
        'if model_for(s).name in ("network", "x"): pass',        # a model's name
        'ok = isinstance(schedule.routes, RingRoutes)',          # class test
        'w = getattr(system, "wavelengths", 0)',                 # probe
        'd = {"optical-ring": 1, "network": 2}',                 # dispatch dict
        'if coll.kind == "allgather": pass',                     # a collective: not a kind
        'n = getattr(system, "nodes")',                          # every system has nodes: no probe
        'if getattr(ring, "kind", None) != "optical-ring": pass',  # the kind read through getattr
    ])
    cats = [s.category for s in arch.module_sites("cli/x.py", src, vocab)]
    assert cats == ["import", "import", "compare", "compare", "class", "probe", "compare", "compare"]


def test_the_counter_runs_and_finds_no_unowned_site(found, vocab):
    assert len(_generic(found, vocab)) == 0
    assert arch.main([str(SRC)]) == 0


def test_require_names_the_kinds_that_support_a_capability():
    ring = collsim.systems.load_system("paper", nodes=4)
    with raises_naming(UnsupportedError, "the flow simulator", "optical-ring", "network"):   # what, where not, where
        require(ring, "flow-simulation", "the flow simulator")
    assert all(m.capabilities <= CAPABILITIES for m in models())


# --- a toy kind, registered here and nowhere else ---------------------------------------------------

def _toy_kind():
    from collsim.kinds.base import Column, register_model
    from collsim.kinds.network import NetworkModel, NetworkPart
    from collsim.systems.electrical import Ring

    @dataclass(frozen=True)
    class ToyRing(Ring):
        kind: ClassVar[str] = "toy-ring"

    @dataclass(frozen=True)
    class ToyPart(NetworkPart):
        toy_links: int = 0

        @staticmethod
        def columns() -> list[Column]:
            return NetworkPart.columns() + [Column("toy_links", "toy", lambda r: str(r.toy_links), "Toy links.")]

    class ToyModel(NetworkModel):
        name = "toy"
        part_class = ToyPart
        legend_title = "compare on toy rings"
        capabilities = frozenset({"flow-simulation"})
        accepts = ("network",)       # every point-to-point algorithm runs on it

        def row_part(self, schedule, spec, chosen):
            base = super().row_part(schedule, spec, chosen)
            return ToyPart(**{**base.__dict__, "toy_links": len(schedule.system.links)})

    register_system_kind(ToyRing)
    register_model(ToyRing, ToyModel())
    return ToyRing


def test_a_toy_kind_flows_through_build_verify_evaluate_table_legend_and_json(capsys):
    toy = _toy_kind()
    try:
        from collsim.cli.columns import compare_table, legend, legend_kind, legend_markdown
        from collsim.kinds.result import part_keys
        system = toy(nodes=4, name="toy4")
        sched = collsim.build("ring", system, "allgather", 1024)
        assert collsim.verify(sched).steps == 3
        row = collsim.evaluate(sched)
        assert row.verified and row.toy_links == 8 and row.time_s == row.simulated_time_s
        assert legend_kind(row) == "toy" and ("toy", "toy_links") in [(h, k) for h, k, _, _ in legend("toy")]
        assert "### compare on toy rings" in legend_markdown()
        compare_table([row])
        assert "toy" in capsys.readouterr().out
        data = row.to_json()
        assert data["toy_links"] == 8 and data["wavelengths"] is None and "toy_links" in part_keys()
        from collsim.algorithms import get_algorithm
        assert get_algorithm("pairwise").supports(system, "alltoall")
        with pytest.raises(UnsupportedError, match="not supported on toy systems"):
            require(system, "msccl", "MSCCL export")
    finally:
        _MODELS.pop(toy, None)
        _ROUTE_FORMATS.pop(toy, None)
        SYSTEM_KINDS.pop("toy-ring", None)
    assert "toy" not in [m.name for m in models()]
