"""Tables that fit the terminal without cutting a number (docs/output.md).

On a terminal narrower than a table, columns that may go are dropped in a fixed order;
a table still too wide is printed in stacked parts that repeat its first column(s).
Piped, a table keeps its natural width.  rich is imported inside the functions.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from .text import _encoding, plain

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["TableColumn", "console", "print_table", "text_of"]


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def text_of(value: Any) -> str:
    """A value as a table cell: ``-`` for None, ``yes``/``no``, floats to 4 significant digits, JSON for lists.

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> text_of(None), text_of(True), text_of(0.8333333), text_of([4, 2])
    ('-', 'yes', '0.8333', '[4, 2]')
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        from ..kinds.base import format_number
        return format_number(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, separators=(", ", ": "), default=_jsonable)
    return str(value)


# ------------------------------------------------------------------------------------- tables

def console(err: bool = False) -> Console:
    """A rich console on stdout (or stderr): the terminal's width, or unbounded width when piped.

    Parameters
    ----------
    err : bool, optional
        On stderr.

    Returns
    -------
    rich.console.Console
        Without syntax highlighting.

    Examples
    --------
    >>> console().width >= 80
    True
    """
    from rich.console import Console
    out = Console(stderr=err, highlight=False)
    if not out.is_terminal:  # pipes and files get full-width tables
        out = Console(stderr=err, highlight=False, width=max(out.width, 200))
    return out


@dataclass
class TableColumn:
    """One column of a table to print: header, cell texts, and whether it may be dropped to fit.

    Parameters
    ----------
    header : str
        Header; a newline splits it.
    cells : list of str
        One cell per row.
    left : bool, optional
        Left-justified (text); numbers are right-justified.
    drop : int or None, optional
        Columns with a ``drop`` go, lowest first, when the terminal is too narrow.
    wrap : bool, optional
        Text that may wrap at spaces (never numbers).
    ratio : int or None, optional
        Share of the width for wrapping text (the table then fills the width).

    Examples
    --------
    >>> TableColumn("slots", ["7", "4"]).left
    False
    """

    header: str
    cells: list[str]
    left: bool = False
    drop: int | None = None
    wrap: bool = False
    ratio: int | None = None


def _table(title: str | None, cols: Sequence[TableColumn], caption: str | None, ascii_only: bool):
    from rich import box
    from rich.table import Table
    from rich.text import Text
    simple = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True) if ascii_only \
        else box.SIMPLE_HEAD
    table = Table(title=Text(title) if title else None, caption=Text(caption) if caption else None, box=simple,
                  show_edge=False, pad_edge=False, collapse_padding=True, title_justify="left",
                  caption_justify="left", expand=any(c.ratio for c in cols))
    for c in cols:
        table.add_column(Text(c.header), justify="left" if c.left else "right", no_wrap=not c.wrap,
                         overflow="fold" if c.wrap else "ellipsis", ratio=c.ratio)
    for i in range(len(cols[0].cells) if cols else 0):
        table.add_row(*(Text(c.cells[i]) for c in cols))
    return table


def _fold(header: str, cells: Sequence[str]) -> str:
    """A one-line header longer than its cells, folded at spaces to their width."""
    words = header.split()
    if "\n" in header or not words:
        return header
    import textwrap
    width = max([len(x) for x in cells] + [len(w) for w in words])
    return "\n".join(textwrap.wrap(header, width))


def print_table(title: str | None, cols: Sequence[TableColumn], *, caption: Iterable[str] = (), keys: int = 1,
                err: bool = False, out: Console | None = None) -> list[str]:
    """Print a table that fits the terminal without cutting a number.

    On a terminal narrower than the table, droppable columns go (lowest ``drop`` first);
    if it is still too wide, it is printed in stacked parts, each repeating the first
    ``keys`` columns.  Piped, the table keeps its natural width.

    Parameters
    ----------
    title : str or None
        Title line.
    cols : sequence of TableColumn
        The columns.
    caption : iterable of str, optional
        Lines under the table.
    keys : int, optional
        Leading columns repeated in each stacked part.
    err : bool, optional
        Print on stderr.
    out : rich.console.Console, optional
        The console (default :func:`console`).

    Returns
    -------
    list of str
        Headers of the columns dropped to fit.

    Examples
    --------
    >>> print_table("t", [TableColumn("name", ["ring"], left=True), TableColumn("slots", ["7"])])
    t
    name  slots
    ───────────
    ring      7
    []
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

    def least(part: Sequence[TableColumn]) -> int:  # numbers whole, text folded to 12 columns at most
        return natural([c if not c.wrap else TableColumn(c.header[:12], [x[:12] for x in c.cells], wrap=True)
                        for c in part])

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
        table = _table(title if i == 0 else None, part, None if len(parts) > 1 else "\n".join(lines) or None,
                       ascii_only)
        if not out.is_terminal:  # piped: numbers never wrap; text wraps at 200 columns
            out.width = max(least(part), min(natural(part), 200), 20)
        out.print(table)
    if len(parts) > 1:  # under stacked parts, the notes take the terminal's width
        from rich.text import Text
        for line in lines:
            out.print(Text(line))
    return [fix(d) for d in dropped]
