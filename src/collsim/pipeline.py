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
from typing import Any, Callable, Mapping

import numpy as np

from .algorithms import REGISTRY, AlgorithmSpec, build_logical, build_orbits, get_algorithm
from .algorithms.placement import place
from .core.collective import Collective, collective_type
from .core.errors import InputError, UnsupportedError, VerificationError
from .core.limits import MemoryLimitError, check_memory, memory_limit_bytes
from .core.schedule import ROUTE_BYTES_PER_TRANSFER, LogicalSchedule, Schedule
from .core.schedule_file import what_it_is
from .core.repeated import RepeatedSteps, step_classes
from .core.symmetry import SymmetricSchedule
from .core.system import System
from .core.units import parse_size
from .cost import block_steps, bus_bandwidth
from .kinds import model_for
from .kinds.result import Result
from .systems import load_system
from .systems.options import SystemOptions
from .verify import VerifyReport  # the one report class (collsim.VerifyReport)
from .verify import verify_dataflow, verify_endpoints
from .verify.orbits import orbit_memory_bytes, verify_orbits


def realize(system: System, logical: LogicalSchedule, *, strategy: str | Callable = "first-fit",
            algorithm: str = "custom", params: Mapping[str, Any] | None = None) -> Schedule:
    """Turn a logical schedule into a physical one with the system's own routing and channel assignment."""
    if not isinstance(strategy, str) and not callable(strategy):
        raise InputError(f"invalid strategy {strategy!r}")
    return model_for(system).realize(system, logical, strategy=strategy, algorithm=algorithm, params=params)


def build(algorithm: str | AlgorithmSpec, system: str | System, collective: str, size: str | int, *,
          nodes: int | None = None, wavelengths: int | None = None, fibers: int | None = None,
          strategy: str | Callable | None = None, system_options: dict | None = None, **params: Any) -> Schedule:
    """Build the physical schedule of an algorithm (not yet verified).

    Parameters
    ----------
    algorithm : str or AlgorithmSpec
        Registry name or alias (``ring``, ``ne``, ``osm`` ...; see ``collsim algorithms``), or its entry.
    system : str, System or SystemOptions
        Preset (``paper``, ``terarack``), network kind, TOML path, or System; or one of these with its
        options (:class:`collsim.systems.options.SystemOptions`, as the command line gives it).
    collective : str
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast``, ``reduce``, ``alltoall`` ...
    size : str or int
        Message size (``"4MiB"``, ``"32KB"``, bytes).
    nodes, wavelengths, fibers : int, optional
        Overrides of the system's parameters.
    strategy : str or callable, optional
        Wavelength-assignment strategy for rounds without a pre-assigned colouring (default: the
        SystemOptions' strategy, else first-fit).
    system_options : dict, optional
        Further system parameters (``link_bandwidth_bytes_per_s``, ``dims``, ``k`` ...).
    **params
        Algorithm parameters (``stripe=``, ``m=``, ``radices=`` ...), each checked against the type
        the algorithm declares; ``root``, ``shift`` (or ``q``) place the collective, as ``--root``
        and ``--shift`` do (:func:`collsim.algorithms.placement.placement_params`): out of range,
        or one the algorithm cannot honour, is refused.

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
    >>> from collsim.systems.options import SystemOptions
    >>> build("ring", SystemOptions("torus", params=(("dims", (4, 4)),)), "allgather", "1KiB").system.nodes
    16
    """
    sysm, spec, size_bytes, params = _prepare(algorithm, system, collective, size, nodes, wavelengths, fibers,
                                              system_options, params)
    logical, chosen = build_logical(spec, sysm, collective, size_bytes, **params)
    check_memory(realise_bytes(logical), f"realising {spec.name}'s {logical.collective.name} on {sysm.nodes} nodes "
                 f"({len(logical.src)} transfers, {len(logical.chunk_idx)} chunk deliveries)",
                 "use fewer nodes or another algorithm")
    if strategy is None:
        strategy = system.strategy if isinstance(system, SystemOptions) else "first-fit"  # --strategy
    sched = realize(sysm, logical, strategy=strategy, algorithm=spec.name, params=chosen)
    stale = [k for k in spec.realised if k in sched.params]
    if stale:  # a prediction must never disagree with the schedule it describes
        facts = model_for(sysm).realised_facts(sched)
        sched = sched.replace(params={**sched.params, **{k: facts[k] for k in stale}})  # a new schedule
    return sched


