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

    Parameters
    ----------
    laser_power_dbm : float
        P_laser into the Tx: 0 dBm, the input power of "Formal analysis of crosstalk
        noise in mesh-based optical networks-on-chip with WDM", JLT 34(15), 2016.
    modulator_loss_db : float
        P_m: 1 dB, top of the 0-1 dB range in Batten et al., IEEE Micro 29(4), 2009.
    pass_loss_db_per_node : float
        P_pass: 0.32 dB = 64 off-resonance MRRs per interface (seed 004 §III-A)
        x 0.005 dB (passing loss of Nikdast et al., IEEE TVLSI 23(11), 2015, the
        model family of [36]).  Fiber-to-chip couplers are not included.
    extinction_ratio_penalty_db : float
        P_p: 1 dB, 10 log10((r+1)/(r-1)) = 0.87 dB for a 10 dB extinction ratio
        (textbook formula, e.g. Agrawal), rounded up; the 10 dB ER is collsim's assumption.
    receiver_sensitivity_dbm : float
        S_rx, missing from eq. (6): -20 dBm (Batten et al., 2009).  0 gives eq. (6) literally.
    crosstalk_db_per_interface : float
        K_rx per passed interface, relative to the received signal: -35 dB, worst
        crosstalk of a cascaded-MRR wavelength-selective switch (Photonics 9(2):60, 2022).
    tx_crosstalk_db : float
        K_tx, relative to the received signal: -25 dB, through-port leakage of an
        on-resonance ring (Kp1 of Nikdast et al., 2015).
    other_noise_dbm : float
        P_O: -39 dBm, collsim's assumption: S_rx minus the 19.04 dB SNR eq. (9)
        needs at 1e-9, so eqs. (6) and (9) agree on a crosstalk-free link.
    ber_target : float
        1e-9 (seed 004 §IV-B, after [37]); must lie in (0, 0.5).

    Examples
    --------
    >>> PhysicalParams().pass_loss_db_per_node
    0.32
    >>> PhysicalParams(ber_target=0.7)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: ber_target must be a number in (0, 0.5), got 0.7
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

    Parameters
    ----------
    hops : int or array_like of int
        Hop count(s) h.
    params : PhysicalParams, optional
        Device parameters.

    Returns
    -------
    float or numpy.ndarray
        Loss in dB, shaped like ``hops``.

    References
    ----------
    Seed 004 §IV-B.1, eqs. (4)-(5).

    Examples
    --------
    >>> round(insertion_loss_db(3), 2)      # 1 + 4 * 0.32
    2.28
    """
    h, scalar = _hops(hops)
    return _out(params.modulator_loss_db + (h + 1.0) * params.pass_loss_db_per_node, scalar)


def power_feasible(hops, params: PhysicalParams = PhysicalParams()):
    """Power budget, eq. (6) with receiver sensitivity: ``P_laser - L_l - P_p >= S_rx``.

    Parameters
    ----------
    hops : int or array_like of int
        Hop count(s).
    params : PhysicalParams, optional
        Device parameters.

    Returns
    -------
    bool or numpy.ndarray of bool
        Whether each lightpath's power budget closes.

    References
    ----------
    Seed 004 §IV-B.1, eq. (6).

    Examples
    --------
    >>> power_feasible(55), power_feasible(56)     # (h + 1) * 0.32 <= 18 dB
    (True, False)
    """
    h, scalar = _hops(hops)
    margin = params.laser_power_dbm - insertion_loss_db(h, params) - params.extinction_ratio_penalty_db
    return _out(margin >= params.receiver_sensitivity_dbm, scalar)


def snr_db(hops, params: PhysicalParams = PhysicalParams()):
    """Worst-case SNR, eqs. (7)-(8): ``10 log10(P_S / (((h+1) K_rx + K_tx) P_S + P_O))``.

    Parameters
    ----------
    hops : int or array_like of int
        Hop count(s); eq. (8)'s ``L_max`` becomes ``h + 1``.
    params : PhysicalParams, optional
        Device parameters.

    Returns
    -------
    float or numpy.ndarray
        SNR in dB (``inf`` without any noise).

    References
    ----------
    Seed 004 §IV-B.2, eqs. (7)-(8); Duong et al., DATE 2015 [36].

    Examples
    --------
    >>> p = PhysicalParams(tx_crosstalk_db=float("-inf"), other_noise_dbm=float("-inf"))
    >>> round(snr_db(9, p), 9)           # 1 / (10 * 10**-3.5)
    25.0
    """
    h, scalar = _hops(hops)
    ps_dbm = params.laser_power_dbm - insertion_loss_db(h, params)
    rel = ((h + 1.0) * _lin(params.crosstalk_db_per_interface) + _lin(params.tx_crosstalk_db)
           + _lin(params.other_noise_dbm - ps_dbm))
    with np.errstate(divide="ignore"):
        return _out(-10.0 * np.log10(rel), scalar)


def ber(snr_db):
    """Bit-error rate, eq. (9) on the linear SNR: ``exp(-10**(snr_db/10) / 4) / 2``.

    Parameters
    ----------
    snr_db : float or array_like
        SNR in dB as eq. (7) defines it.

    Returns
    -------
    float or numpy.ndarray
        BER in [0, 0.5].

    References
    ----------
    Seed 004 §IV-B.2, eq. (9); Sarkar & Das, JLT 27(19), 2009 [37].

    Examples
    --------
    >>> f"{ber(10 * math.log10(80)):.2e}"
    '1.03e-09'
    """
    s = np.asarray(snr_db, dtype=np.float64)
    if np.any(np.isnan(s)):
        raise InputError("snr_db must not be NaN")
    return _out(0.5 * np.exp(-_lin(s) / 4.0), s.ndim == 0)


def required_snr_db(ber_target: float = 1e-9) -> float:
    """SNR in dB at which eq. (9) gives ``ber_target``: ``10 log10(4 ln(1/(2 BER)))``.

    Parameters
    ----------
    ber_target : float, optional
        Target BER in (0, 0.5).

    Returns
    -------
    float
        Required SNR in dB (19.04 dB at 1e-9, i.e. SNR_lin = 80.1).

    References
    ----------
    Seed 004 §IV-B.2, eq. (9).

    Examples
    --------
    >>> round(required_snr_db(1e-9), 2)
    19.04
    """
    ber_target = number("ber_target", ber_target, lo=0, lo_open=True, hi=0.5, hi_open=True)
    return 10.0 * math.log10(4.0 * math.log(1.0 / (2.0 * ber_target)))


def lightpath_feasible(hops, params: PhysicalParams = PhysicalParams()):
    """Both constraints: eq. (6) and ``BER < ber_target`` (eqs. (7)-(9)).

    Parameters
    ----------
    hops : int or array_like of int
        Hop count(s).
    params : PhysicalParams, optional
        Device parameters.

    Returns
    -------
    bool or numpy.ndarray of bool
        Feasibility of each lightpath.

    References
    ----------
    Seed 004 §IV-B, eqs. (4)-(9).

    Examples
    --------
    >>> lightpath_feasible([1, 25, 26]).tolist()
    [True, True, False]
    """
    h, scalar = _hops(hops)
    ok = power_feasible(h, params) & (ber(snr_db(h, params)) < params.ber_target)
    return _out(ok, scalar)


def max_feasible_hops(params: PhysicalParams = PhysicalParams()) -> int:
    """Largest hop count h >= 1 meeting both constraints (0 if one hop already fails).

    Both constraints only tighten as h grows, so exponential search plus bisection
    finds the exact threshold; :data:`HOPS_CAP` is returned if nothing binds below it.

    Parameters
    ----------
    params : PhysicalParams, optional
        Device parameters.

    Returns
    -------
    int
        ``h`` such that ``h`` hops are feasible and ``h + 1`` are not.

    References
    ----------
    Seed 004 §IV-B: "we can estimate the maximum signal path length" from (4)-(6), (7)-(9).

    Examples
    --------
    >>> max_feasible_hops(), max_feasible_hops(PhysicalParams(laser_power_dbm=-30.0))
    (25, 0)
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
