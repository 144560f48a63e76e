"""Circuit configurations of an optical circuit switch with fewer ports than ``N - 1``.

A configuration gives every node at most ``p`` circuits out and ``p`` in
(:class:`~collsim.kinds.ocs.system.OCS`); synthesis plans on one of these candidates and holds it.

References
----------
M. Imase, M. Itoh, "A design for directed graphs with minimum diameter", IEEE Trans. Computers
C-32(8), 1983; S. M. Reddy, D. K. Pradhan, J. G. Kuhl, "Directed graphs with minimal diameter
and maximal connectivity", School of Engineering, Oakland University, 1980.
"""

from __future__ import annotations

import numpy as np


def circuit_ids(u, v, nodes: int) -> np.ndarray:
    """Link id of circuit ``u -> v`` in the OCS's complete digraph (``u (N-1) + v - [v > u]``)."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    return u * (nodes - 1) + v - (v > u)


def _circulant_reach(nodes: int, offsets: list[int]) -> np.ndarray:
    """Hops from node 0 to every node of the directed circulant with these offsets (BFS)."""
    hops = np.full(nodes, -1, np.int64)
    hops[0] = 0
    frontier = np.zeros(nodes, bool)
    frontier[0] = True
    h = 0
    while frontier.any():
        h += 1
        nxt = np.zeros(nodes, bool)
        for d in offsets:
            nxt |= np.roll(frontier, d)
        nxt &= hops < 0
        hops[nxt] = h
        frontier = nxt
    return hops


def _spread_offsets(nodes: int, ports: int) -> list[int]:
    """Offsets ``1 = d_1, d_2, ...``, each chosen greedily to shorten the circulant's distances most
    (the longest first, then their sum, then the smaller offset)."""
    offsets = [1]
    while len(offsets) < ports:
        best = None
        for d in range(2, nodes):
            if d in offsets:
                continue
            hops = _circulant_reach(nodes, offsets + [d])
            key = (int(hops.max()), int(hops.sum()), d)
            if best is None or key < best:
                best = key
        offsets.append(best[2])
    return offsets


def circuit_configurations(nodes: int, ports: int) -> tuple[tuple[str, np.ndarray], ...]:
    """Candidate configurations of ``p`` circuits per node each way, strongly connected.

    * ``circulant 1..p`` (``ring`` for one port): ``u -> u + 1, ..., u + p`` (mod N), every cut
      as wide as a ring's ``p`` times over;
    * ``circulant spread``: offsets chosen greedily for short distances;
    * ``Kautz-like``: Imase and Itoh's ``u -> -p u - i`` (mod N, ``i = 1..p``), diameter at most
      ``ceil(log_p N)``, close to the Moore bound;
    * ``de Bruijn-like``: Reddy, Pradhan and Kuhl's ``u -> p u + i`` (mod N, ``i = 0..p-1``).

    Self-circuits and repeats are dropped; a candidate that leaves some node more than ``p``
    circuits in, or is not strongly connected, or repeats an earlier one, is left out.

    References
    ----------
    M. Imase, M. Itoh, "A design for directed graphs with minimum diameter", IEEE Trans. Computers
    C-32(8), 1983; S. M. Reddy, D. K. Pradhan, J. G. Kuhl, "Directed graphs with minimal diameter
    and maximal connectivity", School of Engineering, Oakland University, 1980.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n, p = int(nodes), int(ports)
    u = np.repeat(np.arange(n), p)
    i = np.tile(np.arange(p), n)
    candidates = [("ring" if p == 1 else f"circulant 1..{p}", (u + i + 1) % n),
                  ("circulant spread", (u + np.asarray(_spread_offsets(n, p))[i]) % n),
                  ("Kautz-like", (-p * u - i - 1) % n),
                  ("de Bruijn-like", (p * u + i) % n)]
    out, seen = [], set()
    for name, v in candidates:
        keep = v != u
        pairs = np.unique(u[keep] * n + v[keep])
        src, dst = np.divmod(pairs, n)
        if np.bincount(dst, minlength=n).max() > p or np.bincount(src, minlength=n).max() > p:
            continue
        g = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
        if connected_components(g, directed=True, connection="strong")[0] != 1:
            continue
        ids = np.sort(circuit_ids(src, dst, n))
        if ids.tobytes() in seen:
            continue
        seen.add(ids.tobytes())
        out.append((name, ids))
    return tuple(out)
