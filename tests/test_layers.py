"""Imports point one way, from the CLI down to the core (docs/model.md, "Layers"), and form no circle.

The import graph is read from every import form: ``import`` and ``from`` statements at module level
or inside functions, ``importlib.import_module`` of a constant (absolute, or relative to the
module's package), a package importing its own modules through ``pkgutil.iter_modules``, and
string constants that name a collsim module (``"collsim.experiments.papers.tables:optree_table1"``, or
``".executor"`` in a module that imports relative to its own name), which tables of plug-ins and
lazy facades import by name.  Kinds of system are loaded by the entry-point group
``collsim.system_kinds`` (package metadata, not an import), which the last test pins down.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "collsim"
LAYERS = ["core", "verify", "cost", "sim", "kinds", "systems", "algorithms", "pipeline", "synthesis", "interop",
          "experiments", "mpi", "cli"]
TOP = {"__init__", "__main__"}  # the lazy facade and entry points sit above everything
BOTTOM = {"_malloc", "_version"}  # leaf modules (ctypes only; a literal) that any layer may import
NAMED = re.compile(r"^collsim((?:\.[A-Za-z_]\w*)+)(?::\w*)?$")


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if "tests" in parts:  # a subpackage's tests beside it (algorithms/optree/tests) use everything
            continue
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _resolve(target: str) -> str | None:
    """The module ``target`` names, or the module defining it (``pkg.mod.name`` -> ``pkg.mod``)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None       # "" (the facade) only when named as such: ``from collsim import x``


def _relative(package: list[str], level: int, module: str | None) -> str:
    base = package[:len(package) - (level - 1)] if level > 1 else package
    return ".".join(base + ([module] if module else []))


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _edges(name: str, path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every module of collsim that ``name`` imports, in any form."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    tree = ast.parse(path.read_text())
    source = path.read_text()
    relative_names = "import_module(" in source and ("__name__)" in source or "__package__)" in source)
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _relative(package, node.level, node.module)
            elif (node.module or "").split(".")[0] == "collsim":
                base = node.module[len("collsim"):].lstrip(".")
            else:
                continue
            targets = [f"{base}.{a.name}".lstrip(".") for a in node.names]
            targets = [t if _resolve(t) == t else base for t in targets]  # a module, or a name in ``base``
        elif isinstance(node, ast.Import):
            targets = [a.name[len("collsim"):].lstrip(".") for a in node.names if a.name.split(".")[0] == "collsim"]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "iter_modules":
            targets = [m for m in MODULES if m.rpartition(".")[0] == ".".join(package) and m != ".".join(package)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found = NAMED.match(node.value)
            if found:
                targets = [found.group(1).lstrip(".")]
            elif relative_names and re.fullmatch(r"\.[A-Za-z_]\w*(\.\w+)*", node.value):
                targets = [".".join(package + [node.value.lstrip(".")])]
        for target in targets:
            module = _resolve(target) if target else ""
            if module is not None and module != name:
                out.append((getattr(node, "lineno", 0), module))
    return out


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        for line, target in _edges(name, path):
            graph.add_edge(name, target, line=line)
    return graph


GRAPH = _graph()


def _layer(module: str) -> int | None:
    head = module.split(".")[0]
    if module == "" or head in TOP or module.endswith(".__main__"):  # ``python -m collsim.X`` entry points
        return len(LAYERS)
    if head in BOTTOM:
        return -1
    return LAYERS.index(head) if head in LAYERS else None


def test_no_import_runs_upward():
    bad = []
    for src, dst, data in GRAPH.edges(data=True):
        mine, theirs = _layer(src), _layer(dst)
        if mine is not None and theirs is not None and theirs > mine:
            bad.append(f"{src.replace('.', '/') or '__init__'}:{data['line']} imports {dst or 'collsim'}")
    assert not bad, "imports that run upward:\n" + "\n".join(sorted(bad))


def test_the_import_graph_has_no_circle():
    circles = [sorted(c) for c in nx.strongly_connected_components(GRAPH) if len(c) > 1]
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_graph_reads_every_import_form():
    # a function-level import, a lazy facade's relative names, a table of targets named by string,
    # and a package importing its own modules by iteration: each is an edge
    assert GRAPH.has_edge("cli.options", "systems")
    assert GRAPH.has_edge("mpi", "mpi.executor")
    assert GRAPH.has_edge("experiments.papers.registry", "experiments.papers.tables")
    assert GRAPH.has_edge("kinds", "kinds.ocs")
    assert GRAPH.has_edge("kinds.ocs", "kinds.ocs.model")
    assert GRAPH.number_of_edges() > 1000


def test_the_layer_list_covers_every_package():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in SRC.glob("*.py")}
    assert packages | modules <= set(LAYERS) | TOP | BOTTOM


def test_kinds_are_loaded_by_entry_point_not_by_import():
    with (ROOT / "pyproject.toml").open("rb") as fh:
        group = tomllib.load(fh)["project"]["entry-points"]["collsim.system_kinds"]
    assert set(group.values()) == {"collsim.kinds"}
    below = [m for m in GRAPH.predecessors("kinds") if _layer(m) < LAYERS.index("kinds")]
    assert not below, below
    plugins = (SRC / "core" / "plugins.py").read_text()
    assert "entry_points(group=ENTRY_POINTS)" in plugins and 'ENTRY_POINTS = "collsim.system_kinds"' in plugins


GENERIC = ("pipeline", "synthesis", "systems", "cli", "algorithms.registry", "algorithms.common", "experiments.compare",
           "experiments.sweep.", "experiments.tune.", "interop.trace.events", "interop.trace.lanes",
           "interop.msccl.")
"""Modules (or prefixes) above the kinds that serve every kind alike."""


def _is_generic(module: str) -> bool:
    return any(module == g.rstrip(".") or module.startswith(g if g.endswith(".") else g + ".")
               or (g.count(".") == 1 and not g.endswith(".") and module.startswith(g)) for g in GENERIC)


def test_generic_code_imports_no_kind():
    # below the kinds the layers forbid it; above them, generic modules import only kinds.base and
    # kinds.result and kinds.view (a kind is found through the registries: model_for, view_for)
    bad = [f"{src}:{data['line']} imports {dst}" for src, dst, data in GRAPH.edges(data=True)
           if _is_generic(src) and dst.startswith("kinds.") and dst.split(".")[1] not in ("base", "result", "view")
           and not (src == "systems" and dst == "kinds")]
    assert not bad, "generic modules that name a kind:\n" + "\n".join(sorted(bad))


def test_each_kind_is_one_subpackage():
    kinds = SRC / "kinds"
    packages = sorted(p.name for p in kinds.iterdir() if (p / "__init__.py").is_file())
    assert packages == ["hierarchical", "network", "ocs", "optical_ring", "optical_torus"]
    for name in packages:   # a kind's package registers its model when any of its modules is imported
        assert GRAPH.has_edge(f"kinds.{name}", f"kinds.{name}.model"), name
    # kind code lives nowhere else: no package of the old layout is left
    assert not [p for p in ("rwa", "physical") if (SRC / p).exists()]
    assert sorted(p.name for p in (SRC / "systems").glob("*.py")) == ["__init__.py", "options.py"]

