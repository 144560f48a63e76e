"""Every optical algorithm against the lower bound over the papers' grids.

For each ring (N, w) of a grid, every registered algorithm that can run the
collective is built with each parameter set its registry entry proposes
(:meth:`~collsim.algorithms.registry.AlgorithmSpec.candidates`, the union over the
grid's sizes), verified, checked by the physical layer, and then timed at every
size of the grid by re-timing its profile (a schedule's structure does not depend
on the size once its parameters are fixed: :func:`~collsim.experiments.papers.optree.data.retime`,
exact, tested against rebuilds).  A row per (algorithm, N, w, size) keeps the
fastest of that algorithm's parameter sets; :func:`best_rows` picks the fastest
*physically feasible* algorithm per point, which is what "collsim's best schedule"
means everywhere in collsim's reports.

Each build runs in a process of its own, within a memory budget, and is written to
the results store as soon as it finishes (:mod:`collsim.experiments.papers.beyond.build_pool`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from ....core.errors import InputError
from ....core.collective import make_collective
from .build_pool import _system, run_builds
from ...sweep.store import canonical_json

COLUMNS = ("collective", "algorithm", "params", "nodes", "wavelengths", "size_bytes", "slots", "max_hops",
           "feasible", "time_s", "lower_bound_s", "efficiency")
"""Columns of :func:`efficiency_grid`'s rows (and of ``beyond-efficiency.csv``)."""


