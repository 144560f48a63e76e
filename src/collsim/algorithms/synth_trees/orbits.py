"""``synth-trees`` as representatives: one root's pipelined trees, moved so that node 0 receives.

On a network with a translation group (:meth:`collsim.kinds.base.KindModel.symmetry_group`), the
packing prices root 0's trees alone and moves them to every root
(:mod:`~collsim.algorithms.synth_trees.translations`), and every root cuts its block and sends its
pieces alike, so the schedule is invariant under the group.  Its transfers into node 0 are root
0's deliveries, each moved by the element taking its receiver to node 0: a delivery ``u -> v`` of
root 0's piece ``c`` becomes ``u - v -> 0`` carrying root ``-v``'s piece ``c``, on the translated
path.  Deliveries that then share a round, a sender and a path travel as one transfer, as they do
in the whole schedule (:func:`~collsim.algorithms.synth_trees.pipeline.merge`).  So a network of
``N`` end nodes builds ``1 / N`` of the schedule's deliveries, and the cap on them
(:data:`~collsim.algorithms.synth_trees.plan.MAX_DELIVERIES`) leaves a block ``N`` times the pieces.

References
----------
L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024 (the packing); W. Burnside, *Theory of Groups of Finite Order*,
1911 (groups acting regularly).
"""

from __future__ import annotations

import numpy as np

from ...core.csr import INDEX, permute_csr
from ...core.schedule import LogicalSchedule
from ...kinds.network.routes import LinkRoutes
from .pipeline import Deliveries, merge, transfer_columns


def group_of(system):
    """The system's translation group if its kind accepts it, it acts regularly and it is the group
    the packing moves trees by (:meth:`~collsim.kinds.network.network.Network.symmetries`: the
    same permutation of every end node and link for each generator), else None.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> group_of(load_system("torus", dims=(3, 4))), group_of(load_system("mesh", dims=(3, 4)))
    (Translations(radices=(3, 4), moving=(True, True)), None)
    """
    from ...kinds import model_for
    model = model_for(system)
    group = model.symmetry_group(system)
    if group is None or not group.regular or not model.accepts_group(system, group):
        return None
    table = system.symmetries()
    n, lk = system.nodes, system.links
    if table is None or len(table) != n:
        return None
    ids = np.arange(len(lk.src), dtype=np.int64)
    every = LinkRoutes(np.arange(len(ids) + 1, dtype=INDEX), ids.astype(INDEX))
    for g in group.generators():
        if not np.array_equal(table[g, :n], group.act(g, np.arange(n))):
            return None
        moved = model.translate_routes(system, group, every, ids, np.full(len(ids), g)).route_links
        if not np.array_equal(moved, lk.index(table[g, lk.src], table[g, lk.dst])):
            return None
    return group


def _moved(system, group, plan: Deliveries, paths: list[np.ndarray], reverse: bool, per_anchor: int):
    """Root 0's deliveries ``plan`` moved so that each ends at node 0 (in the schedule's direction),
    merged: a :class:`Deliveries` and its paths (link ids)."""
    from ...kinds import model_for
    rnd, src, dst = plan.round, plan.src, plan.dst
    if reverse:
        rnd, src, dst = plan.rounds - 1 - rnd, dst, src
    elem = np.atleast_1d(group.inverse(dst)).astype(np.int64)
    new_src = group.act(elem, src)
    hops = np.array([len(p) for p in paths], INDEX)
    rptr, rlinks = permute_csr(hops, np.concatenate(paths).astype(INDEX), plan.path)
    moved = model_for(system).translate_routes(system, group, LinkRoutes(rptr, rlinks), np.arange(len(rnd)), elem)
    width = int(hops.max()) if len(hops) else 0
    table = np.full((len(rnd), max(width, 1)), -1, np.int64)
    per = np.diff(moved.route_ptr)
    table[np.repeat(np.arange(len(rnd)), per), np.arange(int(per.sum())) - np.repeat(moved.route_ptr[:-1], per)] = \
        moved.route_links
    keys, path_id = np.unique(table, axis=0, return_inverse=True)
    new_paths = [k[k >= 0] for k in keys]
    sizes = np.diff(plan.chunk_ptr)
    row = np.repeat(np.arange(len(rnd)), sizes)
    chunk = plan.chunk_idx.astype(np.int64)
    chunk = group.act(elem[row], chunk // per_anchor) * per_anchor + chunk % per_anchor
    out = merge(rnd[row], new_src[row], np.zeros(len(row), np.int64), path_id.ravel()[row], chunk, plan.rounds)
    return out, new_paths


def emit_representatives(system, group, plan: Deliveries, paths: list[np.ndarray], reverse: bool, offset: int,
                         per_anchor: int):
    """The transfers into node 0 (:func:`~collsim.algorithms.synth_trees.pipeline.transfer_columns`)."""
    d, new_paths = _moved(system, group, plan, paths, reverse, per_anchor)
    return transfer_columns(d.round, d.src, d.dst, d, new_paths, reverse, offset)


def expand(system, group, logical: LogicalSchedule) -> LogicalSchedule:
    """The whole schedule from representatives: every transfer moved by every element, round by round.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("synth-trees", "torus", "allgather", "64KiB", system_options={"dims": (2, 3)})
    >>> sorted(set(s.dst.tolist()))
    [0, 1, 2, 3, 4, 5]
    """
    from ...kinds import model_for
    n, t = group.order, len(logical.src)
    elems = group.elements()
    # every (element, representative) pair in round order, elements in turn within a round: the
    # representatives' order sorted stably by round, found before anything is moved
    order = np.argsort(np.tile(logical.round, n), kind="stable")
    rows, elem = order % t, elems[order // t]
    per_anchor = logical.collective.chunks // system.nodes
    lengths = np.diff(logical.chunk_ptr)
    cptr, cidx = permute_csr(lengths, logical.chunk_idx, rows)
    anchor, piece = np.divmod(cidx.astype(INDEX, copy=False), per_anchor)
    cidx = group.act(np.repeat(elem, lengths[rows]), anchor)
    cidx *= per_anchor
    cidx += piece
    routes = model_for(system).translate_routes(system, group, logical.routes, rows, elem)
    return LogicalSchedule(logical.collective, logical.round[rows], group.act(elem, logical.src[rows]),
                           group.act(elem, logical.dst[rows]), cptr, cidx, logical.reduce[rows],
                           routes=LinkRoutes(routes.route_ptr.astype(INDEX, copy=False),
                                             routes.route_links.astype(INDEX, copy=False)))


__all__ = ["emit_representatives", "expand", "group_of"]
