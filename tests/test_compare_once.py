"""Issue 23: the compare path builds the system once.

Before: one ``collsim compare`` (two algorithms) ran ``load_system`` 3-5 times, ``canonical_collective``
5 times in the compare path's own code (CLI, experiments, pipeline) and ``get_algorithm`` 8 times per
algorithm.  Now: ``load_system`` once, ``canonical_collective`` once in that code, ``get_algorithm`` at
most once per algorithm; a size sweep builds the system once for all its sizes.  The counts are of
calls from anywhere, except that ``canonical_collective`` is counted where the compare path calls it
(``collsim/cli``, ``collsim/experiments``, ``collsim/pipeline.py``): the algorithm layer's entry
(``build_logical``, ``AlgorithmSpec.check``) and the collective objects in ``collsim/core`` normalise
their own input.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import collsim
import collsim.algorithms.registry
import collsim.core.collective
import collsim.systems
from collsim.cli.main import cli
from collsim.core.size_sweep import SizeSweep

COMPARE_PATH = tuple(str(Path(collsim.__file__).parent / p) for p in ("cli", "experiments", "pipeline.py"))


@pytest.fixture
def counts(monkeypatch):
    """Count calls of load_system, canonical_collective and get_algorithm (per name), wherever imported."""
    counter: Counter = Counter()
    import collsim.cli.commands, collsim.cli.sizes, collsim.experiments.compare, collsim.pipeline  # noqa: E401,F401
    for mod, name in ((collsim.systems, "load_system"), (collsim.core.collective, "canonical_collective"),
                      (collsim.algorithms.registry, "get_algorithm")):
        original = getattr(mod, name)

        def wrapper(*args, _name=name, _original=original, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if _name != "canonical_collective" or caller.startswith(COMPARE_PATH):
                counter[_name] += 1
                if _name == "get_algorithm":
                    counter[f"get_algorithm {args[0]}"] += 1
            return _original(*args, **kwargs)
        for module in list(sys.modules.values()):
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, wrapper)
    return counter


def test_the_cli_compare_looks_each_thing_up_once(counts):
    got = CliRunner().invoke(cli, ["compare", "--system", "ring", "-n", "8", "-a", "ring,bruck", "-s", "1KiB"])
    assert got.exit_code == 0, got.output
    assert (counts["load_system"], counts["canonical_collective"]) == (1, 1)
    assert (counts["get_algorithm ring"], counts["get_algorithm bruck"]) == (1, 1)


def test_the_library_compare_looks_each_thing_up_once(counts):
    rows, _ = collsim.compare("ring", "all-gather", "1KiB", nodes=8, algorithms=["ring", "Bruck"])
    assert [r.algorithm for r in rows] == ["ring", "bruck"]
    assert (counts["load_system"], counts["canonical_collective"]) == (1, 1)
    assert (counts["get_algorithm ring"], counts["get_algorithm Bruck"], counts["get_algorithm"]) == (1, 1, 2)


def test_every_applicable_algorithm_and_a_sweep_still_build_the_system_once(counts):
    rows, _ = collsim.compare("ring", "allgather", nodes=8, sizes=SizeSweep("1KiB", "4KiB"))
    assert len({r.algorithm for r in rows}) > 3 and {r.size_bytes for r in rows} == {1024, 2048, 4096}
    assert (counts["load_system"], counts["canonical_collective"], counts["get_algorithm"]) == (1, 1, 0)


def test_the_cli_sweep_is_the_library_sweep(counts):
    got = CliRunner().invoke(cli, ["compare", "--system", "ring", "-n", "8", "-a", "ring", "-b", "1KiB", "-e",
                                   "4KiB", "--json"])
    assert got.exit_code == 0, got.output
    import json
    assert [r["size_bytes"] for r in json.loads(got.output)] == [1024, 2048, 4096]
    assert (counts["load_system"], counts["canonical_collective"], counts["get_algorithm"]) == (1, 1, 1)
    rows, _ = collsim.compare("ring", "allgather", nodes=8, algorithms="ring", sizes=["1KiB", 2048, "4KiB"])
    assert [r.size_bytes for r in rows] == [1024, 2048, 4096]


def test_the_progress_bar_count_builds_nothing_again(counts, monkeypatch):
    import collsim.cli.progress
    monkeypatch.setattr(collsim.cli.progress, "progress_enabled", lambda *a, **k: True)  # as on a terminal
    got = CliRunner().invoke(cli, ["compare", "--system", "ring", "-n", "8", "-s", "1KiB"])
    assert got.exit_code == 0, got.output
    assert (counts["load_system"], counts["canonical_collective"]) == (1, 1)


@pytest.fixture
def optree_builds(monkeypatch):
    """Count runs of OpTree's builder (its own row's and ``relay``'s base)."""
    import dataclasses
    from collsim.algorithms import REGISTRY
    spec = REGISTRY["optree"]
    calls: list[dict] = []

    def counting(*args, **kwargs):
        calls.append(dict(kwargs))
        return spec.builder(*args, **kwargs)
    monkeypatch.setitem(REGISTRY, "optree", dataclasses.replace(spec, builder=counting))
    return calls


def test_a_base_another_row_builds_is_built_once_with_the_same_rows(optree_builds):
    """``relay`` builds OpTree's schedule as its base: in one comparison with OpTree's own row it is
    built once, and every row is the row each algorithm gets alone."""
    from collsim.experiments.compare import compare
    kw = dict(nodes=64, wavelengths=8)
    together, _ = compare("paper", "allgather", "64KiB", algorithms="optree,osm,relay", **kw)
    assert [r.algorithm for r in together] == ["optree", "osm", "relay"] and all(r.verified for r in together)
    assert len(optree_builds) == 1
    alone = [compare("paper", "allgather", "64KiB", algorithms=a, **kw)[0][0] for a in ("optree", "osm", "relay")]
    assert len(optree_builds) == 3       # each alone builds its own
    assert [r.to_json() for r in together] == [r.to_json() for r in alone]


def test_bases_are_shared_only_inside_a_comparison_and_only_alike(optree_builds):
    from collsim import build
    from collsim.experiments.compare import compare
    build("optree", "paper", "allgather", "64KiB", nodes=64)
    build("relay", "paper", "allgather", "64KiB", nodes=64)
    assert len(optree_builds) == 2       # no comparison: nothing kept between builds
    rows, _ = compare("paper", "allgather", "64KiB", nodes=64, algorithms="optree,relay", params={"k": 2})
    assert [r.params["k"] for r in rows] == [2, 2] and len(optree_builds) == 3
    compare("paper", "allgather", "64KiB", nodes=64, algorithms="optree,relay", params={"radices": [4, 16]})
    assert len(optree_builds) == 4       # the same parameters: once
    rows, _ = compare("paper", "allgather", sizes=["16KiB", "64KiB"], nodes=64, algorithms="optree,relay")
    assert len(optree_builds) == 6 and all(r.verified for r in rows)   # once a size
