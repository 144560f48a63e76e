"""An MPI job for tests/test_mpi.py: run schedules with collsim.mpi.run_schedule, one JSON line each.

    mpiexec -n P python tests/mpi_jobs/run_cases.py registry [FILE.json]  # every (algorithm, collective), then FILE's
    mpiexec -n P python tests/mpi_jobs/run_cases.py cases FILE.json       # the cases listed in the file

A case is {"algorithm", "system", "collective", "size", "options": {system options}, "params": {...},
"dtype", "op", "tamper": drop this transfer index and run unverified}.  Rank 0 prints, per case, one
JSON line: the case, "ok", and the result row or the error's class and message.  Every rank runs every
case (an error is agreed by all ranks, so the job goes on to the next case).
"""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

import collsim
from collsim.algorithms import REGISTRY
from collsim.mpi import run_schedule

COMM = MPI.COMM_WORLD
N = COMM.Get_size()


def candidates(n: int) -> list[tuple[str, dict]]:
    """Systems to try, in order, for an algorithm on n nodes."""
    out = [("ring", {"nodes": n}), ("paper", {"nodes": n}), ("optical-torus", {"nodes": n})]
    side = int(round(n ** 0.5))
    if side * side == n:
        out.append(("mesh", {"dims": (side, side)}))
    mlfm = {2: (4, (1, 2, 1)), 4: (4, (2, 2, 1)), 8: (6, (2, 4, 1))}  # (radix, n l m) with n*l*m end nodes
    if n in mlfm:
        out.append(("mlfm", {"radix": mlfm[n][0], "selection": mlfm[n][1]}))
    out.append(("ocs", {"nodes": n, "ports": max(1, n - 1)}))  # a port per peer: every schedule's circuits fit
    inner = next((a for a in range(2, n) if n % a == 0 and n // a >= 2), None)
    if inner is not None:  # boxes of `inner` behind a switch, joined by a switch per rail
        out.append(("hierarchical", {"dims": f"switch:{inner},switch:{n // inner}"}))
    return out


def registry_cases(n: int) -> list[dict]:
    cases = []
    for spec in sorted(REGISTRY.values(), key=lambda s: s.name):
        for coll in spec.collectives:
            cases.append({"algorithm": spec.name, "collective": coll, "size": 3000, "auto": True})
    return cases


def build(case: dict):
    systems = candidates(N) if case.get("auto") else [(case["system"], case.get("options", {}))]
    errors = []
    for system, options in systems:
        options = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
        try:
            return collsim.build(case["algorithm"], system, case["collective"], case["size"],
                                 system_options=options, **case.get("params", {}))
        except collsim.CollsimError as exc:
            errors.append(f"{system}: {exc}")
    raise collsim.UnsupportedError("; ".join(errors))


def main() -> None:
    cases = registry_cases(N) if sys.argv[1] == "registry" else []
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as fh:
            cases += json.load(fh)
    for case in cases:
        line = {"case": case, "ranks": N}
        try:
            sched = build(case)
        except collsim.CollsimError as exc:
            line.update(ok=False, built=False, error=type(exc).__name__, message=str(exc))
        else:
            line["system"] = sched.system.topology
            verify = True
            if "tamper" in case:
                sched = sched.take(np.flatnonzero(np.arange(len(sched)) != case["tamper"]))
                verify = False
            try:
                result = run_schedule(sched, iterations=case.get("iterations", 1), warmup=case.get("warmup", 0),
                                      dtype=case.get("dtype", "int64"), op=case.get("op", "sum"), verify=verify)
                line.update(ok=True, built=True, result=result.to_json())
            except collsim.CollsimError as exc:
                line.update(ok=False, built=True, error=type(exc).__name__, message=str(exc),
                            where=[getattr(exc, "where", None) and getattr(exc.where, f) for f in ("step", "node", "chunk")])
        if COMM.Get_rank() == 0:
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
