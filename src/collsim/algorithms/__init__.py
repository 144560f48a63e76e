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
    spec = name if isinstance(name, AlgorithmSpec) else get_algorithm(name)
    coll = collective_type(collective)
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
