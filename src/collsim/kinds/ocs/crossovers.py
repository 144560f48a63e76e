"""Where the fastest algorithm on a circuit switch changes with the reconfiguration delay ``r``.

A schedule's time on the switch is linear in ``r`` (its communication time plus ``r`` per
reconfiguration, :func:`collsim.kinds.ocs.system.ocs_time_s`), so over candidates' rows
``{comm_s, reconfigurations}`` the winner at ``r`` (:func:`best_at`) changes only at the
crossings of those lines (:func:`crossovers`).

References
----------
H. Ballani et al., "Sirius: A Flat Datacenter Network with Nanosecond Optical Switching", SIGCOMM
2020; N. P. Jouppi et al., "TPU v4: An Optically Reconfigurable Supercomputer for Machine Learning
with Hardware Support for Embeddings", ISCA 2023.
"""

from __future__ import annotations

from typing import Any


def crossovers(rows: list[dict[str, Any]], lo_s: float = 4e-9, hi_s: float = 1e-2) -> list[tuple[float, float, str]]:
    """Where each candidate wins as ``r`` goes from ``lo_s`` to ``hi_s``: the lower envelope of lines.

    References
    ----------
    H. Ballani et al., SIGCOMM 2020 (nanosecond switching); N. P. Jouppi et al., "TPU v4: An Optically
    Reconfigurable Supercomputer for Machine Learning with Hardware Support for Embeddings", ISCA 2023
    (millisecond MEMS switching): the two ends of the range.
    """
    def label(row):
        extra = " ".join(f"{k}={v}" for k, v in sorted(row["params"].items()) if k in ("degree",))
        return f"{row['algorithm']} {extra}".strip()

    out: list[tuple[float, float, str]] = []
    r = lo_s
    while r < hi_s:
        win = best_at(rows, r)
        cuts = [(row["comm_s"] - win["comm_s"]) / (win["reconfigurations"] - row["reconfigurations"])
                for row in rows if row["reconfigurations"] < win["reconfigurations"]]
        nxt = min([c for c in cuts if c > r * (1 + 1e-9)] + [hi_s])
        if out and out[-1][2] == label(win):  # a tie at the cut: the same winner goes on
            out[-1] = (out[-1][0], nxt, out[-1][2])
        else:
            out.append((r, nxt, label(win)))
        r = nxt
    return out


def best_at(rows: list[dict[str, Any]], r: float) -> dict[str, Any]:
    """The row of :func:`collsim.algorithms.ocs.candidate_times` with the least time at ``r``; ties (1e-9) to fewer reconfigurations.

    References
    ----------
    H. Ballani et al., SIGCOMM 2020 (the reconfiguration charge per phase change).
    """
    times = [row["comm_s"] + row["reconfigurations"] * r for row in rows]
    least = min(times)
    return min((row for row, t in zip(rows, times) if t <= least * (1 + 1e-9)), key=lambda row: row["reconfigurations"])
