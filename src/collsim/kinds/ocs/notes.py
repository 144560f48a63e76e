"""What ``collsim compare`` and ``collsim tune`` print about an optical circuit switch's crossovers.

Each schedule's time on the switch is linear in the reconfiguration delay ``r`` (its communication
plus ``r`` per reconfiguration), so :func:`~collsim.kinds.ocs.crossovers.crossovers` gives the exact values
of ``r`` where the fastest one changes.  :func:`crossovers_by_size` groups timed schedules per size
and :func:`crossover_notes` words the result, as :class:`~collsim.kinds.ocs.model.OCSModel`'s ``captions``
(under ``compare``'s table) and ``tune_notes`` (under ``tune``'s) print it (docs/ocs.md).
"""

from __future__ import annotations

from typing import Any

from .crossovers import crossovers
from ...core.units import format_size, format_time

__all__ = ["crossover_notes", "crossovers_by_size", "trial_entries"]


def crossovers_by_size(entries) -> dict[int, list[tuple[float, float, str]]]:
    """:func:`crossovers` per size, from timed schedules at the switch's own ``r``."""
    lines: dict[int, list[dict[str, Any]]] = {}
    for size, label, time_s, reconf, reconf_s in entries:
        lines.setdefault(size, []).append({"algorithm": label, "params": {}, "reconfigurations": reconf,
                                           "comm_s": time_s - reconf_s})
    return {size: crossovers(rows) for size, rows in lines.items()}


def crossover_notes(spans: dict[int, list[tuple[float, float, str]]], every: bool = False) -> list[str]:
    """Per size, which schedule is fastest as ``r`` grows from 4 ns to 10 ms."""
    said: list[list] = []  # [first size, last size, text]
    for size, runs in spans.items():
        text = (", ".join(f"{label} to r = {format_time(hi)}" for _, hi, label in runs[:-1]) + f", then {runs[-1][2]}"
                if len(runs) > 1 else f"{runs[0][2]} throughout" if runs and every else None)
        if text and every and said and said[-1][2] == text:
            said[-1][1] = size
        elif text:
            said.append([size, size, text])
    return [f"fastest as r grows from 4 ns to 10 ms ({format_size(a)}{'' if a == b else ' to ' + format_size(b)}): {t}"
            for a, b, t in said]


def trial_entries(trials) -> list[tuple[int, str, float, int, float]]:
    """:func:`crossovers_by_size`'s entries from ``collsim tune``'s eligible trials (``ocs-auto``, a choice, left out).
    """
    return [(t.size_bytes, t.choice, t.time_s, t.part["reconfigurations"], t.part["reconfiguration_time_s"])
            for t in trials if t.eligible and t.algorithm != "ocs-auto" and t.part
            and t.part.get("reconfigurations") is not None and t.part.get("reconfiguration_time_s") is not None]
