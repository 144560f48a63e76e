"""Issue 23: no mutation of frozen objects.

A frozen dataclass is changed only while it is being made: ``object.__setattr__`` in its own
``__post_init__`` (normalising a field: a plain int, a parsed time, a checked tuple).  After that
nothing writes to one, except memos of values derived from its fields (``functools.cached_property``,
and the schedule's ``_cache`` of its per-transfer sizes, step bounds, link load and the
well-formedness check), which no field, comparison or output ever reads back as data.
"""

from __future__ import annotations

import ast
from pathlib import Path

import collsim

SRC = Path(collsim.__file__).parent
MEMO_WRITERS = {"core/schedule.py", "core/wellformed.py"}  # Schedule._cache: memos of derived values


def _calls():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            for node in ast.walk(fn):
                yield path.relative_to(SRC).as_posix(), fn.name, node


def test_object_setattr_only_in_post_init():
    bad = [f"{where}:{node.lineno} in {fn}" for where, fn, node in _calls()
           if isinstance(node, ast.Call) and ast.unparse(node.func) == "object.__setattr__" and fn != "__post_init__"]
    assert not bad, bad


def test_no_writes_into_an_instance_dict_or_cache_from_outside():
    bad = []
    for where, fn, node in _calls():
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("__dict__.setdefault"):
            bad.append(f"{where}:{node.lineno}")
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                text = ast.unparse(target)
                if "__dict__[" in text or ("._cache[" in text and where not in MEMO_WRITERS):
                    bad.append(f"{where}:{node.lineno} {text}")
    assert not bad, bad
