"""The calibrated communication model ``loggp-piecewise`` a system can carry (docs/calibration.md).

The plain α–β (Hockney) model charges a message ``α + m/β`` with one α and one β.  What
``collsim calibrate --model loggp-piecewise`` measures on MPI ranks does not fit one line:
MPICH switches protocol (eager to rendezvous) at a size, both directions of an exchange share
the memory system, every extra message a rank posts costs it a per-message overhead, and a
reduction does arithmetic on every received byte.  :class:`LogGPPiecewise` holds

* a **piecewise α–β** of one step of a simultaneous two-way exchange: segment ``i`` covers
  sizes up to ``breakpoints_bytes[i]`` (the last segment is unbounded) and charges
  ``alpha_s[i] + m / beta_bytes_per_s[i]``;
* the **per-message overhead** ``overhead_s`` (LogP's o) that a rank pays for every message
  it sends or receives in a step beyond the exchange's one send and one receive;
* the **local work** of the receiver, piecewise as well (caches: a buffer that fits in them
  moves several times faster than one that does not): ``copy_s[j] + m / copy_bytes_per_s[j]``
  for a copy it makes (if :attr:`charge_copies`) and ``reduce_s[j] + m / reduce_bytes_per_s[j]``
  for a reduction, measured with ``dtype`` and ``op``.

It is plain data (the numbers come from :mod:`collsim.mpi.calibrate`); the closed form
(:func:`collsim.cost.loggp.loggp_time_s`) and the flow simulator (:mod:`collsim.sim.flow`) use it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Mapping

import numpy as np

from .errors import InputError

__all__ = ["MODEL_NAMES", "LogGPPiecewise", "model_from"]

MODEL_NAMES = ("alpha-beta", "loggp-piecewise")
"""The models ``collsim calibrate --model`` fits: the plain α–β line, and :class:`LogGPPiecewise`."""


def _floats(name: str, value: Any, *, positive: bool, infinite: bool = False) -> tuple[float, ...]:
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"loggp-piecewise: {name} must be a list of numbers, got {value!r}") from None
    finite = all(np.isfinite(v) or (infinite and v == np.inf) for v in out)
    if not out or not finite or any((v <= 0) if positive else (v < 0) for v in out):
        raise InputError(f"loggp-piecewise: {name} must be a non-empty list of {'positive' if positive else 'non-negative'}"
                         f" {'' if infinite else 'finite '}numbers, got {list(out)!r}")
    return out


def _breakpoints(name: str, value: Any) -> tuple[int, ...]:
    try:
        bps = tuple(int(b) for b in value)
    except (TypeError, ValueError):
        raise InputError(f"loggp-piecewise: {name} must be a list of sizes in bytes, got {value!r}") from None
    if any(b < 1 for b in bps) or list(bps) != sorted(set(bps)):
        raise InputError(f"loggp-piecewise: {name} must be ascending positive sizes, got {list(bps)!r}")
    return bps


def _piecewise_s(breakpoints, fixed, rate, size_bytes) -> np.ndarray:
    m = np.asarray(size_bytes, dtype=float)
    i = np.searchsorted(np.asarray(breakpoints, dtype=float), m, side="left")
    return np.asarray(fixed)[i] + m / np.asarray(rate)[i]


@dataclass(frozen=True)
class LogGPPiecewise:
    """Piecewise α–β of an exchange step, per-message overhead, and local copy and reduction costs."""

    name: ClassVar[str] = "loggp-piecewise"
    breakpoints_bytes: tuple[int, ...]
    alpha_s: tuple[float, ...]
    beta_bytes_per_s: tuple[float, ...]
    overhead_s: float = 0.0
    copy_breakpoints_bytes: tuple[int, ...] = ()
    copy_s: tuple[float, ...] = (0.0,)
    copy_bytes_per_s: tuple[float, ...] = (float("inf"),)
    reduce_breakpoints_bytes: tuple[int, ...] = ()
    reduce_s: tuple[float, ...] = (0.0,)
    reduce_bytes_per_s: tuple[float, ...] = (float("inf"),)
    dtype: str = "int64"
    op: str = "sum"
    charge_copies: bool = False

    def __post_init__(self) -> None:
        for prefix, fixed, rate in (("", "alpha_s", "beta_bytes_per_s"), ("copy_", "copy_s", "copy_bytes_per_s"),
                                    ("reduce_", "reduce_s", "reduce_bytes_per_s")):
            bps = _breakpoints(f"{prefix}breakpoints_bytes", getattr(self, f"{prefix}breakpoints_bytes"))
            object.__setattr__(self, f"{prefix}breakpoints_bytes", bps)
            object.__setattr__(self, fixed, _floats(fixed, getattr(self, fixed), positive=False))
            object.__setattr__(self, rate, _floats(rate, getattr(self, rate), positive=True, infinite=bool(prefix)))
            if not len(getattr(self, fixed)) == len(getattr(self, rate)) == len(bps) + 1:
                raise InputError(f"loggp-piecewise: {len(bps)} {prefix}breakpoints need {len(bps) + 1} values of "
                                 f"{fixed} and of {rate}, got {len(getattr(self, fixed))} and {len(getattr(self, rate))}")
        for key in ("overhead_s",):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise InputError(f"loggp-piecewise: {key} must be a non-negative number, got {value!r}")
            object.__setattr__(self, key, float(value))
        if not isinstance(self.charge_copies, bool):
            raise InputError(f"loggp-piecewise: charge_copies must be true or false, got {self.charge_copies!r}")

    def copy_time_s(self, size_bytes: Any) -> np.ndarray:
        """A local copy's time of each size (piecewise)."""
        return _piecewise_s(self.copy_breakpoints_bytes, self.copy_s, self.copy_bytes_per_s, size_bytes)

    def reduce_time_s(self, size_bytes: Any) -> np.ndarray:
        """A local reduction's time of each size (piecewise)."""
        return _piecewise_s(self.reduce_breakpoints_bytes, self.reduce_s, self.reduce_bytes_per_s, size_bytes)

    def segment(self, size_bytes: Any) -> np.ndarray:
        """The segment index of every size (``searchsorted`` on the breakpoints: a breakpoint
        belongs to the segment it ends)."""
        return np.searchsorted(np.asarray(self.breakpoints_bytes, dtype=float), np.asarray(size_bytes, dtype=float),
                               side="left")

    def message_s(self, size_bytes: Any) -> np.ndarray:
        """One exchange step's time of a message of each size: ``alpha_s[i] + m / beta_bytes_per_s[i]``."""
        m = np.asarray(size_bytes, dtype=float)
        i = self.segment(m)
        return np.asarray(self.alpha_s)[i] + m / np.asarray(self.beta_bytes_per_s)[i]

    def rate_bytes_per_s(self, size_bytes: Any) -> np.ndarray:
        """The bandwidth of each size's segment."""
        return np.asarray(self.beta_bytes_per_s)[self.segment(size_bytes)]

    def fixed_s(self, size_bytes: Any) -> np.ndarray:
        """The fixed time (α) of each size's segment."""
        return np.asarray(self.alpha_s)[self.segment(size_bytes)]

    def local_s(self, size_bytes: Any, reduce: Any) -> np.ndarray:
        """The receiver's local work for messages of these sizes: a reduction, or a copy (if charged)."""
        m = np.asarray(size_bytes, dtype=float)
        red = np.asarray(reduce, dtype=bool)
        copy = self.copy_time_s(m) if self.charge_copies else np.zeros_like(m)
        return np.where(red, self.reduce_time_s(m), copy)

    def to_dict(self) -> dict[str, Any]:
        """The model as plain data (``model = "loggp-piecewise"`` first), for TOML and JSON."""
        out: dict[str, Any] = {"model": self.name}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


def model_from(value: Any) -> LogGPPiecewise | None:
    """A model from a mapping (a TOML ``[system.model]`` table, a JSON object), or None / a model as is."""
    if value is None or isinstance(value, LogGPPiecewise):
        return value
    if not isinstance(value, Mapping):
        raise InputError(f"a system's model is a table (model = \"loggp-piecewise\", ...), not {value!r}")
    data = dict(value)
    name = data.pop("model", LogGPPiecewise.name)
    if name != LogGPPiecewise.name:
        raise InputError(f"unknown communication model {name!r}; a system carries {LogGPPiecewise.name!r} "
                         "(the plain alpha-beta model is the system's own link parameters)")
    known = {f.name for f in fields(LogGPPiecewise)}
    bad = sorted(set(data) - known)
    if bad:
        raise InputError(f"loggp-piecewise: unknown key {bad[0]!r}; known: {', '.join(sorted(known))}")
    missing = [k for k in ("breakpoints_bytes", "alpha_s", "beta_bytes_per_s") if k not in data]
    if missing:
        raise InputError(f"loggp-piecewise: the model needs {', '.join(missing)}")
    return LogGPPiecewise(**data)
