"""Import each module named on the command line first, in a process that has imported nothing of collsim.

Run as ``python fresh_imports.py MODULE...``; prints one JSON object ``{module: error or null}``.

Starting an interpreter per module costs its start-up and numpy's import again each time, about a
third of the whole check.  Here one interpreter imports numpy and the standard library's modules
once, then forks a child per module: the child starts with no collsim module loaded, so an import
that works only after another collsim module (a circle, a missing import a sibling happened to make)
fails there as it would in a fresh interpreter.  Third-party packages other than numpy are not
imported ahead, so that a module using ``scipy.sparse`` without importing it still fails.

Importing ``a.b.c`` first imports ``a`` and then ``a.b`` whole, and only then ``a.b.c``: if importing
``a.b`` alone already loaded ``a.b.c`` (its ``__init__`` imports it), the fresh import of ``a.b.c`` runs
exactly the code the fresh import of ``a.b`` ran, in the same order, and ends the same way.  Such a
module takes its package's verdict instead of a child of its own (a package is named before its
modules in sorted order); most of collsim is loaded by its packages, and this saves most children.
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def _preload() -> None:
    """numpy and the standard library modules collsim uses, loaded before any fork."""
    import numpy  # noqa: F401

    for name in ("argparse", "contextlib", "dataclasses", "datetime", "enum", "functools", "hashlib",
                 "importlib.metadata", "importlib.resources", "inspect", "io", "itertools", "json", "math",
                 "pathlib", "re", "shutil", "sqlite3", "subprocess", "tempfile", "textwrap", "tomllib",
                 "typing", "uuid", "zipfile"):
        __import__(name)


def _import_in_child(name: str) -> tuple[str | None, frozenset[str]]:
    """Fork; the child imports ``name`` and reports its traceback (None: it imported) and the modules it
    loaded, through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        status = 0
        try:
            __import__(name)
            report = {"error": None}
        except BaseException:  # noqa: BLE001 - every failure is the report
            report = {"error": traceback.format_exc()}
            status = 1
        report["loaded"] = sorted(sys.modules)
        with os.fdopen(write, "wb") as fh:
            fh.write(json.dumps(report).encode())
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        text = fh.read().decode()
    _, status = os.waitpid(pid, 0)
    if not text:  # the child died before it could report
        return f"the child importing {name} ended with status {status}", frozenset()
    report = json.loads(text)
    return report["error"], frozenset(report["loaded"])


def fresh_verdicts(names: list[str]) -> dict[str, str | None]:
    """``{module: None or its traceback}``, a child for every module its package did not load already."""
    verdicts: dict[str, str | None] = {}
    loaded_by: dict[str, frozenset[str]] = {}
    for name in sorted(names):  # a package before its modules
        parent = name.rpartition(".")[0]
        if parent in loaded_by and name in loaded_by[parent]:
            verdicts[name] = verdicts[parent]  # the same code ran, in the same order
            loaded_by[name] = loaded_by[parent]
            continue
        verdicts[name], loaded_by[name] = _import_in_child(name)
    return {name: verdicts[name] for name in names}


def main(names: list[str]) -> None:
    """Print ``{module: None or its traceback}`` for every name."""
    _preload()
    assert not any(m == "collsim" or m.startswith("collsim.") for m in sys.modules), "collsim is loaded"
    print(json.dumps(fresh_verdicts(names)))


if __name__ == "__main__":
    main(sys.argv[1:])
