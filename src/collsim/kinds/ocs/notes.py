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
    """:func:`crossovers` per size, from timed schedules at the switch's own ``r``.

    Parameters
    ----------
    entries : iterable of tuple
        ``(size_bytes, label, time_s, reconfigurations, reconfiguration_time_s)`` at the switch's ``r``:
        the time at any ``r`` is ``time_s - reconfiguration_time_s + reconfigurations * r``.

    Returns
    -------
    dict
        Size -> :func:`crossovers` intervals, sizes in first-seen order.

    Examples
    --------
    >>> crossovers_by_size([(8, "a", 1.0, 0, 0.0), (8, "b", 1.0, 4, 0.0078125)])  # b: 0.9921875 s + 4 r
    {8: [(4e-09, 0.001953125, 'b'), (0.001953125, 0.01, 'a')]}
    """
    lines: dict[int, list[dict[str, Any]]] = {}
    for size, label, time_s, reconf, reconf_s in entries:
        lines.setdefault(size, []).append({"algorithm": label, "params": {}, "reconfigurations": reconf,
                                           "comm_s": time_s - reconf_s})
    return {size: crossovers(rows) for size, rows in lines.items()}


def crossover_notes(spans: dict[int, list[tuple[float, float, str]]], every: bool = False) -> list[str]:
    """Per size, which schedule is fastest as ``r`` grows from 4 ns to 10 ms.

    Parameters
    ----------
    spans : dict
        :func:`crossovers_by_size`.
    every : bool, optional
        Every size, one winner throughout too, consecutive sizes that read alike on one line
        (``collsim tune``); default a line per size where the winner changes (``collsim compare``).

    Returns
    -------
    list of str
        The notes printed under the table.

    Examples
    --------
    >>> two = [(4e-9, 2e-6, "bruck"), (2e-6, 1e-2, "ring")]
    >>> spans = {1024: two, 2048: two, 4096: [(4e-9, 1e-2, "ring")]}
    >>> for line in crossover_notes(spans, every=True): print(line)
    fastest as r grows from 4 ns to 10 ms (1KiB to 2KiB): bruck to r = 2 µs, then ring
    fastest as r grows from 4 ns to 10 ms (4KiB): ring throughout
    """
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

    Parameters
    ----------
    trials : iterable of Trial
        :class:`~collsim.experiments.tune.Trial`, whose ``part`` holds the row's ``reconfigurations`` and
        ``reconfiguration_time_s`` (a trial without them, from another kind's row, is left out).

    Returns
    -------
    list of tuple
        ``(size_bytes, choice, time_s, reconfigurations, reconfiguration_time_s)``.

    Examples
    --------
    >>> from collsim.experiments.tune import Trial
    >>> part = {"reconfigurations": 2, "reconfiguration_time_s": 2e-5}
    >>> trial_entries([Trial("bruck", {}, 1024, 3e-5, 1e-5, 0.3, None, True, None, part=part),
    ...                Trial("ocs-auto", {"choice": "bruck"}, 1024, 3e-5, 1e-5, 0.3, None, True, None, part=part)])
    [(1024, 'bruck', 3e-05, 2, 2e-05)]
    """
    return [(t.size_bytes, t.choice, t.time_s, t.part["reconfigurations"], t.part["reconfiguration_time_s"])
            for t in trials if t.eligible and t.algorithm != "ocs-auto" and t.part
            and t.part.get("reconfigurations") is not None and t.part.get("reconfiguration_time_s") is not None]
