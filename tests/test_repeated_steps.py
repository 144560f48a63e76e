"""Steps that repeat (collsim.core.repeated): a ring's data flow on networks without its rotations.

The ring's data flow is invariant under all N rotations on any network, but a fat tree, a mesh or a
dragonfly is not.  ``build_repeated`` keeps the representatives under the rotations (data flow
checked on node 0) and one whole step of every class of steps alike, routed by the network.  Its
verdict, counts and row must be the full build's; its time is the full build's up to the order in
which floating-point step times are added (the full simulation adds each step's end to an absolute
clock), so times are compared to 1e-12 relative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim.pipeline as pipeline
from collsim import build, build_repeated, evaluate, verify
from collsim.core.errors import MalformedScheduleError, UnsupportedError, VerificationError
from collsim.core.repeated import RepeatedSteps, WeightedSteps, expand_steps, step_classes
from collsim.core.symmetry import SymmetricSchedule, Translations
from collsim.experiments.network_families import dragonfly, rail_boxes
from collsim.sim.flow import simulate
from collsim.systems import load_system

from conftest import rows_alike


def _rows(s):
    """Every transfer as a sortable tuple: step, ends, reduction, its chunks as a set, its paths (ECMP:
    several, each with its share)."""
    cp, r = s.chunk_ptr, s.routes
    rp, links = r.route_ptr, r.route_links.tolist()
    pp = r.path_ptr if r.multipath else np.arange(len(s.src) + 1)
    weights = r.weights.tolist() if r.multipath else [1.0] * len(s.src)

    def paths(t):
        return tuple(sorted((tuple(links[rp[p]:rp[p + 1]]), weights[p]) for p in range(pp[t], pp[t + 1])))
    return sorted((int(s.step[t]), int(s.src[t]), int(s.dst[t]), bool(s.reduce[t]),
                   tuple(sorted(s.chunk_idx[cp[t]:cp[t + 1]].tolist())), paths(t)) for t in range(len(s.src)))


def _realise(system, logical):
    return pipeline.realize(system, logical, algorithm="ring")


_NETWORKS = {
    "fat-tree": lambda rng: load_system("fat-tree", k=4),
    "hierarchical": lambda rng: load_system("hierarchical", dims=f"switch:{int(rng.integers(2, 5))}:300GB/s,"
                                                                f"fat-tree:{int(rng.choice([4, 8]))}:50GB/s"),
    "mesh": lambda rng: load_system("mesh", dims=(int(rng.integers(2, 5)), int(rng.integers(2, 5)))),
    "dragonfly": lambda rng: dragonfly(int(rng.integers(2, 4)), 2, hosts=int(rng.integers(1, 3))),
    "rail-boxes": lambda rng: rail_boxes(int(rng.integers(2, 4)), gpus=4, rails=int(rng.integers(1, 3))),
}


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(sorted(_NETWORKS)), coll=st.sampled_from(["allgather", "reducescatter", "allreduce"]),
       seed=st.integers(0, 2**32 - 1))
def test_repeated_steps_are_the_full_build(kind, coll, seed):
    """Representatives under all rotations plus one whole step per class: the same transfers, verdict,
    counts and row as the ring built in full, on networks that lack the rotations."""
    rng = np.random.default_rng(seed)
    system = _NETWORKS[kind](rng)
    n = system.nodes
    size = 64 * n
    rep, full = build_repeated("ring", system, coll, size), build("ring", system, coll, size)
    assert rep.flow.group == Translations((n,)) and len(rep.flow.reps) * n == len(full)
    phases = 2 if coll == "allreduce" else 1
    assert rep.classes == phases and rep.steps.step_weight.tolist() == [n - 1] * phases   # derived: N - 1 steps a phase
    assert len(rep.steps) == phases * n                                   # every node sends once a step
    assert _rows(rep.expand(_realise)) == _rows(full)
    a, b = verify(rep), verify(full)
    assert a.data_flow == "orbits"
    assert (a.steps, a.rounds, a.transfers, a.max_hops) == (b.steps, b.rounds, b.transfers, b.max_hops)
    assert math.isclose(a.time_s, b.time_s, rel_tol=1e-12)
    rows_alike(evaluate(rep, report=a), evaluate(full, report=b))


def _verdict(s):
    try:
        verify(s)
        return ("passed",)
    except VerificationError as exc:
        return type(exc).__name__, exc.where.step if exc.where else None


@settings(max_examples=10, deadline=None)
@given(kind=st.sampled_from(sorted(_NETWORKS)), coll=st.sampled_from(["allgather", "allreduce"]),
       seed=st.integers(0, 2**32 - 1))
def test_mutants_are_rejected_as_their_expansions_are(kind, coll, seed):
    """A representative's chunk changed, a transfer dropped or duplicated, a reduction flipped: the
    repeated schedule fails exactly as its expansion does (the same error, the same step)."""
    rng = np.random.default_rng(seed)
    system = _NETWORKS[kind](rng)
    rep = build_repeated("ring", system, coll, 64 * system.nodes)
    reps = rep.flow.reps
    t = int(rng.integers(len(reps)))
    chunk_idx = reps.chunk_idx.copy()
    chunk_idx[t] = (chunk_idx[t] + int(rng.integers(1, reps.collective.chunks))) % reps.collective.chunks
    red = reps.reduce.copy()
    red[t] = ~red[t]
    dropped = reps.take(np.delete(np.arange(len(reps)), t))
    dropped = dropped.replace(step=np.unique(dropped.step, return_inverse=True)[1])   # no empty step left
    mutants = [reps.replace(chunk_idx=chunk_idx), dropped,
               reps.take(np.sort(np.r_[np.arange(len(reps)), t])), reps.replace(reduce=red)]
    rejected = 0
    for m in mutants:
        mutant = RepeatedSteps.of(SymmetricSchedule(m, rep.flow.group), _realise)
        a = _verdict(mutant)
        assert a == _verdict(mutant.expand(_realise))
        rejected += a[0] != "passed"
    assert rejected >= 3     # a duplicated copy of an all-gather's chunk is harmless


def test_a_whole_step_s_broken_route_is_rejected():
    """The routes are the whole steps': a link of one replaced by another is found by the resource check."""
    system = load_system("hierarchical", dims="switch:4,fat-tree:4")
    rep = build_repeated("ring", system, "allreduce", 4096)
    links = rep.steps.routes.route_links.copy()
    links[5] = (links[5] + 1) % len(system.links.src)
    broken = RepeatedSteps(rep.flow, rep.steps.replace(route_links=links), rep.step_class)
    with pytest.raises(VerificationError):
        verify(broken)
    verify(rep)


