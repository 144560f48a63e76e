"""Figures 4–7 of the OpTree journal paper (seed 004), redrawn from collsim's numbers.

Every figure has one row of panels per model: the papers' eq. (3) on top, collsim's
verified schedules below, so the paper's story and collsim's sit one above the other.
The paper divides "each result by the initial result obtained from the OpTree
method": in each panel the curves are divided by OpTree's first point (depth 1 in
Fig. 4; the smallest message in Figs. 5–7), and the y axes are logarithmic.
"""

from __future__ import annotations

from typing import Any

from .paperout import pyplot
from .reproduce_optree_data import ALGORITHMS, KIB, LABELS, MIB

MODELS = (("eq3", "eq3_time_s", "paper's eq. (3)"), ("schedule", "time_s", "collsim's verified schedules"))
STYLE = {"optree": ("tab:red", "o"), "wrht": ("tab:blue", "s"), "ring": ("tab:green", "^"), "ne": ("tab:purple", "D"),
         "best": ("black", "*")}
BEST_LABEL = "collsim best"


def _size_label(size: int) -> str:
    return f"{size // MIB} MiB" if size >= MIB else f"{size // KIB} KiB"


def _panel(ax, rows: list[dict[str, Any]], key: str, title: str, xunit: int) -> int:
    """Draw the four algorithms' normalised times against message size; return the series drawn."""
    base = [r for r in rows if r["algorithm"] == "optree"]
    if not base:
        return 0
    ref = min(base, key=lambda r: r["size_bytes"])[key]
    drawn = 0
    for alg in (*ALGORITHMS, "best"):
        pts = sorted((r["size_bytes"], r[key] / ref) for r in rows if r["algorithm"] == alg and r[key] is not None)
        if not pts:
            continue
        colour, marker = STYLE[alg]
        ax.plot([s / xunit for s, _ in pts], [v for _, v in pts], marker=marker, color=colour,
                label=LABELS.get(alg, BEST_LABEL), lw=1.6, ms=4,
                ls="--" if alg == "ne" else "-")  # dashed: Ring shows where NE covers it
        drawn += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    sizes = sorted({r["size_bytes"] for r in rows})
    ax.set_xticks([s / xunit for s in sizes])
    ax.set_xticklabels([f"{s // xunit}" for s in sizes], fontsize=7)
    return drawn


def _grid_figure(panels: list[tuple[str, list[dict[str, Any]], int, str]], suptitle: str):
    """One column per panel, one row per model.  Returns (figure, series per axes)."""
    plt = pyplot()
    ncol = len(panels)
    fig, axes = plt.subplots(2, ncol, figsize=(3.3 * ncol + 0.6, 6.4), squeeze=False)
    counts = []
    for i, (mname, key, mlabel) in enumerate(MODELS):
        for j, (ptitle, rows, xunit, xlabel) in enumerate(panels):
            ax = axes[i][j]
            counts.append(_panel(ax, rows, key, f"{ptitle}\n{mlabel}", xunit))
            ax.set_xlabel(xlabel, fontsize=8)
            if j == 0:
                ax.set_ylabel("time / OpTree's time at the\nsmallest message (log)", fontsize=8)
    handles = {}
    for ax in axes.ravel():  # one legend for both rows: the best line is only in the schedules' row
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    axes[0][0].legend(list(handles.values()), list(handles), fontsize=7, loc="upper left")
    fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    return fig, counts


