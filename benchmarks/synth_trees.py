"""``synth-trees`` on seeded random networks of every class of docs/synthesis.md, against the bound.

Run:  python benchmarks/synth_trees.py [--smoke] [--json]   (--smoke: two instances, all-gather)
      python benchmarks/synth_trees.py --issue-table         (the reported baseline table, rebuilt from its descriptions)
      python benchmarks/synth_trees.py --wide [--smoke] [--json]  (all-gather on seeds never tuned on, up to 64
                                                                   end nodes: synth-trees and synthesize)
      python benchmarks/synth_trees.py --wide --classes random-regular,one-way --seeds 10-29
                                                                  (the same on more seeds of some classes)
      python benchmarks/synth_trees.py --ocs [--smoke] [--json]  (circuit switches of every port count)
      python benchmarks/synth_trees.py --translated [--smoke] [--json]  (networks with translations found
                                                                         by search, up to 128 end nodes)
      python benchmarks/synth_trees.py --large [--smoke] [--json]  (256 to 1,024 end nodes with a translation
                                                                    group: built and checked on their orbits)
      python benchmarks/synth_trees.py --fill [--smoke] [--json]   (bulk-synchronous rounds against the bound,
                                                                    the worst heterogeneous torus)
      python benchmarks/synth_trees.py --speed [--smoke] [--json]  (CPU of synth-trees' all-gather: ForestColl's
                                                                    instances and 64 end nodes)

For every class of :data:`collsim.experiments.network_families.FAMILIES`, seeds 0..2 at scale 0
and seed 0 at scale 1: all-gather (1 GiB of total output, a block of 1 GiB / N), all-reduce
(a 1 GiB vector) and broadcast (1 GiB from node 0).  Each schedule is built, verified and
flow-simulated (the row's time); where synth-trees' prediction misses the simulation (switches),
both its timings are simulated and the faster kept, as ``synthesize`` does; efficiency is the
bound every command reports over it.  The
greedy (``synth-matching``) is run beside it for the all-gather at scale 0.  Prints one line
per case and, per class and collective, the worst efficiency (the figure to report).
No targets are asserted; docs/synthesis.md quotes the output.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import collsim
from collsim.experiments.network_families import FAMILIES

SIZES = {"allgather": 2**30, "allreduce": 2**30, "broadcast": 2**30}


def _size(collective: str, n: int) -> int:
    return SIZES[collective] // n if collective == "allgather" else SIZES[collective]


def _row(algorithm: str, net, collective: str):
    """The row ``synthesize`` would keep of this algorithm: where synth-trees' prediction missed
    the simulation (links shared through switches), both timings are simulated and the faster kept."""
    t0 = time.process_time()
    s = collsim.build(algorithm, net, collective, _size(collective, net.nodes))
    row = collsim.evaluate(s, report=collsim.verify(s))
    predicted = s.params.get("predicted_time_s")
    if algorithm == "synth-trees" and abs(predicted - row.time_s) > 1e-6 * row.time_s:
        other = "pipeline" if s.params["timing"] != "pipeline" else "timed"
        s2 = collsim.build(algorithm, net, collective, _size(collective, net.nodes), timing=other)
        row = min(row, collsim.evaluate(s2, report=collsim.verify(s2)), key=lambda r: r.time_s)
    return row, time.process_time() - t0


def _phases_bound_s(net, vector_bytes: int) -> float:
    """The reduce-scatter bound plus the all-gather bound of an all-reduce of ``vector_bytes``."""
    from collsim.core.collective import make_collective
    block = max(vector_bytes // net.nodes, 1)
    return sum(collsim.lower_bound_s(net, make_collective(k, net.nodes, block)) for k in ("reducescatter", "allgather"))


def main(smoke: bool = False, as_json: bool = False) -> None:
    cases = [("hetero-mesh", 0, 0), ("random-switched", 0, 0)] if smoke else \
        [(name, scale, seed) for name in FAMILIES for scale, seed in ((0, 0), (0, 1), (0, 2), (1, 0))]
    collectives = ["allgather"] if smoke else list(SIZES)
    worst: dict = {}
    out = []
    for name, scale, seed in cases:
        net = FAMILIES[name](np.random.default_rng(seed), scale)
        for coll in collectives:
            row, cpu = _row("synth-trees", net, coll)
            eff = row.lower_bound_s / row.time_s
            rec = {"class": name, "scale": scale, "seed": seed, "nodes": net.nodes, "vertices": net.vertices,
                   "collective": coll, "efficiency": eff, "time_s": row.time_s, "bound_s": row.lower_bound_s,
                   "cpu_s": cpu}
            if coll == "allreduce":      # against the two phases' bounds, which the schedule is built from
                rec["phases_efficiency"] = _phases_bound_s(net, SIZES[coll]) / row.time_s
            if coll == "allgather" and scale == 0 and not smoke:
                greedy, _ = _row("synth-matching", net, coll)
                rec["synth_matching_efficiency"] = greedy.lower_bound_s / greedy.time_s
            out.append(rec)
            key = (name, coll)
            worst[key] = min(worst.get(key, 1.0), eff)
            if not as_json:
                extra = (f"  greedy {rec['synth_matching_efficiency']:.3f}" if "synth_matching_efficiency" in rec
                         else f"  vs RS+AG bounds {rec['phases_efficiency']:.4f}" if "phases_efficiency" in rec
                         else "")
                print(f"{name:24s} s{scale} #{seed} N={net.nodes:3d} V={net.vertices:3d} {coll:10s} "
                      f"efficiency {eff:.4f}{extra}  cpu {cpu:6.2f} s", flush=True)
    for rec in out:
        if "phases_efficiency" in rec:
            key = (rec["class"], "allreduce vs RS+AG")
            worst[key] = min(worst.get(key, 1.0), rec["phases_efficiency"])
    if as_json:
        print(json.dumps({"cases": out, "worst": {f"{k[0]}/{k[1]}": v for k, v in sorted(worst.items())}}))
    else:
        print("worst per class and collective:")
        for (name, coll), eff in sorted(worst.items()):
            print(f"  {name:24s} {coll:10s} {eff:.4f}")


WIDE_SEEDS = (10, 11, 12)
"""Seeds of the wide run: none of the main run's (0, 1, 2), on which the code was tuned."""


