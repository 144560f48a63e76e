"""Compare algorithms on one system and collective: build, verify, time, bound (through the pipeline)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ..algorithms import REGISTRY, AlgorithmSpec, get_algorithm
from ..algorithms.placement import check_fits, place_all, placement_params
from ..algorithms.shared import base_key, shared_bases
from ..algorithms.skip import Skip
from ..core.collective import canonical_collective, collective_type, make_collective
from ..core.errors import CollsimError, InputError, ScheduleFormatError, UnsupportedError
from ..core.limits import MemoryLimitError
from ..core.system import System
from ..core.totals import size_from_total
from ..core.size_sweep import SizeSweep
from ..core.units import format_size, parse_size
from ..pipeline import Result  # the one result row (collsim.Result): compare's rows are its rows
from ..pipeline import lower_bound_s, run
from ..systems import load_system

__all__ = ["ALGORITHM_FAILURES", "Result", "applicable", "compare", "placement_params", "run_one"]

ALGORITHM_FAILURES = (UnsupportedError, MemoryLimitError, ScheduleFormatError)
"""Errors that are one algorithm's own when :func:`compare` runs it: it cannot build this instance
(``UnsupportedError``: also an LP or a matching its builder cannot solve here), its schedule would not
fit in memory (``MemoryLimitError``), or collsim cannot represent its schedule (``ScheduleFormatError``
of a built schedule: a transfer beyond int64).  Such an algorithm is listed as skipped with its reason
and the others still run; so is one that fails with an error collsim did not expect (a bug: ``"internal
error: <type>: <message>"``), as a sweep records it.  Errors of the system itself are raised once, before
any algorithm runs (its lower bound is computed first), and errors of the user's input (``InputError``:
a bad parameter value) still stop the comparison."""


def applicable(system: System, collective: str) -> list[tuple[str, str | None]]:
    """List registered algorithms in scope for this system and collective."""
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
    """Build, verify and time one algorithm (:func:`collsim.pipeline.run`)."""
    return _run_one(get_algorithm(name), system, canonical_collective(collective), size_bytes, strategy=strategy,
                    **params)


def _run_one(spec: AlgorithmSpec, system: System, coll: str, size_bytes: int, *, strategy: str = "first-fit",
             **params: Any) -> Result:
    """:func:`run_one` with the algorithm's entry and the canonical collective already looked up (compare's path)."""
    # the row's total_bytes, root and shift are its schedule's collective's (an algorithm without a root
    # or shift parameter roots at 0 and shifts by 1: tests/test_units.py checks it)
    return run(spec, system, coll, size_bytes, strategy=strategy, **params)


def _out_of_memory(exc: MemoryError) -> str:
    """One line for a refused allocation (numpy's text names the array's shape and dtype, not for users).

    >>> _out_of_memory(MemoryError("Unable to allocate 2.00 GiB for an array with shape (4194304, 64) and data type uint64"))
    'not enough memory (an allocation of 2.00 GiB was refused)'
    """
    import re
    m = re.search(r"allocate\s+([0-9.]+\s*[KMGTP]?i?B)", str(exc))
    return "not enough memory" + (f" (an allocation of {m.group(1)} was refused)" if m else "")


def compare(system: str | System = "paper", collective: str = "allgather", size: str | int | None = None, *,  # noqa: C901
            algorithms: Iterable[str] | None = None, strategy: str = "first-fit",
            progress: Callable[[str], None] | None = None, params: dict[str, Any] | None = None,
            total_size: str | int | None = None, root: int | None = None, shift: int | None = None,
            sizes: Iterable[str | int] | SizeSweep | None = None, **overrides: Any) -> tuple[list[Result], list[Skip]]:
    """Build, verify and time several algorithms side by side.

    Parameters
    ----------
    system : str or System, optional
        Preset, TOML path or System (default ``paper``).
    collective : str, optional
        Collective (default all-gather).
    size : str or int, optional
        collsim's size (default ``"4MiB"``): a node's block for all-gather, reduce-scatter,
        scatter, gather and shift, a (source, destination) pair's block for all-to-all, the
        vector for all-reduce, broadcast, reduce and scan (:mod:`collsim.core.totals`).
    algorithms : iterable of str, optional
        Names; default every registered algorithm that applies.
    strategy : str, optional
        Wavelength-assignment strategy.
    progress : callable, optional
        Called with each algorithm's name before it runs.
    params : dict, optional
        Algorithm parameters (``m`` for WRHT, ``k``/``radices``/``tree`` for OpTree ...);
        each goes to the algorithms that accept it.  ``root``, ``shift`` and ``q`` are
        the keywords below.
    total_size : str or int, optional
        nccl-tests' size (the total buffer) instead of ``size``; N must divide it for the
        collectives whose total holds N blocks.
    root : int, optional
        Root of a rooted collective, applied to every compared algorithm (default 0).
    shift : int, optional
        q of a circular shift, applied to every compared algorithm (default 1).
    sizes : iterable of (str or int), or SizeSweep, optional
        Several of collsim's sizes instead of ``size``, or a sweep as nccl-tests states it
        (:class:`collsim.core.size_sweep.SizeSweep`: ``-b``, ``-e``, ``-f`` or ``-i``, ``--total``):
        rows for every size, size by size, with the system built once.
    **overrides
        System overrides (``nodes``, ``wavelengths``, ``fibers`` ...).

    Returns
    -------
    tuple
        ``(results, skipped)``: rows in algorithm order (size by size with ``sizes``), and a
        :class:`~collsim.algorithms.skip.Skip` per algorithm not run: one in scope that does not
        apply to this instance (only when ``algorithms`` is None; one that cannot honour ``root``
        or ``shift`` too), and one (requested or not) that fails with an error of its own
        (:data:`ALGORITHM_FAILURES`, or an error collsim did not expect) while it is built,
        verified and timed, ``failed=True``, noted ``"<name> failed on this instance: <error>"``;
        the others still run.

    Raises
    ------
    UnsupportedError
        If an explicitly requested algorithm cannot run this instance, root or shift.
    CollsimError
        The first algorithm's error, if every compared algorithm failed.
    InputError
        If no compared algorithm accepts a given parameter, or for a bad or indivisible size.

    Examples
    --------
    >>> rows, skipped = compare("paper", "allgather", "1MiB", nodes=8, algorithms=["ring", "ne"])
    >>> [(r.algorithm, r.slots, r.block_steps, r.verified) for r in rows]
    [('ring', 7, 7.0, True), ('ne', 4, 7.0, True)]
    >>> rows, _ = compare("ring", "allgather", total_size="8KiB", nodes=8, algorithms=["ring"])
    >>> rows[0].size_bytes, rows[0].total_bytes
    (1024, 8192)
    >>> rows, _ = compare("ring", "allgather", sizes=SizeSweep("1KiB", "16KiB", factor=4), nodes=8, algorithms="ring")
    >>> [r.size_bytes for r in rows]
    [1024, 4096, 16384]
    """
    # The system, the collective and each algorithm's entry are looked up once here and passed down
    # (tests/test_compare_once.py counts them).
    sysm = system if isinstance(system, System) and all(v is None for v in overrides.values()) \
        else load_system(system, **overrides)
    coll = canonical_collective(collective)
    given = [k for k, x in (("size", size), ("total_size", total_size), ("sizes", sizes)) if x is not None]
    if len(given) > 1:
        raise InputError(f"give a size, a total size or sizes, not both {given[0]} and {given[1]}")
    if total_size is not None:
        all_sizes = [size_from_total(coll, sysm.nodes, parse_size(total_size))]
    elif isinstance(sizes, SizeSweep):
        all_sizes = sizes.sizes(coll, sysm.nodes)
    elif sizes is not None:
        all_sizes = [parse_size(s) for s in ([sizes] if isinstance(sizes, (str, int)) else sizes)]
        if not all_sizes:
            raise InputError("sizes is empty: give at least one size")
    else:
        all_sizes = [parse_size("4MiB" if size is None else size)]
    skipped: list[Skip] = []
    if params is not None and not isinstance(params, Mapping):
        raise InputError(f"params must be a mapping of parameter names to values, got {params!r}")
    params = dict(params or {})
    if isinstance(algorithms, str):  # one name, or "ring,ne" as on the command line
        algorithms = [a.strip() for a in algorithms.split(",") if a.strip()]
    # name -> (its entry, its parameters), placed as every command places them (collsim.algorithms.placement)
    if algorithms is None:
        in_scope = [spec for _, spec in sorted(REGISTRY.items()) if spec.supports(sysm, coll)]
        chosen, skipped = place_all(in_scope, sysm, coll, params, root=root, shift=shift)
        if not chosen:
            raise UnsupportedError(f"no registered algorithm implements {coll} on {sysm.topology} systems here"
                                   + (f" ({'; '.join(map(str, skipped))})" if skipped and (root or shift) else ""))
    else:
        named = {spec.name: spec for spec in (get_algorithm(a) for a in algorithms)}  # each once, aliases too
        chosen, _ = place_all(named.values(), sysm, coll, params, root=root, shift=shift, strict=True)
    results, failures = [], []
    for name, (spec, placed_params) in list(chosen.items()):  # what cannot fit, refused before any work
        try:
            check_fits(spec, sysm, collective_type(coll), {k: v for k, v in placed_params.items() if k in spec.params},
                       orbits=True)
        except MemoryLimitError as exc:
            failures.append(exc)
            skipped.append(Skip(name, f"{name} failed on this instance: {exc}", failed=True))
            del chosen[name]
    if not chosen:
        raise failures[0]
    for size_bytes in all_sizes:  # the system's own errors (its bound) once, before any algorithm runs
        # (a bad root is the algorithms' to name; an explicit schedule's floor, each algorithm's build)
        lower_bound_s(sysm, make_collective(coll, sysm.nodes, size_bytes, explicit=False))
    with shared_bases(_bases(chosen, sysm, coll)):  # a base another row builds too: built once
        _run_all(chosen, sysm, coll, all_sizes, strategy, progress, results, failures, skipped)
    if failures and not results:
        raise failures[0]
    return results, skipped


def _bases(chosen, sysm, coll: str) -> list[str]:
    """The keys of the schedules the chosen algorithms build as their bases (:mod:`collsim.algorithms.shared`)."""
    out = []
    for spec, placed_params in chosen.values():
        if spec.bases is not None:
            mine = {k: v for k, v in placed_params.items() if k in spec.params}
            try:
                out += [base_key(name, p) for name, p in spec.bases(sysm, collective_type(coll), mine)]
            except CollsimError:   # a base it cannot name: its own row reports why
                pass
    return out


def _run_all(chosen, sysm, coll, all_sizes, strategy, progress, results, failures, skipped) -> None:
    """Every chosen algorithm at every size: rows into ``results``; an algorithm's own failure into
    ``failures`` and ``skipped`` (the others still run)."""
    for size_bytes in all_sizes:
        at = f" at {format_size(size_bytes)}" if len(all_sizes) > 1 else ""
        for name, (spec, placed_params) in chosen.items():
            if progress:
                progress(name + at)
            mine = {k: v for k, v in placed_params.items() if k in spec.params}
            note = None
            try:
                results.append(_run_one(spec, sysm, coll, size_bytes, strategy=strategy, **mine))
            except ALGORITHM_FAILURES as exc:  # this algorithm's own failure: list it, keep the others
                failures.append(exc)
                note = f"{name} failed on this instance: {exc}"
            except MemoryError as exc:  # an allocation the machine refused: its arrays are freed, the others fit
                failures.append(exc)
                note = f"{name} failed on this instance: {_out_of_memory(exc)}"
            except CollsimError:        # the user's input (InputError): it stops the comparison
                raise
            except Exception as exc:    # noqa: BLE001 - a bug in this algorithm alone: list it, keep the others
                failures.append(exc)
                note = f"{name} failed on this instance: internal error: {type(exc).__name__}: {exc}"
            finally:  # what this algorithm freed goes back to the system, not kept for the next (tune_malloc)
                from .._malloc import release_memory
                release_memory()
            if note is not None and Skip(name, note, failed=True) not in skipped:
                skipped.append(Skip(name, note, failed=True))
