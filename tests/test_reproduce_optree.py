"""``collsim reproduce optree`` (issue #12): files, figures, golden numbers, the re-timing shortcut.

The reproduction runs once per session on its quick grid (N = 2048 and 4096 left out,
~20 s); every number it computes must equal the golden value, which was written from
a *full* run (``tests/golden/papers/optree/*.json``; the quick run's values are a
subset, because a schedule's time at a given (N, w, size) does not depend on what
else is computed).  Regenerate the goldens deliberately, from a full run::

    python tests/test_reproduce_optree.py --update

and explain every changed value in the commit and in docs/papers/discrepancies.md.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.schedule_first(30)  # about 30 s of work: handed out early (tests/conftest.py)

GOLDEN = Path(__file__).parent / "golden" / "papers" / "optree"
FILES = {"Table 1": "table1", "Fig. 4": "fig4", "abstract / Fig. 5": "abstract", "abstract": "abstract",
         "Table 2": "table2", "Fig. 6 (d)": "fig6", "Table 3": "table3", "Table 3 / §V-E": "table3",
         "§III-C": "motivation", "Lemma 1": "lemma1", "[OpTree23] abstract, §V": "conference",
         "[OpTree23] §I, §IV-C": "conference", "[OpTree23] §IV-B": "conference"}
REL_TOL = 1e-9

# The eq.-(3) rows that may not agree with the paper (each explained in docs/papers/discrepancies.md).
EQ3_DISAGREEMENTS = {
    ("Table 1", "OSM all-gather steps, N=1024, w=64"),
    ("Fig. 4", "fastest depth k, N=512 (w=64, 4 MiB)"),
    ("Table 2", "OpTree vs WRHT, N=4096 (w=64, 4–128 MiB)"),
    ("Table 2", "OpTree vs WRHT, Average (w=64, 4–128 MiB)"),
    ("Table 2", "OpTree vs WRHT, SD (w=64, 4–128 MiB)"),
    ("abstract", "OpTree's mean reduction vs WRHT over node counts 512–4096"),
    ("Fig. 6 (d)", "N=4096: largest message (MiB) at which OpTree still beats WRHT"),
    ("Table 3", "OpTree vs WRHT, w=256 (Table 3 header), N=1024"),
    ("Table 3", "OpTree vs Ring, w=256 (Table 3 header), N=1024"),
    ("Table 3", "OpTree vs NE, w=256 (Table 3 header), N=1024"),
    ("Table 3 / §V-E", "largest wavelength count of Fig. 7 (header 256, text 128)"),
    # issue 24, the conference version (seed 000): its node-count means are reproduced (56.36 = (72.97 +
    # 39.76)/2 truncated); its wavelength means need w = 96 columns eq. (3) does not give (1 − 47/1023 =
    # 95.40 % vs Ring, where the printed 95.84 with w = 128's 96.57 needs 95.11), and the overall means follow
    ("[OpTree23] abstract, §V", "OpTree's reduction vs WRHT, over all its simulations (read: mean of the two "
                                "averages below)"),
    ("[OpTree23] abstract, §V", "OpTree's reduction vs Ring, over all its simulations (read: mean of the two "
                                "averages below)"),
    ("[OpTree23] abstract, §V", "OpTree's reduction vs NE, over all its simulations (read: mean of the two "
                                "averages below)"),
    ("[OpTree23] §I, §IV-C", "OpTree's reduction vs WRHT, averaged over w = 96, 128 (N = 1024)"),
    ("[OpTree23] §I, §IV-C", "OpTree's reduction vs Ring, averaged over w = 96, 128 (N = 1024)"),
    ("[OpTree23] §I, §IV-C", "OpTree's reduction vs NE, averaged over w = 96, 128 (N = 1024)"),
}


def golden_numbers(comparisons) -> dict[str, dict]:
    """Comparison rows grouped by golden file: ``{file: {"quantity [model]": {"paper", "collsim"}}}``."""
    out: dict[str, dict] = {}
    for c in comparisons:
        out.setdefault(FILES[c.item], {})[f"{c.item}: {c.quantity} [{c.model}]"] = {"paper": c.paper,
                                                                                   "collsim": c.collsim}
    return out


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    from collsim.experiments.papers.optree import reproduce
    out = tmp_path_factory.mktemp("optree")
    return reproduce(out, quick=True, jobs=2)


def test_files_are_written(quick):
    out = quick.out_dir
    assert quick.figures == ("fig4", "fig5", "fig6", "fig7")
    assert len(set(quick.tables)) == len(quick.tables)  # a table target's CSV never overwrites a figure's data
    targets = {t.table for t in quick.targets}
    assert targets <= set(quick.tables) and all(t.startswith("table-") for t in targets)
    assert [t.name for t in quick.targets] == ["optree-table1", "optree-motivation", "optree-fig4", "optree-lemma1"]
    for name in quick.tables:
        text = (out / name).read_text()
        assert text.count("\n") >= (4 if name in targets else 5), name  # the motivation example: 3 rows
    for fig in quick.figures:
        png, svg = (out / f"{fig}.png").read_bytes(), (out / f"{fig}.svg").read_text()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 30_000, fig
        assert svg.lstrip().startswith(("<?xml", "<svg")) and len(svg) > 30_000, fig
    assert (out / "optree-comparison.md").read_text().startswith("| item | quantity |")


@pytest.mark.parametrize("fig, series, labels", [
    ("fig4", [4, 4], ["N = 512", "N = 1024", "N = 2048", "N = 4096"]),
    ("fig5", [4, 4, 5, 5], ["OpTree", "WRHT", "Ring", "NE", "collsim best (not in the paper)"]),
    ("fig6", [4, 4, 5, 5], ["OpTree", "WRHT", "Ring", "NE", "collsim best (not in the paper)"]),
    ("fig7", [4] * 5 + [5] * 5, ["OpTree", "WRHT", "Ring", "NE", "collsim best (not in the paper)"]),
])
def test_figures_have_their_series(quick, fig, series, labels):
    # the quick run leaves out N = 2048 and 4096: its Fig. 6 has 2 panels per model (the full one 4);
    # the schedules' row has a fifth series, collsim's best schedule
    caption = quick.captions[fig]
    assert f"Series per panel: {series}." in caption
    svg = (quick.out_dir / f"{fig}.svg").read_text()
    for label in labels:  # the legend (svg.fonttype none keeps text as text)
        assert f">{label}<" in svg, (fig, label)
    for word in ("time", "(log)"):
        assert word in svg


def test_golden_numbers(quick):
    """Every number of the quick run equals the full run's golden value."""
    got = golden_numbers(quick.comparisons)
    assert set(got) == {p.stem for p in GOLDEN.glob("*.json")}
    diffs, checked = [], 0
    for name, rows in got.items():
        golden = json.loads((GOLDEN / f"{name}.json").read_text())
        assert list(rows) == list(golden), name  # the same quantities, in the same order
        for key, row in rows.items():
            if row["collsim"] is None:
                assert key.endswith("[schedule]"), key  # only schedules at N = 2048, 4096 are left out
                continue
            checked += 1
            want = golden[key]
            if row["paper"] != want["paper"] or not math.isclose(row["collsim"], want["collsim"], rel_tol=REL_TOL):
                diffs.append(f"{key}: golden {want} actual {row}")
    assert not diffs, "\n".join(diffs)
    assert checked >= 90  # 97 of the 113 rows: the 16 left out are schedules at N = 2048, 4096


