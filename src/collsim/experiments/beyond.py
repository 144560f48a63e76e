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

Memory: every build runs in a process of its own (forked where the platform can),
which sends back only its facts and times and exits, so nothing a build allocated
(its schedule, the verifier's state, caches, a heap that glibc keeps after
``collsim.tune_malloc``) outlives it; builds run side by side only while their
estimates (:func:`build_memory_bytes`) fit :data:`BUILD_BUDGET_BYTES`, and each is
written to the results store as soon as it finishes, so a killed run loses only the
builds in progress.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from ..core.errors import CollsimError, InputError
from ..core.collective import make_collective, min_deliveries
from .store import canonical_json

COLUMNS = ("collective", "algorithm", "params", "nodes", "wavelengths", "size_bytes", "slots", "max_hops",
           "feasible", "time_s", "lower_bound_s", "efficiency")
"""Columns of :func:`efficiency_grid`'s rows (and of ``beyond-efficiency.csv``)."""

BUILD_BYTES_PER_DELIVERY = 400
"""Peak bytes of one build (build, verify, evaluate, profile) per chunk delivery its collective
needs at the least (:func:`~collsim.core.collective.min_deliveries`).  Measured: ``striped-ring``
all-gather at N = 2048, w = 64 peaks at 1.53 GiB for 4.19 M deliveries (383 B; it sends each block
in two pieces), ``ring`` at N = 4096 at 2.8 GiB for 16.8 M (179 B)."""
BUILD_BUDGET_BYTES = 4 * 2**30
"""Builds run side by side only while their estimates add up to at most this (or collsim's memory
limit, :mod:`collsim.core.limits`, if lower); a build estimated above it runs alone."""


def build_memory_bytes(task: tuple) -> int:
    """Estimated peak memory of one build of :func:`efficiency_grid` (:data:`BUILD_BYTES_PER_DELIVERY`).

    Parameters
    ----------
    task : tuple
        ``(algorithm, params, nodes, wavelengths, collective, size_bytes, system)``.

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> round(build_memory_bytes(("ring", {}, 4096, 64, "allgather", 1024, "paper")) / 2**30, 2)
    6.25
    """
    _, _, n, _, coll, _, _ = task
    return int(min_deliveries(coll, int(n), 1)) * BUILD_BYTES_PER_DELIVERY


def build_budget_bytes() -> int:
    """Memory the builds running at once may take together: :data:`BUILD_BUDGET_BYTES` or the limit.

    Returns
    -------
    int
        Bytes.

    Examples
    --------
    >>> build_budget_bytes() <= BUILD_BUDGET_BYTES
    True
    """
    from ..core.limits import memory_limit_bytes
    return min(BUILD_BUDGET_BYTES, memory_limit_bytes())


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
                    store=None, log: Callable[[str], Any] | None = None) -> list[dict[str, Any]]:
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
        Builds at once, each in a process of its own (:func:`run_builds`; fewer while their
        memory estimates do not fit :func:`build_budget_bytes`).
    progress : callable, optional
        Called with a line per build as it starts.
    defaults_only : bool, optional
        Build each algorithm once with its default parameters (chosen at the smallest
        size) instead of every parameter set it proposes.
    store : Store, optional
        Results store (:class:`~collsim.experiments.store.Store`): each build's times at
        every size are stored under its (algorithm, parameters, N, w, collective, sizes,
        system) and :data:`~collsim.experiments.store.MODEL_VERSION` as soon as it
        finishes, and read back instead of building again.
    log : callable, optional
        Called with one line per ring (N, w) whose builds are all done (a log for when
        no progress bar is drawn).

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
    rings = list(dict.fromkeys((t[2], t[3]) for t in tasks))
    left = {key: sum((t[2], t[3]) == key for t in tasks) for key in rings}
    tally = {key: {"built": 0, "stored": 0, "failed": 0} for key in rings}
    t0 = time.monotonic()

    def finished(i: int, res: dict, how: str) -> None:
        timed[i] = res
        key = (tasks[i][2], tasks[i][3])
        tally[key][how] += 1
        tally[key]["failed"] += "error" in res
        left[key] -= 1
        if left[key] == 0 and log is not None:
            t = tally[key]
            done = sum(v == 0 for v in left.values())
            log(f"beyond: {collective} N={key[0]} w={key[1]}: {t['built'] + t['stored']} builds done ({t['built']} "
                f"built, {t['stored']} from the store, {t['failed']} left out); ring {done} of {len(rings)}, "
                f"{time.monotonic() - t0:.0f} s")

    if store is not None:
        for i in range(len(tasks)):
            rec = store.get(points_of[i])
            if rec is not None:
                finished(i, rec["result"] if rec["status"] == "ok" else {"error": rec["error"]}, "stored")
    todo = sorted((i for i in range(len(tasks)) if i not in timed), key=lambda i: -tasks[i][2])  # big rings first

    def built(i: int, res: dict) -> None:
        if store is not None:  # at once: a run killed later loses only the builds in progress
            if "error" in res:
                store.put(points_of[i], error=res["error"])
            else:
                store.put(points_of[i], res)
        finished(i, res, "built")

    def starting(i: int, k: int) -> None:
        if progress is not None:
            progress(f"beyond: {tasks[i][0]} {canonical_json(tasks[i][1])} N={tasks[i][2]} w={tasks[i][3]} "
                     f"({k + 1}/{len(todo)})")

    run_builds([(i, tasks[i], grid[(tasks[i][2], tasks[i][3])]) for i in todo], built, jobs=jobs, started=starting)
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


