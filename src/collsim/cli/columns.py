"""The columns of ``collsim compare``'s table and ``simulate``'s output, and what each means.

The legend text lives here (the columns every row has) and in each kind's part
(``part_class.columns()`` of every registered model, :mod:`collsim.kinds.base`) and nowhere else:
``--explain`` prints it and docs/output.md holds a copy that tests/test_output.py checks against
:func:`legend_markdown` (``python -m collsim.cli.columns`` prints it).  Nothing here names a kind.
"""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from ..core.units import format_size, format_time
from ..core.wording import format_number
from ..kinds.base import Column, models, part_model
from ..kinds.view import view_for
from .output import TableColumn, echo, print_table


def _efficiency(row) -> str:
    return format_number(100 * row.efficiency, 3, strip=False) + "%"


def _gbps(value: float | None) -> str:
    return "-" if value is None else format_number(value / 1e9, 3, strip=False)


BEFORE = (
    Column("algorithm", "algorithm", lambda r: r.algorithm, "The algorithm's registry name (`collsim algorithms`)."),
    Column("size_bytes", "size", lambda r: format_size(r.size_bytes),
           "The message size m in the collective's convention (docs/model.md): each node's block for "
           "all-gather, each pair's block for all-to-all, the whole vector for all-reduce. In the title "
           "when every row has the same."),
    Column("nodes", "N", lambda r: str(r.nodes), "Nodes. In the title when every row has the same."),
    Column("total_bytes", "total", lambda r: format_size(r.total_bytes),
           "nccl-tests' size of the same collective, the total buffer: N m for all-gather, reduce-scatter, "
           "all-to-all, scatter and gather, m for the others.", wide=True),
    Column("root", "root", lambda r: str(r.root), "The root node of a rooted collective (broadcast, reduce, "
           "scatter, gather).", wide=True),
    Column("shift", "q", lambda r: str(r.shift), "The shift q of the circular shift collective.", wide=True),
    Column("rounds", "rounds", lambda r: str(r.rounds),
           "Logical rounds: the groups of transfers the algorithm means to run together.", wide=True),
    Column("slots", "slots", lambda r: str(r.slots),
           "Physical time slots of the realised schedule (JSON also has it as steps): a round that needs "
           "more channels than the system has becomes several slots, and slots differ in length.", drop=7),
    Column("block_steps", "block\ntimes", lambda r: format_number(r.block_steps, 4),
           "A duration, not a count: the schedule's time in block times, a block time being one block (the "
           "message size) over one channel, the papers' unit. Per slot the largest bytes per channel of its "
           "transfers, summed over slots and divided by the size, so it can be fractional (7.992) or below 1 "
           "(a block split over many channels). It leaves out start-up, O/E/O, padding and reconfiguration, "
           "and paper steps counts in the same unit. JSON block_steps (the key keeps its first name).",
           drop=4),
)

AFTER = (
    Column("lower_bound_s", "lower\nbound", lambda r: format_time(r.lower_bound_s),
           "No schedule of this collective on this system is faster under the system's model "
           "(docs/derivations/lower-bounds.md). In the title when every row has the same.", drop=8),
    Column("efficiency", "effi-\nciency", _efficiency,
           "lower bound / t, with t the row's answer (time_s: the time on optical rings, the simulated time "
           "on electrical networks); 100% would be optimal."),
    Column("algbw_bytes_per_s", "algbw\nGB/s", lambda r: _gbps(r.algbw_bytes_per_s),
           "nccl-tests' algorithm bandwidth S / t in GB/s (10^9 bytes/s), t as for efficiency; S is N m "
           "for all-gather, reduce-scatter and all-to-all, m for all-reduce, broadcast and reduce.", wide=True),
    Column("busbw_bytes_per_s", "busbw\nGB/s", lambda r: _gbps(r.busbw_bytes_per_s),
           "nccl-tests' bus bandwidth: algbw times 2(N-1)/N for all-reduce, (N-1)/N for all-gather, "
           "reduce-scatter and all-to-all, 1 for broadcast and reduce.", drop=5),
    Column("transfers", "trans-\nfers", lambda r: str(r.transfers),
           "Transfers in the schedule (lightpaths on optical rings, messages on networks).", wide=True),
    Column("verified", "verified",
           lambda r: "yes" if r.verified else "not run" if getattr(r, "verification", None) == "not run" else "NO",
           "yes: the verifier passed the schedule (data flow, reductions, channels and routes). NO: the "
           "error is printed under the table and collsim exits with status 1."),
)

# Keys a table never shows as columns (the title has them, or they are not cells); a kind's part fields
# that its columns do not list are never columns either (:func:`_hidden`).
NOT_COLUMNS = {"collective", "system", "steps", "params", "error", "skipped", "verification"}


