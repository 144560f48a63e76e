"""Synthesize the best schedule collsim can find for a network, with its bound and certificate.

:func:`synthesize` tries every registered synthesizer (:data:`SYNTHESIZERS`) that
applies to the collective and system, builds, verifies and flow-simulates each, and
returns the fastest with the lower bound it is measured against and, where one is
known, the cut that attains the bound (docs/synthesis.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .algorithms import get_algorithm
from .core.collective import canonical_collective
from .core.errors import UnsupportedError
from .core.schedule import Schedule
from .kinds import model_for
from .kinds.result import Result
from .pipeline import build, evaluate, verify
from .systems import load_system

SYNTHESIZERS = ("synth-matching", "synth-alltoall")
"""Registered algorithms that synthesize a schedule from the system's graph, tried in this order."""


@dataclass(frozen=True)
class Synthesis:
    """What :func:`synthesize` returns.

    Parameters
    ----------
    schedule : Schedule
        The verified schedule.
    result : Result
        Its row: ``time_s`` (flow-simulated), ``lower_bound_s``, ``efficiency``.
    predicted_time_s : float or None
        The synthesizer's own prediction of the simulated time.
    certificate : object or None
        Why no schedule beats the bound, for the term that binds it
        (:meth:`~collsim.kinds.base.KindModel.bound_certificate`): the cut (vertex set and the
        bandwidth entering it, :class:`~collsim.cost.exact_cut.CutCertificate`), the
        max-concurrent-flow optimum (:class:`~collsim.rwa.mcf.McfBound`) or a node, total-link or
        hop-chain argument (:class:`~collsim.cost.network_bound.TermCertificate`).
    bound_s : float
        The bound the schedule is judged against: the row's ``lower_bound_s``, the bound every
        command reports.
    skipped : tuple of str
        Synthesizers that did not apply, each with its reason.

    Examples
    --------
    >>> out = synthesize("torus", "allgather", "64KiB", system_options={"dims": (3, 3)})
    >>> out.result.lower_bound_s <= out.result.time_s, out.certificate.side
    (True, (0,))
    """

    schedule: Schedule
    result: Result
    predicted_time_s: float | None
    certificate: Any
    skipped: tuple[str, ...]
    bound_s: float

    @property
    def efficiency(self) -> float:
        """``bound_s / result.time_s``: 1 is optimal."""
        return self.bound_s / self.result.time_s if self.result.time_s else 0.0


SIMULATED_CHOICE_NODES = 64
"""Up to this many end nodes, a synthesizer whose prediction missed the simulation has its tuning
candidates judged by the flow simulator instead."""


def _simulated_choices(spec, system, coll, size, fixed: dict, sched, row) -> list:
    """The synthesizer's tuning candidates, built and simulated, when its own prediction is inexact.

    A synthesizer chooses by its prediction.  Where that prediction is exact (every link of a
    step equally loaded) the choice stands; where it is only an upper bound (overlays through
    switches share links unevenly), the issue's rule applies: choose by the simulated time.
    Candidates that a caller's parameters fix are not tried; neither are big networks.
    """
    predicted = sched.params.get("predicted_time_s")
    if (predicted is None or spec.tune is None or system.nodes > SIMULATED_CHOICE_NODES
            or abs(float(predicted) - row.time_s) <= 1e-6 * row.time_s):
        return []
    out = []
    for cand in spec.tune(system, coll, row.size_bytes):
        if set(cand) & set(fixed) or all(sched.params.get(k) == v for k, v in cand.items()):
            continue
        other = build(spec.name, system, coll, size, **fixed, **cand)
        out.append((other, evaluate(other, report=verify(other))))
    return out


def synthesize(system, collective: str, size, *, system_options: dict | None = None,
               params: dict | None = None) -> Synthesis:
    """Synthesize, verify and time the fastest schedule the registered synthesizers find.

    Parameters
    ----------
    system : str or System
        Network preset, kind, TOML path or System.
    collective : str
        Collective name or alias.
    size : str or int
        Message size (collsim's meaning per collective).
    system_options : dict, optional
        System parameters (``dims``, ``nodes``, ``link_bandwidth_bytes_per_s`` ...).
    params : dict, optional
        Synthesizer parameters, passed to those that take them.

    Returns
    -------
    Synthesis
        The fastest verified schedule, its row, prediction and certificate.

    Raises
    ------
    UnsupportedError
        If no synthesizer applies (the message gives each one's reason).

    Examples
    --------
    >>> out = synthesize("mesh", "allgather", "1MiB", system_options={"dims": (3, 3)})
    >>> out.result.verified, out.schedule.algorithm, out.result.time_s >= out.result.lower_bound_s
    (True, 'synth-matching', True)
    """
    sysm = load_system(system, **(system_options or {})) if not hasattr(system, "kind") else system
    coll = canonical_collective(collective)
    best, skipped = None, []
    for name in SYNTHESIZERS:
        try:
            spec = get_algorithm(name)
        except Exception:  # noqa: BLE001  a synthesizer not registered in this build
            continue
        if coll not in spec.collectives:
            continue
        try:
            spec.check(sysm, coll)
        except UnsupportedError as exc:
            skipped.append(f"{name}: {exc}")
            continue
        mine = {k: v for k, v in (params or {}).items() if k in spec.params}
        sched = build(name, sysm, coll, size, **mine)
        row = evaluate(sched, report=verify(sched))
        for sched, row in [(sched, row)] + _simulated_choices(spec, sysm, coll, size, mine, sched, row):
            if best is None or row.time_s < best[1].time_s:
                best = (sched, row)
    if best is None:
        raise UnsupportedError(f"no synthesizer applies to {coll} on this {sysm.kind} network: " + "; ".join(skipped))
    sched, row = best
    predicted = sched.params.get("predicted_time_s")
    cert = model_for(sysm).bound_certificate(sysm, sched.collective)  # of the term that binds the row's bound
    return Synthesis(sched, row, None if predicted is None else float(predicted), cert, tuple(skipped),
                     row.lower_bound_s)


__all__ = ["SYNTHESIZERS", "Synthesis", "synthesize"]
