"""Synthesized all-gather, reduce-scatter and all-reduce: link-chunk matching over time.

The synthesizer builds an explicit schedule from the network's graph alone, in the
spirit of TACOS's greedy link-chunk matching over a time-expanded network [TACOS23]:

* each node's block is cut into ``chunks`` pieces; a link may carry up to
  ``capacity`` pieces per step, scaled by its bandwidth relative to the slowest
  link, so that every link's step takes about the same time;
* step by step, every link ``u -> v`` picks pieces that ``u`` holds and ``v`` lacks
  and that no other link brings to ``v`` in that step, rarest piece first (fewest
  holders), ties broken by a seeded permutation; the pieces it picks travel as one
  transfer, so within a step every link carries at most one flow and the flow
  simulator's time equals the synthesizer's prediction;
* several seeds and piece/capacity choices are tried and the schedule with the
  smallest predicted time is kept (size-aware: a small message takes few pieces
  and unlimited capacity, i.e. flooding in as many steps as the graph's radius).

Reduce-scatter is the time-reversed all-gather on the reversed graph: every
piece's dissemination tree is an arborescence, so reversing it combines each
contribution exactly once on its way to the owner.  All-reduce is reduce-scatter
followed by all-gather.

Only links between end nodes are used: a graph whose end nodes are joined through
switches is refused (``requires``), see docs/synthesis.md.

References
----------
W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301,
2023 (greedy link-chunk matching over a time-expanded network).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.collective import make_collective
from ..core.errors import InputError
from ..core.limits import check_memory
from ..core.schedule import LogicalBuilder
from .common import check_root
from .registry import register
from .synth_overlay import Overlay, by_name, dfs_order, overlay, shift_sets

_SEEDS = 4
"""Seeded tie-break orders tried per (chunks, capacity) choice."""

_SEED_NODES = 256
"""Graphs of at most this many end nodes also try the other seeds on the best two choices."""

_WORK_CELLS = 3e9
"""Node x piece cells the default search may scan in all (the search narrows above it)."""


@dataclass(frozen=True)
class Plan:
    """An all-gather found by the matching: who sends which pieces to whom in each step.

    Parameters
    ----------
    step, src, dst : numpy.ndarray
        Step, sender and receiver of every piece delivery (one row per piece).
    piece : numpy.ndarray
        Piece id ``owner * chunks + j``.
    steps : int
        Number of steps.
    predicted_time_s : float
        Sum over steps of the slowest link's time (bytes over bandwidth plus latency
        and start-up).

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> p = match(load_system("ring", nodes=3), 1, 1, 0, 1e6)
    >>> p.steps, sorted(p.piece.tolist())
    (1, [0, 0, 1, 1, 2, 2])
    """

    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    piece: np.ndarray
    steps: int
    predicted_time_s: float


def _direct_links(system):
    """End-node-to-end-node links: (src, dst, bandwidth, latency)."""
    lk = system.links
    n = system.nodes
    keep = (lk.src < n) & (lk.dst < n) & (lk.bandwidth_bytes_per_s > 0)
    return lk.src[keep], lk.dst[keep], lk.bandwidth_bytes_per_s[keep], lk.latency_s[keep]


def _unreachable(system) -> str | None:
    """Why some end node cannot reach, or be reached from, node 0 over the network's links, or None."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import breadth_first_order
    lk = system.links
    keep = lk.bandwidth_bytes_per_s > 0
    v, n = system.vertices, system.nodes
    g = coo_matrix((np.ones(int(keep.sum())), (lk.src[keep], lk.dst[keep])), shape=(v, v)).tocsr()
    for graph, word in ((g, "from"), (g.T.tocsr(), "to")):
        seen = np.zeros(v, bool)
        seen[breadth_first_order(graph, 0, directed=True, return_predecessors=False)] = True
        if not seen[:n].all():
            bad = np.flatnonzero(~seen[:n])
            names = ", ".join(str(x) for x in bad[:8]) + (" ..." if len(bad) > 8 else "")
            return (f"node(s) {names} cannot be reached from node 0" if word == "from"
                    else f"node(s) {names} cannot reach node 0")
    return None


def requires(system, collective) -> str | None:
    """Why the matching cannot run here: end nodes not strongly connected.

    Parameters
    ----------
    system : Network
        The network (direct links, or switches: then the matching plans on overlays,
        :mod:`collsim.algorithms.synth_overlay`).
    collective : str
        The collective (every supported one has the same needs).

    Returns
    -------
    str or None
        The reason, or None when the matching applies.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> requires(load_system("mesh", dims=(2, 2)), "allgather") is None
    True
    >>> requires(load_system("star", nodes=4), "allgather") is None
    True
    """
    return _unreachable(system)


