"""The numbers behind ``collsim reproduce optree``: every (algorithm, N, w, size) of seed 004's §V.

Two models time every point (docs/cost-models.md):

* ``eq3``: the papers' eq. (3), ``S (d/B + a)``, with S the paper's closed-form step
  count: N−1 (Ring), N/2 (NE), Table 1's WRHT formula, and for OpTree Theorem 2
  (Theorem 1 at Lemma 3's printed ceiling k*), as the paper's Tables 1–3 use it;
* ``schedule``: collsim's explicit, verified schedule timed by collsim's step model
  (``time_s``; OpTree's tree is collsim's exact search).

A schedule's structure (steps, lightpaths, how many chunks each transfer carries)
does not depend on the message size for these four algorithms, only its time does:
each (algorithm, N, w) is built and verified **once** and :func:`retime` times it
at every size (tests/test_reproduce_optree.py checks this against a rebuild).
OpTree's search may pick another tree for another size, so it is searched per size
and built once per distinct tree.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

import numpy as np

ALGORITHMS = ("optree", "wrht", "ring", "ne")
"""The four algorithms of Figs. 5–7, in the paper's order."""
LABELS = {"optree": "OpTree", "wrht": "WRHT", "ring": "Ring", "ne": "NE"}
KIB, MIB = 1 << 10, 1 << 20
SMALL_SIZES = tuple(32 * KIB << i for i in range(6))
"""Fig. 5 (a): "32 kilobytes (KB) to 1024KB", read as 32 KiB … 1024 KiB (binary, as PAPER_D)."""
LARGE_SIZES = tuple(4 * MIB * 4 ** i for i in range(6))
"""Fig. 5 (b): "4MB to 4⁶MB", read as 4 MiB, 16 MiB, … 4096 MiB (powers of 4, binary)."""
NODE_SIZES = tuple(4 * MIB << i for i in range(6))
"""Figs. 6 and 7: "4MB to 128MB", read as 4, 8, … 128 MiB (powers of 2, binary)."""
NODES = (512, 1024, 2048, 4096)
"""Fig. 6 / Table 2 node counts (and Fig. 4's)."""
WAVELENGTHS = (4, 16, 64, 128, 256)
"""Fig. 7 / Table 3: 4, 16, 64, 256 (Table 3's header) plus 128 (§V-E's panel (d))."""


