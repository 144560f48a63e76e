"""Seed 001 §3 / Fig. 3: all-to-all throughput of ``mlfm`` versus ``pairwise`` on the MLFM test bed.

Set-up (§3): MLFM with d = 3 (6-port switches), 32 servers (the last layer has
two servers per leaf: ``MLFM(d=3, last_layer_servers=2)``); scales 12
``(n, l, m) = (2, 3, 2)``, 18 ``(3, 3, 2)``, 24-A ``(3, 4, 2)``, 24-B
``(2, 4, 3)``; 16, 64 and 256 MiB per node; link bandwidth 3770 MiB/s (the
paper's ping-pong QDR figure, taken as the optimal throughput).

Each scale is an ``MLFM(..., selection=(n, l, m))`` whose end nodes are the
selected servers in ``(i, j, k)`` lexicographic order.  ``mlfm`` is the paper's
rule (:mod:`collsim.algorithms.mlfm`); ``pairwise`` is the shift exchange
(rank ``r`` -> ``(r + p) mod N`` in phase ``p``) with ranks placed on the
servers in that same lexicographic order (the *naive* mapping; pass
``mapping=`` to change it).  Both are simulated by the flow simulator
(:func:`collsim.sim.simulate`, max-min fair sharing, bulk-synchronous phases
by default: Open MPI's pairwise does a blocking send-receive per phase).

Definitions
-----------
* "S MiB per node": the node's all-to-all send buffer is S MiB, i.e. N blocks
  of ``S / N`` bytes (MPI_Alltoall's ``sendcount * N``, own block included);
  ``size_bytes`` of the collective is that block.
* Per-node throughput = bytes each node sends to *other* nodes,
  ``(N - 1) * block``, divided by the simulated completion time.  A
  congestion-free schedule that keeps every node's link busy reaches the link
  bandwidth (the paper's "optimal throughput").
* Ratio = throughput(mlfm) / throughput(pairwise).  The paper's claim is
  **2.2x** for 24 servers pattern B (§3, Fig. 3); only that value is quoted
  from the paper, Fig. 3's bars are not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

import numpy as np

from ....core.errors import UnknownNameError

MIB = 1 << 20
LINK_MIB_PER_S = 3770.0
SIZES_MIB = (16, 64, 256)
SCALES: dict[str, tuple[int, int, int]] = {
    "12": (2, 3, 2), "18": (3, 3, 2), "24-A": (3, 4, 2), "24-B": (2, 4, 3)}
PAPER_RATIO = {"24-B": 2.2}
PAPER_CLAIM = "[MLFM16] §3: '2.2 times higher throughput improvement (24 servers pattern B)'"
PAIRWISE_ROUTINGS = {
    "spine-rule": "same-column traffic over the MLFM paper's spine {j, (j+k+1) mod l}, k the source's index on its "
                  "leaf (MLFM.next_hop, the mlfm algorithm's own rule)",
    "fixed-spine": "same-column traffic of column j over one spine {j, (j+1) mod l}, whatever the source or "
                   "destination (a fixed spine per column)",
    "destination": "same-column traffic to a server (., j, k) over spine {j, (j+1+(k mod (l-1))) mod l}: the spine "
                   "depends only on the destination, as in InfiniBand's destination-based forwarding tables",
}
"""How ``pairwise`` is routed between two leaves of one column (the paper does not say)."""


@dataclass(frozen=True)
class ThroughputRow:
    """One (scale, size) point of the experiment (built by :func:`run_point`)."""

    scale: str
    select: tuple[int, int, int]
    nodes: int
    size_mib_per_node: float
    block_bytes: int
    mlfm_time_s: float
    pairwise_time_s: float
    mlfm_mib_per_s: float
    pairwise_mib_per_s: float
    optimal_mib_per_s: float
    ratio: float
    paper_ratio: float | None
    mlfm_max_link_load: int
    pairwise_max_link_load: int

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict."""
        return asdict(self)


def mlfm_testbed(select: tuple[int, int, int], *, link_mib_per_s: float = LINK_MIB_PER_S,
            link_latency_s: float = 1e-6):
    """The §3 test bed (d = 3, 32 servers) restricted to a selection."""
    from ....kinds.network.mlfm import MLFM
    return MLFM.from_options(d=3, last_layer_servers=2, selection=tuple(select), name="mlfm-testbed",
                             link_bandwidth_bytes_per_s=link_mib_per_s * MIB, link_latency_s=link_latency_s)


