"""Synthesize the best schedule collsim can find for a network, with its bound and certificate.

:func:`synthesize` tries every registered synthesizer (:data:`SYNTHESIZERS`) that
applies to the collective and system, builds, verifies and flow-simulates each, and
returns the fastest with the lower bound it is measured against and, where one is
known, the cut that attains the bound (docs/synthesis.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .algorithms import REGISTRY, AlgorithmSpec
from .algorithms.placement import place_all
from .core.collective import canonical_collective, collective_type
from .core.errors import CollsimError, InputError, UnsupportedError
from .core.placement import check_placement
from .core.schedule import Schedule
from .core.repeated import RepeatedSteps
from .core.symmetry import SymmetricSchedule
from .kinds import model_for
from .kinds.result import Result
from .pipeline import build, build_compact, evaluate, verify
from .systems import load_system

SYNTHESIZERS = ("synth-trees", "synth-matching", "synth-alltoall")
"""Registered algorithms that synthesize a schedule from the system's graph, tried in this order."""


@dataclass(frozen=True)
class Synthesis:
    """What :func:`synthesize` returns.

    Parameters
    ----------
    schedule : Schedule, SymmetricSchedule or RepeatedSteps
        The verified schedule: on a large network with a translation group, its representatives
        and the group (:func:`~collsim.pipeline.build_compact`), verified and timed on the orbits
        with the expansion's verdict and row; a registered ring on a large network without its
        rotations, its steps' classes (:class:`~collsim.core.repeated.RepeatedSteps`).
    result : Result
        Its row: ``time_s`` (flow-simulated), ``lower_bound_s``, ``efficiency``.
    predicted_time_s : float or None
        The synthesizer's own prediction of the simulated time.
    certificate : object or None
        Why no schedule beats the bound, for the term that binds it
        (:meth:`~collsim.kinds.base.KindModel.bound_certificate`): the cut (vertex set and the
        bandwidth entering it, :class:`~collsim.kinds.network.exact_cut.CutCertificate`), the
        max-concurrent-flow optimum (:class:`~collsim.kinds.network.mcf.McfBound`) or a node, total-link or
        hop-chain argument (:class:`~collsim.kinds.network.bound.TermCertificate`).
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

    schedule: Schedule | SymmetricSchedule | RepeatedSteps
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
    switches share links unevenly), the choice is made by the simulated time.
    Candidates that a caller's parameters fix are not tried; neither are big networks.
    """
    predicted = sched.params.get("predicted_time_s")
    if (predicted is None or spec.tune is None or system.nodes > SIMULATED_CHOICE_NODES
            or abs(float(predicted) - row.time_s) <= 1e-6 * row.time_s):
        return []
    out = []
    for cand in spec.tune(system, collective_type(coll), row.size_bytes):
        if set(cand) & set(fixed) or all(sched.params.get(k) == v for k, v in cand.items()):
            continue
        other = build(spec.name, system, coll, size, **fixed, **cand)
        out.append((other, evaluate(other, report=verify(other))))
    return out


def _synthesizers() -> list[AlgorithmSpec]:
    """The entries of :data:`SYNTHESIZERS` registered in this build, in order."""
    return [REGISTRY[name] for name in SYNTHESIZERS if name in REGISTRY]


def _none_covers(coll: str) -> str:
    """Why no synthesizer is even in scope for ``coll``: what each one synthesizes."""
    covers = "; ".join(f"{spec.name} synthesizes {', '.join(spec.collectives)}" for spec in _synthesizers())
    return f"no synthesizer covers {coll}: {covers or 'none is registered'}"


def _registered(system, coll: str, size, root, shift) -> list:
    """Every registered algorithm that is not a synthesizer and applies here, built, verified and timed.

    Each runs with its defaults (the caller's parameters are the synthesizers'); one that cannot
    run this instance or fails is left out, as ``compare`` leaves it out of its table.
    """
    others = [spec for name, spec in sorted(REGISTRY.items())
              if name not in SYNTHESIZERS and coll in spec.collectives and spec.runs_on(system)]
    chosen, _ = place_all(others, system, coll, {}, root=root, shift=shift)
    out = []
    for name, (spec, placed) in chosen.items():
        try:
            sched = build_compact(spec, system, coll, size, **{k: v for k, v in placed.items() if k in spec.params})
            out.append((sched, evaluate(sched, report=verify(sched))))
        except CollsimError:
            continue
    return out


