"""Time against the reconfiguration delay r, 4 ns to 10 ms, for each algorithm on an optical circuit switch.

Writes docs/figures/ocs-crossover.png and prints, per panel, the ranges of r where each algorithm wins
(the same crossovers ``ocs-auto`` follows).  Each line is an algorithm's verified, flow-simulated time at
r = 0 plus r per reconfiguration (the ocs kind's answer is exactly that, linear in r).

    python examples/ocs_crossover.py [--nodes 16] [--ports 1] [--out docs/figures/ocs-crossover.png]
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from collsim.algorithms.ocs import candidates, crossovers  # noqa: E402
from collsim.core.collective import make_collective  # noqa: E402
from collsim.core.units import format_size, format_time  # noqa: E402
from collsim.kinds.ocs.model import ocs_lower_bound_s  # noqa: E402
from collsim.pipeline import run  # noqa: E402
from collsim.kinds.ocs.system import OCS  # noqa: E402

COLLECTIVES = ("allgather", "allreduce", "alltoall")
SIZES = (4096, 256 * 1024, 16 * 2 ** 20)
R_S = np.logspace(np.log10(4e-9), -2, 200)


def measured(nodes: int, ports: int, collective: str, size: int) -> list[dict]:
    """Every candidate's verified time at r = 0 and its reconfigurations (rows for :func:`crossovers`)."""
    sw = OCS(nodes=nodes, ports=ports, reconfiguration_s=0.0)
    rows = []
    for name, params in candidates(sw, collective):
        res = run(name, sw, collective, size, **params)
        assert res.verified
        rows.append({"algorithm": name, "params": params, "comm_s": res.time_s,
                     "reconfigurations": res.part.reconfigurations, "lower_bound_s": res.lower_bound_s})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--ports", type=int, default=1)
    ap.add_argument("--out", default="docs/figures/ocs-crossover.png")
    args = ap.parse_args()
    fig, axes = plt.subplots(len(COLLECTIVES), len(SIZES), figsize=(13, 10), sharex=True)
    colours = {}
    for i, coll in enumerate(COLLECTIVES):
        for j, size in enumerate(SIZES):
            ax = axes[i][j]
            rows = measured(args.nodes, args.ports, coll, size)
            spans = crossovers(rows)
            print(f"{coll} {format_size(size)} (N={args.nodes}, p={args.ports}): "
                  + "; ".join(f"{label} from {format_time(lo)} to {format_time(hi)}" for lo, hi, label in spans))
            for row in rows:
                label = row["algorithm"] + "".join(f" d={v}" for v in row["params"].values())
                k = colours.setdefault(label, len(colours))
                ax.loglog(R_S, row["comm_s"] + row["reconfigurations"] * R_S, color=f"C{k}", label=label, lw=1.6,
                          ls=("-", "--", "-.")[k % 3])  # Bruck and recursive doubling coincide on all-gather
            r_bound = np.logspace(np.log10(4e-9), -2, 25)
            bound = [OCS(nodes=args.nodes, ports=args.ports, reconfiguration_s=r) for r in r_bound]
            c = make_collective(coll, args.nodes, size)
            ax.loglog(r_bound, [ocs_lower_bound_s(sw, c) for sw in bound], "k:", lw=1.4, label="lower bound")
            for lo, hi, label in spans:
                ax.axvline(hi, color="0.8", lw=0.8) if hi < R_S[-1] else None
                mid = np.sqrt(lo * hi)
                ax.text(mid, 0.97, label.replace("pairwise-relay degree=", "relay d="), transform=ax.get_xaxis_transform(),
                        ha="center", va="top", fontsize=7, rotation=90)
            ax.set_title(f"{coll}, {format_size(size)}", fontsize=10)
            if i == len(COLLECTIVES) - 1:
                ax.set_xlabel("reconfiguration delay r (s)")
            if j == 0:
                ax.set_ylabel("time (s)")
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.suptitle(f"Optical circuit switch, N={args.nodes}, {args.ports} port(s) of 50 GB/s per node: "
                 f"who wins as r grows (labels: the winner in each range)", fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 0.96))
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
