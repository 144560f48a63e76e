"""[WRHT23]'s figures as collsim draws them: Fig. 2 (all-reduce times) and the reductions figure.

Drawn by :func:`collsim.experiments.reproduce_wrht.reproduce` from its rows; kept apart from the
time model and the comparisons, which do not need matplotlib.

References
----------
F. Dai, Y. Chen, Z. Huang, H. Zhang, F. Zhang, "POSTER: Efficient All-reduce for Distributed DNN
Training in Optical Interconnect Systems", PPoPP 2023.
"""

from __future__ import annotations

from pathlib import Path

from .paperout import pyplot
from .reproduce_wrht import ALGS, MODELS, PAPER_REDUCTION, WAVELENGTHS, _crossing, _vector_bytes


_STYLE = {"e-ring": "tab:orange", "e-rd": "tab:red", "o-ring": "tab:blue", "wrht": "tab:green"}


def _fig2(rows, out_dir: Path, nodes, fig_gbps):
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    for ax, model in zip(axes.flat, MODELS):
        sel = [r for r in rows if r["model"] == model]
        for key, label in ALGS:
            col = f"{key.replace('-', '_')}_s"
            if key.startswith("e-"):
                for g, ls in zip(fig_gbps, ("-", ":")):
                    ys = [r[col] for n in nodes for r in sel if r["nodes"] == n and r["e_gbps"] == g]
                    ax.plot(nodes, ys, ls, marker="o", ms=3, color=_STYLE[key],
                            label=f"{label}, {g:g} Gb/s links (flow simulator)")
            else:
                g0 = fig_gbps[0]
                ys = [r[col] for n in nodes for r in sel if r["nodes"] == n and r["e_gbps"] == g0]
                yp = [r[col.replace("_s", "_paper_s")] for n in nodes for r in sel
                      if r["nodes"] == n and r["e_gbps"] == g0]
                ax.plot(nodes, ys, "-", marker="s", ms=4, color=_STYLE[key], label=f"{label} (schedule, collsim model)")
                ax.plot(nodes, yp, "--", marker="x", ms=5, color=_STYLE[key], label=f"{label} (paper eq. 3)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{model} ({MODELS[model] / 1e6:g} M parameters, {_vector_bytes(model) / 1e6:.1f} MB)")
        ax.grid(alpha=0.3, which="both")
    [ax.set_xlabel("nodes N") for ax in axes[1]] + [ax.set_ylabel("all-reduce time (s)") for ax in axes[:, 0]]
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(f"[WRHT23] Fig. 2: all-reduce time, electrical Ring/RD (single switch) vs optical Ring/WRHT "
                 f"(w={WAVELENGTHS}, 40 Gb/s per wavelength)", fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return fig


def _fig_reductions(means, out_dir: Path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    g = [m["e_gbps"] for m in means]
    series = [("vs_electrical_mean_pct", "vs best electrical (Ring/RD), collsim, mean", "tab:orange", "-"),
              ("vs_electrical_max_pct", "vs best electrical, collsim, best case", "tab:orange", ":"),
              ("vs_optical_mean_pct", "vs optical Ring, collsim model, mean", "tab:blue", "-"),
              ("vs_optical_paper_mean_pct", "vs optical Ring, paper eq. 3, mean", "tab:blue", "--"),
              ("vs_optical_paper_max_pct", "vs optical Ring, paper eq. 3, best case", "tab:blue", ":")]
    for key, label, col, ls in series:
        ax.plot(g, [max(m[key], -100) for m in means], ls, marker="o", ms=4, color=col, label=label)
    for what, col in (("electrical", "tab:orange"), ("optical", "tab:blue")):
        ax.axhline(PAPER_REDUCTION[what], color=col, lw=2, alpha=0.35,
                   label=f"paper: {PAPER_REDUCTION[what]} % vs {what}")
    cross = _crossing(means, "vs_electrical_mean_pct", PAPER_REDUCTION["electrical"])
    if cross is not None:
        ax.axvline(cross, color="tab:orange", lw=1, ls="-.",
                   label=f"collsim's mean reaches {PAPER_REDUCTION['electrical']} % at {cross:g} Gb/s")
    ax.set_xscale("log")
    ax.set_ylim(-100, 100)
    ax.set_xlabel("electrical link bandwidth (Gb/s, log scale)")
    ax.set_ylabel("WRHT's communication-time reduction (%)\n(clipped at -100 %)")
    ax.set_title("[WRHT23] abstract: WRHT's reduction over 4 DNNs x all N, against the electrical bandwidth")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig
