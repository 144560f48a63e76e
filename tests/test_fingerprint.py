"""Reductions verified by fingerprints (collsim.verify.fingerprint) reach the verdict of an independent oracle.

The oracle below replays a schedule with explicit multiplicity vectors (how many times each
node's contribution is in each buffer): a schedule is right when no empty buffer is sent, no
buffer is copied and reduced into in one step, copies into one buffer agree, and every
postcondition buffer holds each contribution it needs exactly once.  Fingerprints must reach
that verdict on every registered reduction and on random mutants of them; the exact check is
stricter (it also refuses double counts in buffers that never reach a result).
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core import errors as E
from collsim.core.collective import collective_type
from collsim.verify import fingerprint, pairs, reduction
from collsim.verify.dataflow import verify_dataflow
from collsim.verify.resources import verify_endpoints

from test_holdings import schedules
from test_mutations import take
from test_registry_mutations import CASES

REDUCTIONS = [(a, c, s) for a, c, s in CASES if collective_type(c).reduction]


@contextmanager
def method(name: str):
    with patch.object(reduction, "_FORCE_METHOD", name):
        yield


def _needs(c, v: int, k: int) -> np.ndarray:
    need = np.zeros(c.nodes, dtype=np.int64)
    if c.pre.every_mask[k]:
        need[:] = 1
    else:
        pn, pc = c.pre.explicit()
        need[pn[pc == k]] = 1
    if c.prefix:
        need[v + 1:] = 0
    return need


def oracle(s) -> bool:
    """Whether every result of a reduction's schedule is right, by multiplicity vectors (slow, small)."""
    c = s.collective
    n = c.nodes
    state: dict[tuple[int, int], np.ndarray] = {}
    pn, pc = c.pre.explicit()
    for v, k in zip(pn.tolist(), pc.tolist()):
        state[v, k] = np.eye(n, dtype=np.int64)[v]
    for k in np.flatnonzero(c.pre.every_mask).tolist():
        for v in range(n):
            state[v, k] = np.eye(n, dtype=np.int64)[v]
    steps = np.asarray(s.step)
    bounds = np.searchsorted(steps, np.arange(int(steps.max()) + 2 if len(steps) else 1))
    for step in range(len(bounds) - 1):
        writes: dict[tuple[int, int], list] = {}
        for t in range(int(bounds[step]), int(bounds[step + 1])):
            for k in s.chunk_idx[s.chunk_ptr[t]:s.chunk_ptr[t + 1]].tolist():
                payload = state.get((int(s.src[t]), k))
                if payload is None:
                    return False
                writes.setdefault((int(s.dst[t]), k), []).append((bool(s.reduce[t]), payload))
        for key, ws in writes.items():
            flags = {r for r, _ in ws}
            if len(flags) > 1:
                return False
            if flags == {True}:
                state[key] = state.get(key, np.zeros(n, np.int64)) + sum(p for _, p in ws)
            else:
                if any(not np.array_equal(p, ws[0][1]) for _, p in ws):
                    return False
                state[key] = ws[0][1]
    qn, qc = c.post.pairs()
    for v, k in zip(qn.tolist(), qc.tolist()):
        if not np.array_equal(state.get((v, k), np.zeros(n, np.int64)), _needs(c, v, k)):
            return False
    return True


def _verdict(s, how: str) -> bool:
    with method(how):
        try:
            collsim.verify(s, resources=False, answer=False)
        except E.DataFlowError:
            return False
    return True


@pytest.mark.parametrize("name,collective,system", REDUCTIONS, ids=[f"{a}-{c}" for a, c, _ in REDUCTIONS])
def test_every_registered_reduction_verifies_by_fingerprints_and_its_broken_copies_do_not(name, collective, system):
    s = collsim.build(name, system, collective, 4096)
    with method("fingerprint"):
        assert collsim.verify(s, answer=False).data_flow == "fingerprint"
        with pytest.raises(E.PostconditionError):  # the last step dropped
            collsim.verify(take(s, np.flatnonzero(s.step < s.num_steps - 1)), resources=False)
        t = int(np.flatnonzero(s.reduce)[0])  # a reduction repeated in its step
        with pytest.raises(E.DataFlowError):
            collsim.verify(take(s, np.insert(np.arange(len(s)), t + 1, t)), resources=False)