def match(system, chunks: int, capacity: int, seed: int, block_bytes, *, reverse: bool = False,
          root: int | None = None, owners: np.ndarray | None = None,
          stop_after_s: float = float("inf")) -> Plan | None:
    """Run the link-chunk matching once.

    Parameters
    ----------
    system : Network
        A network whose end nodes are joined by direct links.
    chunks : int
        Pieces per node's block.
    capacity : int
        Pieces the slowest link carries per step (faster links proportionally more).
    seed : int
        Tie-break order among equally rare pieces, and the order in-links choose in.
    block_bytes : float or callable
        Bytes of one node's block (for the predicted time), or ``f(chunks)`` giving the bytes
        of every piece ``owner * chunks + j`` (exact when pieces differ by a byte).
    reverse : bool, optional
        Disseminate over the reversed links (for reduce-scatter).
    root : int, optional
        Broadcast instead: the root holds all ``chunks`` pieces (ids ``0..chunks-1``) and
        everybody else none.
    owners : numpy.ndarray, optional
        Owner of each of the ``N * chunks`` pieces (default: piece ``p`` is node ``p // chunks``'s),
        for an all-reduce whose reduce-scatter may leave more pieces on some nodes.
    stop_after_s : float, optional
        Give up, returning None, once the predicted time passes this (it only grows).

    Returns
    -------
    Plan
        The all-gather's (or broadcast's) deliveries (on the reversed graph if ``reverse``).

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> p = match(load_system("ring", nodes=4), 1, 1, 0, 1e6)
    >>> p.steps, len(p.piece)
    (2, 12)
    """
    n = system.nodes
    src, dst, bw, lat = _direct_links(system)
    if reverse:
        src, dst = dst, src
    total = n * chunks if root is None else chunks
    cap = np.maximum(1, np.floor(capacity * bw / bw.min() + 1e-9)).astype(np.int64)
    cap = np.minimum(cap, total)
    order = np.lexsort((src, dst))
    src, dst, cap, bw, lat = src[order], dst[order], cap[order], bw[order], lat[order]
    rank = np.arange(len(dst)) - np.searchsorted(dst, dst)
    if root is not None:  # a broadcast: links leaving one node choose one after another, so they differ
        by_src = np.lexsort((dst, src))
        out_rank = np.empty(len(src), np.int64)
        out_rank[by_src] = np.arange(len(src)) - np.searchsorted(src[by_src], src[by_src])
        rank = rank * (int(out_rank.max()) + 1) + out_rank
    groups = [g for g in (np.flatnonzero(rank == j) for j in range(int(rank.max()) + 1)) if g.size]
    rng = np.random.default_rng(seed)
    has = np.zeros((n, total), bool)
    first = (np.full(chunks, root) if root is not None else np.repeat(np.arange(n), chunks) if owners is None
             else np.asarray(owners))
    has[first, np.arange(total)] = True
    holders = has.sum(axis=0)
    piece_bytes = (np.asarray(block_bytes(chunks), dtype=float) if callable(block_bytes)
                   else np.full(total, block_bytes / chunks))
    startup = float(getattr(system, "startup_s", None) or 0.0)
    rows, time_s, step = [], 0.0, 0
    big = np.iinfo(np.int64).max
    while True:
        missing = int(total * n - holders.sum())
        if missing == 0:
            break
        tie = rng.permutation(total)
        if root is None:  # the rarest-first order is fixed for the step: work in permuted columns
            pi = np.lexsort((tie, holders))
            before_p = has[:, pi]
            blocked_p = before_p.copy()  # held before the step, or brought in this step
        else:
            before = has.copy()
            taken = np.zeros_like(has)
        step_s, got = 0.0, 0
        for j in rng.permutation(len(groups)):
            ids = groups[j]
            u, v = src[ids], dst[ids]
            if root is None:
                cand = before_p[u]
                cand &= ~blocked_p[v]
                r, piece = _pick_in_order(cand, cap[ids])
                if not r.size:
                    continue
                blocked_p[v[r], piece] = True
                piece = pi[piece]
            else:
                cand = before[u] & ~before[v] & ~taken[v]
                score = np.where(cand, holders[None, :] * total + tie[None, :], big)
                width = int(cap[ids].max())
                if width == 1:
                    pick = score.argmin(axis=1)[:, None]
                elif width < total:
                    pick = np.argpartition(score, width - 1, axis=1)[:, :width]
                else:
                    pick = np.argsort(score, axis=1)
                ok = cand[np.arange(len(ids))[:, None], pick] & (np.arange(pick.shape[1])[None, :] < cap[ids][:, None])
                r, c = np.nonzero(ok)
                if not r.size:
                    continue
                piece = pick[r, c]
                taken[v[r], piece] = True
                holders = holders + np.bincount(piece, minlength=total)  # the next links pick other pieces
            rows.append((np.full(r.size, step), u[r], v[r], piece))
            sent = np.bincount(r, weights=piece_bytes[piece], minlength=len(ids))
            busy = np.bincount(r, minlength=len(ids)) > 0
            got += r.size
            step_s = max(step_s, float((sent[busy] / bw[ids][busy] + lat[ids][busy]).max()))
        if got == 0:  # cannot happen on a strongly connected graph
            raise InputError("the matching made no progress: the end nodes are not strongly connected")
        if root is None:
            inverse = np.empty_like(pi)
            inverse[pi] = np.arange(total)
            has = blocked_p[:, inverse]
        else:
            has |= taken
        holders = has.sum(axis=0)
        time_s += step_s + startup
        step += 1
        if time_s > stop_after_s:
            return None
    cols = [np.concatenate(x) for x in zip(*rows)] if rows else [np.zeros(0, np.int64)] * 4
    return Plan(*cols, steps=step, predicted_time_s=time_s)


