"""How the ranking of optical algorithms changes with a fixed per-slot latency.

collsim's optical step model charges ``slot_latency_s`` once per physical slot
(docs/cost-models.md), so an algorithm's time is linear in it::

    T(L) = T(0) + slots * L

Each schedule is therefore built and verified once, at ``L = 0``, and its time
at any latency follows from its slot count.  (An algorithm whose default
parameters depend on the latency, as OpTree's tree search and striped-stages'
radices do, is drawn with its choice at ``L = 0``; ``tuned=True`` draws every
parameter set it proposes and keeps those that win somewhere.)
Because the lines are exact, the latencies where two algorithms swap places,
and where the fastest one changes, are computed exactly rather than read off
the sampled latencies.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Iterable

from ....algorithms import get_algorithm
from ....core.errors import InputError
from ....core.units import format_size, format_time, parse_size
from ....core.validate import number
from ....kinds.optical_ring.cost import step_times
from ....kinds.optical_ring.physical import check_schedule
from ....pipeline import build, verify
from ....systems import load_system
from ...compare import applicable
from ...sweep.store import canonical_json
from ...report.paperout import pyplot, save_figure

DEFAULT_LATENCIES_S = (0.0, 0.5e-6, 1e-6, 2e-6, 5e-6, 10e-6)
"""The latencies swept: 0 to 10 µs."""


def slot_latency_crossover(nodes: int = 1024, wavelengths: int = 64, size: str | int = "4MiB",
                           latencies_s: Iterable[float] = DEFAULT_LATENCIES_S,
                           algorithms: Iterable[str] | None = None, *, system: str = "paper",
                           collective: str = "allgather", tuned: bool = False, store=None) -> list[dict]:
    """Verified time of every applicable optical algorithm at each per-slot latency."""
    lats = [number("latency", v, lo=0) for v in latencies_s]
    if not lats:
        raise InputError("slot_latency_crossover needs at least one latency")
    ring, size_bytes, lines = _line_specs(nodes, wavelengths, size, algorithms, system, collective, tuned)
    base, feasible = {}, {}
    for point, name, params in lines:  # built and verified once: the time is linear in the latency
        rec = None if store is None else store.get(point)
        if rec is None or rec["status"] != "ok":
            rec = {"result": _line(ring, collective, size_bytes, name, params)}
            if store is not None:
                store.put(point, rec["result"])
        line = rec["result"]
        base[_label(name, params)] = (line["slots"], line["time_s"])
        feasible[_label(name, params)] = line["feasible"]
    names = list(dict.fromkeys(name for _, name, _ in lines))
    if tuned:
        base = _envelope(base, names, lats)
    rows = []
    for lat in lats:
        times = sorted(((t0 + s * lat, s, name) for name, (s, t0) in base.items()))
        for rank, (t, s, name) in enumerate(times, 1):
            rows.append({"nodes": ring.nodes, "wavelengths": ring.wavelengths, "size_bytes": size_bytes,
                         "latency_s": lat, "algorithm": name, "slots": s, "time_s": t,
                         "rank": rank, "best": rank == 1, "feasible": feasible[name]})
    return rows


def _line_specs(nodes, wavelengths, size, algorithms, system: str, collective: str, tuned: bool):
    """The ring (no slot latency), the size in bytes, and every line drawn: its store point, algorithm
    and parameters."""
    ring = load_system(system, nodes=nodes, wavelengths=wavelengths)
    if getattr(ring, "topology", None) != "optical-ring":
        raise InputError(f"slot latency is an optical-ring parameter; {system!r} is not an optical ring")
    ring = dataclasses.replace(ring, slot_latency_s=0.0)
    size_bytes = parse_size(size) if isinstance(size, str) else size
    names = [a for a, why in applicable(ring, collective) if why is None] if algorithms is None else list(algorithms)
    if not names:
        raise InputError(f"no algorithm can run {collective} on this ring")
    out = []
    for name in names:
        for params in (get_algorithm(name).candidates(ring, collective, size_bytes) if tuned else [{}]):
            point = {"experiment": "slot-latency-line", "system": system, "nodes": ring.nodes,
                     "wavelengths": ring.wavelengths, "collective": collective, "size_bytes": size_bytes,
                     "algorithm": name, "params": _label(name, params)}
            out.append((point, name, params))
    return ring, size_bytes, out


def _line(ring, collective: str, size_bytes: int, name: str, params: dict) -> dict:
    """One line's facts at latency 0: slots, time and physical feasibility of its verified schedule."""
    sched = build(name, ring, collective, size_bytes, **params)
    verify(sched)
    return {"slots": int(sched.num_steps), "time_s": float(step_times(sched).total_s),
            "feasible": bool(check_schedule(sched, ring.physical_params()).feasible)}


