"""Rank-ordered dependencies: the ``mode="rank"`` of :func:`collsim.sim.simulate`.

An MPI rank that replays a schedule step by step without barriers (post every
``MPI_Irecv``/``MPI_Isend`` of its step ``k``, then ``MPI_Waitall``) starts its
step ``k`` when *its own* transfers of earlier steps are done, not when every
transfer of step ``k - 1`` is.  With a rendezvous protocol a message moves once
both ends have posted it, so a transfer ``t`` of step ``k`` from ``a`` to ``b``
starts at

    s_t = max(0, max{ f_u : step u < k, u touches a or b })

(``u`` touches ``v`` when ``v`` is its source or its destination).  This is the
timing of collsim's own MPI executor (:mod:`collsim.mpi.executor`) and of the
replay program SMPI runs in the cross-check (:mod:`collsim.interop.simgrid_replay`).

Only the transfers of a node's *previous active step* are needed as
dependencies: a transfer of that step touching ``v`` itself started after every
earlier transfer touching ``v`` finished, and finishes no earlier than it
starts, so the maximum over all earlier steps is reached there.  The builder
groups the incidences (transfer, endpoint) by (node, step), links every
incidence to the previous group of its node, and removes duplicate edges (a
transfer from ``a`` to ``b`` in the previous step of both).  Edges: the sum over
nodes and consecutive active steps of the product of the two steps' degrees,
i.e. ``4 T`` for schedules where every node has one send and one receive per
step.

References
----------
A. Degomme, A. Legrand, G. S. Markomanolis, M. Quinson, M. Stillwell, F. Suter,
"Simulating MPI applications: the SMPI approach", IEEE TPDS 28(8), 2017 (eager and
rendezvous point-to-point semantics in a flow-level simulator).
"""

from __future__ import annotations

import numpy as np

from ..core.limits import check_memory
from ..core.schedule import Schedule

BYTES_PER_EDGE = 48
"""Peak bytes per dependency edge while they are built (edge pairs, keys, sort)."""


def rank_dependencies(schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dependencies of ``mode="rank"``: CSR ``(ptr, targets)`` by producing transfer, and in-degrees.

    References
    ----------
    A. Degomme et al., "Simulating MPI applications: the SMPI approach", IEEE TPDS 28(8),
    2017 (rendezvous point-to-point semantics: a message moves once both ends have posted it).
    """
    src = np.asarray(schedule.src, np.int64)
    dst = np.asarray(schedule.dst, np.int64)
    step = np.asarray(schedule.step, np.int64)
    n = len(src)
    if n == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    tr = np.concatenate([np.arange(n), np.arange(n)])
    node = np.concatenate([src, dst])
    stp = np.concatenate([step, step])
    order = np.lexsort((tr, stp, node))  # incidences by (node, step)
    tr, node, stp = tr[order], node[order], stp[order]
    new = np.ones(tr.size, bool)
    new[1:] = (node[1:] != node[:-1]) | (stp[1:] != stp[:-1])
    first = np.flatnonzero(new)  # start of each (node, step) group
    size = np.diff(np.append(first, tr.size))
    group = np.cumsum(new) - 1  # group of each incidence
    has_prev = np.zeros(first.size, bool)
    has_prev[1:] = node[first[1:]] == node[first[:-1]]  # the node's previous active step
    prev = np.where(has_prev, np.arange(first.size) - 1, -1)[group]
    cnt = np.where(prev >= 0, size[np.maximum(prev, 0)], 0)  # dependencies of each incidence
    total = int(cnt.sum())
    check_memory(total * BYTES_PER_EDGE, f"the rank-mode dependencies of {n} transfers ({total} edges)",
                 "use fewer nodes, or mode='bulk'")
    lo = first[np.maximum(prev, 0)]
    pos = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
    u, t = tr[pos], np.repeat(tr, cnt)
    key = np.sort(u * n + t)
    if key.size:
        key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    u, t = np.divmod(key, n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(u, minlength=n), out=ptr[1:])
    return ptr, t, np.bincount(t, minlength=n)
