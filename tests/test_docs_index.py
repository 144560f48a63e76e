"""docs/README.md indexes every page of docs/ (issue 31: ``synthesis.md`` was missing from the index)."""

from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_docs_page_is_in_the_index():
    index = (DOCS / "README.md").read_text()
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
    assert len(pages) > 10  # the folder was found
    missing = [p for p in pages if f"`{p}`" not in index]
    assert not missing, f"docs/README.md does not list {missing}"
