"""``collsim sweep --executor mpi`` (docs/sweeps.md): real mpiexec jobs of 2 and 4 ranks.

The distributed sweep must store what a local sweep stores, record for record (results are
deterministic and hold no wall-clock value), and keep the local sweep's resume and
kill-safety: rank 0 alone writes, one commit per point, so a job killed with SIGKILL loses
no finished point and a rerun runs only the missing ones.  mpi4py and mpiexec come with the
``[mpi]`` extra: missing, these tests fail, never skip.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import mpi4py  # noqa: F401  (the [mpi] extra: a missing mpi4py fails here)
import pytest

from collsim.experiments.sweep.store import Store
from conftest import collsim_exe, mpiexec

# 44 points, 12 of which fail (a torus of 8 nodes is not square): error records must match too.
MIXED = """[sweep]
systems = ["ring", "torus"]
nodes = [8, 9]
sizes = ["1KiB", "64KiB"]
collectives = ["allgather", "allreduce"]
algorithms = ["ring", "recursive-doubling", "bruck", "rabenseifner"]
"""
# 32 heavier points (optical rings of 256 and 512 nodes): a job to kill half-way.
HEAVY = """[sweep]
systems = ["paper"]
nodes = [256, 512]
wavelengths = [8, 16]
sizes = ["1KiB", "1MiB"]
collectives = ["allgather", "alltoall"]
algorithms = ["ring", "ne", "osm"]
"""




def sweep(folder: Path, grid: str, store: str, ranks: int | None = None) -> subprocess.CompletedProcess:
    """``collsim sweep`` here (ranks None) or under ``mpiexec -n ranks`` with ``--executor mpi``."""
    argv = [collsim_exe(), "sweep", grid, "--store", store]
    if ranks is not None:
        argv = [mpiexec(), "-n", str(ranks), *argv, "--executor", "mpi"]
    proc = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return proc


def records(path: Path) -> list[dict]:
    with Store(path, create=False) as store:
        return store.records()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The sweep files and the local runs' stores, made once for the module."""
    folder = tmp_path_factory.mktemp("mpi-sweep")
    (folder / "mixed.toml").write_text(MIXED)
    (folder / "heavy.toml").write_text(HEAVY)
    (folder / "mixed-1KiB.toml").write_text(MIXED.replace('"1KiB", "64KiB"', '"1KiB"'))
    sweep(folder, "mixed.toml", "local.sqlite")
    sweep(folder, "heavy.toml", "heavy-local.sqlite")
    return folder


@pytest.mark.parametrize("ranks", [2, 4])
def test_the_ranks_store_what_a_local_sweep_stores(folder, ranks):
    proc = sweep(folder, "mixed.toml", f"mpi{ranks}.sqlite", ranks)
    assert proc.stdout.count("\n") == 1, proc.stdout            # one summary: the workers print nothing
    assert proc.stdout.startswith("44 points: 44 run, 0 skipped as finished, 12 failed"), proc.stdout
    local, mpi = records(folder / "local.sqlite"), records(folder / f"mpi{ranks}.sqlite")
    assert len(local) == 44 and sum(r["status"] == "error" for r in local) == 12
    assert mpi == local                                         # record for record, errors included
    again = sweep(folder, "mixed.toml", f"mpi{ranks}.sqlite", ranks)   # finished: nothing runs
    assert "44 points: 0 run, 44 skipped as finished" in again.stdout


