"""Late refusals (issue 31): work that cannot fit in memory or time is refused before it starts.

The instances of the issue (a 3163 x 3163 mesh, a 1000 x 1000 hierarchical system, a 64^3
hierarchical system) are refused from closed-form estimates with the estimate in one line; the
commands run under a 1 GiB address-space limit, which the old late refusals (3 to 5 GiB
allocated first) could not stay under.  Time floors are checked as floors (never above what a
run takes), never against a clock.  The figures: benchmarks/run.py, its refuse-* workloads.
"""

from __future__ import annotations

import os
import resource
import subprocess
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms.synth_matching import search
from collsim.algorithms.synth_matching.effort import eccentricity, early_reason
from collsim.algorithms.synth_matching.step import _direct_links, match
from collsim.core.collective import make_collective, collective_type
from collsim.core.errors import InputError, UnsupportedError
from collsim.core.schedule import LogicalBuilder
from collsim.core.time_limit import TimeLimitError, time_limit
from collsim.kinds.network import cut_families, exact_cut
from collsim.kinds.network.exact_cut import allgather_certificate, max_cut_ratio
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork
from conftest import collsim_exe

GIB = 2 ** 30


def _capped(*args: str, address_space: int = GIB, env: dict | None = None) -> subprocess.CompletedProcess:
    """The console script under an address-space limit (``ulimit -v``): what it maps, not how long it takes."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    return subprocess.run([collsim_exe(), *args], capture_output=True, text=True, preexec_fn=cap, timeout=300,
                          env={**os.environ, "COLLSIM_MEMORY_LIMIT": "8GiB", **(env or {})})


def _one_line_exit_2(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.mark.parametrize("args, nodes", [
    (("synthesize", "--system", "mesh", "-S", "dims=3163,3163", "-s", "1KiB"), 10004569),
    (("synthesize", "--system", "hierarchical", "-S", "dims=switch:1000,switch:1000", "-s", "1B"), 1000000),
    (("compare", "--system", "hierarchical", "-S", "dims=switch:64,switch:64,switch:64", "-s", "1B", "-a",
      "hier-allgather"), 262144),
    (("schedule", "ring", "--system", "torus", "-S", "dims=1000,1000", "-o", "x.json"), 1000000),
])
def test_the_issue_s_instances_are_refused_from_the_estimate(args, nodes):
    line = _one_line_exit_2(_capped(*args), f"allgather on {nodes} nodes needs about", "chunk deliveries",
                            "8 GiB (COLLSIM_MEMORY_LIMIT=8GiB)")
    assert line.endswith("use fewer nodes")  # the advice applies to an all-gather: no split, no chunks


@pytest.mark.parametrize("args, needle", [
    # a broadcast fits in memory, but planning it on 10^7 nodes would take longer than the limit
    (("synthesize", "--system", "mesh", "-S", "dims=3163,3163", "-c", "broadcast", "-s", "1KiB"), "time limit"),
    # the link table of a 2^24-node hypercube does not fit: refused before any algorithm's checks
    (("compare", "--system", "hypercube", "-n", "16777216", "-c", "shift", "-s", "1B"), "link table"),
])
def test_other_big_instances_are_refused_before_building(args, needle):
    line = _one_line_exit_2(_capped(*args), needle, "at least" if needle == "time limit" else "needs about")
    assert "split" not in line


def test_a_ring_too_long_to_plan_is_refused_with_the_estimate(run_cli):
    line = _one_line_exit_2(run_cli("synthesize", "--system", "ring", "-n", "10000", "-s", "1KiB"),
                            "10000 nodes", "takes at least about", "time limit of 10 min")
    assert "COLLSIM_TIME_LIMIT" in line


def test_the_time_limit_is_the_environment_s():
    ring = load_system("ring", nodes=64)
    cycle = CustomNetwork(nodes=6, link=tuple((i, (i + 1) % 6) for i in range(6)))  # no closed forms
    collsim.synthesize(ring, "allgather", "1KiB")  # well below the default
    collsim.synthesize(cycle, "allgather", "1KiB")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLLSIM_TIME_LIMIT", "1e-9")
        assert time_limit()[0] == 1e-9
        # from closed forms, before the link table: too long a plan is why it cannot run here
        with pytest.raises(UnsupportedError, match=r"synth-matching cannot build allgather here: .*time limit"):
            collsim.build("synth-matching", ring, "allgather", "1KiB")
        with pytest.raises(UnsupportedError, match="no synthesizer applies .*time limit"):
            collsim.synthesize(load_system("mesh", dims=(30, 30)), "allgather", "1KiB")
        # without them, from the links, choice by choice
        with pytest.raises(TimeLimitError, match=r"takes at least about .*\(COLLSIM_TIME_LIMIT=1e-9\)"):
            collsim.build("synth-matching", cycle, "allgather", "1KiB")
        mp.setenv("COLLSIM_TIME_LIMIT", "soon")
        with pytest.raises(InputError, match="invalid COLLSIM_TIME_LIMIT"):
            time_limit()
        mp.setenv("COLLSIM_TIME_LIMIT", "none")
        assert time_limit()[0] == float("inf")


def test_early_reason_reads_closed_forms_only():
    mesh = load_system("mesh", dims=(3163, 3163))
    assert "3162 steps" in early_reason(mesh, "broadcast")  # half the diameter: the root may be the centre
    assert early_reason(load_system("mesh", dims=(30, 30)), "allgather") is None
    assert early_reason(load_system("star", nodes=10**6), "broadcast") is None  # switches: the overlays decide
    assert "links" not in vars(mesh)  # no link table was built


# -- the floors are floors ------------------------------------------------------------------------

@st.composite
def _networks(draw):
    kind = draw(st.sampled_from(["ring", "line", "mesh", "torus", "hypercube"]))
    if kind in ("mesh", "torus"):
        return load_system(kind, dims=(draw(st.integers(2, 6)), draw(st.integers(2, 6))))
    if kind == "hypercube":
        return load_system(kind, nodes=2 ** draw(st.integers(1, 5)))
    return load_system(kind, nodes=draw(st.integers(2, 24)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_networks(), st.integers(1, 3), st.integers(1, 4), st.one_of(st.none(), st.integers(0, 100)),
       st.booleans())
def test_the_step_floors_never_exceed_the_steps_a_run_takes(net, chunks, capacity, root, reverse):
    root = None if root is None else root % net.nodes
    plan = match(net, chunks, capacity, 0, 1024.0, reverse=reverse, root=root)
    src, dst, _, _ = _direct_links(net)
    if reverse:
        src, dst = dst, src
    assert eccentricity(net.nodes, src, dst, 0 if root is None else root) <= plan.steps
    _, steps = search._pair_floors(net, [(chunks, capacity)], 1024.0, reverse=reverse, root=root)
    assert steps[0] <= plan.steps
    if root is None and not reverse:  # the closed form: node 0's eccentricity from the topology's distances
        far = net.distance(np.zeros(net.nodes, np.int64), np.arange(net.nodes))
        assert int(far.max()) <= plan.steps


# -- overlays that would not fit are not built -----------------------------------------------------

def test_a_switched_network_too_big_for_direct_exchange_plans_on_sparser_overlays(monkeypatch):
    monkeypatch.setenv("COLLSIM_MEMORY_LIMIT", "300MiB")
    star = load_system("star", nodes=2000)  # direct exchange: 4e6 logical links, about 900 MB to route
    out = collsim.synthesize(star, "broadcast", "1KiB")
    assert out.result.verified and out.schedule.params["overlay"] != "direct"
    with pytest.raises(InputError, match=r"direct overlay of 2000 end nodes \(3998000 logical links\) needs about"):
        collsim.build("synth-matching", star, "broadcast", "1KiB", overlay="direct")


# -- the certificate of a long ring needs no flow --------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ring", "line", "star"]), st.integers(2, 40), st.sampled_from(["allgather", "reducescatter"]))
def test_ring_line_and_star_certificates_are_their_families_best(kind, n, collective):
    system = load_system(kind, nodes=n)
    coll = make_collective(collective, n, 1000)
    exact = max_cut_ratio(system, coll.type.direction)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact_cut, "max_cut_ratio", _no_flow)
        cert = allgather_certificate(system, coll)
    assert cert.bound_s == pytest.approx((n - exact[2]) * 1000 / exact[3], rel=1e-12)
    assert cert.bound_s == pytest.approx(exact[0] * 1000, rel=1e-12)


def _no_flow(*args, **kwargs):
    raise AssertionError("a ring's, line's or star's certificate needs no max-flow")


def test_a_certificate_over_the_search_budget_is_the_best_closed_form_cut(monkeypatch):
    torus = load_system("torus", dims=(6, 7))
    coll = make_collective("allgather", 42, 1000)
    exact = allgather_certificate(torus, coll)
    monkeypatch.setattr(exact_cut, "work_budget", lambda system: 10)
    budgeted = allgather_certificate(torus, coll)
    family = cut_families.family_cut(torus, "in")
    assert budgeted.side == family[1] and budgeted.bound_s == pytest.approx(family[0] * 1000)
    assert budgeted.bound_s <= exact.bound_s * (1 + 1e-12)


def test_a_long_ring_s_certificate_is_quick_in_memory():
    ring = load_system("ring", nodes=4000)
    tracemalloc.start()
    cert = allgather_certificate(ring, make_collective("allgather", 4000, 1024))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert cert.side == (0,) and cert.end_nodes_inside == 1 and peak < 200 * 2**20


# -- the hierarchical kind's bound in chunks, and ragged payloads without a list per transfer --------

def test_the_hierarchical_bound_never_makes_the_n_by_n_identity():
    from collsim.kinds.hierarchical.model import dimension_bounds_s
    h = load_system("hierarchical", dims=("switch:128", "switch:128"))  # N = 16384: the identity is 256 MiB
    h.links
    tracemalloc.start()
    terms = dimension_bounds_s(h, make_collective("broadcast", h.nodes, 1024))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 128 * 2**20 and terms["injection"] > 0


@given(st.lists(st.lists(st.integers(0, 7), max_size=5), min_size=1, max_size=12))
def test_chunk_pointers_build_what_lists_build(payloads):
    coll = make_collective("allgather", 8, 64)
    t = len(payloads)
    rnd, src, dst = np.arange(t) % 3, np.arange(t) % 8, (np.arange(t) + 1) % 8
    a, b = LogicalBuilder(coll), LogicalBuilder(coll)
    a.add(rnd, src, dst, [np.asarray(p, np.int64) for p in payloads])
    ptr = np.concatenate([[0], np.cumsum([len(p) for p in payloads])])
    b.add(rnd, src, dst, np.concatenate([np.asarray(p, np.int64) for p in payloads]), chunk_ptr=ptr)
    x, y = a.build(), b.build()
    for col in ("round", "src", "dst", "chunk_ptr", "chunk_idx"):
        assert np.array_equal(getattr(x, col), getattr(y, col)), col
    with pytest.raises(ValueError, match="chunk_ptr"):
        b.add(0, [0], [1], [0, 1], chunk_ptr=[0, 3])


# -- algorithms that make more deliveries than the collective's floor say so before building -------

def test_a_tree_scan_too_big_for_memory_is_refused_before_it_is_built():
    line = _one_line_exit_2(_capped("schedule", "recursive-doubling", "--system", "torus", "-S", "dims=3163,3163",
                                    "-c", "scan", "-s", "1KiB", "-o", "x.json"),
                            "recursive-doubling's scan on 10004569 nodes", "chunk deliveries", "needs about")
    assert line.endswith("use fewer nodes or another algorithm")


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13, 100])
@pytest.mark.parametrize("collective", ["scan", "allreduce"])
def test_recursive_doubling_declares_its_deliveries_exactly(n, collective):
    from collsim.algorithms import get_algorithm
    ring = load_system("ring", nodes=n)
    sched = collsim.build("recursive-doubling", ring, collective, 1024)
    assert get_algorithm("recursive-doubling").deliveries(ring, collective_type(collective), {}) == len(sched.chunk_idx)


def test_an_unforeseen_allocation_failure_gives_advice_that_fits_every_collective(monkeypatch, capsys):
    import collsim.synthesis
    from collsim.cli.main import main

    def refused(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 GiB for an array with shape (1073741824,) and data type int64")
    monkeypatch.setattr(collsim.synthesis, "synthesize", refused)
    with pytest.raises(SystemExit) as info:
        main(["synthesize", "--system", "mesh", "-S", "dims=3,3"])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2 and len(err.splitlines()) == 1
    assert "an allocation of 8.00 GiB was refused" in err and "split" not in err and err.endswith("use fewer nodes")


@pytest.mark.parametrize("args, needle", [
    # lines of 256 have no translations: compare checks the whole count (on a system with a
    # translation group it checks the orbits' share, tests/test_symmetry_hierarchical.py)
    (("compare", "-a", "hier-allreduce", "--system", "hierarchical", "-S", "dims=line:256,line:256", "-c",
      "allreduce", "-s", "1B"), "hier-allreduce's allreduce on 65536 nodes"),
    (("synthesize", "--system", "hierarchical", "-S", "dims=ring:256,switch:256", "-c", "allreduce", "-s", "1B"),
     "node x piece state"),
])
def test_what_an_algorithm_makes_beyond_the_floor_is_refused_before_it_is_made(args, needle):
    line = _one_line_exit_2(_capped(*args), needle, "needs about")
    assert line.endswith("use fewer nodes") or line.endswith("another algorithm")


@pytest.mark.parametrize("dims", [("switch:4", "switch:4"), ("ring:4", "switch:8"), ("line:3", "ring:5")])
@pytest.mark.parametrize("name, collective", [("hier-allreduce", "allreduce"), ("md-ring", "allreduce"),
                                              ("hier-allgather", "allgather"), ("md-ring", "allgather"),
                                              ("hier-alltoall", "alltoall")])
@pytest.mark.parametrize("params", [{}, {"pieces": 2}, {"units": 3}])
def test_the_lane_schedules_deliveries_are_a_floor(dims, name, collective, params):
    from collsim.algorithms import get_algorithm
    h = load_system("hierarchical", dims=dims)
    sched = collsim.build(name, h, collective, 4096, **params)
    assert get_algorithm(name).deliveries(h, collective_type(collective), params) <= len(sched.chunk_idx)


@pytest.mark.parametrize("system", ["ring", "paper"])
@pytest.mark.parametrize("n", [2, 3, 8, 13])
@pytest.mark.parametrize("collective, params", [("allgather", {}), ("reducescatter", {}), ("allreduce", {}),
                                                ("broadcast", {}), ("reduce", {"chunks": 5})])
def test_ring_declares_its_transfers_exactly(system, n, collective, params):
    """Every node sends one chunk a round, N - 1 rounds a phase; a chain sends each piece N - 1 hops."""
    from collsim.algorithms import get_algorithm
    s = load_system(system, nodes=n)
    sched = collsim.build("ring", s, collective, 4096, **params)
    declared = get_algorithm("ring").transfers(s, collective_type(collective), params)
    assert declared == len(sched) == (n - 1) * (params.get("chunks", 1) if collective in ("broadcast", "reduce")
                                               else n * (2 if collective == "allreduce" else 1))


def test_a_schedule_whose_declared_transfers_cannot_be_realised_is_refused_before_it_is_built(monkeypatch):
    """Ring all-reduce on 256 nodes: 2 * 256 * 255 = 130,560 transfers of one chunk, 114 bytes each
    at least while realised (the logical columns twice, 2 * 41, and 32 of step and route): 14,883,840
    bytes.  A byte less refuses it from the closed form, before the builder runs; at the floor it is
    built, and the realisation's own estimate (its columns include the direction) refuses it."""
    from dataclasses import replace
    from collsim.algorithms import REGISTRY
    from collsim.core.limits import ENV_VAR, MemoryLimitError
    floor = 114 * 130560
    system = load_system("paper", nodes=256, wavelengths=8)
    built = []
    spec = REGISTRY["ring"]
    monkeypatch.setitem(REGISTRY, "ring", replace(spec, builder=lambda *a, **k: built.append(1) or spec.builder(*a, **k)))
    monkeypatch.setenv(ENV_VAR, str(floor - 1))
    with pytest.raises(MemoryLimitError, match=r"ring's allreduce on 256 nodes \(1\.31e\+05 transfers realised\)"):
        collsim.build("ring", system, "allreduce", "1MiB")
    assert built == []
    monkeypatch.setenv(ENV_VAR, str(floor))
    with pytest.raises(MemoryLimitError, match=r"realising ring's allreduce on 256 nodes"):
        collsim.build("ring", system, "allreduce", "1MiB")
    assert built == [1]


