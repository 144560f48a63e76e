"""``collsim calibrate --model loggp-piecewise``: measure, fit and write the richer calibrated model.

It keeps the plain α–β calibration (ping-pong, :mod:`collsim.mpi.calibrate`: the ``[system]``
link parameters and the ``[calibration]`` table, as before) and adds

* the **two-way exchange** table (:func:`collsim.mpi.microbench.exchange_samples`) and its
  piecewise α–β fit with breakpoints found from the data (:func:`collsim.mpi.loggp_fit.fit_piecewise`),
  on the **median** iteration (the statistic predictions are judged on);
* the **local copy** table (:func:`collsim.mpi.microbench.local_samples`) and the **reduction**
  table: what a reducing step (a ring reduce-scatter with ``--dtype`` and ``--op``) takes beyond
  a plain exchange step (:func:`collsim.mpi.microbench.reduction_samples`); their piecewise fits
  (caches make them piecewise too);
* the per-message overhead o of the ping-pong's burst.

The file gets a ``[system.model]`` table (:class:`~collsim.core.commmodel.LogGPPiecewise`) that
``load_system`` reads, and ``[calibration.exchange]`` / ``[calibration.local]`` tables with the
raw times, so that ``--refit`` fits them again without MPI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..core.commmodel import LogGPPiecewise
from ..core.errors import InputError
from ..core.files import atomic_write
from .calibrate import Calibration, Sample, _toml_value, calibration_from  # noqa: F401  (doctests)
from .loggp_fit import PiecewiseFit, fit_piecewise

__all__ = ["NOISY_SPREAD", "POOR_PIECEWISE_MAX_ERROR", "POOR_PIECEWISE_R_SQUARED", "LogGPCalibration",
           "loggp_calibration_from", "loggp_warning", "measure_loggp", "samples_from_table", "spread_of"]

POOR_PIECEWISE_R_SQUARED = 0.95
"""A piecewise fit with R² below this is reported as poor."""
POOR_PIECEWISE_MAX_ERROR = 0.25
"""A piecewise fit whose largest relative error is above this (25 %) is reported as poor."""
NOISY_SPREAD = 0.25
"""Times whose median interquartile spread ``(q3 − q1) / median`` over the sizes is above this (25 %)
are too noisy to judge a model's accuracy against (``collsim validate`` refuses to)."""


def spread_of(samples: Sequence[Sample]) -> float | None:
    """The median over sizes of ``(q3 − q1) / median``: how much repeated measurements of one size scatter."""
    values = [s.spread for s in samples if s.spread is not None]
    return round(float(np.median(values)), 12) if values else None


