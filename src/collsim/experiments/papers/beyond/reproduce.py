"""``collsim reproduce beyond --out DIR``: what the WDM ring can do, beyond the papers.

Over seed 004's own evaluation grids (Fig. 5: N = 1024, w = 64, 32 KiB … 4096 MiB;
Fig. 6: N = 512 … 4096; Fig. 7: w = 4 … 256) every registered optical algorithm is
built with each parameter set it proposes, verified, checked by the physical layer
and timed (:mod:`collsim.experiments.papers.beyond.grid`).  The files:

* ``beyond-efficiency.csv``: every algorithm at every point, time against the lower bound;
* ``beyond-best.csv``: collsim's best physically feasible schedule per point beside
  OpTree's, their ratio, and OpTree's own distance from the bound (which caps how
  much faster any schedule can be);
* ``beyond-allreduce.csv``: the same for all-reduce at N = 1024, w = 64, 1 … 4096 MiB;
* ``slot-latency.csv``: the ranking as the per-slot latency grows from 0 to 10 µs, at
  32 KiB and 4 MiB, every parameter set that wins somewhere;
* figures ``efficiency``, ``slot-latency-32KiB`` and ``slot-latency-4MiB`` (PNG and SVG).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from .grid import COLUMNS, best_rows, efficiency_grid, efficiency_grids
from ...report.paperout import PaperResult, cached_figure, figure_digest, pyplot, write_csv
from ..optree.data import LARGE_SIZES, MIB, NODE_SIZES, NODES, SMALL_SIZES, WAVELENGTHS

TITLE = ("collsim beyond the papers: every algorithm against collsim's lower bound on seed 004's "
         "grids [OpTree24]")
ALLREDUCE_SIZES = tuple(MIB * 4 ** i for i in range(7))
"""1 MiB to 4⁶ MiB: the sizes of the all-reduce target."""
BEST_COLUMNS = ("figure", "nodes", "wavelengths", "size_bytes", "algorithm", "params", "time_s", "lower_bound_s",
                "efficiency", "runner_up", "optree_time_s", "optree_feasible", "speedup_vs_optree",
                "optree_over_bound")


QUICK_NODES = 256
"""The ring of a quick run: every panel's structure at a fraction of the builds."""


