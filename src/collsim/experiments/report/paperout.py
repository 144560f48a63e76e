"""What a paper's reproduction writes: data CSV, figures (PNG + SVG), comparison tables.

Every ``collsim reproduce PAPER --out DIR`` goes through these helpers so that the
files look alike and are byte-identical from run to run (no timestamps in CSV,
Markdown, PNG or SVG metadata).  A reproduction returns a :class:`PaperResult`:
the files it wrote, its comparison rows (one per number the paper prints: the
paper's value, collsim's, the difference and, where they differ, the
explanation) and its provenance (assumptions, parameters), which the HTML
report (``reproduce all``) assembles.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ...core.files import atomic_write
from .figures import cached_figure, figure_digest, pyplot, save_figure, stored  # noqa: F401  (re-exported)

COMPARISON_COLUMNS = ("item", "quantity", "unit", "paper", "collsim", "difference", "model", "agrees",
                      "explanation", "source", "claim")
"""Columns of every comparison table (CSV and Markdown)."""

SOURCES = {"printed": "the paper prints this number",
           "formula": "collsim evaluates a formula the paper prints (the paper prints no number here)"}
"""What the ``paper`` column of a :class:`Comparison` is: ``source`` -> meaning."""


@dataclass(frozen=True)
class Comparison:
    """One number the paper prints, beside collsim's."""

    item: str
    quantity: str
    unit: str
    paper: float | None
    collsim: float | None
    model: str
    explanation: str = ""
    rtol: float = 0.005
    source: str = "printed"
    claim: str = ""

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {self.source!r}")

    @property
    def key(self) -> str:
        """The printed number this row compares: ``claim``, or ``item: quantity``."""
        return self.claim or f"{self.item}: {self.quantity}"

    @property
    def difference(self) -> float | None:
        """``collsim - paper`` (None if either is missing)."""
        if self.paper is None or self.collsim is None:
            return None
        return float(self.collsim) - float(self.paper)

    @property
    def agrees(self) -> bool | None:
        """Whether the values agree within ``rtol`` (None if either is missing)."""
        if self.paper is None or self.collsim is None:
            return None
        scale = max(abs(float(self.paper)), abs(float(self.collsim)), 1e-300)
        return abs(float(self.collsim) - float(self.paper)) <= self.rtol * scale

    def row(self) -> dict[str, Any]:
        """The comparison as a flat record in :data:`COMPARISON_COLUMNS` order."""
        d = asdict(self)
        d.update(difference=self.difference, agrees=self.agrees, claim=self.key)
        return {k: d[k] for k in COMPARISON_COLUMNS}


@dataclass(frozen=True)
class TableTarget:
    """One table target of ``collsim reproduce NAME`` (``optree-table1`` …) as run inside a paper's reproduction."""

    name: str
    what: str
    verdict: str
    table: str

    @classmethod
    def of(cls, name: str, verdict: str, table: str) -> "TableTarget":
        """The target of the registered table ``name``, its description left to the registry.

        :func:`collsim.experiments.papers.reproduce.reproduce_paper` fills :attr:`what` in from
        :data:`collsim.experiments.papers.registry.REPRODUCTIONS`, which names the modules that
        call this (so they do not read it back).
        """
        return cls(name, "", verdict, table)


@dataclass(frozen=True)
class ClaimVerdict:
    """One printed number (all rows with the same :attr:`Comparison.key`) under one model."""

    key: str
    model: str
    source: str
    agrees: bool | None


def claim_verdicts(comparisons: Iterable[Comparison]) -> list[ClaimVerdict]:
    """Fold comparison rows into printed numbers: one verdict per (printed number, model).

    A number compared at several sizes agrees under a model only if every size agrees;
    rows the model cannot compute (None) do not vote.
    """
    votes: dict[tuple[str, str], list] = {}
    source: dict[str, str] = {}
    for c in comparisons:
        votes.setdefault((c.key, c.model), []).append(c.agrees)
        source.setdefault(c.key, c.source)
    out = []
    for (key, model), v in votes.items():
        known = [x for x in v if x is not None]
        out.append(ClaimVerdict(key, model, source[key], None if not known else all(known)))
    return out


def claim_counts(comparisons: Iterable[Comparison]) -> dict[str, Any]:
    """How many distinct printed numbers a paper's rows compare, and how many agree under each model."""
    comparisons = list(comparisons)
    verdicts = claim_verdicts(comparisons)
    out: dict[str, Any] = {"rows": len(comparisons)}
    for src, name in (("printed", "models"), ("formula", "formula_models")):
        mine = [v for v in verdicts if v.source == src]
        keys = list(dict.fromkeys(v.key for v in mine))
        out["printed" if src == "printed" else "formula"] = len(keys)
        models: dict[str, dict[str, int]] = {}
        for v in mine:
            m = models.setdefault(v.model, {"agree": 0, "differ": 0, "not_compared": 0})
            m["agree" if v.agrees else "not_compared" if v.agrees is None else "differ"] += 1
        out[name] = models
        ok = {v.key for v in mine if v.agrees}
        if src == "printed":
            out["any_model"] = len(ok)
            out["none"] = len({v.key for v in mine if v.agrees is False} - ok)
        else:
            out["formula_any_model"] = len(ok)
    return out


@dataclass(frozen=True)
class PaperResult:
    """What one paper's reproduction produced."""

    paper: str
    title: str
    out_dir: Path
    figures: tuple = ()
    tables: tuple = ()
    comparisons: tuple = ()
    notes: tuple = ()
    captions: dict = field(default_factory=dict)
    targets: tuple = ()

    def disagreements(self) -> list[Comparison]:
        """The comparisons whose values differ."""
        return [c for c in self.comparisons if c.agrees is False]


def write_csv(path: str | Path, rows: Iterable[dict[str, Any]], columns: Iterable[str] | None = None) -> Path:
    """Write records as CSV (header from ``columns`` or the first record), atomically."""
    rows = list(rows)
    cols = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(c) is None else (json.dumps(r[c]) if isinstance(r.get(c), (list, dict, tuple))
                                                  else r[c]) for c in cols])
    path = Path(path)
    atomic_write(path, lambda fh: fh.write(buf.getvalue().encode()))
    return path


def _cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: Iterable[dict[str, Any]], columns: Iterable[str]) -> str:
    """A GitHub-flavoured Markdown table."""
    cols = list(columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def write_comparisons(out_dir: str | Path, paper: str, comparisons: Iterable[Comparison]) -> tuple[Path, Path]:
    """Write ``{paper}-comparison.csv`` and ``{paper}-comparison.md``."""
    rows = [c.row() for c in comparisons]
    out = Path(out_dir)
    csv_path = write_csv(out / f"{paper}-comparison.csv", rows, COMPARISON_COLUMNS)
    md = markdown_table(rows, COMPARISON_COLUMNS) + "\n"
    md_path = out / f"{paper}-comparison.md"
    atomic_write(md_path, lambda fh: fh.write(md.encode()))
    return csv_path, md_path


Reproducer = Callable[..., PaperResult]
"""``reproduce(out_dir: Path, *, store=None, jobs: int = 1, progress=None) -> PaperResult``."""

