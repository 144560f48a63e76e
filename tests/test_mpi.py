"""collsim.mpi: schedules run on real MPI ranks (issue #14).

Real ``mpiexec -n 2/4/8`` jobs are launched from pytest (MPICH's Hydra oversubscribes a small
machine by default): every registered algorithm and collective, checked against MPI's own
collective; the command line; a result that differs; faults that must end the job within the
timeout.  In-process tests run every rank's plan without MPI (an emulated network) against the
numpy-computed expected result.  The ``[mpi]`` extra is required: without mpi4py or mpiexec these
tests FAIL, they are never skipped.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import mpi4py  # noqa: F401  - the [mpi] extra must be installed: an ImportError here fails the file
import numpy as np
import pytest

import collsim
from collsim.algorithms import REGISTRY
from collsim.core.collectives import TYPES
from collsim.mpi.buffers import expected, layout, tolerance
from collsim.mpi.faults import GRACE_S, STAGGER_S, parse_fault
from collsim.mpi.native import NATIVE
from collsim.mpi.plan import pack, plan_rank, unpack
from conftest import collsim_exe, mpiexec, names, refusal

pytestmark = pytest.mark.schedule_first(60)  # about 60 s of work: handed out early (tests/conftest.py)

JOB = Path(__file__).resolve().parent / "mpi_jobs" / "run_cases.py"
NATIVE_OF = NATIVE




def launch(ranks: int, *args: str, env: dict | None = None, timeout: float = 150, cwd=None):
    """Run ``mpiexec -n ranks args...``; returns the process and its wall time."""
    t0 = time.monotonic()
    proc = subprocess.run([mpiexec(), "-n", str(ranks), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, cwd=cwd)
    return proc, time.monotonic() - t0


def job(ranks: int, *args: str) -> list[dict]:
    proc, _ = launch(ranks, sys.executable, str(JOB), *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _check_line(line: dict) -> None:
    case = line["case"]
    assert line["ok"], f"{case}: {line.get('error')}: {line.get('message')}"
    row = line["result"]
    assert row["checked"] and row["nodes"] == line["ranks"]
    assert row["native"] == NATIVE_OF[row["collective"]]
    assert row["time_s"] > 0 and row["native_time_s"] > 0 and row["ratio"] > 0
    assert row["busbw_bytes_per_s"] > 0


# ------------------------------------------------------------------------------- real MPI jobs

@pytest.fixture(scope="module")
def registry4() -> list[dict]:
    return job(4, "registry")


def test_every_registered_algorithm_and_collective_runs_on_4_ranks(registry4):
    pairs = {(s.name, c) for s in REGISTRY.values() for c in s.collectives}
    ran = {(line["case"]["algorithm"], line["case"]["collective"]) for line in registry4 if line["ok"]}
    for line in registry4:
        _check_line(line)
    assert ran == pairs
    assert {line["result"]["collective"] for line in registry4} == set(TYPES)  # every collective, shift too
    families = {line["system"] for line in registry4}
    assert {"ring", "optical-ring", "mesh", "mlfm", "optical-torus"} <= families


def test_8_ranks_every_family_variants_and_a_wrong_result(tmp_path):
    variants = [
        {"algorithm": "ring", "system": "ring", "collective": "allreduce", "size": "1MiB", "dtype": "float64"},
        {"algorithm": "rabenseifner", "system": "ring", "collective": "allreduce", "size": 5000, "dtype": "float32",
         "op": "max"},
        {"algorithm": "recursive-doubling", "system": "ring", "collective": "scan", "size": 4096, "dtype": "float64",
         "op": "prod"},
        {"algorithm": "ring", "system": "ring", "collective": "reducescatter", "size": 999, "dtype": "int32",
         "op": "bxor"},
        {"algorithm": "binomial", "system": "ring", "collective": "broadcast", "size": 4096, "params": {"root": 5}},
        {"algorithm": "osm", "system": "paper", "collective": "alltoall", "size": 4096, "iterations": 3, "warmup": 1},
        {"algorithm": "ring-shift", "system": "ring", "collective": "shift", "size": 4096, "params": {"shift": 3}},
        # transfer 9 dropped and run unverified: MPI's result must catch it
        {"algorithm": "ring", "system": "ring", "collective": "allreduce", "size": 4096, "tamper": 9},
    ]
    for case in variants:
        case.setdefault("options", {"nodes": 8})
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(variants))
    lines = job(8, "registry", str(cases))
    *registry, tampered = lines
    for line in registry:
        if line["built"]:  # mesh needs a square node count, rotated-dims a grid's dims
            _check_line(line)
    built = {line["case"]["algorithm"] for line in registry if line["built"]}
    assert built == set(REGISTRY) - {"mesh", "rotated-dims"}
    assert not tampered["ok"] and tampered["error"] == "ResultMismatchError"
    step, node, chunk = tampered["where"]
    assert step is not None and node is not None and chunk is not None
    names(tampered["message"], f"rank {node}", f"chunk {chunk}", f"step {step}", "MPI_Allreduce")


def test_2_ranks_every_algorithm_that_builds():
    lines = job(2, "registry")
    for line in lines:
        if line["built"]:
            _check_line(line)
    assert {line["result"]["collective"] for line in lines if line["ok"]} == set(TYPES)


def test_command_line_json_predict_sweep_and_file(tmp_path):
    proc, _ = launch(4, collsim_exe(), "mpi", "ring", "--system", "ring", "-n", "4", "-c", "allreduce", "-s",
                     "64KiB", "-I", "3", "-W", "1", "--json", "--predict")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)  # rank 0 alone prints
    for key in ("time_s", "native_time_s", "ratio", "algbw_bytes_per_s", "busbw_bytes_per_s", "predicted_time_s",
                "simulated_time_s", "predicted_error_pct", "simulated_error_pct"):
        assert isinstance(row[key], float), key
    assert row["native"] == "MPI_Allreduce" and row["checked"] and row["iterations"] == 3
    assert row["predicted_error_pct"] == pytest.approx(100 * (row["predicted_time_s"] / row["time_s"] - 1))
    proc, _ = launch(4, sys.executable, "-m", "collsim.mpi", "ne", "--system", "paper", "-n", "4", "-b", "1KiB",
                     "-e", "4KiB", "-I", "2", "-W", "0", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("algorithm,collective,system,nodes,size_bytes") and len(lines) == 4
    sched = tmp_path / "bruck.json"
    subprocess.run([collsim_exe(), "schedule", "bruck", "--system", "ring", "-n", "4", "-c", "alltoall", "-s", "2KiB",
                    "--out", str(sched)], check=True, capture_output=True)
    proc, _ = launch(4, collsim_exe(), "mpi", str(sched), "-I", "2", "-W", "0")
    assert proc.returncode == 0, proc.stderr
    assert "bruck alltoall on 4 ranks" in proc.stdout and "MPI_Alltoall" in proc.stdout


def test_command_line_refusals_print_one_line():
    proc, _ = launch(2, collsim_exe(), "mpi", "ring", "--system", "ring", "-n", "4", "-s", "1KiB")
    line = refusal(proc)                                        # rank 0 alone says it
    names(line, "mpiexec -n 4", "2")                            # the rank count that fits, and the job's own
    proc, _ = launch(4, collsim_exe(), "mpi", "ring", "--system", "ring", "-n", "4", "--op", "bxor", "--dtype",
                     "float64")
    names(refusal(proc), "--op", "bxor", "float64")


def _sizes_named(line: str) -> list[float]:
    """Every byte count a message names in collsim's binary form (``512 MiB``, ``1.5 TiB``), in bytes."""
    scale = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
    return [float(v) * scale[u] for v, u in re.findall(r"([0-9.]+) (B|KiB|MiB|GiB|TiB)\b", line)]


