"""Issue #11 through the installed ``collsim`` script: units, sizes per collective, totals, sweeps, root, shift."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.schedule_first(40)  # about 40 s of work: handed out early (tests/conftest.py)

RING8 = ("--system", "ring", "-n", "8")


def _rows(run_cli, *args):
    """The JSON output; for compare, only the rows of algorithms that ran (not the skipped ones)."""
    out = json.loads(run_cli(*args, "--json", check=True).stdout)
    return [r for r in out if r.get("skipped") is None] if isinstance(out, list) and args[0] == "compare" else out


def _one_line_exit_2(proc, needle):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr, proc.stderr


# -- the unit rule -------------------------------------------------------------------------------

@pytest.mark.parametrize("size,expected", [
    ("32KB", 32_000),      # was 32768 before issue #11
    ("32KiB", 32_768),
    ("4Mb", 500_000),      # 4*10^6 bits; was 4 MiB of bytes
    ("1.5KiB", 1536),
    ("9007199254740993", 9007199254740993),  # exact: never through a float
])
def test_sizes_follow_the_unit_rule(run_cli, size, expected):
    rows = _rows(run_cli, "compare", "--system", "ring", "-n", "2", "-a", "ring", "-s", size)
    assert rows[0]["size_bytes"] == expected and rows[0]["total_bytes"] == 2 * expected


@pytest.mark.parametrize("size,needle", [
    ("1e30", "maximum size of 2^63 - 1"),
    ("9223372036854775808", "maximum size of 2^63 - 1"),
    ("12b", "12 bits is not a whole number of bytes"),
    ("4mb", "case-sensitive"),
    ("4kib", "did you mean 4KiB (4096 bytes) or 4Kib"),  # issue 21: was read as 4 kibibits (512 B)
    ("4KIB", "did you mean 4KiB"),
    ("1.5", "whole number of bytes"),
])
def test_bad_sizes_are_one_line_and_exit_2(run_cli, size, needle):
    _one_line_exit_2(run_cli("compare", *RING8, "-a", "ring", "-s", size), needle)


def test_a_size_too_large_for_the_collective_is_one_line(run_cli):
    _one_line_exit_2(run_cli("compare", "-n", "4", "-a", "ring", "-s", "4EiB"), "use at most")


@pytest.mark.parametrize("bandwidth,expected", [("1GiB/s", 2**30), ("100Gb/s", 12.5e9), ("10GB/s", 1e10),
                                                ("100Gbps", 12.5e9)])
def test_bandwidths_follow_the_same_rule(run_cli, bandwidth, expected):
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "-s", "1KiB", "--link-bandwidth", bandwidth)
    assert rows[0]["link_bandwidth_bytes_per_s"] == expected


def test_a_kinds_toml_reads_bandwidths_and_times_as_the_cli_does(run_cli, tmp_path):
    """Issue 21: ``link_bandwidth_bytes_per_s = "100Gb/s"`` in a ring's TOML was refused."""
    (tmp_path / "ring.toml").write_text('[system]\nkind = "ring"\nnodes = 8\n'
                                        'link_bandwidth_bytes_per_s = "100Gb/s"\nlink_latency_s = "500ns"\n')
    toml = _rows(run_cli, "compare", "--system", "ring.toml", "-a", "ring", "-s", "1KiB")[0]
    cli = _rows(run_cli, "compare", *RING8, "-a", "ring", "-s", "1KiB", "--link-bandwidth", "100Gb/s",
                "--link-latency", "500ns")[0]
    assert toml["link_bandwidth_bytes_per_s"] == 12.5e9 and toml["link_latency_s"] == 5e-7
    assert toml["time_s"] == cli["time_s"]


# -- what --size means, and nccl-tests' total --------------------------------------------------------

@pytest.mark.parametrize("command", [("compare",), ("simulate", "ring"), ("schedule", "ring")])
def test_help_says_what_the_size_is_for_every_collective(run_cli, command):
    text = " ".join(run_cli(*command, "--help", check=True).stdout.split())
    for needle in ("each node's block for allgather", "pair's block for alltoall", "the whole vector for allreduce",
                   "--total-size", "nccl-tests", "32kB = 32000 B", "32KiB = 32768 B", "4Mb = 500000 B", "--root",
                   "--shift"):
        assert needle in text, needle