def grid(quick: bool = False) -> list[tuple[str, int, int, tuple]]:
    """The all-gather points: ``(figure, N, w, sizes)`` of Figs. 5–7, or a quick run's smaller rings."""
    if quick:
        n = QUICK_NODES
        return ([("fig5", n, 64, SMALL_SIZES + LARGE_SIZES)] + [("fig6", k, 64, NODE_SIZES) for k in (n // 2, n)]
                + [("fig7", n, w, NODE_SIZES) for w in (4, 16, 64)])
    pts = [("fig5", 1024, 64, SMALL_SIZES + LARGE_SIZES)]
    pts += [("fig6", n, 64, NODE_SIZES) for n in NODES]
    pts += [("fig7", 1024, w, NODE_SIZES) for w in WAVELENGTHS]
    return pts


def _best_table(pts, rows) -> list[dict[str, Any]]:
    opt = {(r["nodes"], r["wavelengths"], r["size_bytes"]): r for r in rows if r["algorithm"] == "optree"}
    best = {(b["nodes"], b["wavelengths"], b["size_bytes"]): b for b in best_rows(rows)}
    out = []
    for fig, n, w, sizes in pts:
        for size in sizes:
            b, o = best.get((n, w, size)), opt.get((n, w, size))
            if b is None:
                continue
            out.append({"figure": fig, **{k: b[k] for k in ("nodes", "wavelengths", "size_bytes", "algorithm",
                                                             "params", "time_s", "lower_bound_s", "efficiency",
                                                             "runner_up")},
                        "optree_time_s": None if o is None else o["time_s"],
                        "optree_feasible": None if o is None else o["feasible"],
                        "speedup_vs_optree": None if o is None else o["time_s"] / b["time_s"],
                        "optree_over_bound": None if o is None else o["time_s"] / o["lower_bound_s"]})
    return out


MARKERS = "osD^v<>ph*Xd"


def _styles(algorithms) -> dict[str, dict[str, Any]]:
    """One colour and marker per algorithm, the same in every panel."""
    plt = pyplot()
    cmap = plt.get_cmap("tab10" if len(algorithms) <= 10 else "tab20")
    # earlier names drawn wider and with larger markers, so that lines which coincide stay visible
    return {a: {"color": cmap(i % cmap.N), "marker": MARKERS[i % len(MARKERS)], "ms": max(3.0, 7.5 - 0.5 * i),
                "lw": max(1.0, 3.2 - 0.25 * i)} for i, a in enumerate(sorted(algorithms))}


def _efficiency_panel(ax, rows, x: str, title: str, xlabel: str, styles: dict[str, dict[str, Any]]) -> int:
    algs = sorted({r["algorithm"] for r in rows})
    drawn = 0
    for alg in algs:
        pts = sorted((r[x], r["efficiency"], r["feasible"]) for r in rows if r["algorithm"] == alg)
        feasible = all(f for _, _, f in pts)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=alg + ("" if feasible else " (infeasible)"),
                ls="-" if feasible else ":", mfc="none" if not feasible else None, **styles[alg])
        drawn += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(top=1.5)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    return drawn


def efficiency_figure(ag_rows, ar_rows, nodes: int = 1024):
    """Four panels of efficiency (lower bound / time, log): all-gather against size, N and w; all-reduce."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11.5, 9.0), squeeze=False)  # 2 x 2: legible at the report's width
    a = list(axes.flat)
    st = _styles({r["algorithm"] for r in list(ag_rows) + list(ar_rows)})
    sel = [r for r in ag_rows if r["nodes"] == nodes and r["wavelengths"] == 64]
    _efficiency_panel(a[0], [{**r, "x": r["size_bytes"] / MIB} for r in sel], "x",
                      f"all-gather, N={nodes}, w=64", "message per node (MiB)", st)
    sel = [r for r in ag_rows if r["wavelengths"] == 64 and r["size_bytes"] == 4 * MIB]
    _efficiency_panel(a[1], sel, "nodes", "all-gather, 4 MiB, w=64", "nodes N", st)
    sel = [r for r in ag_rows if r["nodes"] == nodes and r["size_bytes"] == 4 * MIB]
    _efficiency_panel(a[2], sel, "wavelengths", f"all-gather, 4 MiB, N={nodes}", "wavelengths w", st)
    _efficiency_panel(a[3], [{**r, "x": r["size_bytes"] / MIB} for r in ar_rows], "x",
                      f"all-reduce, N={nodes}, w=64", "vector (MiB)", st)
    for ax in (a[0], a[2]):
        ax.set_ylabel("efficiency = lower bound / time (log)")
    handles = {}
    for ax in a:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(4, len(handles)), fontsize=9,
               bbox_to_anchor=(0.5, -0.01))
    fig.suptitle("Every optical algorithm against collsim's lower bound (1 = optimal); dotted: needs lightpaths "
                 "the physical layer cannot carry", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def reproduce(out_dir: Path, *, store=None, jobs: int = 1, progress: Callable[[str], Any] | None = None,
              quick: bool = False, log: Callable[[str], Any] | None = None) -> PaperResult:
    """Write the efficiency grids, the best-vs-OpTree table and the slot-latency crossover into ``out_dir``."""
    from .slot_latency import crossovers, fill_lines, slot_latency_crossover
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pts = grid(quick)
    t0 = time.monotonic()

    def say(line: str) -> None:
        if log is not None:
            log(f"{line}, {time.monotonic() - t0:.0f} s")

    ring = QUICK_NODES if quick else 1024
    # one pool for both grids: the all-reduce's builds run beside the all-gather's largest, which
    # must run alone (build_pool's budget)
    ag, ar = efficiency_grids([([(n, w, s) for _, n, w, s in pts], "allgather"), ([(ring, 64, ALLREDUCE_SIZES)],
                                                                                  "allreduce")],
                              jobs=jobs, progress=progress, store=store, log=log)
    best = _best_table(pts, ag)
    ar_best = best_rows(ar)
    lat = {}
    if store is not None:   # the lines of both sizes built side by side, then read from the store below
        if progress is not None:
            progress("beyond: slot latency lines")
        fill_lines(ring, 64, ("32KiB", "4MiB"), store=store, jobs=jobs, tuned=True)
    for size in ("32KiB", "4MiB"):
        if progress is not None:
            progress(f"beyond: slot latency, {size}")
        lat[size] = slot_latency_crossover(ring, 64, size, tuned=True, store=store)
        say(f"beyond: slot latency at {size} done ({len({r['algorithm'] for r in lat[size]})} lines)")
    tables = [write_csv(out / "beyond-efficiency.csv", ag, COLUMNS).name,
              write_csv(out / "beyond-best.csv", best, BEST_COLUMNS).name,
              write_csv(out / "beyond-allreduce.csv", ar, COLUMNS).name,
              write_csv(out / "slot-latency.csv", lat["32KiB"] + lat["4MiB"]).name]
    import sys

    from . import slot_latency
    here = sys.modules[__name__]  # a second run into the same folder draws nothing new
    cached_figure(out, "efficiency", figure_digest("efficiency", ag, ar, ring, here),
                  lambda: efficiency_figure(ag, ar, ring))
    for size, name in (("32KiB", "slot-latency-32KiB"), ("4MiB", "slot-latency-4MiB")):
        cached_figure(out, name, figure_digest(name, lat[size], slot_latency),
                      lambda rows=lat[size]: slot_latency.slot_latency_figure(rows))
    say(f"beyond: {len(tables)} tables and 3 figures written to {out}")
    ratios = [b["speedup_vs_optree"] for b in best if b["speedup_vs_optree"] is not None]
    notes = [
        "Model: collsim's optical step model on the paper system (B = 5 GB/s per wavelength, 1 ns O/E/O per "
        "32 B flit, 25 µs MRR reconfiguration, no per-slot latency); lower bound from "
        "docs/derivations/lower-bounds.md; every schedule verified; 'best' = fastest physically feasible one.",
        f"Best feasible schedule vs OpTree over {len(ratios)} all-gather points: speed-up "
        f"{min(ratios):.2f}x to {max(ratios):.2f}x." if ratios else "No OpTree points.",
        f"All-reduce, N={ring}, w=64, 1 … 4096 MiB: lowest best efficiency " + (
            f"{min(b['efficiency'] for b in ar_best):.3f}" if ar_best else "-") + ".",
        *(f"Slot latency 0 to 10 us, {size}: " + ("; ".join(
            f"{c['before']} -> {c['after']} at {c['latency_s'] * 1e6:.3g} us" for c in crossovers(lat[size]))
            or f"{lat[size][0]['algorithm']} is fastest throughout") + "." for size in lat),
    ]
    if quick:
        notes.append(f"Quick run: rings of {QUICK_NODES // 2} and {QUICK_NODES} nodes instead of the paper's 512 … 4096.")
    captions = {"efficiency": "Efficiency (lower bound / time) of every registered optical algorithm, the best "
                              "parameters per point; dotted lines need lightpaths beyond the physical layer's reach.",
                **{f"slot-latency-{size}": f"Time against the per-slot latency at {size} per node, N = {ring}, "
                   f"w = 64: each algorithm's best parameters at 0 and every parameter set that wins somewhere, "
                   f"crossovers marked." for size in lat}}
    return PaperResult("beyond", TITLE, out, figures=("efficiency", "slot-latency-32KiB", "slot-latency-4MiB"),
                       tables=tuple(tables),
                       comparisons=(), notes=tuple(notes), captions=captions)
