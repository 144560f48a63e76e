"""Issue 21: tables write no trailing blanks, and ``collsim algorithms`` fits 100 columns with its words whole.

Piped tables used to be padded with blanks to 200 columns; ``collsim algorithms`` at 100 columns cut
words (``hypercube-pers`` / ``onalized``) and printed its references on lines of any length.
"""

from __future__ import annotations

import json
import re

import pytest

from test_output import run_pipe, run_tty, screen

_HYPHEN = re.compile(r"(?<=[^\W\d_]-)(?=[^\W\d_])")


@pytest.mark.parametrize("args", [("algorithms",), ("systems",), ("systems", "torus"), ("algorithms", "optree"),
                                  ("topology", "--system", "ring"), ("reproduce", "optree-table1"),
                                  ("compare", "--system", "ring", "-n", "8", "-a", "ring,bruck")])
def test_piped_tables_have_no_trailing_blanks(args, tmp_path):
    proc = run_pipe(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    padded = [line for line in lines if line != line.rstrip()]
    assert not padded, padded[:3]


def _allowed_pieces(rows: list[dict]) -> set[str]:
    """Every word of the algorithms' texts, and every run of its pieces split after a compound's hyphen."""
    words = set()
    for r in rows:
        texts = [r["name"], *r["aliases"], ", ".join(r["collectives"]), ", ".join(r["systems"]),
                 r["constraints"] or "-", r["reference"], f"({', '.join(r['aliases'])})"]
        for word in " ".join(texts).split():
            pieces = _HYPHEN.split(word)
            words.update("".join(pieces[i:j]) for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1))
    return words | {"name", "collectives", "systems", "constraints", "reference", "collsim", "algorithms"}


def _check_fits(lines: list[str], rows: list[dict], columns: int) -> None:
    assert lines and max(len(line) for line in lines) <= columns, max(lines, key=len)
    assert all(line == line.rstrip() for line in lines)
    table = lines[:lines.index("References:")]
    allowed = _allowed_pieces(rows)
    cut = [t for line in table if not line.startswith(("─", "-")) for t in line.split() if t not in allowed]
    assert not cut, f"words cut by the table: {cut[:10]}"


def test_algorithms_fit_100_columns_piped_without_cutting_a_word(tmp_path):
    rows = json.loads(run_pipe("algorithms", "--json", cwd=tmp_path).stdout)
    proc = run_pipe("algorithms", cwd=tmp_path, env={"COLUMNS": "100"})
    assert proc.returncode == 0
    _check_fits(proc.stdout.decode().splitlines(), rows, 100)


def test_algorithms_fit_a_100_column_terminal_without_cutting_a_word(tmp_path):
    rows = json.loads(run_pipe("algorithms", "--json", cwd=tmp_path).stdout)
    code, text = run_tty("algorithms", columns=100, cwd=tmp_path)
    assert code == 0, text
    lines = [line for line in screen(text)]
    while lines and not lines[-1]:
        lines.pop()
    _check_fits(lines, rows, 100)


@pytest.mark.parametrize("args,columns", [(("algorithms", "optree"), 80), (("systems",), 100)])
def test_prose_around_tables_wraps_at_columns_too(args, columns, tmp_path):
    """The lines around a table (an algorithm's summary and reference, the systems' closing hint, references)
    wrap at COLUMNS, at spaces, as the table does."""
    proc = run_pipe(*args, cwd=tmp_path, env={"COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert max(len(line) for line in lines) <= columns, max(lines, key=len)
    assert all(line == line.rstrip() for line in lines)


def _title(text: str) -> list[str]:
    """The title's lines: those above the table's header (which starts with blanks or its first column)."""
    out = []
    for line in text.splitlines():
        if not line or line[0].isspace() or line.startswith("algorithm"):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("system", [("--system", "hierarchical", "-S", "dims=switch:13:300GB/s:1us", "-a", "ring"),
                                    ("--system", "fat-tree", "-n", "128", "-c", "alltoall", "-s", "64KiB", "-a",
                                     "pairwise"),
                                    ("--system", "ring", "-n", "8", "-a", "ring"), ("-n", "1024", "-a", "ring")])
@pytest.mark.parametrize("columns", ["200", "60"])
def test_a_wrapped_title_breaks_between_its_clauses_never_after_a_comma(system, columns, tmp_path):
    """Issue 31: a one-dimension hierarchical title read "N=13, switch:13:300GB/s:1us," above "lower bound ...":
    rich wrapped it at a space after a comma.  A title now breaks between its clauses, the break for the comma."""
    proc = run_pipe("compare", *system, env={"COLUMNS": columns}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    title = _title(text)
    rule = next(line for line in text.splitlines() if line.startswith("\u2500"))
    assert title and not any(line.endswith(",") for line in title), title
    assert all(len(line) <= len(rule) for line in title), (title, len(rule))
    assert "lower bound" in title[-1] and title[0].startswith(("allgather of", "alltoall of")), title


def test_wrap_title_keeps_clauses_whole():
    from collsim.cli.tables import wrap_title
    text = "allgather of 4MiB per node, total 52MiB on hierarchical: N=13, switch:13:300GB/s:1us, lower bound 168.8 µs"
    assert wrap_title(text, 200) == text
    assert wrap_title(text, 87).splitlines() == [
        "allgather of 4MiB per node, total 52MiB on hierarchical: N=13, switch:13:300GB/s:1us",
        "lower bound 168.8 µs"]
    for width in range(len("switch:13:300GB/s:1us,"), 120):  # at least the longest word
        lines = wrap_title(text, width).splitlines()
        assert not any(line.endswith(",") for line in lines) and all(len(line) <= width for line in lines)
        words = [w.rstrip(",") for w in " ".join(lines).split()]
        assert words == [w.rstrip(",") for w in text.split()]  # nothing lost: a break stands for ", " or " "
