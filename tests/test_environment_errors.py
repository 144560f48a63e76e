"""Issue #21: what the user's machine refuses is one line and exit 2, never an internal error (exit 3).

A full disk, a read-only or impossible output folder, a name too long for the file system,
a full or closed standard output, a missing ``[mpi]`` extra, a device given as an input file:
each is one line on stderr naming the file and what to do, exit 2, and nothing half-written
left behind (docs/model.md, "Errors and exit codes").  The tests run as root in CI, where
``chmod`` does not stop a write: an unwritable folder is ``/sys`` (writes refused even to
root) or a path through a regular file; a full disk is a small tmpfs (root) or ``/dev/full``.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from collsim.core import files, reading
from collsim.core.errors import InputError, ScheduleFormatError
from conftest import collsim_exe, mpiexec, names, refusal

pytestmark = pytest.mark.schedule_first(25)  # about 25 s of work: handed out early (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[1]


def _sh(command: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """A shell command line with ``COLLSIM`` standing for the installed console script."""
    return subprocess.run(command.replace("COLLSIM", f"'{collsim_exe()}'"), shell=True, cwd=cwd,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200",
                                                                            **(env or {})})


_one_line = refusal   # exit 2, one line, collsim's prefix, no traceback (conftest)


# ------------------------------------------------------------------------------- standard output

def test_a_closed_standard_output_is_said_not_silently_lost(tmp_path):
    proc = _sh("COLLSIM algorithms >&-", tmp_path)
    err = _one_line(proc)
    assert "standard output is closed" in err and ">/dev/null" in err


@pytest.mark.parametrize("args", ["algorithms", "systems", "compare -n 8 -a ring", "compare -n 8 --json",
                                  "schedule ring -n 8 --out -"])
def test_a_full_standard_output_is_one_line(tmp_path, args):
    err = _one_line(_sh(f"COLLSIM {args} > /dev/full", tmp_path))
    names(err, "standard output", "No space left on device")


# ------------------------------------------------------------------------------- names and folders

def test_a_name_too_long_for_the_file_system_is_one_line(tmp_path):
    name = "a" * 300 + ".json"
    err = _one_line(_sh(f"COLLSIM schedule ring -n 4 --out {name}", tmp_path))
    names(err, name, "File name too long")
    assert os.listdir(tmp_path) == []


def test_a_long_name_the_file_system_allows_is_written(tmp_path):
    # the temporary file is ".NAME.random.tmp": it must not be what makes a 250-byte name fail
    name = "b" * 245 + ".json"
    proc = _sh(f"COLLSIM schedule ring -n 4 --out {name}", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(tmp_path) == [name]


@pytest.mark.parametrize("out,words", [
    ("/sys/collsim-issue-21", ["cannot write the --out folder /sys/collsim-issue-21", "ermission denied"]),
    ("/sys", ["cannot write the --out folder /sys", "ermission denied"]),
    ("afile/sub", ["cannot write the --out folder afile/sub", "Not a directory", "is a file, not a folder"]),
    ("afile", ["cannot write the --out folder afile", "it is a file, not a folder"]),
])
def test_reproduce_into_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, out, words):
    (tmp_path / "afile").write_text("x")
    err = _one_line(_sh(f"COLLSIM reproduce beyond --quick --out {out}", tmp_path))
    assert all(w in err for w in words), err
    assert sorted(os.listdir(tmp_path)) == ["afile"] and not os.path.exists("/sys/collsim-issue-21")


@pytest.mark.parametrize("args,words,left", [
    # a second output that cannot be written is found before the first is written
    (["schedule", "ring", "-n", "8", "--out", "r.json", "--trace", "/sys/t.json"],
     ["cannot write the trace /sys/t.json", "ermission denied"], []),
    (["schedule", "ring", "-n", "8", "--out", "r.json", "--trace", "c" * 300 + ".json"],
     ["cannot write the trace ccc", "File name too long"], []),
    # a rules file that cannot be written: refused before the store is made and the sizes tuned
    (["tune", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "4KiB", "--store", "s.sqlite",
      "--rules", "/sys/r.json"], ["cannot write the rules file /sys/r.json", "ermission denied"], []),
    # calibrate: before MPI measures anything
    (["calibrate", "--out", "/sys/c.toml"], ["cannot write the system file /sys/c.toml", "ermission denied"], []),
    # a results store: before any point runs, in words (SQLite says "unable to open database file")
    (["sweep", "grid.toml", "--store", "/sys/s.sqlite"],
     ["cannot write the results store /sys/s.sqlite", "ermission denied"], ["grid.toml"]),
    (["sweep", "grid.toml", "--store", "s" * 300 + ".sqlite"],
     ["cannot write the results store sss", "File name too long"], ["grid.toml"]),
    (["tune", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "4KiB", "--store", "t" * 300],
     ["cannot write the results store ttt", "File name too long"], []),
])
def test_every_output_is_checked_before_any_is_written(tmp_path, args, words, left):
    if "grid.toml" in args:
        (tmp_path / "grid.toml").write_text(SWEEP)
    err = _one_line(_sh("COLLSIM " + " ".join(args), tmp_path))
    assert all(w in err for w in words), err
    assert sorted(os.listdir(tmp_path)) == left


def test_writable_folder_is_the_file_systems_answer(tmp_path):
    assert files.writable_folder(tmp_path / "a" / "b").is_dir()
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == []  # the trial file is gone
    with pytest.raises(InputError, match="ermission denied"):
        files.writable_folder("/sys")


# ------------------------------------------------------------------------------- a full disk

@pytest.fixture
def disk(tmp_path):
    """``disk(kib)``: a tmpfs of that size at tmp_path/disk (root only; skipped otherwise, the in-process tests
    cover the same path)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = []

    def mount(kib: int) -> Path:
        where = tmp_path / "disk"
        where.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
        mounted.append(where)
        return where
    yield mount
    for where in mounted:
        subprocess.run(["umount", str(where)], capture_output=True)


