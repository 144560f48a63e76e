"""Pairwise (shift) all-to-all: N-1 phases, one block per node per phase.

Phase ``p`` (``1 <= p <= N-1``): rank ``r`` sends its block for rank
``(r + p) mod N`` straight to it (Open MPI's pairwise/shift exchange; seed 001
Fig. 1b), or, with ``exchange="xor"``, exchanges with rank ``r XOR p`` — the
textbook's optimal hypercube all-to-all personalized algorithm, congestion-free
under E-cube routing (N a power of two).

``mapping`` places ranks on nodes: rank ``r`` runs on node ``mapping[r]``
(None = identity).  The blocks are the collective's (node, node) blocks, so a
mapping changes only which nodes talk in which phase — the hook the MLFM
all-to-all uses to put ranks on servers.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import make_collective
from ..core.collectives import CollectiveType
from ..core.errors import InputError, UnsupportedError
from ..core.schedule import LogicalBuilder
from .common import is_pow2, ts_tw
from .latency import rounds_ts_s
from .registry import register

EXCHANGES = ("shift", "xor")


def rank_mapping(mapping, n: int) -> np.ndarray:
    """Validate a rank -> node permutation.

    References
    ----------
    T. Shimizu, M. Miwa, K. Nakashima, "Acceleration of All-to-all Communication on
    Multi-Layer Full Mesh, Low-cost Connectable Network Topology", SC16 poster, 2016,
    §3 (pairwise on the selected servers); S. H. Mirsadeghi, A. Afsahi,
    "Topology-aware rank reordering for MPI collectives", IPDPSW 2016 (why placement matters).
    """
    if mapping is None:
        return np.arange(n, dtype=np.int64)
    try:
        perm = np.asarray(list(mapping), dtype=np.int64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise InputError(f"mapping must be a sequence of node ids, got {mapping!r}") from exc
    if len(perm) != n or not np.array_equal(np.sort(perm), np.arange(n)):
        raise InputError(f"mapping must be a permutation of the {n} node ids 0..{n - 1}")
    return perm


def _alpha_beta(system, collective: CollectiveType, size_bytes, params):
    _, tw = ts_tw(system)
    n = system.nodes
    node = rank_mapping(params.get("mapping"), n)
    r = np.arange(n)
    rounds = [(node[r], node[(r + p) % n if params.get("exchange", "shift") == "shift" else r ^ p])
              for p in range(1, n)]
    return rounds_ts_s(system, rounds) + tw * size_bytes * (n - 1)  # (t_s + t_w m)(p-1), t_s with the hops


@register(
    "pairwise", aliases=("shift-exchange",), collectives=("alltoall",), systems=("network",),
    params=("exchange", "mapping"), alpha_beta=_alpha_beta,
    constraints="any N; exchange='xor' needs N a power of two; mapping a permutation of the nodes",
    reference="[MLFM16] Fig. 1b (pairwise/shift all-to-all, Open MPI); [Grama03] ch. 4, all-to-all "
              "personalized communication on a hypercube, optimal algorithm (ALL_TO_ALL_PERSONAL, partner "
              "i XOR j, (t_s + t_w m)(p-1)); [Thakur05] §5 (pairwise exchange)",
    summary="N-1 phases; phase p: rank r -> (r+p) mod N (shift) or r XOR p (xor)",
)
def pairwise(system, collective: CollectiveType, size_bytes, *, exchange: str = "shift", mapping=None):
    """Build the pairwise all-to-all.

    Parameters
    ----------
    system : Network
        Target network.
    collective : CollectiveType
        ``"alltoall"``.
    size_bytes : int
        Each (source, destination) block.
    exchange : {"shift", "xor"}, optional
        Partner of rank ``r`` in phase ``p``: ``(r + p) mod N`` (default) or ``r XOR p``.
    mapping : sequence of int, optional
        Rank -> node permutation: rank ``r`` is node ``mapping[r]`` (default identity).
        The schedule's params record it as a tuple.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``.

    Raises
    ------
    UnsupportedError
        ``exchange="xor"`` with N not a power of two.
    InputError
        Unknown exchange, or a mapping that is not a permutation.

    References
    ----------
    Seed 001 (MLFM), Fig. 1b; seed 002 (Grama et al.), all-to-all personalized
    communication on a hypercube, optimal algorithm; R. Thakur et al., IJHPCA 19(1),
    2005, §5.

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Star
    >>> collsim.build("pairwise", Star(nodes=5), "alltoall", "1KiB").num_steps
    4
    """
    n = system.nodes
    if exchange not in EXCHANGES:
        raise InputError(f"unknown exchange {exchange!r}; known: {', '.join(EXCHANGES)}")
    if exchange == "xor" and not is_pow2(n):
        raise UnsupportedError(f"pairwise exchange='xor' pairs r with r XOR p and needs a power-of-two "
                               f"node count, got {n}")
    node = rank_mapping(mapping, n)
    r = np.arange(n)
    b = LogicalBuilder(make_collective("alltoall", n, size_bytes))
    for p in range(1, n):
        partner = (r + p) % n if exchange == "shift" else r ^ p
        s, d = node[r], node[partner]
        b.add(p - 1, s, d, (s * n + d)[:, None])
    params = {"exchange": exchange}
    if mapping is not None:
        params["mapping"] = tuple(int(x) for x in node)
    return b.build(), params
