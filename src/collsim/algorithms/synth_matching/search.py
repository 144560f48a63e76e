"""The search over a matching's choices: pieces, capacity, seeds and, through switches, overlays.

Size-aware: :func:`best_plan` tries a grid of (pieces per block, pieces per step) and
seeds, skipping every choice whose lower bound (:func:`_pair_floors`) cannot beat the best
found, and keeps the smallest predicted time; :func:`_best_over` does the same over the
networks a plan can be made on (the network itself, or its circulant overlays).

References
----------
W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301,
2023 (greedy link-chunk matching over a time-expanded network).
"""

from __future__ import annotations

import numpy as np

from ...core.errors import InputError
from ...core.limits import check_memory
from .overlays import Overlay, by_name, dfs_order, overlay, shift_sets
from .step import Plan, _direct_links, _direct_plan, match

_SEEDS = 4
"""Seeded tie-break orders tried per (chunks, capacity) choice."""

_SEED_NODES = 256
"""Graphs of at most this many end nodes also try the other seeds on the best two choices."""

_WORK_CELLS = 3e9
"""Node x piece cells the default search may scan in all (the search narrows above it)."""

def _once(net, chunks: int, capacity: int, seed: int, block_bytes, *, reverse: bool = False,
          root: int | None = None, owners=None, stop_after_s: float = float("inf")) -> Plan | None:
    """One plan: the direct overlay's single step, else the matching (``owners(chunks)``: pieces' owners)."""
    own = None if owners is None else owners(chunks)
    if isinstance(net, Overlay) and net.direct:
        return _direct_plan(net, chunks, block_bytes, reverse=reverse, root=root, owners=own)
    return match(net, chunks, capacity, seed, block_bytes, reverse=reverse, root=root, owners=own,
                 stop_after_s=stop_after_s)


def _pair_floors(net, pairs, block_bytes, *, reverse: bool = False, root: int | None = None,
                 owners=None) -> list[float]:
    """A lower bound on :func:`match`'s predicted time for each ``(chunks, capacity)`` pair.

    A step costs at least the shortest latency plus the start-up and, for any node ``v``, the
    bytes ``v`` receives in it over the sum of its in-links' bandwidths; ``v`` needs at least
    ``ceil(pieces it lacks / pieces its in-links carry per step)`` steps.  So
    ``T >= need_v / inbw_v + steps_v (lat_min + startup)`` for every ``v``.
    """
    n = net.nodes
    src, dst, bw, lat = _direct_links(net)
    if reverse:
        src, dst = dst, src
    inbw = np.bincount(dst, weights=bw, minlength=n)
    step_s = float(lat.min()) + float(getattr(net, "startup_s", None) or 0.0)
    out = []
    for k, q in pairs:
        total = n * k if root is None else k
        sizes = (np.asarray(block_bytes(k), float) if callable(block_bytes) else np.full(total, block_bytes / k))
        if root is None:
            owner = np.repeat(np.arange(n), k) if owners is None else owners(k)
            own = np.bincount(owner, weights=sizes, minlength=n)
            need_bytes, need_pieces = sizes.sum() - own, total - np.bincount(owner, minlength=n)
        else:
            need_bytes, need_pieces = np.full(n, sizes.sum()), np.full(n, k)
            need_bytes[root] = need_pieces[root] = 0
        cap = np.minimum(np.maximum(1, np.floor(q * (bw / bw.min()) + 1e-9)), total)
        per_step = np.bincount(dst, weights=cap, minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            floor = need_bytes / inbw + np.ceil(need_pieces / per_step) * step_s
        out.append(float(np.max(np.where(need_pieces > 0, floor, 0.0))))
    return out


def _choices(n: int, degree: int, rooted: bool = False) -> list[tuple[int, int]]:
    """(chunks, capacity) pairs worth trying: fewer for big graphs, flooding always.

    A rooted collective (broadcast, reduce) pipelines one message: more, smaller pieces.
    """
    if rooted:
        out = [(k, q) for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) for q in (1, 2, 4) if q <= k]
        est = lambda k: n * k * (k + n) * degree  # noqa: E731  cells scanned
        return [(k, q) for k, q in out if est(k) <= _WORK_CELLS or k == 1]
    ks = [1, 2, 3, 4, 6, 8]
    out = [(k, q) for k in ks for q in (1, 2, 3, 4, 6, 8, 12, 16) if q <= 2 * k]
    out.append((1, n))  # flooding: as many steps as the graph's radius, for small messages
    est = lambda k, q=1: n * n * k * max(n * k / max(degree, 1) / q, 1) * degree  # noqa: E731  cells scanned
    keep = [(k, q) for k, q in out if est(k) <= _WORK_CELLS or (k, q) == (1, n)]
    # deep pipelines where they are cheap: a chain of one-way links fills in about one piece per hop
    keep[-1:-1] = [(k, q) for k in (12, 16, 24, 32, 48, 64) for q in (1, 2, 4) if est(k) <= _WORK_CELLS / 30]
    if len(keep) == 1:  # a huge graph: whole blocks, as many per step as the budget needs
        q = 2
        while q < n and est(1, q) > _WORK_CELLS:
            q *= 2
        keep.insert(0, (1, min(q, n)))
    return keep


