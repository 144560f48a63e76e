"""Every optical algorithm against the lower bound over the papers' grids (issue #13).

For each ring (N, w) of a grid, every registered algorithm that can run the
collective is built with each parameter set its registry entry proposes
(:meth:`~collsim.algorithms.registry.AlgorithmSpec.candidates`, the union over the
grid's sizes), verified, checked by the physical layer, and then timed at every
size of the grid by re-timing its profile (a schedule's structure does not depend
on the size once its parameters are fixed: :func:`~.reproduce_optree_data.retime`,
exact, tested against rebuilds).  A row per (algorithm, N, w, size) keeps the
fastest of that algorithm's parameter sets; :func:`best_rows` picks the fastest
*physically feasible* algorithm per point, which is what "collsim's best schedule"
means everywhere in collsim's reports.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable

from ..core.errors import InputError
from ..core.collective import make_collective
from .store import canonical_json

COLUMNS = ("collective", "algorithm", "params", "nodes", "wavelengths", "size_bytes", "slots", "max_hops",
           "feasible", "time_s", "lower_bound_s", "efficiency")
"""Columns of :func:`efficiency_grid`'s rows (and of ``beyond-efficiency.csv``)."""


def _system(nodes: int, wavelengths: int, system: str = "paper"):
    from ..systems import load_system
    return load_system(system, nodes=int(nodes), wavelengths=int(wavelengths))