@pytest.fixture
def small_disk(disk):
    """A 96 KiB tmpfs, nearly filled."""
    where = disk(96)
    (where / "filler").write_bytes(b"\0" * 90 * 1024)
    return where


SWEEP = """[sweep]
systems = ["ring"]
nodes = [8, 16, 32]
sizes = ["1KiB", "2KiB", "4KiB", "8KiB", "16KiB", "32KiB"]
collectives = ["allgather", "allreduce"]
algorithms = ["ring", "recursive-doubling"]
"""


def test_a_sweep_that_fills_the_disk_is_one_line_naming_the_store(disk, tmp_path):
    store = disk(256) / "s.sqlite"  # room for the store and a few points, not for 36
    (tmp_path / "grid.toml").write_text(SWEEP)
    proc = _sh("COLLSIM sweep grid.toml --store disk/s.sqlite", tmp_path)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("collsim: ")]  # (and the sweep's plan)
    assert proc.returncode == 2 and len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert errors[0].startswith("collsim: cannot write the results store disk/s.sqlite: database or disk is full; "
                                "free some space"), errors
    from collsim.experiments.sweep.store import Store
    with Store(store, create=False) as s:  # what was committed is there, whole: a rerun finishes the rest
        assert s.integrity() == "ok" and 0 < len(s.records()) < 72


def test_a_tune_cache_on_a_full_disk_is_left_and_the_tuning_goes_on(small_disk, tmp_path):
    proc = _sh("COLLSIM tune --system ring -n 8 -b 1KiB -e 4KiB --json -a ring,recursive-doubling,bruck", tmp_path,
               env={"XDG_CACHE_HOME": str(small_disk)})
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 3
    names(proc.stderr, f"{small_disk}/collsim/tune.sqlite", "no store")   # the cache left, and said so
    assert "Traceback" not in proc.stderr


