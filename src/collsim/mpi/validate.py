"""``collsim validate``: predicted against measured, on the machine the model was calibrated on.

Every chosen (algorithm, collective, size) is built on the calibrated star, **run for real** by
collsim's executor beside MPI's own collective (:func:`collsim.mpi.executor.run_schedule`), and
predicted four ways: the ``loggp-piecewise`` closed form and flow simulator (the system's model),
and the plain α–β closed form and flow simulator (the same star without its model: the
baseline).  Errors are judged against the **median** iteration, and summarised per model as the
geometric mean of ``|predicted − measured| / measured`` and the largest of them
(:func:`summarize`).  When the ping-pong's repeated measurements scatter more than
:data:`~collsim.mpi.loggp_calibrate.NOISY_SPREAD` the summary refuses to judge the accuracy.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..core.errors import InputError

__all__ = ["BAND", "DEFAULT_PAIRS", "DEFAULT_SIZES_BYTES", "MODELS", "REFERENCE_SIZES_BYTES", "TARGET_GEOMEAN",
           "TARGET_MAX", "ValidationRow", "check_rows_memory", "drift", "parse_pairs", "run_rows", "summarize",
           "validation_calibration"]

DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (
    ("ring", "allreduce"), ("recursive-doubling", "allreduce"), ("rabenseifner", "allreduce"),
    ("ring", "allgather"), ("bruck", "allgather"), ("recursive-doubling", "allgather"))
"""The six (algorithm, collective) pairs validated by default."""
DEFAULT_SIZES_BYTES: tuple[int, ...] = (1024, 16384, 262144, 4194304)
"""The sizes validated by default: 1 KiB, 16 KiB, 256 KiB, 4 MiB."""
REFERENCE_SIZES_BYTES: tuple[int, ...] = (1024, 65536, 1048576)
"""Exchange sizes validation measures again in every pass, to see whether the machine drifted since the calibration."""
TARGET_GEOMEAN = 0.15
"""Target: geometric-mean relative error of the median-iteration prediction."""
TARGET_MAX = 0.40
"""Target: largest relative error at any size."""
BAND = 0.15
"""The band drawn around the diagonal of the figure (±15 %)."""
MODELS = ("loggp_closed", "loggp_sim", "plain_closed", "plain_sim")
"""The predictions of a row: ``loggp-piecewise`` closed form and flow simulator, plain α–β closed form and flow
simulator."""


@dataclass(frozen=True)
class ValidationRow:
    """One (algorithm, collective, size) run for real and predicted."""

    algorithm: str
    collective: str
    nodes: int
    size_bytes: int
    median_s: float
    mean_s: float
    min_s: float
    spread: float
    native_median_s: float
    loggp_closed_s: float
    loggp_sim_s: float
    plain_closed_s: float
    plain_sim_s: float

    def error(self, model: str) -> float:
        """``(predicted − measured median) / measured median`` of one of :data:`MODELS`."""
        return (getattr(self, f"{model}_s") - self.median_s) / self.median_s

    def to_json(self) -> dict[str, Any]:
        """The row as a dict, with ``<model>_error_pct`` beside each prediction."""
        out = dataclasses.asdict(self)
        for m in MODELS:
            out[f"{m}_error_pct"] = round(100.0 * self.error(m), 6)
        return out


def parse_pairs(text: str | None) -> tuple[tuple[str, str], ...]:
    """``ALG:COLL,ALG:COLL`` as pairs (None: :data:`DEFAULT_PAIRS`)."""
    if text is None:
        return DEFAULT_PAIRS
    out = []
    for item in (s.strip() for s in text.split(",")):
        alg, sep, coll = item.partition(":")
        if not sep or not alg.strip() or not coll.strip():
            raise InputError(f"--rows is a comma-separated list of ALGORITHM:COLLECTIVE (ring:allreduce), not {item!r}")
        out.append((alg.strip(), coll.strip()))
    return tuple(out)


def validation_calibration(path: str, ranks: int):
    """Read the calibration a validation predicts with, refusing any other file before MPI runs anything."""
    from .calibration_file import read_calibration
    cal = read_calibration(path)
    cal.require("loggp-piecewise", "validate (the loggp-piecewise model against the plain one)")
    if cal.ranks != ranks:
        raise InputError(f"{path} is a calibration of {cal.ranks} MPI ranks but this job has {ranks}: validate "
                         f"runs its collectives on as many ranks as were calibrated: run it as mpiexec -n "
                         f"{cal.ranks} ...")
    return cal


def check_rows_memory(pairs: Sequence[tuple[str, str]], sizes_bytes: Sequence[int], dtype: str, comm: Any) -> None:
    """Refuse rows whose runs would not fit in memory, before anything is calibrated or run (collective call).

    Every row is built on a star of the job's ranks (which also refuses an unknown algorithm or a
    collective it cannot do) and goes to :func:`collsim.mpi.memory.check_schedules_memory`, the check
    every MPI command shares.
    """
    from ..pipeline import build
    from ..kinds.network.electrical import Star
    from .memory import check_schedules_memory
    star = Star(nodes=comm.Get_size())
    check_schedules_memory((build(alg, star, coll, int(size)) for alg, coll in pairs for size in sizes_bytes), dtype,
                           comm)


def run_rows(system, pairs: Sequence[tuple[str, str]], sizes_bytes: Sequence[int], *, iterations: int = 20,
             warmup: int = 5, dtype: str = "int64", op: str = "sum", comm: Any = None,
             passes: int = 5, reference: dict[int, list[float]] | None = None) -> list[ValidationRow] | None:
    """Run and predict every (pair, size) on the ranks of ``comm`` (collective call)."""
    from ..pipeline import build
    from ..cost.loggp import system_model
    from ..pipeline import evaluate
    from .executor import run_schedule
    if system_model(system) is None:
        raise InputError("validation compares the loggp-piecewise model with the plain alpha-beta one: the system "
                         "has no model (collsim calibrate --model loggp-piecewise writes one)")
    plain = dataclasses.replace(system, model=None)
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    keys = [(alg, coll, int(size)) for alg, coll in pairs for size in sizes_bytes]
    scheds = {k: build(k[0], system, k[1], k[2]) for k in keys}
    per_pass = max(1, -(-iterations // passes))
    mine_t: dict[tuple, list[float]] = {k: [] for k in keys}
    native_t: dict[tuple, list[float]] = {k: [] for k in keys}
    for j in range(passes):
        for k in keys:
            result = run_schedule(scheds[k], comm, iterations=per_pass, warmup=warmup, op=op, dtype=dtype,
                                  verify=j == 0)
            mine_t[k] += list(result.times_s)
            native_t[k] += list(result.native_times_s)
        if reference:
            from .microbench import exchange_samples
            for size in reference:
                sample = exchange_samples(comm, [size], per_pass, warmup, dtype, passes=1)
                reference[size].append(sample[0].median_s)
    if comm.Get_rank() != 0:
        return None
    out = []
    for k in keys:
        times = np.asarray(mine_t[k], dtype=float)
        q1, med, q3 = np.percentile(times, [25, 50, 75])
        mine = evaluate(scheds[k])
        base = evaluate(build(k[0], plain, k[1], k[2]))
        out.append(ValidationRow(k[0], k[1], system.nodes, k[2], float(med), float(times.mean()), float(times.min()),
                                 float((q3 - q1) / med), float(np.median(native_t[k])), mine.alpha_beta_time_s,
                                 mine.part.simulated_time_s, base.alpha_beta_time_s, base.part.simulated_time_s))
    return out


def drift(calibrated: Sequence[Any], reference: dict[int, list[float]]) -> float | None:
    """How far the machine moved since the calibration: the median over the reference sizes of
    ``|median now / median calibrated − 1|`` of the exchange step.
    """
    by_size = {s.size_bytes: s.median_s for s in calibrated}
    moved = [abs(float(np.median(v)) / by_size[k] - 1) for k, v in reference.items() if k in by_size and v]
    return float(np.median(moved)) if moved else None


def _geomean(values: Sequence[float]) -> float:
    return float(math.exp(np.mean(np.log(np.maximum(np.abs(values), 1e-9))))) if len(values) else float("nan")


def summarize(rows: Sequence[ValidationRow], pingpong_spread: float | None, noisy_spread: float | None = None, *,
              exchange_spread: float | None = None, ranks: int | None = None, cores: int | None = None,
              drift_since_calibration: float | None = None) -> dict[str, Any]:
    """Per model the geometric-mean and largest relative error, and whether the targets are met.

    The accuracy is judged only when the machine was quiet enough: the calibration's ping-pong
    spread is known and, like the exchange's and the rows' own iterations', at most
    ``noisy_spread``.  With more ranks than cores every step waits for the OS scheduler and the
    times are its time slices; that is said too.
    """
    from .loggp_calibrate import NOISY_SPREAD
    limit = NOISY_SPREAD if noisy_spread is None else noisy_spread
    iteration_spread = float(np.median([r.spread for r in rows])) if rows else None
    noisy = [f"the {what} times scatter by {100 * value:.0f}%"
             for what, value in (("ping-pong", pingpong_spread), ("exchange", exchange_spread),
                                 ("collectives'", iteration_spread)) if value is not None and value > limit]
    if drift_since_calibration is not None and drift_since_calibration > limit:
        noisy.append(f"the exchange step runs {100 * drift_since_calibration:.0f}% off its calibrated time "
                     "(the load changed since the calibration)")
    if pingpong_spread is None:
        judged, reason = False, "the calibration has no ping-pong quartiles: its noise is unknown, accuracy not judged"
    elif noisy:
        judged, reason = False, (f"too noisy to judge: {', '.join(noisy)} (IQR / median, median over sizes; at most "
                                 f"{100 * limit:.0f}%)")
    else:
        judged, reason = True, (f"ping-pong spread {100 * pingpong_spread:.0f}% (at most {100 * limit:.0f}%): "
                                "quiet enough to judge")
    if ranks is not None and cores is not None and ranks > cores:
        reason += (f"; {ranks} ranks on {cores} cores: oversubscribed, every step waits for the OS scheduler "
                   "(docs/calibration.md)")
    models = {}
    for m in MODELS:
        errs = [abs(r.error(m)) for r in rows]
        worst = rows[int(np.argmax(errs))] if rows else None
        entry = {"geomean_error": _geomean(errs), "max_error": float(max(errs)) if errs else float("nan"),
                 "worst": None if worst is None else f"{worst.algorithm} {worst.collective} {worst.size_bytes} B"}
        if judged:
            entry["meets_targets"] = bool(entry["geomean_error"] <= TARGET_GEOMEAN and entry["max_error"] <= TARGET_MAX)
        models[m] = entry
    return {"models": models, "judged": judged, "reason": reason, "pingpong_spread": pingpong_spread,
            "exchange_spread": exchange_spread, "median_iteration_spread": iteration_spread,
            "drift_since_calibration": drift_since_calibration,
            "targets": {"geomean_error": TARGET_GEOMEAN, "max_error": TARGET_MAX}}
