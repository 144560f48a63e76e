"""Compact ``.npz`` schedule files (collsim.core.binary): narrowest integer columns, pointer columns of
one entry a row left out (version 3), the same schedule read back, and old files still read."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core import errors as E
from collsim.core.binary import ONE_ENTRY_POINTERS, narrowest, read_npz, write_npz
from collsim.core.serialize import dumps

COMMON = ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")


def _arrays(s) -> dict[str, np.ndarray]:
    buf = io.BytesIO()
    write_npz(s, buf)
    with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def _columns(s) -> dict[str, np.ndarray]:
    cols = {k: getattr(s, k) for k in COMMON}
    cols.update({k: getattr(s.routes, k) for k in s.routes.columns()})
    return cols


def _npz(arrays: dict) -> io.BytesIO:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    return buf


SCHEDULES = {   # one chunk a transfer on a ring; two chunks; routes of several links; one link; ECMP paths
    "ring-one-chunk": lambda: collsim.build("ring", "paper", "allgather", "64KiB", nodes=16),
    "ne-two-chunks": lambda: collsim.build("ne", "paper", "allgather", 1000, nodes=4),
    "fat-tree-routes": lambda: collsim.build("pairwise", "fat-tree", "alltoall", 1024, nodes=16),
    "ring-one-link": lambda: collsim.build("ring", "ring", "allgather", 1024, nodes=16),
    "leaf-spine-ecmp": lambda: collsim.build("pairwise", collsim.load_system("fat-tree", nodes=8, k=4, levels=2,
                                                                             routing="ecmp"), "alltoall", 4096),
    "hierarchical": lambda: collsim.build("hier-allreduce", collsim.load_system("hierarchical", dims="switch:8,switch:2"),
                                          "allreduce", "1MiB"),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_every_column_is_written_in_its_narrowest_type_and_read_back_unchanged(name):
    s = SCHEDULES[name]()
    arrays = _arrays(s)
    want = _columns(s)
    for k, a in arrays.items():
        if k == "header" or a.dtype.kind not in "iu":
            continue
        assert a.dtype == narrowest(want[k]).dtype, k
        if a.dtype != np.int8 and a.size:        # no narrower type holds it
            narrower = np.iinfo(np.dtype(f"int{a.dtype.itemsize * 4}"))
            assert int(a.min()) < narrower.min or int(a.max()) > narrower.max, k
    for k in ONE_ENTRY_POINTERS:
        if k in want:   # left out exactly when every row has one entry
            assert (k not in arrays) == np.array_equal(want[k], np.arange(len(want[k]))), k
    head = json.loads(bytes(arrays["header"]).decode())
    assert head["version"] == (3 if any(k in want and k not in arrays for k in ONE_ENTRY_POINTERS) else 2)
    buf = io.BytesIO()
    write_npz(s, buf)
    buf.seek(0)
    back = read_npz(buf)
    for k, col in _columns(back).items():
        np.testing.assert_array_equal(col, want[k], err_msg=k)
        assert col.dtype == want[k].dtype, k
    assert dumps(back) == dumps(s)
    collsim.verify(back)


def test_a_ring_transfer_of_one_chunk_takes_at_most_24_bytes_of_the_file():
    """Issue 34's figure for the common case (one chunk, one lightpath): 68 bytes a transfer in memory."""
    s = collsim.build("ring", "paper", "allgather", "4MiB", nodes=1024)
    arrays = _arrays(s)
    assert "chunk_ptr" not in arrays
    per_transfer = sum(a.nbytes for k, a in arrays.items() if k != "header") / len(s)
    assert per_transfer <= 24
    assert s.nbytes() / len(s) > 60      # what the file saves against the columns in memory


def test_old_files_of_int64_columns_with_every_pointer_still_load():
    s = SCHEDULES["fat-tree-routes"]()
    old = {k: np.asarray(v, np.int64) if v.dtype.kind in "iu" else v for k, v in _columns(s).items()}
    head = json.loads(bytes(_arrays(s)["header"]).decode())
    head["version"] = 2
    back = read_npz(_npz({"header": np.frombuffer(json.dumps(head).encode(), np.uint8), **old}))
    for k, col in _columns(back).items():
        np.testing.assert_array_equal(col, old[k], err_msg=k)


@pytest.mark.parametrize("version", [1, 2])
def test_only_a_version_3_file_may_leave_a_pointer_out(version):
    arrays = _arrays(SCHEDULES["ring-one-chunk"]())
    head = json.loads(bytes(arrays["header"]).decode())
    head["version"] = version
    arrays["header"] = np.frombuffer(json.dumps(head).encode(), np.uint8)
    with pytest.raises(E.ScheduleFormatError, match="missing column 'chunk_ptr'"):
        read_npz(_npz(arrays))


def test_a_left_out_pointer_must_match_its_entries():
    arrays = _arrays(SCHEDULES["ring-one-chunk"]())
    arrays["chunk_idx"] = np.r_[arrays["chunk_idx"], 0]
    with pytest.raises(E.ScheduleFormatError, match="'chunk_ptr' is left out.*has 241 entries for 240 transfers"):
        read_npz(_npz(arrays))
    arrays = _arrays(SCHEDULES["ring-one-link"]())
    assert "route_ptr" not in arrays
    arrays["route_links"] = arrays["route_links"][:-1]
    with pytest.raises(E.ScheduleFormatError, match="'route_ptr' is left out"):
        read_npz(_npz(arrays))


@settings(max_examples=200)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6))
def test_narrowest_keeps_every_value_in_the_smallest_type(values):
    a = np.array(values, dtype=np.int64)
    out = narrowest(a)
    assert out.dtype.kind == "i" and out.tolist() == a.tolist()
    if out.dtype.itemsize > 1:
        half = np.iinfo(np.dtype(f"int{out.dtype.itemsize * 4}"))
        assert a.min() < half.min or a.max() > half.max
