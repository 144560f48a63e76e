"""Runs the kernel used to kill (issue 21): they finish within bounded memory or are refused up front.

Each case runs the installed ``collsim`` under an address-space limit (``RLIMIT_AS``), so
a run that would grow with a value that does not matter fails here with a memory error
instead of slowly taking the machine.
"""

from __future__ import annotations

import csv
import io
import os
import resource
import subprocess
import sys

import numpy as np

from conftest import collsim_exe, names

GiB = 1024**3


def run_capped(args, cap_bytes: int, cwd, env=None) -> subprocess.CompletedProcess:
    """``collsim *args`` with its address space capped at ``cap_bytes``."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))
    return subprocess.run([collsim_exe(), *args], cwd=cwd, capture_output=True, text=True, preexec_fn=cap,
                          env={**os.environ, "COLUMNS": "200", **(env or {})}, timeout=300)


def test_striped_bands_of_a_billion_wavelengths_cost_what_one_does(tmp_path):
    """``compare -n 16 -w 1000000000`` grew to 9 GiB in ``wavelengths_used`` (an array per wavelength)."""
    proc = run_capped(["compare", "-n", "16", "-w", "1000000000", "-a", "striped-ring,striped-stages",
                       "--format", "csv"], 2 * GiB, tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [(r["algorithm"], r["wavelengths_used"]) for r in rows] == [
        ("striped-ring", "1000000000"), ("striped-stages", "1000000000")]
    # the union of the bands, against a brute-force cover
    from collsim.kinds.optical_ring.routes import wavelengths_covered  # what a ring schedule's wavelengths_used counts
    rng = np.random.default_rng(21)
    for spread in (1, 10**5):   # few wavelengths per transfer (a count per wavelength), and many (sorted bands)
        for _ in range(200):
            t = int(rng.integers(1, 30))
            lo, band = rng.integers(0, 50, t) * spread, rng.integers(1, 10, t) * spread
            cover = np.zeros(64 * spread, bool)
            for a, b in zip(lo, band):
                cover[a:a + b] = True
            assert wavelengths_covered(lo.astype(np.int32), band) == int(cover.sum())


def test_msccl_export_refuses_executor_limits_before_building(tmp_path):
    """``export msccl ring -n 5000 -c allreduce`` was OOM-killed at 15.4 GB; N=1000 took 53 s to refuse."""
    for args, limit in ((["ring", "--system", "star", "-n", "5000", "-c", "allreduce"], "--max-steps"),
                        (["pairwise", "-n", "100", "-c", "alltoall"], "--max-thread-blocks")):
        proc = run_capped(["export", "msccl", *args, "--out", "big.xml"], 1 * GiB, tmp_path)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and limit in lines[0] and "refused before building" in lines[0], proc.stderr
        assert not (tmp_path / "big.xml").exists()


def test_msccl_closed_forms_are_lower_bounds_of_the_export():
    """A refusal before building is one the export would make: the forms never exceed the built counts."""
    import collsim
    from collsim.interop.msccl.writing import schedule_to_msccl
    from collsim.interop.msccl.precheck import PAIR_TRANSFERS, PEERS, msccl_lower_bounds
    from collsim.interop.msccl.xml_model import MscclLimits
    roomy = MscclLimits(max_steps=10**6, max_thread_blocks=10**6, max_tbs_per_channel=10**6, max_channels=10**6)
    cases = [(a, c) for a in sorted(set(PAIR_TRANSFERS) | set(PEERS)) for c in
             ("allgather", "reducescatter", "allreduce", "alltoall")]
    checked = 0
    for alg, coll in cases:
        for n in (4, 6, 8, 12):
            steps, tbs = msccl_lower_bounds(alg, n, coll)
            if steps is None and tbs is None:
                continue
            algo = schedule_to_msccl(collsim.build(alg, "star", coll, "4KiB", nodes=n), limits=roomy)
            assert steps is None or steps <= max(len(tb.steps) for g in algo.gpus for tb in g.tbs), (alg, coll, n)
            assert tbs is None or tbs <= max(len(g.tbs) for g in algo.gpus), (alg, coll, n)
            checked += 1
    assert checked >= 16


def test_simgrid_export_with_a_schedule_routes_only_its_pairs(tmp_path):
    """A 256-node ring was refused (4.2 M route entries for all pairs) though NE uses 2N pairs."""
    proc = run_capped(["export", "simgrid", "--system", "ring", "-n", "64", "--schedule", "ne", "-s", "1KiB",
                       "--max-route-entries", "1000", "--out", "sg", "--json"], 2 * GiB, tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json
    doc = json.loads(proc.stdout)
    assert (doc["routes"], doc["route_entries"]) == (128, 128)          # each neighbour pair, both ways
    xml = (tmp_path / "sg" / "platform.xml").read_text()
    assert xml.count("<route ") == 128 and '<route src="n0" dst="n63"' in xml and '<route src="n0" dst="n2"' not in xml
    # without a schedule every pair is written, and a table too big is still refused before it is built
    proc = run_capped(["export", "simgrid", "--system", "ring", "-n", "256", "--out", "all"], 2 * GiB, tmp_path)
    assert proc.returncode == 2 and "route entries (65,280 routes)" in proc.stderr, proc.stderr


REDUCE_SCRIPT = """
import sys
import numpy as np
from dataclasses import dataclass
from collsim.core.collective import make_collective
from collsim.verify import reduction
from collsim.verify.dataflow import verify_dataflow

