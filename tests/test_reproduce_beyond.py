"""collsim's evaluation beyond the papers (issue #13): collsim.experiments.papers.beyond.grid, build_pool and reproduce_beyond.

The bound must hold for every registered optical algorithm and every parameter set it
proposes (efficiency <= 1), re-timing must equal a rebuild, "best" must be the fastest
feasible schedule, and the tuned slot-latency lines must contain the true lower envelope.
"""

from __future__ import annotations

import csv
import math

import pytest

from collsim.experiments.papers.beyond.grid import best_rows, candidates, efficiency_grid
from collsim.experiments.papers.beyond.slot_latency import crossovers, slot_latency_crossover
from collsim.pipeline import run
from collsim.systems import load_system

pytestmark = pytest.mark.schedule_first(20)  # about 20 s of work: handed out early (tests/conftest.py)

SMALL = [(6, 2, (1024, 1 << 16)), (8, 4, (1024, 1 << 16)), (9, 1, (1024, 1 << 16)), (16, 64, (4096, 1 << 20))]


@pytest.fixture(scope="module")
def grids():
    return {c: efficiency_grid(SMALL, c) for c in ("allgather", "allreduce", "reducescatter", "alltoall")}


@pytest.mark.parametrize("collective", ["allgather", "allreduce", "reducescatter", "alltoall"])
def test_no_algorithm_beats_the_lower_bound(grids, collective):
    rows = grids[collective]
    assert rows, collective
    algs = {r["algorithm"] for r in rows}
    assert {"striped-ring", "osm"} <= algs or collective == "alltoall"
    for r in rows:
        assert r["efficiency"] <= 1 + 1e-9, r
        assert r["time_s"] >= r["lower_bound_s"] * (1 - 1e-12)


def test_every_point_has_every_applicable_algorithm(grids):
    for (n, w, sizes) in SMALL:
        names = {a for a, _ in candidates(load_system("paper", nodes=n, wavelengths=w), "allgather", sizes)}
        for size in sizes:
            got = {r["algorithm"] for r in grids["allgather"] if (r["nodes"], r["wavelengths"], r["size_bytes"])
                   == (n, w, size)}
            assert got == names, (n, w, size)


def test_retimed_rows_equal_a_fresh_build_with_the_same_parameters(grids):
    import json
    for r in grids["allgather"] + grids["allreduce"]:
        if r["nodes"] not in (8, 9):
            continue
        system = load_system("paper", nodes=r["nodes"], wavelengths=r["wavelengths"])
        fresh = run(r["algorithm"], system, r["collective"], r["size_bytes"], **json.loads(r["params"]))
        assert fresh.time_s == pytest.approx(r["time_s"], rel=1e-12), r
        assert fresh.feasible == r["feasible"] and fresh.slots == r["slots"]


def test_best_is_the_fastest_feasible_row(grids):
    rows = grids["allgather"]
    best = best_rows(rows)
    assert len(best) == sum(len(s) for _, _, s in SMALL)
    for b in best:
        here = [r for r in rows if (r["nodes"], r["wavelengths"], r["size_bytes"])
                == (b["nodes"], b["wavelengths"], b["size_bytes"])]
        assert b["feasible"]
        fastest = min(r["time_s"] for r in here if r["feasible"])
        assert fastest <= b["time_s"] <= fastest * (1 + 1e-9)  # equal within rounding: fewer slots wins
        assert b["slots"] == min(r["slots"] for r in here if r["feasible"] and r["time_s"] <= fastest * (1 + 1e-9))
        if b["runner_up"] is not None:
            assert b["runner_up_time_s"] >= fastest and b["runner_up"] != b["algorithm"]


def test_infeasible_schedules_never_win():
    rows = [{"nodes": 8, "wavelengths": 1, "size_bytes": 1, "algorithm": "a", "feasible": False, "time_s": 1.0,
             "slots": 1},
            {"nodes": 8, "wavelengths": 1, "size_bytes": 1, "algorithm": "b", "feasible": True, "time_s": 2.0,
             "slots": 1}]
    assert [b["algorithm"] for b in best_rows(rows)] == ["b"]
    assert best_rows(rows[:1]) == []


def test_the_bidirectional_pipeline_meets_the_all_gather_bound_exactly():
    """striped-stages with one stage: ceil((N-1)/2) slots whose pieces fill every channel.

    On the paper system with sizes that divide evenly the bandwidth term is exactly
    (N-1) m tau / (2 F w) (docs/derivations/striped-stages.md), so efficiency is 1.
    """
    rows = efficiency_grid([(64, 64, (1 << 20,))], "allgather", algorithms=["striped-stages"])
    assert max(r["efficiency"] for r in rows) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("size", ["32KiB", "4MiB"])
