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
from ...core.limits import check_memory, memory_limit_bytes
from ...core.time_limit import TimeLimitError, time_limit, time_limit_error
from . import effort
from ...core.csr import INDEX
from .overlays import Overlay, by_name, dfs_order, overlay, shift_sets
from .step import BITS_FROM_PIECES, PREFERENCES, Plan, _direct_links, _direct_plan, match

_SEEDS = 4
"""Seeded tie-break orders tried per (chunks, capacity) choice."""

_SEED_NODES = 256
"""Graphs of at most this many end nodes also try the other seeds on the best two choices."""

_ALL_SEEDS_NODES = 32
"""Graphs of at most this many end nodes try the other seeds on every choice that can still win instead.

On irregular graphs a choice's tie-break order moves its time by up to 3 %, more than the best
choices differ: on a 32-node random 4-regular graph (seed 10 of the wide run in
benchmarks/synth_trees.py) the best two choices reach 0.988 of the bound in every order and 4
pieces a block 0.994 in its second; on another, 4 pieces a block reach 0.963 or 0.994 by order.
On tori, meshes and hypercubes of 64 to 256 nodes trying them all took 2.5 to 4 times the
search's CPU and changed no result (the 64-node hypercube: 1.2 s instead of 0.4, above the second
a build may take up to 64 nodes), so larger graphs keep the best two."""

_WORK_CELLS = 3e9
"""Node x piece cells the default search may scan in all (the search narrows above it)."""

def _once(net, chunks: int, capacity: int, seed: int, block_bytes, *, reverse: bool = False,
          root: int | None = None, owners=None, stop_after_s: float = float("inf"),
          prefer: str = "rarest") -> Plan | None:
    """One plan: the direct overlay's single step, else the matching (``owners(chunks)``: pieces' owners)."""
    own = None if owners is None else owners(chunks)
    if isinstance(net, Overlay) and net.direct:
        return _direct_plan(net, chunks, block_bytes, reverse=reverse, root=root, owners=own)
    return match(net, chunks, capacity, seed, block_bytes, reverse=reverse, root=root, owners=own,
                 stop_after_s=stop_after_s, prefer=prefer)


def _pair_floors(net, pairs, block_bytes, *, reverse: bool = False, root: int | None = None,
                 owners=None) -> tuple[list[float], list[int]]:
    """Lower bounds on :func:`match`'s predicted time and steps for each ``(chunks, capacity)`` pair.

    A step costs at least the shortest latency plus the start-up and, for any node ``v``, the
    bytes ``v`` receives in it over the sum of its in-links' bandwidths; ``v`` needs at least
    ``ceil(pieces it lacks / pieces its in-links carry per step)`` steps.  So
    ``T >= need_v / inbw_v + steps_v (lat_min + startup)`` for every ``v``, and the run takes at
    least ``max_v steps_v`` steps.
    """
    n = net.nodes
    src, dst, bw, lat = _direct_links(net)
    if reverse:
        src, dst = dst, src
    inbw = np.bincount(dst, weights=bw, minlength=n)
    step_s = float(lat.min()) + float(getattr(net, "startup_s", None) or 0.0)
    out, steps = [], []
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
            steps_v = np.where(need_pieces > 0, np.ceil(need_pieces / per_step), 0.0)
            floor = need_bytes / inbw + steps_v * step_s
        out.append(float(np.max(np.where(need_pieces > 0, floor, 0.0))))
        steps.append(int(np.max(steps_v[np.isfinite(steps_v)], initial=0)))
    return out, steps


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