@dataclass(frozen=True)
class LogGPCalibration:
    """The plain α–β calibration and the ``loggp-piecewise`` model fitted beside it."""

    plain: Calibration
    exchange: tuple[Sample, ...]
    fit: PiecewiseFit
    copies: tuple[Sample, ...]
    reductions: tuple[Sample, ...]
    copy: PiecewiseFit
    reduce: PiecewiseFit
    dtype: str
    op: str

    def model(self) -> LogGPPiecewise:
        """The model the system file carries."""
        return LogGPPiecewise(self.fit.breakpoints_bytes, self.fit.alpha_s, self.fit.beta_bytes_per_s,
                              self.plain.overhead_s, self.copy.breakpoints_bytes, self.copy.alpha_s,
                              self.copy.beta_bytes_per_s, self.reduce.breakpoints_bytes, self.reduce.alpha_s,
                              self.reduce.beta_bytes_per_s, self.dtype, self.op)

    def exchange_rows(self) -> list[dict[str, Any]]:
        """The exchange table with the fit beside each median: ``size_bytes``, ``count``, ``median_s``,
        ``min_s``, ``q1_s``, ``q3_s``, ``fit_s``, ``error_percent``."""
        fitted = self.fit.predict_s(np.array([s.size_bytes for s in self.exchange], dtype=float))
        return [{"size_bytes": s.size_bytes, "count": s.count, "median_s": s.median_s, "min_s": s.min_s,
                 "q1_s": s.q1_s, "q3_s": s.q3_s, "fit_s": float(f),
                 "error_percent": round(100.0 * (float(f) - s.median_s) / s.median_s, 6)}
                for s, f in zip(self.exchange, fitted)]

    def to_json(self) -> dict[str, Any]:
        """The plain calibration's JSON (:meth:`Calibration.to_json`) plus ``model`` (the fitted model),
        ``exchange`` (its rows and fit quality), ``local`` (copy and reduction fits) and the spreads."""
        return {**self.plain.to_json(), "model": self.model().to_dict(),
                "exchange": {"r_squared": self.fit.r_squared, "max_relative_error": self.fit.max_relative_error,
                             "spread": spread_of(self.exchange), "rows": self.exchange_rows()},
                "local": {"dtype": self.dtype, "op": self.op,
                          "copy": {"r_squared": self.copy.r_squared,
                                   "max_relative_error": self.copy.max_relative_error},
                          "reduce": {"r_squared": self.reduce.r_squared,
                                     "max_relative_error": self.reduce.max_relative_error}},
                "pingpong_spread": spread_of(self.plain.samples)}

    def system_toml(self, name: str = "calibrated") -> str:
        """The plain calibration's file with ``[system.model]``, ``[calibration.exchange]`` and
        ``[calibration.local]`` added (``load_system`` reads ``[system]`` and its model)."""
        text = self.plain.system_toml(name)
        head, sep, tail = text.partition("\n[calibration]\n")
        model = ["", "[system.model]"] + [f"{k} = {_toml_value(v) if not isinstance(v, (list, bool)) else _toml(v)}"
                                          for k, v in self.model().to_dict().items()]
        lines = [head.rstrip("\n"), *model, "", "[calibration]", tail.rstrip("\n"), "", "[calibration.exchange]",
                 "statistic = \"median\""]
        for key in ("size_bytes", "count", "median_s", "min_s", "q1_s", "q3_s"):
            lines.append(f"{key} = {_toml([getattr(s, key) for s in self.exchange])}")
        lines += ["", "[calibration.local]", f"dtype = {_toml_value(self.dtype)}", f"op = {_toml_value(self.op)}",
                  f"size_bytes = {_toml([s.size_bytes for s in self.copies])}",
                  f"copy_median_s = {_toml([s.median_s for s in self.copies])}",
                  f"reduce_median_s = {_toml([s.median_s for s in self.reductions])}"]
        return "# model: loggp-piecewise (docs/calibration.md)\n" + "\n".join(lines) + "\n"

    def write(self, path: str | os.PathLike, name: str = "calibrated") -> None:
        """Write :meth:`system_toml` atomically."""
        text = self.system_toml(name).encode()
        atomic_write(path, lambda fh: fh.write(text))


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return _toml_value(value)


def loggp_warning(cal: LogGPCalibration) -> str | None:
    """One line saying the piecewise fit is poor, or None."""
    f = cal.fit
    if f.r_squared >= POOR_PIECEWISE_R_SQUARED and f.max_relative_error <= POOR_PIECEWISE_MAX_ERROR:
        return None
    return (f"warning: poor loggp-piecewise fit of the exchange times (R² = {f.r_squared:.3f}, largest error "
            f"{100 * f.max_relative_error:.1f}%): the machine is noisy; rerun on a quiet machine with more "
            "--iterations; the file was written all the same")


def loggp_calibration_from(plain: Calibration, exchange: Sequence[Sample], copies: Sequence[Sample],
                           reductions: Sequence[Sample], dtype: str, op: str) -> LogGPCalibration:
    """Fit the measured tables (no MPI: the arithmetic of ``collsim calibrate --model loggp-piecewise``)."""
    exchange = tuple(sorted(exchange, key=lambda s: s.size_bytes))
    copies = tuple(sorted(copies, key=lambda s: s.size_bytes))
    reductions = tuple(sorted(reductions, key=lambda s: s.size_bytes))
    fit = fit_piecewise([s.size_bytes for s in exchange], [s.median_s for s in exchange])
    copy = fit_piecewise([s.size_bytes for s in copies], [s.median_s for s in copies])
    reduce = fit_piecewise([s.size_bytes for s in reductions], [s.median_s for s in reductions])
    return LogGPCalibration(plain, exchange, fit, copies, reductions, copy, reduce, dtype, op)