def best_plan(system, block_bytes, *, chunks=None, capacity=None, seed=None,
              reverse: bool = False, root: int | None = None, owners=None) -> tuple[Plan, dict]:
    """The plan with the smallest predicted time over the choices not fixed by the caller.

    Parameters
    ----------
    system : Network
        The network.
    block_bytes : float or callable
        Bytes of one node's block.
    chunks, capacity, seed : int, optional
        Fix a choice instead of searching it.
    reverse : bool, optional
        Plan on the reversed links.
    root : int, optional
        Plan a broadcast from ``root`` (see :func:`match`).
    owners : callable, optional
        ``owners(chunks)``: the owner of each of the ``N * chunks`` pieces (see :func:`match`).

    Returns
    -------
    tuple
        ``(plan, {"chunks": k, "capacity": q, "seed": s})``.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> plan, chosen = best_plan(load_system("ring", nodes=4), 1024.0, chunks=1, capacity=1)
    >>> plan.steps, chosen["chunks"], chosen["capacity"]
    (2, 1, 1)
    """
    n = system.nodes
    src, _, _, _ = _direct_links(system)
    degree = int(np.bincount(src, minlength=n).max())
    pairs = _choices(n, degree, rooted=root is not None)
    if chunks is not None:
        pairs = sorted({(int(chunks), q if capacity is None else int(capacity)) for _, q in pairs}
                       | {(int(chunks), int(capacity) if capacity is not None else 1)})
    elif capacity is not None:
        pairs = sorted({(k, int(capacity)) for k, _ in pairs})
    for k, q in pairs:
        if k < 1 or q < 1:
            raise InputError(f"chunks and capacity must be at least 1, got chunks={k}, capacity={q}")
    top = max(k for k, _ in pairs)
    cells = n * top * (n if root is None else 1)
    check_memory(cells * 12.0 + cells * 8 * max(degree, 1) / max(n, 1),
                 f"synthesizing on {n} nodes with {top} pieces per node", "use fewer chunks or nodes")
    if isinstance(system, Overlay) and system.direct:  # one step whatever the choice: no search
        k = int(chunks) if chunks is not None else 1
        q = int(capacity) if capacity is not None else 1
        return (_once(system, k, q, 0, block_bytes, reverse=reverse, root=root, owners=owners),
                {"chunks": k, "capacity": q, "seed": 0 if seed is None else int(seed)})
    seeds = [0] if seed is None else [int(seed)]
    tried = []  # (time, k, q, seed, plan): every choice with the first seed, then more seeds on the best two
    floors = _pair_floors(system, pairs, block_bytes, reverse=reverse, root=root, owners=owners)
    keep = 2 if seed is None and n <= _SEED_NODES else 1  # the seeds below revisit the best two
    flood = [q >= (n * k if root is None else k) for k, q in pairs]  # last: its floor says little
    for _, floor, k, q in sorted(zip(flood, floors, *zip(*pairs))):
        times = sorted(t[0] for t in tried)
        limit = times[keep - 1] if len(times) >= keep else float("inf")
        if floor > limit:
            continue  # cannot be among the best ``keep``: skipping it changes no result
        plan = _once(system, k, q, seeds[0], block_bytes, reverse=reverse, root=root, owners=owners,
                     stop_after_s=limit)
        if plan is not None:  # None: already slower than the best ``keep`` when it gave up
            tried.append((plan.predicted_time_s, k, q, seeds[0], plan))
    if seed is None and n <= _SEED_NODES:  # more tie-break orders on the best two choices (small graphs)
        for _, k, q, _, _ in sorted(tried, key=lambda t: t[:4])[:2]:
            for s in range(1, _SEEDS):
                plan = _once(system, k, q, s, block_bytes, reverse=reverse, root=root, owners=owners)
                tried.append((plan.predicted_time_s, k, q, s, plan))
    t, k, q, s, plan = min(tried, key=lambda t: t[:4])
    best = (plan, {"chunks": k, "capacity": q, "seed": s})
    return best

