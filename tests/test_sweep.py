"""Sweeps (issue #12): grid expansion, resuming, failures, --jobs, and the sweep/results commands."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from collsim.core.errors import InputError, UnknownNameError
from collsim.core.limits import MemoryLimitError
from collsim.experiments.sweep.store import Store
from collsim.experiments.sweep.run import run_point, run_sweep
from collsim.experiments.sweep.grid import Grid, expand_grid, read_sweep
from collsim.experiments.sweep.limits import check_sweep
from collsim.experiments.sweep.point import normalize_point
from conftest import names, refusal

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sweep-small.toml"


def _key(p: dict) -> tuple:
    return (p["system"], p.get("nodes"), p.get("wavelengths"), p.get("link_bandwidth"), p["size_bytes"],
            p["collective"], p["algorithm"], json.dumps(p["params"], sort_keys=True))


def test_the_grid_is_every_combination_that_applies():
    g = expand_grid({"systems": ["paper", "ring"], "nodes": [8, 9], "wavelengths": [2, 4], "sizes": ["1KiB"],
                     "link_bandwidths": ["100Gb/s"], "collectives": ["allgather"],
                     "algorithms": ["ring", "ne", "osm"], "params": {"stripe": [1, 2]}})
    assert isinstance(g, Grid) and len({_key(p) for p in g}) == len(g)
    optical = [p for p in g if p["system"] == "paper"]
    electrical = [p for p in g if p["system"] == "ring"]
    assert all("link_bandwidth" not in p and p["wavelengths"] in (2, 4) for p in optical)
    assert all("wavelengths" not in p and p["link_bandwidth"] == 12.5e9 for p in electrical)
    # ring and ne take stripe (two values each); osm does not: one point per instance, noted
    assert sorted({p["params"].get("stripe") for p in optical if p["algorithm"] == "ring"}) == [1, 2]
    assert [p["params"] for p in optical if p["algorithm"] == "osm"] == [{}] * 4
    assert any("osm takes no parameter stripe" in s for s in g.skipped)
    # NE needs an even N, OSM is optical only: skipped with a reason, not points
    assert not any(p["algorithm"] == "ne" and p["nodes"] == 9 for p in g)
    assert not any(p["algorithm"] == "osm" for p in electrical)
    assert any("even number of nodes" in s for s in g.skipped) and any("osm does not run" in s for s in g.skipped)
    assert any("wavelengths" in s and "ring" in s for s in g.skipped), g.skipped
    # paper: 2 N x 2 w x (ring 2 + ne 2 [N=8 only] + osm 1); ring: 2 N x (ring 2 + ne 2 [N=8])
    assert len(optical) == 2 * 2 * 3 + 2 * 2 and len(electrical) == 2 * 2 + 2
    assert g == expand_grid({"systems": ["paper", "ring"], "nodes": [8, 9], "wavelengths": [2, 4],
                             "sizes": ["1KiB"], "link_bandwidths": ["100Gb/s"], "collectives": ["allgather"],
                             "algorithms": ["ring", "ne", "osm"], "params": {"stripe": [1, 2]}})  # deterministic


def test_roots_and_default_algorithms():
    g = expand_grid({"systems": ["star"], "nodes": [8], "sizes": [1024], "collectives": ["broadcast"],
                     "params": {"root": [0, 3]}})
    algos = {p["algorithm"] for p in g}
    assert "binomial" in algos and all(p["params"]["root"] in (0, 3) for p in g if p["algorithm"] == "binomial")
    assert any("takes no root" in s for s in g.skipped)  # root 3 for an algorithm that always roots at 0


@pytest.mark.parametrize("spec, match", [
    ({"systems": ["ring"], "sizes": ["1KiB"], "node": [4]}, "did you mean nodes"),
    ({"systems": "ring", "sizes": ["1KiB"]}, "must be a non-empty list"),
    ({"systems": ["ring"], "sizes": []}, "must be a non-empty list"),
    ({"systems": ["ring"]}, "needs sizes"),
    ({"systems": ["ring"], "sizes": ["1KiB"], "params": {"m": 3}}, "non-empty list"),
    ({"systems": ["ring"], "sizes": ["1KiB"], "params": [1]}, "must be a table"),
    ({"systems": ["ring"], "sizes": ["12XB"]}, "invalid size"),
    ({"systems": ["ring"], "sizes": ["1KiB"], "nodes": [4.5]}, "whole number"),
    ({"systems": ["toruss"], "sizes": ["1KiB"]}, "did you mean torus"),
    ({"systems": ["ring"], "sizes": ["1KiB"], "algorithms": ["rign"]}, "unknown algorithm"),
    ("ring", "a sweep is a table"),
])
def test_bad_grids_are_bad_input(spec, match):
    with pytest.raises(InputError, match=match):
        expand_grid(spec)


def test_points_normalise_and_reject_unknown_keys():
    with pytest.raises(InputError, match="did you mean size_bytes"):
        normalize_point({"system": "ring", "size_byte": 1, "collective": "allgather", "algorithm": "ring"})
    with pytest.raises(InputError, match="needs size_bytes"):
        normalize_point({"system": "ring", "collective": "allgather", "algorithm": "ring"})
    with pytest.raises(UnknownNameError):
        normalize_point({"system": "ring", "size_bytes": 1, "collective": "allgathr", "algorithm": "ring"})


def test_run_point_records_errors_and_never_raises():
    ok = run_point({"system": "paper", "nodes": 8, "wavelengths": 4, "size_bytes": 1024,
                    "collective": "allgather", "algorithm": "osm"})
    assert ok["verified"] and ok["error"] is None and "simulated_time_s" not in ok
    net = run_point({"system": "torus", "nodes": 16, "size_bytes": "1KiB", "collective": "allreduce",
                     "algorithm": "ring", "link_bandwidth": "100Gb/s", "link_latency": "1us"})
    assert net["simulated_time_s"] > 0 and net["link_latency_s"] == 1e-6
    bad = run_point({"system": "torus", "nodes": 7, "size_bytes": 1024, "collective": "allgather",
                     "algorithm": "ring"})
    assert set(bad) == {"error", "error_type"} and bad["error"]
    assert run_point({"system": "ring"})["error_type"] == "InputError"
    assert run_point("not a point")["error_type"] == "InputError"


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    points = [{"system": "ring", "nodes": n, "size_bytes": 1024, "collective": "allgather", "algorithm": "ring"}
              for n in (4, 6)]
    points.insert(1, {"system": "ring", "nodes": 1, "size_bytes": 1024, "collective": "allgather",
                      "algorithm": "ring"})
    seen = []
    with Store(tmp_path / "r.sqlite") as store:
        summary = run_sweep(points, store, progress=lambda done, total, rec: seen.append((done, total)))
        assert (summary["points"], summary["run"], summary["failed"]) == (3, 3, 1)
        assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]
        errors = store.records(status="error")
        assert len(errors) == 1 and errors[0]["point"]["nodes"] == 1 and errors[0]["error"]
        assert len(store.records(status="ok")) == 2
        again = run_sweep(points, store)  # a failed point is finished too: not re-run
        assert (again["run"], again["finished"]) == (0, 3)
    with pytest.raises(InputError, match="at least 1"):
        run_sweep(points, Store(tmp_path / "r.sqlite"), jobs=0)


def test_resume_runs_only_the_missing_points(tmp_path):
    spec = {"systems": ["ring"], "nodes": [4, 8], "sizes": ["1KiB", "2KiB"], "algorithms": ["ring", "ne"]}
    grid = expand_grid(spec)
    with Store(tmp_path / "r.sqlite") as store:
        first = run_sweep(grid[:3], store)
        assert (first["run"], first["finished"]) == (3, 0)
        rest = run_sweep(grid, store)
        assert (rest["points"], rest["run"], rest["finished"]) == (len(grid), len(grid) - 3, 3)


def test_jobs_2_stores_the_same_records_as_jobs_1(tmp_path):
    grid = expand_grid({"systems": ["paper", "torus"], "nodes": [16], "wavelengths": [4], "sizes": ["1KiB", "8KiB"],
                        "collectives": ["allgather", "alltoall"], "algorithms": ["ring", "ne", "pairwise", "bruck"]})
    assert len(grid) >= 8
    records = []
    for jobs in (1, 2):
        with Store(tmp_path / f"jobs{jobs}.sqlite") as store:
            summary = run_sweep(grid, store, jobs=jobs)
            assert summary["run"] == len(grid)
            records.append(store.records())
    assert records[0] == records[1]


def test_read_sweep_names_the_file(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[sweep]\nsystems = ["ring"]\nsizes = "1KiB"\n')
    with pytest.raises(InputError) as info:
        read_sweep(f)
    names(str(info.value), "s.toml", "[sweep] sizes", "list")   # the file, the key, what it must be
    f.write_text('[sweep\n')
    with pytest.raises(InputError, match="invalid TOML"):
        read_sweep(f)
    f.write_text('[swep]\nsystems = ["ring"]\n')
    with pytest.raises(InputError, match="did you mean sweep"):
        read_sweep(f)
    f.write_text('title = "x"\n')
    with pytest.raises(InputError) as info:
        read_sweep(f)
    names(str(info.value), "s.toml", "[sweep]")
    f.write_text('')
    with pytest.raises(InputError, match="no \\[sweep\\] table"):
        read_sweep(f)
    with pytest.raises(InputError, match="cannot read sweep file"):
        read_sweep(tmp_path / "missing.toml")


# ------------------------------------------------------------------------------ the console script

def test_the_example_sweep_and_the_results_command(run_cli, tmp_path):
    proc = run_cli("sweep", str(EXAMPLE), check=True)
    assert proc.stdout.count("\n") == 1, proc.stdout        # one line: what ran, and where it went
    names(proc.stdout, "40 points", "40 run", "0 skipped", "0 failed", "collsim-results.sqlite")
    assert any("skipped" in x and "osm" in x and "ring" in x for x in proc.stderr.splitlines()), proc.stderr
    assert (tmp_path / "collsim-results.sqlite").exists()
    again = run_cli("sweep", str(EXAMPLE), "--jobs", "2", check=True)
    assert again.stdout.startswith("40 points: 0 run, 40 skipped as finished, 0 failed")
    table = run_cli("results", check=True)
    assert table.stdout.startswith("40 results in collsim-results.sqlite") and "efficiency" in table.stdout
    rows = json.loads(run_cli("results", "--json", check=True).stdout)
    assert len(rows) == 40 and all(r["status"] == "ok" and r["verified"] for r in rows)
    assert all(len(r["key"]) == 64 for r in rows)
    assert {r["system"] for r in rows} == {"paper", "ring"}
    sims = [r["simulated_time_s"] for r in rows if r["system"] == "ring"]
    assert sims and all(s > 0 for s in sims)
    out = run_cli("results", "--system", "Ring", "-c", "all-reduce", "-a", "ring", "-n", "8", "--format", "csv",
                  check=True).stdout
    lines = list(csv.DictReader(out.splitlines()))
    assert len(lines) == 2 and {(r["algorithm"], r["collective"], r["nodes"]) for r in lines} == {("ring", "allreduce", "8")}
    assert run_cli("results", "--nodes", "99", check=True).stdout.startswith("no results in collsim-results.sqlite")
    assert json.loads(run_cli("results", "--status", "error", "--json", check=True).stdout) == []


def test_failed_points_show_in_results(run_cli, tmp_path):
    (tmp_path / "g.toml").write_text('[sweep]\nsystems = ["torus"]\nnodes = [7, 16]\nsizes = ["1KiB"]\n'
                                     'algorithms = ["ring"]\n')
    proc = run_cli("sweep", "g.toml", "--store", "x.sqlite", check=True)
    names(proc.stdout, "2 points", "2 run", "0 skipped", "1 failed")
    table = run_cli("results", "--store", "x.sqlite", check=True).stdout
    assert "error" in table and "ring on torus:" in table
    rows = json.loads(run_cli("results", "--store", "x.sqlite", "--status", "error", "--json", check=True).stdout)
    assert len(rows) == 1 and rows[0]["nodes"] == 7 and rows[0]["error"]


@pytest.mark.parametrize("text, args, needle", [
    (None, ["sweep", "missing.toml"], "cannot read sweep file missing.toml"),
    ("[sweep\n", ["sweep", "g.toml"], "invalid TOML"),
    ('[sweep]\nsystems = ["ring"]\nsizes = ["1KiB"]\nalgoritms = ["ring"]\n', ["sweep", "g.toml"],
     "did you mean algorithms"),
    ('[sweep]\nsystems = ["ring"]\nsizes = "1KiB"\n', ["sweep", "g.toml"], "must be a non-empty list"),
    ('[sweep]\nsystems = ["ring"]\nsizes = ["1KiB"]\n', ["sweep", "g.toml", "--jobs", "0"], "--jobs"),
    (None, ["results", "--store", "none.sqlite"], "no results store at none.sqlite"),
    (None, ["results", "-a", "rign"], "unknown algorithm"),
])
def test_bad_input_is_one_line_and_exit_2(run_cli, tmp_path, text, args, needle):
    if text is not None:
        (tmp_path / "g.toml").write_text(text)
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsim: ") and needle in lines[0], proc.stderr
    assert proc.stdout == "" and not (tmp_path / "none.sqlite").exists()


def test_the_docs_show_the_example_file():
    doc = (EXAMPLE.parents[1] / "docs" / "sweeps.md").read_text()
    assert "```toml\n" + EXAMPLE.read_text() + "```" in doc
    assert "sweeps.md" in (EXAMPLE.parents[1] / "docs" / "README.md").read_text()


# ------------------------------------------------------------------ system files and huge grids (issue 21)

RING_FILE = '[system]\nkind = "ring"\nnodes = 4\nlink_bandwidth_bytes_per_s = {bw}\n'
FILE_SWEEP = '[sweep]\nsystems = ["{name}"]\nsizes = ["1KiB"]\nalgorithms = ["ring"]\n'


def test_an_edited_system_file_runs_its_points_again(run_cli, tmp_path):
    (tmp_path / "r4.toml").write_text(RING_FILE.format(bw="1e9"))
    (tmp_path / "g.toml").write_text(FILE_SWEEP.format(name="r4.toml"))
    assert "1 points: 1 run, 0 skipped" in run_cli("sweep", "g.toml", check=True).stdout
    assert "1 points: 0 run, 1 skipped" in run_cli("sweep", "g.toml", check=True).stdout
    (tmp_path / "r4.toml").write_text(RING_FILE.format(bw="2e9"))  # twice the bandwidth: a new point
    assert "1 points: 1 run, 0 skipped" in run_cli("sweep", "g.toml", check=True).stdout
    rows = json.loads(run_cli("results", "--system", "r4.toml", "--json", check=True).stdout)
    assert sorted(r["link_bandwidth_bytes_per_s"] for r in rows) == [1e9, 2e9]
    assert len({r["key"] for r in rows}) == 2


def test_a_point_carries_its_system_file_and_runs_from_it(tmp_path, monkeypatch):
    (tmp_path / "r4.toml").write_text(RING_FILE.format(bw="1e9"))
    monkeypatch.chdir(tmp_path)
    point = normalize_point({"system": "r4.toml", "size_bytes": 1024, "collective": "allgather", "algorithm": "ring"})
    assert point["system_config"] == {"kind": "ring", "link_bandwidth_bytes_per_s": 1e9, "name": "r4", "nodes": 4}
    (tmp_path / "r4.toml").unlink()  # the point holds what defines it: it runs without the file
    assert run_point(point)["link_bandwidth_bytes_per_s"] == 1e9
    with pytest.raises(InputError) as info:
        normalize_point({**point, "system": "missing.toml", "system_config": None})
    names(str(info.value), "missing.toml", "does not exist")


def test_system_files_are_read_from_the_sweep_files_folder(run_cli, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "r4.toml").write_text(RING_FILE.format(bw="1e9"))
    (sub / "g.toml").write_text(FILE_SWEEP.format(name="r4.toml"))
    proc = run_cli("sweep", "sub/g.toml", check=True)
    names(proc.stdout, "1 points", "1 run", "0 skipped", "0 failed")
    rows = json.loads(run_cli("results", "--json", check=True).stdout)
    assert [(r["status"], r["system"], r["nodes"]) for r in rows] == [("ok", "r4", 4)]  # the [system] name


def test_a_missing_system_file_is_bad_input_and_stores_nothing(run_cli, tmp_path):
    (tmp_path / "g.toml").write_text(FILE_SWEEP.format(name="nowhere.toml"))
    proc = run_cli("sweep", "g.toml")
    names(refusal(proc), "g.toml", "nowhere.toml", "does not exist")   # the sweep file, the system file it names
    assert proc.stdout == "" and not (tmp_path / "collsim-results.sqlite").exists()


def test_a_huge_grid_is_refused_before_anything_runs(run_cli, tmp_path):
    nodes = ", ".join(str(n) for n in range(4, 1004))
    sizes = ", ".join(str(1024 + i) for i in range(200))
    (tmp_path / "g.toml").write_text(f'[sweep]\nsystems = ["ring"]\nnodes = [{nodes}]\nsizes = [{sizes}]\n'
                                     'algorithms = ["ring"]\n')
    names(refusal(run_cli("sweep", "g.toml")), "200,000", "100,000")   # the grid's points, and the limit
    assert not (tmp_path / "collsim-results.sqlite").exists()
    with pytest.raises(InputError, match="up to 6 points"):
        expand_grid({"systems": ["ring", "paper"], "nodes": [4, 8, 16], "sizes": ["1KiB"], "algorithms": ["ring"]},
                    max_points=5)


def test_points_too_big_for_memory_are_refused_before_anything_runs(run_cli, tmp_path, monkeypatch):
    (tmp_path / "g.toml").write_text('[sweep]\nsystems = ["ring"]\nnodes = [100000]\nsizes = ["1KiB"]\n'
                                     'algorithms = ["ring"]\n')
    names(refusal(run_cli("sweep", "g.toml")), "N=100000", "3.65 TiB")   # the point, and its estimate
    assert not (tmp_path / "collsim-results.sqlite").exists()
    # each point fits alone, two at once do not: --jobs 2 is refused, --jobs 1 runs
    monkeypatch.setenv("COLLSIM_MEMORY_LIMIT", "600MiB")
    grid = expand_grid({"systems": ["ring"], "nodes": [1024], "sizes": ["1KiB", "2KiB"], "algorithms": ["ring"]})
    check_sweep(grid, jobs=1)
    with pytest.raises(MemoryLimitError, match=r"2 points at once \(--jobs 2\)"):
        check_sweep(grid, jobs=2)
    with Store(tmp_path / "r.sqlite") as store, pytest.raises(MemoryLimitError):
        run_sweep(grid, store, jobs=2)
    with Store(tmp_path / "r.sqlite") as store:
        assert len(store) == 0


@pytest.mark.parametrize("store, needle", [("notsqlite.sqlite", "not a database"),
                                           ("nodir/s.sqlite", "nodir")])
def test_a_store_that_cannot_be_used_is_the_first_and_only_line(run_cli, tmp_path, store, needle):
    """Issue 31: the example's fourteen "skipped" notes came first and the store's error was line 16."""
    (tmp_path / "notsqlite.sqlite").write_bytes(b"this is not an SQLite database " * 10)
    assert read_sweep(EXAMPLE).skipped  # the example has notes to print: they must wait for the store
    proc = run_cli("sweep", str(EXAMPLE), "--store", store)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsim: "), proc.stderr
    assert store in lines[0] and needle in lines[0], lines[0]
    assert (tmp_path / "notsqlite.sqlite").read_bytes() == b"this is not an SQLite database " * 10