def test_sqlite_and_os_errors_are_named_in_process():
    msg = files.environment_error(sqlite3.OperationalError("database or disk is full"), "r.sqlite")
    names(msg, "results store r.sqlite", "database or disk is full")
    assert files.environment_error(sqlite3.IntegrityError("UNIQUE constraint failed")) is None  # a bug
    assert files.environment_error(ValueError("x")) is None
    with pytest.raises(InputError) as info:
        with files.naming("out.json", "the output"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    names(str(info.value), "out.json", "No space left on device")
    with pytest.raises(InputError) as info:
        with files.naming("ignored"):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/x/y.json")  # the error's own name wins
    names(str(info.value), "/x/y.json", "Read-only file system")
    with pytest.raises(KeyError):
        with files.naming("s.sqlite"):
            raise KeyError("a bug stays a bug")


# ------------------------------------------------------------------------------- the tune cache

def test_tune_with_a_cache_folder_that_cannot_exist_tunes_without_it(tmp_path):
    (tmp_path / "afile").write_text("x")
    proc = _sh("COLLSIM tune --system ring -n 8 -b 1KiB -e 4KiB --format csv -a ring,recursive-doubling,bruck", tmp_path,
               env={"XDG_CACHE_HOME": str(tmp_path / "afile" / "cache")})
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 4  # the header and three sizes
    warning = [line for line in proc.stderr.splitlines() if "not using the cache" in line]
    assert len(warning) == 1 and "Not a directory" in warning[0] and "--store FILE" in warning[0], proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["afile"]


@pytest.mark.parametrize("env,home", [
    ({"XDG_CACHE_HOME": "relcache"}, "home"),  # relative: ignored, as the XDG spec says; ~/.cache instead
    ({"XDG_CACHE_HOME": "", "HOME": ""}, None),  # no home at all: no cache, rather than ./.cache
])
def test_tune_keeps_no_cache_in_the_folder_it_runs_in(tmp_path, env, home):
    run = tmp_path / "run"
    run.mkdir()
    full_env = {"HOME": str(tmp_path / "home"), **env}
    proc = _sh("COLLSIM tune --system ring -n 4 -b 1KiB -e 1KiB --json -a ring,recursive-doubling,bruck", run, env=full_env)
    assert proc.returncode == 0, proc.stderr
    assert os.listdir(run) == []  # no relcache/, no .cache/ where tune ran
    if home:
        assert (tmp_path / "home" / ".cache" / "collsim" / "tune.sqlite").exists()
    else:
        names(proc.stderr, "cache", "HOME", "XDG_CACHE_HOME")   # the cache is not used, and what would give one


# ------------------------------------------------------------------------------- without the [mpi] extra

@pytest.fixture
def no_mpi4py(tmp_path):
    """An environment in which ``import mpi4py`` fails as it does without the [mpi] extra."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys

        class _NoMpi4py:
            def find_spec(self, name, path=None, target=None):
                if name == "mpi4py" or name.startswith("mpi4py."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, _NoMpi4py())
    """))
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("args", ["mpi ring --system ring -n 8 -s 1KiB", "calibrate --out c.toml",
                                  "sweep grid.toml --executor mpi"])
def test_mpi_commands_without_the_mpi_extra_say_what_to_install(tmp_path, no_mpi4py, args):
    (tmp_path / "grid.toml").write_text(SWEEP)
    err = _one_line(_sh(f"COLLSIM {args}", tmp_path, env=no_mpi4py))
    assert "mpi4py is not installed" in err and "pip install 'collsim[mpi]'" in err, err
    assert sorted(os.listdir(tmp_path)) == ["grid.toml", "site"]


# ------------------------------------------------------------------------------- reading

@pytest.mark.parametrize("command", [
    "verify /dev/zero", "verify - < /dev/zero",
    "sweep /dev/zero", "calibrate --refit /dev/zero", "import msccl /dev/zero", "verify /dev/urandom",
])
def test_a_device_is_refused_before_a_byte_is_read(tmp_path, command):
    proc = _sh(f"COLLSIM {command}", tmp_path)
    err = _one_line(proc)
    assert "/dev/zero.npz" in err and "does not exist" in err or "character device" in err, err


def test_a_file_above_the_limit_is_refused_with_its_size(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "ab") as fh:
        fh.truncate(reading.MAX_READ_BYTES + 1)  # sparse: no disk used
    err = _one_line(_sh("COLLSIM verify big.json", tmp_path))
    names(err, "big.json", "2 GiB", "MAX_READ_BYTES")   # the file, its size, and the limit by its name


def test_the_shared_reader_reads_files_pipes_and_refuses_the_rest(tmp_path, monkeypatch):
    p = tmp_path / "a.json"
    p.write_bytes(b"{}")
    assert reading.read_bytes(p) == b"{}"
    with pytest.raises(ScheduleFormatError) as info:
        reading.read_bytes(p, limit=1, error=ScheduleFormatError, name="a.json")
    names(str(info.value), "a.json", "2 B", "1 B")
    with pytest.raises(InputError, match="it is a directory"):
        reading.read_bytes(tmp_path)
    r, w = os.pipe()
    os.write(w, b"x" * 10)
    os.close(w)
    with os.fdopen(r, "rb") as stream:
        monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": stream})())
        with pytest.raises(InputError, match="more than the 4 B"):
            reading.read_bytes("-", limit=4)


