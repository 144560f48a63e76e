"""What ``collsim validate`` writes besides its table: the predicted-against-measured figure and the store's rows.

The rows come from :func:`collsim.mpi.validate.run_rows`; :func:`plot` draws them log–log against the
diagonal with the ±15 % band (:data:`collsim.mpi.validate.BAND`), :func:`store_rows` records them in
the results store (SQLite) that ``collsim results`` reads.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .validate import BAND, MODELS, ValidationRow

__all__ = ["plot", "store_rows"]

_LABELS = {"loggp_closed": "loggp-piecewise, closed form", "loggp_sim": "loggp-piecewise, flow simulator",
           "plain_closed": "plain α–β, closed form", "plain_sim": "plain α–β, flow simulator"}


def plot(rows: Sequence[ValidationRow], path: str, title: str) -> None:
    """Write the log–log predicted-against-measured figure with the ±15 % band (matplotlib, PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..core.files import atomic_write
    measured = np.array([r.median_s for r in rows]) * 1e6
    fig, ax = plt.subplots(figsize=(6.4, 5.6), dpi=110)
    lo = min(measured.min(), *(getattr(r, f"{m}_s") * 1e6 for r in rows for m in MODELS)) / 1.5
    hi = max(measured.max(), *(getattr(r, f"{m}_s") * 1e6 for r in rows for m in MODELS)) * 1.5
    line = np.geomspace(lo, hi, 50)
    ax.fill_between(line, line * (1 - BAND), line * (1 + BAND), color="0.85", label=f"±{100 * BAND:.0f} %")
    ax.plot(line, line, color="0.4", lw=1)
    styles = {"loggp_closed": ("o", "tab:blue"), "loggp_sim": ("x", "tab:cyan"), "plain_closed": ("s", "tab:red"),
              "plain_sim": ("+", "tab:orange")}
    for m in MODELS:
        marker, colour = styles[m]
        ax.scatter(measured, [getattr(r, f"{m}_s") * 1e6 for r in rows], marker=marker, color=colour,
                   label=_LABELS[m], s=28, facecolors="none" if marker in "os" else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured: median iteration of collsim's executor (µs)")
    ax.set_ylabel("predicted (µs)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    atomic_write(path, lambda fh: fig.savefig(fh, format="png"))
    plt.close(fig)


def store_rows(rows: Sequence[ValidationRow], path: str, calibration: str, system_name: str) -> int:
    """Record the rows in the results store (SQLite, :class:`collsim.experiments.sweep.store.Store`).

    Each row is a point ``{"experiment": "validate", "system", "calibration", "nodes", "collective",
    "algorithm", "size_bytes"}`` (``calibration`` a hash of the calibration file, so that two
    calibrations' validations are kept apart) whose result is :meth:`ValidationRow.to_json`.
    """
    from ..experiments.sweep.store import Store
    store = Store(path)
    for r in rows:
        point = {"experiment": "validate", "system": system_name, "calibration": calibration, "nodes": r.nodes,
                 "collective": r.collective, "algorithm": r.algorithm, "size_bytes": r.size_bytes}
        store.put(point, {**r.to_json(), "error": None})
    return len(rows)