def candidates(system, collective: str, sizes: Iterable[int],
               algorithms: Iterable[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Every (algorithm, parameters) worth building for a collective on one system."""
    from ....algorithms import get_algorithm
    from ...compare import applicable
    wanted = None if algorithms is None else {get_algorithm(a).name for a in algorithms}
    out, seen = [], set()
    for name, why in applicable(system, collective):
        if why is not None or (wanted is not None and name not in wanted):
            continue
        spec = get_algorithm(name)
        for size in sizes:
            for params in spec.candidates(system, collective, int(size)):
                key = (name, canonical_json(params))
                if key not in seen:
                    seen.add(key)
                    out.append((name, dict(params)))
    return out


def _stored_candidates(ring, collective: str, sizes, algorithms, defaults_only: bool, store, system: str):
    """:func:`candidates` (or each algorithm once, with its defaults), kept in the results store.

    Proposing parameter sets can take seconds (striped-stages ranks its plans); a second run
    into the same folder reads them back.
    """
    if defaults_only:  # the algorithms that can run the instance, once each: no proposals needed
        from ....algorithms import get_algorithm
        from ...compare import applicable
        wanted = None if algorithms is None else {get_algorithm(a).name for a in algorithms}
        return [(name, {}) for name, why in applicable(ring, collective)
                if why is None and (wanted is None or name in wanted)]
    point = {"experiment": "beyond-candidates", "system": system, "collective": collective, "nodes": ring.nodes,
             "wavelengths": ring.wavelengths, "sizes": sorted(int(x) for x in sizes),
             "algorithms": None if algorithms is None else sorted(algorithms)}
    rec = None if store is None else store.get(point)
    if rec is not None and rec["status"] == "ok":
        return [(a, dict(p)) for a, p in rec["result"]["pairs"]]
    pairs = candidates(ring, collective, sizes, algorithms)
    if store is not None:
        store.put(point, {"pairs": [[a, p] for a, p in pairs]})
    return pairs


def efficiency_grid(points: Iterable[tuple[int, int, Iterable[int]]], collective: str = "allgather", *,
                    algorithms: Iterable[str] | None = None, system: str = "paper", jobs: int = 1,
                    progress: Callable[[str], Any] | None = None, defaults_only: bool = False,
                    store=None, log: Callable[[str], Any] | None = None) -> list[dict[str, Any]]:
    """Time every algorithm at every point of a grid, against the lower bound."""
    return efficiency_grids([(points, collective)], algorithms=algorithms, system=system, jobs=jobs,
                            progress=progress, defaults_only=defaults_only, store=store, log=log)[0]


def efficiency_grids(grids: Iterable[tuple[Iterable[tuple[int, int, Iterable[int]]], str]], *,
                     algorithms: Iterable[str] | None = None, system: str = "paper", jobs: int = 1,
                     progress: Callable[[str], Any] | None = None, defaults_only: bool = False,
                     store=None, log: Callable[[str], Any] | None = None) -> list[list[dict[str, Any]]]:
    """:func:`efficiency_grid` of several (points, collective) grids, their builds in one pool.

    One pool lets a small build of one grid run beside a large one of another, which must run
    alone in its own grid (``collsim reproduce beyond``: the all-reduce grid's builds beside the
    all-gather grid's largest).  The rows of each grid are what :func:`efficiency_grid` gives.
    """
    plans = [_Grid(points, collective, algorithms, system, defaults_only, store, log) for points, collective in grids]
    items, owner = [], {}
    for g, plan in enumerate(plans):
        for i in plan.todo:
            owner[len(items)] = (g, i)
            items.append((len(items), plan.tasks[i], plan.grid[(plan.tasks[i][2], plan.tasks[i][3])]))
    items.sort(key=lambda item: -item[1][2])   # big rings first, whichever grid

    def built(j: int, res: dict) -> None:
        g, i = owner[j]
        plans[g].built(i, res)

    def starting(j: int, k: int) -> None:
        if progress is not None:
            g, i = owner[j]
            t = plans[g].tasks[i]
            progress(f"beyond: {t[0]} {canonical_json(t[1])} N={t[2]} w={t[3]} ({k + 1}/{len(items)})")

    run_builds(items, built, jobs=jobs, started=starting)
    return [plan.rows() for plan in plans]


class _Grid:
    """One grid's tasks, the builds already in the store, and its rows once every build is timed."""

    def __init__(self, points, collective: str, algorithms, system: str, defaults_only: bool, store, log) -> None:
        grid: dict[tuple[int, int], list[int]] = {}
        for n, w, sizes in points:
            key = (int(n), int(w))
            grid.setdefault(key, [])
            grid[key] += [int(s) for s in sizes if int(s) not in grid[key]]
        if not grid:
            raise InputError("efficiency_grid needs at least one (nodes, wavelengths, sizes) point")
        tasks = []
        for (n, w), sizes in grid.items():
            ref = min(sizes)
            pairs = _stored_candidates(_system(n, w, system), collective, sizes, algorithms, defaults_only, store,
                                       system)
            for alg, params in pairs:
                tasks.append((alg, params, n, w, collective, ref, system))
        self.grid, self.tasks, self.collective, self.system, self.store, self.log = \
            grid, tasks, collective, system, store, log
        self.timed: dict[int, dict] = {}
        self.points_of = {i: _task_point(t, grid[(t[2], t[3])]) for i, t in enumerate(tasks)}
        rings = list(dict.fromkeys((t[2], t[3]) for t in tasks))
        self.rings = rings
        self.left = {key: sum((t[2], t[3]) == key for t in tasks) for key in rings}
        self.tally = {key: {"built": 0, "stored": 0, "failed": 0} for key in rings}
        self.t0 = time.monotonic()
        if store is not None:
            for i in range(len(tasks)):
                rec = store.get(self.points_of[i])
                if rec is not None:
                    self.finished(i, rec["result"] if rec["status"] == "ok" else {"error": rec["error"]}, "stored")
        self.todo = sorted((i for i in range(len(tasks)) if i not in self.timed), key=lambda i: -tasks[i][2])

    def finished(self, i: int, res: dict, how: str) -> None:
        self.timed[i] = res
        key = (self.tasks[i][2], self.tasks[i][3])
        self.tally[key][how] += 1
        self.tally[key]["failed"] += "error" in res
        self.left[key] -= 1
        if self.left[key] == 0 and self.log is not None:
            t = self.tally[key]
            done = sum(v == 0 for v in self.left.values())
            self.log(f"beyond: {self.collective} N={key[0]} w={key[1]}: {t['built'] + t['stored']} builds done "
                     f"({t['built']} built, {t['stored']} from the store, {t['failed']} left out); ring {done} of "
                     f"{len(self.rings)}, {time.monotonic() - self.t0:.0f} s")

    def built(self, i: int, res: dict) -> None:
        if self.store is not None:  # at once: a run killed later loses only the builds in progress
            if "error" in res:
                self.store.put(self.points_of[i], error=res["error"])
            else:
                self.store.put(self.points_of[i], res)
        self.finished(i, res, "built")

    def rows(self) -> list[dict[str, Any]]:
        from ....pipeline import lower_bound_s
        best: dict[tuple, dict] = {}
        for i, task in enumerate(self.tasks):
            b = self.timed[i]
            if "error" in b:
                continue
            alg, _, n, w, coll, _, _ = task
            ring = _system(n, w, self.system)
            for size, t in b["times"]:
                key = (alg, n, w, size)
                if key not in best or t < best[key]["time_s"]:
                    lb = lower_bound_s(ring, make_collective(coll, n, size))
                    best[key] = {"collective": coll, "algorithm": alg, "params": canonical_json(b["params"]),
                                 "nodes": n, "wavelengths": w, "size_bytes": size, "slots": b["slots"],
                                 "max_hops": b["max_hops"], "feasible": b["feasible"], "time_s": t,
                                 "lower_bound_s": lb, "efficiency": lb / t}
        return [best[k] for k in sorted(best)]


def _task_point(task: tuple, sizes) -> dict[str, Any]:
    """The results-store point of one build of :func:`efficiency_grid`."""
    alg, params, n, w, coll, ref, system = task
    return {"experiment": "efficiency-grid", "system": system, "algorithm": alg, "params": canonical_json(params),
            "nodes": n, "wavelengths": w, "collective": coll, "reference_size_bytes": ref,
            "sizes": sorted(int(x) for x in sizes)}


def best_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fastest physically feasible algorithm at every (N, w, size) of :func:`efficiency_grid`'s rows."""
    points: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["feasible"]:
            points.setdefault((r["nodes"], r["wavelengths"], r["size_bytes"]), []).append(r)
    out = []
    for key in sorted(points):
        fastest = min(r["time_s"] for r in points[key])
        # equal within rounding (a relative 1e-9): the one with fewer slots, then by name
        ranked = sorted(points[key], key=lambda r: (r["time_s"] > fastest * (1 + 1e-9), r["slots"], r["time_s"],
                                                     r["algorithm"]))
        top = dict(ranked[0])
        top["runner_up"] = ranked[1]["algorithm"] if len(ranked) > 1 else None
        top["runner_up_time_s"] = ranked[1]["time_s"] if len(ranked) > 1 else None
        out.append(top)
    return out
