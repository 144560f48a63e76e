"""The figure of ``collsim tune``: time against size for every algorithm, crossovers marked.

One line per algorithm through its fastest eligible parameter set at each size (a
marker ring where it is the pick), the lower bound dashed, and a dotted vertical line
with a label at each estimated crossover (:func:`collsim.experiments.tune.run.crossovers`).
An algorithm with no eligible trial at any size (on optical rings: no physically
feasible schedule) is drawn faint and dotted through its fastest time, labelled
``not feasible``, so the figure shows what the pick left out and why.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from ...core.collective import collective_type
from ...core.errors import InputError
from ...core.files import atomic_write
from ...core.units import format_size, format_time
from ..report.paperout import pyplot
from .run import Tuning
from .rules import crossovers

__all__ = ["FIGURE_SUFFIXES", "plot_tuning"]

FIGURE_SUFFIXES = (".png", ".svg")


def _per_algorithm(tuning: Tuning) -> dict[str, dict[int, tuple[float, bool]]]:
    """Per algorithm, per size: its fastest eligible time (True), else its fastest time (False)."""
    out: dict[str, dict[int, tuple[float, bool]]] = {}
    for t in sorted(tuning.trials, key=lambda t: (not t.eligible, t.time_s if t.time_s is not None else math.inf)):
        if t.time_s is None or not math.isfinite(t.time_s) or t.time_s <= 0:
            continue
        out.setdefault(t.algorithm, {}).setdefault(t.size_bytes, (t.time_s, t.eligible))
    return out


def _approx(size_bytes: int) -> str:
    """A crossover's size to three digits with a decimal prefix (it is an estimate): ``9.64MB``."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if size_bytes >= scale:
            return f"{size_bytes / scale:.3g}{prefix}B"
    return f"{size_bytes}B"


def plot_tuning(tuning: Tuning, path: str | Path) -> Path:
    """Draw a tuning's time against size (log-log) and write it as PNG or SVG, atomically.

    The file is byte-identical for equal tunings (no dates, a fixed SVG hash salt).
    """
    path = Path(path)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise InputError(f"the figure {path} must end in .png or .svg (the suffix chooses the format)")
    plt = pyplot()
    import matplotlib
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    lines = _per_algorithm(tuning)
    sizes = [c.size_bytes for c in tuning.choices]
    picks = {(c.best.algorithm, c.size_bytes) for c in tuning.choices if c.best is not None}
    fig, ax = plt.subplots(figsize=(8, 4.8))
    order = sorted(lines, key=lambda a: (not any(ok for _, ok in lines[a].values()), a))
    for alg in order:
        pts = lines[alg]
        feasible = any(ok for _, ok in pts.values())
        xs = [s for s in sizes if s in pts and (pts[s][1] or not feasible)]
        ys = [pts[s][0] for s in xs]
        if feasible:
            (line,) = ax.plot(xs, ys, "-o", ms=3, lw=1.5, label=alg)
            won = [s for s in xs if (alg, s) in picks]
            ax.plot(won, [pts[s][0] for s in won], "o", ms=9, mfc="none", color=line.get_color(), mew=1.5)
        else:
            ax.plot(xs, ys, ":", lw=1, alpha=0.45, label=f"{alg} (not feasible)")
    bounds = {}
    for t in tuning.trials:
        if t.lower_bound_s and t.size_bytes not in bounds:
            bounds[t.size_bytes] = t.lower_bound_s
    bx = [s for s in sizes if s in bounds]
    ax.plot(bx, [bounds[s] for s in bx], "--", color="black", lw=1, label="lower bound")
    _, ymax = ax.get_ylim()
    middle = math.sqrt(sizes[0] * sizes[-1])
    for i, cx in enumerate(crossovers(tuning)):
        x = cx["size_bytes"]
        right = x > middle  # labels lean away from the edge they would run over
        ax.axvline(x, color="grey", ls=":", lw=1)
        ax.annotate(f"{cx['before'] or 'none'} \u2192 {cx['after'] or 'none'}\nat \u2248{_approx(x)}", (x, ymax),
                    textcoords="offset points", xytext=(-3 if right else 3, -6 - 24 * (i % 3)), fontsize=7,
                    va="top", ha="right" if right else "left")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_size(int(round(v)))))
    ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    block = {"node": "a node's block", "pair": "a pair's block"}.get(collective_type(tuning.collective).blocks,
                                                                     "the vector")
    ax.set_xlabel(f"message size (collsim's size: {block})")
    ax.set_ylabel("time (s)")
    system = tuning.system
    first, last = tuning.choices[0], tuning.choices[-1]
    note = (f"fastest feasible: {first.best.choice if first.best else 'none'} at {format_size(first.size_bytes)}"
            + (f" ({format_time(first.best.time_s)})" if first.best else "")
            + (f", {last.best.choice} at {format_size(last.size_bytes)}" if last.best and len(sizes) > 1 else ""))
    ax.set_title(f"{tuning.collective} on {system.name} ({system.topology}, N={system.nodes}): time against size\n"
                 f"{note}; rings mark the pick", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fmt = path.suffix.lower()[1:]
    buf = io.BytesIO()
    meta = {"Software": None} if fmt == "png" else {"Date": None, "Creator": None}
    with matplotlib.rc_context({"svg.hashsalt": "collsim", "svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, metadata=meta, dpi=120, bbox_inches="tight")
    plt.close(fig)
    atomic_write(path, lambda fh, data=buf.getvalue(): fh.write(data))
    return path

