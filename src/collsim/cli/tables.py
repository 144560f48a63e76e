"""Tables that fit the terminal without cutting a number (docs/output.md).

On a terminal narrower than a table, columns that may go are dropped in a fixed order;
a table still too wide is printed in stacked parts that repeat its first column(s).
Piped, a table keeps its natural width (text that wraps, at ``COLUMNS`` if it is set, else
200).  Text wraps at spaces, never inside a word, and no line ends in blanks.  rich is
imported inside the functions.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .text import _encoding, plain

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["TableColumn", "console", "print_table", "text_of", "text_width", "wrap_text", "wrap_title"]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def text_of(value: Any) -> str:
    """A value as a table cell: ``-`` for None, ``yes``/``no``, floats to 4 significant digits, JSON for lists."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        from ..core.wording import format_number
        return format_number(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(", ", ": "), default=_jsonable)
    return str(value)


# ------------------------------------------------------------------------------------- tables

def console(err: bool = False) -> Console:
    """A rich console on stdout (or stderr): the terminal's width, or unbounded width when piped."""
    from rich.console import Console
    out = Console(stderr=err, highlight=False)
    if not out.is_terminal:  # pipes and files get full-width tables
        out = Console(stderr=err, highlight=False, width=max(out.width, 200))
    return out


@dataclass
class TableColumn:
    """One column of a table to print: header, cell texts, and whether it may be dropped to fit."""

    header: str
    cells: list[str]
    left: bool = False
    drop: int | None = None
    wrap: bool = False
    ratio: int | None = None


PIPED_WIDTH = 200
"""Where text wraps in a piped table when ``COLUMNS`` is not set (numbers never wrap)."""


def _piped_width() -> int:
    """The width text wraps at when the output is not a terminal: ``COLUMNS`` if set, else 200."""
    from ..core.errors import InputError
    from ..core.numbers import parse_number
    try:
        return max(parse_number(os.environ.get("COLUMNS", ""), "COLUMNS", integer=True), 20)
    except InputError:
        return PIPED_WIDTH


_HYPHEN = re.compile(r"(?<=[^\W\d_]-)(?=[^\W\d_])")  # after the hyphen of a compound (all-to-all), not l-1


def _pieces(word: str) -> list[str]:
    return _HYPHEN.split(word)


def _longest_word(texts: Iterable[str]) -> int:
    """The widest piece of text a column must hold whole: a word, or part of a compound up to its hyphen."""
    return max((len(piece) for t in texts for w in t.split() for piece in _pieces(w)), default=1)


