"""Rabenseifner's all-reduce: recursive-halving reduce-scatter + recursive-doubling all-gather.

With ``p' = 2**floor(log2 N)`` the vector is cut into ``p'`` chunks.  Reduce-
scatter, round ``k`` (distance doubling, vector halving): virtual rank ``v``
exchanges with ``v XOR 2**k`` and sends, to be reduced there, the chunks it
still holds whose bit ``k`` differs from ``v``'s — so after round ``k`` it owns
the chunks whose bits ``0..k`` equal its own, combined over its ``2**(k+1)``
sub-cube, and finally chunk ``v`` over everyone.  The all-gather retraces the
rounds backwards (distance halving, vector doubling), copying.  Other N use
MPICH's folding (as ``recursive-doubling`` all-reduce): the even ranks below
``2 rem`` hand their whole vector to the next odd rank first and get the
result back last.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .common import fold_ranks, is_pow2, ts_tw
from .latency import rounds_ts_s, xor_rounds
from .registry import register


def _requires(system, collective: CollectiveType):
    if collective.name == "reducescatter" and not is_pow2(system.nodes):
        return f"recursive-halving reduce-scatter needs a power-of-two node count, got {system.nodes}"
    return None


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    # t_s per round: the start-up plus the latency of every link of the round's farthest message
    _, tw = ts_tw(system)
    n, m = system.nodes, size_bytes
    if collective.name == "reducescatter":  # the chapter's all-to-all reduction: t_s log p + t_w m (p-1)
        return rounds_ts_s(system, xor_rounds(n)) + tw * m * (n - 1)
    rem, real = fold_ranks(n)
    p2 = len(real)
    rounds = 2 * xor_rounds(p2, real)                        # halving, then doubling: the same pairs
    t = rounds_ts_s(system, rounds) + 2 * tw * m * (p2 - 1) / p2   # 2 lg p a + 2 (p-1)/p n b
    if not rem:
        return t
    fold = [(2 * np.arange(rem), 2 * np.arange(rem) + 1), (2 * np.arange(rem) + 1, 2 * np.arange(rem))]
    return t + rounds_ts_s(system, fold) + 2 * tw * m      # + the two fold steps


def _orbits(system, collective: CollectiveType, size_bytes):
    """The transfers into node 0, under the XORs of the node ids' bits where the system's kind has them
    (:meth:`~collsim.kinds.base.KindModel.binary_group`): a power of two ``N``, no folding, and every
    exchange ``v -> v XOR 2^k`` with its chunks (chunk ``c`` of node ``c``'s block) commutes with
    ``v -> v XOR g``, so the schedule is its node 0's transfers moved by every ``g``.  Elsewhere None.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005, §4.4.
    """
    from ..kinds import model_for
    n = system.nodes
    if not is_pow2(n) or n < 2:
        return None
    group = model_for(system).binary_group(system)
    if group is None:
        return None
    return _build(n, collective, size_bytes, into=0), {}, group


@register(
    "rabenseifner", aliases=("reduce-scatter-allgather", "recursive-halving"),
    collectives=("allreduce", "reducescatter"), systems=("network",), requires=_requires,
    alpha_beta=_alpha_beta, constraints="all-reduce: any N (non-powers of two add MPICH's fold and unfold steps); "
                                        "reduce-scatter: N a power of two",
    reference="[Thakur05] §4.4 (Rabenseifner's algorithm: recursive-halving reduce-scatter then "
              "recursive-doubling all-gather, 2 lg p a + 2 (p-1)/p n b; non-powers of two by folding); "
              "[Rabenseifner04]; reduce-scatter alone is [Grama03]'s all-to-all reduction on a hypercube",
    summary="all-reduce as recursive-halving reduce-scatter + recursive-doubling all-gather, 2 log2 p rounds",
    orbits=_orbits, symmetry="xor",
)
def rabenseifner(system, collective: CollectiveType, size_bytes):
    """Build Rabenseifner's all-reduce.

    Parameters
    ----------
    system : Network
        Target network (a hypercube makes every exchange one hop).
    collective : CollectiveType
        ``"allreduce"``, or ``"reducescatter"`` (the recursive-halving half alone: seed
        002's all-to-all reduction on a hypercube, log p rounds, N a power of two).
    size_bytes : int
        The vector m (all-reduce) or each node's result block (reduce-scatter).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005, §4.4; R. Rabenseifner, "Optimization of
    collective reduction operations", ICCS 2004, LNCS 3036.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.hypercube import Hypercube
    >>> collsim.build("rabenseifner", Hypercube(nodes=8), "allreduce", "1KiB").num_steps
    6
    """
    return _build(system.nodes, collective, size_bytes), {}


def _build(n: int, collective: CollectiveType, size_bytes, into: int | None = None):
    """The schedule, or (``into``, N a power of two) only its transfers into node ``into``."""
    rem, real = fold_ranks(n)
    p2 = len(real)
    d = p2.bit_length() - 1
    explicit = into is None       # representatives: the explicit floor is the whole schedule's
    if collective.name == "reducescatter":  # power of two: chunk v is node v's block
        b = LogicalBuilder(make_collective("reducescatter", n, size_bytes, explicit=explicit))
        _halving(b, 0, d, p2, real, into)
        return b.build()
    b = LogicalBuilder(make_collective("allreduce", n, size_bytes, split=p2, explicit=explicit))
    allc = np.tile(np.arange(p2), (max(rem, 1), 1))
    r0 = 0
    if rem:
        b.add(0, 2 * np.arange(rem), 2 * np.arange(rem) + 1, allc[:rem], reduce=True)
        r0 = 1
    _halving(b, r0, d, p2, real, into)
    for j, k in enumerate(range(d - 1, -1, -1)):  # send what is complete: bits 0..k equal to v's
        w = 1 << k
        v = _senders(p2, w, into)
        free = np.arange(p2 >> (k + 1))
        chunks = (free[None, :] << (k + 1)) | (v[:, None] & (2 * w - 1))
        b.add(r0 + d + j, real[v], real[v ^ w], chunks)
    if rem:
        b.add(r0 + 2 * d, 2 * np.arange(rem) + 1, 2 * np.arange(rem), allc[:rem])
    return b.build()


def _senders(p2: int, w: int, into: int | None) -> np.ndarray:
    """The virtual ranks that send in a round of partner distance ``w``: all, or the one sending to ``into``."""
    return np.arange(p2) if into is None else np.array([into ^ w])


def _halving(b: LogicalBuilder, r0: int, d: int, p2: int, real: np.ndarray, into: int | None = None) -> None:
    """Recursive-halving reduce-scatter rounds ``r0 .. r0+d-1`` among the ranks ``real`` (``into``: only the
    transfers into that rank)."""
    for k in range(d):  # send chunks with bits 0..k-1 equal to v's and bit k different
        w = 1 << k
        v = _senders(p2, w, into)
        free = np.arange(p2 >> (k + 1))
        chunks = (free[None, :] << (k + 1)) | ((~v[:, None]) & w) | (v[:, None] & (w - 1))
        b.add(r0 + k, real[v], real[v ^ w], chunks, reduce=True)