@dataclass(eq=False)
class Sched:  # the columns the data-flow check reads
    collective: object
    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    chunk_ptr: np.ndarray
    chunk_idx: np.ndarray
    reduce: np.ndarray

    @property
    def num_steps(self):
        return int(self.step.max()) + 1

    @property
    def step_bounds(self):
        return np.searchsorted(self.step, np.arange(self.num_steps + 1))

n, split = 4096, 1024        # every node reduces its 1024 chunks into node 0, one node per step
c = make_collective("reduce", n, 64 * split, split=split)
t = n - 1
s = Sched(c, np.arange(t), np.arange(1, n), np.zeros(t, np.int64), np.arange(t + 1) * split,
          np.tile(np.arange(split), t), np.ones(t, bool))
if sys.argv[1:] == ["exact"]:  # exact contributor sets, every chunk on its own
    from collsim.verify import classes
    reduction._FORCE_METHOD, classes.MIN_ROWS = "exact", 2**62
batches = []
real = reduction._Batch
reduction._Batch = lambda *a: batches.append(a[-1]) or real(*a)
print(verify_dataflow(s))     # 4.2 M pairs x 64 words: 2 GiB of contributor sets
s.chunk_idx[5000] = 3         # a contribution counted twice, in the fifth step
try:
    verify_dataflow(s)
except Exception as exc:
    print(type(exc).__name__, exc)
print(len(batches))
"""


def test_reduction_sets_are_checked_in_bounded_blocks(tmp_path):
    """2 GiB of contributor sets were allocated at once (an all-reduce on 4096 nodes: 5.8 GiB, refused by
    numpy under a 10 GiB address-space limit); in blocks of at most 256 MiB they fit in 1.5 GiB."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 * GiB // 2, 3 * GiB // 2))
    proc = subprocess.run([sys.executable, "-c", REDUCE_SCRIPT, "exact"], cwd=tmp_path, capture_output=True,
                          text=True, preexec_fn=cap, timeout=600)
    assert proc.returncode == 0, proc.stderr
    method, err, batches = proc.stdout.strip().splitlines()
    assert method == "exact" and err.startswith("DoubleCountError"), err
    names(err, "node 0", "chunk 3", "steps[4].transfers[0]")
    assert int(batches) >= 2 * 8  # two runs, each in at least 2 GiB / 256 MiB chunk batches


