"""Seeded random networks of the classes users bring: the synthesizers' test and benchmark families.

Every generator returns a :class:`~collsim.kinds.network.custom.CustomNetwork` (end nodes first, then
switches) and is deterministic in its ``seed``.  Bandwidths are in bytes/s, latencies in
seconds.  :data:`FAMILIES` maps each class name to a generator of one random instance of it
from ``(rng, scale)``, ``scale`` 0 (smallest) to 2 (largest).

Examples
--------
>>> net = rail_boxes(2, gpus=8, rails=2)
>>> net.nodes, net.switches
(16, 4)
>>> sorted(FAMILIES)[:3]
['dragonfly', 'fat-tree-oversubscribed', 'hetero-mesh']
"""

from __future__ import annotations

import numpy as np

from ..kinds.network.custom import CustomNetwork

GB = 1e9
LATENCY_S = 1e-6


def _net(nodes: int, links, switches: int = 0, name: str = "") -> CustomNetwork:
    return CustomNetwork(nodes=nodes, switches=switches, link=tuple(links), name=name or None,
                         link_latency_s=LATENCY_S)


def hetero_mesh(rows: int, cols: int, ratio: float = 4.0, *, torus: bool = False,
                bandwidth_bytes_per_s: float = 50 * GB) -> CustomNetwork:
    """A ``rows x cols`` mesh (or torus) whose row links are ``ratio`` times faster than its column links."""
    links = []
    for r in range(rows):
        for c in range(cols):
            v = r * cols + c
            if c + 1 < cols or (torus and cols > 2):
                links.append((v, r * cols + (c + 1) % cols, bandwidth_bytes_per_s * ratio, LATENCY_S, True))
            if r + 1 < rows or (torus and rows > 2):
                links.append((v, ((r + 1) % rows) * cols + c, bandwidth_bytes_per_s, LATENCY_S, True))
    return _net(rows * cols, links, name=f"{'torus' if torus else 'mesh'} {rows}x{cols}, rows x{ratio:g}")


def random_regular(n: int, degree: int, seed: int = 0, *, bandwidth_bytes_per_s: float = 50 * GB) -> CustomNetwork:
    """A connected random ``degree``-regular graph on ``n`` end nodes (networkx; redrawn until connected)."""
    import networkx as nx
    for k in range(100):
        g = nx.random_regular_graph(degree, n, seed=seed * 1000 + k)
        if nx.is_connected(g):
            break
    return _net(n, [(int(a), int(b), bandwidth_bytes_per_s, LATENCY_S, True) for a, b in sorted(g.edges())],
                name=f"random {degree}-regular, {n} nodes")


def random_connected(n: int, seed: int = 0, *, extra: float = 1.0, spread: float = 4.0) -> CustomNetwork:
    """A random spanning tree plus ``extra x n`` random edges, bandwidths log-uniform over ``spread``."""
    rng = np.random.default_rng(seed)
    edges = {(int(rng.integers(0, v)), v) for v in range(1, n)}
    while len(edges) < n - 1 + int(extra * n) and len(edges) < n * (n - 1) // 2:
        a, b = sorted(int(x) for x in rng.choice(n, 2, replace=False))
        edges.add((a, b))
    bw = 50 * GB * spread ** rng.random(len(edges))
    return _net(n, [(a, b, float(w), LATENCY_S, True) for (a, b), w in zip(sorted(edges), bw)],
                name=f"random connected, {n} nodes")


def rail_boxes(boxes: int, *, gpus: int = 8, rails: int = 2, intra_bytes_per_s: float = 300 * GB,
               nic_bytes_per_s: float = 50 * GB) -> CustomNetwork:
    """``boxes`` boxes of ``gpus`` GPUs on a box switch (NVSwitch), GPU ``g`` on rail switch ``g mod rails``.

    Switches: one per box (``0..boxes-1`` after the end nodes), then the rails.
    """
    n = boxes * gpus
    links = []
    for b in range(boxes):
        for g in range(gpus):
            v = b * gpus + g
            links.append((v, n + b, intra_bytes_per_s, LATENCY_S, True))
            links.append((v, n + boxes + g % rails, nic_bytes_per_s, LATENCY_S, True))
    return _net(n, links, switches=boxes + rails, name=f"{boxes} boxes of {gpus}, {rails} rails")