def wide(smoke: bool = False, as_json: bool = False, classes: list[str] | None = None,
         seeds: tuple[int, ...] = WIDE_SEEDS) -> None:
    """All-gather of 1 GiB of total output on ``seeds`` (:data:`WIDE_SEEDS` unless given) of every class
    (or of ``classes``) at scales 0, 1 and 2 (up to 64 end nodes): ``synth-trees`` alone (built,
    verified and simulated as in the main run) and ``collsim.synthesize`` (every synthesizer and
    registered algorithm, as a user runs it), and the worst of each per class: whether the issue's
    targets hold for instances never tuned on."""
    names = list(FAMILIES) if classes is None else classes
    cases = [(names[0] if classes else "dragonfly", 0, seeds[0])] if smoke else \
        [(name, scale, seed) for scale in (0, 1, 2) for name in names for seed in seeds]
    out, worst = [], {}
    for name, scale, seed in cases:
        net = FAMILIES[name](np.random.default_rng(seed), scale)
        row, cpu = _row("synth-trees", net, "allgather")
        t0 = time.process_time()
        best = collsim.synthesize(net, "allgather", _size("allgather", net.nodes))
        rec = {"class": name, "scale": scale, "seed": seed, "nodes": net.nodes, "vertices": net.vertices,
               "synth_trees": row.lower_bound_s / row.time_s, "cpu_s": cpu, "synthesize": best.efficiency,
               "winner": best.schedule.algorithm, "synthesize_cpu_s": time.process_time() - t0}
        out.append(rec)
        for key in ("synth_trees", "synthesize"):
            worst[(name, key)] = min(worst.get((name, key), 1.0), rec[key])
        if not as_json:
            print(f"{name:24s} s{scale} #{seed} N={net.nodes:3d} V={net.vertices:3d} synth-trees {rec['synth_trees']:.4f} "
                  f"cpu {cpu:6.2f} s  synthesize {rec['synthesize']:.4f} ({rec['winner']})", flush=True)
    if as_json:
        print(json.dumps({"cases": out, "worst": {f"{k[0]}/{k[1]}": v for k, v in sorted(worst.items())}}))
    else:
        print("worst per class:")
        for name in FAMILIES:
            if (name, "synth_trees") in worst:
                print(f"  {name:24s} synth-trees {worst[(name, 'synth_trees')]:.4f}  "
                      f"synthesize {worst[(name, 'synthesize')]:.4f}")


