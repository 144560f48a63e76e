"""Builds of the efficiency grid (:mod:`collsim.experiments.papers.beyond.grid`), each in a process of its own.

A build is one (algorithm, parameters) on one ring, as the task tuple
``(algorithm, params, nodes, wavelengths, collective, size_bytes, system)``:
:func:`build_profile` builds, verifies, evaluates and profiles it, and :func:`timed_build`
times it at every size of the grid.  :func:`run_builds` runs many, side by side.

Memory: every build runs in a process of its own (forked where the platform can),
which sends back only its facts and times and exits, so nothing a build allocated
(its schedule, the verifier's state, caches, a heap that glibc keeps after
``collsim.tune_malloc``) outlives it; builds run side by side only while their
estimates fit :data:`BUILD_BUDGET_BYTES` (:func:`build_memory_bytes` at first, then learned
from the peaks that earlier builds of the same family report, :class:`_Estimates`), and each is
handed back (to be written to the results store) as soon as it finishes, so a killed
run loses only the builds in progress.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ....core.errors import CollsimError
from ....core.collective import min_deliveries
from ....core.schedule import Schedule
from ...sweep.store import canonical_json

BUILD_BYTES_PER_DELIVERY = 400
"""Peak bytes of one build (build, verify, evaluate, profile) per chunk delivery its collective
needs at the least (:func:`~collsim.core.collective.min_deliveries`).  Measured: ``striped-ring``
all-gather at N = 2048, w = 64 peaks at 1.53 GiB for 4.19 M deliveries (383 B; it sends each block
in two pieces), ``ring`` at N = 4096 at 2.8 GiB for 16.8 M (179 B)."""
BUILD_BUDGET_BYTES = 4 * 2**30
"""Builds run side by side only while their estimates add up to at most this (or collsim's memory
limit, :mod:`collsim.core.limits`, if lower); a build estimated above it runs alone."""


def build_memory_bytes(task: tuple) -> int:
    """Estimated peak memory of one build of :func:`~.beyond.efficiency_grid` (:data:`BUILD_BYTES_PER_DELIVERY`)."""
    _, _, n, _, coll, _, _ = task
    return int(min_deliveries(coll, int(n), 1)) * BUILD_BYTES_PER_DELIVERY


def build_budget_bytes() -> int:
    """Memory the builds running at once may take together: :data:`BUILD_BUDGET_BYTES` or the limit."""
    from ....core.limits import memory_limit_bytes
    return min(BUILD_BUDGET_BYTES, memory_limit_bytes())


def _system(nodes: int, wavelengths: int, system: str = "paper"):
    from ....systems import load_system
    return load_system(system, nodes=int(nodes), wavelengths=int(wavelengths))

def build_profile(task: tuple) -> dict[str, Any]:
    """Build, verify, evaluate and profile one (algorithm, parameters) on one ring."""
    from ....core.errors import CollsimError
    from ....core.limits import MemoryLimitError
    from ....kinds import model_for
    from ....pipeline import build_compact, evaluate, verify
    from ..optree.data import profile
    alg, params, n, w, coll, size, system = task
    try:  # symmetric where that pays (collsim.pipeline.build_compact): the same verdict, row and profile
        sched = build_compact(alg, _system(n, w, system), coll, int(size), **params)
    except CollsimError as exc:
        return {"algorithm": alg, "params": dict(params), "error": str(exc)}
    try:
        report = verify(sched)  # raises on any violation: no unverified schedule is timed
    except MemoryLimitError as exc:  # too big to check here: left out, like one that cannot be built
        return {"algorithm": alg, "params": dict(params), "error": str(exc)}
    row = evaluate(sched, report=report)
    try:
        prof = profile(sched if isinstance(sched, Schedule) else model_for(sched.system).orbit_schedule(sched))
    except ValueError:  # pieces that do not scale (unequal at this size): time it per size instead
        prof = None
    return {"algorithm": alg, "params": dict(params), "slots": int(row.slots), "max_hops": int(row.max_hops),
            "feasible": bool(row.feasible), "time_s": float(row.time_s), "profile": prof}

def timed_build(task: tuple, sizes) -> dict[str, Any]:
    """Build one task (:func:`build_profile`) and time it at every size; what a build process sends back."""
    return _times(task, build_profile(task), sizes)


def _times(task: tuple, b: dict[str, Any], sizes) -> dict[str, Any]:
    """A build's facts and its time at every size (re-timed, or rebuilt where pieces do not scale)."""
    from ..optree.data import retime
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


class BuildDiedError(CollsimError):
    """A build process ended without sending its result (killed, e.g. by the kernel when memory ran out).

    :func:`run_builds` raises it after the other builds; it is a :class:`~collsim.core.errors.CollsimError`,
    so the command line reports it in one line.
    """


BATCH_BYTES = 256 * 2**20
"""Small builds share a process: consecutive builds whose estimates add up to at most this run in one
(a process costs tens of milliseconds to start; what a small build leaves behind is small)."""


