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

    Parameters
    ----------
    nodes : int
        ``N``.
    wavelengths : int
        ``w`` (collsim passes ``F w``, the channels per direction).
    k : int
        Number of stages, >= 1 (``k = 1`` gives OSM's ``ceil(N^2 / 8w)``).

    Returns
    -------
    int
        The closed-form step count (float noise within 1e-9 is forgiven, so
        exact powers such as ``1024^(6/5)`` are not rounded up).

    References
    ----------
    Seed 004 §IV-A.2, Theorem 1, eq. (1); Table 1 (70 steps at N=1024, w=64, k*=7).

    Examples
    --------
    >>> theorem1_steps(1024, 64, 7), theorem1_steps(1024, 64, 5), theorem1_steps(16, 2, 2)
    (70, 72, 12)
    """
    n, w, k = _check("nodes", nodes, 2), _check("wavelengths", wavelengths, 1), _check("k", k, 1)
    return _ceil((2 * k - 1) * n ** (1 + 1 / k) / (8 * w))


def theorem1_k(nodes: int, wavelengths: int, kmax: int | None = None) -> int:
    """The depth minimising Theorem 1's ``S(k)`` over ``1 <= k <= kmax`` (smallest on ties).

    Parameters
    ----------
    nodes, wavelengths : int
        ``N`` and ``w``.
    kmax : int, optional
        Largest depth tried (default ``ceil(log2 N)``, the deepest real tree).

    Returns
    -------
    int
        ``argmin_k S(k)``.

    References
    ----------
    Seed 004 §IV-A.2, Theorem 1 and Theorem 2.

    Examples
    --------
    >>> theorem1_k(1024, 64), theorem1_k(16, 2)
    (6, 2)
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

    Parameters
    ----------
    nodes : int
        ``N``.
    rounding : {"ceil", "round"}
        How the real root is made integral.

    Returns
    -------
    int
        ``k*``.

    Raises
    ------
    InputError
        For an unknown rounding.

    References
    ----------
    Seed 004 §IV-A.2, Lemma 3, eq. (2); Fig. 4 (§V-B: optimal depths 6, 6, 7, 8
    for N = 512, 1024, 2048, 4096).

    Examples
    --------
    >>> [lemma3_k(n) for n in (512, 1024, 2048, 4096)]
    [6, 7, 8, 8]
    >>> [lemma3_k(n, "round") for n in (512, 1024, 2048, 4096)]
    [6, 6, 7, 8]
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

    Parameters
    ----------
    nodes, wavelengths : int
        ``N`` and ``w``.
    k : int, optional
        Replace line 1's ``k*`` by this depth.

    Returns
    -------
    int
        ``S`` of line 12.

    References
    ----------
    Seed 004 §IV-A.3, Algorithm 1.

    Examples
    --------
    >>> algorithm1_steps(1024, 64)
    4578
    >>> algorithm1_steps(16, 2, k=2)
    8
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

    Parameters
    ----------
    nodes, wavelengths : int
        ``N`` and ``w``.
    size_bytes : int
        ``d``.
    bandwidth_bytes_per_s : float
        ``B``, one wavelength's rate.
    a_s : float
        ``a``, O/E/O plus MRR reconfiguration delay per step (seconds).
    k : int, optional
        Replace line 1's ``k*``.

    Returns
    -------
    float
        Seconds.

    References
    ----------
    Seed 004 §IV-A.3, Algorithm 1 and eq. (3).

    Examples
    --------
    >>> algorithm1_time(16, 2, 5000, 5e9, 1e-6, k=2)
    1.6e-05
    """
    return (size_bytes / bandwidth_bytes_per_s + a_s) * algorithm1_steps(nodes, wavelengths, k)


def theorem1_proof_steps(nodes: int, wavelengths: int, m: int, k: int) -> int:
    """The per-stage sum in Theorem 1's proof, before it is simplified to eq. (1).

    Stage 1: ``ceil(m^2 / 8w) ceil(N/m)``; stage ``j = 2..k``:
    ``m^(j-1) ceil(N/m^j) ceil(m^2 / 4w)``.

    Parameters
    ----------
    nodes, wavelengths : int
        ``N`` and ``w``.
    m, k : int
        Integer radix and depth.

    Returns
    -------
    int
        The sum of the per-stage counts.

    References
    ----------
    Seed 004 §IV-A.2, proof of Theorem 1.

    Examples
    --------
    >>> theorem1_proof_steps(16, 2, 4, 2), theorem1_proof_steps(16, 2, 3, 3)
    (12, 36)
    """
    n, w = _check("nodes", nodes, 2), _check("wavelengths", wavelengths, 1)
    m, k = _check("m", m, 2), _check("k", k, 1)
    s = -(-m * m // (8 * w)) * -(-n // m)
    for j in range(2, k + 1):
        s += m ** (j - 1) * -(-n // m ** j) * -(-m * m // (4 * w))
    return s