def _prepare(algorithm, system, collective, size, nodes, wavelengths, fibers, system_options, params):
    """The system, the algorithm's entry, the size and the placed parameters :func:`build` works with."""
    if system_options is not None and not isinstance(system_options, Mapping):
        raise InputError(f"system_options must be a mapping of parameter names to values, got {system_options!r}")
    options = {"nodes": nodes, "wavelengths": wavelengths, "fibers": fibers}
    options.update({k: v for k, v in (system_options or {}).items() if v is not None})
    # a System with no overrides, and an algorithm's entry, are used as they are (compare looks each up once)
    sysm = system if isinstance(system, System) and all(v is None for v in options.values()) \
        else load_system(system, **options)
    size_bytes = parse_size(size)
    spec = algorithm if isinstance(algorithm, AlgorithmSpec) else get_algorithm(algorithm)
    # root, shift (or q) and the rest placed as every command places them (collsim.algorithms.placement)
    return sysm, spec, size_bytes, place(spec, collective, params, nodes=sysm.nodes)


def build_symmetric(algorithm: str | AlgorithmSpec, system: str | System, collective: str, size: str | int, *,
                    nodes: int | None = None, wavelengths: int | None = None, fibers: int | None = None,
                    strategy: str | Callable | None = None, system_options: dict | None = None,
                    **params: Any) -> SymmetricSchedule:
    """Build an algorithm's schedule as representatives and a group, never expanded.

    The algorithm builds only its transfers into node 0 (its ``orbits`` builder; or into the
    domain of a subgroup it names, which the kind must accept); the system's kind realises them
    and supplies its translation group
    (:meth:`~collsim.kinds.base.KindModel.symmetry_group`).  :func:`verify` and :func:`evaluate`
    take the result as they take a :class:`~collsim.core.schedule.Schedule`, with the same
    verdict, time and row as its expansion (:meth:`SymmetricSchedule.expand`), in memory that
    grows with the domain's share: ring all-reduce on 65,536 nodes is 131,070 representatives
    instead of 8.6 x 10^9 transfers.

    Parameters
    ----------
    algorithm, system, collective, size, nodes, wavelengths, fibers, strategy, system_options, **params
        As :func:`build`.

    Returns
    -------
    SymmetricSchedule
        The representatives, realised, and the group.

    Raises
    ------
    collsim.core.errors.UnsupportedError
        If the algorithm declares no symmetry for this instance, or the system's kind has no
        group; :func:`build` builds such schedules.
    collsim.core.errors.InputError
        If the collective is not invariant (chunk sizes that differ between nodes).

    Examples
    --------
    >>> s = build_symmetric("ring", "paper", "allreduce", "4MiB", nodes=1024)
    >>> len(s.reps), s.transfers, verify(s).data_flow
    (2046, 2095104, 'orbits')
    """
    sysm, spec, size_bytes, params = _prepare(algorithm, system, collective, size, nodes, wavelengths, fibers,
                                              system_options, params)
    model = model_for(sysm)
    group = spec.group_on(sysm)
    if group is None:
        raise UnsupportedError(f"{spec.name}: this {model.name} system has no translation group for symmetric "
                               "schedules; build expands them")
    made = build_orbits(spec, sysm, collective, size_bytes, **params)
    if made is None:
        raise UnsupportedError(f"{spec.name} declares no symmetry for {collective} here; build expands it")
    logical, chosen, *declared = made   # optionally the algorithm's own group, and its chunk layout
    check_memory(realise_bytes(logical), f"realising {spec.name}'s {logical.collective.name} representatives on "
                 f"{sysm.nodes} nodes ({len(logical.src)} transfers)", "use fewer nodes or another algorithm")
    interleaved = len(declared) > 1 and bool(declared[1])
    if declared and declared[0] is not None:  # the algorithm's own group (a subgroup: rotations by multiples of a stride ...)
        group = declared[0]
        if not model.accepts_group(sysm, group):
            raise UnsupportedError(f"{spec.name}: the {model.name} kind cannot check schedules under the "
                                   f"translations {group}; build expands it")
    if strategy is None:
        strategy = system.strategy if isinstance(system, SystemOptions) else "first-fit"
    reps = realize(sysm, logical, strategy=strategy, algorithm=spec.name, params=chosen)
    sym = SymmetricSchedule(reps, group, interleaved)
    stale = [k for k in spec.realised if k in reps.params]
    if stale:
        facts = model.realised_facts(model.orbit_schedule(sym))
        sym = SymmetricSchedule(reps.replace(params={**reps.params, **{k: facts[k] for k in stale}}), group,
                                interleaved)
    return sym


