"""Timing of the exact all-gather / reduce-scatter cut bound (collsim.kinds.network.exact_cut).

Run:  python benchmarks/exact_cut.py [--smoke]   (--smoke: the instances up to 100 vertices, one call each)

Prints, per instance, the bound for 1 GiB of total all-gather output (a block of GiB / N per
node), the certificate's size and the wall time of one :func:`allgather_certificate` call
(best of three, one CPU).  No targets are asserted; docs/derivations/lower-bounds.md quotes them.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from collsim.core.collective import make_collective
from collsim.kinds.network.exact_cut import allgather_certificate
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.mesh_torus import Mesh, Torus

GIB = 2 ** 30


def _thin_column(k: int, thin: float):
    """A k x k mesh of 50 GiB/s links whose links between columns k/3-1 and k/3 run at ``thin`` of that."""
    mesh = Mesh.from_dims((k, k), link_bandwidth_bytes_per_s=50 * GIB)
    lt, col = mesh.links, mesh.coords(np.arange(mesh.nodes))[:, 0]
    bw = lt.bandwidth_bytes_per_s.copy()
    a, b = col[lt.src], col[lt.dst]
    p = k // 3
    bw[((a == p - 1) & (b == p)) | ((a == p) & (b == p - 1))] *= thin
    links = SimpleNamespace(src=lt.src, dst=lt.dst, bandwidth_bytes_per_s=bw)
    return SimpleNamespace(nodes=mesh.nodes, vertices=mesh.vertices, links=links)


INSTANCES = {
    "mesh 5x5": lambda: Mesh.from_dims((5, 5), link_bandwidth_bytes_per_s=50 * GIB),
    "torus 3x3x3": lambda: Torus.from_dims((3, 3, 3), link_bandwidth_bytes_per_s=50 * GIB),
    "torus 10x10": lambda: Torus.from_dims((10, 10), link_bandwidth_bytes_per_s=100 * GIB),
    "mesh 32x32": lambda: Mesh.from_dims((32, 32), link_bandwidth_bytes_per_s=50 * GIB),
    "fat tree 1024 hosts": lambda: FatTree(nodes=1024, link_bandwidth_bytes_per_s=50 * GIB),
    "mesh 64x64": lambda: Mesh.from_dims((64, 64), link_bandwidth_bytes_per_s=50 * GIB),
    "torus 16x16x16": lambda: Torus.from_dims((16, 16, 16), link_bandwidth_bytes_per_s=50 * GIB),
    "mesh 64x64, one thin column (1 %)": lambda: _thin_column(64, 0.01),
}


def main(smoke: bool = False) -> None:
    """Time every instance, all-gather and reduce-scatter (smoke: the small ones, once)."""
    for name, make in INSTANCES.items():
        system = make()
        if smoke and system.vertices > 100:
            continue
        for kind in ("allgather", "reducescatter"):
            c = make_collective(kind, system.nodes, GIB // system.nodes)
            best = float("inf")
            for _ in range(1 if smoke else 3):
                t0 = time.perf_counter()
                cert = allgather_certificate(system, c)
                best = min(best, time.perf_counter() - t0)
            print(f"{name:36s} {kind:13s} V={system.vertices:5d}  bound {cert.bound_s * 1e3:9.4f} ms  "
                  f"|S| = {len(cert.side):5d} ({cert.end_nodes_inside} end nodes)  {best:7.3f} s")


if __name__ == "__main__":
    import sys
    main(smoke="--smoke" in sys.argv[1:])