def timed_build(task: tuple, sizes) -> dict[str, Any]:
    """Build one task (:func:`build_profile`) and time it at every size; what a build process sends back.

    Parameters
    ----------
    task : tuple
        ``(algorithm, params, nodes, wavelengths, collective, size_bytes, system)``.
    sizes : iterable of int
        The sizes to time it at.

    Returns
    -------
    dict
        ``algorithm, params, slots, max_hops, feasible, times`` (``[size, seconds]`` pairs), or
        ``error``: small, whatever the schedule's size.

    Examples
    --------
    >>> timed_build(("ring", {}, 8, 2, "allgather", 1024, "paper"), [1024, 2048])["times"][1][0]
    2048
    """
    return _times(task, build_profile(task), sizes)


class BuildDiedError(CollsimError):
    """A build process ended without sending its result (killed, e.g. by the kernel when memory ran out).

    :func:`run_builds` raises it after the other builds; it is a :class:`~collsim.core.errors.CollsimError`,
    so the command line reports it in one line.

    Examples
    --------
    >>> try:
    ...     raise BuildDiedError("1 build(s) died without a result (ring {} N=8 w=2: exit status -9)")
    ... except CollsimError as exc:
    ...     print(type(exc).__name__, exc)
    BuildDiedError 1 build(s) died without a result (ring {} N=8 w=2: exit status -9)
    """


BATCH_BYTES = 256 * 2**20
"""Small builds share a process: consecutive builds whose estimates add up to at most this run in one
(a process costs tens of milliseconds to start; what a small build leaves behind is small)."""


def _child(conn, batch: list[tuple[int, tuple, Any]]) -> None:
    """A build process: time each task of its batch, send each result (or the exception) as it is done, exit."""
    import traceback
    for i, task, sizes in batch:
        try:
            res: Any = ("ok", i, timed_build(task, sizes))
        except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
            res = ("raise", i, exc, traceback.format_exc())
        try:
            conn.send(res)
        except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
            conn.send(("raise", i, RuntimeError(repr(res[2])), str(exc)))
        if res[0] == "raise":
            break
    conn.close()


def _context():
    """The multiprocessing context for build processes: fork where there is one, else None."""
    import multiprocessing
    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _batches(items: list[tuple[int, tuple, Any]]) -> list[tuple[list, int]]:
    """Consecutive items grouped while their estimates fit :data:`BATCH_BYTES`; each with its largest estimate."""
    out: list[tuple[list, int]] = []
    size = 0
    for item in items:
        est = build_memory_bytes(item[1])
        if out and size + est <= BATCH_BYTES:
            out[-1][0].append(item)
            out[-1] = (out[-1][0], max(out[-1][1], est))
            size += est
        else:
            out.append(([item], est))
            size = est
    return out