MEMORY_REFUSALS = [  # (command, the largest size it asks for): one check for every MPI command (collsim.mpi.memory)
    (["mpi", "ring", "--system", "star", "-n", "2", "-c", "allreduce", "-s", "64GiB"], "64GiB"),
    (["mpi", "ring", "--system", "star", "-n", "2", "-c", "allgather", "-b", "1KiB", "-e", "64GiB", "-f", "4"],
     "64GiB"),
    (["validate", "--sizes", "1KiB,64GiB"], "64GiB"),
    (["validate", "--rows", "bruck:allgather", "--sizes", "1GiB", "--calibration-iterations", "1"], "1GiB"),
    (["calibrate", "--sizes", "1B,1GiB"], "1GiB"),
    (["calibrate", "--exchange-sizes", "64B,1KiB,1GiB"], "1GiB"),
    (["calibrate", "--model", "alpha-beta", "--sizes", "1B,1GiB"], "1GiB"),
]


@pytest.mark.parametrize("args, size", MEMORY_REFUSALS, ids=[" ".join(a[:1] + a[-2:]) for a, _ in MEMORY_REFUSALS])
def test_runs_that_would_not_fit_are_refused_before_they_start(args, size, tmp_path):
    proc, _ = launch(2, collsim_exe(), *args, env={"COLLSIM_MEMORY_LIMIT": "512MiB"}, cwd=tmp_path)
    line = refusal(proc)
    names(line, size, "COLLSIM_MEMORY_LIMIT=512MiB", "2 MPI ranks")   # the run, the limit and where it comes from
    assert max(_sizes_named(line)) > 512 * 2**20, line                # the estimate, above the limit
    assert proc.stdout == "" and not list(tmp_path.iterdir())         # nothing measured, nothing written


