"""Symmetric schedules: representatives plus a translation group (collsim.core.symmetry).

A symmetric schedule and its expansion must verify and time identically: the same verdict
(and, when it fails, the same kind of violation in the same step), the same report and the
same result row.  The expansion must be the schedule the algorithm builds in full.  The
golden numbers here are derived: ring all-reduce makes 2(N-1) representatives, N of each.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim.pipeline as pipeline
from collsim import build, build_symmetric, evaluate, verify
from collsim.algorithms import REGISTRY
from collsim.core.collective import make_collective
from collsim.core.errors import InputError, UnsupportedError
from collsim.core.symmetry import SymmetricSchedule, Translations
from collsim.experiments.compare import compare
from collsim.systems import load_system

from conftest import rejected_alike

RING = ("allgather", "reducescatter", "allreduce")


def _rows(s):
    """Every transfer as a sortable tuple per step (chunks, route and all)."""
    ptr = s.chunk_ptr
    out = []
    for t in range(len(s)):
        out.append((int(s.step[t]), int(s.src[t]), int(s.dst[t]), tuple(s.chunk_idx[ptr[t]:ptr[t + 1]].tolist()),
                    bool(s.reduce[t]), int(s.direction[t]), int(s.hops[t]), int(s.fiber[t]),
                    int(s.wavelength[t]), int(s.band[t])))
    return sorted(out)


def _size(coll: str, n: int, unit: int) -> int:
    return unit * n if coll == "allreduce" else unit


SYMMETRIC = sorted(name for name, spec in REGISTRY.items() if spec.orbits is not None and "optical-ring" in spec.systems)
"""The symmetric algorithms of optical rings (hierarchical ones: tests/test_symmetry_hierarchical.py;
networks': tests/test_symmetry_network.py)."""


def test_the_symmetric_algorithms():
    assert {"ring", "striped-ring"} <= set(SYMMETRIC)
    assert {name for name, spec in REGISTRY.items() if spec.orbits is not None} <= \
        set(SYMMETRIC) | {"hier-allreduce", "hier-allgather", "md-ring", "synth-trees",
                          "rabenseifner"}   # its XOR group: test_symmetry_hierarchical.py


@st.composite
def _instances(draw):
    """A symmetric algorithm with what it declares it supports, on a random optical ring."""
    name = draw(st.sampled_from(SYMMETRIC))
    spec = REGISTRY[name]
    coll = draw(st.sampled_from([c for c in spec.collectives if c in RING]))
    fibers = draw(st.sampled_from([1, 2]))
    wavelengths = draw(st.sampled_from([4, 8, 64]))
    n = draw(st.integers(2, 24).filter(     # only what the algorithm declares it supports (ne: N even)
        lambda n: spec.refusal(load_system("paper", nodes=n, fibers=fibers, wavelengths=wavelengths), coll) is None))
    params = {"stripe": draw(st.sampled_from([1, 2]))} if "stripe" in spec.params else {}
    unit = draw(st.integers(1, 512)) * 4 * fibers   # chunk sizes alike at every node
    return name, coll, n, fibers, wavelengths, params, _size(coll, n, unit)


@settings(max_examples=30, deadline=None)
@given(case=_instances())
def test_symmetric_equals_expanded_and_full_build(case):
    name, coll, n, fibers, wavelengths, params, size = case
    kw = dict(nodes=n, fibers=fibers, wavelengths=wavelengths, **params)
    sym = build_symmetric(name, "paper", coll, size, **kw)
    full = build(name, "paper", coll, size, **kw)
    expanded = sym.expand()
    assert sym.transfers == len(expanded) == len(full) == len(sym.reps) * sym.group.order
    assert sym.group.order == (n // 2 if name == "ne" else n)   # ne's pairs move with the even rotations
    assert _rows(expanded) == _rows(full)
    a, b = verify(sym), verify(full)
    assert a.data_flow == "orbits" and b.data_flow != "orbits"
    assert (a.steps, a.rounds, a.transfers, a.wavelengths_used, a.max_hops, a.time_s, a.closed_form_time_s) == \
        (b.steps, b.rounds, b.transfers, b.wavelengths_used, b.max_hops, b.time_s, b.closed_form_time_s)
    ra, rb = evaluate(sym), evaluate(full)
    assert ra.verified and rb.verified
    assert ra.to_json() == rb.to_json()


def _mutants(reps, rng):
    """Small changes to representatives (each keeps them ending at node 0)."""
    n = reps.system.nodes
    t = int(rng.integers(len(reps)))
    c = reps.collective.chunks
    chunk_idx = reps.chunk_idx.copy()
    chunk_idx[t] = (chunk_idx[t] + int(rng.integers(1, c))) % c if c > 1 else chunk_idx[t]
    yield "chunk", reps.replace(chunk_idx=chunk_idx)
    kept = reps.take(np.delete(np.arange(len(reps)), t))
    yield "dropped", kept.replace(step=np.unique(kept.step, return_inverse=True)[1].reshape(-1),
                                  round=np.unique(kept.round, return_inverse=True)[1].reshape(-1))
    if len(reps) > 1:
        step = reps.step.copy()
        step[t] = step[t - 1] if t else step[1]
        yield "step", reps.take(np.argsort(step, kind="stable")).replace(step=np.sort(step))
    red = reps.reduce.copy()
    red[t] = ~red[t]
    yield "reduce", reps.replace(reduce=red)
    if n > 2:  # a longer arc: its rotations share every link
        src = reps.src.copy()
        src[t] = (src[t] - 1) % n
        hops = reps.hops.copy()
        hops[t] += 1
        yield "two hops", reps.replace(src=src, hops=hops)
        yield "route", reps.replace(src=src)
    wl = reps.wavelength.copy()
    wl[t] = reps.system.wavelengths
    yield "wavelength", reps.replace(wavelength=wl)
    if len(reps) > 1:
        dup = np.concatenate([np.arange(len(reps)), [t]])
        yield "duplicate", reps.take(np.sort(dup))


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(SYMMETRIC), seed=st.integers(0, 2**32 - 1), block=st.sampled_from([1, 2, 5, 1 << 22]),
       data=st.data())
def test_mutants_rejected_alike(name, seed, block, data):
    """Every mutant of the representatives fails on its orbits iff its expansion fails, alike,
    whether the verifier computes a delivery's indices for the whole schedule at once or for
    blocks of a few deliveries (each step then alone)."""
    from unittest.mock import patch
    from collsim.verify import orbits
    spec = REGISTRY[name]
    coll = data.draw(st.sampled_from([c for c in spec.collectives if c in RING]))
    n = data.draw(st.integers(3, 16).filter(lambda n: spec.refusal(load_system("paper", nodes=n), coll) is None))
    sym = build_symmetric(name, "paper", coll, _size(coll, n, 64), nodes=n)
    rng = np.random.default_rng(seed)
    with patch.object(orbits, "_BLOCK_DELIVERIES", block):
        # at least the chunk, the dropped transfer, the flipped reduction and the wavelength
        assert rejected_alike(sym, _mutants(sym.reps, rng)) >= 4


def test_ring_allreduce_orbit_counts():
    n = 1000
    sym = build_symmetric("ring", "paper", "allreduce", 8 * n, nodes=n)
    assert len(sym.reps) == 2 * (n - 1) and sym.transfers == 2 * (n - 1) * n
    assert (sym.reps.dst == 0).all() and (sym.reps.src == n - 1).all()
    r = evaluate(sym)
    assert r.verified and r.transfers == 2 * (n - 1) * n and r.slots == 2 * (n - 1)


def test_unequal_chunks_are_not_symmetric():
    # 10 bytes in 3 chunks: 4, 3, 3 bytes; node 0's transfers are not every node's
    with pytest.raises(InputError, match="chunk sizes differ"):
        build_symmetric("ring", "paper", "allreduce", 10, nodes=3)


def test_refusals():
    with pytest.raises(UnsupportedError, match="declares no symmetry"):
        build_symmetric("ring", "paper", "broadcast", 1024, nodes=8)
    with pytest.raises(UnsupportedError, match="no translation group"):
        build_symmetric("ring", "mesh", "allgather", 1024, system_options={"dims": (2, 4)})   # reflections only
    with pytest.raises(UnsupportedError, match="no translation group"):
        build_symmetric("ring", "ocs", "allgather", 1024, nodes=8)    # circuits: phases are not checked on orbits
    with pytest.raises(UnsupportedError, match="declares no symmetry"):
        build_symmetric("osm", "paper", "allgather", 1024, nodes=8)
    reps = build_symmetric("ring", "paper", "allgather", 1024, nodes=8).reps
    with pytest.raises(InputError, match="ends at node"):
        SymmetricSchedule(reps.replace(dst=np.ones(len(reps), np.int64)), Translations((8,)))
    with pytest.raises(InputError, match="of 4 nodes"):
        SymmetricSchedule(reps, Translations((4,)))


def test_rooted_collective_is_not_invariant():
    c = make_collective("broadcast", 4, 64, split=4, root=0)
    reps = build_symmetric("ring", "paper", "allgather", 64, nodes=4).reps.replace(collective=c)
    with pytest.raises(InputError, match="not invariant"):
        SymmetricSchedule(reps, Translations((4,)))


@pytest.mark.parametrize("radices", [(6,), (2, 3), (2, 2, 2), (3, 1, 4)])
def test_translations_form_a_regular_group(radices):
    g = Translations(radices)
    n = g.order
    nodes = np.arange(n)
    images = np.array([g.act(e, nodes) for e in range(n)])
    assert (np.sort(images, axis=1) == nodes).all()        # each element permutes the nodes
    assert (images[:, 0] == nodes).all()                    # element e takes 0 to e: regular
    for e in range(n):
        assert (g.act(g.inverse(e), images[e]) == nodes).all()
        for f in range(n):                                  # closed, abelian
            assert (g.act(e, images[f]) == images[int(g.act(e, f))]).all()
    reached = {0}
    for _ in range(n):
        reached |= {int(g.act(x, y)) for x in g.generators() for y in reached}
    assert reached == set(range(n))


def test_compare_switches_to_orbits_with_the_same_rows(monkeypatch):
    rows_full, _ = compare("paper", "allreduce", 64 * 12, nodes=12, algorithms="ring")
    monkeypatch.setattr(pipeline, "SYMMETRIC_ABOVE_TRANSFERS", 1)
    calls = []
    real = pipeline.evaluate
    monkeypatch.setattr(pipeline, "evaluate", lambda s, **kw: calls.append(type(s).__name__) or real(s, **kw))
    rows_sym, _ = compare("paper", "allreduce", 64 * 12, nodes=12, algorithms="ring")
    assert calls == ["SymmetricSchedule"]
    assert [r.to_json() for r in rows_sym] == [r.to_json() for r in rows_full]


def _plain(x):
    """A result record with numpy arrays as lists (for equality)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x.tolist() if isinstance(x, np.ndarray) else x


def test_reproduction_points_alike_on_orbits(monkeypatch):
    """`collsim reproduce` builds its large points through build_compact: same records either way."""
    from collsim.experiments.papers.beyond.build_pool import build_profile
    from collsim.experiments.papers.optree.data import build_point
    optree = [("ring", 12, 4, 1200, None), ("striped-stages", 12, 4, 1200, (3, 4)), ("ne", 12, 4, 1200, None)]
    beyond = [("striped-ring", {}, 12, 4, "allreduce", 12 * 96, "paper"),
              ("striped-stages", {"radices": (4, 3)}, 12, 4, "allgather", 96, "paper")]
    before = [_plain(build_point(t)) for t in optree] + [_plain(build_profile(t)) for t in beyond]
    calls = []
    real = pipeline.build_symmetric
    monkeypatch.setattr(pipeline, "SYMMETRIC_ABOVE_TRANSFERS", 1)
    monkeypatch.setattr(pipeline, "build_symmetric", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    after = [_plain(build_point(t)) for t in optree] + [_plain(build_profile(t)) for t in beyond]
    assert len(calls) == 5          # every point went through its orbits (ne's under the even rotations)
    assert after == before


@pytest.mark.parametrize("name", SYMMETRIC)
def test_representatives_stay_small_at_65536_nodes(name):
    """Only the domain's transfers are made: never a row per node and round (a full build is 8.6e9)."""
    n = 65536
    coll = "allreduce" if "allreduce" in REGISTRY[name].collectives else "allgather"
    s = build_symmetric(name, "paper", coll, "256MiB", nodes=n)
    assert s.transfers == len(s.reps) * s.group.order
    # every node receives at least the N - 1 blocks of each phase (ne two a round: N/2 rounds)
    assert len(s.reps) <= 8 * n and s.transfers >= (2 if coll == "allreduce" else 1) * (n - 1) * n // 2


@settings(max_examples=40, deadline=None)
@given(radices=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_the_lookup_tables_equal_the_digit_arithmetic(radices, data):
    """Large calls read tables (every pair's sum, every node's inverse, element and domain node); small
    ones add digit by digit.  Both give the same images."""
    import collsim.core.symmetry as sym
    moving = tuple(data.draw(st.lists(st.booleans(), min_size=len(radices), max_size=len(radices)), label="moving"))
    group = sym.Translations(tuple(radices), moving)
    n = group.nodes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    g, u = rng.integers(0, n, 50), rng.integers(0, n, 50)
    small = (group.act(g, u), group.inverse(g), group.element_of(u), group.domain_of(u),
             group.act(g[:, None], u[None, :]))
    before = sym.LOOKUP_MIN_VALUES
    sym.LOOKUP_MIN_VALUES = 1
    try:
        fresh = sym.Translations(tuple(radices), moving)
        large = (fresh.act(g, u), fresh.inverse(g), fresh.element_of(u), fresh.domain_of(u),
                 fresh.act(g[:, None], u[None, :]))
        assert "_per_node" in vars(fresh)   # the tables were read
    finally:
        sym.LOOKUP_MIN_VALUES = before
    for a, b in zip(small, large):
        assert np.array_equal(a, b)
