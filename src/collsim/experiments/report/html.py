"""One self-contained HTML page for all the papers' reproductions (``reproduce all``).

:func:`write_report` assembles the :class:`~collsim.experiments.report.paperout.PaperResult`
of every reproduced paper into a single HTML file that needs nothing else: every
figure is embedded (its PNG as a base64 ``data:`` URI; the SVG when there is no PNG),
every comparison table and every data table (read from the CSV files) is an HTML
table, the complete list of discrepancies (the comparisons that do not agree) is
given with their explanations, each paper's notes (assumptions) are listed, and a
provenance section names collsim's version, the git commit, the Python, numpy and
matplotlib versions and every parameter passed in.

The page loads nothing from anywhere: no scripts, no web fonts, no external images
or style sheets; the CSS is inline, and a Content-Security-Policy (``default-src
'none'``, images from ``data:`` only) makes the browser refuse any request that
might slip in.  URLs that appear in the text (a citation's DOI, say) stay plain
text and are never turned into links.  The bytes depend only on the inputs: no
timestamps, no random identifiers.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import os
from pathlib import Path
from typing import Any, Iterable

from ...core.errors import InputError
from ...core.files import atomic_write
from .environment import NOT_A_CHECKOUT, environment  # noqa: F401  (NOT_A_CHECKOUT: re-exported)
from .paperout import Comparison, PaperResult, claim_counts, claim_verdicts
from .style import CSS as _CSS

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

_LABELS = {"item": "Item", "quantity": "Quantity", "unit": "Unit", "paper": "Paper's value",
           "source": "Paper's value is", "collsim": "collsim", "difference": "collsim − paper", "model": "Model",
           "agrees": "Agrees", "explanation": "Explanation"}
_SOURCE_TEXT = {"printed": "printed", "formula": "computed by collsim from the paper's formula"}
_COLUMNS = ("item", "quantity", "unit", "paper", "source", "collsim", "difference", "model")
_LONG_TABLE = 25  # data tables with more rows scroll inside a box of fixed height
_FULL_WIDTH = 1150  # figures wider than the text column (px) are shrunk, with a full-size switch


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _number(v: Any, signed: bool = False) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        text = f"{int(v):d}"
    elif isinstance(v, float):
        text = f"{v:.6g}"
    else:
        return str(v)
    return ("+" + text) if signed and not text.startswith("-") and float(v) != 0 else text


def _agrees_cell(c: Comparison) -> str:
    if c.agrees is None:
        return '<td class="na">not compared</td>'
    return '<td class="yes">yes</td>' if c.agrees else '<td class="no">no</td>'


def _explanation_cell(c: Comparison) -> str:
    if c.explanation:
        return f'<td class="text">{_e(c.explanation)}</td>'
    if c.agrees is False:
        return '<td class="text missing">no explanation given</td>'
    return '<td class="text"></td>'


def _head(labels: Iterable[str], numeric: Iterable[bool] = ()) -> str:
    labels = list(labels)
    numeric = list(numeric) + [False] * len(labels)
    right = ' class="num"'
    return "<thead><tr>" + "".join(f'<th scope="col"{right if numeric[i] else ""}>{_e(x)}</th>'
                                   for i, x in enumerate(labels)) + "</tr></thead>"


def _table(caption: str, head: str, rows: list[str], *, table_id: str, kind: str) -> str:
    extra = (" long" if len(rows) > _LONG_TABLE else "") + (" fit" if kind == "data" else "")
    return (f'<div class="scroll{extra}"><table id="{_e(table_id)}" data-kind="{kind}">'
            f"<caption>{_e(caption)}</caption>{head}<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>")


def _comparison_row(c: Comparison, paper: str | None = None) -> str:
    cls = ' class="differs"' if c.agrees is False else ""
    cells = [f"<td>{_e(paper)}</td>"] if paper is not None else []
    cells += [f'<td class="item">{_e(c.item)}</td>', f'<td class="quantity">{_e(c.quantity)}</td>',
              f"<td>{_e(c.unit)}</td>", f'<td class="num">{_e(_number(c.paper))}</td>',
              f"<td>{_e(_SOURCE_TEXT[c.source])}</td>", f'<td class="num">{_e(_number(c.collsim))}</td>',
              f'<td class="num">{_e(_number(c.difference, signed=True))}</td>', f"<td>{_e(c.model)}</td>"]
    if paper is None:
        cells.append(_agrees_cell(c))
    cells.append(_explanation_cell(c))
    return f"<tr{cls}>" + "".join(cells) + "</tr>"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() != ""


def _data_cell(text: str) -> str:
    """A CSV field; long floats are shown to 6 significant digits, the exact text on hover."""
    if not _is_number(text):
        return f'<td class="nw">{_e(text)}</td>' if len(text) <= 24 else f"<td>{_e(text)}</td>"
    short = f"{float(text):.6g}" if len(text) > 10 and not text.strip().lstrip("+-").isdigit() else text
    title = "" if short == text else f' title="{_e(text)}"'
    return f'<td class="num"{title}>{_e(short)}</td>'


def _csv_table(r: PaperResult, name: str) -> str:
    path = Path(r.out_dir) / name
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise InputError(f"paper {r.paper!r} lists the data table {name} but {path} cannot be read: "
                         f"{exc.strerror or exc}") from exc
    header, body = (rows[0], rows[1:]) if rows else ([], [])
    out = []
    for row in body:
        out.append("<tr>" + "".join(_data_cell(x) for x in row) + "</tr>")
    numeric = [bool(body) and all(_is_number(row[i]) for row in body if i < len(row) and row[i])
               for i in range(len(header))]
    caption = (f"{r.paper}: data table {name} ({len(body)} row{'s' if len(body) != 1 else ''}"
               + ("; the box scrolls)" if len(body) > _LONG_TABLE else ")"))
    return _table(caption, _head(header, numeric), out, table_id=f"{r.paper}-data-{name}", kind="data")


def _image(r: PaperResult, name: str) -> tuple[str, int | None, int | None]:
    """A figure's ``data:`` URI and its pixel size (PNG), else its SVG."""
    png, svg = Path(r.out_dir) / f"{name}.png", Path(r.out_dir) / f"{name}.svg"
    if png.is_file():
        data = png.read_bytes()
        if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
            raise InputError(f"paper {r.paper!r}: {png} is not a PNG file")
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return "data:image/png;base64," + base64.b64encode(data).decode("ascii"), width, height
    if svg.is_file():
        return "data:image/svg+xml;base64," + base64.b64encode(svg.read_bytes()).decode("ascii"), None, None
    raise InputError(f"paper {r.paper!r} lists the figure {name!r} but neither {png} nor {svg} exists")


