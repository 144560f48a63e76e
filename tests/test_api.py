"""Package hygiene: imports, public API, docstrings, runnable examples."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import collsim

MODULES = sorted(m.name for m in pkgutil.walk_packages(collsim.__path__, "collsim.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_every_module_imports_in_a_fresh_interpreter(name):
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", MODULES)
def test_doc_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_public_functions_have_numpydoc_docstrings(name):
    module = importlib.import_module(name)
    for attr, obj in vars(module).items():
        if attr.startswith("_") or getattr(obj, "__module__", None) != name:
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            doc = inspect.getdoc(obj) or ""
            assert doc, f"{name}.{attr} has no docstring"
            if inspect.isfunction(obj) and inspect.signature(obj).parameters:
                assert "Parameters" in doc or "Returns" in doc or name.startswith("collsim.cli"), \
                    f"{name}.{attr} docstring lacks numpydoc sections"


def test_public_api_is_listed_once():
    for name in collsim.__all__:
        assert hasattr(collsim, name), name


def test_modules_stay_small():
    for name in MODULES:
        path = importlib.import_module(name).__file__
        with open(path) as fh:
            assert sum(1 for _ in fh) <= 450, f"{name} is too long"