def _mutants():
    small = [(a, c, s) for a, c, s in REDUCTIONS if s.nodes <= 16]
    return st.tuples(st.sampled_from(small), st.integers(0, 4), st.integers(0, 2**32 - 1))


@settings(max_examples=50, deadline=None)
@given(_mutants())
def test_fingerprints_reach_the_oracles_verdict_on_random_mutants(case):
    """Change a chunk, a sender, a receiver or a reduce flag, or repeat a transfer: same verdict as the oracle."""
    (name, collective, system), kind, seed = case
    s = collsim.build(name, system, collective, 4096)
    rng = np.random.default_rng(seed)
    t = int(rng.integers(len(s)))
    c = s.collective
    if kind == 0:
        idx = s.chunk_idx.copy()
        idx[int(rng.integers(s.chunk_ptr[t], s.chunk_ptr[t + 1]))] = int(rng.integers(c.chunks))
        m = s.replace(chunk_idx=idx)
    elif kind in (1, 2):
        col = (s.src if kind == 1 else s.dst).copy()
        col[t] = int(rng.integers(c.nodes))
        m = s.replace(**{"src" if kind == 1 else "dst": col})
    elif kind == 3:
        red = s.reduce.copy()
        red[t] = not red[t]
        m = s.replace(reduce=red)
    else:
        m = take(s, np.insert(np.arange(len(s)), t + 1, t))
    try:
        verify_endpoints(m)
    except (E.VerificationError, E.ScheduleFormatError):
        return  # malformed or self-sends: refused before the data flow, by both
    truth = oracle(m)
    assert _verdict(m, "fingerprint") == truth
    if _verdict(m, "exact"):  # the exact check is stricter, never looser
        assert truth


def test_the_originals_pass_the_oracle():
    for name, collective, system in REDUCTIONS[:12]:
        assert oracle(collsim.build(name, system, collective, 4096)), name


def test_an_overwritten_double_count_passes_fingerprints_and_fails_exact_sets():
    from collsim.core.collective import make_collective
    from collsim.core.schedule import LogicalBuilder
    from collsim.systems import load_system
    c = make_collective("allreduce", 3, 8)
    b = LogicalBuilder(c)
    b.add(0, [0, 2], [1, 1], [[0], [0]], reduce=True)   # node 1: all three
    b.add(1, [0], [2], [[0]], reduce=True)              # node 2: 0 and 2 ...
    b.add(2, [0], [2], [[0]], reduce=True)              # ... and 0 again: a double count at node 2
    b.add(3, [1, 1], [0, 2], [[0], [0]])                # copies of the full sum overwrite both
    s = collsim.pipeline.realize(load_system("line", nodes=3), b.build())
    assert oracle(s)
    assert _verdict(s, "fingerprint")
    with method("exact"), pytest.raises(E.DoubleCountError):
        collsim.verify(s, resources=False, answer=False)


def test_the_automatic_choice_takes_fingerprints_where_exact_sets_would_not_fit(monkeypatch):
    s = collsim.build("ring", "line", "allreduce", "64KiB", nodes=200)
    assert collsim.verify(s, answer=False).data_flow == "exact"
    monkeypatch.setattr(reduction, "BLOCK_BYTES", 64 << 10)
    assert collsim.verify(s, answer=False).data_flow == "fingerprint"
    small = collsim.build("ring", "line", "allreduce", "64KiB", nodes=100)  # 2 words a set: never larger
    assert collsim.verify(small, answer=False).data_flow == "exact"


def test_the_failure_bound_is_below_two_to_the_minus_95():
    assert fingerprint.FAILURE_BOUND < 2.0**-95
    assert all(fingerprint.P % d for d in range(2, 65536))  # P is prime (trial division to its root)
    assert fingerprint.P < 2**32 and fingerprint.COUNT_CAP < fingerprint.P


def test_sums_wrap_modulo_p_and_counts_saturate():
    a = np.array([[fingerprint.P - 1, 5, 0, fingerprint.COUNT_CAP]], dtype=np.uint32)
    b = np.array([[3, fingerprint.P - 5, 7, 9]], dtype=np.uint32)
    assert fingerprint.add(a, b).tolist() == [[2, 0, 7, fingerprint.COUNT_CAP]]
    rows = np.array([[fingerprint.P - 1, 1, 1, 1]] * 5, dtype=np.uint32)
    assert fingerprint.group_sums(rows, np.array([0, 2])).tolist() == [
        [fingerprint.P - 2, 2, 2, 2], [fingerprint.P - 3, 3, 3, 3]]


