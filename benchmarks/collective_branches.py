"""Count the branches on a collective's name in collsim's source.

Run:            python benchmarks/collective_branches.py [SOURCE_ROOT] [--list] [--json]
Before/after:   git worktree add /tmp/base-b 8db759e
                python benchmarks/collective_branches.py /tmp/base-b/src/collsim
                python benchmarks/collective_branches.py src/collsim

SOURCE_ROOT is the ``collsim`` package directory (default: this tree's ``src/collsim``).
A *branch* is one site of the abstract syntax tree (:mod:`ast`; docstrings and comments do
not count) where code decides by a collective's name:

- a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``) of an expression with a collective
  name literal (``kind == "allgather"``), or membership of an expression in a tuple, list, set
  or frozenset literal that holds a collective name (``kind in ("broadcast", "reduce")``), or in
  a module-level constant that is such a collection (``coll in REDUCTIONS``);
- a dict literal with two or more collective names as keys (dict dispatch,
  ``{"allgather": ..., "alltoall": ...}[kind]``): one site per dict.

The compared expression must look like a collective's name: its last identifier (a name, an
attribute, or a called function) contains ``kind``, ``coll`` or ``phase``, or is ``k``, ``c``, ``op``
or ``name``.
This leaves out the transfer field ``"reduce"`` and option keys such as ``"shift"``.  An
algorithm's ``collectives=(...)`` declaration is a keyword argument, not a comparison: data,
not a branch.

Files are grouped into three parts: ``objects`` (the collective objects themselves: the
modules listed in :data:`OBJECT_MODULES`), ``algorithms`` (``algorithms/``) and ``elsewhere``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter
from pathlib import Path

NAMES = frozenset({"allgather", "reducescatter", "allreduce", "broadcast", "reduce", "alltoall",
                   "scatter", "gather", "scan", "shift"})
"""Canonical collective names (:data:`collsim.core.collective.TYPES` at the time of writing)."""

OBJECT_MODULES = ("core/collective.py", "core/collectives.py")
"""Modules that define the collective objects (relative to the package root)."""

_SUBJECT = re.compile(r"(kind|coll|phase)", re.IGNORECASE)


def _last_identifier(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _last_identifier(node.func)
    if isinstance(node, ast.Subscript):
        return _last_identifier(node.value)
    return None


def _looks_like_collective(node: ast.AST) -> bool:
    name = _last_identifier(node)
    return name is not None and (bool(_SUBJECT.search(name)) or name in ("k", "c", "op", "name"))


def _is_name_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _name_collection(node: ast.AST) -> bool:
    """A tuple/list/set/frozenset literal of strings holding at least one collective name."""
    if isinstance(node, ast.Call) and _last_identifier(node.func) in ("frozenset", "set", "tuple") and node.args:
        node = node.args[0]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        strings = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return len(strings) == len(node.elts) and any(e.value in NAMES for e in strings)
    return False


def _module_constants(tree: ast.Module) -> set[str]:
    """Module-level names bound to a collection of collective names."""
    out = set()
    for stmt in tree.body:
        targets, value = (stmt.targets, stmt.value) if isinstance(stmt, ast.Assign) else \
            ([stmt.target], stmt.value) if isinstance(stmt, ast.AnnAssign) and stmt.value else ([], None)
        if value is not None and _name_collection(value):
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def branches(source: str) -> list[tuple[int, str]]:
    """Return ``(line, what)`` for every collective-name branch in one module's source.

    Examples
    --------
    >>> [w for _, w in branches('if kind == "allgather": pass\\nx = {"scan": 1, "shift": 2}[coll]')]
    ['compare', 'dict']
    >>> branches('if tr["reduce"]: pass\\nif key == "shift": pass')
    []
    """
    tree = ast.parse(source)
    constants = _module_constants(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, left, right in zip(node.ops, operands, operands[1:]):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    pair = (left, right) if _is_name_literal(right) else (right, left) if _is_name_literal(left) else None
                    if pair and _looks_like_collective(pair[0]):
                        out.append((node.lineno, "compare"))
                elif isinstance(op, (ast.In, ast.NotIn)) and _looks_like_collective(left):
                    if _name_collection(right) or (isinstance(right, ast.Name) and right.id in constants):
                        out.append((node.lineno, "member"))
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None and _is_name_literal(k)]
            if len(keys) >= 2:
                out.append((node.lineno, "dict"))
    return sorted(out)


def part_of(rel: str) -> str:
    """``"objects"``, ``"algorithms"`` or ``"elsewhere"`` for a path relative to the package root.

    Examples
    --------
    >>> part_of("core/collective.py"), part_of("algorithms/ring.py"), part_of("kinds/network/cuts.py")
    ('objects', 'algorithms', 'elsewhere')
    """
    if rel in OBJECT_MODULES:
        return "objects"
    return "algorithms" if rel.startswith("algorithms/") else "elsewhere"


def count(root: str | Path) -> dict[str, list[tuple[int, str]]]:
    """Map each module (path relative to ``root``) with a branch to its branches."""
    root = Path(root)
    out = {}
    for path in sorted(root.rglob("*.py")):
        found = branches(path.read_text(encoding="utf-8"))
        if found:
            out[path.relative_to(root).as_posix()] = found
    return out


def summary(per_file: dict[str, list]) -> dict[str, int]:
    """Totals: ``total``, per part, ``outside_algorithms`` and ``outside_objects``, and ``files``."""
    parts = Counter()
    for rel, found in per_file.items():
        parts[part_of(rel)] += len(found)
    total = sum(parts.values())
    return {"total": total, "objects": parts["objects"], "algorithms": parts["algorithms"],
            "elsewhere": parts["elsewhere"], "outside_algorithms": total - parts["algorithms"],
            "outside_objects": total - parts["objects"], "files": len(per_file)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1] / "src" / "collsim"))
    ap.add_argument("--list", action="store_true", help="print every branch (file:line what)")
    ap.add_argument("--json", action="store_true", help="print the summary and per-file counts as JSON")
    args = ap.parse_args(argv)
    per_file = count(args.root)
    totals = summary(per_file)
    if args.json:
        print(json.dumps({"summary": totals, "files": {k: len(v) for k, v in per_file.items()}}, indent=1))
        return 0
    for rel, found in sorted(per_file.items(), key=lambda kv: (part_of(kv[0]), kv[0])):
        print(f"{part_of(rel):10s} {len(found):4d}  {rel}")
        if args.list:
            for line, what in found:
                print(f"{'':17s}{rel}:{line} {what}")
    print(", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