@pytest.mark.parametrize("collective,factor", [("allgather", 8), ("reducescatter", 8), ("alltoall", 8),
                                               ("allreduce", 1), ("broadcast", 1)])
def test_rows_give_collsims_size_and_nccl_tests_total(run_cli, collective, factor):
    rows = _rows(run_cli, "compare", *RING8, "-c", collective, "-s", "1KiB")
    assert rows and all((r["size_bytes"], r["total_bytes"]) == (1024, 1024 * factor) for r in rows)
    sim = _rows(run_cli, "simulate", "ring" if collective != "alltoall" else "bruck", *RING8, "-c", collective,
                "-s", "1KiB")
    assert (sim["collective"], sim["size_bytes"], sim["total_bytes"]) == (collective, 1024, 1024 * factor)


def test_total_size_is_nccl_tests_size(run_cli):
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "--total-size", "8MiB")
    assert (rows[0]["size_bytes"], rows[0]["total_bytes"]) == (1 << 20, 8 << 20)
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "-c", "allreduce", "--total-size", "1000")
    assert (rows[0]["size_bytes"], rows[0]["total_bytes"]) == (1000, 1000)
    sim = _rows(run_cli, "simulate", "bruck", *RING8, "-c", "alltoall", "--total-size", "64KiB")
    assert (sim["size_bytes"], sim["total_bytes"]) == (8192, 65536)


def test_a_total_size_that_does_not_divide_is_refused_with_the_nearest(run_cli):
    proc = run_cli("compare", "--system", "ring", "-n", "6", "--total-size", "1000")
    _one_line_exit_2(proc, "nearest valid totals are 996B (166B per node) and 1002B (167B per node)")


def test_size_and_total_size_are_mutually_exclusive(run_cli):
    _one_line_exit_2(run_cli("compare", *RING8, "-s", "1KiB", "--total-size", "8KiB"), "mutually exclusive")


def test_table_titles_say_what_the_size_is(run_cli):
    out = run_cli("compare", *RING8, "-a", "ring", "-s", "1KiB", check=True).stdout
    assert "1KiB per node, total 8KiB" in out
    out = run_cli("simulate", "ring", *RING8, "-c", "allreduce", "-s", "1KiB", check=True).stdout
    assert "1KiB vector, total 1KiB" in out


# -- sweeps as nccl-tests users type them --------------------------------------------------------

def test_compare_sweep_rows_share_the_single_size_schema(run_cli):
    sweep = _rows(run_cli, "compare", *RING8, "-a", "ring,bruck", "-b", "1KiB", "-e", "64KiB", "-f", "4")
    assert [(r["size_bytes"], r["algorithm"]) for r in sweep] == [
        (s, a) for s in (1024, 4096, 16384, 65536) for a in ("ring", "bruck")]
    single = _rows(run_cli, "compare", *RING8, "-a", "ring,bruck", "-s", "4KiB")
    assert [list(r) for r in sweep[2:4]] == [list(r) for r in single]
    assert sweep[2:4] == single  # the same rows, value for value


def test_sweep_defaults_and_steps(run_cli):
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "-b", "1kB", "-e", "8kB")
    assert [r["size_bytes"] for r in rows] == [1000, 2000, 4000, 8000]  # factor 2 by default
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "--min-size", "1KiB", "--max-size", "3KiB",
                 "--step-bytes", "1KiB")
    assert [r["size_bytes"] for r in rows] == [1024, 2048, 3072]
    rows = _rows(run_cli, "compare", *RING8, "-a", "ring", "-b", "8KiB", "-e", "32KiB", "--total")
    assert [(r["size_bytes"], r["total_bytes"]) for r in rows] == [(1024, 8192), (2048, 16384), (4096, 32768)]


def test_simulate_sweep_prints_one_object_per_size(run_cli):
    docs = _rows(run_cli, "simulate", "ne", *RING8, "-b", "1KiB", "-e", "4KiB")
    assert [d["size_bytes"] for d in docs] == [1024, 2048, 4096]
    single = _rows(run_cli, "simulate", "ne", *RING8, "-s", "2KiB")
    assert docs[1] == single