def block_bytes(size_mib_per_node: float, nodes: int) -> int:
    """Per-pair block of a send buffer of ``size_mib_per_node`` MiB split in ``nodes`` blocks."""
    return max(1, int(size_mib_per_node * MIB) // nodes)


def per_node_throughput(block: int, nodes: int, time_s: float) -> float:
    """Per-node throughput."""
    return (nodes - 1) * block / time_s


def _require_tools():
    try:
        from ....algorithms import pairwise  # noqa: F401  (registers "pairwise")
        from ....sim import simulate
    except ImportError as exc:  # pragma: no cover - depends on other modules being present
        raise ImportError(f"the MLFM throughput experiment needs collsim.sim and the pairwise algorithm ({exc})")
    from ....algorithms import mlfm  # noqa: F401  (registers "mlfm")
    return simulate


def _pairwise(net, block: int, params: dict, routing: str):
    """``pairwise``'s schedule on the MLFM test bed, same-column traffic routed as :data:`PAIRWISE_ROUTINGS` says."""
    import dataclasses

    from ....algorithms import build_logical
    from ....pipeline import build, realize
    if routing == "spine-rule":
        return build("pairwise", net, "alltoall", block, **params)
    if routing not in PAIRWISE_ROUTINGS:
        raise UnknownNameError(f"unknown pairwise routing {routing!r}; known: {', '.join(PAIRWISE_ROUTINGS)}")
    logical, chosen = build_logical("pairwise", net, "alltoall", block, **params)
    leaf, k = net._node_leaf_k()
    cols, L = net.columns, net._default_L()
    sj, dj = leaf[logical.src] % cols, leaf[logical.dst] % cols
    same = (sj == dj) & (leaf[logical.src] != leaf[logical.dst])
    spine = (sj + 1) % L if routing == "fixed-spine" else (dj + 1 + k[logical.dst] % (L - 1)) % L
    via = np.where(same, spine, -1).astype(np.int64)
    return realize(net, dataclasses.replace(logical, via=via), algorithm="pairwise", params=chosen)


def run_point(scale: str, size_mib_per_node: float, *, mode: str = "bulk", mapping=None,
              verify_schedules: bool = True, link_mib_per_s: float = LINK_MIB_PER_S,
              link_latency_s: float = 1e-6, pairwise_routing: str = "spine-rule") -> ThroughputRow:
    """Simulate ``mlfm`` and ``pairwise`` for one scale and size."""
    from ....pipeline import build
    simulate = _require_tools()
    if scale not in SCALES:
        raise UnknownNameError(f"unknown scale {scale!r}; known: {', '.join(SCALES)}")
    sel = SCALES[scale]
    net = mlfm_testbed(sel, link_mib_per_s=link_mib_per_s, link_latency_s=link_latency_s)
    n = net.nodes
    block = block_bytes(size_mib_per_node, n)
    params = {} if mapping is None else {"mapping": list(mapping)}
    times, loads = {}, {}
    for alg in ("mlfm", "pairwise"):
        sched = build(alg, net, "alltoall", block) if alg == "mlfm" else _pairwise(net, block, params,
                                                                                   pairwise_routing)
        times[alg] = simulate(sched, mode=mode, check=verify_schedules).total_time_s
        loads[alg] = sched.max_link_load()
    thr = {a: per_node_throughput(block, n, t) / MIB for a, t in times.items()}
    return ThroughputRow(scale, sel, n, float(size_mib_per_node), block, times["mlfm"], times["pairwise"],
                         thr["mlfm"], thr["pairwise"], link_mib_per_s, thr["mlfm"] / thr["pairwise"],
                         PAPER_RATIO.get(scale), loads["mlfm"], loads["pairwise"])


def throughput_experiment(scales: Iterable[str] = tuple(SCALES), sizes_mib: Iterable[float] = SIZES_MIB,
                          **kw: Any) -> list[ThroughputRow]:
    """Run every (scale, size) point of Fig. 3."""
    return [run_point(sc, sz, **kw) for sc in scales for sz in sizes_mib]


def format_rows(rows: list[ThroughputRow]) -> str:
    """Markdown table of the experiment."""
    lines = ["| scale | (n, l, m) | MiB/node | mlfm MiB/s | pairwise MiB/s | optimal | ratio (ours) "
             "| ratio (paper) | max link load mlfm / pairwise |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        paper = f"{r.paper_ratio}" if r.paper_ratio is not None else "—"
        lines.append(f"| {r.scale} | {r.select} | {r.size_mib_per_node:g} | {r.mlfm_mib_per_s:.0f} "
                     f"| {r.pairwise_mib_per_s:.0f} | {r.optimal_mib_per_s:.0f} | {r.ratio:.2f} | {paper} "
                     f"| {r.mlfm_max_link_load} / {r.pairwise_max_link_load} |")
    return "\n".join(lines)


def pairwise_phase_loads(select: tuple[int, int, int], mapping=None) -> np.ndarray:
    """Max link load of each phase of ``pairwise`` on the test-bed selection (no simulation)."""
    from ....pipeline import build
    _require_tools()
    net = mlfm_testbed(select)
    params = {} if mapping is None else {"mapping": list(mapping)}
    sched = build("pairwise", net, "alltoall", 1, **params)
    keys, counts = sched.link_loads()
    out = np.zeros(sched.num_steps, dtype=np.int64)
    np.maximum.at(out, keys // len(net.links), counts)
    return out


__all__ = ["LINK_MIB_PER_S", "PAPER_CLAIM", "PAPER_RATIO", "SCALES", "SIZES_MIB", "ThroughputRow",
           "block_bytes", "format_rows", "pairwise_phase_loads", "per_node_throughput", "run_point",
           "mlfm_testbed", "throughput_experiment"]