def _figure(r: PaperResult, number: int, name: str) -> str:
    uri, width, height = _image(r, name)
    caption = r.captions.get(name, "")
    size = f' width="{width}" height="{height}"' if width and height else ""
    alt = caption or f"figure {name} of {r.paper}"
    text = _e(caption) if caption else '<span class="missing">no caption given</span>'
    fid = f"{r.paper}-fig-{name}"
    zoom = (f'<input type="checkbox" class="zoom" id="{_e(fid)}-zoom"><label class="zoom-label" for="{_e(fid)}-zoom">'
            f"show at full size ({width} px wide; scrolls sideways)</label>" if width and width > _FULL_WIDTH else "")
    return (f'<figure id="{_e(fid)}">{zoom}<div class="figbox"><img src="{uri}" alt="{_e(alt)}"{size}></div>'
            f"<figcaption><strong>Figure {number} ({_e(r.paper)}/{_e(name)}).</strong> {text}</figcaption></figure>")


def _counts(r: PaperResult) -> tuple[int, int, int, int]:
    """Comparison rows: total, agree, differ, not compared."""
    agree = sum(1 for c in r.comparisons if c.agrees is True)
    differ = sum(1 for c in r.comparisons if c.agrees is False)
    return len(r.comparisons), agree, differ, len(r.comparisons) - agree - differ


