"""The OpTree paper's closed forms: Theorem 1, Lemma 3, the proof's per-stage sum, Algorithm 1.

Seed 004 (Dai et al., OpTree, journal version) §IV-A.2 and §IV-A.3.  Compared
with collsim's explicit schedules in ``docs/algorithms/optree.md``.
"""

from __future__ import annotations

import math

from ...core.errors import InputError
from ...core.validate import integer
from .tree import max_depth

__all__ = ["theorem1_steps", "theorem1_k", "lemma3_k", "algorithm1_steps", "algorithm1_time",
           "theorem1_proof_steps"]

_TOL = 1e-9


def _ceil(x: float) -> int:
    """Ceiling that forgives float noise: values within 1e-9 (relative) of an integer snap to it."""
    r = round(x)
    if abs(x - r) <= _TOL * max(1.0, abs(x)):
        return int(r)
    return math.ceil(x)


def _check(name: str, value, low: int) -> int:
    """:func:`collsim.core.validate.integer` with the ``OpTree`` prefix on the name."""
    return integer(f"OpTree {name}", value, lo=low)


def theorem1_steps(nodes: int, wavelengths: int, k: int) -> int:
    """Theorem 1 / eq. (1): ``S(k) = ceil((2k - 1) N^(1 + 1/k) / (8 w))``.

    References
    ----------
    Seed 004 §IV-A.2, Theorem 1, eq. (1); Table 1 (70 steps at N=1024, w=64, k*=7).
    """
    n, w, k = _check("nodes", nodes, 2), _check("wavelengths", wavelengths, 1), _check("k", k, 1)
    return _ceil((2 * k - 1) * n ** (1 + 1 / k) / (8 * w))


def theorem1_k(nodes: int, wavelengths: int, kmax: int | None = None) -> int:
    """The depth minimising Theorem 1's ``S(k)`` over ``1 <= k <= kmax`` (smallest on ties).

    References
    ----------
    Seed 004 §IV-A.2, Theorem 1 and Theorem 2.
    """
    n = _check("nodes", nodes, 2)
    kmax = max_depth(n) if kmax is None else _check("kmax", kmax, 1)
    return min(range(1, kmax + 1), key=lambda k: (theorem1_steps(n, wavelengths, k), k))


def lemma3_k(nodes: int, rounding: str = "ceil") -> int:
    """Lemma 3 / eq. (2): ``k* = [(ln N + sqrt(ln N (ln N - 2))) / 2]``.

    The lemma prints a ceiling; its text calls the bracket "integer rounding",
    so ``rounding="round"`` takes the nearest integer (halves up).  For
    ``ln N < 2`` (``N <= 7``) the root is not real and ``S(k)`` increases with
    ``k``, so ``k* = 1``.  The result is clamped to ``1 .. ceil(log2 N)``.

    References
    ----------
    Seed 004 §IV-A.2, Lemma 3, eq. (2); Fig. 4 (§V-B: optimal depths 6, 6, 7, 8
    for N = 512, 1024, 2048, 4096).
    """
    n = _check("nodes", nodes, 2)
    if rounding not in ("ceil", "round"):
        raise InputError(f"Lemma 3 rounding must be 'ceil' or 'round', got {rounding!r}")
    ln = math.log(n)
    if ln <= 2:
        return 1
    x = (ln + math.sqrt(ln * (ln - 2))) / 2
    k = _ceil(x) if rounding == "ceil" else math.floor(x + 0.5)
    return min(max(k, 1), max_depth(n))


def _root(n: int, k: int) -> float:
    m = n ** (1 / k)
    r = round(m)
    return float(r) if r ** k == n else m


def algorithm1_steps(nodes: int, wavelengths: int, k: int | None = None) -> int:
    """Algorithm 1, lines 1-12, literally as printed: the step count ``S``.

    Line 1: ``k*`` from Lemma 3 (ceiling) and ``m = N^(1/k*)`` (real-valued);
    lines 3-6: ``n_l = ceil(m^2/8) ceil(N/m)``, ``S += ceil(n_l / w)``; lines 7-12,
    for ``j = 2..k``: ``n_l = ceil(m^2/8) ceil(N/m)`` and (line 10)
    ``S += ceil(n_l / (4 w)) ceil(N/m)``.  Line 10 multiplies by ``ceil(N/m)`` a
    second time, so the value is far above Theorem 1's (4578 against 70 at
    N=1024, w=64); see ``docs/algorithms/optree.md``.

    References
    ----------
    Seed 004 §IV-A.3, Algorithm 1.
    """
    n, w = _check("nodes", nodes, 2), _check("wavelengths", wavelengths, 1)
    k = lemma3_k(n, "ceil") if k is None else _check("k", k, 1)
    m = _root(n, k)
    groups = _ceil(n / m)
    n_l = _ceil(m * m / 8) * groups
    s = _ceil(n_l / w)
    for _ in range(2, k + 1):
        n_l = _ceil(m * m / 8) * groups
        s += _ceil(n_l / (4 * w)) * groups
    return s


def algorithm1_time(nodes: int, wavelengths: int, size_bytes: int, bandwidth_bytes_per_s: float,
                    a_s: float, k: int | None = None) -> float:
    """Algorithm 1, line 13: ``T_comm = (d / B + a) S`` with ``S`` from :func:`algorithm1_steps`.

    References
    ----------
    Seed 004 §IV-A.3, Algorithm 1 and eq. (3).
    """
    return (size_bytes / bandwidth_bytes_per_s + a_s) * algorithm1_steps(nodes, wavelengths, k)


def theorem1_proof_steps(nodes: int, wavelengths: int, m: int, k: int) -> int:
    """The per-stage sum in Theorem 1's proof, before it is simplified to eq. (1).

    Stage 1: ``ceil(m^2 / 8w) ceil(N/m)``; stage ``j = 2..k``:
    ``m^(j-1) ceil(N/m^j) ceil(m^2 / 4w)``.

    References
    ----------
    Seed 004 §IV-A.2, proof of Theorem 1.
    """
    n, w = _check("nodes", nodes, 2), _check("wavelengths", wavelengths, 1)
    m, k = _check("m", m, 2), _check("k", k, 1)
    s = -(-m * m // (8 * w)) * -(-n // m)
    for j in range(2, k + 1):
        s += m ** (j - 1) * -(-n // m ** j) * -(-m * m // (4 * w))
    return s
