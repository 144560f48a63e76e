"""Count the places outside ``kinds/`` that know which kinds of system exist (issue 23).

Run:            python benchmarks/arch_counts.py [SOURCE_ROOT] [--list] [--json]
Before/after:   git worktree add /tmp/base-a 8db759e
                python benchmarks/arch_counts.py /tmp/base-a/src/collsim
                python benchmarks/arch_counts.py src/collsim

SOURCE_ROOT is a ``collsim`` package directory (default: this tree's ``src/collsim``); it is read
as text (:mod:`ast`), never imported, so an old tree can be counted.  The vocabulary (which kinds,
classes and attributes exist) comes from the installed collsim: the registered models
(:func:`collsim.kinds.base.models`), the system classes (:data:`collsim.core.system.SYSTEM_KINDS`)
and their route classes.

A *kind dispatch site* is one node of a module's syntax tree (docstrings and comments do not
count) that decides by, or depends on, which kind a system is:

``compare``
    A comparison (``==``, ``!=``, ``in``, ``not in``) of a kind's name with a literal that names a
    kind: the compared expression's last identifier is ``kind`` or ``family`` and the literal (or a
    literal tuple, list or set) holds a system kind (``"torus"``, ``"custom"``) or a model name
    (``"optical-ring"``); or the identifier is ``name`` and the literal holds a model name.  A dict
    literal with two or more kind names as keys (dispatch by kind) is one site too.
``class``
    ``isinstance``/``issubclass`` against a concrete system, route, part or model class, or an
    identity test (``is``, ``is not``, ``==``) with such a class (``system.Routes is RingRoutes``).
``import``
    Importing a kind's model, part or route class, or anything from a concrete kind's module in
    ``kinds/`` (everything but ``kinds.base`` and ``kinds.result``).
``probe``
    ``getattr``/``hasattr`` of an attribute that some kinds have and others lack: a field of a
    kind's part or route class, or an attribute of some system classes that not every system class
    has (``getattr(system, "wavelengths", 0)``), on an object named like a system, a schedule, its
    routes or a result row (:data:`SUBJECTS`).  Such a probe stands in for a kind test.

Modules a kind owns (:attr:`collsim.kinds.base.KindModel.modules`: its implementation outside
``kinds/``, such as ``cost/optical.py`` or ``rwa/ring.py``) may name their kind; every other
module is *generic* and should name none.  The report gives the sites in generic modules (the
target is 0) and those in owned ones.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "src" / "collsim"
SKIP = ("kinds/",)
"""Where the kinds live: not counted."""
KIND_IDS = frozenset({"kind", "family"})
NAME_IDS = frozenset({"name"})
SUBJECTS = re.compile(r"^(system|sysm|sys|net|network|topology|topo|routes|part|row|r|s|schedule|sched)$")
"""What a probe's object must be called: a system, a schedule, its routes, a result row or its part."""


@dataclass(frozen=True)
class Vocabulary:
    """What names a kind: kind names, model names, class names and probed attributes.

    Examples
    --------
    >>> v = vocabulary()
    >>> "optical-ring" in v.model_names and "torus" in v.kind_names and "RingRoutes" in v.classes
    True
    >>> "wavelengths" in v.probes and "nodes" not in v.probes
    True
    """

    kind_names: frozenset[str]
    model_names: frozenset[str]
    classes: frozenset[str]
    imported: frozenset[str]
    probes: frozenset[str]
    owner: dict[str, tuple[str, ...]]
    """module path relative to the package root -> names of the kinds that own it (in the installed
    collsim's tree: :meth:`collsim.kinds.base.KindModel.owns`)."""
    kind_of: dict[str, frozenset[str]]
    """a literal, class or attribute -> the model names it stands for."""


def _attrs(cls: type) -> set[str]:
    names = {a for a in dir(cls) if not a.startswith("_")}
    if is_dataclass(cls):
        names |= {f.name for f in fields(cls)}
    return names


