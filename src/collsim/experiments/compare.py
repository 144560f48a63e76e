"""Compare algorithms on one system and collective: build, verify, time, bound."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from ..algorithms import REGISTRY, build_logical, get_algorithm
from ..core.errors import InputError, UnsupportedError, VerificationError
from ..core.collective import canonical_collective
from ..core.system import System
from ..core.units import parse_size
import numpy as np

from ..cost import bus_bandwidth, lower_bound_s, paper_time_s, schedule_time_s
from ..physical import check_schedule
from ..rwa.realize import realize
from ..systems import load_system
from ..verify import verify


@dataclass(frozen=True)
class Result:
    """One algorithm's row in a comparison (the ``compare --json`` object).

    Attributes mirror the JSON keys; times are seconds, bandwidths bytes/s.
    """

    algorithm: str
    collective: str
    system: str
    nodes: int
    wavelengths: int | None
    fibers: int | None
    size_bytes: int
    rounds: int
    steps: int
    paper_steps: int | None
    wavelengths_used: int
    transfers: int
    max_hops: int
    time_s: float
    paper_time_s: float | None
    lower_bound_s: float
    efficiency: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    verified: bool
    error: str | None
    params: dict[str, Any] = field(default_factory=dict)
    link_bandwidth_bytes_per_s: float | None = None
    link_latency_s: float | None = None
    max_link_load: int | None = None
    simulated_time_s: float | None = None
    time_model: str = "optical-step"
    feasible: bool | None = None
    max_feasible_hops: int | None = None
    worst_ber: float | None = None
    per_node_throughput_bytes_per_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the row as a JSON-able dict."""
        return asdict(self)


def applicable(system: System, collective: str) -> list[tuple[str, str | None]]:
    """List registered algorithms in scope for this system and collective.

    Parameters
    ----------
    system : System
        Target system.
    collective : str
        Collective name.

    Returns
    -------
    list of (str, str or None)
        ``(name, reason)`` per algorithm in scope; ``reason`` says why it cannot run
        this instance (None when it can).
    """
    out = []
    for name, spec in sorted(REGISTRY.items()):
        if spec.supports(system, collective):
            try:
                spec.check(system, collective)
                out.append((name, None))
            except UnsupportedError as exc:
                out.append((name, str(exc)))
    return out


def run_one(name: str, system: System, collective: str, size_bytes: int, *,
            strategy: str = "first-fit", **params: Any) -> Result:
    """Build, verify and time one algorithm.

    Parameters
    ----------
    name : str
        Algorithm name.
    system : System
        Target system.
    collective : str
        Collective name.
    size_bytes : int
        Message size.
    strategy : str, optional
        Wavelength-assignment strategy.
    **params
        Algorithm parameters.

    Returns
    -------
    Result
        The row; ``verified`` is False (with ``error``) if verification failed.
    """
    spec = get_algorithm(name)
    coll_name = canonical_collective(collective)
    logical, chosen = build_logical(spec.name, system, coll_name, size_bytes, **params)
    if system.optical:
        chosen = {**chosen, "strategy": strategy}
    sched = realize(system, logical, strategy=strategy, algorithm=spec.name, params=chosen)
    coll = sched.collective
    error = None
    try:
        verify(sched)
        verified = True
    except VerificationError as exc:
        verified, error = False, str(exc)
    extra: dict[str, Any] = {}
    if system.optical:
        time_s = schedule_time_s(sched)
        phys = check_schedule(sched, system.physical_params())
        extra = {"feasible": phys.feasible, "max_feasible_hops": phys.max_feasible_hops,
                 "worst_ber": phys.worst_ber if np.isfinite(phys.worst_ber) else None}
    else:
        closed = spec.alpha_beta(system, coll_name, size_bytes, chosen) if spec.alpha_beta else None
        time_s = schedule_time_s(sched) if closed is None else float(closed)
        sim_s = _simulate(sched)
        extra = {"link_bandwidth_bytes_per_s": system.link_bandwidth_bytes_per_s,
                 "link_latency_s": system.link_latency_s, "max_link_load": sched.max_link_load(),
                 "simulated_time_s": sim_s,
                 # bytes each node sends to the others per second of simulated time (seed 001 §3)
                 "per_node_throughput_bytes_per_s": ((system.nodes - 1) * size_bytes / sim_s
                                                     if coll_name == "alltoall" and sim_s else None),
                 "time_model": "alpha-beta (closed form)" if closed is not None else "alpha-beta (schedule)"}
    pst = spec.paper_steps(system, coll_name, chosen) if spec.paper_steps and system.optical else None
    lb = lower_bound_s(system, coll)
    # on networks, efficiency and bandwidths use the contention-aware (simulated) time
    reported = extra.get("simulated_time_s") or time_s
    algbw, busbw = bus_bandwidth(coll, reported)
    return Result(
        algorithm=spec.name, collective=coll_name, system=system.name, nodes=system.nodes,
        wavelengths=getattr(system, "wavelengths", None), fibers=getattr(system, "fibers", None),
        size_bytes=size_bytes, rounds=sched.num_rounds, steps=sched.num_steps, paper_steps=pst,
        wavelengths_used=sched.wavelengths_used(), transfers=len(sched),
        max_hops=int(sched.hops.max()) if len(sched) else 0, time_s=time_s,
        paper_time_s=paper_time_s(system, size_bytes, pst) if system.optical else None,
        lower_bound_s=lb, efficiency=lb / reported if reported > 0 else 0.0,
        algbw_bytes_per_s=algbw, busbw_bytes_per_s=busbw, verified=verified, error=error, params=chosen, **extra)