def eq3_steps(algorithm: str, nodes: int, wavelengths: int) -> int:
    """The paper's closed-form step count S of one algorithm, as its Tables 1–3 use it."""
    from ....algorithms.optree import lemma3_k, theorem1_steps
    from ....algorithms.wrht import paper_allgather_steps
    if algorithm == "optree":
        return int(theorem1_steps(nodes, wavelengths, lemma3_k(nodes, "ceil")))
    if algorithm == "wrht":
        return int(paper_allgather_steps(nodes, wavelengths))
    if algorithm == "osm":
        return -(-nodes * nodes // (8 * wavelengths))
    return {"ring": nodes - 1, "ne": nodes // 2}[algorithm]


def eq3_time_s(algorithm: str, nodes: int, wavelengths: int, size_bytes: int) -> float:
    """Eq. (3), ``S (d/B + a)``, on the paper's ring (collsim.kinds.optical_ring.cost.paper_time_s)."""
    from ....kinds.optical_ring.cost import paper_time_s
    from ....systems import load_system
    system = load_system("paper", nodes=nodes, wavelengths=wavelengths)
    return float(paper_time_s(system, int(size_bytes), eq3_steps(algorithm, nodes, wavelengths)))


_BLOCK = 1 << 22
"""Transfers :func:`profile` keys at once (whole steps; one step may be more)."""


def profile(schedule) -> dict[str, Any]:
    """What a schedule's time depends on besides the size: its per-step piece counts and reconfigurations."""
    from ....kinds.optical_ring.cost import step_times
    split = int(schedule.collective.split)
    if int(schedule.collective.size_bytes) % split:
        raise ValueError("the pieces of a block are unequal at this size: its time does not scale")
    d = int(schedule.collective.size_bytes) // split
    sizes = np.asarray(schedule.size_bytes, dtype=np.int64)
    cmax, bmax = int(sizes.max(initial=d)) // d + 1, int(np.max(schedule.band, initial=1)) + 1
    keys = []
    # the distinct (step, pieces, band) of every step, in blocks of whole steps: the temporaries stay
    # at a block's (relay with k = 2 on 4,096 nodes: 35 M transfers, 1.5 GiB of keys in one pass)
    bounds = schedule.step_bounds
    cuts = np.unique(np.concatenate(([0], bounds[np.searchsorted(bounds, np.arange(_BLOCK, len(sizes), _BLOCK),
                                                                   side="right") - 1], [len(sizes)])))
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        part = sizes[lo:hi]
        if (part % d).any():
            raise ValueError("a transfer carries part of a chunk: its time does not scale with the size")
        key = np.asarray(schedule.step[lo:hi], dtype=np.int64) * cmax
        key += part // d
        key *= bmax
        key += schedule.band[lo:hi]
        keys.append(np.unique(key))
    uniq = np.unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    b = uniq % bmax
    rest = uniq // bmax
    c = rest % cmax
    st = rest // cmax
    return {"steps": st, "chunks": c, "band": b, "split": split, "num_steps": int(schedule.num_steps),
            "reconfigurations": int(step_times(schedule).reconfigured.sum())}


def retime(prof: dict[str, Any], system, size_bytes: int) -> float:
    """collsim's step-model time of a profiled schedule at another message size."""
    split = int(prof.get("split", 1))
    if int(size_bytes) % split:
        raise ValueError(f"{size_bytes} bytes do not cut into {split} equal pieces")
    per = np.asarray(system.transfer_time_s(prof["chunks"] * (int(size_bytes) // split), prof["band"]), dtype=float)
    busy = np.zeros(prof["num_steps"])
    np.maximum.at(busy, prof["steps"], per)
    return float(busy.sum() + prof["num_steps"] * float(getattr(system, "slot_latency_s", 0.0))
                 + prof["reconfigurations"] * system.mrr_reconfig_s)


def _optree_trees(nodes: int, wavelengths: int, sizes) -> dict[tuple, list[int]]:
    from ....algorithms.optree import search_tree
    from ....systems import load_system
    system = load_system("paper", nodes=nodes, wavelengths=wavelengths)
    trees: dict[tuple, list[int]] = {}
    for size in sizes:
        best, _ = search_tree(system, int(size))
        trees.setdefault(tuple(int(m) for m in best.radices), []).append(int(size))
    return trees


def _stored_trees(nodes: int, wavelengths: int, sizes, store=None) -> dict[tuple, list[int]]:
    """:func:`_optree_trees`, kept in the results store (the exact search is the same on every run)."""
    if store is None:
        return _optree_trees(nodes, wavelengths, sizes)
    point = {"experiment": "optree-search-trees", "system": "paper", "collective": "allgather",
             "nodes": int(nodes), "wavelengths": int(wavelengths), "sizes": [int(x) for x in sizes]}
    rec = store.get(point)
    if rec is not None and rec["status"] == "ok":
        return {tuple(r): list(g) for r, g in rec["result"]["trees"]}
    trees = _optree_trees(nodes, wavelengths, sizes)
    store.put(point, {"trees": [[list(r), g] for r, g in trees.items()]})
    return trees


def build_point(task: tuple) -> dict[str, Any]:
    """Build, verify and profile one (algorithm, N, w[, radices]) schedule at one size."""
    from ....core.symmetry import SymmetricSchedule
    from ....kinds import model_for
    from ....pipeline import build_compact, evaluate, verify
    from ....systems import load_system
    alg, n, w, size, radices = task
    params = {"radices": tuple(radices)} if radices else {}
    # symmetric where that pays (collsim.pipeline.build_compact): the same verdict, row and profile
    sched = build_compact(alg, load_system("paper", nodes=n, wavelengths=w), "allgather", int(size), **params)
    row = evaluate(sched, report=verify(sched))  # verify raises on any violation: no unverified schedule is timed
    return {"algorithm": alg, "nodes": n, "wavelengths": w, "build_size_bytes": int(size),
            "radices": list(row.params.get("radices", [])) or None, "slots": int(row.slots),
            "block_steps": float(row.block_steps), "row_paper_steps": row.paper_steps,
            "verified": bool(row.verified), "profile": profile(
                model_for(sched.system).orbit_schedule(sched) if isinstance(sched, SymmetricSchedule) else sched)}


def _build_key(task: tuple) -> dict[str, Any]:
    """The results-store point of one :func:`build_point` task."""
    alg, n, w, size, radices = task
    return {"experiment": "optree-grid-build", "system": "paper", "collective": "allgather", "algorithm": alg,
            "nodes": int(n), "wavelengths": int(w), "size_bytes": int(size),
            "radices": None if radices is None else [int(m) for m in radices]}


def _to_json(res: dict[str, Any]) -> dict[str, Any]:
    prof = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in res["profile"].items()}
    return {**res, "profile": prof}


def _from_json(res: dict[str, Any]) -> dict[str, Any]:
    prof = {k: (np.asarray(v, dtype=np.int64) if k in ("steps", "chunks", "band") else v)
            for k, v in res["profile"].items()}
    return {**res, "profile": prof}


def grid_points(points: list[tuple[str, int, int, tuple]], *, jobs: int = 1,
                progress: Callable[[str], Any] | None = None, store=None) -> list[dict[str, Any]]:
    """Time every (algorithm, N, w) at its sizes under both models, building each schedule once."""
    from ....systems import load_system
    wanted: dict[tuple, list[int]] = {}
    for alg, n, w, sizes in points:
        wanted.setdefault((alg, n, w), [])
        wanted[(alg, n, w)] += [int(s) for s in sizes if int(s) not in wanted[(alg, n, w)]]
    tasks, owner = [], {}
    for (alg, n, w), sizes in wanted.items():
        groups = _stored_trees(n, w, sizes, store) if alg == "optree" else {None: list(sizes)}
        for radices, group in groups.items():
            owner[len(tasks)] = group
            tasks.append((alg, n, w, group[0], radices))
    built: dict[int, dict] = {}
    if store is not None:
        for i, task in enumerate(tasks):
            rec = store.get(_build_key(task))
            if rec is not None and rec["status"] == "ok":
                built[i] = _from_json(rec["result"])
    order = sorted((i for i in range(len(tasks)) if i not in built), key=lambda i: -tasks[i][1])  # big rings first

    def keep(i: int, res: dict) -> None:
        built[i] = res
        if store is not None:
            store.put(_build_key(tasks[i]), _to_json(res))
    if jobs > 1 and len(order) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for i, res in zip(order, pool.map(build_point, [tasks[i] for i in order])):
                keep(i, res)
                if progress is not None:
                    progress(f"optree: built {tasks[i][0]} N={tasks[i][1]} w={tasks[i][2]}")
    else:
        for i in order:
            if progress is not None:
                progress(f"optree: building {tasks[i][0]} N={tasks[i][1]} w={tasks[i][2]}")
            keep(i, build_point(tasks[i]))
    rows = []
    for i, task in enumerate(tasks):
        alg, n, w, _, _ = task
        b = built[i]
        system = load_system("paper", nodes=n, wavelengths=w)
        for size in owner[i]:
            rows.append({"algorithm": alg, "nodes": n, "wavelengths": w, "size_bytes": size,
                         "eq3_steps": eq3_steps(alg, n, w), "eq3_time_s": eq3_time_s(alg, n, w, size),
                         "slots": b["slots"], "block_steps": b["block_steps"],
                         "reconfigurations": b["profile"]["reconfigurations"],
                         "time_s": retime(b["profile"], system, size), "radices": b["radices"],
                         "row_paper_steps": b["row_paper_steps"], "verified": b["verified"]})
    rank = {a: i for i, a in enumerate(ALGORITHMS)}
    rows.sort(key=lambda r: (r["nodes"], r["wavelengths"], rank.get(r["algorithm"], 9), r["size_bytes"]))
    return rows


def reduction_pct(t_optree: float, t_other: float) -> float:
    """The paper's "performance difference": how much less time OpTree takes, in % of the other's."""
    return 100.0 * (1.0 - t_optree / t_other)


def mean_sd(values) -> tuple[float, float]:
    """Average and population standard deviation, as Tables 2 and 3 compute them."""
    a = np.asarray(list(values), dtype=float)
    return float(a.mean()), float(a.std())
