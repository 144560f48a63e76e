"""Contention-aware, flow-level simulation of a schedule on an electrical network.

Model
-----
* Every transfer ``t`` is one *flow* of ``m_t = schedule.size_bytes[t]`` bytes
  along its route ``route_links[route_ptr[t]:route_ptr[t+1]]``.
* Its *fixed latency* is ``L_t = (system.startup_s or 0) + sum of the latencies
  of its links`` (exactly the fixed part of :func:`collsim.cost.alpha_beta_time_s`).
* The schedule is verified first (:func:`collsim.verify`'s checks), unless the
  caller passes ``verify``'s report, or ``check=False``: the result's ``verified``
  says whether the verifier ran and passed it.
* From its start time ``s_t`` the flow's bytes leave at its max-min fair rate
  (:func:`~collsim.sim.maxmin.max_min_rates` over all flows sending at that
  moment, link capacity = link bandwidth).  Rates are constant between events
  and recomputed at every event: a flow starting, or a flow sending its last
  byte.  ``d_t`` is the time its last byte is sent; the flow *finishes* at
  ``f_t = d_t + L_t``: latency is a pipeline delay that does not occupy
  bandwidth (cut-through).  An uncongested flow therefore takes exactly
  ``L_t + m_t / min bandwidth on its route``: ``t_s + t_w m`` for one hop with
  ``t_s`` the link latency, or with ``startup_s = t_s`` and zero link latency.
  Zero-byte transfers (and routes without links) take only ``L_t``.
* Mode ``"bulk"``: bulk-synchronous steps.  All flows of step ``k`` start at
  ``T_k``, the time every flow of step ``k-1`` finished (``T_0 = 0``,
  ``T_{k+1} = max f_t over step k``, or ``T_k`` for an empty step).
* Mode ``"dataflow"``: a transfer starts as soon as the data it carries is at
  its sender.  ``s_t = max(0, max{f_u : step u < step t, dst u = src t, u and
  t carry a common chunk})``: every delivery of any of its chunks to its
  sender in an earlier step must have finished (the *latest*, so a partial
  reduction includes everything the schedule combined into it before).  Step
  numbers only order the dependencies; there is no barrier.  A sender's later
  sends of a chunk depend on a superset of the deliveries its earlier sends of
  that chunk depend on, so they never start earlier.  Only these read-after-
  write dependencies are modelled: receive buffers are assumed separate
  (no write-after-read stalls) and a node may send and receive any number
  of flows at once (only links limit it).  In an unverified schedule
  (``check=False``) a chunk never delivered is taken as held initially.
* Mode ``"rank"``: MPI ranks without barriers (rendezvous).  A transfer of step
  ``k`` from ``a`` to ``b`` starts when every transfer of an earlier step that
  touches ``a`` or ``b`` has finished (:mod:`collsim.sim.ranks`).

* ECMP (multipath) routes: a transfer split over several paths is one sub-flow
  per path carrying its share of the bytes; the sub-flows share links max-min
  fairly like any flows, and the transfer finishes when its last sub-flow does
  (last byte sent plus that path's latency).

* A system with a calibrated ``loggp-piecewise`` model (:mod:`collsim.core.commmodel`,
  ``collsim calibrate --model loggp-piecewise``): a flow's fixed latency is its size
  segment's α instead of the links' latencies, and its bytes are weighted by ``route
  bandwidth / β`` of its segment, so that alone on its route it takes ``α + m/β`` and
  it still shares links max-min fairly.  The per-message overhead and the local work
  (reductions, copies if charged) are charged **on the node, not on a link**: in bulk
  mode a step ends when every rank has finished its last flow plus its overhead and
  local work of that step (:func:`collsim.cost.loggp.loggp_node_work_s`); in the other
  modes they are added to each flow's finish at its receiver (a rank's local work
  after its last receive).  With the model an uncongested schedule takes exactly
  :func:`collsim.cost.loggp.loggp_time_s`.

Limits: fluid flows (no packets, headers, windows, or switch buffers), fair
sharing that converges instantly, and routes fixed in the schedule (ECMP
shares are fixed fractions, not adaptive).
Under fair sharing, dataflow is usually but not provably never slower than
bulk (starting a flow early can slow a critical one).

Cost: see :mod:`collsim.sim.engine`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import InputError, UnsupportedError
from ..core.plugins import require
from ..core.csr import row_blocks
from ..core.repeated import step_weights, weighted_sum
from ..core.schedule import Schedule
from ..core.schedule_file import load_schedule
from ..core.wellformed import MAX_BYTES, traffic_bytes
from ..cost.loggp import loggp_node_work_s, system_model
from ..cost.network import path_fixed_s, transfer_bandwidth_bytes_per_s, transfer_fixed_s
from ..verify import VerifyReport, verify_dataflow, verify_endpoints, verify_network_resources
from .engine import _Engine, _gather, _unique
from .ranks import rank_dependencies

MODES = ("bulk", "dataflow", "rank")


@dataclass(frozen=True, eq=False)
class SimResult:
    """Outcome of :func:`simulate`.

    Parameters
    ----------
    total_time_s : float
        Finish time of the last flow.
    step_time_s : numpy.ndarray
        Bulk: duration of each step; dataflow and rank: finish time of each step's last flow.
    transfer_start_s, transfer_finish_s : numpy.ndarray
        Start time and finish time (last byte sent + fixed latency) of each transfer.
    link_bytes : numpy.ndarray
        Bytes carried by each directed link.
    link_busy_s : numpy.ndarray
        Time each link was sending bytes of at least one flow.
    max_link_load : int
        The most flows sharing one directed link in one step (a property of the schedule).
    peak_link_flows : int
        The most flows observed sending on one link at the same time.
    mode : str
        ``"bulk"``, ``"dataflow"`` or ``"rank"``.
    system : Network
        The network (for link names and bandwidths).
    events : int
        Number of simulation events (rate periods).
    verified : bool
        True only if the verifier ran on the schedule and passed it (here, or before: the
        caller passed its report); False for ``simulate(..., check=False)``.
    form : str
        ``"explicit"``: every transfer was simulated.  ``"symmetric"`` or ``"repeated"``: the
        schedule's representatives or its classes of steps stood for it
        (:meth:`collsim.kinds.network.model.NetworkModel.simulate_compact`): the totals, step
        times and link statistics are the whole schedule's, ``transfer_start_s`` and
        ``transfer_finish_s`` the representatives'.
    transfers : int, optional
        Transfers of the whole schedule, where they are not the ``transfer_start_s`` simulated.

    References
    ----------
    H. Casanova, A. Legrand, M. Quinson, "SimGrid: a generic framework for large-scale
    distributed experiments", UKSim 2008 (flow-level network simulation, used by
    seed 003); D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall,
    1992, ch. 6 (max-min fair rates).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Line
    >>> line = Line(nodes=4, link_bandwidth_bytes_per_s=1e9, link_latency_s=0)
    >>> r = simulate(collsim.build("pairwise", line, "alltoall", 1000))
    >>> r.step_time_s.round(9).tolist(), r.max_link_load, r.peak_link_flows   # phase 2: 2 flows share a link
    ([1e-06, 2e-06, 1e-06], 2, 2)
    >>> r.total_time_s, r.link_bytes.tolist(), r.verified
    (4e-06, [3000, 4000, 3000, 3000, 4000, 3000], True)
    """

    total_time_s: float
    step_time_s: np.ndarray
    transfer_start_s: np.ndarray
    transfer_finish_s: np.ndarray
    link_bytes: np.ndarray
    link_busy_s: np.ndarray
    max_link_load: int
    peak_link_flows: int
    mode: str
    system: Any = field(repr=False)
    events: int = 0
    verified: bool = False
    form: str = "explicit"
    transfers: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Totals, per-step times and per-link utilisation (links that carried bytes).

        Returns
        -------
        dict
            ``utilisation`` is bytes / (bandwidth * total time); ``busy_fraction`` is
            busy time / total time.
        """
        total = self.total_time_s
        bw = self.system.links.bandwidth_bytes_per_s
        used = np.flatnonzero((self.link_bytes > 0) | (self.link_busy_s > 0))
        links = [{"link": self.system.link_name(int(i)), "bytes": int(self.link_bytes[i]),
                  "busy_s": float(self.link_busy_s[i]),
                  "busy_fraction": float(self.link_busy_s[i] / total) if total > 0 else 0.0,
                  "utilisation": float(self.link_bytes[i] / (bw[i] * total)) if total > 0 else 0.0}
                 for i in used]
        return {"mode": self.mode, "total_time_s": float(total), "steps": len(self.step_time_s),
                "transfers": len(self.transfer_start_s) if self.transfers is None else self.transfers,
                "form": self.form, "events": self.events,
                "max_link_load": self.max_link_load, "peak_link_flows": self.peak_link_flows,
                "total_link_bytes": int(self.link_bytes.sum()),
                "step_time_s": [float(x) for x in self.step_time_s], "links": links, "verified": self.verified}