def wrap_text(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` at spaces, or after a compound's hyphen; a word never cut."""
    out = []
    for para in text.split("\n"):
        line = ""
        for word in para.split():
            for k, piece in enumerate(_pieces(word)):
                glue = "" if k or not line else " "
                if line and len(line) + len(glue) + len(piece) > width:
                    out.append(line)
                    line, glue = "", ""
                line += glue + piece
        out.append(line)
    return "\n".join(out)


def wrap_title(text: str, width: int) -> str:
    """A title wrapped to ``width`` between its clauses (at ``", "``), so that no line ends in a comma.

    A clause wider than ``width`` wraps at spaces (:func:`wrap_text`).  rich would wrap a title at any
    space, leaving ``"N=13, switch:13:300GB/s:1us,"`` above ``"lower bound 168.8 µs"``; here the line
    break stands for the comma.
    """
    from rich.cells import cell_len
    lines: list[str] = []
    for para in text.split("\n"):
        line = ""
        for clause in para.split(", "):
            longer = f"{line}, {clause}" if line else clause
            if line and cell_len(longer) > width:
                lines.append(line)
                longer = clause
            line = longer
        lines.append(line)
    return "\n".join(wrap_text(line, width) if cell_len(line) > width else line for line in lines)


_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def _print(out: Console, renderable: Any) -> None:
    """Print through rich, with the blanks rich pads each line with removed (colour codes kept)."""
    with out.capture() as captured:
        out.print(renderable)
    out.file.write(_TRAILING.sub(r"\1", captured.get()))
    out.file.flush()


def text_width(err: bool = False) -> int:
    """Where prose wraps: the terminal's width, or piped ``COLUMNS`` if set, else 200 (as tables)."""
    import shutil
    import sys
    stream = sys.stderr if err else sys.stdout
    try:
        if stream.isatty():
            return max(shutil.get_terminal_size().columns, 20)
    except (AttributeError, ValueError, OSError):
        pass
    return _piped_width()


def _longest_line(texts: Iterable[str]) -> int:
    return max((len(line) for t in texts for line in t.split("\n")), default=1)


def _share(lows: list[int], highs: list[int], ratios: list[int], room: int) -> list[int]:
    """Widths from ``lows`` up to ``highs`` that add up to ``room`` where they can, shared by ``ratios``."""
    widths = list(lows)
    while True:
        spare = room - sum(widths)
        open_ = [i for i in range(len(widths)) if widths[i] < highs[i]]
        if spare <= 0 or not open_:
            return widths
        total = sum(ratios[i] for i in open_)
        grant = {i: min(highs[i] - widths[i], spare * ratios[i] // total) for i in open_}
        if not any(grant.values()):  # less than one column each: hand them out in order
            grant = {i: 1 for i in open_[:spare]}
        for i, g in grant.items():
            widths[i] += g


def _table(title: str | None, cols: Sequence[TableColumn], caption: str | None, ascii_only: bool,
           widths: Sequence[int | None] | None = None):
    from rich import box
    from rich.table import Table
    from rich.text import Text
    simple = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True) if ascii_only \
        else box.SIMPLE_HEAD
    table = Table(title=Text(title) if title else None, caption=Text(caption) if caption else None, box=simple,
                  show_edge=False, pad_edge=False, collapse_padding=True, title_justify="left",
                  caption_justify="left", expand=widths is None and any(c.ratio for c in cols))
    widths = list(widths or [None] * len(cols))
    for c, w in zip(cols, widths):
        table.add_column(Text(c.header if not w else wrap_text(c.header, w)), justify="left" if c.left else "right",
                         no_wrap=not c.wrap, overflow="fold" if c.wrap else "ellipsis", ratio=None if w else c.ratio,
                         width=w)
    for i in range(len(cols[0].cells) if cols else 0):
        table.add_row(*(Text(c.cells[i] if not w else wrap_text(c.cells[i], w)) for c, w in zip(cols, widths)))
    return table


def _fold(header: str, cells: Sequence[str]) -> str:
    """A one-line header longer than its cells, folded at spaces to their width."""
    words = header.split()
    if "\n" in header or not words:
        return header
    import textwrap
    width = max([len(x) for x in cells] + [len(w) for w in words])
    return "\n".join(textwrap.wrap(header, width))


def print_table(title: str | None, cols: Sequence[TableColumn], *, caption: Iterable[str] = (), keys: int = 1,  # noqa: C901
                err: bool = False, out: Console | None = None) -> list[str]:
    """Print a table that fits the terminal without cutting a number.

    On a terminal narrower than the table, droppable columns go (lowest ``drop`` first);
    if it is still too wide, it is printed in stacked parts, each repeating the first
    ``keys`` columns.  Piped, the table keeps its natural width.
    """
    from rich.measure import Measurement
    out = out or console(err)
    stream = out.file
    ascii_only = not _encoding(stream).lower().replace("-", "").startswith("utf")
    fix = functools.partial(plain, stream=stream)
    cols = [TableColumn(fix(c.header if c.wrap else _fold(c.header, c.cells)), [fix(x) for x in c.cells], c.left,
                        c.drop, c.wrap, c.ratio) for c in cols]
    title = fix(title) if title else None
    lines = [fix(x) for x in caption]

    def natural(part: Sequence[TableColumn]) -> int:
        table = _table(None, part, None, ascii_only)
        return Measurement.get(out, out.options.update_width(100_000), table).maximum

    def placeholders(part: Sequence[TableColumn], size) -> list[TableColumn]:
        return [c if not c.wrap else TableColumn("x" * size(c), ["x"] * len(c.cells), wrap=True) for c in part]

    def least(part: Sequence[TableColumn]) -> int:  # numbers whole, text wrapped at spaces (never in a word)
        return natural(placeholders(part, lambda c: _longest_word([c.header, *c.cells])))

    def wrap_widths(part: Sequence[TableColumn], limit: int) -> list[int | None] | None:
        """Each wrapping column's width in a table ``limit`` wide: at least its longest word, at most its
        longest line, the rest shared by the columns' ratios (rich alone would cut words to share it)."""
        wrap = [c for c in part if c.wrap]
        if not wrap:
            return None
        room = limit - natural(placeholders(part, lambda c: 1)) + len(wrap)
        got = iter(_share([_longest_word([c.header, *c.cells]) for c in wrap],
                          [_longest_line([c.header, *c.cells]) for c in wrap], [c.ratio or 1 for c in wrap], room))
        return [next(got) if c.wrap else None for c in part]

    def fits(part: Sequence[TableColumn]) -> bool:
        return least(part) <= width

    dropped: list[str] = []
    width = out.width
    if out.is_terminal:
        while not fits(cols):
            candidates = [c for c in cols if c.drop is not None]
            if not candidates:
                break
            worst = min(reversed(candidates), key=lambda c: c.drop)
            cols.remove(worst)
            dropped.append(worst.header.replace("\n", " "))
    if dropped:
        lines.append(f"not shown at {width} columns: {', '.join(dropped)} (--wide shows every column)")
    def stacked(limit: int) -> list[list[TableColumn]]:  # greedy: each part as wide as ``limit`` allows
        found, current = [], list(cols[:keys])
        for c in cols[keys:]:
            if len(current) > keys and least([*current, c]) > limit:
                found.append(current)
                current = list(cols[:keys])
            current.append(c)
        return [*found, current]

    parts = [cols]
    if out.is_terminal and not fits(cols) and len(cols) > keys + 1:
        parts = stacked(width)
        low, high = 1, width  # the narrowest limit with as few parts: parts of even widths
        while low < high:
            mid = (low + high) // 2
            low, high = (low, mid) if len(stacked(mid)) <= len(parts) else (mid + 1, high)
        parts = stacked(high)
    for i, part in enumerate(parts):
        if not out.is_terminal:  # piped: numbers never wrap; text wraps at COLUMNS, else 200 columns
            out.width = max(least(part), min(natural(part), _piped_width()), 20)
        widths = wrap_widths(part, out.width)
        shown = None
        if i == 0 and title:  # wrapped between clauses to the table's width (rich would break at any space)
            bare = _table(None, part, None, ascii_only, widths)
            shown = wrap_title(title, min(out.width, Measurement.get(out, out.options, bare).maximum))
        table = _table(shown, part, None if len(parts) > 1 else "\n".join(lines) or None, ascii_only, widths)
        _print(out, table)
    if len(parts) > 1:  # under stacked parts, the notes take the terminal's width
        from rich.text import Text
        for line in lines:
            _print(out, Text(line))
    return [fix(d) for d in dropped]
