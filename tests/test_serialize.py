"""The schedule file format: round trips, hand-written files, malformed input."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from collsim import build, verify
from collsim.core import errors as E
from collsim.core.serialize import dumps, loads
from collsim.kinds.optical_ring import OpticalRing

HAND_WRITTEN = {
    "format": "collsim-schedule", "version": 1,
    "system": {"kind": "optical-ring", "nodes": 3, "wavelengths": 1},
    "collective": {"kind": "allgather", "nodes": 3, "size_bytes": 1000},
    "steps": [
        {"step": 0, "transfers": [
            {"src": 0, "dst": 1, "chunks": [0], "path": [0, 1], "fiber": 0, "wavelength": 0},
            {"src": 1, "dst": 2, "chunks": [1], "path": [1, 2], "fiber": 0, "wavelength": 0},
            {"src": 2, "dst": 0, "chunks": [2], "path": [2, 0], "fiber": 0, "wavelength": 0}]},
        {"step": 1, "transfers": [
            {"src": 0, "dst": 1, "chunks": [2], "path": [0, 1], "fiber": 0, "wavelength": 0},
            {"src": 1, "dst": 2, "chunks": [0], "path": [1, 2], "fiber": 0, "wavelength": 0},
            {"src": 2, "dst": 0, "chunks": [1], "path": [2, 0], "fiber": 0, "wavelength": 0}]},
    ],
}


@pytest.mark.parametrize("alg,coll,n", [("ring", "allreduce", 5), ("ne", "allgather", 2), ("ring", "allgather", 2),
                                         ("osm", "alltoall", 7), ("osm", "broadcast", 6)])
def test_round_trip_is_byte_identical(alg, coll, n):
    s = build(alg, OpticalRing(nodes=n, wavelengths=3, fibers=2), coll, 1000)
    text = dumps(s)
    again = loads(text)
    verify(again)
    assert dumps(again) == text
    for col in ("step", "src", "dst", "direction", "hops", "fiber", "wavelength", "chunk_idx"):
        assert np.array_equal(getattr(again, col), getattr(s, col)), col


def test_building_twice_gives_identical_files():
    sysm = OpticalRing(nodes=12, wavelengths=2)
    assert dumps(build("osm", sysm, "allreduce", 999)) == dumps(build("osm", sysm, "allreduce", 999))


def test_hand_written_schedule_verifies():
    verify(loads(json.dumps(HAND_WRITTEN)))


def test_hand_written_route_reversed_is_a_route_error():
    doc = json.loads(json.dumps(HAND_WRITTEN))
    doc["steps"][0]["transfers"][0]["path"] = [1, 0]
    with pytest.raises(E.RouteError, match=re.escape("(steps[0].transfers[0])")):
        loads(json.dumps(doc))


def test_hand_written_jumping_path_is_a_route_error():
    doc = json.loads(json.dumps(HAND_WRITTEN))
    doc["system"]["nodes"] = doc["collective"]["nodes"] = 5
    doc["steps"][0]["transfers"][0].update(dst=2, path=[0, 2])
    with pytest.raises(E.RouteError, match="contiguous"):
        loads(json.dumps(doc))


@pytest.mark.parametrize("text,match", [
    ("", "not valid JSON"),
    ('{"format": "collsim-schedule", "version": 1, "system": ', "not valid JSON"),
    ("[]", "not a collsim schedule"),
    ('{"format": "collsim-schedule", "version": 99}', "version"),
])
def test_malformed_files(text, match):
    with pytest.raises(E.ScheduleFormatError, match=match):
        loads(text)


@pytest.mark.parametrize("mutate,match", [
    (lambda d: d["system"].update(kind="warp-drive"), "unknown system kind"),
    (lambda d: d["system"].update(wavelengths=0), "wavelengths"),
    (lambda d: d["collective"].update(kind="allgossip"), "unknown kind"),
    (lambda d: d["collective"].update(size_bytes=-5), "size"),
    (lambda d: d["steps"][0]["transfers"][0].pop("chunks"), "missing 'chunks'"),
    (lambda d: d["steps"][0]["transfers"][0].update(src="zero"), "'src' must be an integer"),
    (lambda d: d["steps"][0]["transfers"][0].pop("path"), "needs a route"),
    (lambda d: d["steps"][0]["transfers"][0].update(reduce="yes"), "'reduce'"),
    (lambda d: d["steps"].reverse(), "step order"),
])
def test_malformed_fields(mutate, match):
    doc = json.loads(json.dumps(HAND_WRITTEN))
    mutate(doc)
    with pytest.raises(E.ScheduleFormatError, match=match):
        loads(json.dumps(doc))


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_saved_files_get_ordinary_permissions(tmp_path, suffix):
    # written through a temporary file (mkstemp makes it 0600), but the result has the mode a
    # plain open() would give, and an existing file keeps its own
    import os
    import stat
    from collsim.core.serialize import save
    s = build("ring", "paper", "allgather", 64, nodes=4)
    new, old = tmp_path / f"new{suffix}", tmp_path / f"old{suffix}"
    mask = os.umask(0o022)
    try:
        save(s, new)
        old.write_bytes(b"")
        old.chmod(0o640)
        save(s, old)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644
    assert stat.S_IMODE(old.stat().st_mode) == 0o640


def test_a_schedule_file_is_read_by_its_content_not_its_suffix(tmp_path):
    # verify <(cat s.npz) reads a pipe with no suffix: its zip bytes must not be parsed as JSON
    import collsim
    sched = collsim.build("ne", "ring", "allgather", 1024, nodes=6)
    npz = tmp_path / "s.npz"
    collsim.save(sched, npz)
    renamed = tmp_path / "s.schedule"
    renamed.write_bytes(npz.read_bytes())
    back = collsim.load(renamed)
    assert back.num_steps == sched.num_steps and (back.src == sched.src).all() and (back.dst == sched.dst).all()


def test_save_streams_json_a_step_at_a_time_into_the_same_bytes_as_dumps(tmp_path, monkeypatch):
    """``save`` hands the temporary file one step at a time (no copy of the whole text is held):
    the file is ``dumps``'s text, byte for byte."""
    import io

    import collsim
    from collsim.core import serialize
    s = collsim.build("ring", "paper", "allgather", "64KiB", nodes=12)
    writes = []

    class Counting(io.BytesIO):
        def write(self, data):
            writes.append(len(data))
            return super().write(data)

    def atomic(path, write):
        fh = Counting()
        write(fh)
        (tmp_path / "seen.json").write_bytes(fh.getvalue())
    monkeypatch.setattr(serialize, "atomic_write", atomic)
    serialize.save(s, tmp_path / "s.json")
    assert (tmp_path / "seen.json").read_bytes() == serialize.dumps(s).encode()
    assert len(writes) == s.num_steps + 2 and max(writes) < sum(writes) / 2      # head, every step, tail


