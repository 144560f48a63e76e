"""Reproduce seed 001 ([MLFM16]) §3 / Fig. 3: all-to-all throughput of ``mlfm`` and ``pairwise``.

The figure: per-node all-to-all throughput of the paper's ``mlfm`` rule and of
Open MPI's ``pairwise`` (shift) exchange on the MLFM test bed (d = 3, 32
servers) at the four scales 12, 18, 24-A and 24-B and the three sizes 16, 64
and 256 MiB per node, with the optimal throughput 3770 MiB/s (the measured
QDR ping-pong bandwidth) as a line.  collsim simulates both schedules with the
flow simulator on an ``MLFM`` system whose links run at 3770 MiB/s
(:mod:`collsim.experiments.papers.mlfm.throughput`, which also states every
definition).  The paper prints two numbers: the 2.2x ratio for 24 servers
pattern B and the 3770 MiB/s optimum that ``mlfm`` comes "close to".

Files written: ``mlfm-fig3.csv`` (one row per scale, size), ``fig3.png`` /
``fig3.svg`` and ``mlfm-comparison.csv`` / ``.md``.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from .throughput import (LINK_MIB_PER_S, PAPER_RATIO, SCALES, SIZES_MIB, ThroughputRow,
                              throughput_experiment)
from ...report.paperout import (Comparison, PaperResult, TableTarget, cached_figure, figure_digest, pyplot, save_figure,
                       stored, write_comparisons, write_csv)

TITLE = ("[MLFM16] T. Shimizu, M. Miwa, K. Nakashima, \"Acceleration of All-to-all Communication on "
         "Multi-Layer Full Mesh, Low-cost Connectable Network Topology\", SC16 poster, 2016")
QUICK_SIZES = (16,)
CLOSE_TO_OPTIMAL = 0.05
"""Relative distance to 3770 MiB/s read as the paper's "close to the optimal throughput"."""

NOTES = (
    "Test bed: MLFM(d=3, last_layer_servers=2), 32 servers; scales 12 (2,3,2), 18 (3,3,2), 24-A (3,4,2), "
    "24-B (2,4,3) as (n, l, m); end nodes are the selected servers in (i, j, k) lexicographic order.",
    "Links: 3770 MiB/s (the paper's ping-pong bandwidth, which it calls the optimal throughput), 1 us latency; "
    "FDR spines and QDR leaves are both modelled at that rate.",
    "Sizes: '16, 64, 256MiB per node' read as the binary send buffer; each pair block is floor(buffer / N) bytes.",
    "Per-node throughput = (N-1) * block / simulated completion time (flow simulator, max-min fair sharing, "
    "bulk-synchronous phases, as Open MPI's blocking pairwise send-receive per phase).",
    "pairwise places rank r on the r-th selected server (lexicographic order): the paper does not state its "
    "MPI rank mapping.",
    "Only the 2.2x ratio (24-B) and the 3770 MiB/s optimum are printed; Fig. 3's bars carry no numbers.",
    "pairwise's same-column routing is an assumption the paper does not state. collsim computes three: the MLFM "
    "paper's own spine rule {j, (j+k+1) mod l} by source index k (MLFM.next_hop), a spine chosen by the destination "
    "(InfiniBand's destination-based forwarding tables), and one fixed spine per column. The spine rule and the "
    "destination-based choice give the same ratios; a fixed spine per column gives others (rows and fig3). The "
    "test bed most plausibly used destination-based routing: InfiniBand switches forward on the destination LID "
    "through tables the subnet manager (OpenSM) fills, spreading destinations over the equal-hop spines, and "
    "Open MPI's stock pairwise sends to the default LID; a source-dependent spine would need extra LIDs (LMC) "
    "that pairwise does not use, and a single spine per column would leave the other spines idle.",
)
ROUTING_LABELS = {"spine-rule": "pairwise, spine rule (= destination-based)", "fixed-spine": "pairwise, fixed spine"}