def synthesize(system, collective: str, size, *, system_options: dict | None = None,
               params: dict | None = None, root: int | None = None, shift: int | None = None,
               registered: bool = True) -> Synthesis:
    """Synthesize, verify and time the fastest schedule collsim can build for this instance.

    Every synthesizer of :data:`SYNTHESIZERS` that applies runs, and so (``registered``) does
    every other registered algorithm that applies, with its defaults: the answer is never slower
    than the best row of ``collsim compare`` on the same instance, and its ``schedule.algorithm``
    says which won.

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
        Synthesizer parameters, each passed to the synthesizers that take it; a parameter that
        no applicable synthesizer takes, or one of the wrong type, is refused.  ``root``,
        ``shift`` and ``q`` mean the keywords below.
    root : int, optional
        Root of a broadcast or reduce (default 0): in ``0..N-1``, refused for a collective
        without a root.
    shift : int, optional
        q of a circular shift (no synthesizer builds the shift yet: refused with the reason).
    registered : bool, optional
        Also try the registered algorithms (default); False: the synthesizers alone.

    Returns
    -------
    Synthesis
        The fastest verified schedule, its row, prediction and certificate.

    Raises
    ------
    UnsupportedError
        If no synthesizer applies (the message says what each synthesizes, or why each
        cannot run here).
    InputError
        A root or shift that does not apply or is out of range, an unknown parameter, a
        parameter of the wrong type, or an instance whose explicit schedules cannot fit in
        memory (:class:`~collsim.core.limits.MemoryLimitError`, before anything is built).

    Examples
    --------
    >>> out = synthesize("mesh", "allgather", "1MiB", system_options={"dims": (3, 3)}, registered=False)
    >>> out.result.verified, out.schedule.algorithm, out.result.time_s >= out.result.lower_bound_s
    (True, 'synth-trees', True)
    >>> out = synthesize("mesh", "broadcast", "1MiB", system_options={"dims": (3, 3)}, root=4)
    >>> out.schedule.collective.root, out.result.root
    (4, 4)
    >>> synthesize("mesh", "broadcast", "1MiB", system_options={"dims": (3, 3)}, root=9)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: root must be a node id in 0..8 (the system has 9 nodes), got 9
    """
    sysm = load_system(system, **(system_options or {})) if not hasattr(system, "topology") else system
    coll = canonical_collective(collective)
    if params is not None and not isinstance(params, Mapping):
        raise InputError(f"params must be a mapping of parameter names to values, got {params!r}")
    params = dict(params or {})
    in_scope = [spec for spec in _synthesizers() if coll in spec.collectives]
    if not in_scope:
        check_placement(coll, sysm.nodes, root, shift)  # a root of an unrooted collective is the first fault
        raise UnsupportedError(_none_covers(coll))
    chosen, skipped = place_all(in_scope, sysm, coll, params, root=root, shift=shift, what="synthesizer")
    if not chosen:
        raise UnsupportedError(f"no synthesizer applies to {coll} on this {sysm.topology} network: " + "; ".join(map(str, skipped)))
    best, skipped = None, list(skipped)
    for name, (spec, placed) in chosen.items():
        mine = {k: v for k, v in placed.items() if k in spec.params}
        try:
            sched = build_compact(spec, sysm, coll, size, **mine)
        except UnsupportedError as exc:     # e.g. a step that needs more circuits than the switch has ports
            skipped.append(f"{name}: {exc}")
            continue
        row = evaluate(sched, report=verify(sched))
        for sched, row in [(sched, row)] + _simulated_choices(spec, sysm, coll, size, mine, sched, row):
            if best is None or row.time_s < best[1].time_s:
                best = (sched, row)
    if registered:
        for sched, row in _registered(sysm, coll, size, root, shift):
            if best is None or row.time_s < best[1].time_s:
                best = (sched, row)
    if best is None:
        raise UnsupportedError(f"no synthesizer could build {coll} on this {sysm.topology} network: " + "; ".join(map(str, skipped)))
    sched, row = best
    predicted = sched.params.get("predicted_time_s")
    cert = model_for(sysm).bound_certificate(sysm, sched.collective)  # of the term that binds the row's bound
    return Synthesis(sched, row, None if predicted is None else float(predicted), cert, tuple(map(str, skipped)),
                     row.lower_bound_s)


__all__ = ["SYNTHESIZERS", "Synthesis", "synthesize"]