def _missing_lines(args: tuple) -> list[tuple[dict, dict]]:
    """A process's share of :func:`fill_lines`: every line of one size not in ``done``, built."""
    nodes, wavelengths, size, system, collective, tuned, done = args
    ring, size_bytes, lines = _line_specs(nodes, wavelengths, size, None, system, collective, tuned)
    return [(point, _line(ring, collective, size_bytes, name, params)) for point, name, params in lines
            if canonical_json(point) not in done]


def fill_lines(nodes: int, wavelengths: int, sizes: Iterable[str | int], *, store, jobs: int = 1,
               system: str = "paper", collective: str = "allgather", tuned: bool = False) -> int:
    """Build the lines of :func:`slot_latency_crossover` that the store lacks, a size a process, and store them.

    With ``jobs`` > 1 the sizes' lines are built side by side (each size's in a process of its own,
    which sends back only the lines' facts; this process stores them), so that
    :func:`slot_latency_crossover` then reads every line from the store.

    Returns
    -------
    int
        The lines built.
    """
    todo = []
    for size in sizes:
        _, _, lines = _line_specs(nodes, wavelengths, size, None, system, collective, tuned)
        done = {canonical_json(p) for p, _, _ in lines if (rec := store.get(p)) is not None and rec["status"] == "ok"}
        if len(done) < len(lines):
            todo.append((nodes, wavelengths, size, system, collective, tuned, done))
    if len(todo) > 1 and jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx) as pool:
            made = list(pool.map(_missing_lines, todo))
    else:
        made = [_missing_lines(args) for args in todo]
    for lines in made:
        for point, result in lines:
            store.put(point, result)
    return sum(len(lines) for lines in made)


