"""Sweeps: a grid of points, each built, verified and timed once, into a results store.

:func:`run_point` runs one point (:mod:`collsim.experiments.sweep.point`) through the
pipeline (closed forms, and on networks the flow simulator); :func:`run_sweep` runs the
points of a grid (:mod:`collsim.experiments.sweep.grid`) not yet in a
:class:`~collsim.experiments.sweep.store.Store`, in this process, in worker processes or on
an executor (MPI ranks), after checking they fit in memory
(:mod:`collsim.experiments.sweep.limits`).  docs/sweeps.md describes sweeps.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ...core.errors import CollsimError, InputError
from ..compare import placement_params, run_one
from .store import Store, point_key
from .limits import check_sweep
from .point import _count, _load, normalize_point

__all__ = ["run_point", "run_sweep"]


def run_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """Build, verify and time one point; never raises."""
    try:
        p = normalize_point(point)
        system = _load(p)
        params = placement_params(p["algorithm"], p["collective"], p["params"], nodes=system.nodes)
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        return run_one(p["algorithm"], system, p["collective"], p["size_bytes"], **params).to_json()
    except CollsimError as exc:
        return {"error": str(exc), "error_type": type(exc).__name__}
    except Exception as exc:  # noqa: BLE001 - a sweep records every failure and goes on
        return {"error": f"internal error: {type(exc).__name__}: {exc}", "error_type": type(exc).__name__}


def run_sweep(points: Iterable[Mapping[str, Any]], store: Store, jobs: int = 1,
              progress: Callable[[int, int, dict | None], None] | None = None, executor: Any = None) -> dict[str, Any]:
    """Run the points not yet in the store; the parent process writes each result as it finishes."""
    jobs = _count("jobs", jobs)
    if jobs < 1:
        raise InputError(f"jobs must be at least 1, not {jobs}")
    todo: dict[str, dict] = {}
    for p in map(normalize_point, points):
        todo.setdefault(point_key(p), p)
    store.check_writable()  # an old store whose keys could give stale rows: refused before anything runs
    have = store.keys()
    pending = [p for k, p in todo.items() if k not in have]
    check_sweep(pending, jobs if executor is None else 1)  # too big for memory: refused before anything runs
    summary = {"points": len(todo), "run": 0, "finished": len(todo) - len(pending), "failed": 0, "store": store.path}
    done = 0
    if progress:
        progress(0, len(pending), None)

    def record(point: dict, rec: dict) -> None:
        nonlocal done
        store.put(point, rec)
        done += 1
        summary["run"] += 1
        summary["failed"] += rec.get("error") is not None
        if progress:
            progress(done, len(pending), rec)

    if executor is None and (jobs == 1 or len(pending) <= 1):
        for p in pending:
            if store.get(p) is not None:  # a concurrent sweep finished it meanwhile
                summary["finished"] += 1
                done += 1
                continue
            record(p, run_point(p))
        return summary
    from concurrent.futures import ProcessPoolExecutor, as_completed
    pool = executor or ProcessPoolExecutor(max_workers=min(jobs, len(pending)))
    try:
        futures = {pool.submit(run_point, p): p for p in pending}
        for fut in as_completed(futures):
            record(futures[fut], fut.result())
    finally:
        if executor is None:  # an executor passed in is its owner's to shut down
            pool.shutdown(wait=True, cancel_futures=True)
    return summary
