"""Every kind of system is a plug-in: a toy kind registered here, and nowhere else, flows through
build, verify, evaluate, the table, its legend and the JSON keys.  That no generic module names a
kind is an import rule (tests/test_layers.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

import collsim
from collsim.core.plugins import _MODELS, _ROUTE_FORMATS, CAPABILITIES, require
from collsim.core.errors import UnsupportedError
from collsim.core.system import SYSTEM_KINDS, register_system_kind
from collsim.kinds.base import models
from conftest import raises_naming


def test_require_names_the_kinds_that_support_a_capability():
    ring = collsim.systems.load_system("paper", nodes=4)
    with raises_naming(UnsupportedError, "the flow simulator", "optical-ring", "network"):   # what, where not, where
        require(ring, "flow-simulation", "the flow simulator")
    assert all(m.capabilities <= CAPABILITIES for m in models())


# --- a toy kind, registered here and nowhere else ---------------------------------------------------

def _toy_kind():
    from collsim.kinds.base import Column, register_model
    from collsim.kinds.network.model import NetworkModel, NetworkPart
    from collsim.kinds.network.electrical import Ring

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