# ------------------------------------------------------------------------------- calibrate's fit

def _calibration(noisy: bool):
    from collsim.mpi.calibrate import Sample, calibration_from
    sizes = [4**k for k in range(9)]
    times = [2e-6 + m / 1e10 for m in sizes]
    if noisy:  # a machine under load: some sizes measured three times too slow
        times = [t * (3.0 if k % 3 == 1 else 1.0) for k, t in enumerate(times)]
    return calibration_from([Sample(m, 20, t, t) for m, t in zip(sizes, times)], 1e-7, 2, 20)


def test_a_poor_fit_is_warned_about_and_a_good_one_is_not():
    from collsim.mpi.calibrate import Fit, fit_warning
    assert fit_warning(_calibration(noisy=False).fit) is None
    poor = _calibration(noisy=True).fit
    text = fit_warning(poor)
    assert text is not None and f"R² = {poor.r_squared:.3f}" in text and "largest error" in text
    assert "quiet machine" in text and "--iterations" in text and "pinned" in text
    assert fit_warning(Fit(2e-6, 1e10, 0.67, 0.55)) is not None   # the reported run
    assert fit_warning(Fit(2e-6, 1e10, 0.95, 0.55)) is not None   # one bound is enough
    assert fit_warning(Fit(2e-6, 1e10, 0.85, 0.30)) is not None
    assert fit_warning(Fit(2e-6, 1e10, 0.997, 0.48)) is None      # a usual run on a quiet machine


def test_calibrate_warns_in_one_line_and_still_writes_the_file(tmp_path):
    for noisy in (True, False):
        _calibration(noisy).write(tmp_path / "raw.toml")
        proc = _sh("COLLSIM calibrate --refit raw.toml --out host.toml", tmp_path)
        assert proc.returncode == 0 and (tmp_path / "host.toml").exists(), proc.stderr
        warnings = [line for line in proc.stderr.splitlines() if "poor α–β fit" in line]
        assert len(warnings) == noisy, proc.stderr
        if noisy:
            names(warnings[0], "collsim: warning:", f"R² = {_calibration(noisy).fit.r_squared:.3f}", "--iterations")
        (tmp_path / "host.toml").unlink()
    assert warnings == [] and "R² = " in proc.stdout  # the good fit: no warning


# ------------------------------------------------------------------------------- benchmarks

def test_the_benchmarks_skip_the_mpi_workloads_without_mpiexec(monkeypatch, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_run_issue21", ROOT / "benchmarks" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    assert run.unavailable("mpi-ring-8") is None  # this install has the [mpi] extra
    monkeypatch.setattr(run, "_which", lambda tool: None)  # as without it: no mpiexec anywhere
    assert "mpiexec not found" in run.unavailable("mpi-ring-8") and run.unavailable("cli-version") is None
    run.main(["--smoke", "mpi-ring-8"])
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("mpi-ring-8")]
    names(line, "skipped", "mpiexec", "collsim[mpi]")          # why, and what to install
    names(out.splitlines()[-1], "0 workloads", "1 skipped", "mpi-ring-8")


# ------------------------------------------------------------------------------- a grid's repeated values

def test_a_repeated_grid_value_is_one_value_locally_and_over_mpi(tmp_path):
    (tmp_path / "grid.toml").write_text('[sweep]\nsystems = ["ring"]\nnodes = [8, 8]\n'
                                        'sizes = ["1KiB", "1024", "2KiB"]\nalgorithms = ["ring", "ring"]\n')
    from collsim.experiments.sweep.store import Store
    stored = []
    for prefix, store in (("", "local.sqlite"), (f"'{mpiexec()}' -n 2 ", "mpi.sqlite")):
        extra = " --executor mpi" if prefix else ""
        proc = _sh(f"{prefix}COLLSIM sweep grid.toml --store {store}{extra}", tmp_path)
        assert proc.returncode == 0, proc.stderr
        names(proc.stderr, "sizes", "'1KiB'", "'1024'", "nodes", "8")   # each repeated value, named
        names(proc.stdout.strip().splitlines()[-1], "2 points", "2 run", "0 failed", store)
        with Store(tmp_path / store, create=False) as s:
            stored.append([(r["point"], r["result"]) for r in s.records()])
    assert len(stored[0]) == 2 and stored[0] == stored[1]
