"""The results store (issue #12): keys, rows, MODEL_VERSION, SIGKILL safety, concurrent writers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from collsim.core.errors import InputError
from collsim.experiments.sweep import store as store_mod
from collsim.experiments.sweep.store import Store, canonical_json, flat_record, point_key
from collsim.experiments.sweep.store_schema import SCHEMA_VERSION
from collsim.experiments.sweep.run import run_sweep
from collsim.experiments.sweep.grid import expand_grid
from collsim.experiments.sweep.point import normalize_point
from conftest import collsim_exe, names

POINT = {"system": "ring", "nodes": 4, "size_bytes": 1024, "collective": "allgather", "algorithm": "ring"}


def _rows(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT key, status, config, result, error FROM points").fetchall()


def _integrity(path) -> str:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def test_keys_are_canonical_and_carry_the_model_version(monkeypatch):
    a = normalize_point({**POINT, "system": "Ring", "size_bytes": "1KiB", "collective": "all-gather",
                         "link_bandwidth": "100Gb/s"})
    b = normalize_point({**POINT, "link_bandwidth": 12.5e9, "wavelengths": None})
    assert a == b and point_key(a) == point_key(b)
    assert canonical_json(a) == canonical_json(dict(reversed(list(b.items()))))
    assert point_key(a) != point_key({**a, "nodes": 8})
    before = point_key(a)
    monkeypatch.setattr(store_mod, "MODEL_VERSION", "collsim-model-test")
    assert point_key(a) != before


def test_put_get_records_and_filters(tmp_path):
    path = tmp_path / "r.sqlite"
    with Store(path) as store:
        p1 = normalize_point(POINT)
        p2 = normalize_point({**POINT, "nodes": 5, "algorithm": "ne"})
        store.put(p1, {**{k: v for k, v in p1.items() if k != "params"}, "slots": 3, "error": None})
        store.put(p2, {"error": "needs an even number of nodes", "error_type": "UnsupportedError"})
        assert store.get(p1)["status"] == "ok" and store.get(p1)["result"]["slots"] == 3
        assert store.get(p2)["status"] == "error" and store.get(p2)["result"] is None
        assert len(store) == 2 and store.keys() == {point_key(p1), point_key(p2)}
        assert [r["point"]["algorithm"] for r in store.records()] == ["ne", "ring"]  # a fixed order
        assert [r["point"]["nodes"] for r in store.records(algorithm="ring")] == [4]
        assert [r["status"] for r in store.records(status="error")] == ["error"]
        assert store.records(nodes=8) == []
        with pytest.raises(InputError, match="did you mean nodes"):
            store.records(node=4)
        flat = flat_record(store.get(p2))
        assert flat["error"] == "needs an even number of nodes" and flat["nodes"] == 5
        store.put(p1, {"slots": 4, "error": None})  # replaces: one row per point
        assert len(store) == 2 and store.get(p1)["result"]["slots"] == 4
        with pytest.raises(InputError):
            store.put(p1)
        assert store.integrity() == "ok"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        cols = [r[1] for r in conn.execute("PRAGMA table_info(points)")]
        assert cols == ["key", "model_version", "config", "status", "error", "result", "system", "collective",
                        "algorithm", "nodes", "size_bytes"]  # no wall-clock column


def test_dataframe_with_pandas_and_a_clear_error_without(tmp_path, monkeypatch):
    # pandas is in the test extra, so the DataFrame path always runs; without pandas, one clear error
    import sys
    with Store(tmp_path / "r.sqlite") as store:
        store.put(normalize_point(POINT), {"slots": 3, "error": None})
        assert list(store.dataframe()["slots"]) == [3]
        monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
        with pytest.raises(InputError, match="needs pandas"):
            store.dataframe()


def test_a_missing_store_or_a_directory_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="no results store"):
        Store(tmp_path / "none.sqlite", create=False)
    with pytest.raises(InputError, match="directory"):
        Store(tmp_path)
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database " * 100)
    with pytest.raises(InputError, match="cannot open"):
        Store(bad)


def test_a_model_version_change_reruns_the_points(tmp_path, monkeypatch):
    grid = expand_grid({"systems": ["ring"], "nodes": [4], "sizes": ["1KiB", "2KiB"], "algorithms": ["ring"]})
    with Store(tmp_path / "r.sqlite") as store:
        assert run_sweep(grid, store)["run"] == 2
        assert run_sweep(grid, store)["finished"] == 2
        monkeypatch.setattr(store_mod, "MODEL_VERSION", "collsim-model-test")
        assert len(store) == 0 and store.records() == []  # old rows never mix with new ones
        again = run_sweep(grid, store)
        assert (again["run"], again["finished"]) == (2, 0)
        assert len(store.records(all_versions=True)) == 4
        assert {r["model_version"] for r in store.records()} == {"collsim-model-test"}


KILL_TOML = """[sweep]
systems = ["ring"]
nodes = [128]
sizes = [{sizes}]
collectives = ["alltoall"]
algorithms = ["pairwise"]
"""


def test_a_sweep_killed_with_sigkill_loses_no_finished_point(tmp_path):
    sizes = ", ".join(str(1024 + 8 * i) for i in range(30))
    (tmp_path / "grid.toml").write_text(KILL_TOML.format(sizes=sizes))
    db = tmp_path / "r.sqlite"
    proc = subprocess.Popen([collsim_exe(), "sweep", "grid.toml", "--store", str(db)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                seen = len(_rows(db))
            except sqlite3.OperationalError:
                seen = 0  # the schema is being created
            if seen >= 3:
                break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    rows = _rows(db)
    assert proc.returncode == -signal.SIGKILL and 3 <= len(rows) < 30, (proc.returncode, len(rows))
    assert _integrity(db) == "ok"
    for key, status, config, result, error in rows:  # every stored row is complete
        assert status == "ok" and error is None and point_key(json.loads(config)) == key
        assert json.loads(result)["verified"] is True and json.loads(result)["simulated_time_s"] > 0
    again = subprocess.run([collsim_exe(), "sweep", "grid.toml", "--store", str(db)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    names(again.stdout, "30 points", f"{30 - len(rows)} run", f"{len(rows)} skipped", "0 failed")
    assert len(_rows(db)) == 30 and _integrity(db) == "ok"


CONCURRENT_TOML = """[sweep]
systems = ["ring", "paper"]
nodes = [8, 16, 32]
wavelengths = [4]
sizes = ["1KiB", "4KiB", "16KiB"]
algorithms = ["ring", "ne"]
"""


def test_two_sweeps_into_one_store_at_once(tmp_path):
    (tmp_path / "grid.toml").write_text(CONCURRENT_TOML)
    db = tmp_path / "r.sqlite"
    procs = [subprocess.Popen([collsim_exe(), "sweep", "grid.toml", "--store", str(db), *extra], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for extra in ([], ["--jobs", "2"])]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    for out, _ in outs:
        assert out.startswith("36 points: ") and "0 failed" in out
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT key) FROM points").fetchone() == (36, 36)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _old_store(path, points) -> None:
    """A store as collsim before issue 21 wrote it: schema version 1, a system file's point keyed by its name."""
    with Store(path) as store:
        for p in points:
            store.put(p, {"slots": 3, "error": None})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE name = 'schema_version'")
        for p in points:
            if "system_config" in p:  # as schema 1 stored it: no content, the key of the name alone
                old = {k: v for k, v in p.items() if k != "system_config"}
                conn.execute("UPDATE points SET key = ?, config = ? WHERE key = ?",
                             (point_key(old), canonical_json(old), point_key(p)))


