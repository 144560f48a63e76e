"""An algorithm's parameters as a command or the library was given them: root, shift, and the rest.

Every command that takes ``--root``, ``--shift`` and ``-p`` (compare, schedule, simulate,
synthesize, mpi, export msccl, export simgrid), the sweeps and the library (``collsim.build``,
``collsim.compare``, ``collsim.synthesize``) place them with the functions here, so the rules
are the same everywhere:

* ``root`` and ``shift`` may come as keywords or among the parameters (``q`` is the documents'
  name of the shift); two different values of one are refused;
* a root of an unrooted collective, a shift of another collective than the shift, and a
  value out of range for the node count are refused (:func:`collsim.core.placement.check_placement`);
* an algorithm that takes no ``root`` roots at node 0, one that takes no ``shift`` shifts by
  1: asking it for another is refused (or, among several algorithms, it is skipped with a note);
* each parameter is checked against the type its algorithm declares
  (:meth:`~collsim.algorithms.registry.AlgorithmSpec.check_params`);
* among several algorithms (:func:`place_all`), a parameter that none of them takes is refused,
  and so is a collective whose explicit schedules cannot fit in memory on this many nodes,
  before any algorithm's own checks run.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..core.collective import BYTES_PER_DELIVERY, canonical_collective, check_collective_memory
from ..core.errors import InputError, UnsupportedError
from ..core.limits import check_memory
from ..core.placement import check_placement
from ..core.system import System
from .registry import REGISTRY, AlgorithmSpec, get_algorithm
from .skip import Skip

__all__ = ["PLACED", "check_fits", "check_instance", "place", "place_all", "placement_params"]

PLACED = frozenset({"root", "shift", "q"})
"""Parameter names that are the collective's placement rather than one algorithm's choice."""


def _merge(key: str, a: Any, b: Any) -> Any:
    if a is not None and b is not None and a != b:
        raise InputError(f"two different values of {key}: {a!r} and {b!r}")
    return a if a is not None else b


def place(spec: AlgorithmSpec, coll: str, params: dict[str, Any] | None = None, *, root: Any = None,
          shift: Any = None, nodes: int | None = None) -> dict[str, Any]:
    """:func:`placement_params` with the algorithm's entry already looked up.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.
    coll : str
        Collective name or alias.
    params : dict, optional
        Parameters (``root``, ``shift``, ``q`` among them, or not).
    root, shift : int, optional
        The keywords.
    nodes : int, optional
        The system's node count: the root and shift are checked against it (None: later,
        when the collective is made).

    Returns
    -------
    dict
        See :func:`placement_params`.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).

    Examples
    --------
    >>> place(get_algorithm("binomial"), "broadcast", {"q": None, "root": 2}, nodes=4)
    {'root': 2}
    """
    coll = canonical_collective(coll)
    out = dict(params or {})
    root = _merge("root", root, out.pop("root", None))
    shift = _merge("shift", _merge("shift", shift, out.pop("q", None)), out.pop("shift", None))
    root, shift = check_placement(coll, nodes, root, shift)
    for key, value, default in (("root", root, 0), ("shift", shift, 1)):
        if value is None:
            continue
        if key in spec.params:
            out[key] = value
        elif value != default:
            takers = sorted(n for n, s in REGISTRY.items() if coll in s.collectives and key in s.params)
            raise UnsupportedError(f"{spec.name} takes no {key} (it always {'roots' if key == 'root' else 'shifts'} "
                                   f"{coll} {'at node' if key == 'root' else 'by'} {default}), so it cannot honour "
                                   f"{key} {value}; algorithms that take a {key} for {coll}: "
                                   f"{', '.join(takers) or 'none'}")
    spec.check_params({k: v for k, v in out.items() if k in spec.params})
    return out


def placement_params(name: str, collective: str, params: dict[str, Any] | None = None, *,
                     root: int | None = None, shift: int | None = None, nodes: int | None = None) -> dict[str, Any]:
    """An algorithm's parameters with the collective's root and shift applied, or a refusal.

    ``params`` may carry ``root``, ``shift`` or ``q`` (the documents' name of the shift) too;
    they mean the same as the keywords.  An algorithm that takes no ``root`` always roots
    the collective at node 0, one that takes no ``shift`` shifts by 1: asking such an
    algorithm for another root or shift is refused, never silently ignored.

    Parameters
    ----------
    name : str
        Algorithm name.
    collective : str
        Collective name.
    params : dict, optional
        Algorithm parameters (``-p key=value``).
    root : int, optional
        Root of broadcast, reduce, scatter or gather.
    shift : int, optional
        q of the circular shift.
    nodes : int, optional
        The system's node count N: a root outside ``0..N-1`` or a shift outside ``1..N-1`` is
        refused here, whatever the algorithm.

    Returns
    -------
    dict
        ``params`` without ``q``, plus ``root``/``shift`` for the algorithms that take them.

    Raises
    ------
    InputError
        For a root of an unrooted collective, a shift of another collective, a root or shift
        out of range, two different values of one, or a parameter of the wrong type.
    UnsupportedError
        If the algorithm cannot honour the root or shift (it would use 0, resp. 1).

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).

    Examples
    --------
    >>> placement_params("binomial", "broadcast", {"root": 3}), placement_params("ring", "broadcast", root=0)
    ({'root': 3}, {})
    >>> placement_params("direct", "shift", {"q": 3})
    {'shift': 3}
    >>> placement_params("ring", "broadcast", root=3)
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnsupportedError: ring takes no root (it always roots broadcast at node 0), so it cannot honour root 3; algorithms that take a root for broadcast: binomial, mesh, recursive-doubling, synth-matching,
    synth-trees
    >>> placement_params("ring", "broadcast", root=8, nodes=8)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: root must be a node id in 0..7 (the system has 8 nodes), got 8
    """
    return place(get_algorithm(name), canonical_collective(collective), params, root=root, shift=shift, nodes=nodes)


def check_instance(system: System, coll: str) -> None:
    """Refuse an instance that no algorithm can build in memory, before anything is built.

    Two floors, known from closed forms: every explicit schedule of the collective on this many
    nodes (:func:`collsim.core.collective.check_collective_memory`), and the network's link
    table, which every electrical algorithm's checks and routes read
    (:meth:`collsim.core.system.System.check_tables`).

    Parameters
    ----------
    system : System
        The system.
    coll : str
        Canonical collective name.

    Returns
    -------
    None

    Raises
    ------
    MemoryLimitError
        (an InputError) naming the estimate, the limit and what to reduce.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (every all-to-all broadcast delivers N - 1 blocks to each node).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> check_instance(load_system("mesh", dims=(4, 4)), "allgather")
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"COLLSIM_MEMORY_LIMIT": "1GiB"}):
    ...     check_instance(load_system("hypercube", nodes=2**24), "broadcast")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    collsim.core.limits.MemoryLimitError: the link table of a hypercube network with 16777216 vertices ...
    """
    check_collective_memory(coll, system.nodes)
    system.check_tables()


def check_fits(spec: AlgorithmSpec, system: System, coll: str, params: dict[str, Any]) -> None:
    """Refuse an algorithm whose schedule would not fit in memory, from its own closed form, before it is built.

    An algorithm that makes more chunk deliveries than the collective's floor declares how many
    (:attr:`AlgorithmSpec.deliveries`: recursive doubling's all-reduce, the hierarchical lanes);
    :func:`collsim.algorithms.build_logical` checks it before the builder runs, and
    :func:`collsim.experiments.compare.compare` before anything else is computed (the system's
    bound), so that what cannot fit is refused at once.

    Parameters
    ----------
    spec : AlgorithmSpec
        The algorithm.
    system : System
        The system.
    coll : str
        Canonical collective name.
    params : dict
        The algorithm's parameters.

    Returns
    -------
    None

    Raises
    ------
    MemoryLimitError
        (an InputError) naming the algorithm, the deliveries, the estimate and the limit.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (recursive doubling's all-reduce: log N rounds of N blocks each).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> check_fits(get_algorithm("recursive-doubling"), load_system("ring", nodes=8), "allreduce", {})
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"COLLSIM_MEMORY_LIMIT": "1GiB"}):
    ...     check_fits(get_algorithm("recursive-doubling"), load_system("ring", nodes=2**22), "allreduce", {})
    Traceback (most recent call last):
    ...
    collsim.core.limits.MemoryLimitError: recursive-doubling's allreduce on 4194304 nodes (9.23e+07 chunk deliveries) needs about 5.5 GiB, above collsim's memory limit of 1 GiB (COLLSIM_MEMORY_LIMIT=1GiB): use fewer nodes or another algorithm
    """
    made = spec.deliveries(system, coll, params) if spec.deliveries is not None else None
    if made is not None:  # more than the collective's floor: refused before the builder allocates them
        check_memory(made * BYTES_PER_DELIVERY, f"{spec.name}'s {coll} on {system.nodes} nodes ({made:.3g} chunk "
                     "deliveries)", "use fewer nodes or another algorithm")


def place_all(specs: Iterable[AlgorithmSpec], system: System, coll: str, params: dict[str, Any] | None = None, *,
              root: Any = None, shift: Any = None, strict: bool = False,
              what: str = "compared algorithm") -> tuple[dict[str, tuple[AlgorithmSpec, dict[str, Any]]], list[Skip]]:
    """Several algorithms' parameters placed on one system: who runs, with what, and who cannot.

    Parameters
    ----------
    specs : iterable of AlgorithmSpec
        The candidates, in order.
    system : System
        The system (its node count bounds the root and shift).
    coll : str
        Canonical collective name.
    params : dict, optional
        Parameters for all of them: each goes to the algorithms that take it.
    root, shift : int, optional
        As for :func:`placement_params`.
    strict : bool, optional
        Refuse (raise) when a candidate cannot run this instance or honour the root or
        shift, instead of skipping it with a note (algorithms named by the user).
    what : str, optional
        What the candidates are, for the refusal of a parameter none takes.

    Returns
    -------
    tuple
        ``(chosen, notes)``: name -> (entry, its parameters) of the candidates that run,
        and a :class:`~collsim.algorithms.skip.Skip` per candidate that cannot (without ``strict``).

    Raises
    ------
    InputError
        A root or shift that does not apply or is out of range, a parameter of the wrong
        type, or a parameter that no chosen candidate takes.
    MemoryLimitError
        (an InputError) If no explicit schedule of the collective on this many nodes can fit
        (:func:`collsim.core.collective.check_collective_memory`), before any candidate's own
        checks run (they may build the system's tables).
    UnsupportedError
        With ``strict``, the first candidate that cannot run or honour the root or shift.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> star = load_system("star", nodes=8)
    >>> chosen, notes = place_all([get_algorithm("ring"), get_algorithm("binomial")], star, "broadcast", root=3)
    >>> {name: p for name, (_, p) in chosen.items()}, str(notes[0]).split(" (")[0]
    ({'binomial': {'root': 3}}, 'ring takes no root')
    >>> place_all([get_algorithm("ring")], star, "allgather", {"colour": "red"})
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: no compared algorithm takes parameter(s) colour; it takes chunks, stripe
    """
    params = dict(params or {})
    check_placement(coll, system.nodes, _merge("root", root, params.get("root")),
                    _merge("shift", _merge("shift", shift, params.get("q")), params.get("shift")))
    check_instance(system, coll)  # nothing can fit: refused before any candidate's own checks
    chosen: dict[str, tuple[AlgorithmSpec, dict[str, Any]]] = {}
    notes: list[Skip] = []
    for spec in specs:
        try:
            spec.check(system, coll)
            chosen[spec.name] = (spec, place(spec, coll, params, root=root, shift=shift, nodes=system.nodes))
        except UnsupportedError as exc:
            if strict:
                raise
            notes.append(Skip(spec.name, str(exc)))
    unused = set(params) - PLACED - {p for spec, _ in chosen.values() for p in spec.params}
    if chosen and unused:
        taken = sorted({p for spec, _ in chosen.values() for p in spec.params} - PLACED)
        raise InputError(f"no {what} takes parameter(s) {', '.join(sorted(unused))}; "
                         + (f"{'it takes' if len(chosen) == 1 else 'they take'} {', '.join(taken)}" if taken
                            else f"{'it takes' if len(chosen) == 1 else 'they take'} none"))
    return chosen, notes