def _label(name: str, params: dict) -> str:
    """``striped-stages[radices=32x32,stage=pipeline]``: an algorithm with its parameters."""
    if not params:
        return name
    text = ",".join(f"{k}={'x'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                    for k, v in sorted(params.items()))
    return f"{name}[{text}]"


def _envelope(base: dict[str, tuple[int, float]], names: list[str], lats: list[float]) -> dict:
    """Each algorithm's fastest line at the smallest latency, and every line fastest somewhere."""
    keep = set()
    for name in names:
        mine = [k for k in base if k == name or k.startswith(name + "[")]
        if mine:
            keep.add(min(mine, key=lambda k: (base[k][1] + base[k][0] * lats[0], base[k][0], k)))
    rows = [{"algorithm": k, "slots": s, "time_s": t0, "latency_s": 0.0} for k, (s, t0) in base.items()]
    keep.add(min(base, key=lambda k: (base[k][1] + base[k][0] * min(lats), base[k][0], k)))
    keep |= {c["after"] for c in crossovers(rows, max(lats))}
    return {k: v for k, v in base.items() if k in keep}


def _lines(rows: list[dict]) -> dict[str, tuple[float, int]]:
    """``{algorithm: (time at latency 0, slots)}`` recovered from the rows."""
    out = {}
    for r in rows:
        out.setdefault(r["algorithm"], (r["time_s"] - r["slots"] * r["latency_s"], r["slots"]))
    return out


def crossovers(rows: list[dict], upto: float | None = None) -> list[dict]:
    """Latencies, within the rows' range, where the fastest algorithm changes."""
    if not rows:
        return []
    lines = _lines(rows)
    lo = min(r["latency_s"] for r in rows)
    hi = max(r["latency_s"] for r in rows) if upto is None else upto
    at = lo
    best = min(lines, key=lambda a: (lines[a][0] + lines[a][1] * lo, lines[a][1], a))
    out = []
    while True:
        c_b, s_b = lines[best]
        nxt = None
        for a, (c_a, s_a) in lines.items():
            if s_a < s_b:  # only a flatter line can overtake
                x = max((c_a - c_b) / (s_b - s_a), at)
                if nxt is None or (x, s_a, a) < nxt:
                    nxt = (x, s_a, a)
        if nxt is None or nxt[0] > hi:
            return out
        out.append({"latency_s": nxt[0], "before": best, "after": nxt[2]})
        at, best = nxt[0], nxt[2]


def pair_crossovers(rows: list[dict]) -> list[dict]:
    """Every latency > 0 where two algorithms swap places, inside the rows' range or beyond it."""
    lines = sorted(_lines(rows).items())
    out = []
    for i, (a, (c_a, s_a)) in enumerate(lines):
        for b, (c_b, s_b) in lines[i + 1:]:
            if s_a == s_b:
                continue
            (many, c_m, s_m), (few, c_f, s_f) = sorted(((a, c_a, s_a), (b, c_b, s_b)), key=lambda t: -t[2])
            x = (c_f - c_m) / (s_m - s_f)
            if x > 0:
                out.append({"latency_s": x, "faster_below": many, "faster_above": few})
    return sorted(out, key=lambda c: (c["latency_s"], c["faster_below"], c["faster_above"]))


def plot_slot_latency(rows: list[dict], out_dir: str | Path, name: str = "slot-latency") -> tuple[Path, Path]:
    """Draw each algorithm's time against the per-slot latency, crossovers marked."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return save_figure(slot_latency_figure(rows), out_dir, name)


def slot_latency_figure(rows: list[dict]):
    """The figure :func:`plot_slot_latency` saves (each algorithm's time against the per-slot latency)."""
    plt = pyplot()
    lines = _lines(rows)
    feasible = {r["algorithm"]: r.get("feasible", True) for r in rows}
    lats = sorted({r["latency_s"] for r in rows})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for alg, (c, s) in sorted(lines.items(), key=lambda kv: kv[1][0] + kv[1][1] * lats[-1]):
        dense = [lats[0] + (lats[-1] - lats[0]) * i / 200 for i in range(201)]  # lines curve on a log axis
        ok = feasible.get(alg, True)
        (line,) = ax.plot([x * 1e6 for x in dense], [c + s * x for x in dense], ls="-" if ok else ":",
                          label=f"{alg} ({s} slots{'' if ok else ', infeasible'})")
        ax.plot([x * 1e6 for x in lats], [c + s * x for x in lats], "o", ms=3, color=line.get_color())
    for cx in crossovers(rows):
        x = cx["latency_s"]
        c, s = lines[cx["after"]]
        ax.axvline(x * 1e6, color="grey", ls=":", lw=1)
        ax.annotate(f"{cx['before']} \u2192 {cx['after']}\n{format_time(x)}", (x * 1e6, c + s * x),
                    textcoords="offset points", xytext=(4, 8), fontsize=8)
    inside = crossovers(rows)
    beyond = crossovers(rows, math.inf)[len(inside):]
    # at a tie in time the fewer slots win, then the name: the rows' rank and crossovers() order them so too
    last = inside[-1]["after"] if inside else min(lines, key=lambda a: (lines[a][0] + lines[a][1] * lats[0],
                                                                        lines[a][1], a))
    c0 = lines[last][0] + lines[last][1] * lats[0]
    tied = sorted(a for a in lines if a != last and math.isclose(lines[a][0] + lines[a][1] * lats[0], c0,
                                                                rel_tol=1e-12) and not inside)
    note = (f"{last} stays fastest to {format_time(lats[-1])}"
            + (f" (tied at {format_time(lats[0])} with {', '.join(tied)}: more slots)" if tied else "") + (
        f"; {beyond[0]['after']} overtakes it at {format_time(beyond[0]['latency_s'])}" if beyond else ""))
    ax.set_yscale("log")
    ax.set_xlabel("per-slot latency (\u00b5s)")
    ax.set_ylabel("time (s), collsim's optical step model")
    r0 = rows[0]
    ax.set_title(f"{format_size(r0['size_bytes'])} per node, N={r0['nodes']}, w={r0['wavelengths']}: "
                 f"time against per-slot latency\n{note}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
