"""Chunks that always travel together are verified once (collsim.verify.classes): the same verdict as whole."""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core import errors as E
from collsim.systems import load_system
from collsim.verify import classes, reduction
from collsim.verify.resources import verify_endpoints

from test_mutations import take

SYSTEM = load_system("hierarchical", dims="switch:4,ring:4")
GROUPED = [("hier-allgather", "allgather"), ("hier-allreduce", "allreduce"), ("hier-alltoall", "alltoall"),
           ("md-ring", "allreduce"), ("md-ring", "allgather")]


@contextmanager
def whole(yes: bool):
    """Verify whole (no quotient) or always through the quotient; exact sets for reductions either way."""
    with patch.object(classes, "MIN_ROWS", 2**62 if yes else 0), patch.object(reduction, "_FORCE_METHOD", "exact"):
        yield


def _outcome(s, yes: bool):
    with whole(yes):
        try:
            collsim.verify(s, resources=False, answer=False)
        except E.DataFlowError as exc:
            return type(exc), exc.step
    return None


@pytest.mark.parametrize("name,collective", GROUPED)
def test_grouped_schedules_have_a_much_smaller_quotient_that_verifies(name, collective):
    s = collsim.build(name, SYSTEM, collective, "64KiB")
    q = classes.quotient(s, min_rows=0)
    assert q is not None
    assert len(q.schedule.chunk_idx) * 8 <= len(s.chunk_idx) and len(q.schedule) == len(s)
    assert (np.diff(q.representative) > 0).all()
    for yes in (True, False):
        assert _outcome(s, yes) is None


def test_single_chunk_transfers_have_no_quotient():
    assert classes.quotient(collsim.build("ring", "line", "allgather", "1KiB", nodes=8), min_rows=0) is None


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(GROUPED), st.integers(0, 4), st.integers(0, 2**32 - 1))
def test_the_quotient_reaches_the_whole_schedules_verdict_on_random_mutants(case, kind, seed):
    """Drop a chunk from a transfer (splitting a class), change a chunk, a sender or a receiver, or repeat a
    transfer: the quotient's verdict, error class and step are the whole schedule's."""
    s = collsim.build(case[0], SYSTEM, case[1], "64KiB")
    rng = np.random.default_rng(seed)
    multi = np.flatnonzero(np.diff(s.chunk_ptr) > 1)
    t = int(rng.choice(multi)) if kind == 0 else int(rng.integers(len(s)))
    if kind == 0:  # one chunk fewer in one transfer
        keep = np.ones(len(s.chunk_idx), dtype=bool)
        keep[int(rng.integers(s.chunk_ptr[t], s.chunk_ptr[t + 1]))] = False
        ptr = s.chunk_ptr.copy()
        ptr[t + 1:] -= 1
        m = s.replace(chunk_ptr=ptr, chunk_idx=s.chunk_idx[keep])
    elif kind == 1:
        idx = s.chunk_idx.copy()
        idx[int(rng.integers(s.chunk_ptr[t], s.chunk_ptr[t + 1]))] = int(rng.integers(s.collective.chunks))
        m = s.replace(chunk_idx=idx)
    elif kind in (2, 3):
        col = (s.src if kind == 2 else s.dst).copy()
        col[t] = int(rng.integers(s.collective.nodes))
        m = s.replace(**{"src" if kind == 2 else "dst": col})
    else:
        m = take(s, np.insert(np.arange(len(s)), t + 1, t))
    try:
        verify_endpoints(m)
    except (E.VerificationError, E.ScheduleFormatError):
        return
    assert _outcome(m, True) == _outcome(m, False)


def test_an_error_found_on_the_quotient_names_the_original_chunk():
    s = collsim.build("hier-allgather", SYSTEM, "allgather", "64KiB")
    broken = take(s, np.flatnonzero(s.step < s.num_steps - 1))
    q = classes.quotient(broken, min_rows=0)
    assert q is not None
    errors = []
    for yes in (True, False):
        with whole(yes), pytest.raises(E.PostconditionError) as info:
            collsim.verify(broken, resources=False, answer=False)
        errors.append(info.value)
    by_whole, by_quotient = errors
    assert by_quotient.where.chunk in q.representative.tolist()
    assert f"chunk {by_quotient.where.chunk}" in by_quotient.message
    assert by_quotient.where.node == by_whole.where.node
    # the named chunk is one the node really ends without: the last step delivered it there
    last = np.flatnonzero((s.step == s.num_steps - 1) & (s.dst == by_quotient.where.node))
    assert any(by_quotient.where.chunk in s.chunks_of(int(i)).tolist() for i in last)


def test_a_hash_collision_costs_the_quotient_never_the_verdict(monkeypatch):
    """With every hash weight zero, unequal chunks are proposed as one class: the exact check refuses it."""
    s = collsim.build("hier-allgather", SYSTEM, "allgather", "64KiB")
    w, u, mix = classes._weights(len(s), s.collective.nodes)
    monkeypatch.setattr(classes, "_weights", lambda t, n: (np.zeros_like(w), np.zeros_like(u), mix))
    assert classes.quotient(s, min_rows=0) is None


def test_all_or_none_refuses_a_class_split_between_transfers():
    ptr = np.array([0, 2, 3])
    cls = np.array([0, 0, 1])                       # class 0 whole in row 0, class 1 whole in row 1
    assert classes._all_or_none(ptr, cls, np.array([2, 1]))
    assert not classes._all_or_none(ptr, np.array([0, 1, 0]), np.array([2, 1]))  # class 0 split
    lengths = np.arange(1, 71)                      # 70 rows of distinct lengths: the one-sort path
    ptr = np.concatenate(([0], np.cumsum(lengths)))
    cls = np.arange(ptr[-1])
    assert classes._all_or_none(ptr, cls, np.ones(ptr[-1], dtype=np.int64))
    assert not classes._all_or_none(ptr, cls, np.full(ptr[-1], 2))