def test_tuned_slot_latency_lines_contain_the_lower_envelope(size):
    """Brute force: every candidate's line; the kept lines' minimum must equal the true minimum."""
    from collsim.algorithms import get_algorithm
    from collsim.experiments.compare import applicable
    from collsim.experiments.papers.beyond.slot_latency import _label
    from collsim.pipeline import build, verify
    from collsim.kinds.optical_ring.cost import step_times
    lats = (0.0, 1e-6, 3e-6, 1e-5)
    rows = slot_latency_crossover(32, 8, size, lats, tuned=True)
    ring = load_system("paper", nodes=32, wavelengths=8)
    m = 32768 if size == "32KiB" else 4 << 20
    every = {}
    for name, why in applicable(ring, "allgather"):
        if why is None:
            for p in get_algorithm(name).candidates(ring, "allgather", m):
                s = build(name, ring, "allgather", m, **p)
                verify(s)
                every[_label(name, p)] = (s.num_steps, step_times(s).total_s)
    kept = {r["algorithm"] for r in rows}
    assert kept <= set(every)
    for lat in lats + tuple(c["latency_s"] for c in crossovers(rows)):
        truth = min(t0 + s * lat for s, t0 in every.values())
        mine = min(every[k][1] + every[k][0] * lat for k in kept)
        assert mine == pytest.approx(truth, rel=1e-12), lat
    assert all(isinstance(r["feasible"], bool) for r in rows)