def _pick_in_order(cand: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first ``cap[row]`` candidates (columns are already in preference order).

    Returns the row and column of every pick.
    """
    width = int(cap.max())
    if width <= 8:  # a few first-true scans beat a running count over the whole row
        rows_all = np.arange(len(cap))
        out_r, out_c = [], []
        live = cand if width == 1 else cand.copy()
        for j in range(width):
            first = live.argmax(axis=1)
            r = rows_all[live[rows_all, first] & (cap > j)]
            if not r.size:
                break
            out_r.append(r)
            out_c.append(first[r])
            if j + 1 < width:
                live[r, first[r]] = False
        if not out_r:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r, c = np.concatenate(out_r), np.concatenate(out_c)
        order = np.lexsort((c, r))
        return r[order], c[order]
    if int(cap.min()) >= cand.shape[1]:  # flooding: every candidate goes
        return np.nonzero(cand)
    rank = np.cumsum(cand, axis=1, dtype=np.int32)
    return np.nonzero(cand & (rank <= cap[:, None]))


def _direct_plan(net, chunks: int, block_bytes, *, reverse: bool = False, root: int | None = None,
                 owners: np.ndarray | None = None) -> Plan:
    """One step on an overlay with every shift: each link carries its tail's own pieces.

    On a direct overlay every end node has a logical link to every other, so an all-gather (or a
    broadcast, ``root``) needs one step; the matching would find the same plan after scanning
    ``n**3`` cells.
    """
    n = net.nodes
    src, dst = net.links.src, net.links.dst
    bw, lat = net.links.bandwidth_bytes_per_s, net.links.latency_s
    if reverse:
        src, dst = dst, src
    total = n * chunks if root is None else chunks
    piece_bytes = (np.asarray(block_bytes(chunks), dtype=float) if callable(block_bytes)
                   else np.full(total, block_bytes / chunks))
    if root is not None:
        owner = np.zeros(total, np.int64) + root
    else:
        owner = np.repeat(np.arange(n), chunks) if owners is None else np.asarray(owners, np.int64)
    by_owner = np.argsort(owner, kind="stable")
    count = np.bincount(owner, minlength=n)
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    use = count[src] > 0
    src, dst, bw, lat = src[use], dst[use], bw[use], lat[use]
    per = count[src]
    link = np.repeat(np.arange(len(src)), per)
    offset = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    piece = by_owner[start[src][link] + offset]
    sent = np.bincount(link, weights=piece_bytes[piece], minlength=len(src))
    time_s = float((sent / bw + lat).max()) + net.startup_s if len(src) else 0.0
    return Plan(np.zeros(len(piece), np.int64), src[link], dst[link], piece,
                steps=1 if len(src) else 0, predicted_time_s=time_s)


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
        cap = np.minimum(np.maximum(1, np.floor(q * bw / bw.min() + 1e-9)), total)
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


def _tune(system, collective, size_bytes):
    n = system.nodes
    if system.vertices != system.nodes:  # through switches the choice that matters is the overlay
        return [{"overlay": name} for name, _ in _networks(system, None)]
    else:
        src, _, _, _ = _direct_links(system)
        degree = int(np.bincount(src, minlength=n).max())
    rooted = collective in ("broadcast", "reduce")
    return [{"chunks": k, "capacity": q} for k, q in _choices(n, degree, rooted)]


def owner_weights(net) -> np.ndarray:
    """Shares of an all-reduce's vector to leave on each node after its reduce-scatter.

    A node owning a share ``w_v`` must receive the other ``1 - w_v`` of the result in the
    all-gather and send as much in the reduce-scatter, so each phase takes at least
    ``(1 - w_v) M / c_v`` with ``c_v`` the smaller of its in- and out-bandwidth.  Equalising
    that time over the nodes that own anything, ``w_v = max(0, 1 - tau c_v)`` with ``sum w = 1``
    (water-filling).  On a regular graph every share is ``1/N``; on a mesh the corners, with
    two links, keep the most.

    Parameters
    ----------
    net : Network or Overlay
        Direct links between end nodes.

    Returns
    -------
    numpy.ndarray
        ``N`` shares summing to 1.

    References
    ----------
    P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2), 2009 (reduce-scatter then all-gather).

    Examples
    --------
    >>> from collsim.systems import load_system
    >>> owner_weights(load_system("mesh", dims=(3, 3))).round(3).tolist()
    [0.25, 0.0, 0.25, 0.0, 0.0, 0.0, 0.25, 0.0, 0.25]
    """
    from scipy.optimize import brentq
    n = net.nodes
    src, dst, bw, _ = _direct_links(net)
    c = np.minimum(np.bincount(dst, weights=bw, minlength=n), np.bincount(src, weights=bw, minlength=n))
    if np.allclose(c, c[0]):
        return np.full(n, 1.0 / n)
    tau = brentq(lambda x: np.maximum(0.0, 1.0 - x * c).sum() - 1.0, 0.0, 1.0 / c.min())
    w = np.maximum(0.0, 1.0 - tau * c)
    return w / w.sum()


def _ownerships(net, fixed: str | None) -> list[tuple[str, object]]:
    """(label, owners(chunks) or None) for an all-reduce: uniform, and weighted where it differs."""
    from .synth_alltoall import round_shares
    if fixed not in (None, "uniform", "weighted"):
        raise InputError(f"synth-matching: ownership must be uniform or weighted, got {fixed!r}")
    w = owner_weights(net)
    weighted = lambda k: np.repeat(np.arange(net.nodes), round_shares(w, net.nodes * k))  # noqa: E731
    out = [("uniform", None)]
    if fixed == "weighted" or (fixed is None and not np.allclose(w, 1.0 / net.nodes)):
        out.append(("weighted", weighted))
    return [o for o in out if fixed is None or o[0] == fixed]


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


@register(
    "synth-matching", aliases=("tacos-like",), collectives=("allgather", "reducescatter", "allreduce", "broadcast", "reduce"),
    systems=("network",), params=("chunks", "capacity", "seed", "root", "overlay", "ownership"), requires=requires, tune=_tune,
    constraints="end nodes strongly connected (through switches: planned on circulant overlays)",
    reference="[TACOS23] (greedy link-chunk matching over a time-expanded network); collsim's rarest-first "
              "matching, seeded search, broadcast pipelined from the root, reversal for reduce-scatter "
              "and reduce, and circulant overlays of switched networks (docs/synthesis.md)",
    summary="synthesized from the graph: per step, each link carries pieces its head lacks, rarest first",
)
def synth_matching(system, collective, size_bytes, *, chunks=None, capacity=None, seed=None, root: int = 0,
                   overlay: str | None = None, ownership: str | None = None):
    """Synthesize an all-gather, reduce-scatter, all-reduce, broadcast or reduce for this network.

    Parameters
    ----------
    system : Network
        A network: end nodes joined by direct links, or through switches (then the plan is made
        on circulant overlays of logical links, :mod:`collsim.algorithms.synth_overlay`).
    collective : str
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast`` or ``reduce``.
    size_bytes : int
        Message size (collsim's meaning per collective: all-gather's total output).
    chunks, capacity, seed : int, optional
        Pieces per block, pieces per step on the slowest link, tie-break seed; searched
        (smallest predicted time) when not given.
    root : int, optional
        Root of a broadcast or reduce (default 0).
    overlay : str, optional
        On a switched network, fix the overlay (``ring``, ``near-d``, ``doubling`` or
        ``direct``) instead of searching it.
    ownership : str, optional
        All-reduce only: ``uniform`` (every node ends the reduce-scatter with ``1/N`` of the
        vector) or ``weighted`` (a node's share shrinks with its bandwidth, see
        :func:`owner_weights`); both are tried when not given.

    Returns
    -------
    tuple
        ``(LogicalSchedule, chosen parameters)`` with ``predicted_time_s``.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.

    Examples
    --------
    >>> import collsim
    >>> s = collsim.build("synth-matching", "mesh", "allgather", "1MiB", system_options={"dims": (3, 3)})
    >>> collsim.verify(s).transfers > 0
    True
    >>> s = collsim.build("synth-matching", "star", "allgather", "1MiB", system_options={"nodes": 4})
    >>> s.params["overlay"], collsim.verify(s).transfers
    ('direct', 12)
    """
    n = system.nodes
    nets = _networks(system, None if overlay is None else str(overlay))
    kw = dict(chunks=chunks, capacity=capacity, seed=seed)
    if collective in ("broadcast", "reduce"):
        root = check_root(root, n)
        sizes = lambda k: make_collective(collective, n, size_bytes, split=k, root=root).bytes_of(  # noqa: E731
            np.arange(k))
        plan, chosen, _ = _best_over(nets, sizes, reverse=collective == "reduce", root=root, **kw)
        b = LogicalBuilder(make_collective(collective, n, size_bytes, split=chosen["chunks"], root=root))
        _add(b, plan, reduce=collective == "reduce", offset=0)
        chosen.update(root=root, predicted_time_s=plan.predicted_time_s)
        return b.build(), chosen
    if collective == "allreduce":
        block = lambda k: make_collective("allreduce", n, size_bytes, split=n * k).bytes_of(  # noqa: E731
            np.arange(n * k))
        best = None
        direct_first = sorted(nets, key=lambda item: (not (isinstance(item[1], Overlay) and item[1].direct),))
        for name, net in direct_first:  # the reduce-scatter and all-gather share one overlay: judge them together
            if best is not None and name is not None and \
                    _floor_s(net, block, reverse=True) + _floor_s(net, block) >= best[0]:
                continue
            for label, owners in _ownerships(net, ownership):
                rs, chosen = best_plan(net, block, reverse=True, owners=owners, **kw)
                ag = _once(net, chosen["chunks"], chosen["capacity"], chosen["seed"], block, owners=owners)
                if name is not None:
                    chosen["overlay"] = name
                chosen["ownership"] = label
                if best is None or rs.predicted_time_s + ag.predicted_time_s < best[0]:
                    best = (rs.predicted_time_s + ag.predicted_time_s, rs, ag, chosen)
        _, rs, ag, chosen = best
        coll = make_collective("allreduce", n, size_bytes, split=n * chosen["chunks"])
        b = LogicalBuilder(coll)
        _add(b, rs, reduce=True, offset=0)
        _add(b, ag, reduce=False, offset=rs.steps)
        chosen["predicted_time_s"] = rs.predicted_time_s + ag.predicted_time_s
        return b.build(), chosen
    block = lambda k: make_collective(collective, n, size_bytes, split=k).bytes_of(np.arange(n * k))  # noqa: E731
    plan, chosen, _ = _best_over(nets, block, reverse=collective == "reducescatter", **kw)
    coll = make_collective(collective, n, size_bytes, split=chosen["chunks"])
    b = LogicalBuilder(coll)
    _add(b, plan, reduce=collective == "reducescatter", offset=0)
    chosen["predicted_time_s"] = plan.predicted_time_s
    return b.build(), chosen


def _add(b: LogicalBuilder, plan: Plan, *, reduce: bool, offset: int) -> None:
    """One transfer per (step, link) carrying its pieces; reversed in time and direction if ``reduce``."""
    if not len(plan.piece):
        return
    step = plan.steps - 1 - plan.step if reduce else plan.step
    src, dst = (plan.dst, plan.src) if reduce else (plan.src, plan.dst)
    order = np.lexsort((plan.piece, dst, src, step))
    step, src, dst, piece = step[order], src[order], dst[order], plan.piece[order]
    new = np.flatnonzero(np.concatenate(([True], (step[1:] != step[:-1]) | (src[1:] != src[:-1])
                                         | (dst[1:] != dst[:-1]))))
    bounds = np.append(new, len(piece))
    b.add(step[new] + offset, src[new], dst[new], np.split(piece, bounds[1:-1]), reduce=reduce)
