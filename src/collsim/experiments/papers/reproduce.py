"""``collsim reproduce PAPER --out DIR``: regenerate a paper's evaluation, or all of them.

Each paper's module (a paper of :data:`collsim.experiments.papers.registry.REPRODUCTIONS`) has a
``reproduce(out_dir, *, store=None, jobs=1, progress=None)`` function returning a
:class:`~collsim.experiments.report.paperout.PaperResult`.  :func:`reproduce_paper` runs
one into ``DIR``; :func:`reproduce_all` runs every paper into ``DIR/<paper>/`` and
writes one self-contained HTML report, ``DIR/report.html``
(:mod:`collsim.experiments.report.html`).
"""

from __future__ import annotations

import importlib
import inspect
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ...core.errors import InputError, UnknownNameError, did_you_mean
from ..report.paperout import PaperResult
from .registry import ALL, tables
from .registry import papers as paper_entries


PAPERS: dict[str, str] = {name: r.module for name, r in paper_entries().items() if r.module is not None}
"""Paper name -> module whose ``reproduce`` regenerates it (from :mod:`collsim.experiments.papers.registry`)."""

SIZE_NOTES: dict[str, str] = {name: r.size_note for name, r in tables().items() if r.size_note}
"""Per table: how the paper's sizes are read, in bytes (printed under ``collsim reproduce NAME``); from the one
registry, :data:`collsim.experiments.papers.registry.REPRODUCTIONS`."""

EXPERIMENTS: dict[str, tuple[Callable[[], list[dict[str, Any]]], str]] = {
    name: (r.load(), r.description) for name, r in tables().items()}
"""Table name -> (its rows function, its description): the tables of the one registry,
:data:`collsim.experiments.papers.registry.REPRODUCTIONS`, resolved."""



def available_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def paper_names() -> list[str]:
    """The papers ``reproduce`` knows, plus ``all``."""
    return [*PAPERS, ALL]


def _module(paper: str):
    if paper not in PAPERS:
        hint = did_you_mean(paper, paper_names())
        raise UnknownNameError(f"unknown paper {paper!r}{hint + ' Known' if hint else '; known'}: "
                               f"{', '.join(paper_names())}")
    try:
        return importlib.import_module(PAPERS[paper])
    except ModuleNotFoundError as exc:
        if exc.name == PAPERS[paper]:
            raise InputError(f"the {paper} reproduction is not available in this version of collsim") from None
        raise


def reproduce_paper(paper: str, out_dir: str | Path, *, store=None, jobs: int = 1,
                    progress: Callable[[str], Any] | None = None, log: Callable[[str], Any] | None = None,
                    **options: Any) -> PaperResult:
    """Regenerate one paper's evaluation into ``out_dir`` (created if needed)."""
    fn = _module(paper).reproduce
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from exc
    accepted = inspect.signature(fn).parameters
    extra = {k: v for k, v in {**options, "log": log}.items() if k in accepted}
    result = fn(out, store=store, jobs=jobs, progress=progress, **extra)
    described = tuple(replace(t, what=t.what or tables()[t.name].description) for t in result.targets)
    return replace(result, targets=described)


def reproduce_all(out_dir: str | Path, *, store=None, jobs: int = 1, progress: Callable[[str], Any] | None = None,
                  papers: list[str] | None = None, log: Callable[[str], Any] | None = None,
                  **options: Any) -> tuple[list[PaperResult], Path]:
    """Regenerate every paper into ``out_dir/<paper>/`` and write ``out_dir/report.html``."""
    from ..._version import __version__
    names = list(PAPERS) if papers is None else list(papers)
    for name in names:
        _module(name)  # fail on an unknown paper before any work
    out = Path(out_dir)
    results = []
    for name in names:
        if progress is not None:
            progress(f"reproducing {name}")
        results.append(reproduce_paper(name, out / name, store=store, jobs=jobs, progress=progress, log=log,
                                       **options))
        from ..._malloc import release_memory
        release_memory()   # the papers are independent: what one freed goes back, not into the next's processes
        if log is not None:
            log(f"reproduced {name} into {out / name}")
    from ..report.html import write_report
    where = getattr(store, "path", None)
    kept = ("none" if store is None else
            Path(os.path.relpath(Path(where).resolve(), out.resolve())).as_posix() if where is not None
            else type(store).__name__)  # relative to the report: the page is the same in every folder
    provenance = {"collsim version": __version__, "papers": ", ".join(names), "jobs": jobs,
                  "results store": kept, **{k: v for k, v in sorted(options.items())}}
    report = write_report(results, out / "report.html", provenance=provenance)
    return results, report
