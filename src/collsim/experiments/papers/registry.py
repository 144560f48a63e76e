"""The one table of what ``collsim reproduce`` regenerates: the papers' tables and the papers' evaluations.

Every reader takes it from here: ``collsim reproduce`` (its listing, a table's title and size note,
a paper's description), :data:`collsim.experiments.papers.reproduce.EXPERIMENTS` and ``SIZE_NOTES`` (the
tables, resolved), :data:`collsim.experiments.papers.reproduce.PAPERS` and
:mod:`collsim.experiments.papers.reproduce` (the papers' modules), and the table targets each paper's
reproduction reports (:class:`collsim.experiments.report.paperout.TableTarget`).  Adding a table or a
paper is one entry here.

Loading this module imports nothing from the library: an entry names its function as
``"module:function"`` and :meth:`Reproduction.load` imports it when asked.

References
----------
F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather Operation in
Optical Interconnect Systems", IEEE Open Journal of the Communications Society, 2024 ([OpTree24]).
F. Dai, Y. Chen, Z. Huang, H. Zhang, F. Zhang, "POSTER: Efficient All-reduce for Distributed DNN
Training in Optical Interconnect Systems", PPoPP '23, 2023 ([WRHT23]).
T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on Multi-Layer Full
Mesh, Low-cost Connectable Network Topology", technical poster, SC16, 2016 ([MLFM16]).
A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
Addison-Wesley, 2003, ch. 4 ([Grama03]).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

TABLE = "table"
"""A table: ``collsim reproduce NAME`` prints the paper's values beside collsim's."""
PAPER = "paper"
"""A paper's evaluation: ``collsim reproduce NAME --out DIR`` writes its data, figures and comparisons."""
ALL = "all"
"""The name that runs every paper and writes one HTML report."""


@dataclass(frozen=True)
class Reproduction:
    """One entry: a table of a paper, or a paper's whole evaluation."""

    name: str
    kind: str
    paper: str
    description: str
    target: str | None
    size_note: str | None = None

    def load(self) -> Callable[..., Any]:
        """The function :attr:`target` names, imported now."""
        module, _, function = str(self.target).partition(":")
        return getattr(importlib.import_module(module), function)

    @property
    def module(self) -> str | None:
        """The module of :attr:`target` (None for :data:`ALL`)."""
        return None if self.target is None else self.target.partition(":")[0]


_PAPERS_MOD = "collsim.experiments.papers.tables:"
_OPTREE_D = ("sizes: [OpTree24] sets the message to '4 megabyte (MB)'; collsim reads it as 4 MiB = 4194304 bytes "
             "per node (size_bytes, the all-gather block d); ")

REPRODUCTIONS: dict[str, Reproduction] = {r.name: r for r in (
    Reproduction("optree-table1", TABLE, "optree", "[OpTree24] Table 1: all-gather steps at N=1024, w=64",
                 _PAPERS_MOD + "optree_table1", _OPTREE_D + "step counts do not depend on it"),
    Reproduction("optree-motivation", TABLE, "optree", "[OpTree24] §III-C: N=16, w=2 motivation example",
                 _PAPERS_MOD + "optree_motivation",
                 "sizes: the example gives no size; the explicit schedules use 1024 bytes per node (size_bytes); "
                 "step counts do not depend on it"),
    Reproduction("optree-fig4", TABLE, "optree", "[OpTree24] Fig. 4 / Lemma 3: optimal depth for N=512..4096",
                 _PAPERS_MOD + "optree_fig4", _OPTREE_D + "the times depend on it"),
    Reproduction("optree-lemma1", TABLE, "optree",
                 "[OpTree24] Lemma 1: one-stage ring wavelengths ⌈N²/8⌉, odd N over-counted",
                 _PAPERS_MOD + "optree_lemma1",
                 "sizes: none; a wavelength count; the explicit schedules (N <= 65) carry 64 bytes per node"),
    Reproduction("wrht-allreduce", TABLE, "wrht", "[WRHT23]: WRHT all-reduce steps", _PAPERS_MOD + "wrht_allreduce",
                 "sizes: the poster gives no size for its step counts; the explicit schedules reduce a 4 MiB = "
                 "4194304-byte vector (size_bytes); step counts do not depend on it"),
    Reproduction("mlfm-congestion", TABLE, "mlfm", "[MLFM16] §2: congestion-freeness for d=2..8",
                 _PAPERS_MOD + "mlfm_congestion",
                 "sizes: none; congestion-freeness is a property of the phases, not of a message size"),
    Reproduction("mlfm-throughput", TABLE, "mlfm", "[MLFM16] §3 / Fig. 3: throughput, mlfm vs pairwise",
                 _PAPERS_MOD + "mlfm_throughput",
                 "sizes: [MLFM16] says '16, 64, 256MiB per node' (binary: 16777216 ... bytes of send buffer); "
                 "size_bytes is each pair's block floor(buffer / N) (collsim's size), total_bytes the N blocks sent "
                 "(nccl-tests' size, up to N-1 bytes below the paper's buffer)"),
    Reproduction("optree", PAPER, "optree",
                 "OpTree all-gather [OpTree24]: Table 1, Figs. 4-7, Tables 2-3 and the abstract's reductions",
                 "collsim.experiments.papers.optree:reproduce"),
    Reproduction("wrht", PAPER, "wrht",
                 "WRHT all-reduce [WRHT23]: Fig. 2 (DNN models across node counts) and the abstract's reductions",
                 "collsim.experiments.papers.wrht:reproduce"),
    Reproduction("mlfm", PAPER, "mlfm",
                 "MLFM all-to-all [MLFM16]: Fig. 3 throughput at four scales and three sizes, the 2.2x ratio",
                 "collsim.experiments.papers.mlfm.reproduce:reproduce"),
    Reproduction("textbook", PAPER, "textbook",
                 "Basic communication operations [Grama03]: the cost summary, formula beside simulation",
                 "collsim.experiments.papers.textbook:reproduce"),
    Reproduction("beyond", PAPER, "beyond",
                 "collsim's own: every optical algorithm against the lower bound on [OpTree24]'s grids, the best "
                 "feasible schedule beside OpTree's, the per-slot latency crossovers",
                 "collsim.experiments.papers.beyond.reproduce:reproduce"),
    Reproduction(ALL, PAPER, ALL, "every paper above, plus one self-contained HTML report (report.html)", None),
)}
"""Every table and paper ``collsim reproduce`` knows, tables first, in the order it lists them."""


def tables() -> dict[str, Reproduction]:
    """The tables, by name, in order."""
    return {k: r for k, r in REPRODUCTIONS.items() if r.kind == TABLE}


def papers() -> dict[str, Reproduction]:
    """The papers, by name, in order, :data:`ALL` last."""
    return {k: r for k, r in REPRODUCTIONS.items() if r.kind == PAPER}


__all__ = ["ALL", "PAPER", "REPRODUCTIONS", "Reproduction", "TABLE", "papers", "tables"]
