"""The command line's output layer: formats, fitted tables, plain-ASCII fallback, progress.

Every command that prints rows prints them through here (docs/output.md):

* ``--format table`` (the default): a table fitted to the terminal.  Numbers are never cut:
  columns that do not fit are dropped in a fixed order (``--wide`` asks for all of them),
  and a table still too wide is printed in stacked parts that repeat the first column.
  Piped, a table keeps its natural width.
* ``--format csv`` / ``tsv``: one header line, one line per row, raw numbers (seconds,
  bytes, bytes/s), written by the :mod:`csv` module; nested values are JSON text.
* ``--format json`` (or ``--json``): JSON, indented.

A stream that cannot encode a character gets its ASCII name (``lambda``, ``alpha-beta``,
``us``) instead of an error (:mod:`.text`); tables are laid out by :mod:`.tables`, progress
bars drawn by :mod:`.progress`, and this module re-exports what commands use of them.
Loading it imports neither rich nor the library (tests/test_startup.py).
"""

from __future__ import annotations

import csv
import functools
import json
import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import click

from .progress import ProgressBar
from .tables import TableColumn, _jsonable, console, print_table, text_of
from .text import ASCII_NAMES, ascii_fallback, echo, plain

__all__ = ["ASCII_NAMES", "FORMATS", "Output", "ProgressBar", "TableColumn", "ascii_fallback", "console", "echo",
           "emit", "emit_json", "emit_one", "error_record", "flatten", "output_options", "plain", "print_table",
           "text_of"]

FORMATS = ("table", "csv", "tsv", "json")

# ----------------------------------------------------------------------------------------- options

@dataclass(frozen=True)
class Output:
    """How a command prints: its format and table options."""

    format: str = "table"
    wide: bool = False
    explain: bool = False


def output_options(*, wide: bool = False, explain: bool = False) -> Callable:
    """Decorator: add ``--format``/``--json`` (and ``--wide``, ``--explain``) and pass ``out=Output(...)``."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, fmt=None, as_json=False, wide_table=False, explain_columns=False, **kwargs):
            if as_json and fmt not in (None, "json"):
                raise click.UsageError(f"--json is --format json; it contradicts --format {fmt}")
            return fn(*args, out=Output("json" if as_json else fmt or "table", wide_table, explain_columns),
                      **kwargs)
        if explain:
            wrapper = click.option("--explain", "explain_columns", is_flag=True,
                                   help="Also print what every column means.")(wrapper)
        if wide:
            wrapper = click.option("--wide", "wide_table", is_flag=True,
                                   help="Show every column (in stacked parts if the terminal is too narrow).")(wrapper)
        wrapper = click.option("--json", "as_json", is_flag=True, help="Same as --format json.")(wrapper)
        return click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                            help="Output format: a table (default), csv or tsv (raw numbers: seconds, "
                                 "bytes), or json.")(wrapper)
    return decorate


# ----------------------------------------------------------------------------------- records

def emit_json(doc: Any) -> None:
    """Print a JSON document (indented; numpy values as numbers)."""
    echo(json.dumps(doc, indent=1, default=_jsonable))


def emit_one(out: Output, record: dict, line: str) -> None:
    """Print one record: ``line`` as the table format, a JSON object, or a CSV/TSV header and row."""
    if out.format == "json":
        emit_json(record)
    elif out.format in ("csv", "tsv"):
        emit(out, [record])
    else:
        echo(line)


def flatten(info: dict, prefix: str = "") -> dict:
    """Nested dictionaries as one level with dotted keys (a table row or CSV column each)."""
    out: dict = {}
    for key, value in info.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


WHERE_FIELDS = ("step", "transfer", "link", "fiber", "wavelength", "node", "chunk")


def error_record(exc: BaseException) -> dict:
    """What a failure is, for a JSON or CSV consumer: error class, message and location fields."""
    where = getattr(exc, "where", None)
    return {"valid": False, "error": type(exc).__name__, "message": str(exc),
            **{f: getattr(where, f, None) for f in WHERE_FIELDS}}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if value != value else ("inf" if value > 0 else "-inf"))
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(",", ":"), default=_jsonable)
    return str(_jsonable(value) if hasattr(value, "tolist") else value)


def emit(out: Output, records: Sequence[dict], table: Callable[[], None] | None = None) -> None:
    """Print rows in the chosen format: ``table()`` draws the table, the others print ``records``.

    CSV and TSV have one header line (every key, in first-seen order) and one line per
    record: numbers raw, None empty, booleans ``true``/``false``, lists and dicts JSON text.
    """
    if out.format == "json":
        emit_json(list(records))
    elif out.format in ("csv", "tsv"):
        keys = list(dict.fromkeys(k for r in records for k in r))
        lines: list[str] = []

        class _Lines:
            def write(self, line: str) -> None:
                lines.append(line)
        writer = csv.writer(_Lines(), delimiter="," if out.format == "csv" else "\t", lineterminator="\n")
        writer.writerow(keys)
        for r in records:
            writer.writerow([_cell(r.get(k)) for k in keys])
        click.echo(plain("".join(lines), sys.stdout), nl=False)
    elif table is not None:
        table()
    else:
        keys = list(dict.fromkeys(k for r in records for k in r))
        print_table(None, [TableColumn(k.replace("_", " "), [text_of(r.get(k)) for r in records]) for k in keys])