def _merged(kind: Sequence[Column]) -> list[Column]:
    """The common columns around a kind's own; a kind's column replaces the common one of its key, in place."""
    own = {c.key: c for c in kind}
    common = {c.key for c in (*BEFORE, *AFTER)}
    return [*(own.get(c.key, c) for c in BEFORE), *(c for c in kind if c.key not in common),
            *(own.get(c.key, c) for c in AFTER)]


def _kind_columns(row) -> list[Column]:
    return list(row.part.columns()) if row.part is not None else []


def _hidden(row) -> set[str]:
    """The fields of a row's part that are not among its columns (the title's, or kept for JSON only)."""
    if row.part is None:
        return set()
    from dataclasses import fields
    return {f.name for f in fields(row.part)} - {c.key for c in row.part.columns()}


def _generic(key: str):
    def text(row) -> str:
        value = row.to_json().get(key)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if key.endswith("_s") and isinstance(value, (int, float)):
            return format_time(value)
        return format_number(value, 6) if isinstance(value, (int, float)) else "-" if value is None else str(value)
    return text


def result_columns(rows: Sequence[Any]) -> list[Column]:
    """Every column of a comparison table of ``rows``, ``--wide`` ones included, in order.

    Row fields no column describes (new ones) follow as ``--wide`` columns of their own.
    """
    data = [r.to_json() for r in rows]
    cols = [c for c in _merged(_kind_columns(rows[0])) if c.key in data[0]
            and not (c.wide and all(d[c.key] is None for d in data))]
    known = {c.key for c in cols} | NOT_COLUMNS | _hidden(rows[0])
    extra = [k for k, v in data[0].items() if k not in known and not isinstance(v, (dict, list))
             and any(d.get(k) is not None for d in data)]
    cols[-1:-1] = [Column(k, k.replace("_", "\n", 1), _generic(k), "(a row field without a description)",
                          wide=True) for k in extra]
    return cols


def compare_table(rows: Sequence[Any], *, wide: bool = False) -> None:
    """Print ``collsim compare``'s table of result rows (see :func:`result_columns`).

    Size, node count and lower bound go in the title when every row shares them; an
    infeasible schedule's efficiency carries a ``*``; verification errors follow the table.
    """
    first = rows[0]
    same = {k for k in ("size_bytes", "total_bytes", "nodes", "lower_bound_s")
            if len({getattr(r, k, None) for r in rows}) == 1}
    from ..core.totals import SIZE_MEANING, describe_size  # the title says what the size is
    title = f"{first.collective}" + (f" of {describe_size(first.collective, first.nodes, first.size_bytes)}"
                                     if "size_bytes" in same else f" (size {SIZE_MEANING[first.collective][0]})") \
        + f" on {first.system}: " + (f"N={first.nodes}, " if "nodes" in same else "") \
        + (first.part.title() if first.part is not None else "")
    if "lower_bound_s" in same and not wide:
        title += f", lower bound {format_time(first.lower_bound_s)}"
    cols = [c for c in result_columns(rows) if (wide or not c.wide) and c.key not in same - ({"lower_bound_s"}
                                                                                              if wide else set())]
    keys = sum(1 for c in cols[:3] if c.key in ("algorithm", "size_bytes", "nodes"))
    table = [TableColumn(c.header, [c.text(r) for r in rows], left=c.key == "algorithm",
                         drop=None if wide else c.drop) for c in cols]
    caption: list[str] = []
    shown = {c.key for c in cols}
    for model in dict.fromkeys(part_model(r.part) for r in rows):  # each kind's notes on its marks
        if model is not None:
            caption += view_for(model).captions(rows, shown)
    print_table(title, table, caption=caption, keys=keys)
    for r in rows:
        if not r.verified:
            echo(f"NO: {r.algorithm}: {r.error}")


# What a skipped row copies from the rows that ran: the instance, not any result (and each kind's
# ``instance_keys``: the system's fields in its part).
INSTANCE_KEYS = ("collective", "system", "nodes", "size_bytes", "total_bytes")


def skipped_rows(rows: Sequence[Any], skips: Sequence[Any]) -> list[dict]:
    """JSON rows for algorithms not run: the row's keys, ``verified: false``, ``skipped`` (the reason)."""
    template = {**dict.fromkeys(rows[0].to_json()), "skipped": None} if rows else {}
    out = []
    for skip in skips:
        name, note = skip.algorithm, str(skip)
        row = dict(template)
        if rows:  # the instance's fields (system, collective, size); the algorithm's stay null
            first = rows[0].to_json()
            model = part_model(rows[0].part)
            keys = INSTANCE_KEYS + (view_for(model).instance_keys if model is not None else ())
            row.update({k: first[k] for k in keys if k in first})
        row.update(algorithm=name, verified=False, skipped=note)
        if "verification" in row:
            row["verification"] = "not run"
        out.append(row)
    return out


