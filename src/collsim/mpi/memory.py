"""What a run on MPI ranks will hold in memory, refused before anything is allocated.

One check for every command that puts data on MPI ranks (``collsim mpi``, ``collsim validate``,
``collsim calibrate``): the caller estimates the bytes each rank will hold (:func:`rank_bytes` for a
schedule run by collsim's executor beside MPI's own collective; the caller's own sum for the
calibration's microbenchmarks) and calls :func:`check_job_memory`, which adds up the ranks that
share a host (``MPI_COMM_TYPE_SHARED``: ``mpiexec -n 4`` on one machine puts four copies in its
memory), takes the fullest host, and refuses it against collsim's memory limit
(:mod:`collsim.core.limits`: half of physical memory, or ``COLLSIM_MEMORY_LIMIT``) with the
estimate in the message.  Every rank takes the same decision, so that no rank is left waiting for
one that refused.  Nothing here allocates more than the schedule's own index arrays.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..core.limits import limit_error, memory_limit
from ..core.schedule import Schedule
from .buffers import layout
from .native import native_elems

__all__ = ["HINT", "check_job_memory", "check_schedules_memory", "rank_bytes", "run_label"]

HINT = "use smaller sizes, fewer ranks per host, or a larger COLLSIM_MEMORY_LIMIT if the machine has it"
"""What a refused run can change."""
VALUES_BYTES_PER_ELEMENT = 40
"""Bytes per element of the temporaries that compute a rank's input (:func:`collsim.mpi.buffers.values`:
the global indices, their ``uint64`` copy, the hash and its shift) and check its result (the reference's
indices and copy)."""
BYTES_PER_TRANSFER = 1024
"""A rank's plan per transfer it takes part in: a persistent MPI request, its buffer view, its step's lists."""


def _per_node(nodes: int, node: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.bincount(node, weights=weights, minlength=nodes)[:nodes] if node.size else np.zeros(nodes)


def _held(holdings, elems: np.ndarray, nodes: int) -> np.ndarray:
    """Elements of the chunks each node holds in a pre- or postcondition."""
    node, chunk = holdings.explicit()
    return _per_node(nodes, node, elems[chunk].astype(float)) + float(elems[holdings.every_chunks()].sum())


def rank_bytes(schedule: Schedule, dtype: Any = "int64") -> np.ndarray:
    """Bytes each rank holds to run a schedule with collsim's executor and check it against MPI's collective.

    An estimate on the upper side, from the schedule alone (nothing of the size is allocated): the
    rank's buffer and its starting copy (a slot for every chunk it holds, sends or receives), a
    staging buffer for every transfer it takes part in, MPI's own collective's input and output
    (:func:`collsim.mpi.native.native_elems`), the index list of its result, the temporaries that
    compute its input and check its result (:data:`VALUES_BYTES_PER_ELEMENT`) and its per-transfer
    plan (:data:`BYTES_PER_TRANSFER`).
    """
    s, c = schedule, schedule.collective
    lay = layout(c, dtype)
    n, item = c.nodes, lay.dtype.itemsize
    elems = lay.elems_of(np.arange(c.chunks, dtype=np.int64))
    counts = np.diff(s.chunk_ptr)
    per_transfer = (np.bincount(np.repeat(np.arange(len(s)), counts), weights=elems[s.chunk_idx],
                                minlength=len(s)) if s.chunk_idx.size else np.zeros(len(s)))
    pre, post = _held(c.pre, elems, n), _held(c.post, elems, n)
    every = np.union1d(c.pre.every_chunks(), c.post.every_chunks())
    (pre_node, pre_chunk), (post_node, post_chunk) = c.pre.explicit(), c.post.explicit()
    node = np.concatenate([np.repeat(s.src.astype(np.int64), counts), np.repeat(s.dst.astype(np.int64), counts),
                           pre_node, post_node])
    chunk = np.concatenate([s.chunk_idx.astype(np.int64), s.chunk_idx.astype(np.int64), pre_chunk, post_chunk])
    keep = ~np.isin(chunk, every)
    pairs = np.unique(node[keep] * c.chunks + chunk[keep])
    slots = _per_node(n, pairs // c.chunks, elems[pairs % c.chunks].astype(float)) + float(elems[every].sum())
    ends = np.concatenate([s.src, s.dst]).astype(np.int64)
    staged = _per_node(n, ends, np.concatenate([per_transfer, per_transfer]))
    taking_part = np.bincount(ends, minlength=n)[:n]
    native_in, native_out = native_elems(lay)
    temporaries = VALUES_BYTES_PER_ELEMENT * np.maximum(np.maximum(pre, post), native_in)
    return (item * (2 * slots + staged + native_in + native_out) + 8 * post + temporaries
            + BYTES_PER_TRANSFER * taking_part)


def check_job_memory(bytes_here: float, what: str, comm: Any = None, hint: str = HINT) -> None:
    """Refuse, on every rank alike, a run whose ranks on one host would hold more than collsim's memory limit.

    A collective call: every rank of ``comm`` calls it with its own estimate.
    """
    limit_bytes, source = memory_limit()
    if comm is None:
        facts = [(float(bytes_here), 1, limit_bytes, source)]
    else:
        from mpi4py import MPI
        host = comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            on_host, sharing = host.allreduce(float(bytes_here)), host.Get_size()
        finally:
            host.Free()
        facts = comm.allgather((on_host, sharing, limit_bytes, source))   # the same list on every rank
    total, sharing, limit_bytes, source = max(facts, key=lambda f: (f[0] / f[2], f[0]))
    if total > limit_bytes:
        ranks = f" ({sharing} of them on one host)" if sharing > 1 else ""
        raise limit_error(total, f"{what}{ranks}", hint, limit=(limit_bytes, source))


def run_label(schedule: Schedule, dtype: str) -> str:
    """What a run is, for messages: ``running ring allreduce of 64GiB (int64) on 2 MPI ranks``."""
    from ..core.units import format_size
    c = schedule.collective
    return f"running {schedule.algorithm} {c.name} of {format_size(c.size_bytes)} ({dtype}) on {c.nodes} MPI ranks"


def check_schedules_memory(schedules: Iterable[Schedule], dtype: str, comm: Any) -> None:
    """Refuse, before the first runs, a series of runs whose largest would not fit (collective call).

    Each schedule is estimated (:func:`rank_bytes`) and dropped, so a sweep's schedules need not all be
    held at once; this rank's largest estimate goes to :func:`check_job_memory`, named after the run
    whose rank holds the most (the same run on every rank).  A schedule whose node count is not the
    job's rank count is skipped: :func:`collsim.mpi.executor.run_schedule` refuses it, naming both.
    """
    rank, ranks = comm.Get_rank(), comm.Get_size()
    here, worst = 0.0, (-1.0, "")
    for sched in schedules:
        if sched.collective.nodes != ranks:
            continue
        need = rank_bytes(sched, dtype)
        here = max(here, float(need[rank]))
        worst = max(worst, (float(need.max()), run_label(sched, dtype)))
    if worst[1]:
        check_job_memory(here, worst[1], comm)
