"""Tuning: the fastest physically feasible, verified schedule per message size, and rules from it.

:func:`tune` builds, verifies and times every applicable algorithm (the registry's
:func:`~collsim.experiments.compare.applicable`) with every parameter set its ``tune``
hook offers (:meth:`~collsim.algorithms.registry.AlgorithmSpec.candidates`) at every
size, through the one pipeline.  Each (algorithm, parameters, size) is a **trial**;
a trial is **eligible** when its schedule verified and, on optical rings, every
lightpath is feasible under the system's device values (``feasible``).  Per size the
fastest eligible trial is the pick (times within :data:`TIE_RTOL` tie; ties go
to the algorithm name, then the parameters); the
runner-up is the fastest eligible trial of *another* algorithm.  A results
:class:`~collsim.experiments.sweep.store.Store` keeps every trial, so a second run with the
same inputs builds nothing.  :mod:`collsim.experiments.tune.rules` merges the picks into
size ranges and :mod:`collsim.experiments.tune.figure` draws them (docs/tune.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Iterable, Sequence

from ...algorithms import get_algorithm
from ...core.collective import canonical_collective, make_collective
from ...core.errors import CollsimError, InputError, UnsupportedError
from ...core.system import System
from ...core.totals import total_bytes
from ...core.units import format_size
from ...kinds.base import model_for
from ...systems import load_system
from ..compare import applicable, run_one
from ..sweep.store import Store, canonical_json

__all__ = ["OUTCOMES", "TIE_RTOL", "Choice", "Trial", "Tuning", "tunable", "tune"]

# Times this close (relative) are a tie, broken by algorithm name then parameters: two schedules that
# move the same bytes over the same channels differ only by rounding, and the pick must not flicker.
TIE_RTOL = 1e-9

OUTCOMES = ("built and verified", "failed verification", "could not be built")
"""What can become of a trial (:attr:`Trial.outcome`), in the order ``collsim tune`` counts them."""


@dataclass(frozen=True)
class Trial:
    """One algorithm with one parameter set at one size, evaluated (or why it could not be)."""

    algorithm: str
    params: dict[str, Any]
    size_bytes: int
    time_s: float | None
    lower_bound_s: float | None
    efficiency: float | None
    feasible: bool | None
    verified: bool
    error: str | None
    cached: bool = False
    part: dict[str, Any] | None = None

    @property
    def eligible(self) -> bool:
        """Verified, not infeasible, with a finite positive time: a trial that may be recommended."""
        return (self.verified and self.error is None and self.feasible is not False and self.time_s is not None
                and math.isfinite(self.time_s) and self.time_s > 0)

    @property
    def outcome(self) -> str:
        """What became of the trial, one of :data:`OUTCOMES`: its schedule was built and verified, was built
        and failed verification, or could not be built (no row: an algorithm that cannot build this instance,
        a schedule refused by the memory limit ...).
        """
        if self.verified and self.error is None:
            return OUTCOMES[0]
        return OUTCOMES[1] if self.time_s is not None else OUTCOMES[2]

    @property
    def choice(self) -> str:
        """``algorithm`` and its parameters as one word: ``ring stripe=64``."""
        return " ".join([self.algorithm, *(f"{k}={_text(v)}" for k, v in sorted(self.params.items()))])

    def sort_key(self) -> tuple:
        """Fastest first, then algorithm name, then canonical parameters (ties: :data:`TIE_RTOL`)."""
        return (self.time_s, self.algorithm, canonical_json(self.params))

    def to_json(self) -> dict[str, Any]:
        """The trial as a flat JSON-able dict (one CSV row)."""
        return {"algorithm": self.algorithm, "params": dict(self.params), "size_bytes": self.size_bytes,
                "time_s": self.time_s, "lower_bound_s": self.lower_bound_s, "efficiency": self.efficiency,
                "feasible": self.feasible, "verified": self.verified, "eligible": self.eligible,
                "error": self.error}


def _text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


@dataclass(frozen=True)
class Choice:
    """The decision at one size: the pick, the runner-up (another algorithm) and what was tried."""

    size_bytes: int
    total_bytes: int
    best: Trial | None
    runner_up: Trial | None
    tried: int
    eligible: int

    def to_json(self) -> dict[str, Any]:
        """One flat row: the size, the pick and the runner-up (None where there is none)."""
        b, r = self.best, self.runner_up
        return {"size_bytes": self.size_bytes, "total_bytes": self.total_bytes,
                "algorithm": b and b.algorithm, "params": b and dict(b.params), "time_s": b and b.time_s,
                "lower_bound_s": b and b.lower_bound_s, "efficiency": b and b.efficiency,
                "runner_up": r and r.algorithm, "runner_up_params": r and dict(r.params),
                "runner_up_time_s": r and r.time_s, "tried": self.tried, "eligible": self.eligible}


@dataclass(frozen=True)
class Tuning:
    """What :func:`tune` found.

    Attributes
    ----------
    built, failed, unbuilt, from_store : int
        What became of the trials, counted from them (each trial is counted once): built now and
        verified, built now and failed verification, tried now and could not be built, read from
        the results store (whatever their outcome, :attr:`Trial.outcome`).
    """

    system: System
    collective: str
    strategy: str
    trials: tuple[Trial, ...]
    choices: tuple[Choice, ...]
    skipped: tuple[str, ...] = field(default=())

    def _now(self, outcome: str) -> int:
        return sum(not t.cached and t.outcome == outcome for t in self.trials)

    @property
    def built(self) -> int:
        """Trials built and verified now (not read from the store)."""
        return self._now(OUTCOMES[0])

    @property
    def failed(self) -> int:
        """Trials built now whose schedule failed verification."""
        return self._now(OUTCOMES[1])

    @property
    def unbuilt(self) -> int:
        """Trials tried now that could not be built."""
        return self._now(OUTCOMES[2])

    @property
    def from_store(self) -> int:
        """Trials read from the results store (whatever their outcome)."""
        return sum(t.cached for t in self.trials)


def _fastest(trials: list[Trial]) -> Trial | None:
    """The fastest trial; times within :data:`TIE_RTOL` of it tie, and the tie goes to the name, then parameters."""
    if not trials:
        return None
    limit = min(t.time_s for t in trials) * (1 + TIE_RTOL)
    return min((t for t in trials if t.time_s <= limit), key=lambda t: t.sort_key()[1:])


def _trial(name: str, params: dict, size: int, row: dict, cached: bool, part_keys: tuple[str, ...] = ()) -> Trial:
    if "error_type" in row:  # could not build: the store's error record
        return Trial(name, params, size, None, None, None, None, False, row["error"], cached)
    reported = row.get("simulated_time_s") or row.get("time_s")
    return Trial(name, params, size, reported, row.get("lower_bound_s"), row.get("efficiency"),
                 row.get("feasible"), bool(row.get("verified")), row.get("error"), cached,
                 {k: row.get(k) for k in part_keys})


def _point(system: System, coll: str, name: str, params: dict, size: int, strategy: str) -> dict[str, Any]:
    return {"tool": "tune", "system": system.name, "system_description": system.describe(), "collective": coll,
            "algorithm": name, "params": params, "size_bytes": int(size), "strategy": strategy}


def tunable(system: System, collective: str, algorithms: Iterable[str] | None = None) -> tuple[list[str], list[str]]:
    """The algorithms :func:`tune` would try, and why the others in scope cannot run."""
    coll = canonical_collective(collective)
    make_collective(coll, system.nodes, 1)  # the fewest deliveries any schedule needs must fit: else refuse now
    if algorithms is None:
        found = applicable(system, coll)
        names, skipped = [n for n, why in found if why is None], [why for _, why in found if why is not None]
        if not names:
            raise UnsupportedError(f"no registered algorithm runs {coll} on this {system.topology} system"
                                   + (f" ({'; '.join(skipped)})" if skipped else ""))
        return names, skipped
    names = list(dict.fromkeys(get_algorithm(a).name for a in algorithms))
    if not names:
        raise InputError("give at least one algorithm to tune")
    for name in names:
        get_algorithm(name).check(system, coll)
    return names, []


def tune(system: str | System, collective: str, sizes: Sequence[int], *, algorithms: Iterable[str] | None = None,
         strategy: str = "first-fit", store: Store | None = None,
         progress: Callable[[int, int, str], None] | None = None, **overrides: Any) -> Tuning:
    """Evaluate every applicable algorithm and parameter set at every size; pick the fastest per size."""
    sysm = load_system(system, **overrides)
    coll = canonical_collective(collective)
    sizes = sorted({int(s) for s in sizes})
    if not sizes or sizes[0] < 1:
        raise InputError("tune needs at least one positive size")
    names, skipped = tunable(sysm, coll, algorithms)
    plan = [(size, name, dict(p)) for size in sizes for name in names
            for p in get_algorithm(name).candidates(sysm, coll, size)]
    part_class = model_for(sysm).part_class
    part_keys = tuple(f.name for f in fields(part_class)) if part_class is not None else ()
    trials: list[Trial] = []
    first_error: CollsimError | None = None
    for i, (size, name, params) in enumerate(plan):
        if progress:
            progress(i, len(plan), format_size(size))
        point = _point(sysm, coll, name, params, size, strategy)
        rec = store.get(point) if store is not None else None
        row = rec and (rec["result"] or {"error": rec["error"], "error_type": "stored"})
        if row is None:
            try:
                row = run_one(name, sysm, coll, size, strategy=strategy, **params).to_json()
            except CollsimError as exc:
                row = {"error": str(exc), "error_type": type(exc).__name__}
                first_error = first_error or exc
            if store is not None:
                store.put(point, row)
        trials.append(_trial(name, params, size, row, rec is not None, part_keys))
    if progress:
        progress(len(plan), len(plan), "done")
    if trials and all(t.outcome == OUTCOMES[2] for t in trials):  # nothing to pick from: refused, as compare refuses
        first = trials[0]
        raise first_error or UnsupportedError(f"no trial could be built (as the results store recorded), e.g. "
                                              f"{first.choice} at {format_size(first.size_bytes)}: {first.error}")
    choices = []
    for size in sizes:
        here = [t for t in trials if t.size_bytes == size]
        ok = [t for t in here if t.eligible]
        best = _fastest(ok)
        runner = _fastest([t for t in ok if best is not None and t.algorithm != best.algorithm])
        choices.append(Choice(size, total_bytes(coll, sysm.nodes, size), best, runner, len(here), len(ok)))
    return Tuning(sysm, coll, strategy, tuple(trials), tuple(choices), tuple(skipped))