def _summary(results: list[PaperResult]) -> str:
    rows, model_rows = [], []
    totals = {"printed": 0, "any_model": 0, "none": 0, "formula": 0, "rows": 0}
    for r in results:
        k = claim_counts(r.comparisons)
        for key in totals:
            totals[key] += k[key]
        rows.append(f'<tr><td><a href="#paper-{_e(r.paper)}">{_e(r.paper)}</a></td><td class="text">{_e(r.title)}</td>'
                    f'<td class="num">{k["printed"]}</td><td class="num">{k["any_model"]}</td>'
                    f'<td class="num">{k["none"]}</td><td class="num">{k["formula"]}</td>'
                    f'<td class="num">{k["rows"]}</td><td class="num">{len(r.targets)}</td>'
                    f'<td class="num">{len(r.figures)}</td><td class="num">{len(r.tables)}</td></tr>')
        for what, key in (("printed number", "models"), ("formula (computed)", "formula_models")):
            for model, v in k[key].items():
                model_rows.append(f"<tr><td>{_e(r.paper)}</td><td>{_e(model)}</td><td>{_e(what)}</td>"
                                  f'<td class="num">{v["agree"]}</td><td class="num">{v["differ"]}</td>'
                                  f'<td class="num">{v["not_compared"]}</td></tr>')
    head = _head(["Paper", "Citation", "Numbers printed (distinct)", "Reproduced by some model",
                  "Reproduced by none", "Formulas evaluated by collsim", "Comparison rows", "Table targets",
                  "Figures", "Data tables"])
    line = (f'<p class="summary-line"><strong>{totals["printed"]}</strong> distinct numbers printed in the papers '
            f'are compared (in {totals["rows"]} rows: one printed number can be compared under several models and '
            f'at several sizes): <strong>{totals["any_model"]}</strong> are reproduced by at least one of collsim\'s '
            f'models, <strong class="{"no" if totals["none"] else "yes"}">{totals["none"]}</strong> by none '
            f'(<a href="#discrepancies">listed below</a> with their explanations); the rest have no value to '
            f'compare under any model. Besides, {totals["formula"]} formulas the papers print (but no number for) '
            "are evaluated by collsim and compared with its simulations: those values are collsim's, labelled "
            "'computed by collsim from the paper's formula'.</p>")
    per_model = _table("Agreement per model: distinct printed numbers (and formulas) under each of collsim's "
                       "models", _head(["Paper", "Model", "Counted", "Agree", "Differ", "Not compared"],
                                       [False, False, False, True, True, True]),
                       model_rows, table_id="summary-models", kind="summary")
    return (line + _table("Papers reproduced", head, rows, table_id="summary", kind="summary") + per_model
            + _targets_summary(results))


def _targets_summary(results: list[PaperResult]) -> str:
    rows = [f'<tr><td><a href="#paper-{_e(r.paper)}">{_e(r.paper)}</a></td><td class="nw"><code>{_e(t.name)}</code>'
            f'</td><td>{_e(t.what)}</td><td class="text">{_e(t.verdict)}</td><td class="nw">{_e(t.table)}</td></tr>'
            for r in results for t in r.targets]
    if not rows:
        return ""
    return ("<h3 id=\"table-targets\">Table targets</h3><p>Every table of <code>collsim reproduce NAME</code>, run "
            "inside its paper's reproduction, with what it found (its rows are in the paper's data tables).</p>"
            + _table(f"Table targets ({len(rows)})", _head(["Paper", "Target", "Reproduces", "Verdict", "Data"]),
                     rows, table_id="targets", kind="summary"))


def _discrepancies(results: list[PaperResult]) -> str:
    unreproduced, other = [], []
    numbers = 0
    for r in results:
        verdicts = claim_verdicts(r.comparisons)
        ok = {v.key for v in verdicts if v.agrees}
        never = {v.key for v in verdicts if v.source == "printed" and v.agrees is False} - ok
        numbers += len(never)
        for c in r.disagreements():
            (unreproduced if c.key in never else other).append(_comparison_row(c, r.paper))
    if not unreproduced and not other:
        return "<p>None: every value the papers print agrees with collsim's.</p>"
    labels = _head(["Paper"] + [_LABELS[k] for k in (*_COLUMNS, "explanation")])
    out = ["<p>Every comparison that does not agree, and why (docs/papers/discrepancies.md has the "
           "derivations). First the printed numbers that no model of collsim reproduces, then the rows where one "
           "model differs though another reproduces the number, or where the value compared is collsim's "
           "evaluation of a paper's formula.</p>"]
    if unreproduced:
        out.append(_table(f"All discrepancies ({len(unreproduced)} rows): the {numbers} printed numbers no model "
                          "reproduces", labels, unreproduced, table_id="discrepancy-table", kind="discrepancies"))
    else:
        out.append("<p>Every printed number is reproduced by at least one model.</p>")
    if other:
        out.append(_table(f"Other rows that differ ({len(other)}): another model reproduces the number, or the "
                          "value is computed from a formula", labels, other, table_id="discrepancy-other",
                          kind="discrepancies"))
    return "".join(out)


def _relative(path: Path, base: Path | None) -> str:
    """``path`` relative to the report's folder ``base`` (POSIX separators), so the page is the same wherever it is."""
    if base is None:
        return Path(path).as_posix()
    return Path(os.path.relpath(Path(path).resolve(), Path(base).resolve())).as_posix()


