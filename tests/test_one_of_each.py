"""Issue 23: one of each thing that was written twice (the report class, the paper registry)."""

from __future__ import annotations

import math
import sys

import collsim
import collsim.pipeline


def test_one_verify_report_class():
    report_cls = sys.modules["collsim.verify"].VerifyReport
    assert collsim.VerifyReport is collsim.pipeline.VerifyReport is report_cls
    assert report_cls.__mro__[1] is object  # no subclass that only adds fields
    report = collsim.verify(collsim.build("ring", "paper", "allgather", 1024, nodes=8))
    assert type(report) is report_cls and report.time_s > 0 and report.closed_form_time_s > 0
    untimed = collsim.verify(collsim.build("ring", "paper", "allgather", 1024, nodes=8), answer=False)
    assert math.isnan(untimed.time_s) and untimed.describes(collsim.build("ring", "paper", "allgather", 1024, nodes=8))


def test_one_reproduction_registry():
    from pathlib import Path

    from collsim.cli.paper_cmd import PAPER_DESCRIPTIONS
    from collsim.experiments.papers import reproduce
    from collsim.experiments.papers.reproduce import paper_names
    from collsim.experiments.papers.registry import REPRODUCTIONS, papers as paper_entries, tables
    assert {k: v[1] for k, v in reproduce.EXPERIMENTS.items()} == {k: r.description for k, r in tables().items()}
    assert all(reproduce.EXPERIMENTS[k][0] is r.load() for k, r in tables().items())
    assert reproduce.SIZE_NOTES == {k: r.size_note for k, r in tables().items()}
    assert reproduce.PAPERS == {k: r.module for k, r in paper_entries().items() if r.target}
    assert PAPER_DESCRIPTIONS == {k: r.description for k, r in paper_entries().items()} and paper_names()[-1] == "all"
    assert all(r.paper in paper_entries() for r in REPRODUCTIONS.values())
    # no other module spells a table's description: each is written once, in the registry
    src = Path(reproduce.__file__).parents[1]   # collsim/experiments
    registry = Path(reproduce.__file__).with_name("registry.py")
    assert registry.exists()
    for path in src.rglob("*.py"):
        if path != registry:
            text = path.read_text()
            assert not any(r.description in text for r in tables().values()), path.name


def test_system_options_are_one_argument():
    import inspect

    import click

    from collsim.cli import commands, options
    from collsim.systems import load_system
    from collsim.systems.options import SystemOptions
    loose = {"nodes", "wavelengths", "fibers", "link_bandwidth", "link_latency", "startup", "radix", "select",
             "system_params", "strategy"}

    def leaves(cmd):
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                yield from leaves(sub)
        else:
            yield cmd
    taking = [c for top in commands.ALL for c in leaves(top)
              if any(p.name == "nodes" and isinstance(p, options.ScopedOption) for p in c.params)]
    assert len(taking) >= 9  # compare, schedule, topology, simulate, mpi, export msccl/simgrid, import msccl, ...
    for cmd in taking:
        assert "system" in inspect.signature(cmd.callback).parameters, cmd.name
        assert not loose & set(inspect.signature(cmd.callback).parameters), cmd.name
    assert not hasattr(options, "overrides")  # no repacking of loose keywords left
    opts = options.pack("torus", link_latency="2us", system_params=("dims=4,4",))
    assert isinstance(opts, SystemOptions) and load_system(opts).nodes == 16
    assert load_system(opts, nodes=None).link_latency_s == 2e-6
    assert load_system(SystemOptions.of(opts, dims=(2, 2))).nodes == 4 and opts.params == (("dims", (4, 4)),)


def test_a_command_receives_the_packed_options(monkeypatch):
    from click.testing import CliRunner

    from collsim.cli.main import cli
    from collsim.systems.options import SystemOptions
    seen = []
    import collsim.cli.options as options
    original = options.load
    monkeypatch.setattr(options, "load", lambda o, **k: seen.append(o) or original(o, **k))
    import collsim.cli.commands as commands
    monkeypatch.setattr(commands, "load", options.load)
    got = CliRunner().invoke(cli, ["topology", "--system", "fat-tree", "--radix", "4", "--json"])
    assert got.exit_code == 0, got.output
    assert seen == [SystemOptions("fat-tree", radix=4)]


def test_one_result_class():
    import collsim.experiments.compare
    import collsim.kinds.result
    assert collsim.Result is collsim.pipeline.Result is collsim.experiments.compare.Result \
        is collsim.kinds.result.Result
    assert collsim.Result.__mro__[1] is object  # no subclass that only adds fields
    row = collsim.evaluate(collsim.build("binomial", "star", "broadcast", "1KiB", nodes=8, root=3))
    assert (row.size_bytes, row.total_bytes, row.root, row.shift) == (1024, 1024, 3, None)
    rows, _ = collsim.compare("ring", "allgather", "1KiB", nodes=4, algorithms="ring")
    assert type(rows[0]) is collsim.Result and rows[0].total_bytes == 4096
    keys = list(rows[0].to_json())
    assert keys[keys.index("size_bytes"):keys.index("size_bytes") + 4] == ["size_bytes", "total_bytes", "root",
                                                                           "shift"]
