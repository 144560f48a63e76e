"""The bibliography: one list in code and in docs/references.md, cited by key, printed in full.

``collsim algorithms`` and ``collsim reproduce`` cite authors, title, venue and year, and
never a source file's internal number ("seed 004").
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collsim.algorithms import REGISTRY
from collsim.algorithms.bibliography import BIBLIOGRAPHY, cited_keys, citations
from collsim.core.errors import UnknownNameError
from collsim.experiments.papers.reproduce import EXPERIMENTS, SIZE_NOTES
from conftest import raises_naming

DOC = Path(__file__).resolve().parents[1] / "docs" / "references.md"
INTERNAL = re.compile(r"seed\s*0\d\d", re.IGNORECASE)


def _doc_rows() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\| ([A-Za-z][\w.-]*) \| (.+)", line)
        if m and m.group(1) not in ("key", "file"):
            rows[m.group(1)] = m.group(2)
    return rows


def test_docs_and_code_list_the_same_keys():
    assert set(_doc_rows()) == set(BIBLIOGRAPHY)


@pytest.mark.parametrize("key", sorted(BIBLIOGRAPHY))
def test_each_doc_entry_agrees_with_the_code(key):
    entry, row = BIBLIOGRAPHY[key], _doc_rows()[key]
    assert entry.authors.split(",")[0] in row
    assert entry.title.split(":")[0] in row
    if entry.year is not None:
        assert str(entry.year) in row
    assert entry.text().startswith(entry.authors) and entry.title in entry.text()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registry_reference_cites_known_keys_and_no_file_number(name):
    ref = REGISTRY[name].reference
    assert not INTERNAL.search(ref), ref
    keys = cited_keys(ref)
    assert keys and set(keys) <= set(BIBLIOGRAPHY), (name, keys)
    assert [c.key for c in REGISTRY[name].citations] == keys


def test_unknown_keys_are_refused():
    with raises_naming(UnknownNameError, "[Thakr05]", "Thakur05"):   # the key, and the one it may mean
        citations("[Thakr05] §2")


def test_reproduce_descriptions_cite_keys():
    for name, (_, what) in EXPERIMENTS.items():
        assert not INTERNAL.search(what) and citations(what), name
    for note in SIZE_NOTES.values():
        assert not INTERNAL.search(note)
        citations(note)


def test_algorithms_prints_full_citations(run_cli):
    out = run_cli("algorithms", check=True).stdout
    assert not INTERNAL.search(out)
    for key in {k for spec in REGISTRY.values() for k in cited_keys(spec.reference)}:
        assert f"[{key}] {BIBLIOGRAPHY[key].text()}" in " ".join(out.split()).replace("[ ", "[") or \
            BIBLIOGRAPHY[key].title.split(":")[0] in out, key
    assert "IEEE Open Journal of the Communications Society" in out and "Bruck" in out
    rows = json.loads(run_cli("algorithms", "--json", check=True).stdout)
    assert {r["name"]: r["citations"] for r in rows}["bruck"] == ["Bruck97", "Thakur05"]


@pytest.mark.parametrize("args", [(), ("optree-table1",), ("mlfm-congestion", "--json"), ("wrht-allreduce",)])
def test_reproduce_never_prints_a_file_number(run_cli, args):
    out = run_cli("reproduce", *args, check=True).stdout
    assert not INTERNAL.search(out)
    if "--json" not in args:
        flat = " ".join(out.split())
        assert any(c.authors.split(",")[0] in flat and str(c.year) in flat
                   for c in (BIBLIOGRAPHY["OpTree24"], BIBLIOGRAPHY["WRHT23"], BIBLIOGRAPHY["MLFM16"]))


def test_reproduce_listing_carries_the_references(run_cli):
    rows = json.loads(run_cli("reproduce", "--json", check=True).stdout)
    assert rows[0]["references"] == [BIBLIOGRAPHY["OpTree24"].text()]
