"""Registered algorithms, one module per family.

Importing this package registers every family.  :func:`build_logical` runs
one builder after checking that it applies.
"""

from __future__ import annotations

from typing import Any

from ..core.collective import canonical_collective
from ..core.errors import InputError
from ..core.schedule import LogicalSchedule
from ..core.system import System
from . import (  # noqa: F401  (registration)
    binomial, bruck, hierarchical, mlfm, neighbor_exchange, one_stage, optree, pairwise, rabenseifner,
    recursive_doubling, relay, ring, ring_alltoall, striped_ring, striped_stages, synth_alltoall, synth_matching,
    synth_trees,
    textbook_hypercube, textbook_mesh, textbook_ring, torus, wrht,
)
from . import ocs  # noqa: F401  (registration: the optical circuit switch's algorithms)
from .placement import check_fits, check_instance
from .registry import REGISTRY, AlgorithmSpec, get_algorithm, register


def build_logical(name: str | AlgorithmSpec, system: System, collective: str, size_bytes: int,
                  **params: Any) -> tuple[LogicalSchedule, dict[str, Any]]:
    """Check applicability and run an algorithm's builder.

    Parameters
    ----------
    name : str or AlgorithmSpec
        Algorithm name or alias, or its registry entry (looked up already).
    system : System
        Target system.
    collective : str
        Collective name or alias.
    size_bytes : int
        Message size.
    **params
        Algorithm parameters (see ``collsim algorithms``).

    Returns
    -------
    tuple
        ``(LogicalSchedule, chosen parameters)``.

    Raises
    ------
    UnknownNameError, UnsupportedError, InputError
        For an unknown name, an inapplicable instance, or a parameter the algorithm does not take
        or of another type than it declares (:meth:`AlgorithmSpec.check_params`).
    MemoryLimitError
        (an InputError) If no explicit schedule of the collective on this many nodes, or the
        network's link table, fits in memory (:func:`collsim.algorithms.placement.check_instance`),
        before anything is built.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: several algorithms per collective, each
    applicable to some instances.  Each algorithm cites its own source (``reference``
    of :class:`AlgorithmSpec`, ``collsim algorithms``).

    Examples
    --------
    >>> from collsim.kinds.optical_ring.system import OpticalRing
    >>> logical, chosen = build_logical("ne", OpticalRing(nodes=8), "all-gather", 1024)
    >>> logical.rounds, chosen
    (4, {})
    >>> build_logical("ne", OpticalRing(nodes=8), "allgather", 1024, chunks=2)
    Traceback (most recent call last):
    ...
    collsim.core.errors.InputError: ne takes no parameter(s) chunks; it takes stripe
    """
    spec = name if isinstance(name, AlgorithmSpec) else get_algorithm(name)
    coll = canonical_collective(collective)
    check_instance(system, coll)  # nothing can fit: refused before the checks build tables
    spec.check(system, coll)
    unknown = set(params) - set(spec.params)
    if unknown:
        raise InputError(f"{spec.name} takes no parameter(s) {', '.join(sorted(unknown))}"
                         + (f"; it takes {', '.join(spec.params)}" if spec.params else ""))
    spec.check_params(params)
    check_fits(spec, system, coll, params)  # more deliveries than the floor: refused before they are made
    return spec.builder(system, coll, size_bytes, **params)


__all__ = ["REGISTRY", "AlgorithmSpec", "build_logical", "get_algorithm", "register"]
