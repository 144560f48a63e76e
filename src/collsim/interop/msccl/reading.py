"""MSCCL algorithm XML -> a verified collsim schedule.

1. parse (:mod:`.msccl_xml`) and check every rule and limit (:mod:`.msccl_check`);
2. build happens-before, refuse deadlocks and races, and execute symbolically (:mod:`.msccl_hb`);
3. number collsim steps: every matched (send, receive) pair is a transfer; per buffer
   location, in happens-before order, a read after a transfer's write comes one step
   later, a write after a read no earlier, writes one after another (two reductions
   into one location may share a step, as collsim combines both), local copies take no
   step; the smallest such numbering (a longest path) is used, transfers of one step
   between the same two ranks are merged;
4. realise the transfers on a system (default: a star of ngpus ranks, one switch as in
   an NVSwitch box) and verify them with collsim's verifier; then check MSCCL's own
   outcome: every output location holds its chunk with every contribution exactly once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...core.collectives import TYPES
from ...core.errors import DoubleCountError, InputError, PostconditionError, UnsupportedError, Where
from ...core.placement import check_placement
from ...core.schedule import Schedule
from .rules import check_algo
from .happens_before import Execution, execute
from .layout import Layout
from .xml_model import MscclAlgo, MscclLimits, read_xml


@dataclass(frozen=True)
class MscclImport:
    """An imported MSCCL algorithm: the collsim schedule and what the file held."""

    schedule: Schedule
    algo: MscclAlgo
    thread_blocks: int
    msccl_steps: int
    nops: int
    time_s: float


def infer_root(algo: MscclAlgo) -> int | None:
    """The root of a broadcast (the rank that reads its input) or a reduce (the rank that writes its output)."""
    t = TYPES.get(algo.coll)
    if t is None or not t.rooted:
        return None
    found = set()
    for g in algo.gpus:
        for tb in g.tbs:
            for st in tb.steps:
                reads = st.type in ("s", "cpy", "rrs", "rrc", "rrcs", "re")
                if t.input_buffer == "root" and reads and st.srcbuf == "i":   # broadcast: the root's input
                    found.add(g.id)
                if t.output_buffer == "root" and st.type in ("r", "rcs", "rrc", "rrcs", "cpy", "re") and st.dstbuf == "o":
                    found.add(g.id)
    return found.pop() if len(found) == 1 else None


def _steps(ex: Execution) -> np.ndarray:
    """collsim step of every transfer: the least numbering the location constraints allow."""
    nt = len(ex.transfers)
    owner, nxt = {}, nt
    for _, _, x, _ in ex.accesses:
        if x in ex.node_transfer_in or x in ex.node_transfer_out:
            continue
        if x not in owner:
            owner[x] = nxt
            nxt += 1

    def own(x, kind):
        if x in ex.node_transfer_in and (kind != "R" or x not in ex.node_transfer_out):
            return ex.node_transfer_in[x]
        if x in ex.node_transfer_out:
            return ex.node_transfer_out[x]
        return owner[x]

    src, dst, w = [], [], []

    def edge(a, b, weight):
        if a != b:
            src.append(a)
            dst.append(b)
            w.append(weight)

    last, reads, loc0 = None, [], None
    for loc, _, x, kind in ex.accesses:
        if loc != loc0:
            last, reads, loc0 = None, [], loc
        o = own(x, kind)
        if last is not None:
            lo, lk = last
            both_red = kind == "U" and lk == "U" and lo < nt and o < nt
            edge(lo, o, 0 if both_red else int(lo < nt))
        if kind == "R":
            reads.append(o)
        else:
            for r in reads:
                edge(r, o, int(r < nt and o >= nt))
            last, reads = (o, kind), []
    for a, b in ex.forwards:
        edge(a, b, 1)
    tau = np.zeros(nxt, np.int64)
    s, d, wt = np.array(src, np.int64), np.array(dst, np.int64), np.array(w, np.int64)
    for _ in range(nxt + 1):
        new = tau.copy()
        np.maximum.at(new, d, tau[s] + wt)
        if (new == tau).all():
            break
        tau = new
    else:
        raise UnsupportedError("the algorithm's data dependencies cannot be laid out in collsim's steps")
    return np.unique(tau[:nt], return_inverse=True)[1].reshape(-1)


def import_msccl(source: str | os.PathLike | MscclAlgo, *, system=None, size_bytes: int = 1 << 20,
                 root: int | None = None, limits: MscclLimits = MscclLimits()) -> MscclImport:
    """Read an MSCCL algorithm (any tool's), turn it into a collsim schedule and verify it."""
    from ...core.collective import make_collective
    from ...core.schedule import LogicalBuilder
    from ...pipeline import realize, verify
    from ...systems import load_system
    algo = source if isinstance(source, MscclAlgo) else read_xml(source)
    if root is not None and algo.coll in TYPES:  # a root of an allgather, or out of range: refused, not verified
        check_placement(algo.coll, algo.ngpus, root=root)
    if root is None:
        root = infer_root(algo)
    if algo.coll in TYPES and TYPES[algo.coll].rooted and root is None:
        raise InputError(f"cannot tell the root of this {algo.coll}: give it (--root)")
    lay = check_algo(algo, limits, root)
    ex = execute(algo, lay)
    n = lay.ngpus
    sysm = load_system("star" if system is None else system, **({"nodes": n} if system is None or
                                                                isinstance(system, str) else {}))
    if sysm.nodes != n:
        raise InputError(f"the algorithm has {n} gpus but the system has {sysm.nodes} nodes")
    coll = make_collective(algo.coll, n, size_bytes, split=lay.split, root=root)
    b = LogicalBuilder(coll)
    if ex.transfers:
        step = _steps(ex)
        groups: dict = {}
        for k, (a, d, chunks, red, _, _) in sorted(enumerate(ex.transfers), key=lambda kv: (step[kv[0]], kv[0])):
            groups.setdefault((int(step[k]), a, d, red), []).extend(chunks)
        for (st, a, d, red), chunks in groups.items():
            if len(set(chunks)) == len(chunks):
                b.add(st, [a], [d], [np.array(chunks, np.int64)], reduce=red)
            else:
                for c in chunks:
                    b.add(st, [a], [d], [np.array([c], np.int64)], reduce=red)
    sched = realize(sysm, b.build(), algorithm="msccl", params={"name": algo.name, "proto": algo.proto})
    report = verify(sched)
    if ex.double:
        raise DoubleCountError(ex.double)
    _outcome(lay, ex)
    nops = sum(st.type == "nop" for g in algo.gpus for tb in g.tbs for st in tb.steps)
    return MscclImport(sched, algo, sum(len(g.tbs) for g in algo.gpus), algo.num_steps(), nops, report.time_s)


def _outcome(lay: Layout, ex: Execution) -> None:
    """MSCCL's own postcondition: each output location holds its chunk, every contribution once."""
    full = (1 << lay.ngpus) - 1 if lay.reduction else 0
    for g in range(lay.ngpus):
        for off, c in enumerate(lay.output_chunks(g).tolist()):
            if c < 0:
                continue
            got = ex.final.get((g, "o", off))
            if got is None or got[0] != c or got[1] != full:
                held = "nothing" if got is None else f"chunk {got[0]}" + (
                    f" with contributions of {bin(got[1]).count('1')} ranks" if lay.reduction else "")
                raise PostconditionError(f"gpu {g} output offset {off} ends with {held}, not chunk {c}"
                                         + (" with every rank's contribution" if lay.reduction else ""),
                                         Where(node=g, chunk=c))
