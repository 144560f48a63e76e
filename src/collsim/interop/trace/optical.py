"""Timelines of optical schedules: every slot's lightpaths on a track per fiber and wavelength.

Time is collsim's optical step model (:func:`collsim.kinds.optical_ring.cost.step_times`,
``docs/cost-models.md``): slot ``k`` starts at ``T_k``, the sum of the earlier slots'
times; it first reconfigures the MRRs (``mrr_reconfig_s``) if its lightpaths differ from
the previous slot's, then every lightpath sends for its own serialisation plus O/E/O time
(:func:`collsim.kinds.optical_ring.cost.transfer_time_s`, over its band), and the slot ends after its
slowest lightpath plus the per-slot latency (``slot_latency_s``).

Tracks (``docs/formats.md``, "Timeline traces"):

* ``slots`` (pid 1): thread ``slots``, one slice per slot (``slot 7``, args ``slot``,
  ``lightpaths``, ``reconfigured``, ``time_s``); thread ``phases``: the slot's
  ``reconfigure`` and ``slot latency`` parts, where they are not zero;
* one process per ring, direction and fiber (``fiber 0 cw``; on a torus ``row 3 fiber 0
  cw``), one thread per wavelength (``λ5``): one slice per lightpath (a schedule row; a band
  of ``b`` wavelengths is one slice on the thread of its lowest wavelength, with ``band`` and
  ``wavelengths`` in its args), named ``n3->n5``, args ``transfer``, ``slot``, ``round``,
  ``src``, ``dst``, ``hops``, ``direction``, ``fiber``, ``wavelength``, ``band``,
  ``wavelengths``, ``size_bytes``, ``chunks``, ``chunk_ids``.  One wavelength of one fiber
  carries several lightpaths in a slot when their arcs are disjoint (the verifier forbids
  sharing a channel on a *link*, not on the ring): those go on extra lanes, ``λ5 #2`` ...

References
----------
N. Duca, D. Sinclair et al. (Google, the Chromium project), "Trace Event Format", 2016;
F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024 (the time model).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...core.plugins import require, supports
from ...core.schedule import Schedule
from ...kinds.optical_ring.cost import step_times, transfer_time_s
from .events import MAX_TRACE_BYTES, Slices, TraceSummary, check_trace_size, estimate_bytes, first_chunk_ids, write_trace
from .network import write_alpha_beta_trace

_LIGHTPATH_BYTES, _SLOT_BYTES = 330, 150  # JSON bytes per slice (upper-ish)
_LAMBDA = "\u03bb"


def write_optical_trace(path: str | Path, schedule: Schedule, *, max_bytes: int = MAX_TRACE_BYTES) -> TraceSummary:
    """Write an optical schedule's lightpaths, slot by slot, as a trace-event JSON file."""
    require(schedule.system, "trace-lightpaths", "a lightpath timeline")  # else write_alpha_beta_trace
    s, system = schedule, schedule.system
    t, nsteps = len(s), s.num_steps
    check_trace_size(estimate_bytes([(t, _LIGHTPATH_BYTES), (3 * nsteps, _SLOT_BYTES)], 2 * t // max(nsteps, 1) + 2),
                     f"the trace of {t} lightpaths", max_bytes)
    times = step_times(s)
    step_s = times.step_time_s
    begin = np.concatenate([[0.0], np.cumsum(step_s)])
    reconf_s = times.reconfigured * system.mrr_reconfig_s
    band = s.band
    own = transfer_time_s(system, s.size_bytes, band if (band > 1).any() else 1)
    start = begin[s.step] + reconf_s[s.step]
    end = np.minimum(start + own, begin[s.step + 1])
    # processes: ring (torus: dimension and ring), direction, fiber
    coords = getattr(system, "ring_coords", None)  # systems made of several rings say which ring
    if coords is not None:
        dim, ring = coords(s.src, s.dst)[:2]
        ring_id = dim * max(system.rows, system.cols) + ring
    else:
        ring_id = np.zeros(t, np.int64)
    fibers = system.fibers
    cw = s.direction > 0
    key = (ring_id * 2 + (~cw).astype(np.int64)) * fibers + s.fiber
    keys, inv = np.unique(key, return_inverse=True)
    pid = inv.reshape(-1) + 2
    processes = {1: ("slots", 0)}
    for i, k in enumerate(keys.tolist()):
        rid, rest = divmod(k, 2 * fibers)
        ccw, fib = divmod(rest, fibers)
        where = ""
        if coords is not None:
            d, r = divmod(rid, max(system.rows, system.cols))
            where = f"{'row' if d == 0 else 'column'} {r} "
        processes[i + 2] = (f"{where}fiber {fib} {'ccw' if ccw else 'cw'}", i + 1)
    counts = np.diff(s.step_bounds)

    def lightpath_body(rows: np.ndarray) -> list:
        ids = first_chunk_ids(s.chunk_ptr, s.chunk_idx, rows)
        out = []
        for r, st, rd, a, b, h, d, f, w, bd, sz, c, ci in zip(
                rows.tolist(), s.step[rows].tolist(), s.round[rows].tolist(), s.src[rows].tolist(),
                s.dst[rows].tolist(), s.hops[rows].tolist(), cw[rows].tolist(), s.fiber[rows].tolist(),
                s.wavelength[rows].tolist(), band[rows].tolist(), s.size_bytes[rows].tolist(),
                (s.chunk_ptr[rows + 1] - s.chunk_ptr[rows]).tolist(), ids):
            out.append(f'"name":"n{a}->n{b}","cat":"lightpath","args":{{"transfer":{r},"slot":{st},"round":{rd},'
                       f'"src":"n{a}","dst":"n{b}","hops":{h},"direction":"{"cw" if d else "ccw"}","fiber":{f},'
                       f'"wavelength":{w},"band":{bd},"wavelengths":"{w}..{w + bd - 1}","size_bytes":{sz},'
                       f'"chunks":{c},"chunk_ids":{ci}}}')
        return out

    slot_ids = np.flatnonzero(counts > 0)
    phase_kind = np.concatenate([np.zeros(nsteps, np.int64), np.ones(nsteps, np.int64)])
    phase_step = np.concatenate([np.arange(nsteps), np.arange(nsteps)])
    p0 = np.concatenate([begin[:-1], begin[1:] - system.slot_latency_s])
    p1 = np.concatenate([begin[:-1] + reconf_s, begin[1:]])
    keep = p1 > p0
    phase_kind, phase_step, p0, p1 = phase_kind[keep], phase_step[keep], p0[keep], p1[keep]
    p0 = np.minimum(p0, p1)
    sets = [
        Slices(np.ones(len(slot_ids), np.int64), np.zeros(len(slot_ids), np.int64), begin[slot_ids],
               begin[slot_ids + 1],
               lambda rows: [f'"name":"slot {k}","cat":"slot","args":{{"slot":{k},"lightpaths":{c},'
                             f'"reconfigured":{"true" if rc else "false"},"time_s":{ts!r}}}'
                             for k, c, rc, ts in zip(slot_ids[rows].tolist(), counts[slot_ids[rows]].tolist(),
                                                     times.reconfigured[slot_ids[rows]].tolist(),
                                                     step_s[slot_ids[rows]].tolist())],
               lambda p, g, lane: "slots" if lane == 0 else f"slots #{lane + 1}", _SLOT_BYTES),
        Slices(np.ones(len(p0), np.int64), np.ones(len(p0), np.int64), p0, p1,
               lambda rows: [f'"name":"{"reconfigure" if k == 0 else "slot latency"}","cat":"phase",'
                             f'"args":{{"slot":{st}}}' for k, st in zip(phase_kind[rows].tolist(),
                                                                        phase_step[rows].tolist())],
               lambda p, g, lane: "phases" if lane == 0 else f"phases #{lane + 1}", _SLOT_BYTES),
        Slices(pid, s.wavelength.astype(np.int64), start, end, lightpath_body,
               lambda p, g, lane: f"{_LAMBDA}{g}" + ("" if lane == 0 else f" #{lane + 1}"), _LIGHTPATH_BYTES),
    ]
    c = s.collective
    total = float(begin[-1])
    other = {"generator": "collsim", "model": "optical step model", "algorithm": s.algorithm, "collective": c.name,
             "size_bytes": int(c.size_bytes), "system": system.name, "nodes": system.nodes, "slots": nsteps,
             "transfers": t, "total_time_s": total, "time_unit": "ts and dur in microseconds"}
    return write_trace(path, processes, sets, other, display_time_unit="ns" if total < 1e-3 else "ms")


def write_schedule_trace(path: str | Path, schedule: Schedule, *, max_bytes: int = MAX_TRACE_BYTES) -> TraceSummary:
    """The timeline ``collsim schedule --trace`` writes: lightpaths (optical) or the α–β steps (electrical)."""
    if supports(schedule.system, "trace-lightpaths"):
        return write_optical_trace(path, schedule, max_bytes=max_bytes)
    return write_alpha_beta_trace(path, schedule, max_bytes=max_bytes)