def _networks(system, overlay_name: str | None) -> list[tuple[str | None, object]]:
    """What to plan on: the network itself (direct links), or its overlays (switches).

    Overlays follow the end nodes' numbering and, when it differs, their depth-first order
    over the network (name suffix ``/dfs``), so a badly numbered tree of switches still
    gets a ring that crosses each of its links once each way.
    """
    if system.vertices == system.nodes:
        if overlay_name is not None:
            raise InputError(f"synth-matching: overlay applies to networks with switches; this {system.kind} "
                             f"network joins its end nodes by direct links")
        return [(None, system)]
    n = system.nodes
    dfs = dfs_order(system)
    orders = [("", None)] + ([("/dfs", dfs)] if (dfs != np.arange(n)).any() else [])
    if overlay_name is not None:
        base, _, suffix = overlay_name.partition("/")
        if suffix not in ("", "dfs"):
            raise InputError(f"synth-matching: an overlay's order is the numbering or /dfs, got {overlay_name!r}")
        order = dfs if suffix else None
        return [(overlay_name, overlay(system, by_name(n, base), overlay_name, order))]
    return [(name + tag, overlay(system, shifts, name + tag, order)) for tag, order in orders
            for name, shifts in shift_sets(n)]


def _floor_s(net, block, *, reverse: bool = False, root: int | None = None) -> float:
    """A lower bound on any plan's predicted time on ``net`` (to skip overlays that cannot win).

    Every step costs at least the shortest link latency plus the start-up, there are at least
    as many steps as the overlay's diameter ``D`` (circulants are vertex-transitive: node 0's
    eccentricity is everybody's), and a node's pieces arrive no faster than the sum of its
    in-links' bandwidth: ``T >= need_v / inbw_v + D (lat_min + startup)``.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order
    n = net.nodes
    src, dst = net.links.src, net.links.dst
    if reverse:
        src, dst = dst, src
    g = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    order, pred = breadth_first_order(g, 0 if root is None else root, directed=True)
    depth = np.zeros(n, np.int64)
    for v in order[1:]:  # n BFS parents, once per overlay
        depth[v] = depth[pred[v]] + 1
    diameter = int(depth.max())
    inbw = np.bincount(dst, weights=net.links.bandwidth_bytes_per_s, minlength=n)
    if root is None:
        sizes = np.asarray(block(1), float) if callable(block) else np.full(n, float(block))
        need = sizes.sum() - sizes
    else:
        need = np.full(n, float(np.sum(block(1))))
        need[root] = 0.0
    with np.errstate(divide="ignore"):
        fill = float(np.max(np.where(need > 0, need / inbw, 0.0)))
    return fill + diameter * (float(net.links.latency_s.min()) + net.startup_s)


def _best_over(nets, block, *, reverse: bool = False, root: int | None = None, **kw) -> tuple[Plan, dict, object]:
    """The best plan over the candidate networks (smallest predicted time; first on a tie).

    Overlays are tried direct first (one step, no search), then by their floor
    (:func:`_floor_s`); one whose floor is not below the best time found is skipped.
    """
    ranked = sorted(nets, key=lambda item: (not (isinstance(item[1], Overlay) and item[1].direct),))
    best = None
    for name, net in ranked:
        if best is not None and name is not None and \
                _floor_s(net, block, reverse=reverse, root=root) >= best[0].predicted_time_s:
            continue
        plan, chosen = best_plan(net, block, reverse=reverse, root=root, **kw)
        if name is not None:
            chosen["overlay"] = name
        if best is None or plan.predicted_time_s < best[0].predicted_time_s:
            best = (plan, chosen, net)
    return best
