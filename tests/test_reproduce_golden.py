"""Golden JSON for every ``collsim reproduce`` table (issue #10: tests that cannot pass vacuously).

Each table of :data:`collsim.experiments.papers.reproduce.EXPERIMENTS` is run through the
*installed* console script, ``collsim reproduce NAME --json``, and the parsed
output is compared with ``tests/golden/reproduce/NAME.json``:

* floats with a relative tolerance of 1e-9 (:data:`REL_TOL`): the tables hold
  modelled times and throughputs computed with ``math``/numpy functions (log,
  pow, ceil of quotients) whose last bits may differ between libm builds and
  CPUs; 1e-9 absorbs those few ulps while any change of the model itself moves
  a value far more;
* everything else exactly: ints, strings, booleans, ``null``, list lengths, dict
  keys and their order, and the type of each value (``3`` is not ``3.0``, ``true``
  is not ``1``).

A second test runs every table twice and requires byte-identical output, so no
wall-clock time, random draw or set ordering can sit in a reproduced result.

The tests never write a golden file.  To regenerate them deliberately (and then
explain every changed value in the commit message; docs/papers/discrepancies.md)::

    python tests/test_reproduce_golden.py --update            # every table
    python tests/test_reproduce_golden.py --update optree-fig4
    COLLSIM_UPDATE_GOLDEN=1 python -m pytest tests/test_reproduce_golden.py   # same, from pytest

``python tests/test_reproduce_golden.py`` without ``--update`` only checks and
prints the differences.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conftest import collsim_exe

GOLDEN_DIR = Path(__file__).parent / "golden" / "reproduce"
REL_TOL = 1e-9
UPDATE_ENV = "COLLSIM_UPDATE_GOLDEN"
MAX_SHOWN = 40


def table_names() -> list[str]:
    """The tables ``collsim reproduce`` knows, in its own order."""
    from collsim.experiments.papers.reproduce import EXPERIMENTS
    return list(EXPERIMENTS)


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.json"


def reproduce(name: str, cwd: Path | str) -> str:
    """``collsim reproduce NAME --json`` through the installed script; its stdout."""
    proc = subprocess.run([collsim_exe(), "reproduce", name, "--json"], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200"}, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"collsim reproduce {name} --json failed ({proc.returncode}): {proc.stderr}")
    return proc.stdout


def _kind(x: Any) -> str:
    return "null" if x is None else type(x).__name__


def json_diff(golden: Any, actual: Any, path: str = "$") -> list[str]:
    """Differences between two parsed JSON documents, one readable line per differing path.

    Floats compare with relative tolerance :data:`REL_TOL` (NaN equals NaN, infinities
    exactly); every other value, every type, list length and dict key (and key order)
    must match exactly.

    Examples
    --------
    >>> json_diff({"a": [1, 2.0, "x"]}, {"a": [1, 2.0 + 1e-12, "y"]})
    ["$.a[2]: golden 'x' != actual 'y'"]
    >>> json_diff({"a": 1}, {"a": 1.0, "b": None})
    ['$.a: golden 1 (int) != actual 1.0 (float)', '$.b: not in golden, actual None']
    """
    if type(golden) is not type(actual):
        return [f"{path}: golden {golden!r} ({_kind(golden)}) != actual {actual!r} ({_kind(actual)})"]
    if isinstance(golden, dict):
        out = []
        for key in golden:
            if key not in actual:
                out.append(f"{path}.{key}: golden {golden[key]!r}, not in actual")
            else:
                out.extend(json_diff(golden[key], actual[key], f"{path}.{key}"))
        out.extend(f"{path}.{key}: not in golden, actual {actual[key]!r}" for key in actual if key not in golden)
        if not out and list(golden) != list(actual):
            out.append(f"{path}: key order: golden {list(golden)} != actual {list(actual)}")
        return out
    if isinstance(golden, list):
        out = []
        if len(golden) != len(actual):
            out.append(f"{path}: golden has {len(golden)} items, actual {len(actual)}")
        for i, (g, a) in enumerate(zip(golden, actual)):
            out.extend(json_diff(g, a, f"{path}[{i}]"))
        return out
    if isinstance(golden, float):
        if math.isnan(golden) and math.isnan(actual):
            return []
        if golden == actual or (math.isfinite(golden) and math.isfinite(actual)
                                and math.isclose(golden, actual, rel_tol=REL_TOL, abs_tol=0.0)):
            return []
        rel = abs(actual - golden) / abs(golden) if golden else math.inf
        return [f"{path}: golden {golden!r} != actual {actual!r} (relative difference {rel:.3g} > {REL_TOL:g})"]
    if golden != actual:
        return [f"{path}: golden {golden!r} != actual {actual!r}"]
    return []


def format_diff(name: str, lines: list[str]) -> str:
    shown = lines[:MAX_SHOWN]
    more = f"\n  ... and {len(lines) - MAX_SHOWN} more" if len(lines) > MAX_SHOWN else ""
    where = golden_path(name).relative_to(GOLDEN_DIR.parent.parent.parent)
    return (f"collsim reproduce {name} --json differs from {where} at {len(lines)} path(s):\n  "
            + "\n  ".join(shown) + more
            + f"\nIf the change is intended: python tests/test_reproduce_golden.py --update {name}, "
              "and explain every changed value in the commit message.")


def write_golden(name: str, text: str) -> None:
    """Store the script's output verbatim (it is already ``json.dumps(indent=1)``)."""
    json.loads(text)  # never store something that is not JSON
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    golden_path(name).write_text(text if text.endswith("\n") else text + "\n")


