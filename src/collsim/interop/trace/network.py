"""Timelines of electrical schedules: the flow simulator's, or the α–β model's, as a trace.

Tracks (``docs/formats.md``, "Timeline traces"):

* ``steps`` (pid 1 ... see below): one slice per step, from the step's first start to
  its last finish (bulk-synchronous timelines only: the flow simulator's ``bulk`` mode and
  the α–β model; in ``dataflow`` mode steps overlap and have no track);
* one process per node that sends (``n3``, pid = node + 1): one slice per transfer it
  sends, from its start to its finish (last byte sent plus the route's fixed latency),
  named ``n3->n5``, with args ``transfer``, ``step``, ``size_bytes``, ``chunks`` (count),
  ``chunk_ids`` (the first four), ``src``, ``dst``, ``route`` (the vertices crossed,
  ``n3->s1->n5``) and ``reduce``;
* one process per busy link (``link n3->s1``, pid = N + 2 + link id): one slice per
  transfer of at least one byte crossing it, while the transfer sends (its start to its
  last byte; the latency is a pipeline delay that occupies no bandwidth,
  ``docs/flow-simulator.md``).

Concurrent slices of one node or link go on extra lanes (threads ``sends #2``,
``flows #2`` ...), assigned by :func:`collsim.interop.trace.lanes.assign_lanes`.

References
----------
N. Duca, D. Sinclair et al. (Google, the Chromium project), "Trace Event Format", 2016.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core.errors import InputError
from ...core.plugins import require
from ...core.schedule import Schedule
from ...cost.network import transfer_fixed_s, transfer_wire_s
from .events import MAX_TRACE_BYTES, Slices, TraceSummary, check_trace_size, estimate_bytes, first_chunk_ids, write_trace

_NODE_BYTES, _HOP_BYTES, _LINK_BYTES, _STEP_BYTES = 230, 12, 130, 130  # JSON bytes per slice (upper-ish)


def write_simulation_trace(path: str | Path, schedule: Schedule, result, *,
                           max_bytes: int = MAX_TRACE_BYTES) -> TraceSummary:
    """Write the flow simulator's timeline of a schedule as a trace-event JSON file."""
    _need_links(schedule)
    start, finish = result.transfer_start_s, result.transfer_finish_s
    if len(start) != len(schedule):
        raise InputError(f"the simulation has {len(start)} transfers but the schedule {len(schedule)}: "
                         "trace a schedule with its own simulation")
    send_end = np.maximum(start, finish - transfer_fixed_s(schedule))
    model = f"flow simulation, {result.mode}"
    return _write(path, schedule, start, send_end, finish, result.mode == "bulk", model,
                  float(result.total_time_s), max_bytes)


def write_alpha_beta_trace(path: str | Path, schedule: Schedule, *, max_bytes: int = MAX_TRACE_BYTES) -> TraceSummary:
    """Write the α–β timeline of an electrical schedule.

    Every step starts when the previous one ends; each transfer starts with its step,
    sends for as long as its busiest link needs for every byte crossing it in the step,
    then pays its start-up and route latency (:func:`collsim.cost.network.alpha_beta_time_s`:
    a step lasts its slowest transfer).  How shared links divide their rate over time is
    left out (the flow simulator's timeline has it, :func:`write_simulation_trace`).
    """
    _need_links(schedule)
    wire = transfer_wire_s(schedule)  # its busiest link's bytes in the step (ECMP: shares) over its bandwidth
    per = wire + transfer_fixed_s(schedule)
    step_s = np.zeros(schedule.num_steps)
    np.maximum.at(step_s, schedule.step, per)
    begin = np.concatenate([[0.0], np.cumsum(step_s)])
    start = begin[schedule.step]
    return _write(path, schedule, start, start + wire, start + per, True, "alpha-beta", float(begin[-1]), max_bytes)


def _need_links(schedule: Schedule) -> None:
    require(schedule.system, "trace-network", "a timeline of link transfers")