def test_reproduce_beyond_quick_writes_its_files_and_a_second_run_reads_its_store(tmp_path):
    """The quick run through the API as ``collsim reproduce`` makes it (the store in the output folder, a
    log line per finished part), then the command line into the same folder: every build is read back.
    (One quick run fewer than a fresh API run beside two command-line runs: the same checks.)"""
    import subprocess

    from collsim.cli.paper_cmd import STORE_NAME
    from collsim.experiments.papers.beyond.reproduce import BEST_COLUMNS, reproduce
    from collsim.experiments.sweep.store import Store
    from conftest import collsim_exe
    out = tmp_path / "rb"
    logs: list[list[str]] = [[]]
    out.mkdir()
    with Store(out / STORE_NAME) as store:
        res = reproduce(out, quick=True, store=store, log=logs[0].append)
    for name in res.figures:
        assert (out / f"{name}.png").stat().st_size > 10_000
        assert (out / f"{name}.svg").exists()
    with open(out / "beyond-best.csv") as fh:
        best = list(csv.DictReader(fh))
    assert list(best[0]) == list(BEST_COLUMNS)
    assert best and all(r["algorithm"] and float(r["efficiency"]) <= 1 + 1e-9 for r in best)
    for r in best:
        # OpTree is at most optree_over_bound times the bound, so no schedule can beat it by more
        speed, cap = float(r["speedup_vs_optree"]), float(r["optree_over_bound"])
        assert speed <= cap * (1 + 1e-9)
    assert any("speed-up" in n for n in res.notes)
    assert not math.isnan(float(best[0]["time_s"]))
    # the command line, into the same folder: its store is the one the first run kept
    proc = subprocess.run([collsim_exe(), "reproduce", "beyond", "--quick", "--out", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    logs.append(proc.stderr.splitlines())
    assert (out / STORE_NAME).stat().st_size > 0
    assert "no paper prints these numbers" in proc.stdout
    # stderr is not a terminal: one line per finished part, not silence (issue 21)
    for lines in logs:
        assert sum(line.startswith("beyond: allgather N=") for line in lines) == 4, lines
        assert sum(line.startswith("beyond: allreduce N=256 w=64") for line in lines) == 1, lines
        assert any(line.startswith("beyond: slot latency at 4MiB done") for line in lines), lines
    assert any("builds done" in line for line in logs[0]) and any("builds done" in line for line in logs[1])
    assert all(" 0 from the store" in line for line in logs[0] if "builds done" in line)
    assert all("(0 built," in line for line in logs[1] if "builds done" in line)


def test_a_second_run_reads_every_build_from_the_store(tmp_path, monkeypatch):
    """efficiency_grid and the tuned slot-latency lines keep their builds in the results store."""
    import collsim.experiments.papers.beyond.build_pool as build_pool
    import collsim.experiments.papers.beyond.slot_latency as sl
    from collsim.experiments.sweep.store import Store
    pts = [(8, 2, (1024, 1 << 16))]
    with Store(tmp_path / "r.sqlite") as store:
        first = efficiency_grid(pts, store=store)
        lines = slot_latency_crossover(8, 2, "64KiB", (0.0, 1e-5), tuned=True, store=store)
        n = len(store)

        def refuse(*args, **kwargs):
            raise AssertionError("built again although the store has it")
        monkeypatch.setattr(build_pool, "build_profile", refuse)
        monkeypatch.setattr(sl, "build", refuse)
        assert efficiency_grid(pts, store=store) == first
        assert slot_latency_crossover(8, 2, "64KiB", (0.0, 1e-5), tuned=True, store=store) == lines
        assert len(store) == n


# ------------------------------------------------------------------ builds in processes of their own (issue 21)

TASK = ("ring", {}, 8, 2, "allgather", 1024, "paper")


def test_every_build_runs_in_a_process_that_ends_with_it(monkeypatch):
    """Nothing a build allocates (schedule, verifier state, caches, kept heap) outlives it in this process."""
    import os

    import collsim.experiments.papers.beyond.build_pool as build_pool
    monkeypatch.setattr(build_pool, "BATCH_BYTES", 0)  # one build per process
    monkeypatch.setattr(build_pool, "timed_build", lambda task, sizes: {"pid": os.getpid()})
    got: dict = {}
    build_pool.run_builds([(i, TASK, [1024]) for i in range(3)], got.__setitem__, jobs=2)
    pids = {r["pid"] for r in got.values()}
    assert sorted(got) == [0, 1, 2] and len(pids) == 3 and os.getpid() not in pids


def test_builds_too_big_to_share_the_budget_run_one_at_a_time(tmp_path, monkeypatch):
    import collsim.experiments.papers.beyond.build_pool as build_pool
    log = tmp_path / "log"

    def logged(task, sizes):
        with open(log, "a") as fh:
            fh.write("start\n")
        out = build_pool.build_profile(task)
        with open(log, "a") as fh:
            fh.write("end\n")
        return {"slots": out["slots"]}
    monkeypatch.setattr(build_pool, "BATCH_BYTES", 0)
    monkeypatch.setattr(build_pool, "timed_build", logged)
    got: dict = {}
    build_pool.run_builds([(i, TASK, [1024]) for i in range(4)], got.__setitem__, jobs=2, budget=1)
    assert log.read_text() == "start\nend\n" * 4 and len(got) == 4


@pytest.mark.parametrize("budget, large", [(1, True), (2**40, False)])
def test_a_build_that_runs_alone_maps_its_large_blocks(monkeypatch, budget, large):
    """A build estimated above half the budget runs alone, with its large arrays mapped on their own
    (collsim._malloc.map_large_blocks: a lower peak than the command's kept heap); smaller builds
    keep the heap as the command tuned it."""
    import collsim._malloc as malloc
    import collsim.experiments.papers.beyond.build_pool as build_pool
    called = []
    monkeypatch.setattr(malloc, "map_large_blocks", lambda: called.append(1) or True)
    monkeypatch.setattr(build_pool, "BATCH_BYTES", 0)
    monkeypatch.setattr(build_pool, "timed_build", lambda task, sizes: {"mapped": bool(called)})  # in the child
    got: dict = {}
    build_pool.run_builds([(i, TASK, [1024]) for i in range(2)], got.__setitem__, jobs=2, budget=budget)
    assert got == {0: {"mapped": large}, 1: {"mapped": large}} and not called   # the parent's heap untouched


def test_mapping_large_blocks_is_accepted_by_glibc():
    import platform
    from collsim._malloc import map_large_blocks
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt is glibc's")
    assert map_large_blocks() is True


def test_each_build_is_stored_as_it_finishes_and_a_dead_one_is_named(tmp_path, monkeypatch):
    """A build process killed (as by the kernel out of memory) loses only itself: the rest are stored."""
    import os
    import signal

    import collsim.experiments.papers.beyond.build_pool as build_pool
    from collsim.experiments.sweep.store import Store
    real = build_pool.timed_build

    def dies_on_wrht(task, sizes):
        if task[0] == "wrht":
            os.kill(os.getpid(), signal.SIGKILL)
        return real(task, sizes)
    monkeypatch.setattr(build_pool, "BATCH_BYTES", 0)
    monkeypatch.setattr(build_pool, "timed_build", dies_on_wrht)
    with Store(tmp_path / "r.sqlite") as store:
        with pytest.raises(build_pool.BuildDiedError, match=r"wrht .* exit status -9"):
            efficiency_grid([(8, 2, (1024,))], algorithms=["ring", "ne", "wrht"], store=store)
        kept = len(store)
        builds = lambda: [r for r in store.records() if r["point"].get("experiment") != "beyond-candidates"]  # noqa: E731
        assert {r["point"]["experiment"] for r in store.records()} - {r["point"].get("experiment")
                                                                      for r in builds()} == {"beyond-candidates"}
        assert {r["point"]["algorithm"] for r in builds()} == {"ne", "ring"}
        monkeypatch.setattr(build_pool, "timed_build", real)
        rows = efficiency_grid([(8, 2, (1024,))], algorithms=["ring", "ne", "wrht"], store=store, log=print)
        assert {r["algorithm"] for r in rows} == {"ring", "ne", "wrht"} and len(store) > kept
        assert {r["point"]["algorithm"] for r in builds()} == {"ne", "ring", "wrht"}


def _task(alg, params, n=4096, coll="allgather"):
    return (alg, params, n, 64, coll, 4 << 20, "paper")


def test_estimates_are_learned_per_family_and_never_raised():
    """After a build of a family reports its peak, the family's later builds are estimated at 1.25 times
    its peak a delivery (below the 400-byte default only); another base, stage or collective is
    another family."""
    from collsim.core.collective import min_deliveries
    from collsim.experiments.papers.beyond.build_pool import LEARNED_MARGIN, _Estimates, build_memory_bytes
    e = _Estimates()
    k1, k2 = _task("relay", {"base": "optree", "max_hops": 25}), _task("relay", {"base": "optree", "max_hops": 25, "k": 2})
    on_wrht = _task("relay", {"base": "wrht", "max_hops": 25, "m": 3})
    assert e.of(k2) == build_memory_bytes(k2)                  # nothing learned yet: the default
    e.learn(k1, 3 * 2**30)
    d = min_deliveries("allgather", 4096, 1)
    assert e.of(k2) == int(LEARNED_MARGIN * (3 * 2**30 / d) * d) < build_memory_bytes(k2)
    assert e.of(on_wrht) == build_memory_bytes(on_wrht)        # another base
    assert e.of(_task("relay", {"base": "optree"}, n=1024)) == int(LEARNED_MARGIN * (3 * 2**30 / d)
                                                                  * min_deliveries("allgather", 1024, 1))
    ring = _task("ring", {"stripe": 1})
    e.learn(ring, 50 * 2**20)                                   # on its orbits: megabytes
    assert e.of(_task("ring", {"stripe": 8})) < 2**27
    assert e.of(_task("ring", {}, n=1024, coll="allreduce")) == build_memory_bytes(_task("ring", {}, 1024, "allreduce"))
    e.learn(on_wrht, 10**15)                                    # a peak above the default never raises it
    assert e.of(on_wrht) == build_memory_bytes(on_wrht)


def test_the_first_batch_that_fits_starts_beside_a_large_one():
    from collsim.experiments.papers.beyond.build_pool import _Estimates, _next_batch
    big, small = _task("relay", {"base": "optree", "max_hops": 25}), _task("ring", {"stripe": 2})
    pending = [[(0, big, [1])], [(1, big, [1])], [(2, small, [1])]]
    e = _Estimates()
    budget = 4 * 2**30
    assert _next_batch(pending, [], budget, e) == 0             # nothing runs: the first, whatever its size
    assert _next_batch(pending, [3 * 2**30], budget, e) is None  # nothing learned: every default is too big
    e.learn(_task("ring", {"stripe": 1}), 50 * 2**20)
    assert _next_batch(pending, [3 * 2**30], budget, e) == 2    # the small one passes the big ones
    assert _next_batch(pending[:2], [3 * 2**30], budget, e) is None
    assert _next_batch([], [], budget, e) is None


def test_grids_in_one_pool_give_each_grid_its_own_rows():
    from collsim.experiments.papers.beyond.grid import efficiency_grids
    ag = efficiency_grid([(8, 2, (1024, 4096))], "allgather", algorithms=["ring", "ne", "osm"])
    ar = efficiency_grid([(8, 2, (8192,))], "allreduce", algorithms=["ring", "ne", "osm"])
    both = efficiency_grids([([(8, 2, (1024, 4096))], "allgather"), ([(8, 2, (8192,))], "allreduce")],
                            algorithms=["ring", "ne", "osm"], jobs=2)
    assert both == [ag, ar] and {r["collective"] for r in ar} == {"allreduce"} and len(ag) == 3 * 2


def test_slot_latency_lines_built_side_by_side_read_alike(tmp_path):
    """`reproduce beyond` builds the slot-latency lines of its two sizes in two processes into the store;
    the crossovers then read them and are the ones built in this process."""
    from collsim.experiments.papers.beyond.slot_latency import fill_lines
    from collsim.experiments.sweep.store import Store
    sizes = ("1KiB", "64KiB")
    plain = {s: slot_latency_crossover(16, 4, s, tuned=True) for s in sizes}
    with Store(tmp_path / "r.sqlite") as store:
        made = fill_lines(16, 4, sizes, store=store, jobs=2, tuned=True)
        assert made == len(store) > len(sizes)
        assert fill_lines(16, 4, sizes, store=store, jobs=2, tuned=True) == 0     # every line stored
        assert {s: slot_latency_crossover(16, 4, s, tuned=True, store=store) for s in sizes} == plain
