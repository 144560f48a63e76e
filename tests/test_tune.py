"""collsim tune (issue #13): the pick per size, the rules and the store (the figure and the command:
tests/test_tune_command.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim.algorithms import get_algorithm
from collsim.core.size_sweep import sweep_sizes
from collsim.experiments.compare import applicable
from collsim.experiments.sweep.store import Store
from collsim.experiments.tune.run import TIE_RTOL, tunable, tune
from collsim.experiments.tune.rules import crossovers, rules, rules_document
from collsim.pipeline import run
from collsim.systems import load_system

pytestmark = pytest.mark.schedule_first(25)  # about 25 s of work: handed out early (tests/conftest.py)


def _reported(row) -> float:
    return getattr(row, "simulated_time_s", None) or row.time_s


def _without_matching(system, collective: str) -> list[str]:
    """Every algorithm ``tune`` would try but ``synth-matching``, whose 51 candidates a size take most of a
    tuning's time; the independent-runs test above tunes it on rings with everything else."""
    names = [n for n in tunable(system, collective)[0] if n != "synth-matching"]
    assert len(names) >= 2
    return names


@pytest.mark.parametrize("system, options, collective, sizes", [
    ("paper", {"nodes": 8, "wavelengths": 4}, "allgather", [1024, 1 << 20]),
    ("ring", {"nodes": 8}, "allreduce", [64, 1 << 20]),
    ("ring", {"nodes": 6}, "broadcast", [1024, 1 << 22]),
])
def test_the_pick_is_the_fastest_feasible_verified_row_of_independent_runs(system, options, collective, sizes):
    sysm = load_system(system, **options)
    result = tune(sysm, collective, sizes)
    for choice in result.choices:
        rows = []
        for name, why in applicable(sysm, collective):
            if why is not None:
                continue
            for params in get_algorithm(name).candidates(sysm, collective, choice.size_bytes):
                r = run(name, sysm, collective, choice.size_bytes, **params)
                if r.verified and getattr(r, "feasible", None) is not False:
                    rows.append((_reported(r), name, json.dumps(params, sort_keys=True), params))
        assert rows, "the case needs feasible rows"
        limit = min(rows)[0] * (1 + TIE_RTOL)  # near-equal times tie; the tie goes to the name, then parameters
        fastest = min((r for r in rows if r[0] <= limit), key=lambda r: r[1:3])
        assert choice.best is not None
        assert (choice.best.algorithm, choice.best.params) == (fastest[1], fastest[3])
        assert choice.best.time_s == pytest.approx(fastest[0], rel=1e-12)
        assert choice.eligible == len(rows)
        others = [r for r in rows if r[1] != fastest[1]]
        if others:
            limit = min(others)[0] * (1 + TIE_RTOL)
            assert choice.runner_up.algorithm == min((r for r in others if r[0] <= limit), key=lambda r: r[1:3])[1]
            assert choice.runner_up.time_s >= choice.best.time_s


def test_infeasible_rows_never_win_even_when_faster():
    # OpTree's lightpaths on 64 nodes are longer than the default device values allow; NE's are one hop.
    result = tune("paper", "allgather", [1 << 20], nodes=64, algorithms=["optree", "ne"])
    choice = result.choices[0]
    infeasible = [t for t in result.trials if t.feasible is False]
    assert infeasible and min(t.time_s for t in infeasible) < choice.best.time_s
    assert choice.best.algorithm == "ne" and choice.best.feasible is True
    assert choice.runner_up is None  # no other algorithm is eligible


@settings(max_examples=8)
@given(system=st.sampled_from([("paper", {"nodes": 8, "wavelengths": 2}), ("ring", {"nodes": 6}),
                               ("torus", {"nodes": 16}), ("hypercube", {"nodes": 8})]),
       collective=st.sampled_from(["allgather", "allreduce"]),
       first=st.integers(6, 14), factor=st.integers(2, 16), count=st.integers(1, 5))
def test_picks_are_eligible_minima_and_rules_cover_the_range(system, collective, first, factor, count):
    name, options = system
    sizes = [(1 << first) * factor ** i for i in range(count)]
    end = sizes[-1] * factor - 1
    sysm = load_system(name, **options)
    result = tune(sysm, collective, sizes, algorithms=_without_matching(sysm, collective))
    for choice in result.choices:
        here = [t for t in result.trials if t.size_bytes == choice.size_bytes]
        ok = [t for t in here if t.eligible]
        assert choice.best is not None and choice.best.eligible
        assert choice.best.time_s <= min(t.time_s for t in ok) * (1 + TIE_RTOL)
        assert all(t.eligible for t in (choice.best, choice.runner_up) if t is not None)
    found = rules(result, sizes[0], end)
    assert found[0].min_bytes == sizes[0] and found[-1].max_bytes == end
    for a, b in zip(found, found[1:]):
        assert b.min_bytes == a.max_bytes + 1 and a.min_bytes <= a.max_bytes
        assert b.min_total_bytes == a.max_total_bytes + 1  # nccl-tests' sizes are contiguous too
        assert (a.algorithm, a.params) != (b.algorithm, b.params)  # equal neighbours are merged
    measured = [p["size_bytes"] for r in found for p in r.points]
    assert measured == sizes
    for r in found:  # each measured size lies in its own pick's range
        for p in r.points:
            assert r.min_bytes <= p["size_bytes"] <= r.max_bytes


