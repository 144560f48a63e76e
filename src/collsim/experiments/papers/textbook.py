"""Reproduce seed 002 ([Grama03] ch. 4): the communication times of the basic operations.

The chapter gives, for each basic operation, a ``t_s + t_w m`` cost on a ring,
a 2-D wraparound mesh and a hypercube (its summary table lists the hypercube
column; the ring and mesh costs are in the text).  Here every formula is
evaluated at one configuration (p = 16 nodes, a 4 x 4 torus, a 4-cube;
t_s = 10 us, t_w = 1 ns/byte, m = 64 KiB, circular shift q = 5) and set beside
the flow simulator's time (:func:`collsim.sim.simulate`) of *every* algorithm
collsim registers for that operation on an electrical network, run on that
topology with ``startup_s = t_s``, link bandwidth ``1 / t_w`` and zero per-hop
latency (the chapter charges no per-hop term; docs/algorithms/textbook-and-mpi.md,
D6).  ``m`` is the chapter's message: the per-node block for all-to-all
broadcast, scatter and gather, the per-pair block for all-to-all personalized,
the whole vector for broadcast, reduction, all-reduce and prefix sums.

Where the chapter's algorithm is the one simulated, the two agree exactly; the
other rows show what the chapter's model leaves out (congestion of algorithms
designed for another topology, different algorithms' own costs).

Files written: ``textbook-table.csv``, ``table.png`` / ``table.svg`` and
``textbook-comparison.csv`` / ``.md``.
"""

from __future__ import annotations

import math
from pathlib import Path

from ...core.collectives import TYPES
from ..report.paperout import (Comparison, PaperResult, cached_figure, figure_digest, pyplot, save_figure, write_comparisons,
                       write_csv)

TITLE = ("[Grama03] A. Grama, A. Gupta, G. Karypis, V. Kumar, \"Introduction to Parallel Computing\", "
         "2nd ed., ch. 4 'Basic Communication Operations' (lecture slides), 2003")
P, SIDE = 16, 4
TS, TW, M, Q = 10e-6, 1e-9, 1 << 16, 5
QUICK_P, QUICK_SIDE = 4, 2
TOPOLOGIES = ("ring", "torus", "hypercube")
OPERATIONS = ("broadcast", "reduce", "allgather", "reducescatter", "allreduce", "scatter", "gather", "alltoall",
              "shift", "scan")
OP_NAMES = {op: TYPES[op].textbook_name for op in OPERATIONS}


def chapter_formulas(topology: str, op: str, p: int, m: int = M, ts: float = TS, tw: float = TW,
                     q: int = Q) -> list[tuple[str, float]]:
    """The chapter's cost(s) of an operation on a topology, evaluated."""
    lg, sq = math.log2(p), math.isqrt(p)
    op = TYPES[op].dual or op
    table = {
        ("ring", "broadcast"): [("(t_s + t_w m) log p", (ts + tw * m) * lg)],
        ("ring", "allgather"): [("(t_s + t_w m)(p-1)", (ts + tw * m) * (p - 1))],
        ("ring", "scatter"): [("t_s log p + t_w m (p-1)", ts * lg + tw * m * (p - 1))],
        ("ring", "alltoall"): [("(t_s + t_w m p/2)(p-1)", (ts + tw * m * p / 2) * (p - 1))],
        ("ring", "shift"): [("(t_s + t_w m) min(q, p-q)", (ts + tw * m) * min(q, p - q))],
        ("torus", "broadcast"): [("(t_s + t_w m) log p", (ts + tw * m) * lg)],
        ("torus", "allgather"): [("2 t_s (sqrt p - 1) + t_w m (p-1)", 2 * ts * (sq - 1) + tw * m * (p - 1))],
        ("torus", "scatter"): [("t_s log p + t_w m (p-1)", ts * lg + tw * m * (p - 1))],
        ("torus", "alltoall"): [("(2 t_s + t_w m p)(sqrt p - 1)", (2 * ts + tw * m * p) * (sq - 1))],
        ("torus", "shift"): [("<= (t_s + t_w m)(sqrt p + 1) (upper bound)", (ts + tw * m) * (sq + 1))],
        ("hypercube", "broadcast"): [("(t_s + t_w m) log p", (ts + tw * m) * lg)],
        ("hypercube", "allgather"): [("t_s log p + t_w m (p-1)", ts * lg + tw * m * (p - 1))],
        ("hypercube", "allreduce"): [("(t_s + t_w m) log p", (ts + tw * m) * lg)],
        ("hypercube", "scatter"): [("t_s log p + t_w m (p-1)", ts * lg + tw * m * (p - 1))],
        ("hypercube", "alltoall"): [("(t_s + t_w m)(p-1) (optimal)", (ts + tw * m) * (p - 1)),
                                    ("(t_s + t_w m p/2) log p (dimension exchange)", (ts + tw * m * p / 2) * lg)],
        ("hypercube", "shift"): [("t_s + t_w m (E-cube)", ts + tw * m)],
    }
    return table.get((topology, op), [])


