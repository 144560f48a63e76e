"""The OpTree journal's structural claims and its conference version's numbers.

What :mod:`collsim.experiments.papers.optree` adds to Figs. 4–7 and Tables 1–3:

* the §III-C motivation example (``collsim reproduce optree-motivation``): the printed
  16 / 12 / 16 steps, the per-stage "= 12" wavelengths and "⌊log₃16⌋ = 3";
* Lemma 1's ⌈N²/8⌉ one-stage wavelengths against the exact optimum, odd N over-counted
  (``collsim reproduce optree-lemma1``);
* Table 3's w = 16 WRHT entry under Table 1's own (θ−1) form of the WRHT formula;
* the ICC 2023 conference version's ten percentages [OpTree23] (seed 000), recomputed
  with eq. (3) on the conference's grids (§IV-B, §IV-C);
* the paper's *pure* model, eq. (3) with a constant ``a`` (reconfiguration plus one O/E/O
  cycle), and the pure receive bound ``(N−1)d/(2wB)``, beside collsim's versions that add
  one O/E/O cycle per 32-byte flit.

Every value is computed here; the printed ones are quoted as claims.
"""

from __future__ import annotations

import math
from typing import Any

from ...report.paperout import Comparison, TableTarget
from ..tables import PAPER_D, lemma1_rows, optree_motivation  # noqa: F401 - lemma1_rows: the reproduction calls extra.lemma1_rows
from .data import LABELS, eq3_steps

CONFERENCE = ("[OpTree23] F. Dai, Y. Chen, Z. Huang, H. Zhang, \"OpTree: An Efficient Algorithm for All-gather "
              "Operation in Optical Interconnect Systems\", IEEE ICC 2023 (seed 000; the journal [OpTree24] is "
              "its extension)")
CONF_PRINTED = {"overall": {"wrht": 72.21, "ring": 94.30, "ne": 88.58},
                "nodes": {"wrht": 56.36, "ring": 92.76, "ne": 85.54},
                "wavelengths": {"wrht": 88.06, "ring": 95.84, "ne": 91.69},
                "one-stage": 96.85}
"""Seed 000: abstract / conclusion (overall), §I and §IV-C (node and wavelength counts), §IV-B (one-stage)."""
CONF_NODES = ((1024, 64), (2048, 64))
CONF_WAVELENGTHS = ((1024, 96), (1024, 128))
CONF_FIG4_NODES = (512, 1024, 2048, 4096)
MOTIVATION_PRINTED_STAGE_W = {"stage 2": 12, "stage 3": 12}
"""Seed 004 §III-C, three-stage 3-ary tree: "2·3·⌈3²/4⌉ = 12" and "6·⌈3²/4⌉ = 12" wavelengths."""
LOG3_16_PRINTED = 3
"""Seed 004 §III-C: "the depth of ⌊log₃ 16⌋ = 3"."""
TABLE3_W16_WRHT_PRINTED = -180.0
RTOL_2DP = 1.5e-4
"""Agreement of a percentage printed to two decimals: within about 0.01 of it (the default 0.5 % would
let 94.37 pass for 94.30)."""


def trunc2(x: float) -> float:
    """Truncate to two decimals, as the papers print their percentages."""
    return math.trunc(round(x * 100, 6)) / 100


def _red(versus: str, n: int, w: int, s_versus: int | None = None) -> float:
    return 100 * (1 - eq3_steps("optree", n, w) / (eq3_steps(versus, n, w) if s_versus is None else s_versus))


