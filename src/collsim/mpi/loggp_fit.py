"""Fits of the ``loggp-piecewise`` model (docs/calibration.md): no MPI here, only the arithmetic.

* :func:`fit_piecewise` fits ``t(m) = α_i + m/β_i`` on up to :data:`MAX_SEGMENTS` segments of
  the measured sizes, **the breakpoints found from the data**: every split of the sorted sizes
  into contiguous segments of at least :data:`MIN_POINTS` points is fitted, each segment by
  robust least squares on the relative error (``scipy.optimize.least_squares`` with a soft-L1
  loss of scale :data:`ROBUST_SCALE`, bounds α ≥ 0 and 1/β ≥ 0, started from
  ``scipy.optimize.nnls``'s solution), the split with the least loss wins for each number of
  segments, and the number of segments is chosen by Akaike's information criterion on that
  loss, ``n ln(loss/n) + 2 (3k − 1)`` (a segment must pay for its three parameters).  AIC, not
  BIC: the fit is for prediction, and the two errors it can make cost differently — a segment
  too many on a straight line moves its predictions by the noise (a few per cent), a segment
  too few at a protocol switch by 20–30 % (measured: BIC kept one line through MPICH's 8–32 KiB
  switch on a table whose three-segment fit halved the loss).  The soft-L1 loss keeps one size
  measured during a burst of load from dragging a whole segment (or from costing the fit a
  segment it needs).
* :func:`fit_linear` fits a local cost ``c + γ·m`` (copies, reductions) the same way, on one segment.

References
----------
R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
Computing 20(3), 1994; A. Alexandrov, M. F. Ionescu, K. E. Schauser, C. Scheiman, "LogGP:
incorporating long messages into the LogP model", SPAA 1995; G. Schwarz, "Estimating the
dimension of a model", Annals of Statistics 6(2), 1978 (BIC, not used: see above); H. Akaike, "A new look at
the statistical model identification", IEEE Trans. Automatic Control 19(6), 1974 (AIC).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.errors import UnsupportedError

__all__ = ["MAX_SEGMENTS", "MIN_POINTS", "LinearFit", "PiecewiseFit", "fit_linear", "fit_piecewise"]

MAX_SEGMENTS = 3
"""Most segments the piecewise fit tries (MPICH on shared memory: eager, a middle range, rendezvous)."""
MIN_POINTS = 3
"""Fewest measured sizes in a segment (two points always fit a line exactly)."""
ROBUST_SCALE = 0.1
"""Relative residual beyond which the piecewise fit's loss grows linearly instead of quadratically (10 %)."""
RESIDUAL_FLOOR = 1e-8
"""Mean squared relative residual below which fits count as equally exact (1e-4 relative): no timer
resolves better, and without a floor exact data would let an extra segment win on rounding."""
MAX_BANDWIDTH_BYTES_PER_S = 1e15
"""A segment whose times do not grow with size gets this bandwidth (1/β = 0 is not a finite β)."""


@dataclass(frozen=True)
class LinearFit:
    """``t(m) = fixed_s + m · per_byte_s``, and how well it reproduces the points."""

    fixed_s: float
    per_byte_s: float
    r_squared: float
    max_relative_error: float

    def predict_s(self, size_bytes):
        """The fitted time of a size (or a numpy array of sizes)."""
        return self.fixed_s + size_bytes * self.per_byte_s


@dataclass(frozen=True)
class PiecewiseFit:
    """A piecewise α–β fit: segment ``i`` covers sizes up to ``breakpoints_bytes[i]`` (the last, the rest)."""

    breakpoints_bytes: tuple[int, ...]
    alpha_s: tuple[float, ...]
    beta_bytes_per_s: tuple[float, ...]
    r_squared: float
    max_relative_error: float
    criterion: float

    def predict_s(self, size_bytes):
        """The fitted time of each size (its segment's ``α + m/β``)."""
        m = np.asarray(size_bytes, dtype=float)
        i = np.searchsorted(np.asarray(self.breakpoints_bytes, dtype=float), m, side="left")
        return np.asarray(self.alpha_s)[i] + m / np.asarray(self.beta_bytes_per_s)[i]


def _check(sizes_bytes, times_s, need: int) -> tuple[np.ndarray, np.ndarray]:
    m = np.asarray(sizes_bytes, dtype=float)
    t = np.asarray(times_s, dtype=float)
    if m.shape != t.shape or m.ndim != 1 or len(m) < need or not (t > 0).all() or not np.isfinite(t).all():
        raise UnsupportedError(f"the fit needs at least {need} points with positive, finite times, got {len(t)}")
    if len(np.unique(m)) != len(m):
        raise UnsupportedError("the fit needs each size once (one time per size)")
    order = np.argsort(m)
    return m[order], t[order]