@settings(max_examples=80, deadline=None)
@given(st.data(), st.sampled_from([0, 1, 3]), st.sampled_from([None, True, False]), st.sampled_from([1, 2, 1 << 20]))
def test_fingerprints_in_batches_and_either_index_mode_reach_the_oracles_verdict(data, batch, direct, rows):
    """Random reductions (every built-in kind, explicit holders, scan's prefixes): chunk batches, both
    index modes, a step's sums combined and the pairs' starting contributions set a few rows at a
    time give the oracle's verdict."""
    s = data.draw(schedules())
    if not s.collective.reduction:
        return
    with patch.object(reduction, "_BATCH_PAIRS", batch), patch.object(pairs, "_FORCE_DIRECT", direct), \
            patch.object(reduction, "_UPDATE_ROWS", rows), patch.object(reduction, "_INIT_PAIRS", rows):
        with method("fingerprint"):
            try:
                verify_dataflow(s)
                accepted = True
            except E.DataFlowError:
                accepted = False
        assert accepted == oracle(s)
        with method("exact"):
            try:
                verify_dataflow(s)
            except E.DataFlowError:
                return
        assert accepted  # what exact sets accept, fingerprints accept


def test_the_pair_index_keeps_int32_columns_while_they_fit_and_still_rejects_a_double_count():
    """The reduction check's largest arrays (each delivery's transfer and, in direct mode, its pair keys)
    are int32 below 2**31 entries: N = 4096's all-reduce by osm checks in 1.5 GiB instead of 2.0 GiB."""
    import dataclasses

    from collsim.core.errors import DataFlowError
    from collsim.verify.pairs import PairIndex
    from collsim.verify.reduction import verify_reduction
    s = collsim.build("osm", "paper", "allreduce", "64KiB", nodes=16, wavelengths=4)
    for direct in (True, False):
        idx = PairIndex(s, direct=direct)
        assert idx.row_t.dtype == np.int32 and idx.write.dtype == np.int32
    for method in ("exact", "fingerprint"):
        assert verify_reduction(s, "x", method) == method
        twice = dataclasses.replace(s, reduce=s.reduce.copy(), chunk_idx=s.chunk_idx.copy())
        first = int(np.flatnonzero(s.reduce)[0])
        twice.chunk_idx[int(np.flatnonzero(s.reduce)[1])] = s.chunk_idx[first]   # one partial sent twice
        with pytest.raises(DataFlowError):
            verify_reduction(twice, "x", method)


def _error(s, rows: int):
    with method("fingerprint"), patch.object(reduction, "_UPDATE_ROWS", rows):
        try:
            verify_dataflow(s)
        except E.DataFlowError as exc:
            return type(exc), str(exc), exc.where
    return None


@settings(max_examples=60, deadline=None)
@given(_mutants(), st.sampled_from([1, 2, 3]))
def test_a_steps_sums_in_blocks_of_rows_raise_the_same_first_error(case, rows):
    """The fingerprint verifier combines a step's writes a block of rows at a time (whole buffers'
    groups where a buffer is written twice): on random mutants it raises the error the whole step at
    once raises, the same kind at the same step, transfer and chunk, or none alike."""
    (name, collective, system), kind, seed = case
    s = collsim.build(name, system, collective, 4096)
    rng = np.random.default_rng(seed)
    t = int(rng.integers(len(s)))
    if kind == 0:
        red = s.reduce.copy()
        red[t] = not red[t]
        m = s.replace(reduce=red)
    elif kind == 1:   # a transfer repeated in its step: a buffer written twice
        m = take(s, np.insert(np.arange(len(s)), t + 1, t))
    elif kind == 2:   # a copy of another chunk into the same buffer, or a different sender
        col = s.src.copy()
        col[t] = int(rng.integers(s.collective.nodes))
        m = s.replace(src=col)
    else:
        m = s
    try:
        verify_endpoints(m)
    except (E.VerificationError, E.ScheduleFormatError):
        return
    assert _error(m, rows) == _error(m, 1 << 20)
