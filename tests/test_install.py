"""Issue 21: ``pip install .`` brings what the README's tour runs (``reproduce``'s figures, ``tune --figure``)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_main_install_brings_matplotlib():
    """The README's set-up was ``pip install .``, but ``reproduce PAPER`` and ``--figure`` needed the plot extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dep.split(">")[0].split("=")[0].split("<")[0].strip().lower() for dep in project["dependencies"]}
    assert {"numpy", "click", "rich", "matplotlib"} <= names
    readme = (ROOT / "README.md").read_text()
    assert "    pip install . && collsim compare\n" in readme
    tour = readme[readme.index("## A short tour"):readme.index("Documentation lives in")]
    assert "--figure" in tour and "collsim reproduce" in tour
    for line in tour.splitlines():  # what the main install does not bring, the README names
        if line.strip().startswith("mpiexec"):
            assert "pip install '.[mpi]'" in readme