def vocabulary() -> Vocabulary:
    """The vocabulary of the installed collsim (its registered kinds and system classes).

    Returns
    -------
    Vocabulary
        See the class.
    """
    from collsim.core.system import SYSTEM_KINDS, System
    from collsim.kinds.base import model_for, models

    mods = models()
    kind_of: dict[str, set[str]] = {}

    def mark(key: str, model_name: str) -> None:
        kind_of.setdefault(key, set()).add(model_name)

    systems = {c for c in SYSTEM_KINDS.values() if c is not System}
    for cls in list(systems):
        systems |= {b for b in cls.__mro__ if isinstance(b, type) and issubclass(b, System) and b is not System}
    kinds, classes, imported = set(), set(), set()
    sys_attrs: dict[type, set[str]] = {}
    for cls in systems:
        try:
            owner = model_for(cls.__new__(cls)).name
        except Exception:  # an abstract intermediate class without a model
            owner = None
        for literal in (cls.kind, getattr(cls, "family", None)):
            if literal and literal != "abstract":
                kinds.add(literal)
                if owner:
                    mark(literal, owner)
        classes.add(cls.__name__)
        if owner:
            mark(cls.__name__, owner)
        sys_attrs[cls] = _attrs(cls) - _attrs(System)
        route = getattr(cls, "Routes", None)
        if route is not None:
            classes.add(route.__name__)
            imported.add(route.__name__)
            if owner:
                mark(route.__name__, owner)
    probes: set[str] = set()
    everywhere = set.intersection(*sys_attrs.values()) if sys_attrs else set()
    for cls, attrs in sys_attrs.items():
        try:
            owner = model_for(cls.__new__(cls)).name
        except Exception:
            owner = None
        for a in attrs - everywhere:
            probes.add(a)
            if owner:
                mark(a, owner)
    for m in mods:
        kinds.add(m.name)
        mark(m.name, m.name)
        for cls in (m.part_class, type(m)):
            if cls is not None:
                classes.add(cls.__name__)
                imported.add(cls.__name__)
                mark(cls.__name__, m.name)
        if m.part_class is not None:
            for f in fields(m.part_class):
                probes.add(f.name)
                mark(f.name, m.name)
    for route in {getattr(c, "Routes", None) for c in systems} - {None}:
        for col in getattr(route, "COLUMNS", ()):
            probes.add(col)
    owner_of: dict[str, list[str]] = {}
    root = Path(importlib.import_module("collsim").__file__).parent
    for path in sorted(root.rglob("*.py")):
        mod = path.relative_to(root).as_posix()
        for m in mods:
            if hasattr(m, "owns") and m.owns(mod):
                owner_of.setdefault(mod, []).append(m.name)
    return Vocabulary(frozenset(kinds), frozenset(m.name for m in mods), frozenset(classes), frozenset(imported),
                      frozenset(probes), {k: tuple(v) for k, v in owner_of.items()},
                      {k: frozenset(v) for k, v in kind_of.items()})


@dataclass(frozen=True)
class Site:
    """One kind dispatch site: module (relative to the package root), line, category, what it names."""

    module: str
    line: int
    category: str
    names: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.category}: {self.names}"