def _dependencies(s: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dataflow dependencies: CSR ``(ptr, targets)`` by producing transfer, and in-degrees.

    Transfer ``t`` depends on ``u`` when ``step u < step t``, ``dst u == src t`` and
    they carry a common chunk.  Deliveries are sorted by ``(node, chunk, step)``; each
    (transfer, chunk) pair of a sender finds its earlier deliveries by binary search.
    """
    n = len(s.src)
    lens = np.diff(s.chunk_ptr)
    owner = np.repeat(np.arange(n), lens)
    chunk = s.chunk_idx[s.chunk_ptr[0]:s.chunk_ptr[-1]]
    nchunks = max(int(s.collective.chunks), int(chunk.max()) + 1 if chunk.size else 1)
    nsteps = int(s.step.max()) + 1 if n else 1
    key_in = s.dst[owner] * nchunks + chunk  # (node, chunk) delivered
    key_need = s.src[owner] * nchunks + chunk  # (node, chunk) needed
    if (int(max(s.src.max(), s.dst.max())) + 1) * nchunks * nsteps >= 2 ** 62:  # rank-compress the keys
        keys = _unique(key_in)
        key_in = np.searchsorted(keys, key_in)
        pos = np.minimum(np.searchsorted(keys, key_need), keys.size - 1)
        key_need = np.where(keys[pos] == key_need, pos, -1)
    comb = key_in * nsteps + s.step[owner]
    order = np.argsort(comb)
    comb_sorted = comb[order]
    q = np.argsort(key_need)  # sorted queries make the binary searches cache-friendly
    base = key_need[q] * nsteps
    lo = np.searchsorted(comb_sorted, base)
    hi = np.searchsorted(comb_sorted, base + s.step[owner[q]])
    cnt = np.maximum(hi - lo, 0)
    tgt = np.repeat(owner[q], cnt)
    total = int(cnt.sum())
    src = owner[order[np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)]]
    src, tgt = np.divmod(_unique(src * n + tgt), n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, tgt, np.bincount(tgt, minlength=n)


def simulate(schedule: Schedule, *, mode: str = "bulk", report=None, check: bool = True) -> SimResult:  # noqa: C901, PLR0915
    """Verify a schedule, then simulate it with max-min fair bandwidth sharing (see the module docstring).

    Parameters
    ----------
    schedule : Schedule or path
        A schedule on an electrical network (with ``route_links``), or a schedule file
        (JSON or ``.npz``) to load.
    mode : {"bulk", "dataflow", "rank"}, optional
        Bulk-synchronous steps, data-driven starts, or MPI ranks without barriers (a
        transfer starts when both its ends have finished their earlier steps).
    report : VerifyReport, optional
        The schedule's report from :func:`collsim.verify`: it passed, and is not verified again.
    check : bool, optional
        Verify the schedule when no ``report`` is given (default True).  False simulates it
        unverified: the result then says ``verified=False``.

    Returns
    -------
    SimResult
        Times, per-step durations and per-link statistics; ``verified`` says whether the
        verifier passed the schedule.

    Raises
    ------
    VerificationError
        If the schedule fails the verifier (``check=True``, no report).
    UnsupportedError
        For schedules without link routes (optical rings), or whose traffic (bytes times links
        crossed, summed) exceeds 2**63 - 1, the most the int64 link counters hold.
    InputError
        For an unknown mode, or a report of another schedule.

    References
    ----------
    H. Casanova, A. Legrand, M. Quinson, "SimGrid: a generic framework for large-scale
    distributed experiments", UKSim 2008 (flow-level simulation with fair sharing);
    D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall, 1992, ch. 6
    (max-min fairness).

    Examples
    --------
    >>> import collsim
    >>> from collsim.kinds.network.electrical import Ring
    >>> ring = Ring(nodes=4, link_latency_s=1e-6, link_bandwidth_bytes_per_s=1e9)
    >>> s = collsim.build("ring", ring, "allgather", 1000)
    >>> r = simulate(s)
    >>> round(r.total_time_s, 12), r.verified   # 3 uncongested steps of 1 us + 1000 B / (1 GB/s)
    (6e-06, True)
    >>> simulate(s.take(range(len(s) - 1)))     # the last transfer dropped
    Traceback (most recent call last):
    ...
    collsim.core.errors.PostconditionError: postcondition not met: node 0 lacks chunk 1 (node 0, chunk 1)
    >>> simulate(s.take(range(len(s) - 1)), check=False).verified
    False
    """
    schedule = load_schedule(schedule, what="simulate")  # a schedule, or the file it names
    if mode not in MODES:
        raise InputError(f"unknown simulation mode {mode!r}; known: {', '.join(MODES)}")
    require(schedule.system, "flow-simulation", "the flow simulator")  # optical schedules: collsim.cost
    weights = step_weights(schedule)  # whole steps each standing for several alike (collsim.core.repeated)
    if weights is not None and mode != "bulk":
        raise UnsupportedError(f"steps that stand for several alike are timed in bulk mode only, not {mode!r}")
    verified = _verify(schedule, report, check)
    traffic = traffic_bytes(schedule)  # every link's byte total is at most this: int64 counters cannot overflow
    if traffic > MAX_BYTES:
        raise UnsupportedError(f"the flow simulator counts each link's bytes in int64, and this schedule moves "
                               f"{traffic} bytes over links (bytes x links crossed, summed over transfers), "
                               f"beyond 2**63-1 = {MAX_BYTES}: simulate a smaller size_bytes")
    system = schedule.system
    lt = system.links
    routes = schedule.routes
    ptr = np.asarray(routes.route_ptr, np.int64)  # per path: a transfer, or with ECMP one of its sub-flows
    links = np.asarray(routes.route_links, np.int64)
    n = len(schedule.src)
    size = schedule.size_bytes
    hops = schedule.hops
    fixed = transfer_fixed_s(schedule) if n else np.zeros(0)
    moving = (size > 0) & (hops > 0)
    multipath = routes.multipath
    owner = routes.path_owner
    # bytes of every path: its share of its transfer (ECMP sub-flows), or the whole transfer
    psize = size[owner] * routes.weights if multipath else size
    pfixed = path_fixed_s(schedule) if multipath and n else fixed
    model = system_model(system)
    esize = psize  # the bytes the engine moves: the real ones, or weighted by the model's segment rate
    node_work = None
    if model is not None and n:
        fixed = model.fixed_s(size)
        pfixed = fixed[owner] if multipath else fixed
        scale = transfer_bandwidth_bytes_per_s(schedule) / model.rate_bytes_per_s(size)
        scale[~np.isfinite(scale)] = 1.0
        esize = psize * (scale[owner] if multipath else scale)
        overhead, local = loggp_node_work_s(schedule, model)
        node_work = overhead + local  # (steps, nodes): seconds on the node after its flows
        if mode != "bulk":  # no step barrier: the receiver's work delays that transfer's finish
            per = node_work[schedule.step, schedule.dst]
            fixed = fixed + per
            pfixed = fixed[owner] if multipath else fixed
    phops = routes.path_hops
    left = np.diff(routes.path_ptr).copy() if multipath else None  # sub-flows still sending per transfer
    link_bytes = np.zeros(len(lt), np.int64)
    # a whole step standing for several alike carries their bytes (its weight times its own)
    pweight = psize if weights is None else psize * weights[schedule.step[owner] if multipath else schedule.step]
    for lo, hi in row_blocks(ptr):  # bounded temporaries: one block of route entries at a time
        block = np.bincount(links[ptr[lo]:ptr[hi]], weights=np.repeat(pweight[lo:hi], phops[lo:hi]).astype(np.float64),
                            minlength=len(lt))
        link_bytes += np.rint(block).astype(np.int64)
    start = np.zeros(n)
    finish = np.zeros(n)
    eng = _Engine(ptr, links, lt.bandwidth_bytes_per_s, _repeats(ptr, links, esize, pfixed))

    def paths_of(ids: np.ndarray) -> np.ndarray:
        """The paths (sub-flows) of transfers ``ids``."""
        return ids if not multipath else _gather(routes.path_ptr, np.arange(routes.paths), ids)[1]

    def complete(done: np.ndarray) -> np.ndarray:
        """Record paths whose last byte was sent; return the transfers whose every sub-flow is done."""
        if not multipath:
            finish[done] = eng.now + fixed[done]
            return done
        np.maximum.at(finish, owner[done], eng.now + pfixed[done])  # a transfer ends with its last sub-flow
        t, c = np.unique(owner[done], return_counts=True)
        left[t] -= c
        return t[left[t] == 0]
    bounds = schedule.step_bounds
    nsteps = len(bounds) - 1
    if mode == "bulk":
        step_time = np.zeros(nsteps)
        for k in range(nsteps):
            ids = np.arange(bounds[k], bounds[k + 1])
            t0 = eng.now
            busy_before = None if weights is None else eng.busy.copy()
            start[ids] = t0
            finish[ids] = t0 + fixed[ids]  # zero-byte flows; the others are overwritten below
            eng.admit(paths_of(ids[moving[ids]]), esize)
            while eng.ids.size:
                complete(eng.step_to(np.inf))
            end = float(finish[ids].max()) if ids.size else t0
            if node_work is not None and ids.size:  # each rank's overhead and local work, after its flows
                last = np.full(system.nodes, t0)
                np.maximum.at(last, schedule.src[ids], finish[ids])
                np.maximum.at(last, schedule.dst[ids], finish[ids])
                end = max(end, float((last + node_work[k]).max()))
            step_time[k] = end - t0
            eng.now = end
            if busy_before is not None:  # the steps it stands for keep its links as busy as it did
                eng.busy += (eng.busy - busy_before) * (weights[k] - 1)
        total = eng.now if weights is None else weighted_sum(step_time, schedule)
    else:
        dep_ptr, dep_tgt, indeg = (rank_dependencies if mode == "rank" else _dependencies)(schedule)
        ready = np.zeros(n)
        heap: list[tuple[float, int, np.ndarray]] = []
        tick = 0

        def push(ids: np.ndarray) -> None:
            nonlocal tick
            if ids.size == 0:
                return
            times = ready[ids]
            order = np.argsort(times, kind="stable")
            ids, times = ids[order], times[order]
            cuts = np.flatnonzero(np.diff(times)) + 1
            for part in np.split(np.arange(ids.size), cuts):
                heapq.heappush(heap, (float(times[part[0]]), tick, ids[part]))
                tick += 1

        def release(done: np.ndarray) -> None:
            lens, tg = _gather(dep_ptr, dep_tgt, done)
            if tg.size == 0:
                return
            np.maximum.at(ready, tg, np.repeat(finish[done], lens))
            np.subtract.at(indeg, tg, 1)
            push(_unique(tg[indeg[tg] == 0]))

        push(np.flatnonzero(indeg == 0))
        while heap or eng.ids.size:
            done = eng.step_to(heap[0][0] if heap else np.inf)
            if done.size:
                release(complete(done))
                continue
            now = eng.now
            batch = []
            while heap and heap[0][0] <= now:
                batch.append(heapq.heappop(heap)[2])
            ids = np.concatenate(batch)
            start[ids] = now
            still = ids[~moving[ids]]
            finish[still] = now + fixed[still]
            eng.admit(paths_of(ids[moving[ids]]), esize)
            release(still)
        total = float(finish.max()) if n else 0.0
        step_time = np.zeros(nsteps)
        nonempty = np.flatnonzero(np.diff(bounds) > 0)
        if nonempty.size:
            step_time[nonempty] = np.maximum.reduceat(finish, bounds[nonempty])
    return SimResult(total_time_s=float(total), step_time_s=step_time, transfer_start_s=start,
                     transfer_finish_s=finish, link_bytes=link_bytes, link_busy_s=eng.busy,
                     max_link_load=schedule.max_link_load(), peak_link_flows=eng.peak, mode=mode,
                     system=system, events=eng.events, verified=verified)


def _repeats(ptr: np.ndarray, links: np.ndarray, *columns: np.ndarray) -> np.ndarray:
    """Per path: whether it repeats the path before it (the same links in order and the same
    ``columns``: bytes and fixed latency), so that started together they are one flow with copies."""
    n = len(ptr) - 1
    same = np.zeros(n, bool)
    if n < 2:
        return same
    hops = np.diff(ptr)
    same[1:] = hops[1:] == hops[:-1]
    for col in columns:
        same[1:] &= col[1:] == col[:-1]
    for lo, hi in row_blocks(ptr):  # bounded temporaries: one block of route entries at a time
        lo = max(lo, 1)
        if hi <= lo:
            continue
        entry = np.arange(ptr[lo], ptr[hi])
        owner = np.repeat(np.arange(lo, hi), hops[lo:hi])
        differ = links[entry] != links[np.maximum(entry - hops[owner], 0)]
        same[owner[differ]] = False  # repeated indices are fine: no sort needed
    return same


def _verify(schedule: Schedule, report, check: bool) -> bool:
    """Whether the schedule passed the verifier: ``report`` is its proof, else verify it (if ``check``)."""
    if report is not None:
        if not isinstance(report, VerifyReport) or not report.describes(schedule):
            raise InputError("simulate's report must be collsim.verify's report of this schedule")
        return True
    if not check:
        return False
    verify_endpoints(schedule)  # collsim.verify's checks of a network schedule (NetworkModel.check_resources)
    verify_network_resources(schedule)
    verify_dataflow(schedule)
    return True