def _child(conn, batch: list[tuple[int, tuple, Any]], large: bool = False) -> None:
    """A build process: time each task of its batch, send each result (or the exception) as it is done, exit.

    ``large``: a build that runs alone (its estimate above half the budget); its large arrays are
    mapped on their own (:func:`collsim._malloc.map_large_blocks`), which lowers its peak, the run's.
    """
    import traceback
    if large:
        from ...._malloc import map_large_blocks
        map_large_blocks()
    for i, task, sizes in batch:
        try:
            res: Any = ("ok", i, timed_build(task, sizes), _peak_bytes())
        except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
            res = ("raise", i, exc, traceback.format_exc())
        try:
            conn.send(res)
        except Exception as exc:  # noqa: BLE001 - an exception that does not pickle
            conn.send(("raise", i, RuntimeError(repr(res[2])), str(exc)))
        if res[0] == "raise":
            break
    conn.close()


def _peak_bytes() -> int:
    """This process's peak resident set so far (Linux's ``ru_maxrss`` is in KiB; 0 where unknown)."""
    try:
        import resource
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    except (ImportError, OSError):
        return 0


LEARNED_MARGIN = 1.25
"""A build's estimate learned from its family's measured peaks (:class:`_Estimates`) is this times
the largest peak a delivery seen so far (relay with k = 2 peaks 1.2 times k = 1 at N = 4096)."""


class _Estimates:
    """Memory estimates of builds, learned as builds finish.

    A build's *family* is its algorithm and collective with the parameters that are not numbers
    (``relay``'s base, ``striped-stages``' stage): its members differ in sizes and counts, not in how
    they build.  Once
    a build of a family has reported its peak, every later build of the family is estimated at
    :data:`LEARNED_MARGIN` times the family's largest peak a delivery (its deliveries at the least,
    :func:`~collsim.core.collective.min_deliveries`), when that is below :func:`build_memory_bytes`'s
    400 bytes a delivery: symmetric builds (kilobytes) and WRHT's (a tenth of that) then run beside
    others instead of alone.
    """

    def __init__(self) -> None:
        self.per_delivery: dict[str, float] = {}

    @staticmethod
    def family(task: tuple) -> str:
        alg, params, coll = task[0], task[1], task[4]
        return f"{alg} {coll} {canonical_json({k: v for k, v in dict(params).items() if isinstance(v, str)})}"

    def learn(self, task: tuple, peak_bytes: int) -> None:
        deliveries = max(1, int(min_deliveries(task[4], int(task[2]), 1)))
        key = self.family(task)
        self.per_delivery[key] = max(self.per_delivery.get(key, 0.0), peak_bytes / deliveries)

    def of(self, task: tuple) -> int:
        full = build_memory_bytes(task)
        per = self.per_delivery.get(self.family(task))
        if per is None or not per:
            return full
        return min(full, int(LEARNED_MARGIN * per * int(min_deliveries(task[4], int(task[2]), 1))))

    def batch(self, batch: list) -> int:
        return max(self.of(task) for _, task, _ in batch)


def _next_batch(pending: list, held: list[int], budget: int, estimates: _Estimates) -> int | None:
    """The first pending batch (in order) that may start beside the running ones (estimates ``held``):
    any when none runs, else one whose estimate fits the budget with theirs; None if none fits."""
    if not pending:
        return None
    if not held:
        return 0
    room = budget - sum(held)
    return next((j for j, b in enumerate(pending) if estimates.batch(b) <= room), None)


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
    while nothing runs or the estimates of the processes running and its own fit the budget,
    so a build bigger than half of it runs alone; the first batch in order that fits starts.  An
    estimate is :func:`build_memory_bytes` until a build of the same family has reported its peak,
    then learned from the peaks (:class:`_Estimates`).
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
    pending = [batch for batch, _ in _batches(items)]
    estimates = _Estimates()
    running: dict[Any, tuple[Any, int, dict[int, tuple]]] = {}  # connection -> (process, estimate, tasks left)
    died: list[str] = []
    k = 0
    try:
        while pending or running:
            while pending and len(running) < max(1, jobs):
                # the first batch (in order) that fits beside those running: a small build need not
                # wait behind a large one that must run alone
                pick = _next_batch(pending, [r[1] for r in running.values()], budget, estimates)
                if pick is None:
                    break
                batch = pending.pop(pick)
                est = estimates.batch(batch)
                for i, _, _ in batch:
                    if started is not None:
                        started(i, k)
                    k += 1
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(send, batch, 2 * est > budget), daemon=True)
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
                estimates.learn(left.pop(msg[1]), msg[3])
                done(msg[1], msg[2])
    finally:
        for proc, _, _ in running.values():
            proc.terminate()
            proc.join()
    if died:
        raise BuildDiedError(f"{len(died)} build(s) died without a result ({'; '.join(died[:3])}"
                             f"{'; ...' if len(died) > 3 else ''}; -9 is SIGKILL, often the kernel out of memory): "
                             "the finished builds are kept; run again to retry the others")