from .core.compact_file import REPEATED_MAX_CLASS_TRANSFERS  # noqa: E402  (one cap for builds and files)


def build_repeated(algorithm: str | AlgorithmSpec, system: str | System, collective: str, size: str | int, *,
                   nodes: int | None = None, system_options: dict | None = None, **params: Any) -> RepeatedSteps:
    """Build an algorithm's schedule as representatives under its data flow's group, and one whole
    step of every class of steps alike.

    For a schedule whose data flow is invariant under a group the system is not (a ring's
    rotations on a fat tree: :attr:`AlgorithmSpec.flow_group`), on a kind that checks and times each
    step alone (:meth:`~collsim.kinds.base.KindModel.times_steps_alone`).  The data flow is checked on
    the group's domain, the resources and the time on the classes' steps
    (:class:`~collsim.core.repeated.RepeatedSteps`); :func:`verify` and :func:`evaluate` take the result as
    they take a :class:`~collsim.core.schedule.Schedule`, with its expansion's verdict and row.

    Parameters
    ----------
    algorithm, system, collective, size, nodes, system_options, **params
        As :func:`build`.

    Returns
    -------
    RepeatedSteps

    Raises
    ------
    collsim.core.errors.UnsupportedError
        If the algorithm declares no data-flow group here, the kind does not time steps alone, or
        the algorithm routes its own transfers.
    collsim.core.limits.MemoryLimitError
        If the classes' whole steps would hold more than :data:`REPEATED_MAX_CLASS_TRANSFERS` transfers.

    Examples
    --------
    >>> s = build_repeated("ring", "hierarchical", "allreduce", "4MiB", system_options={"dims": "switch:8,fat-tree:8"})
    >>> s.transfers, len(s.flow.reps), s.classes, verify(s).data_flow
    (8064, 126, 2, 'orbits')
    """
    sysm, spec, size_bytes, params = _prepare(algorithm, system, collective, size, nodes, None, None,
                                              system_options, params)
    model = model_for(sysm)
    group = spec.flow_group(sysm, collective_type(collective)) if spec.flow_group is not None else None
    if group is None:
        raise UnsupportedError(f"{spec.name} declares no group of its data flow for {collective}; build expands it")
    if not model.times_steps_alone(sysm):
        raise UnsupportedError(f"the {model.name} kind does not time steps alone; build expands {spec.name}")
    made = build_orbits(spec, sysm, collective, size_bytes, group=group, **params)
    if made is None:
        raise UnsupportedError(f"{spec.name} declares no symmetry for {collective} here; build expands it")
    logical, chosen, *declared = made
    if logical.routes is not None or (logical.via is not None and (logical.via >= 0).any()):
        raise UnsupportedError(f"{spec.name} routes its own transfers: its steps need not repeat")
    check_memory(realise_bytes(logical), f"realising {spec.name}'s {logical.collective.name} representatives on "
                 f"{sysm.nodes} nodes ({len(logical.src)} transfers)", "use fewer nodes or another algorithm")
    reps = realize(sysm, logical, algorithm=spec.name, params=chosen)
    flow = SymmetricSchedule(reps, declared[0] if declared and declared[0] is not None else group,
                             len(declared) > 1 and bool(declared[1]))
    step_class, first = step_classes(reps)
    per_step = np.diff(reps.step_bounds)[first].sum() * flow.group.order if len(first) else 0
    if per_step > REPEATED_MAX_CLASS_TRANSFERS:
        raise MemoryLimitError(f"{spec.name}'s {collective} on {sysm.nodes} nodes has {len(first)} classes of steps "
                               f"alike, {int(per_step)} transfers in their whole steps, above "
                               f"{REPEATED_MAX_CLASS_TRANSFERS}: its steps are too varied to check one per class")
    return RepeatedSteps.of(flow, lambda s, ls: realize(s, ls, algorithm=spec.name, params=chosen),
                            (step_class, first))