def test_the_memory_estimate_bounds_what_a_run_holds():
    proc, _ = launch(2, sys.executable, str(JOB.parent / "memory_peaks.py"), str(4 * 2**20))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 30
    for line in lines:
        for peak, estimate in zip(line["peaks"], line["estimates"], strict=True):
            assert peak > 4 * 2**20 and peak <= estimate <= 2 * peak, line   # above it, and by less than 2x


TIMEOUT_S = 3.0
FAULTS = [  # (fault, what the message must name: the rank and the step, the grace after the timeout for waiting ranks)
    ("raise:1:2", ["rank 1", "step 2", "ring allgather", "InjectedFault"], 0.0),
    ("sleep:2:1", ["rank 2", "step 1", "ring allgather"], 0.0),
    ("stop:3:1", ["rank 0", "step 1", "ring allgather", "rank 3"], GRACE_S + STAGGER_S),
]


@pytest.mark.parametrize("fault, facts, grace_s", FAULTS, ids=[f[0].split(":")[0] for f in FAULTS])
def test_a_failing_or_hanging_rank_ends_the_job_within_the_timeout(fault, facts, grace_s):
    # a job that does not end by itself fails here (subprocess.TimeoutExpired); how soon it ends on this
    # machine depends on its load, so the assertions are on what the ranks report, not on the wall time
    proc, _ = launch(4, collsim_exe(), "mpi", "ring", "--system", "ring", "-n", "4", "-s", "1KiB", "--timeout",
                     f"{TIMEOUT_S}s", "-I", "3", "-W", "1", env={"COLLSIM_MPI_FAULT": fault}, timeout=60)
    assert proc.returncode != 0
    names(proc.stderr, *facts)
    if not fault.startswith("raise"):  # a hang: the watchdog ends the job, after the timeout and the grace, not before
        names(proc.stderr, "timeout 3 s")
        waited = float(re.search(r"(?:no progress for|waited) ([0-9.]+) s", proc.stderr).group(1))
        assert waited >= TIMEOUT_S + grace_s - 0.05, proc.stderr  # printed to 0.1 s