def samples_from_table(table: Any, origin: str) -> tuple[list[Sample], list[Sample], list[Sample], str, str]:
    """The exchange, copy and reduction tables of a file's ``[calibration]`` (for ``--refit``)."""
    ex, loc = (table.get("exchange"), table.get("local")) if isinstance(table, dict) else (None, None)
    if not isinstance(ex, dict) or not isinstance(loc, dict):
        raise InputError(f"{origin}: no [calibration.exchange] and [calibration.local] tables; collsim calibrate "
                         "--model loggp-piecewise writes them")
    try:
        exchange = [Sample(int(s), int(c), float(md), float(mn), float(q1), float(q3))
                    for s, c, md, mn, q1, q3 in zip(*(ex[k] for k in ("size_bytes", "count", "median_s", "min_s",
                                                                      "q1_s", "q3_s")), strict=True)]
        copies = [Sample(int(s), 1, float(t), float(t)) for s, t in zip(loc["size_bytes"], loc["copy_median_s"],
                                                                         strict=True)]
        reductions = [Sample(int(s), 1, float(t), float(t)) for s, t in zip(loc["size_bytes"], loc["reduce_median_s"],
                                                                            strict=True)]
        dtype, op = str(loc["dtype"]), str(loc["op"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{origin}: [calibration.exchange] or [calibration.local] is malformed: lists of numbers "
                         "of one length, as collsim calibrate --model loggp-piecewise writes them") from None
    return exchange, copies, reductions, dtype, op


def measure_loggp(comm: Any = None, sizes_bytes: Sequence[int] | None = None,
                  exchange_sizes_bytes: Sequence[int] | None = None, iterations: int = 20, warmup: int = 3,
                  statistic: str = "min", dtype: str = "int64", op: str = "sum") -> LogGPCalibration | None:
    """Run every microbenchmark and fit them (collective call; the result on rank 0, None elsewhere)."""
    from ..core.units import format_size
    from .buffers import check_data
    from .memory import check_job_memory
    from .microbench import (DEFAULT_EXCHANGE_SIZES_BYTES, local_samples, microbench_bytes, reduction_samples,
                             step_samples)
    from .pingpong import DEFAULT_SIZES_BYTES, check_sizes, measure, require_ranks
    op, np_dtype = check_data(op, dtype)
    ping = check_sizes(sizes_bytes or DEFAULT_SIZES_BYTES)
    ex_sizes = check_sizes(exchange_sizes_bytes or DEFAULT_EXCHANGE_SIZES_BYTES)
    if len(ex_sizes) < 3:
        raise InputError(f"the piecewise fit needs at least 3 exchange sizes, got {len(ex_sizes)}")
    if comm is None:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
    ranks = require_ranks(comm)
    check_job_memory(max(2.0 * ping[-1], microbench_bytes(comm, ex_sizes[-1], np_dtype.name)),
                     f"calibrating with messages up to {format_size(max(ping[-1], ex_sizes[-1]))} on {ranks} MPI "
                     "ranks", comm)   # before the ping-pong: every microbenchmark's largest size
    plain = measure(comm, ping, iterations, warmup, statistic)
    exchange, reducing = step_samples(comm, ex_sizes, iterations, warmup, np_dtype.name, op)
    copies, _ = local_samples(comm, ex_sizes, iterations, np_dtype.name, op)
    if comm.Get_rank() != 0:
        return None
    return loggp_calibration_from(plain, exchange, copies, reduction_samples(exchange, reducing), np_dtype.name, op)