def realise_bytes(logical: LogicalSchedule) -> int:
    """Estimated peak bytes of realising ``logical``: it stays held while its physical copy is made.

    The physical schedule repeats the logical columns and adds every transfer's step and route,
    so realising holds both at once: a ring all-reduce on 4,096 nodes (33.5 M transfers) peaks
    at 2.2 times its schedule.  :func:`build` refuses, with this estimate, a logical schedule
    whose realisation would exceed the memory limit, before realising it.

    Parameters
    ----------
    logical : LogicalSchedule
        An algorithm's output.

    Returns
    -------
    int
        Twice the logical columns' bytes plus :data:`ROUTE_BYTES_PER_TRANSFER` a transfer.

    Examples
    --------
    >>> from collsim.algorithms import build_logical, get_algorithm
    >>> from collsim.systems import load_system
    >>> ls, _ = build_logical(get_algorithm("ring"), load_system("line", nodes=4), "allgather", 1024)
    >>> realise_bytes(ls) > 12 * 32
    True
    """
    held = sum(a.nbytes for a in (logical.round, logical.src, logical.dst, logical.chunk_ptr, logical.chunk_idx,
                                  logical.reduce, logical.direction, logical.color, logical.band, logical.via)
               if a is not None)
    return 2 * held + ROUTE_BYTES_PER_TRANSFER * len(logical.src)