def _ring_file_with_jumps(jumps: list[tuple[int, int]]) -> str:
    """A ring all-gather's file in which the transfers ``(entry, index)`` of ``jumps`` skip a vertex."""
    from collsim.kinds.network.electrical import Ring
    s = build("ring", Ring(nodes=6), "allgather", 64)
    doc = json.loads(dumps(s))
    for k, j in jumps:
        tr = doc["steps"][k]["transfers"][j]
        tr["dst"] = (tr["src"] + 2) % 6                 # two hops on: no link joins src to dst
        tr["path"] = [tr["src"], tr["dst"]]
    return json.dumps(doc)


def test_a_hop_no_link_joins_is_named_by_its_transfer_and_vertices():
    """Every hop's link is looked up in one query after the file is read; the first hop without a link,
    in file order, is the one named, with its transfer's position in the file."""
    with pytest.raises(E.RouteError) as info:
        loads(_ring_file_with_jumps([(3, 4), (2, 1)]))
    doc = json.loads(_ring_file_with_jumps([]))
    tr = doc["steps"][2]["transfers"][1]
    message = str(info.value)
    assert "steps[2].transfers[1]" in message and "steps[3]" not in message, message
    assert f"no link from vertex {tr['src']} to vertex {(tr['src'] + 2) % 6}" in message, message
    assert info.value.step == 2 and info.value.transfer == 2 * 6 + 1