def conference_comparisons() -> list[Comparison]:
    """The conference version's ten percentages beside eq. (3) on its grids.

    §IV-C compares at N = 1024 and 2048 (w = 64) and at w = 96 and 128 (N = 1024), 4–128 MB;
    under eq. (3) a reduction does not depend on the size, so each column is ``1 − S_OpTree/S_X``.
    The printed averages are means of the columns truncated to two decimals, then truncated
    (56.36 = (72.97 + 39.76)/2); the overall numbers are read as the mean of the two averages.
    """
    out = []
    means: dict[str, dict[str, float]] = {}
    for what, cols in (("nodes", CONF_NODES), ("wavelengths", CONF_WAVELENGTHS)):
        for v in ("wrht", "ring", "ne"):
            vals = [trunc2(_red(v, n, w)) for n, w in cols]
            means.setdefault(what, {})[v] = trunc2(sum(vals) / len(vals))
    for v in ("wrht", "ring", "ne"):
        means.setdefault("overall", {})[v] = trunc2((means["nodes"][v] + means["wavelengths"][v]) / 2)
    why_w = {}
    for v in ("wrht", "ring", "ne"):
        # what the w = 96 column must be for the printed mean, given w = 128's eq.-(3) value (= the journal's)
        at128 = trunc2(_red(v, 1024, 128))
        need = 2 * CONF_PRINTED["wavelengths"][v] - at128
        s_x = eq3_steps(v, 1024, 96)
        implied_opt = s_x * (1 - need / 100)
        why_w[v] = (f"eq. (3) at w = 96 gives 1 − {eq3_steps('optree', 1024, 96)}/{s_x} = "
                    f"{trunc2(_red(v, 1024, 96)):.2f} %; with w = 128's {at128:.2f} % (the journal's Table 3 value) "
                    f"the printed mean needs {need:.2f} % at w = 96, i.e. OpTree ≈ {implied_opt:.1f} steps against "
                    f"{LABELS[v]}'s {s_x}" + (" (or a WRHT count other than Table 1's formula)" if v == "wrht" else "")
                    + "; the conference does not print its w = 96 step counts")
    labels = {"overall": "over all its simulations (read: mean of the two averages below)",
              "nodes": "averaged over N = 1024, 2048 (w = 64)",
              "wavelengths": "averaged over w = 96, 128 (N = 1024)"}
    items = {"overall": "[OpTree23] abstract, §V", "nodes": "[OpTree23] §I, §IV-C", "wavelengths": "[OpTree23] §I, §IV-C"}
    for what in ("overall", "nodes", "wavelengths"):
        for v in ("wrht", "ring", "ne"):
            printed, mine = CONF_PRINTED[what][v], means[what][v]
            c = Comparison(items[what], f"OpTree's reduction vs {LABELS[v]}, {labels[what]}", "%", printed, mine, "eq3",
                           rtol=RTOL_2DP)
            if c.agrees is False:
                why = why_w[v] if what == "wavelengths" else (
                    f"the mean of the paper's own two averages is ({CONF_PRINTED['nodes'][v]} + "
                    f"{CONF_PRINTED['wavelengths'][v]})/2 = "
                    f"{(CONF_PRINTED['nodes'][v] + CONF_PRINTED['wavelengths'][v]) / 2:.3f}"
                    + ("" if math.isclose(trunc2((CONF_PRINTED['nodes'][v] + CONF_PRINTED['wavelengths'][v]) / 2),
                                          printed) else f", not {printed}")
                    + "; collsim's differs through the w = 96 column (row above)")
                c = Comparison(c.item, c.quantity, c.unit, c.paper, c.collsim, "eq3", why, rtol=RTOL_2DP)
            out.append(c)
    vals = [trunc2(100 * (1 - eq3_steps("optree", n, 64) / eq3_steps("osm", n, 64))) for n in CONF_FIG4_NODES]
    one = sum(vals) / len(vals)
    out.append(Comparison("[OpTree23] §IV-B", "OpTree's reduction vs the one-stage model, averaged over "
                          "N = 512…4096 (w = 64, 4 MB)", "%", CONF_PRINTED["one-stage"], round(one, 4), "eq3",
                          "" if abs(one - CONF_PRINTED["one-stage"]) < 0.005 else
                          f"1 − S_OpTree/⌈N²/(8w)⌉ per N: {', '.join(f'{x:.2f}' for x in vals)}", rtol=RTOL_2DP))
    return out