def test_eq3_reproduces_every_printed_number_but_the_explained_ones(quick):
    eq3 = [c for c in quick.comparisons if c.model == "eq3"]
    assert all(c.collsim is not None for c in eq3)
    assert {(c.item, c.quantity) for c in eq3 if c.agrees is False} == EQ3_DISAGREEMENTS
    # issue 24: + the conference version's ten percentages; - Table 3's three w=128 rows, now model
    # "eq3, the text's w=128" (another reading of the last column, which it reproduces)
    assert len(eq3) == 57 + 10 - 3
    assert all(c.agrees for c in quick.comparisons if c.model == "eq3, the text's w=128")
    for c in quick.disagreements():
        assert c.explanation, c


def test_paper_numbers_are_truncated_step_ratios():
    """Table 2's printed entries are 1 − S_OpTree/S_X truncated to 2 decimals (N = 512 … 2048)."""
    from collsim.experiments.papers.optree.data import eq3_steps
    from collsim.experiments.papers.optree.tables import TABLE2_PRINTED
    for v, printed in TABLE2_PRINTED.items():
        for n, p in zip((512, 1024, 2048), printed):
            x = 100 * (1 - eq3_steps("optree", n, 64) / eq3_steps(v, n, 64))
            assert math.trunc(x * 100) / 100 == pytest.approx(p, abs=1e-9), (v, n)


