"""Registered algorithms, one module per family.

Importing this package registers every family.  :func:`build_logical` runs
one builder after checking that it applies.
"""

from __future__ import annotations

from typing import Any

from ..core.collective import CollectiveType, collective_type
from ..core.errors import InputError
from ..core.schedule import LogicalSchedule
from ..core.system import System
from . import (  # noqa: F401  (registration)
    binomial,
    bruck,
    hierarchical,
    mlfm,
    neighbor_exchange,
    ocs,  # noqa: F401  (registration: the optical circuit switch's algorithms)
    one_stage,
    optree,
    pairwise,
    rabenseifner,
    recursive_doubling,
    rotated_dims,
    relay,
    ring,
    ring_alltoall,
    striped_ring,
    striped_stages,
    synth_alltoall,
    synth_matching,
    synth_trees,
    textbook_hypercube,
    textbook_mesh,
    textbook_ring,
    torus,
    wrht,
)
from .placement import check_fits, check_instance
from .registry import REGISTRY, AlgorithmSpec, get_algorithm, register
from .shared import shared_build


def build_logical(name: str | AlgorithmSpec, system: System, collective: str | CollectiveType,
                  size_bytes: int, **params: Any) -> tuple[LogicalSchedule, dict[str, Any]]:
    """Check applicability and run an algorithm's builder.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: several algorithms per collective, each
    applicable to some instances.  Each algorithm cites its own source (``reference``
    of :class:`AlgorithmSpec`, ``collsim algorithms``).
    """
    spec, coll = _checked(name, system, collective, params, explicit=True)
    check_fits(spec, system, coll, params)  # more deliveries than the floor: refused before they are made
    # another compared algorithm's base (collsim.algorithms.shared): built once for both
    return shared_build(spec.name, system, coll, size_bytes, params,
                        lambda: spec.builder(system, coll, size_bytes, **params))


def _checked(name, system, collective, params, *, explicit: bool) -> tuple[AlgorithmSpec, CollectiveType]:
    spec = name if isinstance(name, AlgorithmSpec) else get_algorithm(name)
    coll = collective_type(collective)
    if explicit:
        check_instance(system, coll)  # nothing explicit can fit: refused before the checks build tables
    else:
        system.check_tables()
    spec.check(system, coll)
    unknown = set(params) - set(spec.params)
    if unknown:
        raise InputError(f"{spec.name} takes no parameter(s) {', '.join(sorted(unknown))}"
                         + (f"; it takes {', '.join(spec.params)}" if spec.params else ""))
    spec.check_params(params)
    return spec, coll


def build_orbits(name: str | AlgorithmSpec, system: System, collective: str | CollectiveType,
                 size_bytes: int, *, group: Any = None, **params: Any) -> tuple[LogicalSchedule, dict[str, Any]] | None:
    """The transfers into node 0 of an algorithm's schedule, where it declares them symmetric.

    Checked as :func:`build_logical` checks, except the full schedule's deliveries: only the
    representatives are made (:mod:`collsim.core.symmetry`).

    Returns
    -------
    tuple or None
        ``(LogicalSchedule, params[, group[, interleaved]])`` of the representatives (the group
        when the algorithm names its own, a ring's rotations say), or None where the algorithm
        declares no symmetry for this instance.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> ls, _, group = build_orbits("ring", load_system("paper", nodes=8), "allgather", 1024)
    >>> ls.dst.tolist(), ls.src.tolist()
    ([0, 0, 0, 0, 0, 0, 0], [7, 7, 7, 7, 7, 7, 7])
    """
    spec, coll = _checked(name, system, collective, params, explicit=False)
    if spec.orbits is None:
        return None
    if group is not None:   # the data flow's own group (AlgorithmSpec.flow_group), not the system's
        return spec.orbits(system, coll, size_bytes, group=group, **params)
    return spec.orbits(system, coll, size_bytes, **params)


__all__ = ["REGISTRY", "AlgorithmSpec", "build_logical", "build_orbits", "get_algorithm", "register"]
