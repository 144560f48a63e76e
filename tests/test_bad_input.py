"""Bad input through the console script: exit 2, one line on stderr, words a user understands.

Each row runs ``collsim`` with one mistake (a system name, ``-S key=value``, a TOML file, a size
or bandwidth, an option that would do nothing, a malformed schedule file)
and checks that the message names the problem and leaks nothing of Python or numpy:
no ``TypeError`` text (``__init__() missing 1 required positional argument``), no numpy
messages (``ufunc``, ``dtype``), no ``[Errno 2]``, no traceback.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.schedule_first(55)  # about 55 s of work: handed out early (tests/conftest.py)

FILES = {
    "torus_strnodes.toml": '[system]\nkind = "torus"\nnodes = "sixteen"\ndims = [4, 4]\n',
    "ring_neglat.toml": '[system]\nkind = "ring"\nnodes = 8\nlink_latency_s = -1\n',
    "torus_colour.toml": '[system]\nkind = "torus"\ndims = [4, 4]\ncolour = "red"\n',
    "moebius.toml": '[system]\nkind = "moebius"\nnodes = 8\n',
    "torrus.toml": '[system]\nkind = "torrus"\nnodes = 16\n',
    "nokind.toml": '[system]\nnodes = 16\n',
    "notable.toml": 'nodes = 16\n',
    "broken.toml": '[system\n',
    "ring_strw.toml": '[system]\nkind = "optical-ring"\nnodes = 16\nwavelengths = "many"\n',
    "ring_inf.toml": '[system]\nkind = "optical-ring"\nnodes = 1e400\n',
    "ring_huge.toml": '[system]\nkind = "optical-ring"\nnodes = 99999999999999999999\n',
    "ring_floatnodes.toml": '[system]\nkind = "ring"\nnodes = 8.5\n',
    "ring_bidir.toml": '[system]\nkind = "ring"\nnodes = 8\nbidirectional = "yes"\n',
    "ring_name.toml": '[system]\nkind = "optical-ring"\nnodes = 8\nname = 5\n',
    "mlfm_sel.toml": '[system]\nkind = "mlfm"\nd = 3\nselection = [2, "b", 3]\n',
    "custom_vertex.toml": '[system]\nkind = "custom"\nnodes = 2\n[[system.link]]\na = 0\nb = 7\n',
    "custom_nonodes.toml": '[system]\nkind = "custom"\n[[system.link]]\na = 0\nb = 1\n',
    "fat_strk.toml": '[system]\nkind = "fat-tree"\nk = "four"\n',
}

CASES = [
    # --system: names and files
    (["compare", "--system", "nowhere.toml"], ["nowhere.toml", "does not exist"]),
    (["topology", "sub/dir/nowhere.toml"], ["nowhere.toml", "does not exist"]),
    (["topology", "adir"], ["adir", "is a directory"]),
    (["topology", "toruss"], ["unknown system", "did you mean torus"]),
    (["topology", "papre"], ["unknown system", "did you mean paper"]),
    (["compare", "--system", "optical-rng"], ["unknown system", "did you mean optical-ring"]),
    (["topology", ""], ["system name is empty"]),
    (["systems", "toruss"], ["unknown system", "did you mean torus"]),
    # --select, --radix
    (["compare", "--system", "mlfm", "--select", "a,b,c", "-c", "alltoall"], ["selection", "integer", "'a'"]),
    (["topology", "mlfm", "--select", "2,4"], ["selection", "three integers", "2,4"]),
    (["topology", "mlfm", "--select", ""], ["selection", "three integers"]),
    (["compare", "--system", "mlfm", "--radix", "0", "-c", "alltoall"], ["radix", "got 0"]),
    (["topology", "mlfm", "--radix", "7"], ["radix", "even"]),
    (["topology", "fat-tree", "--radix", "0"], ["radix", "even integer", "got 0"]),
    (["topology", "fat-tree", "--radix", "-2"], ["radix", "got -2"]),
    (["topology", "torus", "--radix", "4"], ["torus systems have no parameter radix"]),
    # -S key=value
    (["topology", "torus", "-S", "dim=4,4"], ["no parameter dim", "did you mean", "dims"]),
    (["topology", "torus", "-S", "dims=4,a"], ["dims", "integers", "4,a"]),
    (["topology", "torus", "-S", "dims=0,4"], ["every dimension", "at least 2", "0x4"]),
    (["topology", "torus", "-S", "dims=4x4", "-n", "8"], ["nodes=8", "4x4", "16"]),
    (["topology", "torus", "-S", "dims=4x4", "-S", "ndim=3"], ["ndim=3", "4x4"]),
    (["topology", "ring", "-S", "bidirectional=yes"], ["bidirectional", "true or false"]),
    (["topology", "paper", "-S", "name=5"], ["name", "string"]),
    (["topology", "paper", "-S", "nodes=abc"], ["nodes", "integer", "abc"]),
    (["topology", "ring", "-S", "nodes=1e3"], ["nodes", "integer", "1000.0"]),
    (["topology", "ring", "-S", "nodes=1,2"], ["nodes", "integer", "1,2"]),
    (["topology", "hypercube", "-S", "dimension=99"], ["dimension", "1..40", "99"]),
    (["topology", "fat-tree", "-S", "k=100000"], ["k=100000", "2**40"]),
    (["topology", "fat-tree", "-S", "levels=1"], ["levels", "2..3"]),
    (["topology", "paper", "-S", "wavelengths=abc"], ["wavelengths", "positive integer"]),
    (["topology", "paper", "-S", "clock_hz=-1"], ["clock_hz", "positive"]),
    (["topology", "paper", "-S", "physical=3"], ["physical", "table"]),
    (["topology", "mlfm", "-S", "d=x"], ["mlfm", "d must be an integer"]),
    (["topology", "custom"], ["custom network needs nodes", "links"]),
    (["topology", "custom", "-S", "path=nowhere.toml"], ["nowhere.toml", "does not exist"]),
    # a device is not a system file: every command that reads one says what it is (issue 31: "does not exist")
    (["compare", "--system", "/dev/zero"], ["/dev/zero", "character device"]),
    (["topology", "/dev/zero"], ["/dev/zero", "character device"]),
    (["topology", "custom", "-S", "path=/dev/zero"], ["/dev/zero", "character device"]),
    (["tune", "--system", "/dev/zero", "-b", "1KiB", "-e", "2KiB"], ["/dev/zero", "character device"]),
    (["topology", "custom", "-S", "path=adir"], ["adir", "is a directory"]),
    # TOML files: wrong types, unknown keys, negative values, strings where numbers go
    (["topology", "torus_strnodes.toml"], ["torus_strnodes.toml", "nodes", "integer", "sixteen"]),
    (["topology", "ring_neglat.toml"], ["link_latency_s", "non-negative", "-1"]),
    (["compare", "--system", "torus_colour.toml"], ["torus_colour.toml", "no parameter colour"]),
    (["topology", "moebius.toml"], ["unknown system kind", "moebius"]),
    (["topology", "torrus.toml"], ["unknown system kind", "did you mean torus"]),
    (["topology", "nokind.toml"], ["nokind.toml", "needs a kind"]),
    (["topology", "notable.toml"], ["notable.toml", "[system]"]),
    (["topology", "broken.toml"], ["broken.toml", "not valid TOML"]),
    (["topology", "ring_strw.toml"], ["wavelengths", "positive integer", "many"]),
    (["topology", "ring_inf.toml"], ["nodes", "integer", "inf"]),
    (["topology", "ring_huge.toml"], ["nodes", "at most", "2**40"]),
    (["topology", "ring_floatnodes.toml"], ["nodes", "integer", "8.5"]),
    (["topology", "ring_bidir.toml"], ["bidirectional", "true or false"]),
    (["topology", "ring_name.toml"], ["name", "string"]),
    (["topology", "mlfm_sel.toml"], ["selection", "integer", "'b'"]),
    (["topology", "custom_vertex.toml"], ["custom link 0", "unknown vertex 7"]),
    (["topology", "custom_nonodes.toml"], ["custom", "needs nodes"]),
    (["topology", "fat_strk.toml"], ["k (switch ports)", "four"]),
    # algorithms and schedule files
    (["algorithms", "optre"], ["unknown algorithm", "did you mean optree"]),
    (["compare", "-a", "ringg", "-n", "8"], ["unknown algorithm", "did you mean ring"]),
    (["simulate", "nowhere.json"], ["nowhere.json", "does not exist"]),
    # sizes and bandwidths: one unit rule (docs/units.md), exact integers, int64 limits
    (["compare", "-s", "12b"], ["12 bits", "whole number of bytes"]),
    (["compare", "-s", "1e30"], ["maximum size", "2^63 - 1"]),
    (["compare", "-s", "4mb"], ["case-sensitive", "Mi = 2^20"]),
    (["compare", "-s", "-5"], ["positive whole number of bytes"]),
    (["compare", "-s", "0"], ["positive whole number of bytes"]),
    (["compare", "--system", "ring", "--link-bandwidth", "1Gx/s"], ["invalid bandwidth", "1GiB/s"]),
    (["compare", "--system", "ring", "-n", "6", "--total-size", "1000"], ["does not divide evenly", "996B", "1002B"]),
    (["compare", "-s", "1KiB", "--total-size", "2KiB"], ["mutually exclusive"]),
    (["compare", "-n", "16", "-w", "0"], ["wavelengths", "positive integer"]),
    # one digit rule: ASCII 0-9 everywhere (issue 31: -S ports=２ was accepted, -s ４MiB refused)
    (["compare", "-s", "４MiB"], ["size", "４MiB", "ASCII digits 0-9"]),
    (["compare", "--system", "ocs", "-S", "ports=２"], ["-S ports", "ASCII digits 0-9"]),
    (["compare", "--system", "ocs", "-n", "８"], ["--nodes", "ASCII digits 0-9"]),
    (["compare", "-n", "8", "-w", "٤"], ["--wavelengths", "ASCII digits 0-9"]),
    (["compare", "--system", "ring", "-n", "4", "-c", "broadcast", "-a", "ring", "-p", "chunks=２"],
     ["chunks", "ASCII digits 0-9"]),
    (["compare", "--system", "torus", "-S", "dims=４x４"], ["dims", "ASCII digits 0-9"]),
    (["compare", "--system", "hierarchical", "-S", "dims=switch:４"], ["dimension size", "ASCII digits 0-9"]),
    (["compare", "--system", "ring", "--link-latency", "１us"], ["time", "ASCII digits 0-9"]),
    (["tune", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "4KiB", "-f", "４"], ["--step-factor",
                                                                                      "ASCII digits 0-9"]),
    (["compare", "-n", "16", "-w", "4611686018427387904"], ["wavelengths must be at most 2147483647"]),
    # options that would silently do nothing
    (["compare", "-n", "8", "-s", "1KiB", "-s", "2KiB"], ["--size/-s was given 2 times"]),
    (["compare", "-n", "8", "--root", "3"], ["allgather has no root"]),
    (["compare", "--system", "star", "-n", "8", "-c", "broadcast", "--root", "99"], ["root", "0..7", "99"]),
    (["simulate", "ring4.json", "-n", "16"], ["carries its own system", "--nodes would be ignored"]),
    (["simulate", "ring4.json", "-s", "1KiB"], ["has its own size"]),
    (["simulate", "ne", "--system", "ring", "-n", "8", "-p", "chunks=abc"], ["ne takes no parameter", "chunks"]),
    (["topology", "paper", "-f", "2"], ["-f is no longer --fibers", "-F"]),
    (["compare", "--format", "xml"], ["--format", "'xml'"]),
    (["compare", "--json", "--format", "csv"], ["contradicts --format csv"]),
    (["compare", "-c", "allgatherr"], ["unknown collective", "did you mean allgather"]),
    (["reproduce", "optree-tabel1"], ["unknown table", "optree-table1"]),
    # schedule files: malformed contents exit 2 (docs/model.md, "Errors and exit codes")
    (["verify", "nowhere.json"], ["nowhere.json", "does not exist"]),
    (["verify", "adir"], ["adir", "is a directory"]),
    (["verify", "step5.json"], ["first step is numbered 5", "without gaps"]),
    (["verify", "dupchunk.json"], ["chunk 0 more than once"]),
    (["verify", "hugesize.json"], ["size_bytes", "out of range", "int64"]),
    (["verify", "garbage.npz"], ["garbage.npz", "not a .npz schedule"]),
    (["schedule", "ring", "-n", "8", "--out", "nodir/x.json"], ["cannot write", "nodir/x.json"]),
] + [(["tune", "--system", "ring", "-n", "8", *args], words) for args, words in [
    # collsim tune: refused before any work, and nothing written (test_bad_tune_input_writes_nothing)
    (["-b", "4KiB", "-e", "1KiB"], ["the sweep is empty", "4KiB", "1KiB"]),
    (["-b", "1KiB", "-e", "4KiB", "-f", "1"], ["step factor", ">= 2", "1"]),
    (["-b", "1KiB", "-e", "4KiB", "-a", "ringg"], ["unknown algorithm", "did you mean ring"]),
    (["-b", "1KiB", "-e", "4KiB", "-a", "osm"], ["osm does not run on ring systems"]),
    (["-b", "1KiB", "-e", "4KiB", "--rules", "nodir/r.json"], ["cannot write the rules file", "nodir", "does not exist"]),
    (["-b", "1KiB", "-e", "4KiB", "--rules", "adir"], ["adir", "is a directory"]),
    (["-b", "1KiB", "-e", "4KiB", "--figure", "t.pdf"], ["t.pdf", "must end in .png or .svg"]),
    (["-b", "1KiB", "-e", "4KiB", "--store", "adir"], ["adir", "is a directory"]),
    (["-b", "1KiB", "-e", "4KiB", "--store", "s.sqlite", "--no-store"], ["--store and --no-store"]),
    (["-b", "1KiB"], ["Missing option", "--max-size"]),
    (["-b", "1KiB", "-e", "4KiB", "--rules-format", "nccl"], ["--rules-format", "'nccl'"]),
]] + [(["tune", "--system", "paper", "-n", "8", "-c", "scan", "-b", "1KiB", "-e", "2KiB"],
       ["no registered algorithm runs scan"])]
CASES += [  # collsim calibrate (docs/calibration.md): refused before MPI measures anything
    (["calibrate"], ["at least 2 ranks", "mpiexec -n 2"]),
    (["calibrate", "--sizes", "1B,,4B"], ["comma-separated", "1B,,4B"]),
    (["calibrate", "--sizes", "1KiB"], ["at least two different sizes", "got 1"]),
    (["calibrate", "--sizes", "0,4"], ["invalid size '0'", "positive"]),
    (["calibrate", "--sizes", "1B,2GiB"], ["1 B to 1 GiB"]),
    (["calibrate", "--sizes", "1B,4mb"], ["4mb"]),
    (["calibrate", "--iterations", "0"], ["--iterations", "0"]),
    (["calibrate", "--name", ""], ["--name", "cannot be empty"]),
    (["calibrate", "--statistic", "mean"], ["--statistic", "'mean'"]),
    (["calibrate", "--out", "nodir/c.toml"], ["cannot write the system file", "nodir", "does not exist"]),
    (["calibrate", "--out", "adir"], ["adir", "is a directory"]),
    (["calibrate", "--refit", "nowhere.toml"], ["cannot read calibration file", "nowhere.toml"]),
    (["calibrate", "--refit", "broken.toml"], ["broken.toml", "invalid TOML"]),
    (["calibrate", "--refit", "torrus.toml"], ["torrus.toml", "no [calibration] table"]),
    (["sweep", "nowhere.toml", "--executor", "mpi"], ["--executor mpi", "at least 2 ranks"]),
    (["sweep", "nowhere.toml", "--executor", "mpi", "-j", "2"], ["--jobs is for --executor local"]),
]

# What a message must never contain: Python's and numpy's own words about collsim's internals.
LEAKS = ("Traceback", "__init__()", "positional argument", "keyword argument", "ufunc", "dtype(", "[Errno",
         "NoneType", "object has no attribute", "<class", "internal error", "d=None")


def _schedule_files(folder) -> None:
    """A good 4-node electrical-ring schedule and three malformed variants of it."""
    import collsim
    from collsim.core.serialize import dumps
    good = json.loads(dumps(collsim.build("ring", "ring", "allgather", "1KiB", nodes=4)))
    (folder / "ring4.json").write_text(json.dumps(good))
    step5 = json.loads(json.dumps(good))
    step5["steps"] = [dict(step5["steps"][0], step=5)]
    dup = json.loads(json.dumps(good))
    dup["steps"][0]["transfers"][0]["chunks"] = [0, 0]
    huge = json.loads(json.dumps(good))
    huge["collective"]["size_bytes"] = 2**64
    for name, doc in (("step5.json", step5), ("dupchunk.json", dup), ("hugesize.json", huge)):
        (folder / name).write_text(json.dumps(doc))
    (folder / "garbage.npz").write_bytes(b"PK not really a zip")


@pytest.fixture
def files(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "adir").mkdir()
    _schedule_files(tmp_path)
    return tmp_path


@pytest.mark.parametrize("args, words", CASES, ids=[" ".join(a) or "empty" for a, _ in CASES])
def test_bad_input_is_one_clear_line(run_cli, files, args, words):
    proc = run_cli(*args)
    err = proc.stderr
    assert proc.returncode == 2, (proc.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsim: "), err
    for word in words:
        assert word in err, (word, err)
    for leak in LEAKS:
        assert leak not in err, (leak, err)


@pytest.mark.parametrize("args", [a for a, _ in CASES if a[0] == "tune"], ids=lambda a: " ".join(a[4:]))
def test_bad_tune_input_writes_nothing(files, args):
    import os
    import subprocess

    from conftest import collsim_exe
    before = sorted(p.relative_to(files) for p in files.rglob("*"))
    outputs = [] if {"--rules", "--figure"} & set(args) else ["--rules", "r.json", "--figure", "f.png"]
    proc = subprocess.run([collsim_exe(), *args, *outputs], cwd=files, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CACHE_HOME": str(files / "cache")})
    assert proc.returncode == 2, proc.stderr
    assert sorted(p.relative_to(files) for p in files.rglob("*")) == before  # no store, rules or figure


def test_the_cases_are_many():
    assert len(CASES) >= 60


def test_a_torus_file_without_nodes_takes_them_from_its_dims(run_cli, tmp_path):
    (tmp_path / "t.toml").write_text('[system]\nkind = "torus"\ndims = [4, 4, 2]\n')
    proc = run_cli("topology", "t.toml", "--json", check=True)
    info = json.loads(proc.stdout)
    assert info["nodes"] == 32 and info["kind"] == "torus" and info["system"] == "t"


@pytest.mark.parametrize("name, kind", [("Torus", "torus"), ("PAPER", "optical-ring"), ("optical-ring", "optical-ring"),
                                        ("Fat-Tree", "fat-tree")])
def test_system_names_ignore_case_and_kinds_are_names(run_cli, name, kind):
    info = json.loads(run_cli("topology", name, "--json", check=True).stdout)
    assert info["kind"] == kind
