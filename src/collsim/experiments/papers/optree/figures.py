"""Figures 4–7 of the OpTree journal paper (seed 004), redrawn from collsim's numbers.

Every figure has one row of panels per model: the papers' eq. (3) on top, collsim's
verified schedules below, so the paper's story and collsim's sit one above the other.
The paper divides "each result by the initial result obtained from the OpTree
method": in each panel the curves are divided by OpTree's first point (depth 1 in
Fig. 4; the smallest message in Figs. 5–7), and the y axes are logarithmic.
"""

from __future__ import annotations

from typing import Any

from ...report.paperout import pyplot
from .data import ALGORITHMS, KIB, LABELS, MIB

MODELS = (("eq3", "eq3_time_s", "paper's eq. (3)"), ("schedule", "time_s", "collsim's verified schedules"))
STYLE = {"optree": ("tab:red", "o"), "wrht": ("tab:blue", "s"), "ring": ("tab:green", "^"), "ne": ("tab:purple", "D"),
         "best": ("black", "*")}
LINES = {"optree": dict(ls="-", lw=1.6, ms=4, zorder=3), "wrht": dict(ls=":", lw=1.8, ms=5, zorder=5),
         "ring": dict(ls="-", lw=4.0, ms=7, zorder=2, alpha=0.55), "ne": dict(ls="--", lw=1.6, ms=4, zorder=4),
         "best": dict(ls="-", lw=1.6, ms=6, zorder=3)}
"""Line styles that keep coinciding curves apart: Ring wide and pale underneath, NE dashed above it, WRHT dotted on
top, each with its own marker, NE's and Ring's markers on alternate sizes (in the schedules' row the three
lie within a few per cent of one another)."""
MARK_EVERY = {"ring": (0, 2), "ne": (1, 2)}
BEST_LABEL = "collsim best (not in the paper)"
FONT = {"title": 10, "label": 9, "tick": 8, "legend": 8, "note": 7.5}


def _size_label(size: int) -> str:
    return f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB"


