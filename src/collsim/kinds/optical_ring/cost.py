"""Time models for optical-ring schedules.

collsim's model (docs/cost-models.md), per physical step ``s``::

    t_s = max_{transfers in s} ( wire(size)/(b*B) + ceil(ceil(size/flit)/b) * t_oeo )
          + t_reconf  if the step's set of lightpaths differs from step s-1's
                      (the first step always configures its lightpaths)
          + t_slot    (``slot_latency_s``: synchronisation and propagation, 0 by default)

where ``wire`` pads to whole 128-byte packets, ``B`` is one wavelength's rate,
``b`` the transfer's band (wavelengths moving it in parallel, 1 in the papers)
and ``t_oeo`` one clock cycle per flit; a band's ``b`` transceivers convert its
flits in parallel.  Beside it, the papers' model (seed 004,
eq. 3)::

    T = S * (d/B + a),   a = t_reconf + ceil(d/flit) * t_oeo

with ``S`` the paper's closed-form step count and ``d`` the per-node message;
eq. 3 has no per-slot latency, so ``paper_time_s`` ignores ``slot_latency_s``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.schedule import Schedule
from .system import OpticalRing


@dataclass(frozen=True)
class StepTimes:
    """Per-step timing of a schedule (see :func:`step_times`).

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    eq. (3) and §V-A (25 µs MRR reconfiguration).
    """

    step_time_s: np.ndarray
    reconfigured: np.ndarray

    @property
    def total_s(self) -> float:
        """Sum of step durations."""
        return float(self.step_time_s.sum())


def transfer_time_s(system: OpticalRing, size_bytes: np.ndarray, band=1) -> np.ndarray:
    """Serialisation plus O/E/O time of transfers, each over a band of wavelengths.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    eq. (3) (``d/B``) and §V-A (40 Gb/s per wavelength, 128-byte packets, 32-byte
    flits, one clock cycle of O/E/O per flit).
    """
    return system.transfer_time_s(size_bytes, band)


def _lightpath_keys(s: Schedule, lo: int = 0, hi: int | None = None, banded: bool | None = None) -> np.ndarray:
    """Every transfer's lightpath (ends, direction, fiber, wavelength and band) as one integer,
    for transfers ``lo:hi``."""
    n = s.system.nodes
    f, w = s.system.fibers, s.system.wavelengths
    rows = slice(lo, hi)
    dirbit = (s.direction[rows] > 0).astype(np.int64)
    key = s.src[rows] * n
    key += s.dst[rows]
    key *= 2
    key += dirbit
    del dirbit
    key *= f
    key += s.fiber[rows]
    key *= w
    key += s.wavelength[rows]
    band = s.band[rows]
    if (bool((s.band > 1).any()) if banded is None else banded):  # a band is its lowest wavelength and its width
        key *= w
        key += band - 1
    return key


_BLOCK_TRANSFERS = 1 << 22
"""Most transfers :func:`step_times` reads at once (a larger step alone): blocks of whole steps."""


def step_times(s: Schedule) -> StepTimes:
    """Time every physical step with collsim's optical model.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    eq. (3), which charges the reconfiguration on every step; collsim charges it only
    when the step's lightpaths change, and adds the system's ``slot_latency_s`` to
    every step (docs/cost-models.md).  Computed once per schedule object (schedules are never
    mutated): its time, its realised facts and its result row all read it.
    """
    return s.memo("step_times", lambda: _step_times(s))


def _step_sums(keys: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Each step's sum of its lightpath keys and of their squares (modulo 2^64), ``(steps, 2)``:
    equal for two steps with the same set of lightpaths, whatever their order."""
    out = np.empty((len(bounds) - 1, 2), np.uint64)
    for col, values in enumerate((keys, keys * keys)):
        prefix = np.zeros(len(values) + 1, np.uint64)
        np.cumsum(values, out=prefix[1:])
        out[:, col] = prefix[bounds[1:]] - prefix[bounds[:-1]]
    return out


def _step_times(s: Schedule) -> StepTimes:
    """:func:`step_times`, computed; its arrays read-only (every caller of the schedule shares them).

    Steps are read in blocks of whole steps of at most :data:`_BLOCK_TRANSFERS` transfers, so that
    the temporaries are a block's, not the schedule's; the last step of a block is carried into the
    next one's comparison.
    """
    system = s.system
    nsteps = s.num_steps
    banded = bool((s.band > 1).any())
    sizes = s.size_bytes
    bounds = s.step_bounds
    counts = np.diff(bounds)
    busy = np.zeros(nsteps)
    reconf = np.ones(nsteps, dtype=bool)
    before = before_sums = None            # the lightpaths of the step before the block, and their sums
    k = 0
    while k < nsteps:
        stop = min(nsteps, max(k + 1, int(np.searchsorted(bounds, bounds[k] + _BLOCK_TRANSFERS, side="right")) - 1))
        lo, hi = int(bounds[k]), int(bounds[stop])
        per = transfer_time_s(system, sizes[lo:hi], s.band[lo:hi] if banded else 1)
        np.maximum.at(busy, s.step[lo:hi], per)
        del per
        # reconfiguration: does each step's set of lightpaths differ from the previous step's?
        keys = _lightpath_keys(s, lo, hi, banded).view(np.uint64)
        sums = _step_sums(keys, bounds[k:stop + 1] - lo)
        # equal sets have equal counts and sums: a difference settles it, equal ones are compared exactly
        alike = np.zeros(stop - k, bool)                       # step j's count and sums equal step j - 1's
        alike[1:] = (sums[1:] == sums[:-1]).all(axis=1) & (counts[k + 1:stop] == counts[k:stop - 1])
        if k:
            alike[0] = bool((sums[0] == before_sums).all()) and counts[k] == counts[k - 1]
        for j in (k + np.flatnonzero(alike)).tolist():
            here = keys[int(bounds[j]) - lo:int(bounds[j + 1]) - lo]
            there = before if j == k else keys[int(bounds[j - 1]) - lo:int(bounds[j]) - lo]
            # in the same order (a step repeated as built) they are equal sets without sorting
            reconf[j] = not (np.array_equal(here, there)
                             or np.array_equal(np.sort(here, kind="stable"), np.sort(there, kind="stable")))
        before, before_sums = keys[int(bounds[stop - 1]) - lo:].copy(), sums[stop - 1 - k]
        del keys, sums
        k = stop
    out = StepTimes(busy + reconf * system.mrr_reconfig_s + system.slot_latency_s, reconf)
    out.step_time_s.flags.writeable = out.reconfigured.flags.writeable = False
    return out


def paper_time_s(system: OpticalRing, size_bytes: int, steps: int | None) -> float | None:
    """The papers' eq. (3): ``S * (d/B + a)``.

    References
    ----------
    Seed 004, eq. (3) and Theorem 3.  Eq. 3 has no per-slot latency: the system's
    ``slot_latency_s`` is not charged here (collsim's :func:`step_times` charges it).
    """
    if steps is None:
        return None
    a = system.mrr_reconfig_s + -(-size_bytes // system.flit_bytes) * system.oeo_s_per_flit
    return steps * (size_bytes / system.bandwidth_bytes_per_s + a)