def test_step_classes_group_steps_alike_in_order_of_first_appearance():
    """Steps whose transfers are equal apart from chunk ids share a class; classes are numbered as they come."""
    s = build("ring", load_system("star", nodes=5), "allreduce", 5 * 64)
    cls, first = step_classes(s)
    assert cls.tolist() == [0] * 4 + [1] * 4 and first.tolist() == [0, 4]
    b = build("bruck", load_system("star", nodes=8), "allgather", 8 * 64)   # every step sends a different distance
    cls, first = step_classes(b)
    assert cls.tolist() == list(range(b.num_steps)) and first.tolist() == list(range(b.num_steps))


def test_expanded_steps_move_every_representative_by_every_rotation():
    rep = build_repeated("ring", load_system("mesh", dims=(2, 3)), "allgather", 6 * 64)
    ls = expand_steps(rep.flow, [4])
    assert sorted(zip(ls.src.tolist(), ls.dst.tolist())) == sorted((i, (i + 1) % 6) for i in range(6))
    assert sorted(ls.chunk_idx.tolist()) == list(range(6))


def test_weights_count_steps_and_only_bulk_mode_times_them():
    rep = build_repeated("ring", load_system("fat-tree", k=4), "allgather", 1024)
    one = simulate(rep.steps, check=False)
    assert math.isclose(one.total_time_s, float(one.step_time_s.sum()) * (rep.system.nodes - 1), rel_tol=1e-12)
    with pytest.raises(UnsupportedError, match="bulk"):
        simulate(rep.steps, mode="dataflow", check=False)
    s = rep.steps
    with pytest.raises(MalformedScheduleError, match="weight"):
        WeightedSteps(s.system, s.collective, s.algorithm, s.params, s.step, s.round, s.src, s.dst, s.chunk_ptr,
                      s.chunk_idx, s.reduce, s.routes, step_weight=np.array([1, 2]))