def test_an_old_store_with_system_file_points_is_read_but_never_written(tmp_path, monkeypatch):
    (tmp_path / "r4.toml").write_text('[system]\nkind = "ring"\nnodes = 4\n')
    monkeypatch.chdir(tmp_path)
    filed = normalize_point({**POINT, "system": "r4.toml"})
    path = tmp_path / "old.sqlite"
    _old_store(path, [normalize_point(POINT), filed])
    with Store(path) as store:
        assert store.schema_version == 1 and len(store.records()) == 2  # readable
        with pytest.raises(InputError, match=r"older collsim \(schema version 1\).*r4\.toml.*new store"):
            store.put(filed, {"slots": 3, "error": None})
        with pytest.raises(InputError, match="older collsim"):
            run_sweep([filed], store)
    with Store(path, create=False) as store:
        assert [r["point"]["system"] for r in store.records()] == ["r4.toml", "ring"]


def test_an_old_store_without_system_files_is_upgraded_and_a_newer_one_refused(tmp_path):
    path = tmp_path / "old.sqlite"
    _old_store(path, [normalize_point(POINT)])
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        assert run_sweep([POINT], store)["finished"] == 1  # its keys are still right: nothing reruns
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '3' WHERE name = 'schema_version'")
    with pytest.raises(InputError, match="newer collsim"):
        Store(path)
