"""Schedule files of representatives and their group (version 4, ``collsim.core.compact_file``).

A symmetric schedule or one whose steps repeat is written as its representatives and the group
that moves them.  Read back it must be the same schedule: the same form, the same verdict and
time, and expanded transfer for transfer the schedule built in memory.  A file's group is
believed only where the system's kind maps it onto the system, and a version-4 file is refused
by a reader that does not know it, so that nobody takes representatives for a whole schedule.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collsim
from collsim.core.errors import ScheduleFormatError, VerificationError
from collsim.core.repeated import RepeatedSteps
from collsim.core.serialize import dumps, load, loads, save
from collsim.core.symmetry import SymmetricSchedule
from collsim.pipeline import build_repeated, build_symmetric, evaluate, simulate_compact, verify

SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])


def _compact(kind: str, n: int, collective: str):
    """A symmetric or repeated schedule of one of four families, small enough to expand."""
    if kind == "ring-on-ring":
        return build_symmetric("ring", "ring", collective, 4096 * n, nodes=n)
    if kind == "optical-ring":
        return build_symmetric("ring", "paper", collective, 4096 * n, nodes=n)
    if kind == "hier-allreduce":
        return build_symmetric("hier-allreduce", "hierarchical", "allreduce", "1MiB",
                               system_options={"dims": f"switch:{4 if n % 2 else 2}:300GB/s,fat-tree:16:50GB/s"})
    box = n % 3 + 2       # boxes of 2-4 on a fat tree of 4 hosts: a size of 4096 bytes a node splits evenly
    return build_repeated("ring", "hierarchical", collective, 4096 * 4 * box,
                          system_options={"dims": f"switch:{box}:300GB/s,fat-tree:4:50GB/s"})


@SETTINGS
@given(kind=st.sampled_from(["ring-on-ring", "optical-ring", "hier-allreduce", "repeated"]), n=st.integers(3, 9),
       collective=st.sampled_from(["allgather", "allreduce"]), ext=st.sampled_from(["json", "npz"]))
def test_a_compact_file_reads_back_as_the_same_schedule(tmp_path, kind, n, collective, ext):
    c = _compact(kind, n, collective)
    path = tmp_path / f"s.{ext}"
    save(c, path, expand=False)
    back = load(path, expand=False)
    assert type(back) is type(c) and back.transfers == c.transfers
    assert verify(back) == verify(c)
    assert evaluate(back).time_s == evaluate(c).time_s
    assert dumps(load(path)) == dumps(c.expand())            # expanded: the schedule built in memory
    assert verify(str(path)).transfers == c.transfers          # collsim.verify reads it on its orbits
    head = json.loads(path.read_text()) if ext == "json" else None
    if head is not None:
        assert head["version"] == 4 and head["symmetry"]["form"] in ("symmetric", "repeated")
        assert sum(len(s["transfers"]) for s in head["steps"]) < c.transfers   # representatives, not the whole


@pytest.mark.parametrize("kind", ["ring-on-ring", "hier-allreduce", "repeated"])
def test_a_file_missing_a_representative_fails_as_its_expansion_does(tmp_path, kind):
    c = _compact(kind, 4, "allgather")
    flow = c.flow if isinstance(c, RepeatedSteps) else c
    broken = SymmetricSchedule(flow.reps.take(range(len(flow.reps) - 1)), flow.group, flow.interleaved)
    if isinstance(c, RepeatedSteps):
        broken = RepeatedSteps.of(broken, lambda s, ls: collsim.pipeline.realize(s, ls, algorithm="ring"))
    path = tmp_path / "broken.npz"
    save(broken, path, expand=False)
    with pytest.raises(VerificationError) as on_orbits:
        verify(str(path))
    with pytest.raises(VerificationError) as expanded:
        verify(load(path))
    assert type(on_orbits.value) is type(expanded.value)


EVERY_SYMMETRIC = {
    "ring": lambda: build_symmetric("ring", "paper", "allreduce", 8 * 4096, nodes=8),
    "striped-ring": lambda: build_symmetric("striped-ring", "paper", "allgather", 4096, nodes=8, wavelengths=8),
    "striped-stages": lambda: build_symmetric("striped-stages", "paper", "allgather", 4096, nodes=8, wavelengths=8),
    "ne": lambda: build_symmetric("ne", "paper", "allgather", 4096, nodes=8),
    "hier-allreduce": lambda: build_symmetric("hier-allreduce", "hierarchical", "allreduce", 32 * 4096,
                                              system_options={"dims": "switch:4,ring:8"}),
    "hier-allgather": lambda: build_symmetric("hier-allgather", "hierarchical", "allgather", 4096,
                                              system_options={"dims": "switch:4,fat-tree:16"}),
    "md-ring": lambda: build_symmetric("md-ring", "hierarchical", "allreduce", 16 * 4096,
                                       system_options={"dims": "switch:4,ring:4"}),
    "rabenseifner": lambda: build_symmetric("rabenseifner", "hierarchical", "allreduce", 64 * 4096,
                                            system_options={"dims": "switch:4,fat-tree:16"}),
    "synth-trees": lambda: build_symmetric("synth-trees", "torus", "allgather", 4096, system_options={"dims": (3, 4)}),
}
"""A small symmetric schedule of every algorithm that declares its symmetry."""


def test_every_algorithm_that_declares_its_symmetry_round_trips_through_a_file(tmp_path):
    from collsim.algorithms import REGISTRY
    assert set(EVERY_SYMMETRIC) == {name for name, spec in REGISTRY.items() if spec.orbits is not None}
    for name, make in EVERY_SYMMETRIC.items():
        c = make()
        assert isinstance(c, SymmetricSchedule)
        for ext in ("json", "npz"):
            path = tmp_path / f"{name}.{ext}"
            save(c, path, expand=False)
            back = load(path, expand=False)
            assert back.group == c.group and back.transfers == c.transfers, name
            assert verify(back) == verify(c), name
            assert dumps(load(path)) == dumps(c.expand()), name


def _verdict(check):
    try:
        check()
        return ("passed",)
    except VerificationError as exc:
        return type(exc).__name__, exc.where.step if exc.where else None
    except ScheduleFormatError as exc:
        return (type(exc).__name__,)


@SETTINGS
@given(name=st.sampled_from(["hier-allreduce", "rabenseifner", "synth-trees"]), seed=st.integers(0, 2**32 - 1),
       ext=st.sampled_from(["json", "npz"]))
def test_a_mutant_file_fails_on_its_orbits_iff_its_expansion_fails(tmp_path, name, seed, ext):
    """Mutants of the representatives, written and read back: the file's verdict on its orbits is
    its expansion's, in the same step (tests/conftest.py's five mutants)."""
    from conftest import representative_mutants
    c = EVERY_SYMMETRIC[name]()
    rejected = 0
    for what, reps in representative_mutants(c.reps, np.random.default_rng(seed)):
        path = tmp_path / f"{what}.{ext}"
        save(SymmetricSchedule(reps, c.group, c.interleaved), path, expand=False)
        on_orbits = _verdict(lambda: verify(str(path)))
        assert on_orbits == _verdict(lambda: verify(load(path))), what
        rejected += on_orbits[0] != "passed"
    assert rejected >= 3          # the chunk, the dropped transfer, the duplicate at least


def _doc(c) -> dict:
    from collsim.core.compact_file import symmetry_of
    reps, sym = symmetry_of(c)
    return json.loads(dumps(reps, symmetry=sym))


def test_a_group_that_is_not_the_systems_symmetry_is_refused():
    doc = _doc(_compact("hier-allreduce", 3, "allreduce"))       # boxes of 4 GPUs on 16 boxes: 64 nodes
    doc["symmetry"].update(radices=[64], moving=[True])            # rotations by one GPU split the boxes
    with pytest.raises(ScheduleFormatError, match="do not map"):
        loads(json.dumps(doc), expand=False)


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("symmetry"), "needs a 'symmetry'"),
    (lambda d: d.update(version=2), "needs version 4"),
    (lambda d: d["symmetry"].update(radices=[3, 3], moving=[True, True]), "multiply to 9"),
    (lambda d: d["symmetry"].update(form="rotated"), "'form' must be"),
    (lambda d: d["symmetry"].update(moving=[True, False]), "'moving' must be"),
    (lambda d: d["symmetry"].update(radices=[0]), "'radices' must be"),
    (lambda d: d["symmetry"].update(group="z8"), "group"),
    (lambda d: d["symmetry"].update(interleaved="no"), "'interleaved'"),
])
def test_a_malformed_symmetry_is_refused_naming_it(change, words):
    doc = _doc(_compact("ring-on-ring", 8, "allgather"))
    change(doc)
    with pytest.raises(ScheduleFormatError, match=words):
        loads(json.dumps(doc))


def test_representatives_outside_the_domain_are_refused():
    doc = _doc(_compact("ring-on-ring", 8, "allgather"))
    tr = doc["steps"][0]["transfers"][0]
    tr["src"], tr["dst"], tr["path"] = 3, 4, [3, 4]
    with pytest.raises(ScheduleFormatError, match="ends at node 4"):
        loads(json.dumps(doc))


def test_an_ordinary_schedule_is_written_as_always_with_expand_false(tmp_path):
    s = collsim.build("ring", "ring", "allgather", "1MiB", nodes=6)
    save(s, tmp_path / "a.json", expand=False)
    save(s, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert json.loads((tmp_path / "a.json").read_text())["version"] == 2


def _cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["collsim", *args], capture_output=True, text=True, check=check)


def test_the_cli_writes_verifies_and_simulates_1024_gpus_as_representatives(tmp_path):
    path = os.fspath(tmp_path / "ring.npz")
    dims = "dims=switch:8:300GB/s,fat-tree:128:50GB/s"
    _cli("schedule", "ring", "--system", "hierarchical", "-S", dims, "-c", "allreduce", "-s", "1MiB",
         "--compact", "-o", path)
    n = 1024
    with np.load(path) as data:                                   # one representative a step: into node 0
        assert len(data["src"]) == 2 * (n - 1) and (data["dst"] == 0).all()
    checked = json.loads(_cli("verify", path, "--json").stdout)
    assert checked["valid"] and checked["form"] == "repeated" and checked["transfers"] == 2 * (n - 1) * n
    sim = json.loads(_cli("simulate", path, "--json").stdout)
    assert sim["form"] == "repeated" and sim["verified"] and sim["steps"] == 2 * (n - 1)
    assert sim["total_time_s"] == pytest.approx(checked["time_s"], rel=1e-12)
    assert simulate_compact(load(path, expand=False)).total_time_s == pytest.approx(sim["total_time_s"], rel=1e-12)


def test_the_cli_writes_representatives_to_standard_output_for_verify_to_read():
    dims = "dims=switch:8:300GB/s,fat-tree:128:50GB/s"
    text = _cli("schedule", "ring", "--system", "hierarchical", "-S", dims, "-c", "allreduce", "-s", "1MiB",
                "--compact", "-o", "-").stdout
    doc = json.loads(text)
    assert doc["version"] == 4 and doc["symmetry"]["form"] == "repeated"
    assert sum(len(s["transfers"]) for s in doc["steps"]) == 2046             # one a step, of 2,095,104
    checked = json.loads(subprocess.run(["collsim", "verify", "-", "--json"], input=text, capture_output=True,
                                        text=True, check=True).stdout)
    assert checked["valid"] and checked["form"] == "repeated" and checked["transfers"] == 2046 * 1024


@pytest.mark.parametrize("kind", ["hier-allreduce", "repeated"])
def test_write_json_hands_on_the_same_text_save_writes(tmp_path, kind):
    from collsim.core.serialize import write_json
    c = _compact(kind, 3, "allreduce")
    for expand in (False, True):
        parts: list[str] = []
        write_json(c, parts.append, expand=expand)
        save(c, tmp_path / "s.json", expand=expand)
        assert "".join(parts).encode() == (tmp_path / "s.json").read_bytes()
        assert json.loads(parts[0] + "]}")["version"] == (2 if expand else 4)


def test_the_cli_refuses_a_mode_that_needs_every_transfer_with_the_expansions_estimate(tmp_path):
    path = os.fspath(tmp_path / "ring.npz")
    c = build_repeated("ring", "hierarchical", "allgather", "1MiB", system_options={"dims": "switch:8,fat-tree:128"})
    save(c, path, expand=False)
    # 1,047,552 transfers: expanded, about 160 bytes each; the representatives, 1,023 of them, fit
    small = {**os.environ, "COLLSIM_MEMORY_LIMIT": "64MiB"}
    done = subprocess.run(["collsim", "simulate", path, "--mode", "dataflow"], capture_output=True, text=True,
                          env=small)
    assert done.returncode == 2 and "expanding" in done.stderr and "Traceback" not in done.stderr
    bulk = subprocess.run(["collsim", "simulate", path, "--json"], capture_output=True, text=True, env=small,
                          check=True)
    assert json.loads(bulk.stdout)["transfers"] == c.transfers == 1023 * 1024


def test_synthesize_compact_needs_out_and_writes_an_ordinary_file_where_the_winner_is_explicit(tmp_path):
    done = _cli("synthesize", "--system", "torus", "-S", "dims=3,4", "-s", "1MiB", "--compact", check=False)
    assert done.returncode == 2 and "--out" in done.stderr
    path = tmp_path / "t.json"
    _cli("synthesize", "--system", "torus", "-S", "dims=3,4", "-s", "1MiB", "--compact", "-o", os.fspath(path))
    doc = json.loads(path.read_text())
    assert doc["version"] == 2 and "symmetry" not in doc        # 12 nodes: compare keeps every transfer
    assert verify(str(path)).transfers == sum(len(s["transfers"]) for s in doc["steps"])