def _panel(ax, rows: list[dict[str, Any]], key: str, title: str, xunit: int) -> int:
    """Draw the four algorithms' normalised times against message size; return the series drawn."""
    base = [r for r in rows if r["algorithm"] == "optree"]
    if not base:
        return 0
    ref = min(base, key=lambda r: r["size_bytes"])[key]
    drawn = 0
    last: dict[str, float] = {}
    for alg in (*ALGORITHMS, "best"):
        pts = sorted((r["size_bytes"], r[key] / ref) for r in rows if r["algorithm"] == alg and r[key] is not None)
        if not pts:
            continue
        colour, marker = STYLE[alg]
        ax.plot([s / xunit for s, _ in pts], [v for _, v in pts], marker=marker, color=colour,
                label=LABELS.get(alg, BEST_LABEL), markevery=MARK_EVERY.get(alg), **LINES[alg])
        last[alg] = pts[-1][1]
        drawn += 1
    if "ring" in last and len(last) > 2:  # what the eye cannot separate, in numbers
        vals = [f"{LABELS.get(a, 'best')} {last[a] / last['ring']:.3g}" for a in ("wrht", "ne", "optree", "best")
                if a in last]
        text = "time ÷ Ring's, largest size:\n" + ", ".join(vals[:2]) + ("\n" + ", ".join(vals[2:]) if vals[2:] else "")
        # the upper left is empty: every curve rises from the lower left
        ax.text(0.03, 0.97, text, transform=ax.transAxes, ha="left", va="top", fontsize=FONT["note"],
                bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.7", alpha=0.9), zorder=10)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(title, fontsize=FONT["title"])
    ax.grid(True, which="both", alpha=0.3)
    sizes = sorted({r["size_bytes"] for r in rows})
    ax.set_xticks([s / xunit for s in sizes])
    ax.set_xticklabels([f"{s // xunit}" for s in sizes], fontsize=FONT["tick"])
    ax.tick_params(axis="y", labelsize=FONT["tick"])
    return drawn


def _grid_figure(panels: list[tuple[str, list[dict[str, Any]], int, str]], suptitle: str, max_cols: int = 3):
    """Per model a block of rows of at most ``max_cols`` panels (eq. 3 above, schedules below).

    Returns (figure, series per axes), the axes in model-then-panel order.  Wrapping keeps every
    figure at most about 1.3k px wide, so its text stays legible when the report shows it whole.
    """
    plt = pyplot()
    per_model = -(-len(panels) // max_cols)
    ncol = -(-len(panels) // per_model)  # balanced: 4 panels as 2 x 2, 5 as 3 + 2
    fig, axes = plt.subplots(2 * per_model, ncol, figsize=(3.5 * ncol + 0.8, 3.6 * 2 * per_model + 0.8),
                             squeeze=False)
    counts = []
    for i, (mname, key, mlabel) in enumerate(MODELS):
        for j, (ptitle, rows, xunit, xlabel) in enumerate(panels):
            ax = axes[i * per_model + j // ncol][j % ncol]
            counts.append(_panel(ax, rows, key, f"{ptitle}\n{mlabel}", xunit))
            ax.set_xlabel(xlabel, fontsize=FONT["label"])
            if j % ncol == 0:
                ax.set_ylabel("time / OpTree's time at the\nsmallest message (log)", fontsize=FONT["label"])
        for j in range(len(panels), per_model * ncol):
            axes[i * per_model + j // ncol][j % ncol].set_visible(False)
    handles = {}
    for ax in axes.ravel():  # one legend for both rows: the best line is only in the schedules' row
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.suptitle(suptitle, fontsize=FONT["title"] + 1)
    fig.tight_layout(rect=(0, 0.04, 1, 0.98))
    fig.legend(list(handles.values()), list(handles), fontsize=FONT["legend"] + 1, loc="lower center",
               ncol=len(handles), bbox_to_anchor=(0.5, 0.0))
    return fig, counts


TIE_RTOL = 1e-9
"""Depths whose times are within this of the fastest are starred as ties (eq. 3 gives equal step counts)."""


def fig4(rows: list[dict[str, Any]], paper_depths: dict[int, int] | None = None):
    """Fig. 4: OpTree's time against tree depth k for each N, normalised by depth 1 (OSM).

    Every fastest depth is starred (eq. 3 ties at k = 5–7 for N = 512 and 6–7 for N = 1024), and
    the paper's optimal depths are ringed.
    """
    from matplotlib.lines import Line2D
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
    counts = []
    nodes = sorted({r["nodes"] for r in rows})
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    paper = paper_depths or {}
    for ax, (mname, key, mlabel) in zip(axes, (("eq3", "eq3_time_s", "paper's eq. (3): Theorem 1 per depth"),
                                                ("schedule", "schedule_time_s",
                                                 "collsim: best verified tree per depth"))):
        # above every curve from k = 3 on (they are below 0.08 of k = 1): the inset hides no point
        inset = ax.inset_axes([0.33, 0.52, 0.64, 0.39])
        drawn = 0
        for c, n in zip(colours, nodes):
            pts = sorted((r["k"], r[key]) for r in rows if r["nodes"] == n and r[key] is not None)
            if not pts:
                continue
            ref = pts[0][1]
            ks, ys = [k for k, _ in pts], [v / ref for _, v in pts]
            ax.plot(ks, ys, marker="o", ms=3.5, color=c, label=f"N = {n}")
            low = min(ys)
            tied = [i for i in range(len(ys)) if ys[i] <= low * (1 + TIE_RTOL)]  # eq. (3) ties: every one starred
            zoom = [(k, y) for k, y in zip(ks, ys) if 4 <= k <= 10]
            inset.plot([k for k, _ in zoom], [y for _, y in zoom], marker="o", ms=2.5, color=c)
            for a, size in ((ax, 13), (inset, 9)):
                a.plot([ks[i] for i in tied], [ys[i] for i in tied], marker="*", ms=size, color=c, mec="black",
                       ls="none", zorder=5)
                if n in paper and paper[n] in ks:
                    i = ks.index(paper[n])
                    a.plot([ks[i]], [ys[i]], marker="o", ms=size + 4, mfc="none", mec="black", mew=1.4,
                           ls="none", zorder=6)
            drawn += 1
        counts.append(drawn)
        ax.set_yscale("log")
        ax.set_xlabel("tree depth k (number of stages; k = 1 is OSM)", fontsize=9)
        ax.set_ylabel("time / time at k = 1 (log)", fontsize=9)
        ax.set_title(f"{mlabel}, w = 64, d = 4 MiB", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        inset.set_title("k = 4…10 (linear)", fontsize=8)
        inset.tick_params(labelsize=7)
        inset.grid(True, alpha=0.3)
        extra = [Line2D([], [], marker="*", ms=11, color="0.5", mec="black", ls="none",
                        label="fastest depth (every tie starred)")]
        if paper:
            extra.append(Line2D([], [], marker="o", ms=11, mfc="none", mec="black", mew=1.4, ls="none",
                                label="paper's optimal depth (" + ", ".join(str(paper[n]) for n in nodes
                                                                          if n in paper) + ")"))
        handles, labels = ax.get_legend_handles_labels()
    fig.suptitle("Fig. 4: OpTree all-gather time against tree depth", fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.legend(handles + extra, labels + [h.get_label() for h in extra], fontsize=9, loc="lower center",
               ncol=len(handles) + len(extra), bbox_to_anchor=(0.5, 0.0))  # below the panels: it hides no curve
    return fig, counts


def fig5(rows: list[dict[str, Any]], small, large):
    """Fig. 5: the four algorithms against message size at N=1024, w=64: (a) small, (b) large."""
    small, large = set(small), set(large)
    panels = [("(a) small messages, N = 1024, w = 64", [r for r in rows if r["size_bytes"] in small], KIB,
               "message size per node (KiB)"),
              ("(b) large messages, N = 1024, w = 64", [r for r in rows if r["size_bytes"] in large], MIB,
               "message size per node (MiB)")]
    return _grid_figure(panels, "Fig. 5: all-gather time against message size (1024 nodes, 64 wavelengths)")


def fig6(rows: list[dict[str, Any]], nodes):
    """Fig. 6: the four algorithms against message size for each node count (w=64)."""
    panels = [(f"({'abcdefgh'[i]}) N = {n}, w = 64", [r for r in rows if r["nodes"] == n], MIB,
               "message size per node (MiB)") for i, n in enumerate(nodes)]
    return _grid_figure(panels, "Fig. 6: all-gather time against message size for 512 … 4096 nodes (64 wavelengths)")


def fig7(rows: list[dict[str, Any]], wavelengths):
    """Fig. 7: the four algorithms against message size for each wavelength count (N=1024)."""
    notes = {128: " (§V-E's panel (d))", 256: " (Table 3's header)"}
    panels = [(f"({'abcdefgh'[i]}) w = {w}{notes.get(w, '')}, N = 1024", [r for r in rows if r["wavelengths"] == w],
               MIB, "message size per node (MiB)") for i, w in enumerate(wavelengths)]
    return _grid_figure(panels, "Fig. 7: all-gather time against message size for 4 … 256 wavelengths "
                                "(1024 nodes)")
