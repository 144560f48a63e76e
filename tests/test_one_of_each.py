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
    from collsim.experiments import paperout, papers
    from collsim.experiments.reproduce import paper_names
    from collsim.experiments.reproductions import REPRODUCTIONS, papers as paper_entries, tables
    assert {k: v[1] for k, v in papers.EXPERIMENTS.items()} == {k: r.description for k, r in tables().items()}
    assert all(papers.EXPERIMENTS[k][0] is r.load() for k, r in tables().items())
    assert papers.SIZE_NOTES == {k: r.size_note for k, r in tables().items()}
    assert paperout.PAPERS == {k: r.module for k, r in paper_entries().items() if r.target}
    assert PAPER_DESCRIPTIONS == {k: r.description for k, r in paper_entries().items()} and paper_names()[-1] == "all"
    assert all(r.paper in paper_entries() for r in REPRODUCTIONS.values())
    # no other module spells a table's description: each is written once, in the registry
    src = Path(papers.__file__).parent
    for path in src.glob("*.py"):
        if path.name != "reproductions.py":
            text = path.read_text()
            assert not any(r.description in text for r in tables().values()), path.name