def _simulate(sched) -> float | None:
    """Flow-simulated time on electrical networks (None if the simulator is unavailable)."""
    try:
        from ..sim import simulate
    except ImportError:  # pragma: no cover - the simulator ships with collsim
        return None
    return float(simulate(sched).total_time_s)


def compare(system: str | System = "paper", collective: str = "allgather", size: str | int = "4MiB", *,
            algorithms: Iterable[str] | None = None, strategy: str = "first-fit",
            progress: Callable[[str], None] | None = None, params: dict[str, Any] | None = None,
            **overrides: Any) -> tuple[list[Result], list[str]]:
    """Build, verify and time several algorithms side by side.

    Parameters
    ----------
    system : str or System, optional
        Preset, TOML path or System (default ``paper``).
    collective : str, optional
        Collective (default all-gather).
    size : str or int, optional
        Message size (default 4 MiB).
    algorithms : iterable of str, optional
        Names; default every registered algorithm that applies.
    strategy : str, optional
        Wavelength-assignment strategy.
    progress : callable, optional
        Called with each algorithm's name before it runs.
    params : dict, optional
        Algorithm parameters (``m`` for WRHT, ``k``/``radices``/``tree`` for OpTree ...);
        each goes to the algorithms that accept it.
    **overrides
        System overrides (``nodes``, ``wavelengths``, ``fibers`` ...).

    Returns
    -------
    tuple
        ``(results, skipped)``: rows in algorithm order, and a note per algorithm
        in scope that cannot run this instance (only when ``algorithms`` is None).

    Raises
    ------
    UnsupportedError
        If an explicitly requested algorithm cannot run this instance.
    InputError
        If no compared algorithm accepts a given parameter.

    Examples
    --------
    >>> rows, skipped = compare("paper", "allgather", "1MiB", nodes=8, algorithms=["ring", "ne"])
    >>> [(r.algorithm, r.steps, r.verified) for r in rows]
    [('ring', 7, True), ('ne', 4, True)]
    """
    sysm = load_system(system, **overrides)
    size_bytes = parse_size(size)
    coll = canonical_collective(collective)
    skipped: list[str] = []
    if algorithms is None:
        names = []
        for name, reason in applicable(sysm, coll):
            if reason is None:
                names.append(name)
            else:
                skipped.append(reason)
        if not names:
            raise UnsupportedError(f"no registered algorithm implements {coll} on {sysm.kind} systems here")
    else:
        names = [get_algorithm(a).name for a in algorithms]
        for name in names:
            get_algorithm(name).check(sysm, coll)
    params = dict(params or {})
    unused = set(params) - {p for name in names for p in get_algorithm(name).params}
    if unused:
        raise InputError(f"no compared algorithm takes parameter(s) {', '.join(sorted(unused))}")
    results = []
    for name in names:
        if progress:
            progress(name)
        mine = {k: v for k, v in params.items() if k in get_algorithm(name).params}
        results.append(run_one(name, sysm, coll, size_bytes, strategy=strategy, **mine))
    return results, skipped