# The chapter gives no cost for the ring all-reduce of its ML slides nor for prefix sums, so collsim attributes
# to it neither 2(p-1)(t_s + t_w m/p) nor (t_s + t_w m) log p.

CHAPTER_ALGORITHMS = {
    ("ring", "broadcast"): "recursive-doubling", ("ring", "allgather"): "ring", ("ring", "scatter"): "binomial",
    ("ring", "alltoall"): "ring-personalized", ("ring", "shift"): "ring-shift",
    ("torus", "broadcast"): "mesh", ("torus", "allgather"): "mesh", ("torus", "scatter"): "mesh",
    ("torus", "alltoall"): "mesh",
    ("hypercube", "broadcast"): "recursive-doubling", ("hypercube", "allgather"): "recursive-doubling",
    ("hypercube", "allreduce"): "recursive-doubling", ("hypercube", "scatter"): "recursive-doubling",
    ("hypercube", "alltoall"): ("pairwise (xor)", "hypercube-personalized"), ("hypercube", "shift"): "direct",
}
"""(topology, operation) -> collsim's implementation of the chapter's own algorithm for it (the dual
operations, reduction, gather and all-to-all reduction, use their dual's)."""


def is_chapter_algorithm(topology: str, op: str, algorithm: str) -> bool:
    """Whether ``algorithm`` is collsim's implementation of the chapter's algorithm for ``op`` on ``topology``."""
    mine = CHAPTER_ALGORITHMS.get((topology, TYPES[op].dual or op), ())
    return algorithm in ((mine,) if isinstance(mine, str) else mine)


# algorithm (variant) -> which of chapter_formulas' entries it implements, where not the first
_FORMULA_INDEX = {("hypercube", "alltoall", "hypercube-personalized"): 1, ("hypercube", "alltoall", "bruck"): 1}


def systems(p: int = P, side: int = SIDE) -> dict:
    """The three electrical networks, with the chapter's parameters."""
    from ...kinds.network.electrical import Ring
    from ...kinds.network.hypercube import Hypercube
    from ...kinds.network.mesh_torus import Torus
    net = dict(startup_s=TS, link_latency_s=0.0, link_bandwidth_bytes_per_s=1 / TW)
    return {"ring": Ring(nodes=p, **net), "torus": Torus.from_dims((side, side), **net),
            "hypercube": Hypercube(nodes=p, **net)}


def _variants(name: str, op: str, p: int, takes: tuple = ("root", "shift")):
    if TYPES[op].rooted:
        return [(name, {"root": 0} if "root" in takes else {})]
    if TYPES[op].shifted:
        return [(name, {"shift": Q % p or 1})]
    if name == "pairwise":
        return [("pairwise", {}), ("pairwise (xor)", {"exchange": "xor"})]
    return [(name, {})]


