"""Imports point one way, from the CLI down to the core (docs/model.md, "Layers"): no module imports
a package above its own layer, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "collsim"
LAYERS = ["core", "physical", "systems", "rwa", "algorithms", "verify", "cost", "sim", "kinds", "pipeline",
          "synthesis", "interop", "experiments", "mpi", "cli"]
TOP = {"__init__", "__main__"}  # the lazy facade and entry points sit above everything
BOTTOM = {"_malloc"}  # a leaf utility (ctypes only) that any layer may call


def _layer(module: str) -> int | None:
    head = module.split(".")[0]
    if head in TOP or module.endswith(".__main__"):  # ``python -m collsim.X`` entry points sit on top too
        return len(LAYERS)
    if "tests" in module.split("."):  # a subpackage's tests beside it (algorithms/optree/tests) use everything
        return len(LAYERS)
    if head in BOTTOM:
        return -1
    return LAYERS.index(head) if head in LAYERS else None


def _imports(path: Path) -> list[tuple[int, str]]:
    rel = path.relative_to(SRC).with_suffix("")
    package = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
            target = ".".join(base + ([node.module] if node.module else []))
            names = [target] if node.module else [f"{target}.{a.name}" if target else a.name for a in node.names]
            out += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("collsim."):
            out.append((node.lineno, node.module[len("collsim."):]))
    return out


def test_no_import_runs_upward():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        mine = _layer(".".join(rel.parts))
        if mine is None:
            continue
        for line, target in _imports(path):
            theirs = _layer(target) if target else None
            if theirs is not None and theirs > mine:
                bad.append(f"{rel}:{line} imports {target}")
    assert not bad, "imports that run upward:\n" + "\n".join(bad)


def test_the_layer_list_covers_every_package():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py")}
    assert packages | modules <= set(LAYERS) | TOP | BOTTOM