def _name(task: tuple) -> str:
    return f"{task[0]} {canonical_json(task[1])} N={task[2]} w={task[3]}"


def run_builds(items: Iterable[tuple[int, tuple, Any]], done: Callable[[int, dict], Any], *, jobs: int = 1,
               started: Callable[[int, int], Any] | None = None, budget: int | None = None) -> None:
    """Time every task in processes that end with it, at most ``jobs`` at once and within a memory budget.

    Each build runs in a child process (forked where the platform can; in this process
    when it cannot and ``jobs`` is 1), which sends back only :func:`timed_build`'s small
    dict and exits, so no schedule, verifier state, cache or kept heap outlives it
    (consecutive small builds, :data:`BATCH_BYTES`, share one).  A process starts only
    while nothing runs or the estimates (:func:`build_memory_bytes`) of the processes
    running and its own fit the budget, so a build bigger than half of it runs alone.

    Parameters
    ----------
    items : iterable of (int, tuple, sizes)
        ``(index, task, sizes)`` in the order to start them.
    done : callable
        ``done(index, result)`` in the calling process as each build finishes (store it there).
    jobs : int, optional
        Processes at once (default 1).
    started : callable, optional
        ``started(index, k)`` as the k-th build (from 0) is handed to a process.
    budget : int, optional
        Bytes (default :func:`build_budget_bytes`).

    Returns
    -------
    None

    Raises
    ------
    BuildDiedError
        After the other builds, if a build process died without a result (the finished
        builds were passed to ``done``: with a store, a rerun builds only the rest).

    Examples
    --------
    >>> got = {}
    >>> run_builds([(0, ("ring", {}, 8, 2, "allgather", 1024, "paper"), [1024])], got.__setitem__, jobs=2)
    >>> got[0]["slots"]
    7
    """
    from multiprocessing.connection import wait
    items = list(items)
    budget = build_budget_bytes() if budget is None else int(budget)
    ctx = _context()
    if ctx is None and jobs <= 1:  # no fork (Windows): in this process
        for k, (i, task, sizes) in enumerate(items):
            if started is not None:
                started(i, k)
            done(i, timed_build(task, sizes))
        return
    if ctx is None:
        import multiprocessing
        ctx = multiprocessing.get_context("spawn")
    pending = _batches(items)
    running: dict[Any, tuple[Any, int, dict[int, tuple]]] = {}  # connection -> (process, estimate, tasks left)
    died: list[str] = []
    k = 0
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                batch, est = pending[0]
                if running and sum(r[1] for r in running.values()) + est > budget:
                    break
                pending.pop(0)
                for i, _, _ in batch:
                    if started is not None:
                        started(i, k)
                    k += 1
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(send, batch), daemon=True)
                proc.start()
                send.close()
                running[recv] = (proc, est, {i: task for i, task, _ in batch})
            for conn in wait(list(running)):
                proc, _, left = running[conn]
                try:
                    msg = conn.recv()
                except EOFError:  # the process has ended: whatever it did not send died with it
                    del running[conn]
                    conn.close()
                    proc.join()
                    died += [f"{_name(task)}: exit status {proc.exitcode}" for task in left.values()]
                    continue
                if msg[0] == "raise":
                    raise msg[2] from RuntimeError(f"in the build process of {_name(left[msg[1]])}:\n{msg[3]}")
                del left[msg[1]]
                done(msg[1], msg[2])
    finally:
        for proc, _, _ in running.values():
            proc.terminate()
            proc.join()
    if died:
        raise BuildDiedError(f"{len(died)} build(s) died without a result ({'; '.join(died[:3])}"
                             f"{'; ...' if len(died) > 3 else ''}; -9 is SIGKILL, often the kernel out of memory): "
                             "the finished builds are kept; run again to retry the others")


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