def verify(schedule: Schedule | str | os.PathLike, *, dataflow: bool = True, resources: bool = True,
           answer: bool = True) -> VerifyReport:
    """Verify a schedule (or a schedule file); raise the first violation found.

    Parameters
    ----------
    schedule : Schedule, str or path
        The schedule to check, or a schedule file (JSON or ``.npz``) to load and check.
    dataflow : bool, optional
        Check data movement, reductions and the postcondition (default True).
    resources : bool, optional
        Check routes, channels and transceiver limits with the system's model (default True).
    answer : bool, optional
        Time the schedule as a result reports it (``time_s``; default True).  False leaves
        ``time_s`` NaN, for a caller that times the schedule itself (:func:`collsim.simulate`
        runs the flow simulation that ``time_s`` would on a network).

    Returns
    -------
    VerifyReport
        Summary counts, ``time_s`` (the schedule's time, never below the lower bound) and
        ``closed_form_time_s`` (the kind's closed form: on networks the alpha-beta estimate).

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
    schedule = schedule if isinstance(schedule, (SymmetricSchedule, RepeatedSteps)) else _schedule(schedule, "verify")
    data_flow = _check(schedule, dataflow, resources)
    model = model_for(schedule.system)
    timed = _timed(schedule)
    closed = model.time(timed, _spec(schedule))
    return VerifyReport(steps=schedule.num_steps, rounds=schedule.num_rounds, transfers=_transfers(schedule),
                        wavelengths_used=timed.wavelengths_used(),
                        max_hops=int(timed.hops.max()) if len(timed) else 0,
                        time_s=model.answer_time_s(timed, closed) if answer else math.nan,
                        closed_form_time_s=closed.time_s, data_flow=data_flow)


def stand_in(schedule) -> Schedule:
    """What the kind checks and times for a schedule of any form: the schedule itself, a symmetric
    schedule's representatives on the quotient (its kind's ``orbit_schedule``), or the weighted whole
    steps of a schedule whose steps repeat.

    Examples
    --------
    >>> s = build_symmetric("ring", "ring", "allgather", "1MiB", nodes=8)
    >>> len(stand_in(s)), s.transfers
    (7, 56)
    """
    return _timed(schedule)


def _timed(schedule) -> Schedule:
    """What the kind times: the schedule, a symmetric schedule's stand-in (its kind's ``orbit_schedule``),
    or the weighted whole steps of a schedule whose steps repeat."""
    if isinstance(schedule, RepeatedSteps):
        return schedule.steps
    if isinstance(schedule, SymmetricSchedule):
        return model_for(schedule.system).orbit_schedule(schedule)
    return schedule


def _transfers(schedule) -> int:
    return schedule.transfers if isinstance(schedule, (SymmetricSchedule, RepeatedSteps)) else len(schedule)


def _schedule(schedule: Schedule | str | os.PathLike, what: str) -> Schedule:
    """``schedule`` itself, or the schedule in the file it names (:func:`collsim.core.schedule_file.load_schedule`)."""
    from .core.schedule_file import load_schedule
    return load_schedule(schedule, what=what, compact=True)   # a file of representatives: checked on its orbits


def _check(schedule: Schedule, dataflow: bool = True, resources: bool = True) -> str:
    """The checks of :func:`verify`, without the report; returns how the data flow was checked."""
    if isinstance(schedule, RepeatedSteps):  # data flow on the orbits, resources on every class's whole step
        verify_endpoints(schedule.flow.reps)
        if resources:
            verify_endpoints(schedule.steps)
            model_for(schedule.system).check_resources(schedule.steps)
        return verify_orbits(schedule.flow) if dataflow else "not checked"
    if isinstance(schedule, SymmetricSchedule):  # on the orbits (collsim.verify.orbits)
        verify_endpoints(schedule.reps)
        if resources:
            model_for(schedule.system).check_orbit_resources(schedule)
        return verify_orbits(schedule) if dataflow else "not checked"
    verify_endpoints(schedule)
    if resources:
        model_for(schedule.system).check_resources(schedule)
    return verify_dataflow(schedule) if dataflow else "not checked"


def schedule_time_s(schedule: Schedule | str | os.PathLike, *, report: VerifyReport | None = None) -> float:
    """Time of a verified schedule, as a result reports it: never below :func:`lower_bound_s`.

    The schedule is verified first (:func:`verify`), unless ``report`` is the report
    :func:`verify` gave for it: a time is never given for a schedule that fails the verifier.
    On optical systems this is the optical step model's time; on electrical networks the flow
    simulator's (bulk mode), as :func:`evaluate`'s ``time_s``.  The alpha-beta estimate (an
    algorithm's own formula can be below the bound) is :func:`verify`'s ``closed_form_time_s``.

    Parameters
    ----------
    schedule : Schedule, str or path
        A schedule, or a schedule file.
    report : VerifyReport, optional
        The schedule's report from :func:`verify`: it is not verified again.

    Returns
    -------
    float
        Seconds (optical step model on rings, flow simulation on networks).

    Raises
    ------
    collsim.core.errors.VerificationError
        If the schedule fails the verifier.
    collsim.core.errors.InputError
        If ``report`` is not a report of this schedule.

    Examples
    --------
    >>> s = build("ring", "paper", "allgather", "1MiB", nodes=8)
    >>> round(schedule_time_s(s) * 1e3, 3)
    1.722
    >>> schedule_time_s(s.take(range(len(s) - 1)))   # the last transfer dropped
    Traceback (most recent call last):
    ...
    collsim.core.errors.PostconditionError: postcondition not met: node 0 lacks chunk 1 (node 0, chunk 1)
    """
    schedule = _schedule(schedule, "schedule_time_s")
    proof = _proof(schedule, report, "schedule_time_s")
    if isinstance(proof, VerifyReport) and not math.isnan(proof.time_s):
        return proof.time_s
    if proof is None:
        _check(schedule)
    model = model_for(schedule.system)
    timed = _timed(schedule)   # a file of representatives: its kind times their stand-in
    return model.answer_time_s(timed, model.time(timed, _spec(schedule)))


def _spec(schedule: Schedule):
    """The registered algorithm that built ``schedule`` (its closed forms), or None for another tool's."""
    if schedule.algorithm in REGISTRY:  # collsim's schedules record the registry name: no lookup by alias
        return REGISTRY[schedule.algorithm]
    try:
        return get_algorithm(schedule.algorithm)
    except InputError:
        return None


def _proof(schedule: Schedule, report: Any, what: str) -> VerifyReport | None:
    """``report`` if it is a verification report of ``schedule`` (None if not given); else refuse it."""
    if report is None:
        return None
    if not isinstance(report, VerifyReport):
        raise InputError(f"{what}'s report must be what collsim.verify returns, not {what_it_is(report)}")
    if not report.describes(schedule):
        raise InputError(f"{what} was given the report of another schedule ({report.transfers} transfers in "
                         f"{report.steps} steps; this one has {len(schedule)} in {schedule.num_steps})")
    return report


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
        raise InputError(f"lower_bound_s takes a Collective (collsim.make_collective), not {what_it_is(collective)}")
    return model_for(system).lower_bound_s(system, collective)


def evaluate(schedule: Schedule, *, report: VerifyReport | None = None, error: str | None = None,
             check: bool = True) -> Result:
    """Verify a schedule, time it, bound it, and report it as one row.

    The row says ``verified: true`` only when the verifier ran and passed the schedule:
    here (the default), or before, as shown by passing its ``report``.  A schedule that
    fails is still timed, with ``verified: false`` and the verifier's ``error``.

    Parameters
    ----------
    schedule : Schedule
        A schedule.
    report : VerifyReport, optional
        The schedule's report from :func:`verify`: it passed, and is not verified again.
    error : str, optional
        The verifier's error, when it has already failed the schedule.
    check : bool, optional
        Run the verifier when neither ``report`` nor ``error`` is given (default True);
        False times the schedule unverified: ``verified`` False, ``verification`` ``"not run"``.

    Returns
    -------
    Result
        The row.  ``time_s`` is its answer, never below ``lower_bound_s``: the optical step
        model on optical systems, the flow-simulated time on networks (whose alpha-beta
        estimate is ``alpha_beta_time_s``); efficiency and bandwidths use it.

    Raises
    ------
    collsim.core.errors.ScheduleFormatError
        For a malformed schedule (there is nothing to verify or time).
    collsim.core.errors.InputError
        If ``report`` is not a report of this schedule, or both ``report`` and ``error`` are given.

    Examples
    --------
    >>> s = build("ring", "paper", "allgather", "1MiB", nodes=8)
    >>> r = evaluate(s)
    >>> r.slots, r.block_steps, r.paper_steps, r.verified, r.verification
    (7, 7.0, 7, True, 'passed')
    >>> broken = evaluate(s.take(range(len(s) - 1)))      # the last transfer dropped
    >>> broken.verified, broken.verification, broken.error
    (False, 'failed', 'postcondition not met: node 0 lacks chunk 1 (node 0, chunk 1)')
    >>> evaluate(s, report=verify(s)).verified, evaluate(s, check=False).verification
    (True, 'not run')
    """
    if not isinstance(schedule, (Schedule, SymmetricSchedule, RepeatedSteps)):
        raise InputError(f"evaluate takes a Schedule (collsim.build or collsim.load), not {what_it_is(schedule)}")
    if report is not None and error is not None:
        raise InputError("evaluate takes a report (the schedule passed) or an error (it failed), not both")
    if _proof(schedule, report, "evaluate") is not None:
        verification = "passed"
    elif error is not None:
        verification = "failed"
    elif check:
        try:
            _check(schedule)
            verification = "passed"
        except VerificationError as exc:
            verification, error = "failed", str(exc)
    else:
        verification = "not run"
    system = schedule.system
    model = model_for(system)
    spec = _spec(schedule)
    coll = schedule.collective
    timed = _timed(schedule)  # a symmetric schedule's kind times its orbits
    timing = model.time(timed, spec)
    part = model.row_part(timed, spec, dict(schedule.params))
    reported = model.answer_time_s(timed, timing)  # the row's answer, time_s: never below the bound
    lb = model.lower_bound_s(system, coll)
    algbw, busbw = bus_bandwidth(coll, reported)
    return Result(
        algorithm=schedule.algorithm, collective=coll.name, system=system.name, nodes=system.nodes,
        size_bytes=coll.size_bytes, total_bytes=coll.total_bytes, root=coll.root if coll.rooted else None,
        shift=coll.shift if coll.type.shifted else None, rounds=schedule.num_rounds, slots=schedule.num_steps,
        block_steps=block_steps(timed), transfers=_transfers(schedule),
        max_hops=int(timed.hops.max()) if len(timed) else 0, time_s=reported, lower_bound_s=lb,
        efficiency=lb / reported if reported > 0 and math.isfinite(reported) else 0.0,
        algbw_bytes_per_s=algbw, busbw_bytes_per_s=busbw, verified=verification == "passed", error=error,
        verification=verification, params=dict(schedule.params), part=part)


def run(algorithm: str | AlgorithmSpec, system: System, collective: str, size_bytes: int, *,
        strategy: str | Callable = "first-fit", **params: Any) -> Result:
    """Build, realise, verify and evaluate one algorithm.

    Parameters
    ----------
    algorithm : str or AlgorithmSpec
        Algorithm name, or its registry entry.
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
        The row; ``verified`` is False (with ``error``) if verification failed.  An algorithm
        that declares its symmetry on a kind with a group is verified and timed on its orbits
        when its expansion has :data:`SYMMETRIC_ABOVE_TRANSFERS` transfers or more
        (:func:`build_symmetric`).

    Examples
    --------
    >>> run("osm", load_system("paper", nodes=8), "allgather", 1024).verified
    True
    """
    return evaluate(build_compact(algorithm, system, collective, size_bytes, strategy=strategy, **params))


def simulate_compact(schedule: Schedule | SymmetricSchedule | RepeatedSteps, *, report: VerifyReport | None = None,
                     check: bool = True):
    """Flow-simulate (bulk mode) a schedule in any form :func:`build_compact` returns, as the whole schedule.

    A :class:`~collsim.core.schedule.Schedule` is simulated by :func:`collsim.simulate`; a symmetric
    schedule or one whose steps repeat through its representatives or its classes of steps, which
    is how ``collsim compare`` and :func:`evaluate` time it: the total, every step's time and every
    link's bytes and busy time are the whole schedule's (docs/model.md, "One flow per orbit").

    Parameters
    ----------
    schedule : Schedule, SymmetricSchedule or RepeatedSteps
        A schedule on an electrical network.
    report : VerifyReport, optional
        Its report from :func:`verify`: it passed, and is not verified again.
    check : bool, optional
        Verify it when no ``report`` is given (default True); False: ``verified`` False.

    Returns
    -------
    collsim.sim.SimResult
        ``form`` says which: ``explicit``, ``symmetric`` or ``repeated``.

    Raises
    ------
    collsim.core.errors.VerificationError
        If it fails the verifier (``check``, no report).
    collsim.core.errors.UnsupportedError
        On a system without a flow simulator (optical rings: :func:`evaluate`).

    Examples
    --------
    >>> r = simulate_compact(build_symmetric("ring", "ring", "allgather", "1MiB", nodes=8))
    >>> r.form, r.transfers, r.verified
    ('symmetric', 56, True)
    """
    from .core.plugins import require
    from .sim import simulate
    if isinstance(schedule, Schedule):
        return simulate(schedule, report=report, check=check)
    if not isinstance(schedule, (SymmetricSchedule, RepeatedSteps)):
        raise InputError(f"simulate_compact takes a schedule (collsim.pipeline.build_compact), not {what_it_is(schedule)}")
    require(schedule.system, "flow-simulation", "the flow simulator")
    if report is not None:
        _proof(schedule, report, "simulate_compact")
        verified = True
    elif check:
        _check(schedule)
        verified = True
    else:
        verified = False
    return model_for(schedule.system).simulate_compact(schedule, verified=verified)


def build_compact(algorithm: str | AlgorithmSpec, system: str | System, collective: str, size_bytes: int | str, *,
                  strategy: str | Callable = "first-fit", **params: Any) -> Schedule | SymmetricSchedule | RepeatedSteps:
    """The schedule in the smallest form collsim checks: symmetric where that pays, else explicit.

    An algorithm whose data flow is invariant under a group its system lacks (a ring on a fat tree) is
    built by :func:`build_repeated` on a kind that times steps alone, from the same size on.  An algorithm that declares its symmetry on a kind with a group is built by
    :func:`build_symmetric` when its expansion has :data:`SYMMETRIC_ABOVE_TRANSFERS` transfers or chunk
    deliveries or more and its domain's state fits the memory limit; anything else by :func:`build`.  Either
    verifies, times and reports alike (:func:`verify`, :func:`evaluate`).

    Parameters
    ----------
    algorithm, system, collective, size_bytes, strategy, **params
        As :func:`build`.

    Returns
    -------
    Schedule, SymmetricSchedule or RepeatedSteps

    Examples
    --------
    >>> type(build_compact("ring", "paper", "allreduce", "4MiB", nodes=2048)).__name__
    'SymmetricSchedule'
    >>> type(build_compact("ring", "paper", "allreduce", "4MiB", nodes=16)).__name__
    'Schedule'
    """
    spec = algorithm if isinstance(algorithm, AlgorithmSpec) else get_algorithm(algorithm)
    system = system if isinstance(system, System) else load_system(system)
    if _repeats_pay(spec, system, collective, size_bytes, params):
        try:  # a data flow symmetric under a group the system lacks: orbits, and its steps' classes
            return build_repeated(spec, system, collective, size_bytes, **params)
        except (UnsupportedError, InputError) as exc:
            if isinstance(exc, MemoryLimitError):
                raise     # its representatives do not fit: the symmetric and full builds would not either
    if spec.orbits is not None and spec.group_on(system) is not None:
        try:  # large and symmetric: verified and timed on its orbits, with the expansion's verdict and row
            sym = build_symmetric(spec, system, collective, size_bytes, strategy=strategy, **params)
        except MemoryLimitError:
            raise     # its share does not fit: the whole schedule would not either, so its estimate is the one to give
        except (UnsupportedError, InputError):
            sym = None  # not symmetric here (chunk sizes that differ between nodes): built in full below
        if sym is not None and max(sym.transfers, len(sym.reps.chunk_idx) * sym.group.order) >= SYMMETRIC_ABOVE_TRANSFERS \
                and orbit_memory_bytes(sym) <= memory_limit_bytes():   # else built in full, or refused, as before
            return sym
    return build(spec, system, collective, size_bytes, strategy=strategy, **params)


REPEATED_ABOVE_TRANSFERS = 1 << 20
"""Where :func:`build_compact` builds a schedule whose steps repeat as :func:`build_repeated`: from 1 M
transfers (ring all-reduce on 1,024 GPUs, 2.1 M transfers: 0.15 s instead of 3.0 s built in full).
Below, the full schedule is cheap; its time agrees with the repeated form's to rounding
(docs/model.md, "Steps that repeat")."""


def _repeats_pay(spec: AlgorithmSpec, system: System, collective: str, size_bytes, params) -> bool:
    """Whether :func:`build_compact` builds by :func:`build_repeated`: the algorithm declares its data flow's
    group, the kind times steps alone but cannot check schedules under that group, and the whole schedule
    has :data:`REPEATED_ABOVE_TRANSFERS` transfers or chunk deliveries or more (its closed forms say so
    before anything is built)."""
    if spec.flow_group is None or spec.orbits is None or spec.transfers is None and spec.deliveries is None:
        return False
    model = model_for(system)
    ctype = collective_type(collective)
    if not model.times_steps_alone(system) or not spec.supports(system, ctype):
        return False
    group = spec.flow_group(system, ctype)
    if group is None or model.accepts_group(system, group):
        return False     # the kind checks it on its own orbits (build_symmetric), one transfer a step
    counts = [f(system, ctype, dict(params)) for f in (spec.transfers, spec.deliveries) if f is not None]
    whole = max((c for c in counts if c is not None), default=None)
    return whole is not None and whole >= REPEATED_ABOVE_TRANSFERS


SYMMETRIC_ABOVE_TRANSFERS = 1 << 22
"""Where :func:`run` (and ``collsim compare``) verifies and times a symmetric algorithm's schedule
on its orbits instead of in full: from 4 M transfers or chunk deliveries (ring all-reduce on 1,449
nodes; ``hier-allreduce`` on 128 boxes of 8, 2.7 M transfers carrying 67 M chunks).  Below, the
full schedule is cheap and every path stays the one it has always been; the verdict and the row
are the same either way (``tests/test_symmetry.py``)."""


__all__ = ["Result", "VerifyReport", "build", "build_compact", "build_repeated", "build_symmetric", "evaluate", "lower_bound_s", "realize", "run", "schedule_time_s",
           "simulate_compact", "stand_in", "verify"]
