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

from ..core.collective import (
    BYTES_PER_DELIVERY,
    CollectiveType,
    canonical_collective,
    check_collective_memory,
)
from ..core.errors import InputError, UnsupportedError
from ..core.limits import check_memory
from ..core.placement import check_placement
from ..core.schedule import realised_floor_bytes
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

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).
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


def placement_params(name: str, collective: str | CollectiveType, params: dict[str, Any] | None = None, *,
                     root: int | None = None, shift: int | None = None, nodes: int | None = None) -> dict[str, Any]:
    """An algorithm's parameters with the collective's root and shift applied, or a refusal.

    ``params`` may carry ``root``, ``shift`` or ``q`` (the documents' name of the shift) too;
    they mean the same as the keywords.  An algorithm that takes no ``root`` always roots
    the collective at node 0, one that takes no ``shift`` shifts by 1: asking such an
    algorithm for another root or shift is refused, never silently ignored.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).
    """
    return place(get_algorithm(name), canonical_collective(collective), params, root=root, shift=shift, nodes=nodes)


def check_instance(system: System, coll: str | CollectiveType) -> None:
    """Refuse an instance that no algorithm can build in memory, before anything is built.

    Two floors, known from closed forms: every explicit schedule of the collective on this many
    nodes (:func:`collsim.core.collective.check_collective_memory`), and the network's link
    table, which every electrical algorithm's checks and routes read
    (:meth:`collsim.core.system.System.check_tables`).

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (every all-to-all broadcast delivers N - 1 blocks to each node).
    """
    check_collective_memory(coll, system.nodes)
    system.check_tables()


def check_fits(spec: AlgorithmSpec, system: System, coll: CollectiveType, params: dict[str, Any], *,
               orbits: bool = False) -> None:
    """Refuse an algorithm whose schedule would not fit in memory, from its own closed form, before it is built.

    An algorithm that makes more chunk deliveries than the collective's floor declares how many
    (:attr:`AlgorithmSpec.deliveries`: recursive doubling's all-reduce, the hierarchical lanes);
    :func:`collsim.algorithms.build_logical` checks it before the builder runs, and
    :func:`collsim.experiments.compare.compare` before anything else is computed (the system's
    bound), so that what cannot fit is refused at once.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (recursive doubling's all-reduce: log N rounds of N blocks each).

    ``orbits``: the caller builds an algorithm that declares its symmetry on its orbits where the
    system has a translation group (``collsim compare``), so a ``1 / order`` share is checked.

    An algorithm that declares its transfers (:attr:`AlgorithmSpec.transfers`) is refused too
    where realising them could not fit (:func:`collsim.core.schedule.realised_floor_bytes`).
    """
    made = spec.deliveries(system, coll, params) if spec.deliveries is not None else None
    moved = spec.transfers(system, coll, params) if spec.transfers is not None else None
    share = 1
    if (made is not None or moved is not None) and orbits and spec.orbits is not None:
        # the caller builds it on its orbits where it can (collsim.pipeline.build_compact): a share
        # of the deliveries per element of the system's group; built in full, it is checked in full
        group = spec.group_on(system)
        if group is not None:
            share = group.order
    share_of = f", 1/{share} of them: its orbits' share" if share > 1 else ""
    if made is not None:  # more than the collective's floor: refused before the builder allocates them
        whole, made = made, -(-made // share)
        check_memory(made * BYTES_PER_DELIVERY, f"{spec.name}'s {coll.name} on {system.nodes} nodes ({whole:.3g} chunk "
                     f"deliveries{share_of})", "use fewer nodes or another algorithm")
    if moved is not None:  # every transfer carries a chunk at least; realising holds both copies and the routes
        whole, moved = moved, -(-moved // share)
        need = realised_floor_bytes(moved, max(moved, made or 0))
        check_memory(need, f"{spec.name}'s {coll.name} on {system.nodes} nodes ({whole:.3g} transfers realised"
                     f"{share_of})", "use fewer nodes or another algorithm")


def place_all(specs: Iterable[AlgorithmSpec], system: System, coll: str, params: dict[str, Any] | None = None, *,
              root: Any = None, shift: Any = None, strict: bool = False,
              what: str = "compared algorithm") -> tuple[dict[str, tuple[AlgorithmSpec, dict[str, Any]]], list[Skip]]:
    """Several algorithms' parameters placed on one system: who runs, with what, and who cannot.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (the rooted operations and the circular shift); R. Thakur,
    R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in MPICH",
    IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).
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