def _last(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            return node.args[1].value  # getattr(system, "kind", None) reads the attribute "kind"
        return _last(node.func)
    return None


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _import_target(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split("/")[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(["collsim", *base] + ([node.module] if node.module else []))


def module_sites(module: str, source: str, vocab: Vocabulary) -> list[Site]:
    """The dispatch sites of one module's source.

    Parameters
    ----------
    module : str
        Its path relative to the package root (``"sim/flow.py"``).
    source : str
        Its text.
    vocab : Vocabulary
        What names a kind.

    Returns
    -------
    list of Site
        In line order.

    Examples
    --------
    >>> v = vocabulary()
    >>> [s.category for s in module_sites("x.py", 'if system.kind == "torus": pass', v)]
    ['compare']
    >>> [s.category for s in module_sites("x.py", 'isinstance(s.routes, LinkRoutes)', v)]
    ['class']
    >>> module_sites("x.py", 'if coll.kind == "allgather": pass', v)
    []
    """
    tree = ast.parse(source)
    out: list[Site] = []

    def add(node: ast.AST, category: str, names) -> None:
        out.append(Site(module, node.lineno, category, ", ".join(sorted(set(names)))))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            ids = {_last(s) for s in sides}
            lits = [x for s in sides for x in _literals(s)]
            if not isinstance(node.ops[0], (ast.Is, ast.IsNot)):
                hit = [x for x in lits if x in vocab.kind_names] if ids & KIND_IDS else []
                hit += [x for x in lits if x in vocab.model_names] if ids & NAME_IDS else []
                if hit:
                    add(node, "compare", hit)
                    continue
            if isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
                cls = [i for i in ids if i in vocab.classes]
                if cls and all(isinstance(s, (ast.Name, ast.Attribute, ast.Call)) for s in sides):
                    add(node, "class", cls)
        elif isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            hit = [k for k in keys if k in vocab.kind_names]
            if len(hit) >= 2:
                add(node, "compare", hit)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn = node.func.id
            if fn in ("isinstance", "issubclass") and len(node.args) == 2:
                arg = node.args[1]
                parts = arg.elts if isinstance(arg, ast.Tuple) else [arg]
                cls = [_last(p) for p in parts if _last(p) in vocab.classes]
                if cls:
                    add(node, "class", cls)
            elif fn in ("getattr", "hasattr") and len(node.args) >= 2:
                lit = _literals(node.args[1])
                if lit and lit[0] in vocab.probes and SUBJECTS.match(_last(node.args[0]) or ""):
                    add(node, "probe", lit)
        elif isinstance(node, ast.ImportFrom):
            target = _import_target(module, node)
            names = [a.name for a in node.names]
            concrete = target.startswith("collsim.kinds.") and target.split(".")[2] not in ("base", "result")
            if concrete:
                add(node, "import", [f"{target}.{n}" for n in names])
            elif target.startswith("collsim") and any(n in vocab.imported for n in names):
                add(node, "import", [n for n in names if n in vocab.imported])
    out.sort(key=lambda s: s.line)
    return out


def sites(root: Path, vocab: Vocabulary | None = None) -> list[Site]:
    """Every dispatch site outside ``kinds/`` under a package root.

    Parameters
    ----------
    root : Path
        A ``collsim`` package directory.
    vocab : Vocabulary, optional
        Default: :func:`vocabulary`.

    Returns
    -------
    list of Site
        By module, then line.
    """
    vocab = vocab or vocabulary()
    found: list[Site] = []
    for path in sorted(Path(root).rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(SKIP) or "/tests/" in f"/{module}":
            continue
        found += module_sites(module, path.read_text(), vocab)
    return found


def split(found: list[Site], vocab: Vocabulary) -> tuple[list[Site], list[Site]]:
    """``(generic, owned)``: sites in modules no kind owns, and in modules some kind owns."""
    generic = [s for s in found if s.module not in vocab.owner]
    return generic, [s for s in found if s.module in vocab.owner]


def main(argv: list[str] | None = None) -> int:
    """Print the counts (``--list``: every site; ``--json``: machine-readable)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=str(HERE))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    vocab = vocabulary()
    found = sites(Path(args.root), vocab)
    generic, owned = split(found, vocab)
    if args.json:
        print(json.dumps({"root": args.root, "sites": len(found), "generic": len(generic), "owned": len(owned),
                          "modules": len({s.module for s in found}),
                          "by_category": dict(Counter(s.category for s in found)),
                          "generic_sites": [str(s) for s in generic]}, indent=1))
        return 0
    print(f"{args.root}: {len(found)} kind dispatch sites outside kinds/ in {len({s.module for s in found})} "
          f"modules: {len(generic)} in generic modules, {len(owned)} in modules a kind owns")
    print("  by category: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(s.category for s in found).items())))
    if args.list:
        for s in found:
            print(("  generic " if s.module not in vocab.owner else f"  {'/'.join(vocab.owner[s.module])}: ") + str(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