def _figure(rows, fixed, out_dir: Path, sizes):
    plt = pyplot()
    scales = list(SCALES)
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.1 * len(sizes), 4.4), sharey=True, squeeze=False)
    width = 0.27
    for ax, size in zip(axes[0], sizes):
        sel = {r.scale: r for r in rows if r.size_mib_per_node == size}
        fix = {r.scale: r for r in fixed if r.size_mib_per_node == size}
        x = range(len(scales))
        ax.bar([i - width for i in x], [sel[s].mlfm_mib_per_s for s in scales], width,
               label="mlfm (proposed)", color="tab:blue")
        ax.bar(list(x), [sel[s].pairwise_mib_per_s for s in scales], width,
               label=ROUTING_LABELS["spine-rule"], color="tab:orange")
        ax.bar([i + width for i in x], [fix[s].pairwise_mib_per_s for s in scales], width,
               label=ROUTING_LABELS["fixed-spine"], color="tab:orange", alpha=0.45, hatch="//", edgecolor="tab:brown")
        ax.axhline(LINK_MIB_PER_S, color="k", ls="--", lw=1, label=f"optimal {LINK_MIB_PER_S:.0f} MiB/s")
        for i, s in enumerate(scales):
            for dx, r in ((0, sel[s]), (width, fix[s])):
                ax.annotate(f"{r.ratio:.2f}x", (i + dx, r.pairwise_mib_per_s), ha="center", va="bottom", fontsize=8,
                            xytext=(0, 2), textcoords="offset points")
            if s in PAPER_RATIO:  # the paper's printed ratio: the pairwise throughput it implies
                y = sel[s].mlfm_mib_per_s / PAPER_RATIO[s]
                ax.plot([i - 0.6 * width, i + 0.5 * width], [y, y], color="tab:red", lw=2.2,
                        label=f"paper: mlfm / {PAPER_RATIO[s]:g} (the printed {PAPER_RATIO[s]:g}x, 24-B)")
                ax.annotate(f"paper {PAPER_RATIO[s]:g}x", (i, y), color="tab:red", fontsize=9,
                            ha="center", va="bottom", xytext=(0, 13), textcoords="offset points")
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{s}\n{SCALES[s]}" for s in scales])
        ax.set_xlabel("scale (servers; (n, l, m))")
        ax.set_title(f"{size:g} MiB per node")
        ax.set_ylim(0, LINK_MIB_PER_S * 1.15)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("throughput per node (MiB/s)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.suptitle("[MLFM16] Fig. 3: all-to-all throughput on the MLFM test bed (collsim flow simulator; "
                 "labels: ratio mlfm / pairwise under each routing)", fontsize=10)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=9, bbox_to_anchor=(0.5, 0.0))
    return fig


def comparisons(rows, fixed=()) -> list[Comparison]:
    """The paper's printed numbers beside collsim's, from the experiment's rows."""
    out = []
    for routing, sel in (("spine-rule", rows), ("fixed-spine", fixed)):
        for r in sel:
            if r.scale not in PAPER_RATIO:
                continue
            model = "flow simulator (collsim.sim.simulate, bulk) on MLFM(d=3, selection=(2,4,3))" + (
                "" if routing == "spine-rule" else ", pairwise over a fixed spine per column")
            why = "" if abs(r.ratio - 2.2) <= 0.025 * 2.2 else (
                f"with one spine per column all of pairwise's same-column flows cross the same leaf-spine links "
                f"(max link load {r.pairwise_max_link_load}): {r.pairwise_mib_per_s:.0f} MiB/s; the paper's "
                "routing is not stated (notes: destination-based routing, the likelier, gives the spine rule's "
                "ratio)" if routing == "fixed-spine" else
                "pairwise's lexicographic rank placement loads a leaf-spine link with 3 flows; the paper's "
                "mapping is not stated")
            out.append(Comparison(
                "§3, Fig. 3, abstract", f"throughput ratio mlfm / pairwise, 24 servers pattern B, "
                f"{r.size_mib_per_node:g} MiB per node", "x", PAPER_RATIO[r.scale], round(r.ratio, 6), model, why,
                rtol=0.025, claim="§3: 2.2 times higher throughput, 24 servers pattern B"))
    for r in rows:
        if r.scale == "24-B":
            out.append(Comparison(
                "§3, Fig. 3", f"mlfm throughput per node, 24-B, {r.size_mib_per_node:g} MiB per node "
                f"('close to the optimal throughput')", "MiB/s", LINK_MIB_PER_S, round(r.mlfm_mib_per_s, 3),
                "flow simulator (collsim.sim.simulate, bulk) on MLFM(d=3, selection=(2,4,3))",
                "" if r.mlfm_mib_per_s >= (1 - CLOSE_TO_OPTIMAL) * LINK_MIB_PER_S else
                "startup and per-phase latency keep small blocks below the link rate", rtol=CLOSE_TO_OPTIMAL,
                claim="§3: mlfm 'close to the optimal throughput' 3770 MiB/s, 24 servers pattern B"))
    return out


