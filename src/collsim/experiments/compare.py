"""Compare algorithms on one system and collective: build, verify, time, bound (through the pipeline)."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..algorithms import REGISTRY, get_algorithm
from ..core.collective import canonical_collective
from ..core.errors import InputError, UnsupportedError
from ..core.system import System
from ..core.units import parse_size
from ..pipeline import Result, run
from ..systems import load_system

__all__ = ["Result", "applicable", "compare", "run_one"]


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

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> applicable(load_system("paper", nodes=8), "allgather")
    [('ne', None), ('optree', None), ('osm', None), ('ring', None), ('wrht', None)]
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
    """Build, verify and time one algorithm (:func:`collsim.pipeline.run`).

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

    Examples
    --------
    >>> run_one("ring", load_system("paper", nodes=4), "allgather", 1024).slots
    3
    """
    return run(name, system, collective, size_bytes, strategy=strategy, **params)


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
    >>> [(r.algorithm, r.slots, r.block_steps, r.verified) for r in rows]
    [('ring', 7, 7.0, True), ('ne', 4, 7.0, True)]
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