def run_table(p: int = P, side: int = SIDE) -> list[dict]:
    """Simulate every registered algorithm for every operation on the three topologies."""
    from ...algorithms.registry import REGISTRY
    from ...core.errors import UnsupportedError
    from ...pipeline import build, verify
    from ...sim import simulate
    from ...synthesis import SYNTHESIZERS
    rows = []
    for topo, system in systems(p, side).items():
        for op in OPERATIONS:
            formulas = chapter_formulas(topo, op, p)
            for name, spec in REGISTRY.items():   # registration order: the golden rows record it
                if "network" not in spec.systems or op not in spec.collectives or name in SYNTHESIZERS:
                    continue  # synthesized schedules are not the chapter's algorithms (docs/synthesis.md)
                for label, params in _variants(name, op, p, spec.params):
                    try:
                        sched = build(name, system, op, M, **params)
                    except UnsupportedError:
                        continue
                    sim = simulate(sched, report=verify(sched)).total_time_s
                    own = (spec.alpha_beta(sched.system, sched.collective.type, M, dict(sched.params))
                           if spec.alpha_beta else None)
                    fi = _FORMULA_INDEX.get((topo, op, name), 0)
                    text, value = formulas[fi] if formulas else (None, None)
                    rows.append({"topology": topo, "operation": op, "algorithm": label, "p": p, "m_bytes": M,
                                 "t_s": TS, "t_w": TW, "params": {k: v for k, v in params.items()},
                                 "chapter_formula": text, "chapter_s": value, "simulated_s": sim,
                                 "own_closed_form_s": own, "max_link_load": int(sched.max_link_load()),
                                 "steps": int(sched.num_steps)})
    return rows


def _explain(r: dict) -> str:
    if r["chapter_s"] is None or math.isclose(r["simulated_s"], r["chapter_s"], rel_tol=0.005):
        return ""
    parts = []
    if "upper bound" in (r["chapter_formula"] or "") and r["simulated_s"] <= r["chapter_s"]:
        parts.append("the chapter gives only an upper bound for the mesh shift (D5)")
    if r["algorithm"] != "mesh" or r["topology"] != "torus":
        parts.append("not the chapter's algorithm for this topology")
    if r["max_link_load"] > 1:
        parts.append(f"congested: up to {r['max_link_load']} messages share a link in a step, which the chapter's "
                     "model does not charge")
    own = r["own_closed_form_s"]
    if own is not None and math.isclose(own, r["simulated_s"], rel_tol=1e-6):
        parts.append(f"the simulated time equals the algorithm's own closed form ({own * 1e6:.6g} us)")
    elif own is not None:
        parts.append(f"its own (congestion-unaware) closed form is {own * 1e6:.6g} us")
    parts.append(f"{r['steps']} steps")
    return "; ".join(parts)


_ITEM = {"ring": "ch. 4 text, ring", "torus": "ch. 4 text, 2-D wraparound mesh",
         "hypercube": "ch. 4 summary table (hypercube)"}


def comparisons(rows: list[dict]) -> list[Comparison]:
    """One comparison per (topology, operation, algorithm) with a chapter formula."""
    out = []
    for r in rows:
        if r["chapter_s"] is None:
            continue
        own = is_chapter_algorithm(r["topology"], r["operation"], r["algorithm"])
        dual = TYPES[r["operation"]].dual
        formula = r["chapter_formula"] + (f" (its dual {OP_NAMES[dual]}'s cost, as the chapter says)" if dual else "")
        out.append(Comparison(
            _ITEM[r["topology"]], f"{OP_NAMES[r['operation']]}: {formula}; "
            f"collsim {r['algorithm']}, p={r['p']}", "us", round(r["chapter_s"] * 1e6, 6),
            round(r["simulated_s"] * 1e6, 6),
            "flow simulator, the chapter's algorithm" if own else "flow simulator, another registered algorithm",
            _explain(r), source="formula", claim=f"{_ITEM[r['topology']]}: {OP_NAMES[r['operation']]}: {formula}"))
    return out