def _write(path, s: Schedule, start, send_end, finish, bulk: bool, model: str, total_s: float,
           max_bytes: int) -> TraceSummary:
    system = s.system
    n, t = system.nodes, len(s)
    routes = s.routes
    hops = routes.path_hops  # per path: one per transfer, or with ECMP each of its sub-flows
    size = s.size_bytes
    carries = size > 0
    ent_t = np.repeat(routes.path_owner, hops)  # transfer of every route entry
    ent_keep = carries[ent_t]
    ent_t, ent_link = ent_t[ent_keep], s.route_links[ent_keep]
    ent_bytes = (size[ent_t] if not routes.multipath
                 else np.rint(size[ent_t] * np.repeat(routes.weights, hops)[ent_keep]).astype(np.int64))
    npaths = np.diff(routes.path_bounds(np.arange(t + 1)))
    nsteps = s.num_steps
    check_trace_size(estimate_bytes([(t, _NODE_BYTES + _HOP_BYTES * int(hops.mean() if t else 0)),
                                     (len(ent_t), _LINK_BYTES), (nsteps if bulk else 0, _STEP_BYTES)],
                                    n + len(np.unique(ent_link)) + 1),
                     f"the trace of {t} transfers ({len(ent_t)} link crossings)", max_bytes)
    links = system.links
    vname = [system.vertex_name(v) for v in range(system.vertices)]
    lsrc, ldst = links.src.tolist(), links.dst.tolist()
    steps_pid, link_base = n + 1, n + 2
    busy = np.unique(ent_link)
    processes = {steps_pid: ("steps", 0)}
    processes.update({int(v) + 1: (vname[v], int(v) + 1) for v in np.unique(s.src)})
    processes.update({link_base + int(li): (f"link {vname[lsrc[li]]}->{vname[ldst[li]]}", n + 1 + k)
                      for k, li in enumerate(busy.tolist())})
    step = s.step

    def node_body(rows: np.ndarray) -> list:
        ids = first_chunk_ids(s.chunk_ptr, s.chunk_idx, rows)
        first_path = routes.path_bounds(rows)  # an ECMP transfer shows its first path and its path count
        lo, hi = s.route_ptr[first_path], s.route_ptr[first_path + 1]
        first = int(lo[0]) if len(rows) else 0
        path = links.src[s.route_links[first:int(hi[-1]) if len(rows) else 0]].tolist()
        last = links.dst[s.route_links[np.maximum(hi - 1, 0)]].tolist()
        out = []
        more = [f',"paths":{k}' if k > 1 else "" for k in npaths[rows].tolist()]
        for r, a, b, la, st, sz, c, ci, sv, dv, red, mp in zip(
                rows.tolist(), (lo - first).tolist(), (hi - first).tolist(), last, step[rows].tolist(),
                size[rows].tolist(), (s.chunk_ptr[rows + 1] - s.chunk_ptr[rows]).tolist(), ids,
                s.src[rows].tolist(), s.dst[rows].tolist(), s.reduce[rows].tolist(), more):
            route = "->".join([vname[v] for v in path[a:b]] + [vname[la]]) if b > a else vname[sv]
            out.append(f'"name":"{vname[sv]}->{vname[dv]}","cat":"transfer","args":{{"transfer":{r},"step":{st},'
                       f'"size_bytes":{sz},"chunks":{c},"chunk_ids":{ci},"src":"{vname[sv]}","dst":"{vname[dv]}",'
                       f'"route":"{route}"{mp},"reduce":{"true" if red else "false"}}}')
        return out

    def link_body(rows: np.ndarray) -> list:
        tr = ent_t[rows]
        return [f'"name":"{vname[a]}->{vname[b]}","cat":"link","args":{{"transfer":{x},"step":{st},"size_bytes":{sz}}}'
                for x, a, b, st, sz in zip(tr.tolist(), s.src[tr].tolist(), s.dst[tr].tolist(), step[tr].tolist(),
                                           ent_bytes[rows].tolist())]

    sets = []
    if bulk and t:
        bounds = s.step_bounds
        nonempty = np.flatnonzero(np.diff(bounds) > 0)
        sb = bounds[nonempty]
        s0, s1 = np.minimum.reduceat(start, sb), np.maximum.reduceat(finish, sb)
        sets.append(Slices(np.full(len(nonempty), steps_pid), np.zeros(len(nonempty), np.int64), s0, s1,
                           lambda rows: [f'"name":"step {k}","cat":"step","args":{{"step":{k},"transfers":{c}}}'
                                         for k, c in zip(nonempty[rows].tolist(),
                                                         np.diff(bounds)[nonempty[rows]].tolist())],
                           lambda p, g, lane: "steps" if lane == 0 else f"steps #{lane + 1}", _STEP_BYTES))
    sets.append(Slices(s.src + 1, np.zeros(t, np.int64), start, finish, node_body,
                       lambda p, g, lane: "sends" if lane == 0 else f"sends #{lane + 1}", _NODE_BYTES))
    sets.append(Slices(link_base + ent_link, np.zeros(len(ent_t), np.int64), start[ent_t], send_end[ent_t],
                       link_body, lambda p, g, lane: "flows" if lane == 0 else f"flows #{lane + 1}", _LINK_BYTES))
    c = s.collective
    other = {"generator": "collsim", "model": model, "algorithm": s.algorithm, "collective": c.name,
             "size_bytes": int(c.size_bytes), "system": system.name, "nodes": n, "steps": nsteps, "transfers": t,
             "total_time_s": total_s, "time_unit": "ts and dur in microseconds"}
    return write_trace(path, processes, sets, other, display_time_unit="ns" if total_s < 1e-3 else "ms")
