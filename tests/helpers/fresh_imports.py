"""Import each module named on the command line first, in a process that has imported nothing of collsim.

Run as ``python fresh_imports.py MODULE...``; prints one JSON object ``{module: error or null}``.

Starting an interpreter per module costs its start-up and numpy's import again each time, about a
third of the whole check.  Here one interpreter imports numpy and the standard library's modules
once, then forks a child per module: the child starts with no collsim module loaded, so an import
that works only after another collsim module (a circle, a missing import a sibling happened to make)
fails there as it would in a fresh interpreter.  Third-party packages other than numpy are not
imported ahead, so that a module using ``scipy.sparse`` without importing it still fails.
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


def _import_in_child(name: str) -> str | None:
    """Fork; the child imports ``name`` and reports the traceback through a pipe (None: it imported)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        status = 0
        try:
            __import__(name)
        except BaseException:  # noqa: BLE001 - every failure is the report
            os.write(write, traceback.format_exc().encode())
            status = 1
        os.close(write)
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        message = fh.read().decode()
    _, status = os.waitpid(pid, 0)
    if status == 0:
        return None
    return message or f"the child importing {name} ended with status {status}"


def main(names: list[str]) -> None:
    """Print ``{module: None or its traceback}`` for every name."""
    _preload()
    assert not any(m == "collsim" or m.startswith("collsim.") for m in sys.modules), "collsim is loaded"
    print(json.dumps({name: _import_in_child(name) for name in names}))


if __name__ == "__main__":
    main(sys.argv[1:])