@pytest.mark.parametrize("args,needle", [
    (("-f", "2"), "-f/--step-factor needs a sweep"),
    (("-b", "1KiB"), "needs both -b/--min-size and -e/--max-size"),
    (("-b", "1KiB", "-e", "4KiB", "-f", "2", "-i", "1KiB"), "mutually exclusive"),
    (("-b", "4KiB", "-e", "1KiB"), "the sweep is empty"),
    (("-b", "1", "-e", "1MiB", "-i", "1"), "more than 1000"),
    (("-s", "1KiB", "-b", "1KiB", "-e", "2KiB"), "mutually exclusive"),
    (("-b", "1001", "-e", "4000", "--total"), "does not divide evenly among 8 nodes"),
])
def test_bad_sweeps_are_refused(run_cli, args, needle):
    _one_line_exit_2(run_cli("compare", *RING8, "-a", "ring", *args), needle)


def test_fibers_moved_to_capital_f(run_cli):
    rows = _rows(run_cli, "compare", "-n", "8", "-w", "2", "-F", "2", "-a", "ring", "-s", "1KiB")
    assert rows[0]["fibers"] == 2
    assert json.loads(run_cli("topology", "paper", "-n", "8", "--fibers", "2", "--json", check=True).stdout)
    for command in (("topology", "paper"), ("schedule", "ring", "-o", "x.json")):
        proc = run_cli(*command, "-f", "2")
        assert proc.returncode == 2 and "-F or --fibers" in proc.stderr


# -- root and shift, for every algorithm or refused --------------------------------------------------

def test_root_applies_to_every_compared_algorithm(run_cli):
    proc = run_cli("compare", "--system", "star", "-n", "8", "-c", "broadcast", "--root", "3", "--json", check=True)
    rows = [r for r in json.loads(proc.stdout) if r.get("skipped") is None]  # skipped algorithms are rows too
    assert rows and all(r["root"] == 3 for r in rows)
    skipped = {r["algorithm"]: r["skipped"] for r in json.loads(proc.stdout) if r.get("skipped")}
    assert "ring takes no root" in skipped["ring"] and "ring" in proc.stderr  # skipped, with the reason
    assert _rows(run_cli, "compare", "--system", "star", "-n", "8", "-c", "broadcast", "-p", "root=3") == rows


def test_a_root_an_algorithm_cannot_honour_is_refused_for_all(run_cli):
    proc = run_cli("compare", "--system", "star", "-n", "8", "-c", "broadcast", "-a", "ring,binomial", "--root", "3")
    _one_line_exit_2(proc, "ring takes no root (it always roots broadcast at node 0)")
    proc = run_cli("compare", "--system", "star", "-n", "8", "-c", "broadcast", "-a", "ring,binomial", "-p", "root=3")
    _one_line_exit_2(proc, "ring takes no root")
    _one_line_exit_2(run_cli("compare", *RING8, "--root", "1"), "allgather has no root")


def test_shift_and_its_name_q(run_cli):
    rows = _rows(run_cli, "compare", *RING8, "-c", "shift", "-s", "1KiB", "--shift", "3")
    assert rows and all(r["shift"] == 3 for r in rows)
    assert _rows(run_cli, "compare", *RING8, "-c", "shift", "-s", "1KiB", "-p", "q=3") == rows


def test_schedule_and_simulate_take_root_and_shift(run_cli, tmp_path):
    run_cli("schedule", "binomial", "--system", "star", "-n", "8", "-c", "broadcast", "--root", "5", "-s", "1KiB",
            "-o", "b.json", check=True)
    assert json.loads((tmp_path / "b.json").read_text())["collective"]["root"] == 5
    proc = run_cli("schedule", "ring", "--system", "star", "-n", "8", "-c", "broadcast", "--root", "5", "-o", "r.json")
    _one_line_exit_2(proc, "ring takes no root")
    sim = _rows(run_cli, "simulate", "direct", *RING8, "-c", "shift", "--shift", "2", "-s", "1KiB")
    assert sim["shift"] == 2
    _one_line_exit_2(run_cli("simulate", "b.json", "--root", "1"), "a schedule file has its own size")


# -- the papers' sizes, in bytes -----------------------------------------------------------------

@pytest.mark.parametrize("table,size", [("optree-motivation", 1024), ("wrht-allreduce", 4 << 20)])
def test_reproduced_tables_state_their_sizes_in_bytes(run_cli, table, size):
    rows = json.loads(run_cli("reproduce", table, "--json", check=True).stdout)
    assert all(r["size_bytes"] == size and "paper_size" in r for r in rows)