def test_by_default_the_same_reduction_is_checked_once_by_fingerprints(tmp_path):
    """The same 4,096-node reduction by default: its 1,024 chunks travel together (one class) and the
    sets would take 2 GiB, so fingerprints of one representative: one pass, the double count still caught."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 * GiB // 2, 3 * GiB // 2))
    proc = subprocess.run([sys.executable, "-c", REDUCE_SCRIPT], cwd=tmp_path, capture_output=True, text=True,
                          preexec_fn=cap, timeout=600)
    assert proc.returncode == 0, proc.stderr
    method, err, batches = proc.stdout.strip().splitlines()
    assert method == "exact" and int(batches) == 2  # one class of 1,024 chunks: exact sets of 4,096 pairs
    assert err.startswith("PostconditionError") or err.startswith("DoubleCountError"), err
    names(err, "node 0")


def test_compare_lists_an_algorithm_numpy_could_not_allocate_as_skipped(monkeypatch):
    """A raw MemoryError in one algorithm stopped the whole comparison; its arrays are freed when it unwinds."""
    from collsim.experiments import compare as cmp
    real = cmp._run_one  # compare's path: the algorithm's entry already looked up

    def run_one(spec, *args, **kwargs):
        if spec.name == "ne":
            raise MemoryError("Unable to allocate 2.00 GiB for an array with shape (4194304, 64) and data type uint64")
        return real(spec, *args, **kwargs)
    monkeypatch.setattr(cmp, "_run_one", run_one)
    rows, skipped = cmp.compare("paper", "allgather", "1KiB", nodes=8, algorithms=["ring", "ne"])
    assert [r.algorithm for r in rows] == ["ring"]
    (note,) = skipped
    names(str(note), "ne", "memory", "2.00 GiB")   # who failed, why, and the allocation refused
    assert note.algorithm == "ne" and note.failed


def test_freed_heap_memory_is_not_counted_as_held_and_compare_releases_it(monkeypatch):
    """With tune_malloc the resident set kept every freed array, so the budget saw nothing left
    (compare -n 4096 -c allreduce: wrht's 42 MiB refused after osm and ring)."""
    script = ("import numpy as np\nfrom collsim._malloc import tune_malloc\nfrom collsim.core.limits import "
              "resident_bytes\ntune_malloc()\na = np.ones(50_000_000)\nbefore = resident_bytes()\ndel a\n"
              "print(before >> 20, resident_bytes() >> 20)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    held, after = map(int, proc.stdout.split())
    assert held >= 380 and after < 200, (held, after)
    from collsim import _malloc
    from collsim.experiments import compare as cmp
    calls = []
    monkeypatch.setattr(_malloc, "release_memory", lambda: calls.append(1) or True)
    cmp.compare("paper", "allgather", "1KiB", nodes=8, algorithms=["ring", "ne"])
    assert len(calls) == 2


def test_channel_check_in_blocks_of_whole_steps_finds_the_same_conflict(monkeypatch):
    """verify_channels held keys for every transfer at once (4 GiB for a striped-ring all-reduce on 4096
    nodes); in blocks of whole steps it must report the conflict a single pass reports."""
    import collsim
    from collsim.kinds.optical_ring import resources as R
    rng = np.random.default_rng(21)
    found = 0
    for alg in ("striped-ring", "striped-stages", "osm", "ne"):
        s = collsim.build(alg, "paper", "allgather", "4KiB", nodes=16, wavelengths=8)
        for _ in range(10):
            w = s.wavelength.copy()
            k = rng.integers(0, len(s), 3)
            w[k] = rng.integers(0, 8, 3)
            t = s.replace(wavelength=w, band=np.maximum(np.minimum(s.band, 8 - w), 1))
            verdicts = []
            for block in (1 << 22, 5, 1):
                monkeypatch.setattr(R, "CHANNEL_BLOCK", block)
                try:
                    R.verify_channels(t)
                    verdicts.append(None)
                except collsim.core.errors.ChannelConflictError as exc:
                    verdicts.append(str(exc))
            assert len(set(verdicts)) == 1, verdicts
            found += verdicts[0] is not None
    assert found >= 10