def test_a_logical_schedule_too_large_to_realise_is_refused_before_realising(monkeypatch):
    """Realising holds the logical schedule and its physical copy at once (a ring all-reduce on 8,192
    nodes peaked at 18.6 GB before the verifier refused it): the estimate refuses it first."""
    import collsim.pipeline as pipeline
    from collsim.core.limits import ENV_VAR, MemoryLimitError
    from collsim.systems import load_system
    system = load_system("paper", nodes=256, wavelengths=8)
    logical, _ = collsim.algorithms.build_logical(collsim.algorithms.get_algorithm("ring"), system, "allreduce", 1 << 20)
    need = pipeline.realise_bytes(logical)
    assert need >= 2 * (logical.src.nbytes + logical.chunk_idx.nbytes) + 32 * len(logical.src)
    monkeypatch.setenv(ENV_VAR, str(need - 1))
    monkeypatch.setattr(pipeline, "realize", lambda *a, **k: pytest.fail("realised although refused"))
    with pytest.raises(MemoryLimitError, match=r"realising ring's allreduce on 256 nodes \(130560 transfers"):
        collsim.build("ring", system, "allreduce", "1MiB")
    monkeypatch.undo()  # the default limit: it is realised
    assert len(collsim.build("ring", system, "allreduce", "1MiB")) == len(logical.src)
