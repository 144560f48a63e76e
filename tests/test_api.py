"""Package hygiene: imports, public API, docstrings, runnable examples."""

from __future__ import annotations

import doctest
import importlib
import inspect
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import collsim

pytestmark = pytest.mark.schedule_first(65)  # about 65 s of work: handed out early (tests/conftest.py)

MODULES = sorted(m.name for m in pkgutil.walk_packages(collsim.__path__, "collsim.")
                 if not m.name.endswith("__main__"))


@pytest.fixture(scope="module")
def fresh_imports() -> dict[str, str | None]:
    """Each module imported first in a process with no collsim module loaded (tests/helpers/fresh_imports.py:
    one interpreter forks a child per module), with its traceback where it failed."""
    script = Path(__file__).parent / "helpers" / "fresh_imports.py"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # no thread pool across fork
    proc = subprocess.run([sys.executable, str(script), *MODULES], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports_in_a_fresh_interpreter(name, fresh_imports):
    assert name in fresh_imports
    assert fresh_imports[name] is None, fresh_imports[name]


def test_a_module_that_imports_only_after_another_fails_in_the_fresh_import_check(tmp_path):
    """The fork-per-module check catches what a fresh interpreter does: a module that uses a name another
    module must have loaded first, and a circle entered from its second module."""
    pkg = tmp_path / "circ"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from circ.b import B\nA = 1\n")
    (pkg / "b.py").write_text("from circ.a import A\nB = 2\n")
    (pkg / "c.py").write_text("import circ\nX = circ.a.A\n")  # works only once circ.a is loaded
    script = Path(__file__).parent / "helpers" / "fresh_imports.py"
    proc = subprocess.run([sys.executable, str(script), "circ", "circ.a", "circ.c"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["circ"] is None
    assert "ImportError" in found["circ.a"]
    assert "AttributeError" in found["circ.c"]


def test_a_module_its_package_loads_takes_the_packages_verdict(tmp_path):
    """A module the package's ``__init__`` imports gets no child of its own: its fresh import runs the same
    code, so it fails with the package's traceback, and a module the package does not load is still tried."""
    pkg = tmp_path / "pk"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pk import bad\n")
    (pkg / "bad.py").write_text("raise ValueError('pk.bad fails')\n")
    (pkg / "lazy.py").write_text("import pk.nothere\n")
    script = Path(__file__).parent / "helpers" / "fresh_imports.py"
    proc = subprocess.run([sys.executable, str(script), "pk.lazy", "pk", "pk.bad"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert list(found) == ["pk.lazy", "pk", "pk.bad"]  # in the order asked
    assert "pk.bad fails" in found["pk"]
    assert found["pk.bad"] == found["pk"]
    assert "pk.bad fails" in found["pk.lazy"]  # its package fails first


@pytest.mark.parametrize("name", MODULES)
def test_doc_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


DOCUMENTED = [name for name in MODULES if not name.startswith("collsim.cli")]  # click commands have --help
CITING = ("collsim.algorithms", "collsim.rwa", "collsim.cost", "collsim.sim")


def _has_section(doc: str, title: str) -> bool:
    """True if ``doc`` has a numpydoc section header ``title`` underlined with dashes."""
    return re.search(rf"^{title}\n-{{3,}}$", doc, re.MULTILINE) is not None


def _constructor_parameters(cls: type) -> list[str]:
    """Arguments a class's constructor takes (for an exception: beyond the message)."""
    if issubclass(cls, BaseException):
        init = cls.__init__
        return list(inspect.signature(init).parameters)[2:] if inspect.isfunction(init) else []
    if getattr(cls, "_is_protocol", False):  # typing.Protocol: never instantiated
        return []
    try:
        return list(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return []


def _missing_sections(module: str, obj: object) -> list[str]:
    """numpydoc sections a public function or class of ``module`` lacks."""
    doc = inspect.getdoc(obj) or ""
    if not doc:
        return ["docstring"]
    need = []
    if inspect.isfunction(obj):
        if inspect.signature(obj).parameters:
            need.append("Parameters")
        need.append("Yields" if inspect.isgeneratorfunction(obj) else "Returns")
    elif _constructor_parameters(obj):
        need.append("Parameters")
    need.append("Examples")
    if any(module == pkg or module.startswith(pkg + ".") for pkg in CITING):
        need.append("References")
    missing = [title for title in need if not _has_section(doc, title)]
    if "Examples" not in missing and ">>>" not in doc[doc.index("Examples\n---"):]:
        missing.append("Examples (no doctest)")
    return missing


# The public API: what ``collsim`` exports, the registered builders, the system classes, and the
# modules that define the protocols a user or a plug-in meets.  Internals carry a one-line
# docstring (plus Notes and References where they derive or cite something); their examples
# live in tests/examples/ and run below.
PROTOCOL_MODULES = ("collsim", "collsim.kinds.base", "collsim.kinds.view", "collsim.kinds.result",
                    "collsim.algorithms.registry", "collsim.core.plugins", "collsim.core.errors",
                    "collsim.core.collective", "collsim.core.collectives", "collsim.core.system",
                    "collsim.core.schedule", "collsim.core.units")


def _public_api() -> dict[str, object]:
    from collsim.algorithms.registry import REGISTRY
    from collsim.core.system import System
    found: dict[str, object] = {}

    def add(obj: object) -> None:
        found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    for name in collsim.__all__:
        add(getattr(collsim, name))
    for spec in REGISTRY.values():
        add(spec.builder)
    for name in DOCUMENTED:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue
            if inspect.isclass(obj) and issubclass(obj, System) or (
                    name in PROTOCOL_MODULES and (inspect.isfunction(obj) or inspect.isclass(obj))):
                add(obj)
    return found


def test_public_api_has_numpydoc_docstrings():
    """Every object of the public API has the numpydoc sections it needs: Parameters (if it takes
    any), Returns or Yields (functions), Examples with a doctest, and References in the modules
    that implement the literature."""
    found = _public_api()
    assert len(found) > 100 and "collsim.core.schedule.Schedule" in found
    offenders = [f"{where}: missing {', '.join(missing)}" for where, obj in sorted(found.items())
                 if (missing := _missing_sections(obj.__module__, obj))]
    assert not offenders, f"{len(offenders)} docstrings lack numpydoc sections:\n" + "\n".join(offenders)


def test_every_public_name_has_a_docstring():
    offenders = []
    for name in DOCUMENTED:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                offenders.append(f"{name}.{attr}")
    assert not offenders, offenders


EXAMPLES = sorted((Path(__file__).parent / "examples").glob("*.txt"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_internal_examples_run(path):
    module = importlib.import_module(path.stem)
    result = doctest.testfile(str(path), module_relative=False, globs=dict(vars(module)),
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def test_public_api_is_listed_once():
    for name in collsim.__all__:
        assert hasattr(collsim, name), name


def _ruff(path: Path, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           "--config", str(root / "pyproject.toml"), str(path)], capture_output=True, text=True)


def test_functions_stay_simple(tmp_path):
    # ruff's McCabe complexity (C901) and statement count (PLR0915) at pyproject.toml's limits guard
    # function size; modules have no line cap (they split where concepts divide)
    root = Path(__file__).resolve().parents[1]
    proc = _ruff(root / "src" / "collsim", root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    branchy = tmp_path / "branchy.py"   # the rules are live: 21 branches and 81 statements fail
    branchy.write_text("def f(x):\n" + "".join(f"    if x == {i}:\n        x += 1\n" for i in range(21))
                       + "".join(f"    y{i} = {i}\n" for i in range(40)) + "    return x\n")
    found = _ruff(branchy, root).stdout
    assert "C901" in found and "PLR0915" in found, found
