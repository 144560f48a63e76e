"""``collsim reproduce PAPER --out DIR``: run a paper's evaluation and say what it found."""

from __future__ import annotations

from pathlib import Path

from .output import Output, ProgressBar, echo, emit
from .progress import progress_enabled


def _descriptions() -> dict[str, str]:
    from ..experiments.papers.registry import papers
    return {name: r.description for name, r in papers().items()}


PAPER_DESCRIPTIONS = _descriptions()
"""One line per paper for ``collsim reproduce`` with no name (from the one registry,
:data:`collsim.experiments.papers.registry.REPRODUCTIONS`)."""
STORE_NAME = "results.sqlite"
"""The results store ``collsim reproduce PAPER --out DIR`` keeps in DIR, so a second run reuses its builds."""


def run_papers(name: str, out_dir: str | None, *, jobs: int, quick: bool, out: Output) -> None:
    """Run one paper's reproduction (or all) and print a summary per paper."""
    from ..core.files import naming, writable_folder
    from ..experiments.papers.reproduce import ALL, paper_names, reproduce_all, reproduce_paper
    from ..experiments.sweep.store import Store
    folder = Path(out_dir or f"reproduce-{name}")
    options = {"quick": True} if quick else {}
    store = None
    if name in paper_names():  # the builds of collsim's own evaluation are kept for the next run
        writable_folder(folder, "the --out folder")  # a read-only folder is refused before any work
        with naming(folder / STORE_NAME):
            store = Store(folder / STORE_NAME)
    try:
        with ProgressBar(f"reproducing {name}") as bar:
            def progress(what: str) -> None:
                bar.update(description=what)
            # no bar on a file or a pipe: one line per finished part on stderr instead
            log = None if progress_enabled() else (lambda line: echo(line, err=True))
            if name == ALL:
                results, report = reproduce_all(folder, store=store, jobs=jobs, progress=progress, log=log,
                                                **options)
            else:
                results, report = [reproduce_paper(name, folder, store=store, jobs=jobs, progress=progress,
                                                   log=log, **options)], None
    finally:
        if store is not None:
            store.close()
    from ..experiments.report.paperout import claim_counts
    rows = []
    for r in results:
        k = claim_counts(r.comparisons)
        rows.append({"paper": r.paper, "folder": str(r.out_dir), "figures": len(r.figures),
                     "numbers_compared": k["printed"], "agree": k["any_model"], "differ": k["none"],
                     "not_compared": k["printed"] - k["any_model"] - k["none"], "formulas": k["formula"],
                     "formulas_agree": k["formula_any_model"], "comparison_rows": k["rows"],
                     "table_targets": [t.name for t in r.targets],
                     "report": str(report) if report else None})

    def table() -> None:
        for row, r in zip(rows, results):
            if not r.comparisons:  # collsim's own evaluation (beyond): nothing printed to compare with
                echo(f"{row['paper']}: {row['figures']} figures and {len(r.tables)} tables in {row['folder']} "
                     f"(collsim's own evaluation: no paper prints these numbers)")
                continue
            what = (f"{row['numbers_compared']} distinct printed numbers" if row["numbers_compared"] else "")
            if row["formulas"]:
                what += (" and " if what else "") + f"{row['formulas']} of its formulas evaluated by collsim"
            echo(f"{row['paper']}: {row['figures']} figures, {what} ({row['comparison_rows']} comparison rows) in "
                 f"{row['folder']}: " + (f"{row['agree']} reproduced by some model, {row['differ']} by none"
                                         if row["numbers_compared"] else
                                         f"{row['formulas_agree']} formulas agree with some model")
                 + f" (explained in {r.paper}-comparison.md)"
                 + (f"; table targets: {', '.join(row['table_targets'])}" if row["table_targets"] else ""))
        if report:
            echo(f"report: {report}")
    emit(out, rows, table)