@pytest.mark.parametrize("alg, n, w", [("optree", 64, 4), ("ne", 32, 4), ("wrht", 64, 2), ("ring", 16, 4)])
def test_schedule_structure_does_not_depend_on_size(alg, n, w):
    """The shortcut behind the reproduction: build once, re-time per size == rebuild per size."""
    from collsim import build, schedule_time_s
    from collsim.experiments.papers.optree.data import profile, retime
    base = build(alg, "paper", "allgather", 4 << 20, nodes=n, wavelengths=w)
    prof = profile(base)
    for size in (32 << 10, 1 << 20, 4096 << 20):
        other = build(alg, "paper", "allgather", size, nodes=n, wavelengths=w)
        for col in ("step", "src", "dst", "wavelength", "fiber", "direction"):
            assert np.array_equal(getattr(base, col), getattr(other, col)), col
        assert np.array_equal(base.size_bytes // (4 << 20), other.size_bytes // size)
        assert retime(prof, base.system, size) == pytest.approx(schedule_time_s(other), rel=1e-12)


def test_numbers_in_markdown_match_the_rows(quick):
    md = (quick.out_dir / "optree-comparison.md").read_text().splitlines()
    assert len(md) == len(quick.comparisons) + 2
    assert re.search(r"\| Table 3 / §V-E \| largest wavelength count", "\n".join(md))


def _update() -> None:
    from collsim.experiments.papers.optree import reproduce
    with tempfile.TemporaryDirectory() as tmp:
        result = reproduce(Path(tmp), jobs=2, progress=print)
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, rows in golden_numbers(result.comparisons).items():
        (GOLDEN / f"{name}.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        print("wrote", GOLDEN / f"{name}.json")


if __name__ == "__main__":
    if "--update" in sys.argv:
        _update()
    else:
        sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.parametrize("alg,coll", [("striped-ring", "allgather"), ("striped-ring", "allreduce"), ("ne", "allgather")])
def test_retime_handles_pieces_and_the_slot_latency(alg, coll):
    """A schedule cut into pieces (split > 1) retimes exactly at any size the pieces divide."""
    from collsim import build, schedule_time_s
    from collsim.experiments.papers.optree.data import profile, retime
    from collsim.systems import load_system
    system = load_system("paper", nodes=16, wavelengths=4, slot_latency_s=2e-6)
    prof = profile(build(alg, system, coll, 1 << 12))
    for size in (1 << 12, 1 << 20, 3 << 19):
        assert retime(prof, system, size) == pytest.approx(schedule_time_s(build(alg, system, coll, size)), rel=1e-12)
    if prof["split"] > 1:
        with pytest.raises(ValueError, match="equal pieces"):
            retime(prof, system, prof["split"] * 1000 + 1)


def test_the_best_line_is_feasible_verified_and_far_below_optree(quick):
    """collsim's best schedule beside the paper's algorithms: at least 5x OpTree, never below the bound."""
    import csv

    from collsim.core.collective import make_collective
    from collsim.pipeline import lower_bound_s
    from collsim.systems import load_system
    for fig in ("fig5", "fig6", "fig7"):
        with open(quick.out_dir / f"optree-{fig}.csv") as fh:
            rows = list(csv.DictReader(fh))
        best = [r for r in rows if r["algorithm"] == "best"]
        assert best and all(r["radices"].split()[0] in ("striped-ring", "striped-stages") for r in best)
        for r in best:
            n, w, m = int(r["nodes"]), int(r["wavelengths"]), int(r["size_bytes"])
            assert float(r["schedule_ratio_to_optree"]) <= 1 / 5, r
            lb = lower_bound_s(load_system("paper", nodes=n, wavelengths=w), make_collective("allgather", n, m))
            assert float(r["time_s"]) >= lb * (1 - 1e-12)


def test_the_papers_pure_model_beside_collsims():
    """Issue 24: eq. (3) with a constant a and the bound (N-1)d/(2wB), derived here independently."""
    from collsim.experiments.papers.optree.extra import pure_model_rows
    rows = {(r["nodes"], r["wavelengths"], r["algorithm"]): r for r in pure_model_rows(lambda *a: None)}
    d, b = 4 << 20, 40e9 / 8                       # 4 MiB; 40 Gb/s per wavelength
    r = rows[(1024, 64, "optree")]
    assert r["pure_bound_ms"] == pytest.approx(1e3 * 1023 * d / (2 * 64 * b), rel=1e-12)   # 6.70 ms
    assert r["pure_eq3_ms"] == pytest.approx(1e3 * 70 * (d / b + 25e-6 + 1e-9), rel=1e-12)  # 60.5 ms
    assert round(r["pure_bound_ms"], 2) == 6.70 and round(r["pure_eq3_ms"], 1) == 60.5
    # collsim's versions add one 1 ns O/E/O cycle per 32-byte flit: 15.6 % more per byte at 5 GB/s
    assert r["collsim_eq3_ms"] > r["pure_eq3_ms"] and r["collsim_bound_ms"] > r["pure_bound_ms"]
    assert r["collsim_eq3_ms"] == pytest.approx(1e3 * 70 * (d / b + 25e-6 + d / 32 * 1e-9), rel=1e-12)