# --------------------------------------------------------------------------------------------- tests

@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """Each table's output, run once per module and shared by both tests."""
    cache: dict[str, str] = {}
    cwd = tmp_path_factory.mktemp("reproduce")

    def get(name: str) -> str:
        if name not in cache:
            cache[name] = reproduce(name, cwd)
        return cache[name]
    return get


def test_every_table_has_a_golden_and_no_golden_is_stale():
    names = set(table_names())
    stored = {p.stem for p in GOLDEN_DIR.glob("*.json")}
    assert names, "collsim reproduce lists no table"
    assert not names - stored, (f"no golden for {sorted(names - stored)}: run "
                                f"python tests/test_reproduce_golden.py --update {' '.join(sorted(names - stored))}")
    assert not stored - names, f"goldens for tables collsim no longer has: {sorted(stored - names)}; delete them"


@pytest.mark.parametrize("name", table_names())
def test_reproduce_matches_golden(name, first_run):
    text = first_run(name)
    actual = json.loads(text)
    assert isinstance(actual, list) and actual, f"{name}: expected a non-empty list of rows"
    if os.environ.get(UPDATE_ENV) == "1":
        write_golden(name, text)
        pytest.skip(f"{UPDATE_ENV}=1: wrote {golden_path(name)}; review `git diff` and explain it in the commit")
    path = golden_path(name)
    if not path.exists():
        pytest.fail(f"no golden file {path}; create it deliberately with "
                    f"python tests/test_reproduce_golden.py --update {name}")
    lines = json_diff(json.loads(path.read_text()), actual)
    if lines:
        pytest.fail(format_diff(name, lines), pytrace=False)


@pytest.mark.parametrize("name", table_names())
def test_reproduce_is_byte_identical_across_runs(name, first_run, tmp_path):
    first = first_run(name)
    second = reproduce(name, tmp_path)
    if first != second:
        lines = json_diff(json.loads(first), json.loads(second))
        pytest.fail(f"collsim reproduce {name} --json differs between two runs (wall-clock time, randomness or "
                    f"unordered iteration in a result?):\n  " + "\n  ".join(lines[:MAX_SHOWN] or
                                                                           ["(same values, different bytes)"]))


def test_json_diff_reports_paths_and_respects_the_tolerance():
    golden = {"rows": [{"n": 4, "t": 1.0, "ok": True, "name": "a", "v": [1, 2]}]}
    assert json_diff(golden, json.loads(json.dumps(golden))) == []
    near = {"rows": [{"n": 4, "t": 1.0 + 5e-10, "ok": True, "name": "a", "v": [1, 2]}]}
    assert json_diff(golden, near) == []
    far = {"rows": [{"n": 4.0, "t": 1.0 + 2e-9, "ok": 1, "name": "b", "v": [1], "extra": None}]}
    lines = json_diff(golden, far)
    assert [line.split(":")[0] for line in lines] == [
        "$.rows[0].n", "$.rows[0].t", "$.rows[0].ok", "$.rows[0].name", "$.rows[0].v", "$.rows[0].extra"]
    assert "relative difference" in lines[1] and "(bool)" in lines[2] and "actual 1" in lines[4]
    assert json_diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) == ["$: key order: golden ['a', 'b'] != actual ['b', 'a']"]
    assert json_diff(0.0, 1e-300) and json_diff(float("nan"), float("nan")) == []


# ---------------------------------------------------------------------------------------- the script

def main(argv: list[str]) -> int:
    """``--update [NAME ...]`` rewrites goldens; without it, check and print differences."""
    update = "--update" in argv
    names = [a for a in argv if not a.startswith("-")] or table_names()
    unknown = sorted(set(names) - set(table_names()))
    if unknown:
        print(f"unknown table(s): {', '.join(unknown)}; known: {', '.join(table_names())}", file=sys.stderr)
        return 2
    status = 0
    with tempfile.TemporaryDirectory() as cwd:
        for name in names:
            text = reproduce(name, cwd)
            path = golden_path(name)
            old = json.loads(path.read_text()) if path.exists() else None
            lines = ["(new golden)"] if old is None else json_diff(old, json.loads(text))
            if update:
                write_golden(name, text)
                what = "new" if old is None else f"{len(lines)} change(s)"
                print(f"{name}: {'unchanged' if not lines else f'wrote {path} ({what})'}")
            else:
                print(f"{name}: {'ok' if not lines else format_diff(name, lines)}")
                status |= bool(lines)
            for line in (lines[:MAX_SHOWN] if update and old is not None else []):
                print(f"  {line}")
    if update:
        print("Review `git diff tests/golden/reproduce` and explain every changed value in the commit message.")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