def best_plan(system, block_bytes, *, chunks=None, capacity=None, seed=None, prefer=None,
              reverse: bool = False, root: int | None = None, owners=None) -> tuple[Plan, dict]:
    """The plan with the smallest predicted time over the choices not fixed by the caller.

    A choice is ``(chunks, capacity, prefer)``: ``prefer`` (:data:`~.step.PREFERENCES`) is
    searched on graphs of up to :data:`_ALL_SEEDS_NODES` end nodes (all-gather and
    reduce-scatter), ``rarest`` above and for a broadcast or reduce.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.
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
    check_memory(cells * effort.STATE_BYTES_PER_CELL + cells * 8 * max(degree, 1) / max(n, 1),
                 f"synthesizing on {n} nodes with {top} pieces per node", "use fewer chunks or nodes")
    if isinstance(system, Overlay) and system.direct:  # one step whatever the choice: no search
        k = int(chunks) if chunks is not None else 1
        q = int(capacity) if capacity is not None else 1
        return (_once(system, k, q, 0, block_bytes, reverse=reverse, root=root, owners=owners),
                {"chunks": k, "capacity": q, "seed": 0 if seed is None else int(seed), "prefer": "rarest"})
    prefers = [prefer] if prefer is not None else \
        list(PREFERENCES) if root is None and n <= _ALL_SEEDS_NODES else ["rarest"]

    def prefers_of(k: int) -> list[str]:  # "fresh" searched on pieces kept as booleans only (few: cheap)
        return prefers if prefer is not None or n * k < BITS_FROM_PIECES else ["rarest"]
    seeds = [0] if seed is None else [int(seed)]
    tried = []  # (time, k, q, seed, preference, plan): every choice with the first seed, then more seeds
    floors, steps = _pair_floors(system, pairs, block_bytes, reverse=reverse, root=root, owners=owners)
    # the choices whose matching fits the time limit (none: refused before any runs)
    pairs, floors = _affordable(system, pairs, floors, steps, reverse=reverse, root=root)
    keep = 2 if seed is None and n <= _SEED_NODES else 1  # the seeds below revisit the best two
    flood = [q >= (n * k if root is None else k) for k, q in pairs]  # last: its floor says little
    for _, floor, k, q in sorted(zip(flood, floors, *zip(*pairs))):
        for f, pf in enumerate(prefers_of(k)):
            times = sorted(t[0] for t in tried)
            limit = times[keep - 1] if len(times) >= keep else float("inf")
            if floor > limit:
                break  # cannot be among the best ``keep``: skipping it changes no result
            plan = _once(system, k, q, seeds[0], block_bytes, reverse=reverse, root=root, owners=owners,
                         stop_after_s=limit, prefer=pf)
            if plan is not None:  # None: already slower than the best ``keep`` when it gave up
                tried.append((plan.predicted_time_s, k, q, seeds[0], f, plan))
    if seed is None and n <= _ALL_SEEDS_NODES:
        # the other tie-break orders on every choice that can still win: a choice's floor holds for every
        # order, and a run gives up once it is slower than the best so far, which it then cannot become;
        # so the result is the best over every (choice, order), whatever order they are tried in
        best_s = min(t[0] for t in tried)
        for _, floor, k, q in sorted(zip(flood, floors, *zip(*pairs))):
            for s in range(1, _SEEDS):
                for f, pf in enumerate(prefers_of(k)):
                    if floor > best_s:
                        break
                    plan = _once(system, k, q, s, block_bytes, reverse=reverse, root=root, owners=owners,
                                 stop_after_s=best_s, prefer=pf)
                    if plan is not None:
                        tried.append((plan.predicted_time_s, k, q, s, f, plan))
                        best_s = min(best_s, plan.predicted_time_s)
    elif seed is None and n <= _SEED_NODES:  # more tie-break orders on the best two choices
        for _, k, q, _, f, _ in sorted(tried, key=lambda t: t[:5])[:2]:
            for s in range(1, _SEEDS):
                plan = _once(system, k, q, s, block_bytes, reverse=reverse, root=root, owners=owners,
                             prefer=prefers[f])
                tried.append((plan.predicted_time_s, k, q, s, f, plan))
    t, k, q, s, f, plan = min(tried, key=lambda t: t[:5])
    best = (plan, {"chunks": k, "capacity": q, "seed": s, "prefer": prefers[f]})
    return best

def _affordable(net, pairs, floors, steps, *, reverse: bool, root: int | None):
    """The choices whose matching fits collsim's time limit (:mod:`.effort`); none: the refusal.

    A run takes at least the source's eccentricity in steps (the farthest node from the root,
    or from node 0 for an all-gather: the diameter is no smaller) and each choice's own
    ``steps_v`` (:func:`_pair_floors`).
    """
    n = net.nodes
    src, dst, _, _ = _direct_links(net)
    if reverse:
        src, dst = dst, src
    ecc = effort.eccentricity(n, src, dst, 0 if root is None else root)
    cost = [effort.floor_s(n, len(src), n * k if root is None else k, max(ecc, st), root is not None)
            for (k, _), st in zip(pairs, steps)]
    keep = [i for i, c in enumerate(cost) if c <= time_limit()[0]]
    if not keep:
        i = int(np.argmin(cost))
        k, q = pairs[i]
        raise time_limit_error(cost[i], f"synthesizing on {n} nodes with {k} piece(s) per block and capacity {q} "
                                        f"(at least {max(ecc, steps[i])} steps)", effort.HINT)
    return [pairs[i] for i in keep], [floors[i] for i in keep]


def _networks(system, overlay_name: str | None) -> list[tuple[str | None, object]]:
    """What to plan on: the network itself (direct links), or its overlays (switches).

    Overlays follow the end nodes' numbering and, when it differs, their depth-first order
    over the network (name suffix ``/dfs``), so a badly numbered tree of switches still
    gets a ring that crosses each of its links once each way.
    """
    if system.vertices == system.nodes:
        if overlay_name is not None:
            raise InputError(f"synth-matching: overlay applies to networks with switches; this {system.topology} "
                             f"network joins its end nodes by direct links")
        return [(None, system)]
    n = system.nodes
    if overlay_name is not None:
        base, _, suffix = overlay_name.partition("/")
        if suffix not in ("", "dfs"):
            raise InputError(f"synth-matching: an overlay's order is the numbering or /dfs, got {overlay_name!r}")
        shifts = by_name(n, base)
        check_memory(_overlay_bytes(system, shifts), _overlay_what(n, base, shifts),
                     "use fewer nodes or a sparser overlay")
        order = dfs_order(system) if suffix else None
        return [(overlay_name, overlay(system, shifts, overlay_name, order))]
    sets = shift_sets(n)  # those whose logical links fit in memory (direct exchange on a big network does not)
    need = {name: _overlay_bytes(system, shifts) for name, shifts in sets}
    fits = [(name, shifts) for name, shifts in sets if need[name] <= memory_limit_bytes()]
    if not fits:
        name, shifts = min(sets, key=lambda item: need[item[0]])
        check_memory(need[name], _overlay_what(n, name, shifts), "use fewer nodes")
    dfs = dfs_order(system)
    orders = [("", None)] + ([("/dfs", dfs)] if (dfs != np.arange(n)).any() else [])
    # every shift in another order is the same logical links, and the same one-step plan: direct only once
    return [(name + tag, overlay(system, shifts, name + tag, order)) for tag, order in orders
            for name, shifts in fits if not (tag and name == "direct")]


OVERLAY_BYTES_PER_LINK = 100
"""Peak bytes per logical link of an overlay, besides its route (measured 165 to 670 in all on stars,
fat trees, MLFMs and hierarchical systems, with :data:`OVERLAY_BYTES_PER_CROSSING`)."""

OVERLAY_BYTES_PER_CROSSING = 64
"""Peak bytes per (logical link, physical link) crossing of its route."""


def _overlay_bytes(system, shifts) -> int:
    """Peak bytes of routing and rating an overlay: per logical link, and per crossing of a sample's routes."""
    n = system.nodes
    s = np.asarray(shifts, INDEX)
    i = np.arange(min(n, 64), dtype=INDEX) * max(1, n // 64)    # 64 tails spread over the nodes
    tail = np.repeat(i, min(len(s), 16))
    head = (tail + np.tile(s[np.linspace(0, len(s) - 1, min(len(s), 16)).astype(int)], len(i))) % n
    crossings = len(system.routes(tail, head).route_links) / max(len(tail), 1)
    return int(n * len(s) * (OVERLAY_BYTES_PER_LINK + OVERLAY_BYTES_PER_CROSSING * crossings))


def _overlay_what(n: int, name: str, shifts) -> str:
    return f"the {name} overlay of {n} end nodes ({n * len(shifts)} logical links)"


def _floor_s(net, block, *, reverse: bool = False, root: int | None = None) -> float:
    """A lower bound on any plan's predicted time on ``net`` (to skip overlays that cannot win).

    Every step costs at least the shortest link latency plus the start-up, there are at least
    as many steps as the overlay's diameter ``D`` (circulants are vertex-transitive: node 0's
    eccentricity is everybody's), and a node's pieces arrive no faster than the sum of its
    in-links' bandwidth: ``T >= need_v / inbw_v + D (lat_min + startup)``.
    """
    n = net.nodes
    src, dst = net.links.src, net.links.dst
    if reverse:
        src, dst = dst, src
    diameter = effort.eccentricity(n, src, dst, 0 if root is None else root)
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
    floors = [0.0 if len(nets) == 1 or (isinstance(net, Overlay) and net.direct)
              else _floor_s(net, block, reverse=reverse, root=root) for _, net in nets]
    best, refused = None, None
    for i in sorted(range(len(nets)), key=lambda i: (floors[i], i)):  # direct first, then by floor
        name, net = nets[i]
        if best is not None and name is not None and floors[i] >= best[0].predicted_time_s:
            continue
        try:
            plan, chosen = best_plan(net, block, reverse=reverse, root=root, **kw)
        except TimeLimitError as exc:  # this overlay's matching would take too long: the others may not
            refused = refused or exc
            continue
        if name is not None:
            chosen["overlay"] = name
        if best is None or plan.predicted_time_s < best[0].predicted_time_s:
            best = (plan, chosen, net)
    if best is None:
        raise refused
    return best
