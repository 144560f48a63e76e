"""Lanes of hierarchical collectives: stages (:mod:`.hier_stages`) pipelined and balanced by a linear program.

The data is cut into units; a *lane* is a share of them that runs its stages in consecutive rounds
from a start round, in one dimension order (and ring direction).  Lanes that start at different
rounds or run different orders overlap in the same rounds (the flow simulator's bulk-synchronous
steps), so a dimension's links work while another's do: pipelining, and balancing bytes across
dimensions (a lane that crosses the fabric first moves its bulk over the fabric).  The shares come
from a small linear program (:func:`plan_lanes`): per round and resource (a dimension's links, or
one direction of them), the busiest node's bytes over the rate are at most the round's time; the
sum of round times is minimised.

References
----------
S. Rashidi, W. Won, S. Srinivasan, S. Sridharan, T. Krishna, "Themis: A Network Bandwidth-Aware
Collective Scheduling Policy for Distributed Training of DL Models", ISCA 2022 (chunks balanced
across dimensions by their bandwidth).
"""

from __future__ import annotations

import numpy as np

from ..core.collective import BYTES_PER_DELIVERY, make_collective
from ..core.collectives import CollectiveType
from ..core.schedule import LogicalBuilder
from .hier_stages import round_costs, stage_latency_s, stage_moves, template, templates

_MAX_UNITS = 1 << 15
"""Cap on chunks a hierarchical schedule cuts the data into (lanes times their units)."""


def plan_lanes(costs: list[list[tuple[int, float]]], pieces: int, dims: int) -> tuple[np.ndarray, float]:
    """Shares of the data per lane (template, start round) minimising the sum of round times.

    Notes
    -----
    The linear program: minimise ``sum_r T_r`` subject to, for every round ``r`` and dimension
    ``d``, ``sum over lanes active on d in r of x_lane cost <= T_r`` and ``sum x = 1``, ``x >= 0``
    (HiGHS through :func:`scipy.optimize.linprog`).  A round ends when its busiest dimension
    does (bulk-synchronous), so the objective is the schedule's bandwidth time.

    References
    ----------
    S. Rashidi, W. Won, S. Srinivasan, S. Sridharan, T. Krishna, "Themis: A Network Bandwidth-Aware
    Collective Scheduling Policy for Distributed Training of DL Models", ISCA 2022 (balancing
    chunks across dimensions by their bandwidth; here as a linear program).
    """
    from scipy.optimize import linprog

    from ..core.limits import check_memory
    length = max(len(c) for c in costs)
    rounds = length + pieces - 1
    lanes = [(t, s) for t in range(len(costs)) for s in range(pieces)]
    nx = len(lanes)
    check_memory(rounds * dims * (nx + rounds) * 8 * 3,    # the dense matrix, scaled and passed to HiGHS
                 f"planning {nx} lanes over {rounds} rounds (a {rounds * dims} x {nx + rounds} programme)",
                 "use fewer pieces, or smaller ring dimensions (each ring stage takes a round per member)")
    a = np.zeros((rounds * dims, nx + rounds))
    for j, (t, s) in enumerate(lanes):
        for i, (res, c) in enumerate(costs[t]):
            for d in np.atleast_1d(res):
                a[(s + i) * dims + int(d), j] += c
    for r in range(rounds):
        a[r * dims:(r + 1) * dims, nx + r] = -1.0
    scale = max(float(a[:, :nx].max()), 1e-300)
    a[:, :nx] /= scale
    obj = np.concatenate([np.zeros(nx), np.ones(rounds)])
    eq = np.concatenate([np.ones(nx), np.zeros(rounds)])[None, :]
    res = linprog(obj, A_ub=a, b_ub=np.zeros(len(a)), A_eq=eq, b_eq=[1.0], bounds=(0, None), method="highs")
    if res.status != 0:   # not expected: the LP is always feasible and bounded; fall back to one lane
        x = np.zeros(nx)
        x[0] = 1.0
    else:
        x = np.maximum(res.x[:nx], 0)
    x = x / x.sum()
    busy = (a[:, :nx] @ x).reshape(rounds, dims).max(axis=1)
    return x.reshape(len(costs), pieces), float(busy.sum() * scale)