def motivation(n: int = 16, w: int = 2) -> tuple[list[dict[str, Any]], list[Comparison], str]:
    """§III-C: the three schemes' steps under three readings, the per-stage wavelengths, ⌊log₃16⌋."""
    rows = optree_motivation(n, w)
    out = []
    for r in rows:
        for model, key in (("Theorem 1", "theorem1"), ("paper's per-stage expressions", "paper_expressions"),
                           ("schedule", "explicit_steps")):
            c = Comparison("§III-C", f"{r['scheme']} steps, N={n}, w={w}", "steps", r["paper"], r[key], model)
            if c.agrees is False:
                c = Comparison(c.item, c.quantity, c.unit, c.paper, c.collsim, model,
                               f"Theorem 1 (real m = N^(1/k)) gives {r['theorem1']}; the paper's own per-stage "
                               f"wavelengths 8, 18, 18 give ⌈8/2⌉ + ⌈18/2⌉ + ⌈18/2⌉ = {r['paper_expressions']}; "
                               f"collsim's verified (3,3,3) tree needs {r['explicit_steps']}; no reading gives "
                               f"{r['paper']}")
            out.append(c)
    stage = {"stage 2": 2 * 3 * math.ceil(3 ** 2 / 4), "stage 3": 6 * math.ceil(3 ** 2 / 4)}
    for name, printed in MOTIVATION_PRINTED_STAGE_W.items():
        expr = "2·3·⌈3²/4⌉" if name == "stage 2" else "6·⌈3²/4⌉"
        out.append(Comparison("§III-C", f"three-stage 3-ary tree, {name} wavelengths '{expr} = {printed}'",
                              "wavelengths", printed, stage[name], "paper's per-stage expressions",
                              f"{expr} = {stage[name]}: the printed '= {printed}' is not its own expression's value"))
    floor3 = int(math.floor(math.log(n) / math.log(3) + 1e-12))
    ceil3 = int(math.ceil(math.log(n) / math.log(3) - 1e-12))
    out.append(Comparison("§III-C", f"depth of the 3-ary tree '⌊log₃ {n}⌋ = {LOG3_16_PRINTED}'", "stages",
                          LOG3_16_PRINTED, floor3, "arithmetic",
                          f"3² = 9 ≤ {n} < 27 = 3³, so ⌊log₃ {n}⌋ = {floor3}; the three stages need the ceiling, "
                          f"⌈log₃ {n}⌉ = {ceil3}"))
    three = rows[-1]
    verdict = (f"One-stage ({rows[0]['paper']}) and two-stage 4-ary ({rows[1]['paper']}) agree under every reading. "
               f"The three-stage 3-ary tree's printed {three['paper']} steps match none: Theorem 1 gives "
               f"{three['theorem1']}, the paper's own per-stage expressions {three['paper_expressions']} (they "
               f"evaluate to 8, {stage['stage 2']}, {stage['stage 3']} wavelengths, printed 8, 12, 12), collsim's "
               f"verified (3,3,3) schedule {three['explicit_steps']}. The depth is ⌈log₃ {n}⌉ = {ceil3}, printed "
               f"as ⌊log₃ {n}⌋ (= {floor3}).")
    return rows, out, verdict


def lemma1_comparisons(rows) -> list[Comparison]:
    """Lemma 1's formula evaluated (source ``formula``: the paper prints the formula, not these numbers)."""
    out = []
    for r in rows:
        why = "" if r["overcount"] == 0 else (
            f"odd N = 2k+1 (k = {(r['nodes'] - 1) // 2}): the busiest link carries k(k+1)/2 = {r['exact']} "
            f"lightpaths per direction" + ("" if r["explicit_used"] is None else
                                           f"; collsim's verified schedule uses {r['explicit_used']}"))
        out.append(Comparison("Lemma 1", f"one-stage ring all-to-all wavelengths per direction, N={r['nodes']}",
                              "wavelengths", r["lemma1"], r["exact"], "exact optimum (link load)", why, rtol=0.0,
                              source="formula"))
    return out