def reproduce(out_dir: Path, *, store=None, jobs: int = 1, progress=None, quick: bool = False) -> PaperResult:
    """Regenerate [MLFM16] Fig. 3 and its comparison table in ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sizes = QUICK_SIZES if quick else SIZES_MIB
    if progress:
        progress(f"mlfm: simulating {len(SCALES)} scales x {len(sizes)} sizes")
    def experiment(routing: str) -> list[ThroughputRow]:
        point = {"experiment": "mlfm-throughput", "system": "mlfm-testbed", "sizes": list(sizes),
                 "pairwise_routing": routing}
        got = stored(store, point, lambda: [asdict(r) for r in throughput_experiment(tuple(SCALES), sizes,
                                                                                       pairwise_routing=routing)])
        return [ThroughputRow(**{**d, "select": tuple(d["select"])}) for d in got]
    rows, fixed = experiment("spine-rule"), experiment("fixed-spine")
    records = []
    for routing, sel in (("spine-rule", rows), ("fixed-spine", fixed)):
        for r in sel:
            d = asdict(r)
            d["select"] = list(d["select"])
            d["size_bytes"] = r.block_bytes
            d["total_bytes"] = r.block_bytes * r.nodes
            d["pairwise_routing"] = routing
            records.append(d)
    write_csv(out_dir / "mlfm-fig3.csv", records)
    import sys
    cached_figure(out_dir, "fig3", figure_digest("fig3", records, list(sizes), sys.modules[__name__]),
                  lambda: _figure(rows, fixed, out_dir, sizes), save=lambda f, o, n: save_figure(f, o, n))
    comps = comparisons(rows, fixed)
    write_comparisons(out_dir, "mlfm", comps)
    target_rows = stored(store, {"experiment": "mlfm-congestion", "system": "mlfm"}, _congestion_target)
    write_csv(out_dir / "table-mlfm-congestion.csv", target_rows)
    targets = (TableTarget.of("mlfm-congestion", congestion_verdict(target_rows), "table-mlfm-congestion.csv"),
               TableTarget.of("mlfm-throughput", throughput_verdict(rows, fixed), "mlfm-fig3.csv"))
    caption = ("Per-node all-to-all throughput of mlfm (blue) and pairwise (orange: same-column traffic over the "
               "MLFM paper's spine rule, which destination-based routing matches; hatched: over one fixed spine per "
               "column) at the four scales, one panel per message size; dashed: the 3770 MiB/s optimum; labels: "
               "the ratio mlfm / pairwise; red: the pairwise throughput the paper's printed 2.2x implies at 24-B "
               "(flow simulator, max-min fair, bulk-synchronous phases).")
    return PaperResult("mlfm", TITLE, out_dir, figures=("fig3",), tables=("mlfm-fig3.csv", "table-mlfm-congestion.csv"),
                       comparisons=tuple(comps), notes=NOTES, captions={"fig3": caption}, targets=targets)


def _congestion_target() -> list[dict]:
    from ..tables import mlfm_congestion
    return mlfm_congestion()


def congestion_verdict(rows) -> str:
    """What ``mlfm-congestion`` found, every number from its rows and collsim's exhaustive check."""
    from .congestion import check_selection
    valid = sum(r["paper_valid"] for r in rows)
    free = sum(r["paper_congestion_free"] for r in rows)
    ok = all(r["ok_iff_correct"] for r in rows)
    ds = f"d = {rows[0]['d']}…{rows[-1]['d']}"
    a = check_selection(3, *SCALES["24-A"])
    b = check_selection(3, *SCALES["24-B"])
    return (f"The printed condition 1 ≤ ℓ−1 ≤ m ≤ d, 1 ≤ n ≤ d admits {valid} selections for {ds}, of which only "
            f"{free} are congestion-free under the paper's rule ({valid - free} congest or miss pairs). The rule is "
            f"congestion-free exactly when 1 ≤ m ≤ ℓ−1 ≤ d, 1 ≤ n ≤ d"
            + (" (every selection checked)" if ok else " (NOT for every selection checked)")
            + f". The paper's own pattern A (n, ℓ, m) = {SCALES['24-A']} {'satisfies' if a.paper_condition else 'violates'} its printed condition and is "
            f"{'congestion-free' if a.congestion_free else 'congested'}; pattern B {SCALES['24-B']} is "
            f"{'congestion-free' if b.congestion_free else 'congested'}.")


def throughput_verdict(rows, fixed) -> str:
    """The 2.2x of pattern B under both routings of pairwise, in one sentence."""
    def span(sel):
        r = [x.ratio for x in sel if x.scale == "24-B"]
        return f"{min(r):.2f}–{max(r):.2f}x" if len(r) > 1 else f"{r[0]:.2f}x"
    return (f"Pattern B's printed 2.2x: {span(rows)} with pairwise over the spine rule (or destination-based "
            f"routing, the likelier on the InfiniBand test bed), {span(fixed)} over a fixed spine per column.")


__all__ = ["comparisons", "reproduce"]