def _nnls_segment(m: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """α, 1/β and the weighted squared error of ``α + m·g`` on relative errors, α, g ≥ 0."""
    from scipy.optimize import nnls
    design = np.stack([np.ones_like(m), m], axis=1) / t[:, None]
    (alpha, inv_beta), norm = nnls(design, np.ones_like(t))
    return float(alpha), float(inv_beta), float(norm) ** 2


def _robust_segment(m: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """As :func:`_nnls_segment`, with a soft-L1 loss on the relative residuals (scale :data:`ROBUST_SCALE`):
    a point far off the line (a size measured during a burst of load) pulls it linearly, not
    quadratically.  Returns α, 1/β and the summed loss (``2 c² (√(1 + (r/c)²) − 1)``, r² for small r)."""
    from scipy.optimize import least_squares
    alpha, inv_beta, _ = _nnls_segment(m, t)
    scale = max(float(t.max()), 1e-30)
    x0 = np.array([alpha / scale, inv_beta * float(m.max()) / scale])   # both of order 1

    def residuals(x: np.ndarray) -> np.ndarray:
        return (x[0] * scale + x[1] * scale / float(m.max()) * m - t) / t

    fit = least_squares(residuals, x0, bounds=(0.0, np.inf), loss="soft_l1", f_scale=ROBUST_SCALE)
    r = residuals(fit.x) / ROBUST_SCALE
    loss = float((2 * ROBUST_SCALE ** 2 * (np.sqrt(1 + r * r) - 1)).sum())
    return float(fit.x[0] * scale), float(fit.x[1] * scale / float(m.max())), loss


def _quality(t: np.ndarray, fitted: np.ndarray) -> tuple[float, float]:
    total = float(((t - t.mean()) ** 2).sum())
    r2 = 1.0 - float(((t - fitted) ** 2).sum()) / total if total > 0 else 1.0
    return r2, float((np.abs(fitted - t) / t).max())


def fit_linear(sizes_bytes: Sequence[float], times_s: Sequence[float]) -> LinearFit:
    """Fit ``t = c + γ·m`` by non-negative least squares on the relative error."""
    m, t = _check(sizes_bytes, times_s, 2)
    c, g, _ = _nnls_segment(m, t)
    r2, worst = _quality(t, c + g * m)
    return LinearFit(c, g, r2, worst)


def fit_piecewise(sizes_bytes: Sequence[float], times_s: Sequence[float], *, max_segments: int = MAX_SEGMENTS,
                  min_points: int = MIN_POINTS) -> PiecewiseFit:
    """Fit a piecewise α–β with breakpoints found from the data (see the module docstring)."""
    m, t = _check(sizes_bytes, times_s, min_points)
    n = len(m)
    best: PiecewiseFit | None = None
    for k in range(1, max_segments + 1):
        if k * min_points > n:
            break
        chosen = None
        for cuts in itertools.combinations(range(min_points, n - min_points + 1), k - 1):
            bounds = (0, *cuts, n)
            if any(b - a < min_points for a, b in zip(bounds, bounds[1:])):
                continue
            parts = [_robust_segment(m[a:b], t[a:b]) for a, b in zip(bounds, bounds[1:])]
            loss = sum(p[2] for p in parts)
            if chosen is None or loss < chosen[0]:
                chosen = (loss, bounds, parts)
        if chosen is None:
            continue
        loss, bounds, parts = chosen
        breakpoints = tuple(int(m[b - 1]) for b in bounds[1:-1])
        alpha = tuple(p[0] for p in parts)
        beta = tuple(1.0 / p[1] if p[1] > 1.0 / MAX_BANDWIDTH_BYTES_PER_S else MAX_BANDWIDTH_BYTES_PER_S
                     for p in parts)
        aic = n * math.log(max(loss / n, RESIDUAL_FLOOR)) + 2 * (3 * k - 1)
        if best is None or aic < best.criterion:
            r2, worst = _quality(t, PiecewiseFit(breakpoints, alpha, beta, 0.0, 0.0, aic).predict_s(m))
            best = PiecewiseFit(breakpoints, alpha, beta, r2, worst, aic)
    assert best is not None  # k = 1 always fits: n >= min_points
    return best