# ------------------------------------------------------------------------ plans, without MPI

def emulate(sched, dtype="int64", op="sum") -> list:
    """Run every rank's plan in this process, as MPI would, and return the plans (buffers at the end).

    Sends are read at the start of a step; afterwards, a send sent from the buffer itself must
    still hold what was sent (an in-place receive of the same step must not have overwritten it).
    """
    n = sched.collective.nodes
    plans = [plan_rank(sched, r, dtype, op) for r in range(n)]
    for p in plans:
        np.copyto(p.buffer, p.start)
    steps = [{st.step: st for st in p.steps} for p in plans]
    for k in sorted({st.step for p in plans for st in p.steps}):
        wire: dict = {}
        for r, p in enumerate(plans):
            if k in steps[r]:
                pack(p, steps[r][k])
                for data, peer in steps[r][k].sends:
                    wire.setdefault((r, peer), []).append((data, data.copy()))
        sent = [item for queue in wire.values() for item in queue]
        for r, p in enumerate(plans):
            if k in steps[r]:
                for data, peer in steps[r][k].recvs:
                    data[...] = wire[(peer, r)].pop(0)[1]
        assert not any(wire.values()), f"step {k}: a send without its receive"
        for r, p in enumerate(plans):
            if k in steps[r]:
                unpack(p, steps[r][k])
        for data, copy in sent:  # what a send read from its buffer was not changed during the step
            assert np.array_equal(data, copy, equal_nan=data.dtype.kind == "f"), f"step {k}: a send was overwritten"
    return plans


def _cases():
    for spec in sorted(REGISTRY.values(), key=lambda s: s.name):
        for coll in spec.collectives:
            yield spec.name, coll


@pytest.mark.parametrize("nodes, runs_limit", [(3, 64), (4, 64), (6, 64), (4, 1)])
def test_every_plan_gives_the_expected_result_without_mpi(nodes, runs_limit, monkeypatch):
    monkeypatch.setattr("collsim.mpi.plan.RUNS_LIMIT", runs_limit)  # 1: short runs are copied by index arrays
    ran = 0
    for name, coll in _cases():
        for system, options in (("ring", {}), ("paper", {}), ("optical-torus", {}), ("mesh", {"dims": (2, 2)})):
            try:
                sched = collsim.build(name, system, coll, 3001, nodes=None if "dims" in options else nodes,
                                      system_options=options)
            except collsim.CollsimError:
                continue
            for dtype, op in (("int64", "sum"), ("float64", "max")) if sched.collective.reduction else (("int64", "sum"),):
                plans = emulate(sched, dtype, op)
                lay = layout(sched.collective, dtype)
                for p in plans:
                    chunks, want = expected(lay, p.rank, op)
                    assert (chunks == p.post_chunks).all()
                    got = p.buffer[p.post_index]
                    assert np.abs(got - want).max(initial=0) <= tolerance(dtype, op, sched.collective.nodes), (name, coll)
            ran += 1
            break
    assert ran >= 30


def test_in_place_sends_and_receives_never_overlap_in_a_step():
    sched = collsim.build("ring", "ring", "allreduce", 4096, nodes=4)
    plan = plan_rank(sched, 1)
    in_place = [st for st in plan.steps if any(np.shares_memory(d, plan.buffer) for d, _ in st.recvs)]
    assert in_place  # the all-gather half receives in place
    for st in plan.steps:
        for sent, _ in st.sends:
            for got, _ in st.recvs:
                assert not (np.shares_memory(sent, plan.buffer) and np.shares_memory(got, plan.buffer)
                            and np.shares_memory(sent, got))


def test_fault_descriptions():
    assert parse_fault("raise:1:2").action == "raise"
    with pytest.raises(collsim.InputError, match="COLLSIM_MPI_FAULT"):
        parse_fault("sleep:x:1")