def _wide_options(argv: list[str]) -> dict:
    """``--classes A,B`` and ``--seeds FIRST-LAST`` (inclusive) of the wide run; unknown classes are refused."""
    out: dict = {}
    for flag, key in (("--classes", "classes"), ("--seeds", "seeds")):
        if flag in argv:
            i = argv.index(flag)
            if i + 1 >= len(argv):
                sys.exit(f"{flag} needs a value")
            out[key] = argv[i + 1]
    if "classes" in out:
        out["classes"] = out["classes"].split(",")
        unknown = sorted(set(out["classes"]) - set(FAMILIES))
        if unknown:
            sys.exit(f"unknown classes {', '.join(unknown)}; the classes are {', '.join(FAMILIES)}")
    if "seeds" in out:
        first, _, last = out["seeds"].partition("-")
        try:
            out["seeds"] = tuple(range(int(first), int(last or first) + 1))
        except ValueError:
            sys.exit(f"--seeds takes FIRST-LAST, got {out['seeds']!r}")
        if not out["seeds"]:
            sys.exit("--seeds: no seed in that range")
    return out


def issue_table(smoke: bool = False) -> None:
    """The reported baseline table, from its descriptions: ``collsim.synthesize`` (every algorithm) beside the greedy alone."""
    from collsim.experiments.network_families import dragonfly, hetero_mesh, random_regular, rail_boxes
    cases = [("4x4 mesh, rows 4x faster", lambda: hetero_mesh(4, 4, 4.0)),
             ("6x8 torus, one dimension 4x faster", lambda: hetero_mesh(6, 8, 4.0, torus=True)),
             ("random 3-regular, 16 nodes", lambda: random_regular(16, 3, seed=0)),
             ("two 8-GPU boxes, two rail switches", lambda: rail_boxes(2, gpus=8, rails=2)),
             ("dragonfly, 4 groups of 4 routers", lambda: dragonfly(4, 4, hosts=2))]
    if smoke:  # the same path on the smallest such mesh (the 4x4 mesh's synthesize takes 6 s of CPU)
        cases = [("3x3 mesh, rows 4x faster", lambda: hetero_mesh(3, 3, 4.0))]
    for label, make in cases:
        net = make()
        size = 2**30 // net.nodes
        t0 = time.process_time()
        out = collsim.synthesize(net, "allgather", size)
        cpu = time.process_time() - t0
        greedy, _ = _row("synth-matching", net, "allgather")
        print(f"{label:38s} synthesize {out.efficiency:.3f} ({out.schedule.algorithm})  synth-matching "
              f"{greedy.lower_bound_s / greedy.time_s:.3f}  cpu {cpu:.1f} s", flush=True)