def candidates(system, collective: str, sizes: Iterable[int],
               algorithms: Iterable[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Every (algorithm, parameters) worth building for a collective on one system.

    Parameters
    ----------
    system : System
        The ring.
    collective : str
        Collective name.
    sizes : iterable of int
        The sizes it will be timed at (an algorithm may propose other parameters per size).
    algorithms : iterable of str, optional
        Restrict to these names (default: every algorithm that can run the instance).

    Returns
    -------
    list of (str, dict)
        Distinct pairs, in registry order then first proposal.

    Examples
    --------
    >>> pairs = candidates(_system(8, 2), "allgather", [1024])
    >>> ("striped-ring", {}) in pairs, [p for a, p in pairs if a == "ne"]
    (True, [{}])
    """
    from ..algorithms import get_algorithm
    from .compare import applicable
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


def build_profile(task: tuple) -> dict[str, Any]:
    """Build, verify, evaluate and profile one (algorithm, parameters) on one ring.

    Parameters
    ----------
    task : tuple
        ``(algorithm, params, nodes, wavelengths, collective, size_bytes, system)``.

    Returns
    -------
    dict
        ``algorithm, params`` (as chosen by the builder), ``slots, max_hops, feasible``,
        ``time_s`` and ``profile`` (:func:`~.reproduce_optree_data.profile`, None when the
        schedule's pieces do not scale with the size); ``error`` instead when the instance
        cannot be built.

    Examples
    --------
    >>> p = build_profile(("ring", {}, 8, 2, "allgather", 1024, "paper"))
    >>> p["slots"], p["feasible"], p["max_hops"]
    (7, True, 1)
    """
    from ..core.errors import CollsimError
    from ..core.limits import MemoryLimitError
    from ..pipeline import build, evaluate, verify
    from .reproduce_optree_data import profile
    alg, params, n, w, coll, size, system = task
    try:
        sched = build(alg, _system(n, w, system), coll, int(size), **params)
    except CollsimError as exc:
        return {"algorithm": alg, "params": dict(params), "error": str(exc)}
    try:
        report = verify(sched)  # raises on any violation: no unverified schedule is timed
    except MemoryLimitError as exc:  # too big to check here: left out, like one that cannot be built
        return {"algorithm": alg, "params": dict(params), "error": str(exc)}
    row = evaluate(sched, report=report)
    try:
        prof = profile(sched)
    except ValueError:  # pieces that do not scale (unequal at this size): time it per size instead
        prof = None
    return {"algorithm": alg, "params": dict(params), "slots": int(row.slots), "max_hops": int(row.max_hops),
            "feasible": bool(row.feasible), "time_s": float(row.time_s), "profile": prof}


def efficiency_grid(points: Iterable[tuple[int, int, Iterable[int]]], collective: str = "allgather", *,
                    algorithms: Iterable[str] | None = None, system: str = "paper", jobs: int = 1,
                    progress: Callable[[str], Any] | None = None, defaults_only: bool = False,
                    store=None) -> list[dict[str, Any]]:
    """Time every algorithm at every point of a grid, against the lower bound.

    Parameters
    ----------
    points : iterable of (int, int, iterable of int)
        ``(nodes, wavelengths, sizes)``; equal (N, w) pairs are merged.
    collective : str, optional
        Collective (default all-gather).
    algorithms : iterable of str, optional
        Restrict to these (default: every applicable one).
    system : str, optional
        Optical preset (default ``"paper"``).
    jobs : int, optional
        Processes for the builds.
    progress : callable, optional
        Called with a line per build.
    defaults_only : bool, optional
        Build each algorithm once with its default parameters (chosen at the smallest
        size) instead of every parameter set it proposes.
    store : Store, optional
        Results store (:class:`~collsim.experiments.store.Store`): each build's times at
        every size are stored under its (algorithm, parameters, N, w, collective, sizes,
        system) and :data:`~collsim.experiments.store.MODEL_VERSION`, and read back
        instead of building again.

    Returns
    -------
    list of dict
        One row per (algorithm, N, w, size) in :data:`COLUMNS`: the fastest of the
        algorithm's parameter sets there, with ``efficiency = lower_bound_s / time_s``.

    Examples
    --------
    >>> rows = efficiency_grid([(8, 2, [1024, 4096])], algorithms=["ring", "striped-ring"])
    >>> [(r["algorithm"], r["size_bytes"], r["slots"], r["feasible"]) for r in rows]
    [('ring', 1024, 7, True), ('ring', 4096, 7, True), ('striped-ring', 1024, 7, True), ('striped-ring', 4096, 7, True)]
    """
    from ..pipeline import lower_bound_s
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
        pairs = candidates(_system(n, w, system), collective, sizes, algorithms)
        if defaults_only:
            pairs = list(dict.fromkeys((a, "{}") for a, _ in pairs))
            pairs = [(a, {}) for a, _ in pairs]
        for alg, params in pairs:
            tasks.append((alg, params, n, w, collective, ref, system))
    timed: dict[int, dict] = {}
    points_of = {i: _task_point(t, grid[(t[2], t[3])]) for i, t in enumerate(tasks)}
    if store is not None:
        for i in range(len(tasks)):
            rec = store.get(points_of[i])
            if rec is not None:
                timed[i] = rec["result"] if rec["status"] == "ok" else {"error": rec["error"]}
    todo = sorted((i for i in range(len(tasks)) if i not in timed), key=lambda i: -tasks[i][2])  # big rings first
    built: dict[int, dict] = {}
    if jobs > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for i, res in zip(todo, pool.map(build_profile, [tasks[i] for i in todo])):
                built[i] = res
    else:
        for i in todo:
            if progress is not None:
                progress(f"beyond: {tasks[i][0]} {canonical_json(tasks[i][1])} N={tasks[i][2]} w={tasks[i][3]}")
            built[i] = build_profile(tasks[i])
    for i in todo:
        timed[i] = _times(tasks[i], built[i], grid[(tasks[i][2], tasks[i][3])])
        if store is not None:
            if "error" in timed[i]:
                store.put(points_of[i], error=timed[i]["error"])
            else:
                store.put(points_of[i], timed[i])
    best: dict[tuple, dict] = {}
    for i, task in enumerate(tasks):
        b = timed[i]
        if "error" in b:
            continue
        alg, _, n, w, coll, _, _ = task
        ring = _system(n, w, system)
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


def _times(task: tuple, b: dict[str, Any], sizes) -> dict[str, Any]:
    """A build's facts and its time at every size (re-timed, or rebuilt where pieces do not scale)."""
    from .reproduce_optree_data import retime
    if "error" in b:
        return {"error": b["error"]}
    alg, _, n, w, _, _, system = task
    ring = _system(n, w, system)
    times = []
    for size in sizes:
        if b["profile"] is not None:
            times.append([int(size), retime(b["profile"], ring, size)])
        else:  # rebuilt at this size (verified again)
            times.append([int(size), build_profile(task[:5] + (int(size),) + task[6:])["time_s"]])
    return {"algorithm": alg, "params": b["params"], "slots": b["slots"], "max_hops": b["max_hops"],
            "feasible": b["feasible"], "times": times}


def best_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fastest physically feasible algorithm at every (N, w, size) of :func:`efficiency_grid`'s rows.

    Parameters
    ----------
    rows : iterable of dict
        Rows of :func:`efficiency_grid`.

    Returns
    -------
    list of dict
        One row per point (the winner's row, with ``runner_up`` and ``runner_up_time_s``
        added), sorted by (N, w, size); points with no feasible schedule are left out.
        Times within a relative 1e-9 of the fastest count as equal: the one with fewer
        slots wins (it is also the faster one once slots cost anything).

    Examples
    --------
    >>> rows = efficiency_grid([(8, 2, [1024])], algorithms=["ring", "striped-ring"])
    >>> [(b["algorithm"], b["runner_up"]) for b in best_rows(rows)]
    [('striped-ring', 'ring')]
    """
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
