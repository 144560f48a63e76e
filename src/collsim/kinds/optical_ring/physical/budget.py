"""Power and crosstalk budget of lightpaths (seed 004 §IV-B, eqs. (4)-(9)).

Readings (derived in ``docs/physical-layer.md``): a lightpath of ``h`` hops
passes ``L = h + 1`` interfaces (eq. (4) is the longest stage-1 OpTree path,
``(m-1)N/m`` hops, plus one); eq. (6) gets the receiver sensitivity it lacks,
``P_laser - L_l - P_p >= S_rx``; crosstalk coefficients are relative to the
received signal, ``P_N = ((h+1) K_rx + K_tx) P_S``; eq. (9) takes the linear
SNR, ``BER = exp(-SNR_lin / 4) / 2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ....core.errors import InputError
from ....core.validate import number

HOPS_CAP = 2**31
"""Largest hop count :func:`max_feasible_hops` reports (returned if nothing binds)."""

_MAY_BE_MINUS_INF = ("receiver_sensitivity_dbm", "crosstalk_db_per_interface",
                     "tx_crosstalk_db", "other_noise_dbm")
_NON_NEGATIVE = ("modulator_loss_db", "pass_loss_db_per_node", "extinction_ratio_penalty_db")


@dataclass(frozen=True)
class PhysicalParams:
    """Optical device parameters of an MRR-based WDM ring (powers per wavelength).

    Sources of the defaults, with caveats, in ``docs/physical-layer.md``.
    """

    laser_power_dbm: float = 0.0
    modulator_loss_db: float = 1.0
    pass_loss_db_per_node: float = 0.32
    extinction_ratio_penalty_db: float = 1.0
    receiver_sensitivity_dbm: float = -20.0
    crosstalk_db_per_interface: float = -35.0
    tx_crosstalk_db: float = -25.0
    other_noise_dbm: float = -39.0
    ber_target: float = 1e-9

    def __post_init__(self) -> None:
        for f in fields(self):
            v, name = getattr(self, f.name), f.name
            if name in _MAY_BE_MINUS_INF:   # -inf (no such noise or crosstalk) is allowed, +inf is not
                v = number(f"physical parameter {name}", v, lo=None, hi=math.inf, hi_open=True, finite=False)
            else:
                v = number(f"physical parameter {name}", v, lo=None)
            if name in _NON_NEGATIVE and v < 0:
                raise InputError(f"{name} is a loss and must be >= 0 dB, got {v!r}")
            if name in ("crosstalk_db_per_interface", "tx_crosstalk_db") and v > 0:
                raise InputError(f"{name} is relative to the signal and must be <= 0 dB, got {v!r}")
            object.__setattr__(self, name, float(v))
        number("ber_target", self.ber_target, lo=0, lo_open=True, hi=0.5, hi_open=True)


def _hops(hops) -> tuple[np.ndarray, bool]:
    h = np.asarray(hops)
    if h.dtype == bool or not (np.issubdtype(h.dtype, np.integer) or np.issubdtype(h.dtype, np.floating)):
        raise InputError(f"hops must be whole numbers, got {hops!r}")
    h = h.astype(np.float64)
    if not np.all(np.isfinite(h)) or np.any(h < 0) or np.any(h != np.floor(h)):
        raise InputError("hops must be finite whole numbers >= 0")
    return h, h.ndim == 0


def _out(x, scalar: bool):
    x = np.asarray(x)
    return x.item() if scalar else x


def _lin(db) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.power(10.0, np.asarray(db, dtype=np.float64) / 10.0)


def insertion_loss_db(hops, params: PhysicalParams = PhysicalParams()):
    """Insertion loss of a lightpath, eq. (5) with ``L_max -> h + 1``: ``P_m + (h+1) P_pass``.

    References
    ----------
    Seed 004 §IV-B.1, eqs. (4)-(5).
    """
    h, scalar = _hops(hops)
    return _out(params.modulator_loss_db + (h + 1.0) * params.pass_loss_db_per_node, scalar)


def power_feasible(hops, params: PhysicalParams = PhysicalParams()):
    """Power budget, eq. (6) with receiver sensitivity: ``P_laser - L_l - P_p >= S_rx``.

    References
    ----------
    Seed 004 §IV-B.1, eq. (6).
    """
    h, scalar = _hops(hops)
    margin = params.laser_power_dbm - insertion_loss_db(h, params) - params.extinction_ratio_penalty_db
    return _out(margin >= params.receiver_sensitivity_dbm, scalar)


def snr_db(hops, params: PhysicalParams = PhysicalParams()):
    """Worst-case SNR, eqs. (7)-(8): ``10 log10(P_S / (((h+1) K_rx + K_tx) P_S + P_O))``.

    References
    ----------
    Seed 004 §IV-B.2, eqs. (7)-(8); Duong et al., DATE 2015 [36].
    """
    h, scalar = _hops(hops)
    ps_dbm = params.laser_power_dbm - insertion_loss_db(h, params)
    rel = ((h + 1.0) * _lin(params.crosstalk_db_per_interface) + _lin(params.tx_crosstalk_db)
           + _lin(params.other_noise_dbm - ps_dbm))
    with np.errstate(divide="ignore"):
        return _out(-10.0 * np.log10(rel), scalar)


def ber(snr_db):
    """Bit-error rate, eq. (9) on the linear SNR: ``exp(-10**(snr_db/10) / 4) / 2``.

    References
    ----------
    Seed 004 §IV-B.2, eq. (9); Sarkar & Das, JLT 27(19), 2009 [37].
    """
    s = np.asarray(snr_db, dtype=np.float64)
    if np.any(np.isnan(s)):
        raise InputError("snr_db must not be NaN")
    return _out(0.5 * np.exp(-_lin(s) / 4.0), s.ndim == 0)


def required_snr_db(ber_target: float = 1e-9) -> float:
    """SNR in dB at which eq. (9) gives ``ber_target``: ``10 log10(4 ln(1/(2 BER)))``.

    References
    ----------
    Seed 004 §IV-B.2, eq. (9).
    """
    ber_target = number("ber_target", ber_target, lo=0, lo_open=True, hi=0.5, hi_open=True)
    return 10.0 * math.log10(4.0 * math.log(1.0 / (2.0 * ber_target)))


def lightpath_feasible(hops, params: PhysicalParams = PhysicalParams()):
    """Both constraints: eq. (6) and ``BER < ber_target`` (eqs. (7)-(9)).

    References
    ----------
    Seed 004 §IV-B, eqs. (4)-(9).
    """
    h, scalar = _hops(hops)
    ok = power_feasible(h, params) & (ber(snr_db(h, params)) < params.ber_target)
    return _out(ok, scalar)


def max_feasible_hops(params: PhysicalParams = PhysicalParams()) -> int:
    """Largest hop count h >= 1 meeting both constraints (0 if one hop already fails).

    Both constraints only tighten as h grows, so exponential search plus bisection
    finds the exact threshold; :data:`HOPS_CAP` is returned if nothing binds below it.

    References
    ----------
    Seed 004 §IV-B: "we can estimate the maximum signal path length" from (4)-(6), (7)-(9).
    """
    if not lightpath_feasible(1, params):
        return 0
    lo, hi = 1, 2
    while hi <= HOPS_CAP and lightpath_feasible(hi, params):
        lo, hi = hi, 2 * hi
    if lo == HOPS_CAP:  # HOPS_CAP is a power of two: nothing binds below it
        return lo
    while hi - lo > 1:  # lo feasible, hi infeasible
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if lightpath_feasible(mid, params) else (lo, mid)
    return lo