def _figure(rows, out_dir: Path, p: int):
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 10), sharex=True)
    for ax, topo in zip(axes, TOPOLOGIES):
        sel = [r for r in rows if r["topology"] == topo]
        y = list(range(len(sel)))[::-1]
        sim = [r["simulated_s"] * 1e6 for r in sel]
        colors = ["tab:green" if r["chapter_s"] is not None and math.isclose(r["simulated_s"], r["chapter_s"],
                                                                              rel_tol=0.005)
                  else ("tab:red" if r["max_link_load"] > 1 else "tab:gray") for r in sel]
        ax.barh(y, sim, color=colors, height=0.7)
        fy = [yy for yy, r in zip(y, sel) if r["chapter_s"] is not None]
        fx = [r["chapter_s"] * 1e6 for r in sel if r["chapter_s"] is not None]
        ax.scatter(fx, fy, marker="|", s=200, color="k", zorder=3)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{OP_NAMES[r['operation']]}: {r['algorithm']}" for r in sel], fontsize=8.5)
        ax.set_xscale("log")
        ax.set_xlabel("time (us, log scale)")
        ax.set_title({"ring": f"ring, p={p}", "torus": f"2-D wraparound mesh, p={p}",
                      "hypercube": f"hypercube, p={p}"}[topo])
        ax.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(color="tab:green", label="simulated = chapter's formula"),
               Patch(color="tab:red", label="simulated, congested (link load > 1)"),
               Patch(color="tab:gray", label="simulated, other algorithm / no chapter formula"),
               Line2D([], [], marker="|", ls="", color="k", markersize=14, label="chapter's formula")]
    fig.suptitle(f"[Grama03] ch. 4: communication times of the basic operations, chapter's formula vs collsim's "
                 f"flow simulator (t_s={TS * 1e6:g} us, t_w={TW * 1e9:g} ns/B, m={M} B, q={Q})", fontsize=10)
    fig.tight_layout()
    fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=9, bbox_to_anchor=(0.5, 0.0))
    return fig


def reproduce(out_dir: Path, *, store=None, jobs: int = 1, progress=None, quick: bool = False) -> PaperResult:
    """Regenerate the chapter's table of operation costs beside collsim's simulated times."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    p, side = (QUICK_P, QUICK_SIDE) if quick else (P, SIDE)
    if progress:
        progress(f"textbook: simulating every registered algorithm on ring, torus, hypercube (p={p})")
    rows = run_table(p, side)
    write_csv(out_dir / "textbook-table.csv", rows)
    import sys
    cached_figure(out_dir, "table", figure_digest("table", rows, p, sys.modules[__name__]),
                  lambda: _figure(rows, out_dir, p), save=lambda f, o, n: save_figure(f, o, n))
    comps = comparisons(rows)
    write_comparisons(out_dir, "textbook", comps)
    notes = (f"p = {p}: Ring({p}), Torus({side}x{side}) (the chapter's 2-D wraparound mesh), Hypercube({p}).",
             f"t_s = {TS * 1e6:g} us as startup_s, t_w = {TW * 1e9:g} ns/byte as link bandwidth 1/t_w = "
             f"{1 / TW / 1e9:g} GB/s, zero per-hop latency (the chapter has no t_h term); m = {M} bytes; "
             f"shift distance q = {Q % p or 1}; roots 0.",
             "m is the chapter's message: per node (all-to-all broadcast, scatter, gather), per pair (all-to-all "
             "personalized), the whole vector (broadcast, reduction, all-reduce, prefix sum).",
             "Reduction, gather and all-to-all reduction are charged their duals' costs (broadcast, scatter, "
             "all-to-all broadcast), as the chapter states.",
             "Every algorithm collsim registers for an electrical network is simulated on every topology "
             "(pairwise twice: shift and xor exchange); rows the chapter gives no cost for (all-reduce on a ring "
             "or a mesh, prefix sums on any topology: the chapter describes the hypercube prefix sum and the ML "
             "slides' ring all-reduce but prints no cost for either) are in the CSV only.",
             "The chapter prints formulas, not numbers: every value in the 'paper' column is collsim's evaluation "
             "of the chapter's formula at these parameters (source 'formula'). Model 'the chapter's algorithm' is "
             "collsim's implementation of the algorithm the formula describes; 'another registered algorithm' "
             "rows show what other algorithms cost on that topology and are not a test of the chapter.",
             "Flow simulator: max-min fair bandwidth sharing, bulk-synchronous steps.")
    caption = ("Simulated time of every registered algorithm per operation (bars; green = equal to the chapter's "
               "formula, red = congested, grey = another algorithm) and the chapter's formula (black tick), on a "
               "ring, a 2-D wraparound mesh and a hypercube.")
    return PaperResult("textbook", TITLE, out_dir, figures=("table",), tables=("textbook-table.csv",),
                       comparisons=tuple(comps), notes=notes, captions={"table": caption})


__all__ = ["chapter_formulas", "comparisons", "reproduce", "run_table", "systems"]