def _paper_section(r: PaperResult, first_figure: int, base: Path | None = None) -> str:
    n, agree, differ, na = _counts(r)
    k = claim_counts(r.comparisons)
    parts = [f'<section id="paper-{_e(r.paper)}"><h2>{_e(r.paper)}</h2>', f'<p class="citation">{_e(r.title)}</p>',
             f"<p>Files (relative to this report): <code>{_e(_relative(r.out_dir, base))}</code></p>",
             "<h3>Assumptions and notes</h3>"]
    parts.append('<ul class="notes">' + "".join(f"<li>{_e(x)}</li>" for x in r.notes) + "</ul>" if r.notes
                 else "<p>No notes given.</p>")
    if r.targets:
        parts.append("<h3>Table targets</h3>")
        parts.append('<ul class="notes">' + "".join(
            f"<li><code>{_e(t.name)}</code> ({_e(t.what)}; data: {_e(t.table)}): {_e(t.verdict)}</li>"
            for t in r.targets) + "</ul>")
    parts.append("<h3>Printed values beside collsim's</h3>" if k["printed"] else
                 "<h3>The paper's formulas, evaluated by collsim, beside collsim's simulations</h3>")
    if r.comparisons:
        labels = [_LABELS[x] for x in (*_COLUMNS, "agrees", "explanation")]
        what = (f"{k['printed']} printed number{'s' if k['printed'] != 1 else ''}"
                + (f" and {k['formula']} formula{'s' if k['formula'] != 1 else ''} evaluated by collsim"
                   if k["formula"] else ""))
        caption = (f"{r.paper}: comparison ({what} in {n} row{'s' if n != 1 else ''}: {agree} agree, {differ} differ, "
                   f"{na} not compared)")
        parts.append(_table(caption, _head(labels), [_comparison_row(c) for c in r.comparisons],
                            table_id=f"{r.paper}-comparison", kind="comparison"))
    else:
        parts.append("<p>No printed values compared.</p>")
    if r.figures:
        parts.append("<h3>Figures</h3>")
        parts += [_figure(r, first_figure + i, name) for i, name in enumerate(r.figures)]
    if r.tables:
        parts.append("<h3>Data tables</h3>")
        parts += [_csv_table(r, name) for name in r.tables]
    return "\n".join(parts) + "\n</section>"


def _value(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, sort_keys=True, default=str, ensure_ascii=False)


def _provenance(provenance: dict, env: dict[str, str]) -> str:
    env_rows = [f'<tr><th scope="row">{_e(k)}</th><td><code>{_e(v)}</code></td></tr>' for k, v in env.items()]
    out = [_table("Software", _head(["Component", "Version"]), env_rows, table_id="provenance-software",
                  kind="provenance")]
    if provenance:
        rows = [f'<tr><th scope="row">{_e(k)}</th><td class="text"><code>{_e(_value(v))}</code></td></tr>'
                for k, v in provenance.items()]
        out.append(_table("Parameters and assumptions of this run", _head(["Parameter", "Value"]), rows,
                          table_id="provenance-parameters", kind="provenance"))
    else:
        out.append("<p>No parameters were passed.</p>")
    return "\n".join(out)


def render_report(results: list[PaperResult], *, provenance: dict, env: dict[str, str] | None = None,
                  base: str | Path | None = None) -> str:
    """The HTML text of the report (what :func:`write_report` writes)."""
    env = environment() if env is None else env
    nav = ['<li><a href="#summary-section">Summary</a></li>']
    if any(r.targets for r in results):
        nav.append('<li><a href="#table-targets">Table targets</a></li>')
    nav.append('<li><a href="#discrepancies">Discrepancies</a></li>')
    nav += [f'<li><a href="#paper-{_e(r.paper)}">{_e(r.paper)}</a></li>' for r in results]
    nav.append('<li><a href="#provenance">Provenance</a></li>')
    sections, figure = [], 1
    for r in results:
        sections.append(_paper_section(r, figure, None if base is None else Path(base)))
        figure += len(r.figures)
    body = "\n".join([
        "<main>", "<h1>collsim: the papers' evaluations, reproduced</h1>",
        "<p>Each number a paper prints, beside the value collsim computes; the figures and data behind them; "
        "every discrepancy with its explanation; and what produced this page.</p>",
        '<nav aria-label="Contents"><strong>Contents</strong><ol>' + "".join(nav) + "</ol></nav>",
        '<section id="summary-section"><h2>Summary</h2>', _summary(results), "</section>",
        '<section id="discrepancies"><h2>Discrepancies</h2>', _discrepancies(results), "</section>",
        *sections,
        '<section id="provenance"><h2>Provenance</h2>', _provenance(provenance, env), "</section>", "</main>"])
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            "<title>collsim: paper reproductions</title>\n"
            f"<style>{_CSS}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


def write_report(results: list[PaperResult], out_path: str | Path, *, provenance: dict) -> Path:
    """Write one self-contained HTML file with every paper's figures, tables and discrepancies."""
    out_path = Path(out_path)
    data = render_report(list(results), provenance=provenance, base=out_path.parent).encode("utf-8")
    atomic_write(out_path, lambda fh: fh.write(data))
    return out_path