def test_kinds_that_time_steps_together_are_refused():
    """An optical ring charges reconfiguration between consecutive steps: no repeated steps there."""
    with pytest.raises(UnsupportedError, match="steps alone"):
        build_repeated("ring", "paper", "allgather", 1024, nodes=8)
    with pytest.raises(UnsupportedError, match="no group of its data flow"):
        build_repeated("ring", "star", "broadcast", 1024, nodes=8)


def test_compare_takes_repeated_steps_on_a_fat_tree_with_the_full_rows(monkeypatch):
    """Above the threshold, compare's ring on a hierarchical fat tree is built as repeated steps, with
    the rows the full build gives."""
    system = load_system("hierarchical", dims="switch:4,fat-tree:8")
    full = pipeline.run("ring", system, "allreduce", 2**20)
    monkeypatch.setattr(pipeline, "REPEATED_ABOVE_TRANSFERS", 1)
    assert isinstance(pipeline.build_compact("ring", system, "allreduce", 2**20), RepeatedSteps)
    rows_alike(pipeline.run("ring", system, "allreduce", 2**20), full)


def test_saving_writes_the_expansion_and_refuses_whole_steps_alone(tmp_path):
    """A repeated (or symmetric) schedule is written expanded, and reads back as the full build; the
    whole steps alone are refused (a file holds every step once, so their weights would be lost)."""
    from collsim import build_symmetric, load, save
    from collsim.core.errors import InputError
    system = load_system("fat-tree", k=4)
    rep, full = build_repeated("ring", system, "allreduce", 4096), build("ring", system, "allreduce", 4096)
    save(rep, tmp_path / "rep.npz")
    assert _rows(load(tmp_path / "rep.npz")) == _rows(full)
    sym = build_symmetric("ring", "paper", "allreduce", 4096, nodes=8)
    save(sym, tmp_path / "sym.json")
    assert len(load(tmp_path / "sym.json")) == sym.transfers == 112
    with pytest.raises(InputError, match="whole steps"):
        save(rep.steps, tmp_path / "steps.json")
    assert not (tmp_path / "steps.json").exists()


@settings(max_examples=12, deadline=None)
@given(dims=st.sampled_from(["switch:4,fat-tree:16", "switch:2:300GB/s,fat-tree:16:50GB/s", "ring:3,switch:4",
                             "switch:4,fat-tree:8", "ring:4,ring:3"]),
       coll=st.sampled_from(["allreduce", "allgather"]), pieces=st.sampled_from([None, 2]),
       orders=st.sampled_from(["all", "inner"]))
def test_md_ring_s_steps_repeat_as_its_full_build(dims, coll, pieces, orders):
    """md-ring's ring stages commute with translating whole coordinates, which a fat tree's links do
    not allow: as repeated steps (node 0's transfers under every coordinate's rotations, one whole
    step per class, each transfer keeping one chunk id and its bytes) it verifies and times as its
    full build."""
    system = load_system("hierarchical", dims=dims)
    size = 64 * system.nodes * 4
    kw = {"pieces": pieces, "orders": orders}
    rep, full = build_repeated("md-ring", system, coll, size, **kw), build("md-ring", system, coll, size, **kw)
    assert rep.flow.group.regular and rep.transfers == len(full) and rep.classes <= rep.num_steps
    assert len(rep.steps.chunk_idx) == len(rep.steps) < len(full.chunk_idx)     # one chunk id a transfer kept
    assert _rows(rep.expand()) == _rows(full)
    a, b = verify(rep), verify(full)
    assert a.data_flow.startswith("orbits") and (a.steps, a.transfers, a.max_hops) == (b.steps, b.transfers, b.max_hops)
    rows_alike(evaluate(rep, report=a), evaluate(full, report=b))