TORUS_SIZES = sweep_sizes(64, 1 << 24, factor=4)


@pytest.fixture(scope="module")
def torus_allreduce():
    """One tuning of the 16-node torus's all-reduce, 64 B to 16 MiB (it changes algorithm), read by two tests."""
    sysm = load_system("torus", nodes=16)
    return tune(sysm, "allreduce", TORUS_SIZES, algorithms=_without_matching(sysm, "allreduce"))


def test_crossovers_lie_between_the_measured_sizes_and_follow_the_lines(torus_allreduce):
    sizes, result = TORUS_SIZES, torus_allreduce
    found = crossovers(result)
    assert found, "this case changes algorithm"
    for cx in found:
        below = max(s for s in sizes if s < cx["size_bytes"])
        above = min(s for s in sizes if s >= cx["size_bytes"])
        assert below < cx["size_bytes"] <= above and above / below == 4
        assert cx["before"] != cx["after"]


def test_a_second_run_reads_every_trial_from_the_store(tmp_path):
    path = tmp_path / "tune.sqlite"
    sizes = [1024, 1 << 16, 1 << 20]
    with Store(path) as store:
        first = tune("paper", "allgather", sizes, nodes=8, wavelengths=4, store=store)
    with Store(path) as store:
        again = tune("paper", "allgather", sizes, nodes=8, wavelengths=4, store=store)
        assert len(store) == len(first.trials)
    assert first.built == len(first.trials) > 0 and first.from_store == 0
    assert again.built == 0 and again.from_store == len(first.trials)
    assert all(t.cached for t in again.trials)
    assert [c.to_json() for c in again.choices] == [c.to_json() for c in first.choices]
    with Store(path) as store:  # another system is another key: nothing is reused by mistake
        other = tune("paper", "allgather", sizes, nodes=8, wavelengths=2, store=store)
    assert other.built == len(other.trials)


def test_the_counts_say_what_became_of_each_trial(tmp_path):
    """Issue 31: "10 trials: 10 built and verified" when none could be built.  Each trial is counted once:
    built and verified, failed verification or could not be built now, or read from the store."""
    args = ("ocs", "alltoall", [1024, 4096])
    options = {"nodes": 8, "algorithms": ["pairwise", "synth-alltoall"]}  # synth-alltoall cannot fit one port
    with Store(tmp_path / "t.sqlite") as store:
        first = tune(*args, store=store, **options)
        again = tune(*args, store=store, **options)
    outcomes = [t.outcome for t in first.trials]
    assert outcomes.count("could not be built") == first.unbuilt > 0
    assert outcomes.count("built and verified") == first.built > 0 and first.failed == 0
    assert first.built + first.unbuilt == len(first.trials) and first.from_store == 0
    assert all(t.time_s is None for t in first.trials if t.outcome == "could not be built")
    assert (again.built, again.failed, again.unbuilt, again.from_store) == (0, 0, 0, len(first.trials))
    assert [t.outcome for t in again.trials] == outcomes  # the outcome is kept in the store


def test_a_tuning_where_nothing_fits_in_memory_is_refused_before_any_trial(monkeypatch):
    from collsim.core.limits import MemoryLimitError
    import collsim.experiments.tune.run as tune_module
    tried = []
    monkeypatch.setattr(tune_module, "applicable", lambda *a: tried.append(a) or [])
    with pytest.raises(MemoryLimitError, match="memory limit"):
        tune("ring", "allgather", [1, 2], nodes=3_000_000)
    assert not tried  # refused on the estimate, before any algorithm was looked at


def test_a_tuning_where_no_trial_can_be_built_is_refused():
    from collsim.core.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="port"):  # the first trial's own reason
        tune("ocs", "alltoall", [1024], nodes=8, algorithms=["synth-alltoall"])


def test_the_mpich_form_is_ordered_by_size_and_ends_with_any(torus_allreduce):
    result = torus_allreduce
    doc = rules_document(result, form="mpich")
    tree = doc["collective=allreduce"]["comm_type=intra"]["comm_size<=16"]
    keys = list(tree)
    assert keys[-1] == "avg_msg_size=any" and len(keys) == len(rules(result))
    limits = [int(k.split("<=")[1]) for k in keys[:-1]]
    assert limits == sorted(limits)
    assert all(len(v) == 1 and next(iter(v)).startswith("algorithm=collsim_") for v in tree.values())
