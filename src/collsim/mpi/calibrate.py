"""Calibration: fit α–β to measured point-to-point times, write a system TOML.

The times come from the ping-pong between MPI ranks of :func:`collsim.mpi.pingpong.measure`;
per size the table keeps the median and the minimum over every pair's samples.  The fit is
``t(m) = α + m/β`` by least squares on one of them (the minimum by default), **weighted by
1/t** so that it minimises the relative error.  The burst test's per-message overhead o
(:data:`collsim.mpi.pingpong.BURST` messages back to back) is asked for by the data when
``o >= OVERHEAD_SHARE · α``.  The system written is a ``star`` with a node per rank: a
message crosses two links, so ``startup_s + 2 · link_latency_s = α`` (``startup_s = o``
if asked for, else none) and ``link_bandwidth_bytes_per_s = β``.  docs/calibration.md
explains each choice, the measured figures and where the model misses.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..core.errors import InputError, UnsupportedError
from ..core.files import atomic_write

__all__ = ["OVERHEAD_SHARE", "POOR_MAX_ERROR", "POOR_R_SQUARED", "STAR_HOPS", "Calibration", "Fit", "Sample",
           "calibration_from", "fit_alpha_beta", "fit_warning"]

OVERHEAD_SHARE = 0.1
"""The data asks for a per-message overhead when it is at least this share of α."""
STAR_HOPS = 2
"""Links a message crosses in a star (rank, switch, rank)."""
POOR_R_SQUARED = 0.9
"""A fit with R² below this is reported as poor (:func:`fit_warning`): the times are noise-dominated."""
POOR_MAX_ERROR = 0.5
"""A fit whose largest relative error is above this (50 %) is reported as poor (:func:`fit_warning`)."""


@dataclass(frozen=True)
class Sample:
    """One-way times of one message size, over every pair measured."""

    size_bytes: int
    count: int
    median_s: float
    min_s: float
    q1_s: float | None = None
    q3_s: float | None = None

    @property
    def spread(self) -> float | None:
        """The interquartile range over the median (None without quartiles)."""
        if self.q1_s is None or self.q3_s is None or not self.median_s > 0:
            return None
        return (self.q3_s - self.q1_s) / self.median_s


@dataclass(frozen=True)
class Fit:
    """The α–β fit ``t(m) = α + m/β``, and how well it reproduces the points."""

    alpha_s: float
    beta_bytes_per_s: float
    r_squared: float
    max_relative_error: float

    def predict_s(self, size_bytes: Any) -> Any:
        """The fitted time ``α + m/β`` of a message size (or a numpy array of them)."""
        return self.alpha_s + size_bytes / self.beta_bytes_per_s


def fit_warning(fit: Fit) -> str | None:
    """One line saying that a fit is poor and what to do, or None for a fit within the usual bounds.

    A fit is poor when R² < :data:`POOR_R_SQUARED` or its largest relative error is above
    :data:`POOR_MAX_ERROR`: on a quiet machine the α–β line gives R² ≈ 0.99 and a largest
    error of 27–50 % (docs/calibration.md); beyond that the times carry the machine's load,
    and the system written from them is as noisy.
    """
    if fit.r_squared >= POOR_R_SQUARED and fit.max_relative_error <= POOR_MAX_ERROR:
        return None
    return (f"warning: poor α–β fit (R² = {fit.r_squared:.3f}, largest error {100 * fit.max_relative_error:.1f}%): "
            "the times are noisy; rerun on a quiet machine, with more --iterations (50) and the ranks pinned to "
            "cores (mpiexec -bind-to core); the file was written all the same")


def fit_alpha_beta(sizes_bytes: Sequence[float], times_s: Sequence[float]) -> Fit:
    """Least-squares fit of ``t = α + m/β``, weighted by 1/t (relative errors)."""
    m = np.asarray(sizes_bytes, dtype=float)
    t = np.asarray(times_s, dtype=float)
    if len(m) != len(t) or len(m) < 2 or not (t > 0).all() or not np.isfinite(t).all():
        raise UnsupportedError("the α–β fit needs at least two points with positive, finite times")
    design = np.stack([np.ones_like(m), m], axis=1) / t[:, None]
    (alpha, inv_beta), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    if not alpha > 0 or not inv_beta > 0:
        raise UnsupportedError(f"the times do not fit t = α + m/β with α > 0 and β > 0 (α = {alpha:.3g} s, "
                               f"1/β = {inv_beta:.3g} s/B): they do not grow with the message size")
    fitted = alpha + m * inv_beta
    total = float(((t - t.mean()) ** 2).sum())
    r2 = 1.0 - float(((t - fitted) ** 2).sum()) / total if total > 0 else 1.0
    return Fit(float(alpha), float(1.0 / inv_beta), r2, float((np.abs(fitted - t) / t).max()))


@dataclass(frozen=True)
class Calibration:
    """A calibration: the measured table, the fit, and the star system it gives."""

    ranks: int
    statistic: str
    iterations: int
    samples: tuple[Sample, ...]
    fit: Fit
    overhead_s: float
    startup_s: float | None

    @property
    def link_latency_s(self) -> float:
        """Each link's latency ``(α − startup_s) / 2``: what α leaves after the start-up, over two hops."""
        return max(self.fit.alpha_s - (self.startup_s or 0.0), 0.0) / STAR_HOPS

    def rows(self) -> list[dict[str, Any]]:
        """The raw table, the fit beside each point: ``size_bytes``, ``count``, ``median_s``, ``min_s``,
        ``fit_s`` and ``error_percent`` (the fit against the fitted statistic)."""
        out = []
        for s in self.samples:
            fitted = float(self.fit.predict_s(s.size_bytes))
            measured = s.median_s if self.statistic == "median" else s.min_s
            out.append({"size_bytes": s.size_bytes, "count": s.count, "median_s": s.median_s, "min_s": s.min_s,
                        "fit_s": fitted, "error_percent": round(100.0 * (fitted - measured) / measured, 6)})
        return out

    def to_json(self) -> dict[str, Any]:
        """Everything as a JSON-able dict: the fit, the system's parameters and ``rows`` (:meth:`rows`)."""
        return {"ranks": self.ranks, "statistic": self.statistic, "iterations": self.iterations,
                "alpha_s": self.fit.alpha_s, "beta_bytes_per_s": self.fit.beta_bytes_per_s,
                "r_squared": self.fit.r_squared, "max_relative_error": self.fit.max_relative_error,
                "overhead_s": self.overhead_s, "startup_s": self.startup_s, "link_latency_s": self.link_latency_s,
                "link_bandwidth_bytes_per_s": self.fit.beta_bytes_per_s, "rows": self.rows()}

    def system_toml(self, name: str = "calibrated") -> str:
        """The TOML of the calibrated star; ``load_system`` reads its ``[system]`` table.

        The ``[calibration]`` table after it (the fit and the raw table) is for people and
        scripts; ``load_system`` ignores it.
        """
        lines = ["# Written by `collsim calibrate` (docs/calibration.md): ping-pong between MPI ranks,",
                 f"# t(m) = alpha + m/beta fitted to the {self.statistic} one-way times (weighted by 1/t).",
                 "# A star: every rank on one switch; a message crosses 2 links, so",
                 "# alpha = startup_s + 2 * link_latency_s and beta = link_bandwidth_bytes_per_s.",
                 "", "[system]", 'kind = "star"', f"name = {_toml_str(name)}", f"nodes = {self.ranks}",
                 f"link_bandwidth_bytes_per_s = {self.fit.beta_bytes_per_s!r}",
                 f"link_latency_s = {self.link_latency_s!r}"]
        if self.startup_s is not None:
            lines.append(f"startup_s = {self.startup_s!r}")
        doc = self.to_json()
        rows = doc.pop("rows")
        lines += ["", "[calibration]"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in doc.items() if v is not None]
        for key in ("size_bytes", "count", "median_s", "min_s", "fit_s", "error_percent"):
            lines.append(f"{key} = [{', '.join(_toml_value(r[key]) for r in rows)}]")
        if self.samples and all(s.spread is not None for s in self.samples):  # quartiles: how noisy the times are
            for key in ("q1_s", "q3_s"):
                lines.append(f"{key} = [{', '.join(_toml_value(getattr(s, key)) for s in self.samples)}]")
        return "\n".join(lines) + "\n"

    def write(self, path: str | os.PathLike, name: str = "calibrated") -> None:
        """Write :meth:`system_toml` to ``path`` atomically (``core.files.atomic_write``)."""
        text = self.system_toml(name).encode()
        atomic_write(path, lambda fh: fh.write(text))


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_value(value: Any) -> str:
    return _toml_str(value) if isinstance(value, str) else repr(value)  # floats as repr: valid TOML, exact


def calibration_from(samples: Sequence[Sample], overhead_s: float, ranks: int, iterations: int,
                     statistic: str = "min") -> Calibration:
    """Fit a measured table and decide the per-message overhead (no MPI: the arithmetic of
    :func:`~collsim.mpi.pingpong.measure`).
    """
    if statistic not in ("median", "min"):
        raise InputError(f"the statistic to fit is median or min, not {statistic!r}")
    samples = tuple(sorted(samples, key=lambda s: s.size_bytes))
    times = [s.median_s if statistic == "median" else s.min_s for s in samples]
    fit = fit_alpha_beta([s.size_bytes for s in samples], times)
    startup = min(overhead_s, fit.alpha_s) if overhead_s >= OVERHEAD_SHARE * fit.alpha_s else None
    return Calibration(ranks, statistic, iterations, samples, fit, float(overhead_s), startup)
