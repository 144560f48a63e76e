"""MSCCL algorithm XML out and in (issue #15): round trips of every exportable algorithm, the
format's rules on every exported file, and one hand-written bad file per rule."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import collsim_exe, raises_naming

import collsim
from collsim.algorithms import REGISTRY
from collsim.core import errors as E
from collsim.core.errors import UnsupportedError
from collsim.interop.msccl import errors as M
from collsim.interop.msccl.files import (MscclLimits, check_algo, export_msccl, from_xml, import_msccl, schedule_to_msccl,
                                   to_xml)
from collsim.interop.msccl.xml_model import ALGO_ATTRS, GPU_ATTRS, STEP_ATTRS, TB_ATTRS
from collsim.systems import load_system

pytestmark = pytest.mark.schedule_first(28)  # about 28 s of work: handed out early (tests/conftest.py)

DATA = Path(__file__).parent / "data" / "msccl"
SIX = ("allgather", "reducescatter", "allreduce", "alltoall", "broadcast", "reduce")
RCCL = MscclLimits(max_steps=256, max_thread_blocks=216)
CASES = [(name, coll) for name, spec in sorted(REGISTRY.items()) for coll in spec.collectives
         if coll in SIX and ("network" in spec.systems)]


def _systems(n: int):
    yield load_system("star", nodes=n)
    yield load_system("ring", nodes=n)
    if n in (4, 9):
        side = int(round(n ** 0.5))
        yield load_system("mesh", dims=(side, side))
    if n in (4, 8):
        yield load_system("hypercube", nodes=n)


def _multiset(s) -> Counter:
    rows = np.repeat(np.arange(len(s)), np.diff(s.chunk_ptr))
    return Counter(zip(s.src[rows].tolist(), s.dst[rows].tolist(), s.chunk_idx.tolist(), s.reduce[rows].tolist()))


def _exported(sched):
    try:
        return schedule_to_msccl(sched)
    except M.MscclLimitError:
        return schedule_to_msccl(sched, limits=RCCL)


def test_the_round_trip_covers_every_network_algorithm_of_the_six_collectives():
    names = {name for name, _ in CASES}
    assert {"ring", "pairwise", "bruck", "binomial", "recursive-doubling", "rabenseifner", "mesh"} <= names


@pytest.mark.parametrize("name,coll", CASES)
def test_round_trip_of_every_exportable_algorithm(name, coll):
    spec, tried = REGISTRY[name], 0
    for n in (2, 3, 4, 5, 8, 9):
        for system in _systems(n):
            if not spec.runs_on(system):
                continue
            try:
                sched = collsim.build(name, system, coll, 96 * n)
            except UnsupportedError:
                continue
            collsim.verify(sched)
            try:
                algo = _exported(sched)
            except M.MscclLimitError:
                continue
            limits = RCCL if algo.num_steps() and max(len(tb.steps) for g in algo.gpus for tb in g.tbs) > 64 \
                or max(len(g.tbs) for g in algo.gpus) > 64 else MscclLimits()
            check_algo(algo, limits, sched.collective.root)
            _check_attributes(to_xml(algo))
            got = import_msccl(from_xml(to_xml(algo)), system=system, size_bytes=sched.collective.size_bytes,
                               limits=limits)
            assert _multiset(got.schedule) == _multiset(sched), (name, coll, n, system.topology)
            assert got.schedule.num_steps <= sched.num_steps, (name, coll, n, system.topology)
            tried += 1
    assert tried, f"{name} {coll}: no instance exported"


def _check_attributes(text: str) -> None:
    import xml.etree.ElementTree as ET
    root = ET.fromstring(text)
    assert not text.startswith("<?xml")
    assert set(ALGO_ATTRS) <= set(root.attrib)
    for g in root.findall("gpu"):
        assert set(GPU_ATTRS) <= set(g.attrib)
        ids = [int(tb.get("id")) for tb in g.findall("tb")]
        assert ids == list(range(len(ids)))
        for tb in g.findall("tb"):
            assert set(TB_ATTRS) <= set(tb.attrib)
            assert g.get("id") not in (tb.get("send"), tb.get("recv"))
            for i, s in enumerate(tb.findall("step")):
                assert set(STEP_ATTRS) <= set(s.attrib) and int(s.get("s")) == i


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 12), coll=st.sampled_from(["allgather", "allreduce", "reducescatter"]),
       size=st.integers(1, 1 << 16))
def test_ring_round_trips_at_random_sizes(n, coll, size):
    sched = collsim.build("ring", "star", coll, size, nodes=n)
    got = import_msccl(from_xml(to_xml(_exported(sched))), size_bytes=size, limits=RCCL)
    assert _multiset(got.schedule) == _multiset(sched)


def test_export_is_deterministic_and_atomic(tmp_path):
    s = collsim.build("bruck", "star", "alltoall", 1024, nodes=6)
    export_msccl(s, tmp_path / "a.xml")
    export_msccl(collsim.build("bruck", "star", "alltoall", 1024, nodes=6), tmp_path / "b.xml")
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.xml", "b.xml"]


def test_reductions_use_rrc_and_alltoall_copies_the_own_block():
    text = to_xml(schedule_to_msccl(collsim.build("ring", "star", "allreduce", 64, nodes=4)))
    assert 'type="rrc"' in text and 'coll="allreduce"' in text
    a2a = schedule_to_msccl(collsim.build("pairwise", "star", "alltoall", 64, nodes=4))
    cpys = [st for g in a2a.gpus for tb in g.tbs for st in tb.steps if st.type == "cpy"]
    assert len(cpys) == 4 and all(st.srcbuf == "i" and st.dstbuf == "o" for st in cpys)


def test_export_refuses_optical_schedules_and_other_collectives():
    with pytest.raises(UnsupportedError, match="not supported on optical-ring"):
        schedule_to_msccl(collsim.build("ring", "paper", "allgather", 64, nodes=4))
    with pytest.raises(UnsupportedError, match="not scatter"):
        schedule_to_msccl(collsim.build("binomial", "star", "scatter", 64, nodes=4))


def test_export_refuses_beyond_the_step_limit_naming_it():
    with raises_naming(M.MscclLimitError, "gpu 0", "tb 0", "126 steps", "64"):   # where, how many, the limit
        schedule_to_msccl(collsim.build("ring", "star", "allreduce", 64, nodes=64))


def test_import_refuses_too_many_thread_blocks_per_channel():
    algo = schedule_to_msccl(collsim.build("pairwise", "star", "alltoall", 64, nodes=40))
    flat = replace(algo, nchannels=1, gpus=tuple(replace(g, tbs=tuple(replace(tb, chan=0) for tb in g.tbs))
                                                 for g in algo.gpus))
    with raises_naming(M.MscclLimitError, "33 thread blocks", "channel 0"):
        import_msccl(flat)


BAD = {
    "missing_outofplace": (M.MscclFormatError, 2, "missing attribute 'outofplace'"),
    "missing_minbytes": (M.MscclFormatError, 2, "missing attribute 'minBytes'"),
    "missing_maxbytes": (M.MscclFormatError, 2, "missing attribute 'maxBytes'"),
    "missing_i_chunks": (M.MscclFormatError, 2, "gpu 1: missing attribute 'i_chunks'"),
    "missing_chan": (M.MscclFormatError, 2, "gpu 0, tb 1: missing attribute 'chan'"),
    "missing_hasdep": (M.MscclFormatError, 2, "gpu 0, tb 0, step 0: missing attribute 'hasdep'"),
    "tb_gap": (M.MscclFormatError, 2, "tb 1 is missing"),
    "send_self": (M.MscclFormatError, 2, "send peer is the gpu itself"),
    "two_deps": (M.MscclFormatError, 2, "duplicate attribute"),
    "dep_missing_tb": (M.MscclFormatError, 2, "depid=5 is not another thread block of gpu 0"),
    "dep_missing_step": (M.MscclFormatError, 2, "deps=3 is not a step of tb 1"),
    "hasdep_missing": (M.MscclFormatError, 2, "gpu 0, tb 1, step 0: hasdep=0, but tb 0 step 0 waits for it"),
    "unmatched_send": (M.MscclFormatError, 2, "gpu 1 has no matching receive from gpu 0"),
    "cnt_mismatch": (M.MscclFormatError, 2, "sends cnt=1 but its matching receive"),
    "race": (M.MscclRaceError, 1, "gpu 0 output offset 0"),
    "deadlock": (M.MscclDeadlockError, 1, "gpu 0, tb 0, step 0 (s) never runs"),
    "never_delivered": (E.PostconditionError, 1, "node 0 lacks chunk 1"),
    "allreduce2_double": (E.DoubleCountError, 1, "double-counted contribution"),
    "steps_limit": (M.MscclLimitError, 2, "65 steps, above the executor's limit of 64"),
    "cnt_limit": (M.MscclLimitError, 2, "cnt=72, must be 1..71"),
}


def test_a_happens_before_closure_beyond_memory_is_refused_up_front(monkeypatch):
    from collsim.core.limits import MemoryLimitError
    monkeypatch.setenv("COLLSIM_MEMORY_LIMIT", "1000")
    with raises_naming(MemoryLimitError, "happens-before", "6 MSCCL steps", "COLLSIM_MEMORY_LIMIT=1000"):
        import_msccl(DATA / "allgather2.xml")


def test_the_hand_written_good_file_imports():
    got = import_msccl(DATA / "allgather2.xml")
    assert got.schedule.num_steps == 1 and len(got.schedule) == 2


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_bad_file_raises_its_typed_error(name):
    cls, _, text = BAD[name]
    with pytest.raises(cls, match=text.replace("(", r"\(").replace(")", r"\)")):
        import_msccl(DATA / f"{name}.xml")


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_bad_file_exits_with_one_line(name, tmp_path):
    _, code, text = BAD[name]
    proc = subprocess.run([collsim_exe(), "import", "msccl", str(DATA / f"{name}.xml")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("collsim: ") and text in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_export_then_import(tmp_path):
    exe = collsim_exe()
    out = subprocess.run([exe, "export", "msccl", "ring", "-n", "4", "-c", "allreduce", "--out", "r.xml"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "wrote r.xml" in out.stdout and "verified" in out.stdout, out.stderr
    got = subprocess.run([exe, "import", "msccl", "r.xml", "--json", "--out", "r.json"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    import json
    doc = json.loads(got.stdout)
    assert got.returncode == 0 and doc["valid"] and doc["steps"] == 6 and (tmp_path / "r.json").exists()
    again = subprocess.run([exe, "verify", "r.json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    bad = subprocess.run([exe, "export", "msccl", "ring", "--system", "paper", "-n", "4", "--out", "x.xml"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("collsim: ") and not (tmp_path / "x.xml").exists()
