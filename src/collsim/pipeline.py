"""The one pipeline: build -> realise -> verify -> evaluate.

Every front end (the Python API, ``collsim compare``, ``collsim reproduce``, the
MLFM experiments, the CLI) goes through these functions; what differs between
kinds of system is delegated to the system's model (:mod:`collsim.kinds`).

>>> from collsim.pipeline import build, evaluate, verify
>>> s = build("ne", "paper", "allgather", "1MiB", nodes=8)
>>> verify(s).slots, evaluate(s).block_steps
(4, 7.0)
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Mapping

from .algorithms import build_logical, get_algorithm
from .core.collective import Collective, canonical_collective
from .core.errors import InputError, ScheduleFormatError, VerificationError
from .core.schedule import LogicalSchedule, Schedule
from .core.system import System
from .core.units import parse_size
from .cost import block_steps, bus_bandwidth
from .kinds import NetworkPart, OpticalPart, model_for
from .systems import load_system
from .verify import VerifyReport as _CheckReport
from .verify import verify_dataflow, verify_endpoints


def realize(system: System, logical: LogicalSchedule, *, strategy: str | Callable = "first-fit",
            algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
    """Turn a logical schedule into a physical one with the system's own routing and channel assignment.

    Parameters
    ----------
    system : System
        Target system.
    logical : LogicalSchedule
        Transfers grouped into rounds.
    strategy : str or callable, optional
        Wavelength-assignment strategy (optical rings).
    algorithm : str, optional
        Name recorded in the schedule.
    params : Mapping, optional
        Parameters recorded in the schedule.

    Returns
    -------
    Schedule
        The physical schedule (not verified).

    Examples
    --------
    >>> from collsim.systems.optical_ring import OpticalRing
    >>> from collsim.algorithms import build_logical
    >>> ring = OpticalRing(nodes=4, wavelengths=2)
    >>> realize(ring, build_logical("ring", ring, "allgather", 64)[0]).num_steps
    3
    """
    if not isinstance(strategy, str) and not callable(strategy):
        raise InputError(f"invalid strategy {strategy!r}")
    return model_for(system).realize(system, logical, strategy=strategy, algorithm=algorithm, params=params)


def build(algorithm: str, system: str | System, collective: str, size: str | int, *,
          nodes: int | None = None, wavelengths: int | None = None, fibers: int | None = None,
          strategy: str | Callable = "first-fit", system_options: dict | None = None, **params: Any) -> Schedule:
    """Build the physical schedule of an algorithm (not yet verified).

    Parameters
    ----------
    algorithm : str
        Registry name (``ring``, ``ne``, ``osm`` ...; see ``collsim algorithms``).
    system : str or System
        Preset (``paper``, ``terarack``), network kind, TOML path, or System.
    collective : str
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast``, ``reduce``, ``alltoall`` ...
    size : str or int
        Message size (``"4MiB"``, ``"32KB"``, bytes).
    nodes, wavelengths, fibers : int, optional
        Overrides of the system's parameters.
    strategy : str or callable, optional
        Wavelength-assignment strategy for rounds without a pre-assigned colouring.
    system_options : dict, optional
        Further system parameters (``link_bandwidth_bytes_per_s``, ``dims``, ``k`` ...).
    **params
        Algorithm parameters (``stripe=``, ``m=``, ``radices=`` ...).

    Returns
    -------
    Schedule
        The physical schedule; pass it to :func:`verify`.  Parameters that describe the
        realised schedule (an algorithm's predicted ``steps``) are recomputed from it.

    Raises
    ------
    collsim.core.errors.CollsimError
        For bad input or an inapplicable algorithm.

    Examples
    --------
    >>> s = build("osm", "paper", "allgather", "4KiB", nodes=16, wavelengths=2)
    >>> verify(s).steps
    16
    """
    if system_options is not None and not isinstance(system_options, Mapping):
        raise InputError(f"system_options must be a mapping of parameter names to values, got {system_options!r}")
    options = {"nodes": nodes, "wavelengths": wavelengths, "fibers": fibers}
    options.update({k: v for k, v in (system_options or {}).items() if v is not None})
    sysm = load_system(system, **options)
    size_bytes = parse_size(size)
    spec = get_algorithm(algorithm)
    logical, chosen = build_logical(spec.name, sysm, collective, size_bytes, **params)
    sched = realize(sysm, logical, strategy=strategy, algorithm=spec.name, params=chosen)
    stale = [k for k in spec.realised if k in sched.params]
    if stale:  # a prediction must never disagree with the schedule it describes
        facts = model_for(sysm).realised_facts(sched)
        sched.params.update({k: facts[k] for k in stale})
    return sched


@dataclass(frozen=True, repr=False)
class VerifyReport(_CheckReport):
    """What :func:`verify` returns: a :class:`collsim.verify.VerifyReport` that also carries ``time_s``.

    Parameters
    ----------
    steps, rounds, transfers, wavelengths_used, max_hops : int
        As for :class:`collsim.verify.VerifyReport`.
    time_s : float
        Seconds under the system's model (:func:`schedule_time_s`).

    Examples
    --------
    >>> report = verify(build("ring", "paper", "allgather", "1MiB", nodes=8))
    >>> report.steps, round(report.time_s * 1e3, 3)
    (7, 1.722)
    """

    time_s: float = math.nan


def verify(schedule: Schedule | str | os.PathLike, *, dataflow: bool = True, resources: bool = True) -> VerifyReport:
    """Verify a schedule (or a schedule file); raise the first violation found.

    Parameters
    ----------
    schedule : Schedule, str or path
        The schedule to check, or a schedule file (JSON or ``.npz``) to load and check.
    dataflow : bool, optional
        Check data movement, reductions and the postcondition (default True).
    resources : bool, optional
        Check routes, channels and transceiver limits with the system's model (default True).

    Returns
    -------
    VerifyReport
        Summary counts and ``time_s``, the schedule's time under its system's model.

    Raises
    ------
    collsim.core.errors.VerificationError
        A subclass naming the step, transfer, link and wavelength at fault.
    collsim.core.errors.ScheduleFormatError
        For a file that cannot be read or is malformed.

    Examples
    --------
    >>> verify(build("ring", "paper", "allgather", "4KiB", nodes=8)).slots
    7
    >>> import os, tempfile
    >>> from collsim.core.serialize import save
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save(build("ne", "paper", "allgather", 1024, nodes=4), os.path.join(d, "ne.json"))
    ...     verify(os.path.join(d, "ne.json")).steps
    2
    """
    schedule = _schedule(schedule, "verify")
    _check(schedule, dataflow, resources)
    return VerifyReport(steps=schedule.num_steps, rounds=schedule.num_rounds, transfers=len(schedule),
                        wavelengths_used=schedule.wavelengths_used(),
                        max_hops=int(schedule.hops.max()) if len(schedule) else 0,
                        time_s=schedule_time_s(schedule))


def _schedule(schedule: Schedule | str | os.PathLike, what: str) -> Schedule:
    """``schedule`` itself, or the schedule in the file it names."""
    if isinstance(schedule, Schedule):
        return schedule
    if not isinstance(schedule, (str, os.PathLike)):
        raise InputError(f"{what} takes a Schedule or a schedule file's path, not {_a(schedule)}")
    from pathlib import Path

    from .core.serialize import load
    path = Path(schedule)
    if path.is_dir():
        raise ScheduleFormatError(f"{path} is a directory, not a schedule file")
    if not path.exists():
        raise ScheduleFormatError(f"schedule file {path} does not exist")
    return load(path)


def _a(value: Any) -> str:  # what a wrong argument was, in words: "None", "a dict"
    return "None" if value is None else f"a {type(value).__name__}"


def _check(schedule: Schedule, dataflow: bool = True, resources: bool = True) -> None:
    """The checks of :func:`verify`, without the report."""
    verify_endpoints(schedule)
    if resources:
        model_for(schedule.system).check_resources(schedule)
    if dataflow:
        verify_dataflow(schedule)


def schedule_time_s(schedule: Schedule | str | os.PathLike) -> float:
    """Time of a schedule under its system's closed-form model over the schedule.

    Parameters
    ----------
    schedule : Schedule, str or path
        A verified schedule, or a schedule file.

    Returns
    -------
    float
        Seconds (optical step model on rings, alpha-beta on networks).

    Examples
    --------
    >>> round(schedule_time_s(build("ring", "paper", "allgather", "1MiB", nodes=8)) * 1e3, 3)
    1.722
    """
    schedule = _schedule(schedule, "schedule_time_s")
    return model_for(schedule.system).time(schedule).time_s


def lower_bound_s(system: System | str, collective: Collective) -> float:
    """Lower bound on the time of ``collective`` on ``system`` under the system's model.

    Parameters
    ----------
    system : System or str
        The system, or a name or TOML file :func:`~collsim.systems.load_system` reads.
    collective : Collective
        The collective instance (:func:`~collsim.core.collective.make_collective`).

    Returns
    -------
    float
        Seconds; no schedule can be faster.

    Examples
    --------
    >>> from collsim.core.collective import make_collective
    >>> s = load_system("paper", nodes=4, wavelengths=1)
    >>> lower_bound_s(s, make_collective("allgather", 4, 10**6)) > 0
    True
    """
    system = load_system(system) if not isinstance(system, System) else system
    if not isinstance(collective, Collective):
        raise InputError(f"lower_bound_s takes a Collective (collsim.make_collective), not {_a(collective)}")
    return model_for(system).lower_bound_s(system, collective)


@dataclass(frozen=True)
class Result:
    """One algorithm's evaluated, verified schedule: common fields plus its kind's part.

    ``slots`` counts physical time slots; ``block_steps`` is the time in the papers'
    unit (one block on one channel, :func:`collsim.cost.block_steps`) and is what
    ``paper_steps`` compares with.  The part's fields read as attributes of the row
    (``r.feasible``, ``r.simulated_time_s``); :meth:`to_json` flattens them, gives
    the other kind's keys as null, and keeps ``steps`` as an alias of ``slots``.
    Times are seconds, bandwidths bytes/s.

    Parameters
    ----------
    algorithm, collective, system : str
        Algorithm registry name, canonical collective name and system name.
    nodes, size_bytes : int
        Node count and message size (meaning per collective: :mod:`collsim.core.collective`).
    rounds, slots : int
        Logical rounds and physical time slots.
    block_steps : float
        Time in the papers' unit.
    transfers, max_hops : int
        Number of transfers and the longest route in links.
    time_s : float
        Closed-form time under the system's model.
    lower_bound_s : float
        No schedule of the collective is faster (:func:`lower_bound_s`).
    efficiency : float
        ``lower_bound_s`` over the reported time (the simulated time on networks).
    algbw_bytes_per_s, busbw_bytes_per_s : float
        nccl-tests' algorithm and bus bandwidths at the reported time.
    verified : bool
        Whether the schedule passed :func:`verify`.
    error : str or None
        Why it did not.
    params : dict, optional
        The algorithm's parameters recorded in the schedule.
    part : OpticalPart or NetworkPart or None, optional
        The system kind's fields.

    Examples
    --------
    >>> r = run("ring", load_system("ring", nodes=4), "allgather", 1024)
    >>> r.verified, r.slots, type(r.part).__name__, r.max_link_load, r.wavelengths
    (True, 3, 'NetworkPart', 1, None)
    >>> r.to_json()["steps"], r.to_json()["wavelengths"]
    (3, None)
    """

    algorithm: str
    collective: str
    system: str
    nodes: int
    size_bytes: int
    rounds: int
    slots: int
    block_steps: float
    transfers: int
    max_hops: int
    time_s: float
    lower_bound_s: float
    efficiency: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    verified: bool
    error: str | None
    params: dict[str, Any] = field(default_factory=dict)
    part: OpticalPart | NetworkPart | None = None

    @property
    def steps(self) -> int:
        """Alias of ``slots`` (physical time slots)."""
        return self.slots

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "part":
            raise AttributeError(name)
        part = self.part
        if part is not None and name in {f.name for f in fields(part)}:
            return getattr(part, name)
        if name in _PART_KEYS:
            return None  # the other kind's field
        raise AttributeError(name)

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-able dict (every key of both parts; the other kind's are null)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "part"}
        out["steps"] = self.slots
        out.update(dict.fromkeys(_PART_KEYS))
        if self.part is not None:
            out.update(asdict(self.part))
        return out


_PART_KEYS = tuple(dict.fromkeys(f.name for cls in (OpticalPart, NetworkPart) for f in fields(cls)))


def evaluate(schedule: Schedule, *, error: str | None = None) -> Result:
    """Time a schedule, bound it, and report it as one row.

    Parameters
    ----------
    schedule : Schedule
        A schedule (verified unless ``error`` says why not).
    error : str, optional
        The verification error, if it failed (the row then says ``verified: false``).

    Returns
    -------
    Result
        The row; on networks efficiency and bandwidths use the flow-simulated time.

    Examples
    --------
    >>> r = evaluate(build("ring", "paper", "allgather", "1MiB", nodes=8))
    >>> r.slots, r.block_steps, r.paper_steps
    (7, 7.0, 7)
    """
    if not isinstance(schedule, Schedule):
        raise InputError(f"evaluate takes a Schedule (collsim.build or collsim.load), not {_a(schedule)}")
    system = schedule.system
    model = model_for(system)
    try:
        spec = get_algorithm(schedule.algorithm)
    except InputError:
        spec = None  # a schedule read from a file by another tool
    coll = schedule.collective
    timing = model.time(schedule, spec)
    part = model.row_part(schedule, spec, dict(schedule.params))
    reported = getattr(part, "simulated_time_s", None) or timing.time_s
    lb = model.lower_bound_s(system, coll)
    algbw, busbw = bus_bandwidth(coll, reported)
    return Result(
        algorithm=schedule.algorithm, collective=coll.kind, system=system.name, nodes=system.nodes,
        size_bytes=coll.size_bytes, rounds=schedule.num_rounds, slots=schedule.num_steps,
        block_steps=block_steps(schedule), transfers=len(schedule),
        max_hops=int(schedule.hops.max()) if len(schedule) else 0, time_s=timing.time_s, lower_bound_s=lb,
        efficiency=lb / reported if reported > 0 and math.isfinite(reported) else 0.0,
        algbw_bytes_per_s=algbw, busbw_bytes_per_s=busbw, verified=error is None, error=error,
        params=dict(schedule.params), part=part)


def run(algorithm: str, system: System, collective: str, size_bytes: int, *,
        strategy: str | Callable = "first-fit", **params: Any) -> Result:
    """Build, realise, verify and evaluate one algorithm.

    Parameters
    ----------
    algorithm : str
        Algorithm name.
    system : System
        Target system.
    collective : str
        Collective name.
    size_bytes : int
        Message size.
    strategy : str or callable, optional
        Wavelength-assignment strategy.
    **params
        Algorithm parameters.

    Returns
    -------
    Result
        The row; ``verified`` is False (with ``error``) if verification failed.

    Examples
    --------
    >>> run("osm", load_system("paper", nodes=8), "allgather", 1024).verified
    True
    """
    sched = build(algorithm, system, canonical_collective(collective), size_bytes, strategy=strategy, **params)
    try:
        _check(sched)  # evaluate() times the schedule; verify()'s report would time it twice
        error = None
    except VerificationError as exc:
        error = str(exc)
    return evaluate(sched, error=error)


__all__ = ["Result", "VerifyReport", "build", "evaluate", "lower_bound_s", "realize", "run", "schedule_time_s",
           "verify"]