def table3_wrht_variant() -> Comparison:
    """Table 3's w = 16 WRHT entry with Table 1's WRHT formula in its printed (θ−1) form."""
    from ....algorithms.wrht import _ceil_log, group_size, paper_allgather_steps
    n, w = 1024, 16
    mb = group_size(w)
    theta = _ceil_log(n, mb)
    top = mb ** (theta - 1)
    gather = 1 + -(-mb * (top - 1) // (mb - 1))
    forms = {"θ−1": gather + (theta - 1) * top, "θ": gather + theta * top}
    s_opt = eq3_steps("optree", n, w)
    val = 100 * (1 - s_opt / forms["θ−1"])
    chosen = paper_allgather_steps(n, w)
    return Comparison("Table 3", "OpTree vs WRHT, w=16, N=1024, WRHT in Table 1's (θ−1) form", "%",
                      TABLE3_W16_WRHT_PRINTED, val, "eq3, WRHT (θ−1) form",
                      f"Table 1's form at w = 16 (m̄ = {mb}, θ = {theta}) is {forms['θ−1']} steps: 1 − {s_opt}/"
                      f"{forms['θ−1']}; the printed −180 % is the θ form, 1 − {s_opt}/{forms['θ']} (collsim's rule "
                      f"picks it: {chosen} steps, since the top {-(-n // top)} nodes need more than w wavelengths). "
                      "The paper thus uses both forms (at N = 4096, w = 64 the θ−1 one)",
                      claim="Table 3: OpTree vs WRHT, w=16, N=1024")  # the key of the table's own rows


def pure_model_rows(schedule_time) -> list[dict[str, Any]]:
    """Eq. (3) as the paper writes it, and the pure bound, beside collsim's versions (4 MiB).

    The paper's ``a`` is a constant: the MRR reconfiguration (25 µs) plus the O/E/O delay, one
    cycle per flit, read here as one 1 ns cycle per step.  collsim's eq. (3) and bound charge
    the O/E/O cycle for every 32-byte flit of d (``paper_time_s``): 15.6 % more per byte at 40 Gb/s.
    The pure all-gather bound: a node receives (N−1)d bytes on at most 2w channels (w per
    direction) of B bytes/s each, so T ≥ (N−1)d/(2wB).
    """
    from ....core.collective import make_collective
    from ....kinds.optical_ring.cost import paper_time_s
    from ....pipeline import lower_bound_s
    from ....systems import load_system
    from .data import NODES, WAVELENGTHS
    d = PAPER_D
    rows = []
    for n, w in [(n, 64) for n in NODES] + [(1024, w) for w in WAVELENGTHS if w != 64]:
        sysm = load_system("paper", nodes=n, wavelengths=w)
        b = sysm.bandwidth_bytes_per_s
        a = sysm.mrr_reconfig_s + sysm.oeo_s_per_flit
        pure_bound = (n - 1) * d / (2 * sysm.channels_per_direction * b)
        bound = lower_bound_s(sysm, make_collective("allgather", n, d))
        for alg in ("optree", "wrht", "ring", "ne"):
            s = eq3_steps(alg, n, w)
            t = schedule_time(alg, n, w, d)
            rows.append({"nodes": n, "wavelengths": w, "size_bytes": d, "algorithm": alg, "eq3_steps": s,
                         "pure_eq3_ms": 1e3 * s * (d / b + a),
                         "collsim_eq3_ms": 1e3 * paper_time_s(sysm, d, s),
                         "schedule_ms": None if t is None else 1e3 * t,
                         "pure_bound_ms": 1e3 * pure_bound, "collsim_bound_ms": 1e3 * bound,
                         "pure_eq3_over_pure_bound": s * (d / b + a) / pure_bound})
    return rows


def targets(t1_rows, f4_rows, motivation_verdict: str, lemma_rows) -> list[TableTarget]:
    """The verdicts of the OpTree table targets, every number from the rows."""
    agree = [r["algorithm"] for r in t1_rows if r["formula_matches_paper"]]
    bad = [r for r in t1_rows if r["formula_matches_paper"] is False]
    ex = {r["algorithm"]: r["explicit_d_steps"] for r in t1_rows}
    t1 = (f"Printed = formula for {', '.join(LABELS.get(a, a.upper()) for a in agree)}; "
          + "; ".join(f"{r['algorithm'].upper()} printed {r['paper']}, its formula gives {r['formula']}"
                      for r in bad)
          + f". Explicit verified schedules (chunk-times): NE {ex['ne']:g}, WRHT {ex['wrht']:g}, OSM {ex['osm']:g}, "
            f"OpTree {ex['optree']:g}.")
    f4 = "; ".join(f"N={r['nodes']}: printed {r['paper_depth']}, Lemma 3 nearest {r['lemma3_round']} / ceiling "
                   f"{r['lemma3_ceil']}, Theorem 1 argmin {r['theorem1_argmin']}, exact search {r['search_depth']}"
                   for r in f4_rows) + ". The printed depths are Lemma 3 rounded to the nearest integer."
    odd = [r for r in lemma_rows if r["overcount"]]
    l1 = (f"⌈N²/8⌉ is exact for every even N here and one too many for every odd N ({len(odd)} of "
          f"{len(lemma_rows)} rows, e.g. N={odd[0]['nodes']}: {odd[0]['lemma1']} vs {odd[0]['exact']}); collsim's "
          "verified one-stage schedules use the exact count." if odd else "⌈N²/8⌉ is exact for every N listed.")
    return [TableTarget.of(name, verdict, f"table-{name}.csv")
            for name, verdict in (("optree-table1", t1), ("optree-motivation", motivation_verdict),
                                  ("optree-fig4", f4), ("optree-lemma1", l1))]