def integer_units(shares: np.ndarray, units: int) -> np.ndarray:
    """Whole units per lane, summing to ``units``, by largest remainder (a lane may get none).

    References
    ----------
    M. L. Balinski, H. P. Young, "Fair Representation: Meeting the Ideal of One Man, One Vote",
    Yale University Press, 1982 (Hamilton's largest-remainder method).
    """
    flat = shares.reshape(-1) * units
    out = np.floor(flat).astype(np.int64)
    rest = units - int(out.sum())
    out[np.argsort(-(flat - out), kind="stable")[:rest]] += 1
    return out.reshape(shares.shape)


EXPLICIT_DELIVERIES = 1 << 28
"""Chunk deliveries above which a schedule cut into :data:`_MAX_UNITS` chunks could not be held in full
(64 bytes each: 16 GiB), so that only its orbits can check it (:func:`default_units`)."""

ORBIT_DELIVERIES = 1 << 22
"""Chunk deliveries the representatives of a schedule may make when its units are chosen for the
system's translation group (:func:`default_units`): a schedule checked on orbits holds a ``1 / order``
share of its deliveries, so where the group is large the data can be cut finer than
:data:`_MAX_UNITS` chunks allow an explicit schedule."""


def system_order(system, ring: bool) -> int:
    """Order of the translation group a hierarchical schedule is symmetric under (1: none): the
    system's, or for ring stages its whole coordinates' (``cyclic``); 1 where :func:`default_units`
    would not read it (512 nodes or fewer, or a schedule that can be held in full)."""
    if system.nodes * 64 <= _MAX_UNITS or system.nodes * (system.nodes - 1) * 2 * max(1, _MAX_UNITS // system.nodes) \
            <= EXPLICIT_DELIVERIES:
        return 1
    from ..kinds import model_for
    group = model_for(system).symmetry_group(system, cyclic=ring)
    return 1 if group is None else int(group.order)


def default_units(n: int, collective: CollectiveType, pieces: int, order: int = 1) -> int:
    """Units the data is cut into when the caller does not say: 64 per piece, within :data:`_MAX_UNITS` chunks.

    ``order``: of the system's translation group (:func:`system_order`).  Where the schedule cut so
    would make more than :data:`EXPLICIT_DELIVERIES` (it can only be checked on its orbits) and the
    representatives of one unit (a ``1 / order`` share of its ``N (N - 1)`` deliveries per phase) leave room, up to
    64 per piece within :data:`ORBIT_DELIVERIES` of them: 65,536 GPUs in boxes of 8 on a full fat
    tree (a group of 65,536) cut an all-reduce's blocks into 32 units instead of one.  The default
    depends on the system alone, so a schedule built in full and on its orbits is the same.

    References
    ----------
    M. Cho, U. Finkler, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for deep learning on
    heterogeneous network hierarchy", SysML 2019 (the data cut per dimension).
    """
    per_chunk = n if collective.name == "allreduce" else 1
    units = max(1, min(max(1, _MAX_UNITS // per_chunk), 64 * int(pieces)))
    phases = 2 if collective.name == "allreduce" else 1
    if order > 1 and per_chunk * 64 > _MAX_UNITS and n * (n - 1) * phases * units > EXPLICIT_DELIVERIES:
        per_unit = n * (n - 1) * phases // int(order)    # the representatives' deliveries of one unit
        units = max(units, min(64 * int(pieces), ORBIT_DELIVERIES // max(1, per_unit)))
    return units


def lane_deliveries(system, collective: CollectiveType, params, ring: bool = False) -> int:
    """Chunk deliveries a hierarchical (lane) schedule makes at least, before it is planned.

    Every block (every pair's, for an all-to-all) crosses at least one link, once per unit; an
    all-reduce's reduce-scatter and all-gather each move ``N (N - 1)`` units of every block.

    References
    ----------
    M. Cho, U. Finkler, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for deep learning on
    heterogeneous network hierarchy", SysML 2019.
    """
    n = int(system.nodes)
    units = params.get("units") or default_units(n, collective, params.get("pieces") or 1, system_order(system, ring))
    return n * (n - 1) * int(units) * (2 if collective.name == "allreduce" else 1)


MOVES_BYTES_PER_HOLDING = 128
"""Peak bytes of :func:`~collsim.algorithms.hier_stages.stage_moves` per (node, block) holding,
every template's moves kept at once (measured: 8.9 GB held by the moves of an all-reduce on
8,192 nodes, ``N^2`` holdings, before any transfer was made)."""


def representatives_bytes(system, collective: CollectiveType, params, order: int, ring: bool = False) -> int:
    """Peak bytes of building the lanes' transfers into a group's domain (``order`` = the group's)
    and checking them: the domain's moves and a ``1 / order`` share of the deliveries.

    References
    ----------
    W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., 1911 (an orbit of a free action has
    one element a point).
    """
    n = int(system.nodes)
    holdings = n * n if collective.name in ("allreduce", "allgather") else n * (n - 1)
    return (MOVES_BYTES_PER_HOLDING * holdings
            + BYTES_PER_DELIVERY * lane_deliveries(system, collective, params, ring)) // order


def lanes_schedule(system, collective: CollectiveType, size_bytes: int, *, pieces: int | None, orders, ring: bool,
                   units: int | None = None, group=None):
    """Build a hierarchical collective as lanes (see the module docstring).

    ``group`` (the system's translation group): only the transfers into its domain, the
    representatives of the schedule, made from the domain's holdings alone
    (:func:`~collsim.algorithms.hier_stages.stage_moves`).

    References
    ----------
    M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter, "BlueConnect: Decomposing all-reduce for
    deep learning on heterogeneous network hierarchy", IBM Journal of Research and Development 63(6),
    2019 (collectives decomposed dimension by dimension).
    """
    n = system.nodes
    temps = templates(system, collective, orders, ring)
    moves = [stage_moves(system, collective, t, group) for t in temps]
    costs = [round_costs(system, collective, t, m, group) for t, m in zip(temps, moves)]
    receivers = None
    if group is not None:
        receivers = np.zeros(n, bool)
        receivers[group.domain()] = True
    block = size_bytes / n if collective.name == "allreduce" else size_bytes
    hop_s = 2 * max(d.latency_s for d in system.dimensions) + (system.startup_s or 0.0)
    plans = {p: plan_lanes(costs, p, 2 * len(system.dimensions)) for p in ([pieces] if pieces else (1, 2, 4, 8, 16))}
    pieces = min(plans, key=lambda p: plans[p][1] * block + (max(map(len, costs)) + p - 1) * hop_s)
    shares = plans[pieces][0]
    if units is None:   # the system's group, whether this build makes the representatives or every transfer
        units = default_units(n, collective, pieces, group.order if group is not None else system_order(system, ring))
    units = int(units)
    whole = integer_units(shares, units)
    explicit = group is None      # the representatives: the explicit floor is the whole schedule's, not theirs
    if collective.name == "allreduce":
        coll = make_collective("allreduce", n, size_bytes, split=units * n, explicit=explicit)
    else:
        coll = make_collective(collective, n, size_bytes, split=units, explicit=explicit)
    b = LogicalBuilder(coll, receivers=receivers)
    first = 0
    used, work = [], []
    for (t, s), count in np.ndenumerate(whole):
        if count == 0:
            continue
        piece = np.arange(first, first + count, dtype=np.int64)
        first += count
        order = "/".join(str(st.dim) for st in temps[t][:len(system.dimensions)])
        used.append(f"{order}{'-' if temps[t][0].sign < 0 else ''}@{s}x{count}")
        rounds = [rnd for stage in moves[t] for rnd in stage]
        work.extend((s + i, len(work), piece, rnd) for i, rnd in enumerate(rounds))
    for r, _, piece, (src, dst, blk, red) in sorted(work, key=lambda w: w[:2]):   # in round order: no re-sort
        _add(b, r, src, dst, blk, piece, collective, n, red)
    sched = b.build()
    return sched, {"pieces": pieces, "lanes": ",".join(used), "units": units}


def _add(b: LogicalBuilder, rnd: int, src, dst, blk, piece, collective: CollectiveType, n: int, red: bool) -> None:
    """Transfers of one round of one lane: every (src, dst) pair once, with all its blocks' pieces."""
    if not len(src):
        return
    order = np.lexsort((blk, dst, src))
    src, dst, blk = src[order], dst[order], blk[order]
    new = np.flatnonzero(np.concatenate([[True], (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])]))
    if collective.name == "allreduce":       # chunk u N + b: unit u of block b
        chunks = piece[None, :] * n + blk[:, None]
    else:                               # chunk b split + j: piece j of block (pair) b
        chunks = blk[:, None] * b.collective.split + piece[None, :]
    counts = np.diff(np.concatenate([new, [len(src)]])) * len(piece)
    flat = chunks.reshape(-1)
    if (counts == counts[0]).all():     # every pair the same number of chunks: one 2-D block
        b.add(rnd, src[new], dst[new], flat.reshape(len(new), -1), reduce=red)
        return
    b.add(rnd, src[new], dst[new], flat, chunk_ptr=np.concatenate([[0], np.cumsum(counts)]), reduce=red)


def planned_time_s(system, collective: CollectiveType, size_bytes: int, params, *, ring: bool) -> float | None:
    """The lane plan's time of a built schedule: per round its busiest resource, plus each round's latency.

    The closed form of the hierarchical algorithms on their kind (``closed_forms["hierarchical"]``):
    the rounds' bandwidth time as :func:`plan_lanes` models it, for the lanes the schedule
    records (``params["lanes"]``), plus per round the start-up and the latency of its longest route
    (:func:`~collsim.algorithms.hier_stages.stage_latency_s`).  Contention the plan does not see
    (flows of different lanes sharing a link unevenly) is the flow simulator's to find.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel
    Computing 20(3), 1994 (latency plus bytes over bandwidth).
    """
    lanes = params.get("lanes") if params else None
    if not lanes:
        return None
    from ..kinds import model_for
    group = model_for(system).symmetry_group(system, cyclic=ring)   # the rounds' loads from the domain's moves
    n = system.nodes
    entries = []
    for item in str(lanes).split(","):
        head, _, rest = item.partition("@")
        start, _, count = rest.partition("x")
        entries.append((tuple(int(d) for d in head.rstrip("-").split("/")), -1 if head.endswith("-") else 1,
                        int(start), int(count)))
    total = sum(e[3] for e in entries)
    busy: dict[tuple[int, int], float] = {}
    latency: dict[int, float] = {}
    for order, sign, start, count in entries:
        stages = template(collective, order, ring, sign)
        moves = stage_moves(system, collective, stages, group)
        lat = [stage_latency_s(system, st) for st, rounds in zip(stages, moves) for _ in rounds]
        for i, ((res, cost), t) in enumerate(zip(round_costs(system, collective, stages, moves, group), lat)):
            for r in res:
                busy[start + i, r] = busy.get((start + i, r), 0.0) + cost * count / total
            latency[start + i] = max(latency.get(start + i, 0.0), t)
    block = size_bytes / n if collective.name == "allreduce" else size_bytes
    per_round: dict[int, float] = {}
    for (r, _), t in busy.items():
        per_round[r] = max(per_round.get(r, 0.0), t)
    return float(sum(per_round.values()) * block + sum(latency.values()))