def compare_total(system: Any, collective: str, names: Sequence[str] | None) -> int:
    """How many algorithms ``compare`` will run per size (its progress: a bar on a terminal, lines elsewhere)."""
    if names:
        return len(names)
    from ..experiments.compare import applicable
    return sum(reason is None for _, reason in applicable(system, collective))


def legend_kind(row: Any) -> str:
    """Which legend describes a result row's table: the name of the kind whose part the row has."""
    model = part_model(row.part)
    return model.name if model is not None else ""


SIMULATE = (
    ("algorithm", "algorithm", "The algorithm's registry name (or the name recorded in a schedule file)."),
    ("system", "system", "The system's name; `nodes` is its node count N."),
    ("collective", "collective", "The collective; `size_bytes` is collsim's size m (docs/model.md), `total_bytes` "
                                 "nccl-tests' total buffer, `root` and `shift` its root and q (null where they do "
                                 "not apply)."),
    ("mode", "mode", "bulk: every step starts when the previous one has finished; dataflow: each transfer starts "
                     "as soon as the data it sends has arrived; rank: as MPI ranks without barriers, each "
                     "transfer starts when both its ranks have finished their earlier steps."),
    ("simulated", "total_time_s", "The contention-aware time, when the last flow finishes, with max-min fair "
                                  "sharing of every link (docs/flow-simulator.md)."),
    ("alpha-beta", "alpha_beta_time_s", "The alpha-beta time of the same schedule: per step, the slowest "
                                        "transfer's start-up and route latency plus the time its busiest link "
                                        "needs for every byte crossing it in that step (an algorithm's own "
                                        "formula where it registers one, which ignores shared links); simulated "
                                        "minus this is the cost of how flows share links over time."),
    ("bound", "lower_bound_s", "The lower bound of this collective on this system, the one every command reports "
                               "(docs/derivations/lower-bounds.md)."),
    ("steps", "steps", "Steps (time slots) of the schedule; `transfers` counts its transfers and `events` the "
                       "simulator's rate periods."),
    ("max link load", "max_link_load", "The most flows sharing one directed link in one step (a property of the "
                                       "schedule); `peak_link_flows` is the most seen sending on one link at once."),
    ("total_link_bytes", "total_link_bytes", "Bytes carried, summed over links (a transfer counts once per link "
                                             "it crosses)."),
    ("step_time_s", "step_time_s", "JSON only: per step, its duration (bulk) or when its last flow finishes "
                                   "(dataflow, rank)."),
    ("links", "links", "JSON only: per link that carried bytes, `bytes`, `busy_s`, `busy_fraction` (busy time "
                       "over the total) and `utilisation` (bytes over bandwidth times the total time)."),
)


def legend(kind: str) -> list[tuple[str, str, str, str]]:
    """``(header, key, when shown, meaning)`` of every column of a kind's table, or of simulate's fields."""
    if kind == "simulate":
        line = {"simulated", "alpha-beta", "bound", "steps", "max link load", "algorithm", "collective", "system",
                "mode"}
        return [(h, k, "" if h in line else "in JSON/CSV", t) for h, k, t in SIMULATE]
    from ..core.errors import UnknownNameError
    model = next((m for m in models() if m.name == kind), None)
    if model is None and kind:
        raise UnknownNameError(f"no legend for {kind!r}; known: "
                               + ", ".join([m.name for m in models()] + ["simulate"]))
    cols = _merged(model.part_class.columns() if model is not None and model.part_class is not None else [])
    title = {"size_bytes": "when rows differ", "nodes": "when rows differ",
             "lower_bound_s": "when rows differ or with --wide"}
    return [(c.header.replace("-\n", "").replace("\n", " "), c.key,
             "with --wide" if c.wide else title.get(c.key, ""), c.legend) for c in cols]


def print_legend(kind: str, *, err: bool = False) -> None:
    """Print :func:`legend` as wrapped text (``--explain``)."""
    import shutil
    width = max(60, min(100, shutil.get_terminal_size((100, 24)).columns))
    echo("", err=err)
    echo(f"What the {'fields' if kind == 'simulate' else 'columns'} mean (JSON/CSV keys in parentheses):", err=err)
    for header, key, shown, text in legend(kind):
        echo(f"{header} ({key}{'; shown ' + shown if shown else ''})", err=err)
        echo(textwrap.fill(text, width, initial_indent="    ", subsequent_indent="    "), err=err)


def legend_markdown() -> str:
    """The legend as Markdown: the copy docs/output.md must hold."""
    out = []
    first = {}
    for model in models():
        if model.part_class is not None:
            first.setdefault(model.part_class, model)
    for kind, title in [*((m.name, view_for(m).legend_title) for m in first.values()), ("simulate", "simulate")]:
        out.append(f"### {title}\n")
        out.append("| column | key | shown | meaning |\n|---|---|---|---|")
        out += [f"| {h} | `{k}` | {s or 'always'} | {t} |" for h, k, s, t in legend(kind)]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(legend_markdown(), end="")
