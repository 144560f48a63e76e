"""Issue #11, item 1: collsim never loses or corrupts a file, and ``-`` is standard input or output.

Every file collsim writes goes through ``collsim.core.files.atomic_write``.  A write that
fails midway (injected here, and for real on a full 64 KiB tmpfs when the test may mount
one) must leave the destination byte-identical and no temporary file behind.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import collsim_exe, names

import collsim
from collsim.core import files, serialize
from collsim.core.errors import InputError
from collsim.core.serialize import dumps, load, save

pytestmark = pytest.mark.schedule_first(26)  # about 26 s of work: handed out early (tests/conftest.py)

SRC = Path(__file__).resolve().parents[1] / "src"


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _failing_midway(real):
    """``atomic_write`` whose writer puts out half of the contents, then finds the disk full."""
    def atomic_write(path, write):
        def half(fh):
            buf = io.BytesIO()
            write(buf)
            data = buf.getvalue()
            fh.write(data[:len(data) // 2])
            fh.flush()
            raise _enospc()
        return real(path, half)
    return atomic_write


def _cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([collsim_exe(), *args], cwd=cwd, input=stdin, capture_output=True, timeout=300,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_a_write_failing_midway_leaves_the_old_file_byte_identical(tmp_path, monkeypatch, suffix):
    dest = tmp_path / f"s{suffix}"
    save(collsim.build("ring", "paper", "allgather", 64, nodes=3), dest)
    before = dest.read_bytes()
    monkeypatch.setattr(serialize, "atomic_write", _failing_midway(files.atomic_write))
    with pytest.raises(InputError) as info:
        save(collsim.build("osm", "paper", "allgather", 64, nodes=32), dest)
    names(str(info.value), str(dest), "No space left on device")
    assert dest.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [dest.name]  # no temporary file


def test_a_write_failing_midway_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(serialize, "atomic_write", _failing_midway(files.atomic_write))
    with pytest.raises(InputError, match="No space left on device"):
        save(collsim.build("ring", "paper", "allgather", 64, nodes=3), tmp_path / "new.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("when", ["write", "fsync", "rename"])
def test_atomic_write_cleans_up_whatever_fails(tmp_path, monkeypatch, when):
    dest = tmp_path / "f.bin"
    dest.write_bytes(b"old contents")

    def write(fh):
        fh.write(b"new contents, longer than the old")
        if when == "write":
            raise _enospc()
    if when == "fsync":
        monkeypatch.setattr(files.os, "fsync", lambda fd: (_ for _ in ()).throw(_enospc()))
    if when == "rename":
        monkeypatch.setattr(files.os, "replace", lambda a, b: (_ for _ in ()).throw(_enospc()))
    with pytest.raises(InputError, match="No space left on device"):
        files.atomic_write(dest, write)
    assert dest.read_bytes() == b"old contents" and os.listdir(tmp_path) == ["f.bin"]


def test_an_interrupt_leaves_no_temporary_file(tmp_path):
    def write(fh):
        fh.write(b"partial")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        files.atomic_write(tmp_path / "f.json", write)
    assert os.listdir(tmp_path) == []


def test_symbolic_links_are_written_through(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    save(collsim.build("ring", "paper", "allgather", 64, nodes=3), link)
    assert link.is_symlink() and load(link).num_steps == 2 and target.read_text() != "old"


def test_special_files_are_written_in_place_not_replaced(tmp_path):
    # as root, renaming a temporary file over /dev/null would replace the device
    proc = _cli("schedule", "ring", "-n", "4", "--out", "/dev/null", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    proc = _cli("schedule", "ring", "-n", "4", "--out", str(fifo), cwd=tmp_path)
    out, _ = reader.communicate(timeout=60)
    assert proc.returncode == 0 and json.loads(out)["algorithm"] == "ring" and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_folder_is_not_a_destination(tmp_path):
    with pytest.raises(InputError, match="it is a folder"):
        files.atomic_write(tmp_path, lambda fh: fh.write(b"x"))


# ------------------------------------------------------------------------------- a full disk, for real

@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs mounted at tmp_path/disk (root only); skipped with the reason otherwise."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a 64 KiB tmpfs needs root; the injected-error tests cover the same path")
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or proc.returncode}); "
                    "the injected-error tests cover the same path")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_a_full_filesystem_leaves_the_old_file_byte_identical(full_disk, tmp_path, suffix):
    dest = full_disk / f"s{suffix}"
    proc = _cli("schedule", "ring", "-n", "3", "-s", "64", "--out", str(dest), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    before = dest.read_bytes()
    proc = _cli("schedule", "osm", "-n", "128", "-s", "64", "--out", str(dest), cwd=tmp_path)  # 0.25-4 MB
    err = proc.stderr.decode()
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    names(err, str(dest), "No space left on device")
    assert dest.read_bytes() == before
    assert os.listdir(full_disk) == [dest.name]
    assert _cli("verify", str(dest), cwd=tmp_path).returncode == 0


# ------------------------------------------------------------------------------- standard input and output

def test_out_dash_writes_json_to_standard_output_and_no_file(tmp_path):
    proc = _cli("schedule", "ring", "-n", "8", "-s", "1KiB", "--out", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "-").exists()
    expected = dumps(collsim.build("ring", "paper", "allgather", "1KiB", nodes=8)).encode()
    assert proc.stdout == expected
    assert proc.stderr.decode().startswith("wrote standard output: ring allgather, 7 steps")


def test_verify_dash_reads_json_and_npz_from_standard_input(tmp_path):
    s = collsim.build("osm", "paper", "allgather", "1KiB", nodes=8)
    save(s, tmp_path / "s.npz")
    for data in (dumps(s).encode(), (tmp_path / "s.npz").read_bytes()):
        proc = _cli("verify", "-", "--json", cwd=tmp_path, stdin=data)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["transfers"] == len(s)


def test_schedule_piped_into_verify(tmp_path):
    exe = collsim_exe()
    proc = subprocess.run(f"'{exe}' schedule ne -n 8 -s 1KiB --out - 2>/dev/null | '{exe}' verify -", shell=True,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("valid: allgather"), proc.stderr


@pytest.mark.parametrize("data,code,needle", [
    (b"", 2, "not valid JSON"),
    (b"{", 2, "not valid JSON"),
    (bytes([0xff, 0xfe]), 2, "cannot read standard input: not UTF-8 text"),
    (b"PK\x03\x04 not really a zip", 2, "cannot read standard input"),
])
def test_verify_dash_refuses_bad_input_in_one_line(tmp_path, data, code, needle):
    proc = _cli("verify", "-", cwd=tmp_path, stdin=data)
    err = proc.stderr.decode()
    assert proc.returncode == code and needle in err and len(err.strip().splitlines()) == 1, err


def test_a_reader_that_goes_away_is_not_an_error_message(tmp_path):
    exe = collsim_exe()
    proc = subprocess.run(f"'{exe}' schedule osm -n 128 -s 1KiB --out - | true", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


def test_every_writer_goes_through_atomic_write():
    # no open(..., "w"), write_text, write_bytes, np.save or savez outside core/files.py and the npz
    # writer (which atomic_write hands its temporary file)
    pattern = re.compile(r"""open\([^)]*["'][wax]b?["']|write_text\(|write_bytes\(|np\.save\(|savez""")
    offenders = []
    for path in sorted((SRC / "collsim").rglob("*.py")):
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith(("#", ">>>", "...")):  # doctests write too
                offenders.append(f"{path.relative_to(SRC)}:{no}: {line.strip()}")
    allowed = ("collsim/core/binary.py", "collsim/core/files.py")
    assert offenders and all(o.startswith(allowed) for o in offenders), offenders
