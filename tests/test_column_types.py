"""A schedule holds its columns in collsim's own types whatever it is given (collsim.core.csr.canonical_column).

The checks form keys such as ``node * chunks + chunk`` from the columns; given int8 or int16 columns
through the Python API they wrapped round, and a correct schedule failed with an ``IndexError``
(a ring all-reduce on 16 nodes).  Now every column is converted, checked, when the schedule is made.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core import errors as E
from collsim.core.schedule import LogicalSchedule, Schedule

BUILDS = {
    "optical-ring-allreduce": lambda: collsim.build("ring", "paper", "allreduce", "64KiB", nodes=16),
    "fat-tree-alltoall": lambda: collsim.build("pairwise", "fat-tree", "alltoall", 1024, nodes=16),
    "hierarchical-allreduce": lambda: collsim.build(
        "hier-allreduce", collsim.load_system("hierarchical", dims="switch:8,switch:2"), "allreduce", "1MiB"),
}
NARROW = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _narrowed(s, draw_dtype):
    """``s`` with every integer column (common and routes) in a narrower type that holds it, where one does."""
    changes = {}
    for name in (*Schedule.DTYPES, *s.routes.columns()):
        col = getattr(s, name) if name in Schedule.DTYPES else getattr(s.routes, name)
        if col.dtype.kind != "i":
            continue
        dtype = np.dtype(draw_dtype(name))
        info = np.iinfo(dtype)
        if col.size and (int(col.min()) < info.min or int(col.max()) > info.max):
            continue
        changes[name] = col.astype(dtype)
    return s.replace(**changes), changes


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(BUILDS)), data=st.data())
def test_narrow_columns_are_held_in_collsims_types_and_verify_alike(name, data):
    s = BUILDS[name]()
    t, changes = _narrowed(s, lambda column: data.draw(st.sampled_from(NARROW), label=column))
    assert changes      # something was narrowed: the property is not vacuous
    for column in changes:
        held = getattr(t, column) if column in Schedule.DTYPES else getattr(t.routes, column)
        want = getattr(s, column) if column in Schedule.DTYPES else getattr(s.routes, column)
        assert held.dtype == want.dtype, column
        np.testing.assert_array_equal(held, want, err_msg=column)
    assert collsim.verify(t).transfers == collsim.verify(s).transfers
    assert collsim.evaluate(t).time_s == collsim.evaluate(s).time_s
    broken, _ = _narrowed(s.take(np.arange(1, len(s))), lambda column: np.int16)   # its first transfer dropped
    with pytest.raises(E.CollsimError) as narrow:
        collsim.verify(broken)
    with pytest.raises(E.CollsimError) as wide:
        collsim.verify(s.take(np.arange(1, len(s))))
    assert type(narrow.value) is type(wide.value) and str(narrow.value) == str(wide.value)


@pytest.mark.parametrize("column,value,needle", [
    ("src", np.zeros(1, float), "column 'src' must be a 1-D int64 array, got float64"),
    ("step", np.array([[0]]), "column 'step' must be a 1-D int64 array"),
    ("step", np.array([2**63], np.uint64), "column 'step' holds 9223372036854775808, out of range"),
    ("reduce", np.zeros(1, np.int64), "column 'reduce' must be a 1-D bool array"),
    ("fiber", np.array([70000]), "column 'fiber' holds 70000, out of range: collsim stores it as int16"),
])
def test_columns_that_do_not_fit_are_refused_naming_the_column(column, value, needle):
    s = collsim.build("ring", "paper", "allgather", 1024, nodes=3)
    bad = np.resize(value, len(s)) if value.ndim == 1 else value
    with pytest.raises(E.MalformedScheduleError) as info:
        s.replace(**{column: bad})
    assert needle in str(info.value)
    assert isinstance(info.value, ValueError)


def test_an_algorithms_narrow_logical_columns_realise_and_verify_as_int64_ones():
    """A plug-in may emit its logical schedule in any integer type: realisation sees collsim's own."""
    from collsim.algorithms import build_logical
    from collsim.pipeline import realize
    system = collsim.load_system("paper", nodes=16)
    logical, params = build_logical("ring", system, "allreduce", 65536)
    from collsim.core.binary import narrowest   # int8 where the values fit, int16 where they do not
    columns = [narrowest(getattr(logical, k)) for k in ("round", "src", "dst", "chunk_ptr", "chunk_idx")]
    assert {c.dtype for c in columns} == {np.dtype(np.int8), np.dtype(np.int16)}
    narrow = LogicalSchedule(logical.collective, *columns, logical.reduce,
                             direction=None if logical.direction is None else logical.direction.astype(np.int16))
    assert narrow.src.dtype == np.int64 and narrow.chunk_ptr.dtype == np.int64
    wide = LogicalSchedule(logical.collective, logical.round, logical.src, logical.dst, logical.chunk_ptr,
                           logical.chunk_idx, logical.reduce, direction=logical.direction)
    a, b = realize(system, narrow), realize(system, wide)
    assert collsim.verify(a).transfers == collsim.verify(b).transfers == len(b)
    for column in Schedule.DTYPES:
        np.testing.assert_array_equal(getattr(a, column), getattr(b, column), err_msg=column)
    with pytest.raises(E.MalformedScheduleError, match="logical schedule column 'band' holds 2147483648"):
        LogicalSchedule(logical.collective, logical.round, logical.src, logical.dst, logical.chunk_ptr,
                        logical.chunk_idx, logical.reduce, band=np.full(len(logical.src), 2**31))