def test_under_python_m_mpi4py_futures_the_workers_are_mpi4pys_own(folder):
    proc = subprocess.run([mpiexec(), "-n", "3", sys.executable, "-m", "mpi4py.futures", collsim_exe(), "sweep",
                           "mixed.toml", "--store", "futures.sqlite", "--executor", "mpi"], cwd=folder,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("44 points: 44 run"), proc.stdout
    assert records(folder / "futures.sqlite") == records(folder / "local.sqlite")


def test_the_python_api_returns_the_summary_on_rank_0_and_none_elsewhere(folder):
    code = ("import json\nfrom mpi4py import MPI\nfrom collsim.experiments.sweep.grid import read_sweep\n"
            "from collsim.mpi.distributed import run_sweep_mpi\n"
            "summary = run_sweep_mpi(read_sweep('mixed.toml'), 'api.sqlite')\n"
            "rank = MPI.COMM_WORLD.Get_rank()\n"
            "open(f'api-rank{rank}.json', 'w').write(json.dumps(summary))\n")  # own file: ranks' stdout interleaves
    proc = subprocess.run([mpiexec(), "-n", "2", sys.executable, "-c", code], cwd=folder, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    by_rank = {r: json.loads((folder / f"api-rank{r}.json").read_text()) for r in (0, 1)}
    assert by_rank[1] is None and by_rank[0] == {"points": 44, "run": 44, "finished": 0, "failed": 12,
                                                 "store": "api.sqlite"}
    assert records(folder / "api.sqlite") == records(folder / "local.sqlite")


def test_a_partial_store_is_finished_with_only_the_missing_points(folder):
    sweep(folder, "mixed-1KiB.toml", "partial.sqlite")           # the 1 KiB half, locally
    done = len(records(folder / "partial.sqlite"))
    assert 0 < done < 44
    proc = sweep(folder, "mixed.toml", "partial.sqlite", 2)
    assert f"44 points: {44 - done} run, {done} skipped as finished" in proc.stdout, proc.stdout
    assert records(folder / "partial.sqlite") == records(folder / "local.sqlite")


def _rows(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT count(*) FROM points").fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0


def _descendants(pid: int) -> set[int]:
    """Every live process under ``pid``, read from /proc (a rank may leave mpiexec's group)."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # not a process, or it ended meanwhile
            continue
        parent[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, up in parent.items() if up in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _kill_and_reap(job: subprocess.Popen) -> None:
    """SIGKILL mpiexec, its proxy and every rank, and return once none of them runs any more.

    A killed process dies when it is next scheduled, so a rank can still finish a commit after
    ``kill`` returns and after mpiexec is reaped: the store is read only when every one is gone.
    """
    tree = _descendants(job.pid) | {job.pid}
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:  # the job ended first: the count the test reads says so
        pass
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    job.wait()
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in tree) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in tree), "a process of the killed job still runs"


def test_a_job_killed_with_sigkill_loses_nothing_and_a_rerun_finishes_it(folder):
    store = folder / "killed.sqlite"
    job = subprocess.Popen([mpiexec(), "-n", "2", collsim_exe(), "sweep", "heavy.toml", "--store", store.name,
                            "--executor", "mpi"], cwd=folder, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while _rows(store) < 3 and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        _kill_and_reap(job)
    kept = records(store)                                        # the file is readable after the kill
    assert 3 <= len(kept) < 32, len(kept)
    local = {r["key"]: r for r in records(folder / "heavy-local.sqlite")}
    assert all(r == local[r["key"]] for r in kept)               # what was committed is whole and right
    proc = sweep(folder, "heavy.toml", store.name, 2)
    assert f"32 points: {32 - len(kept)} run, {len(kept)} skipped as finished" in proc.stdout, proc.stdout
    assert records(store) == records(folder / "heavy-local.sqlite")


def test_one_rank_is_refused_in_one_line(folder):
    proc = subprocess.run([collsim_exe(), "sweep", "mixed.toml", "--executor", "mpi", "--store", "none.sqlite"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "at least 2 ranks" in proc.stderr and not (folder / "none.sqlite").exists()


def test_a_bad_sweep_file_under_mpiexec_is_reported_by_rank_0_alone(folder):
    (folder / "bad.toml").write_text('[sweep]\nsystems = ["ring"]\nsize = ["1KiB"]\n')
    proc = subprocess.run([mpiexec(), "-n", "2", collsim_exe(), "sweep", "bad.toml", "--executor", "mpi"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("collsim:")]
    assert len(lines) == 1 and "did you mean sizes" in lines[0], proc.stderr
