"""Hierarchical collectives on multi-dimensional systems (:mod:`collsim.kinds.hierarchical.system`).

``hier-allreduce``, ``hier-allgather`` and ``hier-alltoall`` run direct stages (one round each,
every member of a group at once: bandwidth-optimal through a switch or a full mesh); ``md-ring``
runs ring stages (``k - 1`` rounds per dimension: bandwidth-optimal on rings).  All of them cut the
data into lanes over dimension orders and start rounds, with shares from a linear program
(:mod:`.hier_lanes`), so that the dimensions work at once.  docs/hierarchical.md.

References
----------
A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep learning in TensorFlow",
arXiv:1802.05799, 2018; M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect:
Decomposing all-reduce for deep learning on heterogeneous network hierarchy", IBM Journal of
Research and Development 63(6), 2019; S. Rashidi, S. Sridharan, S. Srinivasan, T. Krishna,
"ASTRA-SIM: Enabling SW/HW Co-Design Exploration for Distributed DL Training Platforms", ISPASS 2020;
S. Rashidi, W. Won, S. Srinivasan, S. Sridharan, T. Krishna, "Themis: A Network Bandwidth-Aware
Collective Scheduling Policy for Distributed Training of DL Models", ISCA 2022.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from ..core.collectives import CollectiveType
from ..core.errors import InputError
from ..core.limits import check_memory
from ..core.symmetry import Translations
from .hier_lanes import lane_deliveries, lanes_schedule, planned_time_s, representatives_bytes
from .registry import register

_REFS = ("[Sergeev18] (Horovod's hierarchical all-reduce: reduce-scatter in the box, all-reduce across, "
         "all-gather back); [Cho19] (BlueConnect: all-reduce decomposed over the hierarchy's dimensions); "
         "[Rashidi22] (Themis: chunks balanced across dimensions by bandwidth); the lanes and their linear "
         "program are collsim's own")


def _requires(system, collective: CollectiveType):
    if not hasattr(system, "dimensions"):
        return "needs a hierarchical system (dimensions)"
    return None


def _check(pieces, orders, units=None):
    if pieces is not None and (not isinstance(pieces, (int, np.integer)) or isinstance(pieces, bool)
                               or not 1 <= pieces <= 64):
        raise InputError(f"pieces must be an integer in 1..64, got {pieces!r}")
    if units is not None and (not isinstance(units, (int, np.integer)) or isinstance(units, bool) or units < 1):
        raise InputError(f"units must be a positive integer, got {units!r}")
    if orders not in ("all", "inner", "outer"):
        raise InputError(f"orders must be all, inner or outer, got {orders!r}")


def _planned(ring: bool):
    """The kind's closed form: the lane plan's time of the built schedule (:func:`planned_time_s`)."""
    return lambda system, collective, size_bytes, params: planned_time_s(system, collective, size_bytes, params,
                                                                         ring=ring)


def _tune(system, collective: CollectiveType, size_bytes):
    return [{"pieces": p, "orders": o} for p in (1, 2, 4, 8) for o in ("all", "inner")]


def _tune_ring(system, collective: CollectiveType, size_bytes):
    return [{"orders": o, "pieces": p} for o in ("all", "inner") for p in (1, 4)]


def _orbits(ring: bool):
    """The lanes' transfers into the domain of the system's translation group
    (:mod:`collsim.kinds.hierarchical.symmetry`): every stage moves data between coordinates by
    their differences (a ring step, or every member at once), so translating coordinates maps the
    schedule onto itself, with an all-reduce's chunk ``u N + b`` (unit ``u`` of block ``b``) moving
    with its block (``interleaved``).  A direct stage sends to every member at once, so any
    digit-wise translation of a coordinate keeps it (a full fat tree's pods, edges and ports); a
    ring stage's ``c -> c + 1`` commutes only with translations of whole coordinates, so md-ring
    declares that subgroup (``cyclic``).  An all-to-all's blocks belong to pairs, not anchors: ``hier-alltoall``
    declares none."""
    def orbits(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, orders: str = "all",
               units: int | None = None, group=None):
        # ``group``: the data flow's own (_coordinate_rotations), given where the system lacks it
        from ..kinds import model_for
        _check(pieces, orders, units)
        if group is None:
            group = model_for(system).symmetry_group(system, cyclic=ring) if not collective.per_pair else None
        if group is None or collective.name == "allreduce" and int(size_bytes) % system.nodes:
            return None    # (a vector that does not divide among the nodes: blocks, hence chunks, differ)
        whose = "md-ring's" if ring else "the hierarchical lanes'"
        check_memory(representatives_bytes(system, collective, {"units": units, "pieces": pieces}, group.order, ring),
                     f"building {whose} {collective.name} representatives "
                     f"on {system.nodes} nodes (1/{group.order} of the moves and of the deliveries)",
                     "use fewer nodes")
        logical, params = lanes_schedule(system, collective, size_bytes, pieces=pieces, orders=orders, ring=ring,
                                         units=units, group=group)
        return logical, params, group if ring else None, collective.name == "allreduce"
    return orbits


def _hier(collective_names, summary, name, *, symmetric: bool = True):
    # an all-to-all's blocks belong to (source, destination) pairs, not to anchors that a translation
    # carries along (_orbits): hier-alltoall declares no orbits, so nothing tries them and fails
    def deco(fn):
        return register(name, collectives=collective_names, systems=("hierarchical",),
                        params=("pieces", "orders", "units"), closed_forms={"hierarchical": _planned(False)},
                        requires=_requires, constraints="a hierarchical system", tune=_tune, reference=_REFS,
                        summary=summary, deliveries=lane_deliveries,
                        orbits=_orbits(False) if symmetric else None)(fn)
    return deco


@_hier(("allreduce",), "reduce-scatter per dimension, then all-gather back, pipelined lanes over "
       "dimension orders (an LP balances the dimensions)", "hier-allreduce")
def hier_allreduce(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, orders: str = "all",
                   units: int | None = None):
    """Hierarchical all-reduce: direct reduce-scatter in each dimension, all-gather back, pipelined.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : CollectiveType
        ``"allreduce"``.
    size_bytes : int
        The vector.
    pieces : int, optional
        Pipeline depth (lanes start at rounds ``0 .. pieces-1``); default: chosen by the plan
        (:func:`~collsim.algorithms.hier_lanes.lanes_schedule`).
    orders : str, optional
        ``"all"`` (every dimension order, the LP choosing shares; default), ``"inner"`` (inner
        dimension first: Horovod's order) or ``"outer"``.
    units : int, optional
        Units the data is cut into, shared among the lanes (default 64 per piece; fewer give fewer,
        larger chunks, e.g. for an MSCCL export).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep learning in TensorFlow",
    arXiv:1802.05799, 2018; M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect:
    Decomposing all-reduce for deep learning on heterogeneous network hierarchy", IBM Journal of
    Research and Development 63(6), 2019; S. Rashidi et al., "Themis", ISCA 2022.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("hier-allreduce", "hierarchical", "allreduce", "1MiB", nodes=8)
    >>> collsim.verify(s).steps, s.params["pieces"]          # 4 stages, pieces chosen by the plan
    (4, 1)
    >>> collsim.build("hier-allreduce", "hierarchical", "allreduce", "1MiB", nodes=8, pieces=4).num_steps
    7
    """
    _check(pieces, orders, units)
    return lanes_schedule(system, collective, size_bytes, pieces=pieces, orders=orders, ring=False, units=units)


@_hier(("allgather",), "all-gather one dimension at a time, pipelined lanes over dimension orders",
       "hier-allgather")
def hier_allgather(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, orders: str = "all",
                   units: int | None = None):
    """Hierarchical all-gather: direct all-gather in each dimension in turn, pipelined lanes.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : CollectiveType
        ``"allgather"``.
    size_bytes : int
        Each node's block.
    pieces : int, optional
        Pipeline depth (default: chosen by the plan).
    orders, units : optional
        As for :func:`hier_allreduce`.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    M. Cho et al., "BlueConnect", IBM J. R&D 63(6), 2019; S. Rashidi et al., "Themis", ISCA 2022.

    Examples
    --------
    >>> import collsim
    >>> collsim.verify(collsim.build("hier-allgather", "hierarchical", "allgather", 4096, nodes=8)).steps
    2
    """
    _check(pieces, orders, units)
    return lanes_schedule(system, collective, size_bytes, pieces=pieces, orders=orders, ring=False, units=units)


@_hier(("alltoall",), "all-to-all routed one dimension at a time (each block to its destination's "
       "coordinate), lanes over dimension orders", "hier-alltoall", symmetric=False)
def hier_alltoall(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, orders: str = "all",
                   units: int | None = None):
    """Hierarchical all-to-all: every block moves to its destination's coordinate, one dimension at a time.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : CollectiveType
        ``"alltoall"``.
    size_bytes : int
        Each pair's block.
    pieces : int, optional
        Pipeline depth (default: chosen by the plan).
    orders, units : optional
        As for :func:`hier_allreduce`.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    M. Cho et al., "BlueConnect", IBM J. R&D 63(6), 2019 (per-dimension decomposition);
    S. Rashidi et al., "Themis", ISCA 2022.

    Examples
    --------
    >>> import collsim
    >>> collsim.verify(collsim.build("hier-alltoall", "hierarchical", "alltoall", 4096, nodes=8)).steps
    2
    """
    _check(pieces, orders, units)
    return lanes_schedule(system, collective, size_bytes, pieces=pieces, orders=orders, ring=False, units=units)


def _coordinate_rotations(system, collective: CollectiveType):
    # md-ring's ring stages (c -> c + 1, and c -> c - 1 in the other lanes) commute with translating
    # whole coordinates, whatever the links of a dimension (a fat tree's are not translated so):
    # the regular group of the coordinates, in the nodes' numbering (the innermost digit last)
    return None if collective.per_pair else Translations(tuple(reversed(system.sizes)))


def _md_ring_register(fn):
    return register("md-ring", collectives=("allreduce", "allgather"), systems=("hierarchical",),
                    closed_forms={"hierarchical": _planned(True)},
                    params=("pieces", "orders", "units"), requires=_requires, constraints="a hierarchical system",
                    tune=_tune_ring, deliveries=partial(lane_deliveries, ring=True), orbits=_orbits(True),
                    flow_group=_coordinate_rotations, reference="[Cho19] (ring reduce-scatter and all-gather per dimension); "
                    "[Rashidi20] (ASTRA-sim's multi-dimensional ring); [Patarasuk09] (the ring)",
                    summary="multi-dimensional ring: ring reduce-scatter (all-gather) one dimension at a time, "
                            "lanes over dimension orders and ring directions")(fn)


@_md_ring_register
def md_ring(system, collective: CollectiveType, size_bytes, *, pieces: int | None = None, orders: str = "all",
                   units: int | None = None):
    """Multi-dimensional ring: ring stages (``k - 1`` rounds each) one dimension after another.

    Parameters
    ----------
    system : Hierarchical
        The system.
    collective : CollectiveType
        ``"allreduce"`` or ``"allgather"``.
    size_bytes : int
        The vector (all-reduce) or each node's block.
    pieces : int, optional
        Pipeline depth (default: chosen by the plan).
    orders : str, optional
        ``"all"`` (default: every order, and each ring both ways where its links are separate, the LP
        choosing shares), ``"inner"`` or ``"outer"``.
    units : int, optional
        As for :func:`hier_allreduce`.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    S. Rashidi, S. Sridharan, S. Srinivasan, T. Krishna, "ASTRA-SIM: Enabling SW/HW Co-Design
    Exploration for Distributed DL Training Platforms", ISPASS 2020; P. Patarasuk, X. Yuan,
    "Bandwidth Optimal All-reduce Algorithms for Clusters of Workstations", JPDC 69(2), 2009.

    Examples
    --------
    >>> import collsim
    >>> collsim.verify(collsim.build("md-ring", "hierarchical", "allreduce", 4096, nodes=8)).steps
    8
    """
    _check(pieces, orders, units)
    return lanes_schedule(system, collective, size_bytes, pieces=pieces, orders=orders, ring=True, units=units)