def fig4(rows: list[dict[str, Any]]):
    """Fig. 4: OpTree's time against tree depth k for each N, normalised by depth 1 (OSM).

    Parameters
    ----------
    rows : list of dict
        ``nodes, k, eq3_time_s, schedule_time_s`` (schedule time None where no tree of depth k exists).

    Returns
    -------
    tuple
        ``(figure, series per axes)``.

    Examples
    --------
    >>> rows = [{"nodes": 8, "k": k, "eq3_time_s": 4.0 / k, "schedule_time_s": 3.0 / k} for k in (1, 2, 3)]
    >>> fig, counts = fig4(rows); counts
    [1, 1]
    >>> pyplot().close(fig)
    """
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    counts = []
    nodes = sorted({r["nodes"] for r in rows})
    colours = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for ax, (mname, key, mlabel) in zip(axes, (("eq3", "eq3_time_s", "paper's eq. (3): Theorem 1 per depth"),
                                                ("schedule", "schedule_time_s",
                                                 "collsim: best verified tree per depth"))):
        inset = ax.inset_axes([0.45, 0.45, 0.5, 0.45])
        drawn = 0
        for c, n in zip(colours, nodes):
            pts = sorted((r["k"], r[key]) for r in rows if r["nodes"] == n and r[key] is not None)
            if not pts:
                continue
            ref = pts[0][1]
            ks, ys = [k for k, _ in pts], [v / ref for _, v in pts]
            ax.plot(ks, ys, marker="o", ms=3.5, color=c, label=f"N = {n}")
            best = min(range(len(ys)), key=lambda i: (ys[i], ks[i]))
            ax.plot([ks[best]], [ys[best]], marker="*", ms=12, color=c, mec="black", ls="none")
            zoom = [(k, y) for k, y in zip(ks, ys) if 4 <= k <= 10]
            inset.plot([k for k, _ in zoom], [y for _, y in zoom], marker="o", ms=2.5, color=c)
            drawn += 1
        counts.append(drawn)
        ax.set_yscale("log")
        ax.set_xlabel("tree depth k (number of stages; k = 1 is OSM)")
        ax.set_ylabel("time / time at k = 1 (log)")
        ax.set_title(f"{mlabel}\nw = 64, d = 4 MiB; ★ = fastest depth", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        inset.set_title("k = 4…10 (linear)", fontsize=7)
        inset.tick_params(labelsize=6)
        inset.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("Fig. 4: OpTree all-gather time against tree depth", fontsize=10)
    fig.tight_layout()
    return fig, counts


def fig5(rows: list[dict[str, Any]], small, large):
    """Fig. 5: the four algorithms against message size at N=1024, w=64: (a) small, (b) large.

    Parameters
    ----------
    rows : list of dict
        :func:`~collsim.experiments.reproduce_optree_data.grid_points` rows at N=1024, w=64.
    small, large : iterable of int
        The two size ranges, bytes.

    Returns
    -------
    tuple
        ``(figure, series per axes)``.

    Examples
    --------
    >>> rows = [{"algorithm": a, "size_bytes": s, "eq3_time_s": 1.0 * s, "time_s": 2.0 * s}
    ...         for a in ("optree", "ring") for s in (1024, 2048)]
    >>> fig, counts = fig5(rows, (1024,), (2048,)); counts
    [2, 2, 2, 2]
    >>> pyplot().close(fig)
    """
    small, large = set(small), set(large)
    panels = [("(a) small messages, N = 1024, w = 64", [r for r in rows if r["size_bytes"] in small], KIB,
               "message size per node (KiB)"),
              ("(b) large messages, N = 1024, w = 64", [r for r in rows if r["size_bytes"] in large], MIB,
               "message size per node (MiB)")]
    return _grid_figure(panels, "Fig. 5: all-gather time against message size (1024 nodes, 64 wavelengths)")


def fig6(rows: list[dict[str, Any]], nodes):
    """Fig. 6: the four algorithms against message size for each node count (w=64).

    Parameters
    ----------
    rows : list of dict
        Grid rows at w=64.
    nodes : iterable of int
        One panel per node count.

    Returns
    -------
    tuple
        ``(figure, series per axes)``.

    Examples
    --------
    >>> rows = [{"algorithm": "optree", "nodes": 8, "size_bytes": s, "eq3_time_s": 1.0, "time_s": 1.0}
    ...         for s in (1 << 20, 2 << 20)]
    >>> fig, counts = fig6(rows, (8,)); counts
    [1, 1]
    >>> pyplot().close(fig)
    """
    panels = [(f"({'abcdefgh'[i]}) N = {n}, w = 64", [r for r in rows if r["nodes"] == n], MIB,
               "message size per node (MiB)") for i, n in enumerate(nodes)]
    return _grid_figure(panels, "Fig. 6: all-gather time against message size for 512 … 4096 nodes (64 wavelengths)")


def fig7(rows: list[dict[str, Any]], wavelengths):
    """Fig. 7: the four algorithms against message size for each wavelength count (N=1024).

    Parameters
    ----------
    rows : list of dict
        Grid rows at N=1024.
    wavelengths : iterable of int
        One panel per wavelength count.

    Returns
    -------
    tuple
        ``(figure, series per axes)``.

    Examples
    --------
    >>> rows = [{"algorithm": "ne", "wavelengths": 4, "size_bytes": 1 << 20, "eq3_time_s": 1.0, "time_s": 1.0},
    ...         {"algorithm": "optree", "wavelengths": 4, "size_bytes": 1 << 20, "eq3_time_s": 2.0, "time_s": 1.0}]
    >>> fig, counts = fig7(rows, (4,)); counts
    [2, 2]
    >>> pyplot().close(fig)
    """
    notes = {128: " (§V-E's panel (d))", 256: " (Table 3's header)"}
    panels = [(f"({'abcdefgh'[i]}) w = {w}{notes.get(w, '')}, N = 1024", [r for r in rows if r["wavelengths"] == w],
               MIB, "message size per node (MiB)") for i, w in enumerate(wavelengths)]
    return _grid_figure(panels, "Fig. 7: all-gather time against message size for 4 … 256 wavelengths "
                                "(1024 nodes)")