def dragonfly(groups: int, routers: int, *, hosts: int = 2, local_bytes_per_s: float = 50 * GB,
              global_bytes_per_s: float = 25 * GB, host_bytes_per_s: float = 50 * GB) -> CustomNetwork:
    """A dragonfly: ``groups`` groups of ``routers`` all-to-all routers, ``hosts`` end nodes on each router,
    and one global link between every pair of groups (router ``(h mod routers)`` of each side).

    References
    ----------
    J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-driven, highly-scalable dragonfly
    topology", ISCA 2008.
    """
    n = groups * routers * hosts
    router = lambda g, r: n + g * routers + r  # noqa: E731
    links = []
    for g in range(groups):
        for r in range(routers):
            for h in range(hosts):
                links.append(((g * routers + r) * hosts + h, router(g, r), host_bytes_per_s, LATENCY_S, True))
            for r2 in range(r + 1, routers):
                links.append((router(g, r), router(g, r2), local_bytes_per_s, LATENCY_S, True))
    for g in range(groups):
        for g2 in range(g + 1, groups):
            links.append((router(g, g2 % routers), router(g2, g % routers), global_bytes_per_s, LATENCY_S, True))
    return _net(n, links, switches=groups * routers, name=f"dragonfly {groups}x{routers}x{hosts}")


def fat_tree_oversubscribed(leaves: int, hosts: int, spines: int, ratio: float = 2.0, *,
                            bandwidth_bytes_per_s: float = 50 * GB) -> CustomNetwork:
    """A leaf-spine whose uplinks carry ``1 / ratio`` of what the leaf's hosts can send."""
    n = leaves * hosts
    up = bandwidth_bytes_per_s * hosts / (spines * ratio)
    links = [(v, n + v // hosts, bandwidth_bytes_per_s, LATENCY_S, True) for v in range(n)]
    links += [(n + lf, n + leaves + s, up, LATENCY_S, True) for lf in range(leaves) for s in range(spines)]
    return _net(n, links, switches=leaves + spines, name=f"leaf-spine {leaves}x{hosts}, {ratio:g}:1")


def random_switched(n: int, switches: int, seed: int = 0, *, spread: float = 4.0) -> CustomNetwork:
    """End nodes on random switches of a random connected switch graph, bandwidths log-uniform over ``spread``."""
    rng = np.random.default_rng(seed)
    sw = [(n + int(rng.integers(0, s)), n + s) for s in range(1, switches)]
    sw += [(n + int(a), n + int(b)) for a, b in (sorted(rng.choice(switches, 2, replace=False))
                                                  for _ in range(switches // 2))]
    sw = sorted(set(sw))
    hosts = [(v, n + int(rng.integers(0, switches))) for v in range(n)]
    bw = 50 * GB * spread ** rng.random(len(sw) + n)
    return _net(n, [(a, b, float(w), LATENCY_S, True) for (a, b), w in zip(hosts + sw, bw)], switches=switches,
                name=f"random switched, {n} nodes, {switches} switches")


def one_way(n: int, seed: int = 0, *, chords: float = 1.0) -> CustomNetwork:
    """A one-way ring plus ``chords x n`` random one-way links (strongly connected), mixed bandwidths."""
    rng = np.random.default_rng(seed)
    arcs = {(v, (v + 1) % n) for v in range(n)}
    while len(arcs) < n + int(chords * n) and len(arcs) < n * (n - 1):
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        arcs.add((a, b))
    bw = 50 * GB * 4.0 ** rng.random(len(arcs))
    return _net(n, [(a, b, float(w), LATENCY_S, False) for (a, b), w in zip(sorted(arcs), bw)],
                name=f"one-way, {n} nodes")


def _mesh(rng, scale, torus):
    k = [(3, 4), (4, 6), (6, 8)][scale]
    return hetero_mesh(*k, ratio=float(rng.choice([1, 2, 4, 8])), torus=torus)


FAMILIES = {
    "hetero-mesh": lambda rng, scale: _mesh(rng, scale, False),
    "hetero-torus": lambda rng, scale: _mesh(rng, scale, True),
    "random-regular": lambda rng, scale: random_regular([12, 16, 32][scale], int(rng.choice([3, 4])),
                                                        int(rng.integers(1 << 30))),
    "random-connected": lambda rng, scale: random_connected([10, 16, 32][scale], int(rng.integers(1 << 30))),
    "rail-boxes": lambda rng, scale: rail_boxes([2, 4, 8][scale], rails=int(rng.choice([1, 2, 4, 8]))),
    "dragonfly": lambda rng, scale: dragonfly(int(rng.choice([3, 4, 5])), [2, 3, 4][scale], hosts=2),
    "fat-tree-oversubscribed": lambda rng, scale: fat_tree_oversubscribed([2, 4, 8][scale], 4, 2,
                                                                          float(rng.choice([1, 2, 4]))),
    "random-switched": lambda rng, scale: random_switched([8, 16, 32][scale], [3, 4, 8][scale],
                                                          int(rng.integers(1 << 30))),
    "one-way": lambda rng, scale: one_way([6, 12, 24][scale], int(rng.integers(1 << 30))),
}
"""Class name -> ``(numpy Generator, scale 0..2) -> CustomNetwork``."""