def ocs_family(smoke: bool = False, as_json: bool = False) -> None:
    """All-gather of 1 MiB a node on optical circuit switches of every port count.

    N in 8, 12, 16, 24, 32, 48, 64 and ports 1, 2, 3, 4, N/4, N/2, N-2 and N-1, each with a reconfiguration
    time drawn log-uniformly from 4 ns to 10 ms (seed N x 100 + p): synth-trees alone (one
    configuration, verified, flow-simulated) against the kind's reconfiguration-aware bound, and
    what ``synthesize`` keeps among every algorithm.  Smoke: N = 8, ports 2.
    """
    from collsim.kinds.ocs.system import OCS
    cases = [(8, 2)] if smoke else sorted({(n, p) for n in (8, 12, 16, 24, 32, 48, 64)
                                           for p in (1, 2, 3, 4, n // 4, n // 2, n - 2, n - 1) if 1 <= p <= n - 1})
    out, worst = [], 1.0
    for n, p in cases:
        rng = np.random.default_rng(n * 100 + p)
        sw = OCS(nodes=n, ports=p, reconfiguration_s=float(10 ** rng.uniform(np.log10(4e-9), -2)))
        t0 = time.process_time()
        s = collsim.build("synth-trees", sw, "allgather", "1MiB")
        row = collsim.evaluate(s, report=collsim.verify(s))
        cpu = time.process_time() - t0
        best = collsim.synthesize(sw, "allgather", "1MiB") if not smoke else None
        rec = {"nodes": n, "ports": p, "reconfiguration_s": sw.reconfiguration_s, "verified": row.verified,
               "configuration": s.params.get("configuration", "all circuits"), "efficiency": row.lower_bound_s / row.time_s,
               "reconfigurations": row.part.reconfigurations, "cpu_s": cpu,
               "synthesize": None if best is None else best.schedule.algorithm,
               "synthesize_efficiency": None if best is None else best.efficiency}
        worst = min(worst, rec["efficiency"])
        out.append(rec)
        if not as_json:
            extra = "" if best is None else f"  synthesize {best.efficiency:.4f} ({best.schedule.algorithm})"
            print(f"ocs N={n:3d} p={p:3d} r={sw.reconfiguration_s:9.3g} s  {rec['configuration']:18s} "
                  f"efficiency {rec['efficiency']:.4f}{extra}  cpu {cpu:5.2f} s", flush=True)
    if as_json:
        print(json.dumps({"cases": out, "worst": worst}))
    else:
        print(f"worst synth-trees efficiency: {worst:.4f}")


def translated_family(smoke: bool = False, as_json: bool = False) -> None:
    """All-gather (1 GiB of total output) on networks whose translations nobody declared.

    Thirty random heterogeneous tori (seeds 0-2, ten each: rows 2-8, columns 3-8, the rows 1, 2, 4
    or 8 times faster), then boxes of 8 GPUs on rails (64 and 128 GPUs), leaf-spines of 32 and 128
    hosts and 8x8 and 10x10 tori; each built by synth-trees as ``compare`` builds it (as its
    transfers into node 0 where the expansion would hold 4 M chunk deliveries or more and the kind
    has a translation group: ``pipeline.build_compact``), verified and flow-simulated.  Prints
    one line per case and the worst.  Smoke: a 3x4 torus and two boxes on two rails.
    """
    from collsim import pipeline
    from collsim.core.symmetry import SymmetricSchedule
    from collsim.experiments.network_families import fat_tree_oversubscribed, hetero_mesh, rail_boxes
    nets = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        for _ in range(10):
            r, c = int(rng.integers(2, 9)), int(rng.integers(3, 9))
            nets.append(hetero_mesh(r, c, float(rng.choice([1, 2, 4, 8])), torus=True))
    nets += [rail_boxes(8, rails=2), rail_boxes(8, rails=8), rail_boxes(16, rails=4),
             fat_tree_oversubscribed(8, 4, 2, 4.0), fat_tree_oversubscribed(16, 8, 4, 2.0),
             hetero_mesh(8, 8, 4.0, torus=True), hetero_mesh(10, 10, 8.0, torus=True)]
    if smoke:
        nets = [hetero_mesh(3, 4, 4.0, torus=True), rail_boxes(2, rails=2)]
    out, worst = [], 1.0
    for net in nets:
        t0 = time.process_time()
        s = pipeline.build_compact("synth-trees", net, "allgather", 2**30 // net.nodes)
        row = collsim.evaluate(s, report=collsim.verify(s))
        rec = {"network": net.name, "nodes": net.nodes, "translated": net.translations() is not None,
               "orbits": isinstance(s, SymmetricSchedule),
               "verified": row.verified, "efficiency": row.lower_bound_s / row.time_s,
               "rounds": s.params["rounds"], "pieces": s.params["pieces"], "cpu_s": time.process_time() - t0}
        worst = min(worst, rec["efficiency"])
        out.append(rec)
        if not as_json:
            print(f"{net.name:30s} N={net.nodes:4d} translated={rec['translated']!s:5s} orbits={rec['orbits']!s:5s} efficiency "
                  f"{rec['efficiency']:.4f}  rounds {rec['rounds']:3d}  pieces {rec['pieces']:5d}  cpu "
                  f"{rec['cpu_s']:5.1f} s", flush=True)
    if as_json:
        print(json.dumps({"cases": out, "worst": worst}))
    else:
        print(f"worst: {worst:.4f}")


def _large_networks(smoke: bool):
    """Seeded networks of 256 to 1,024 end nodes whose kind has a translation group: per seed a
    heterogeneous torus (dimensions drawn with 256 to 1,024 nodes, the rows 1, 2, 4 or 8 times
    faster) and boxes of 8 GPUs on rails (32 to 128 boxes, 1, 2, 4 or 8 rails); and hypercubes."""
    from collsim.experiments.network_families import hetero_mesh, rail_boxes
    from collsim.systems import load_system
    if smoke:
        return [("torus", hetero_mesh(12, 12, 4.0, torus=True))]
    nets = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        while True:
            r, c = int(rng.integers(8, 33)), int(rng.integers(8, 33))
            if 256 <= r * c <= 1024:
                break
        nets.append(("torus", hetero_mesh(r, c, float(rng.choice([1, 2, 4, 8])), torus=True)))
        nets.append(("rails", rail_boxes(int(rng.choice([32, 64, 128])), rails=int(rng.choice([1, 2, 4, 8])))))
    nets += [("hypercube", load_system("hypercube", nodes=256)), ("hypercube", load_system("hypercube", nodes=1024))]
    return nets


def large(smoke: bool = False, as_json: bool = False) -> None:
    """All-gather and reduce-scatter (1 GiB of total output) and all-reduce (a vector of the most
    whole MiB a node within 1 GiB, so that every node's block is cut alike: 1 GiB on 256 and
    1,024 nodes, 667 MiB on 667) on
    256 to 1,024 end nodes (:func:`_large_networks`), each built by synth-trees as its transfers
    into node 0 and verified and flow-simulated on its orbits (``pipeline.build_compact``).  Prints
    one line per case (efficiency against the bound every command reports, CPU seconds of the
    build and of the check) and the worst per class and collective, a refusal counting as 0.  Smoke: a 12x12 torus, all-gather of 1 MiB.
    """
    from collsim import pipeline
    from collsim.core.symmetry import SymmetricSchedule
    out, worst = [], {}
    for family, net in _large_networks(smoke):
        for coll in ("allgather",) if smoke else ("allgather", "reducescatter", "allreduce"):
            size = 2**20 if smoke else 2**30
            if coll == "allreduce":    # every node's block alike: the most whole MiB a node within 1 GiB
                size = net.nodes * (size // net.nodes // 2**20) * 2**20 if not smoke else net.nodes * 2**12
            else:
                size //= net.nodes
            t0 = time.process_time()
            try:
                s = pipeline.build_compact("synth-trees", net, coll, size)
            except collsim.CollsimError as exc:      # refused (no translation group found): a miss
                out.append({"family": family, "network": net.name, "nodes": net.nodes, "collective": coll,
                            "refused": str(exc)})
                worst[f"{family} {coll}"] = 0.0
                if not as_json:
                    print(f"{net.name:32s} N={net.nodes:5d} {coll:13s} refused: {exc}", flush=True)
                continue
            t1 = time.process_time()
            row = collsim.evaluate(s, report=collsim.verify(s))
            rec = {"family": family, "network": net.name, "nodes": net.nodes, "collective": coll,
                   "symmetric": isinstance(s, SymmetricSchedule), "verified": row.verified,
                   "efficiency": row.lower_bound_s / row.time_s, "rounds": s.params["rounds"],
                   "pieces": s.params["pieces"], "timing": s.params["timing"], "build_cpu_s": t1 - t0,
                   "check_cpu_s": time.process_time() - t1}
            key = f"{family} {coll}"
            worst[key] = min(worst.get(key, 1.0), rec["efficiency"])
            out.append(rec)
            if not as_json:
                print(f"{net.name:32s} N={net.nodes:5d} {coll:13s} orbits={rec['symmetric']!s:5s} efficiency "
                      f"{rec['efficiency']:.4f}  rounds {rec['rounds']:3d}  pieces {rec['pieces']:5d} "
                      f"{rec['timing']:8s} build {rec['build_cpu_s']:5.1f} s  check {rec['check_cpu_s']:5.1f} s",
                      flush=True)
    if as_json:
        print(json.dumps({"cases": out, "worst": worst}))
    else:
        for key, value in sorted(worst.items()):
            print(f"worst {key}: {value:.4f}")


def speed(smoke: bool = False, as_json: bool = False) -> None:
    """CPU seconds of synth-trees' all-gather (1 GiB of total output) in a warm process: the build
    alone, and with verification and flow simulation.

    ForestColl's instances as its public code was measured here (5x5 mesh 3.0 s, 3x3x3 torus 13.3 s, 10x10
    torus unfinished in 13 minutes) and networks of 64 end nodes (target: <= 1 s).
    Smoke: the 3x3x3 torus.
    """
    from collsim.experiments.network_families import fat_tree_oversubscribed, hetero_mesh, rail_boxes
    collsim.build("synth-trees", collsim.load_system("ring", nodes=4), "allgather", 1024)    # imports
    load = collsim.load_system
    nets = [("5x5 mesh", load("mesh", dims=(5, 5))), ("3x3x3 torus", load("torus", dims=(3, 3, 3))),
            ("10x10 torus", load("torus", dims=(10, 10))), ("4x8 torus", load("torus", dims=(4, 8))),
            ("32-node hypercube", load("hypercube", nodes=32)), ("8x8 torus", load("torus", dims=(8, 8))),
            ("4x4x4 torus", load("torus", dims=(4, 4, 4))), ("64-node hypercube", load("hypercube", nodes=64)),
            ("8x8 mesh", load("mesh", dims=(8, 8))), ("64 GPUs, 8 boxes on 2 rails", rail_boxes(8, rails=2)),
            ("leaf-spine 16x4, 2:1", fat_tree_oversubscribed(16, 4, 2, 2.0)),
            ("8x8 torus, rows 4x faster", hetero_mesh(8, 8, 4.0, torus=True))]
    out = []
    for label, net in nets[1:2] if smoke else nets:
        t0 = time.process_time()
        s = collsim.build("synth-trees", net, "allgather", 2**30 // net.nodes)
        build_s = time.process_time() - t0
        row = collsim.evaluate(s, report=collsim.verify(s))
        rec = {"network": label, "nodes": net.nodes, "build_cpu_s": build_s,
               "total_cpu_s": time.process_time() - t0, "efficiency": row.lower_bound_s / row.time_s,
               "verified": row.verified}
        out.append(rec)
        if not as_json:
            print(f"{rec['network']:28s} N={net.nodes:4d} build {build_s:6.2f} s  with verify and simulate "
                  f"{rec['total_cpu_s']:6.2f} s  efficiency {rec['efficiency']:.4f}", flush=True)
    if as_json:
        print(json.dumps({"cases": out}))


def fill(smoke: bool = False, as_json: bool = False) -> None:
    """Where bulk-synchronous rounds leave a deep packing: the timing programme's optimum against its rounds.

    On the families' worst heterogeneous torus (4x6, rows 8x faster, all-gather of 1 GiB of total
    output, 1 us links), for the full packing and for the shallowest trees: the programme's
    bandwidth time over the bound for S rounds, and with S latencies added (each round ends at a
    barrier, so each pays one), the least of which caps any plan timed on these trees.
    Smoke: three round counts.
    """
    from collsim.algorithms.synth_trees import timing
    from collsim.algorithms.synth_trees.packing import pack
    from collsim.core.collective import make_collective
    from collsim.experiments.network_families import LATENCY_S, hetero_mesh
    net = hetero_mesh(4, 6, 8.0, torus=True)
    n = net.nodes
    block = 2**30 // n
    bound = collsim.lower_bound_s(net, make_collective("allgather", n, block))
    full = pack(net)
    pools = {"packing": full, "shallowest": pack(net, layered=True, target_z=full.z)}
    out = []
    for name, pool in pools.items():
        bw = np.asarray(net.links.bandwidth_bytes_per_s, float)[pool.link_ids]
        first = int(pool.base().depth().max(axis=1).min())
        counts = range(first, first + 3) if smoke else range(first, 41)
        for s in counts:
            t = timing.timed(pool, bw, block, s)
            rec = {"pool": name, "rounds": s, "bandwidth_over_bound": t.bandwidth_s / bound,
                   "with_latency_over_bound": (t.bandwidth_s + s * LATENCY_S) / bound}
            out.append(rec)
            if not as_json:
                print(f"{name:10s} S={s:3d}  bandwidth {rec['bandwidth_over_bound']:.4f}  "
                      f"+ S latencies {rec['with_latency_over_bound']:.4f}", flush=True)
    best = min(out, key=lambda r: r["with_latency_over_bound"])
    summary = {"bound_s": bound, "best": best, "best_efficiency": 1.0 / best["with_latency_over_bound"]}
    if as_json:
        print(json.dumps({"cases": out, **summary}))
    else:
        print(f"best: {best['pool']} in {best['rounds']} rounds, at most {summary['best_efficiency']:.4f} of the bound")


if __name__ == "__main__":
    if "--issue-table" in sys.argv[1:]:
        issue_table(smoke="--smoke" in sys.argv[1:])
    elif "--speed" in sys.argv[1:]:
        speed(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
    elif "--translated" in sys.argv[1:]:
        translated_family(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
    elif "--large" in sys.argv[1:]:
        large(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
    elif "--fill" in sys.argv[1:]:
        fill(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
    elif "--wide" in sys.argv[1:]:
        wide(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:], **_wide_options(sys.argv[1:]))
    elif "--ocs" in sys.argv[1:]:
        ocs_family(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
    else:
        main(smoke="--smoke" in sys.argv[1:], as_json="--json" in sys.argv[1:])
