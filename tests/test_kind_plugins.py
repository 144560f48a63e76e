"""Every kind of system is a plug-in: a toy kind registered here, and nowhere else, flows through
build, verify, evaluate, the table, its legend and the JSON keys.  That no generic module names a
kind is an import rule (tests/test_layers.py)."""

from __future__ import annotations


import pytest

import collsim
from collsim.core.plugins import CAPABILITIES, require
from collsim.core.errors import UnsupportedError
from collsim.core.system import SYSTEM_KINDS
from collsim.kinds.base import models
from conftest import raises_naming


def test_require_names_the_kinds_that_support_a_capability():
    ring = collsim.systems.load_system("paper", nodes=4)
    with raises_naming(UnsupportedError, "the flow simulator", "optical-ring", "network"):   # what, where not, where
        require(ring, "flow-simulation", "the flow simulator")
    assert all(m.capabilities <= CAPABILITIES for m in models())


# --- a toy kind: a package in tests/ (tests/toy_kind) that registers itself on import ----------------

@pytest.fixture
def toy():
    import toy_kind                        # registers the kind on first import
    if "toy-ring" not in SYSTEM_KINDS:     # imported, then unregistered, by an earlier test of this process
        toy_kind.register()
    yield toy_kind.ToyRing
    toy_kind.unregister()
    assert "toy" not in [m.name for m in models()]


def test_a_toy_kind_flows_through_build_verify_evaluate_table_legend_and_json(capsys, toy):
    # the toy kind's package registered it: no line of collsim names it
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
    assert data["toy_links"] == 8 and "wavelengths" not in data and "toy_links" in part_keys()
    from collsim.algorithms import get_algorithm
    assert get_algorithm("pairwise").supports(system, "alltoall")
    with pytest.raises(UnsupportedError, match="not supported on toy systems"):
        require(system, "msccl", "MSCCL export")


def test_rows_carry_their_own_keys_and_a_new_kind_changes_no_other_output(toy):
    import toy_kind
    from collsim.systems import load_system
    ring = collsim.run("ring", load_system("paper", nodes=8), "allgather", 1024).to_json()
    torus = collsim.run("ring", load_system("torus", dims=(2, 4)), "allgather", 1024).to_json()
    ocs = collsim.run("ring", load_system("ocs", nodes=8, ports=2), "allgather", 1024).to_json()
    assert "wavelengths" in ring and not {"simulated_time_s", "reconfiguration_time_s", "toy_links"} & set(ring)
    assert "simulated_time_s" in torus and not {"wavelengths", "reconfiguration_time_s", "toy_links"} & set(torus)
    assert "reconfiguration_time_s" in ocs and not {"wavelengths", "paper_steps", "toy_links"} & set(ocs)
    toy_kind.unregister()               # the same rows without the toy kind registered: byte-identical
    try:
        assert collsim.run("ring", load_system("paper", nodes=8), "allgather", 1024).to_json() == ring
        assert collsim.run("ring", load_system("torus", dims=(2, 4)), "allgather", 1024).to_json() == torus
    finally:
        toy_kind.register()

