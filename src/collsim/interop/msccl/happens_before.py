"""Happens-before, races and symbolic execution of an MSCCL algorithm.

The happens-before order is made of each thread block's program order, the explicit
dependencies (``depid``/``deps``; a nop's are its next step's), and each send before
its matching receive: the k-th send step of gpu a's thread block with send peer b on
channel c matches the k-th receive step of b's thread block with receive peer a on
channel c (one FIFO connection each way per channel).  Ancestor sets are bitsets, so
the closure costs V^2/8 bytes for V steps, refused up front beyond collsim's memory
limit.  Two accesses to one buffer location, one of them a write, that happens-before
does not order are a race.  Execution is symbolic, as msccl-tools checks its programs:
every location holds a chunk id and, for reductions, the set of ranks whose
contributions it combines (an integer bitmask).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import ConflictingWriteError, MissingDataError, Where
from ...core.limits import check_memory
from .errors import MscclDeadlockError, MscclFormatError, MscclRaceError
from .layout import Layout
from .xml_model import RECVS, REDUCES, SENDS, MscclAlgo


@dataclass(frozen=True)
class Execution:
    """What executing an algorithm symbolically found."""

    transfers: list
    accesses: list
    forwards: list
    final: dict
    double: str | None
    names: list
    node_transfer_in: dict
    node_transfer_out: dict


def _graph(algo: MscclAlgo):
    """Nodes (one per step), their names, predecessor lists and matched (send, receive) pairs."""
    base, nodes, names, blocks = {}, [], [], []
    for g in sorted(algo.gpus, key=lambda g: g.id):
        for tb in sorted(g.tbs, key=lambda t: t.id):
            base[(g.id, tb.id)] = len(nodes)
            blocks.append((g.id, tb))
            for st in tb.steps:
                nodes.append((g.id, tb, st))
                names.append(f"gpu {g.id}, tb {tb.id}, step {st.s} ({st.type})")
    preds = [[] for _ in nodes]
    senders, receivers = {}, {}
    for g, tb in blocks:
        b = base[(g, tb.id)]
        for i, st in enumerate(tb.steps):
            if i:
                preds[b + i].append(b + i - 1)
            if st.depid >= 0:
                preds[b + i].append(base[(g, st.depid)] + st.deps)
        if tb.send >= 0:
            senders[(g, tb.send, tb.chan)] = [b + i for i, st in enumerate(tb.steps) if st.type in SENDS]
        if tb.recv >= 0:
            receivers[(tb.recv, g, tb.chan)] = [b + i for i, st in enumerate(tb.steps) if st.type in RECVS]
    pairs = []
    for key in sorted(set(senders) | set(receivers)):
        a, b, c = key
        sends, recvs = senders.get(key, []), receivers.get(key, [])
        if len(sends) != len(recvs):
            k = min(len(sends), len(recvs))
            lone = names[(sends if len(sends) > k else recvs)[k]]
            side = (f"gpu {b} has no matching receive from gpu {a}" if len(sends) > k
                    else f"gpu {a} has no matching send to gpu {b}")
            raise MscclFormatError(f"{lone}: {side} on channel {c} ({len(sends)} sends, {len(recvs)} receives)")
        for u, v in zip(sends, recvs):
            if nodes[u][2].cnt != nodes[v][2].cnt:
                raise MscclFormatError(f"{names[u]} sends cnt={nodes[u][2].cnt} but its matching receive "
                                       f"{names[v]} has cnt={nodes[v][2].cnt}")
            preds[v].append(u)
            pairs.append((u, v))
    return nodes, names, preds, pairs


def _topological(preds: list, names: list) -> list:
    succ = [[] for _ in preds]
    indeg = [len(set(p)) for p in preds]
    for x, ps in enumerate(preds):
        for p in set(ps):
            succ[p].append(x)
    ready = [x for x, d in enumerate(indeg) if d == 0]
    order = []
    while ready:
        x = ready.pop()
        order.append(x)
        for y in succ[x]:
            indeg[y] -= 1
            if indeg[y] == 0:
                ready.append(y)
    if len(order) < len(preds):
        stuck = min(set(range(len(preds))) - set(order))
        raise MscclDeadlockError(f"{names[stuck]} never runs: its thread block waits in a cycle of dependencies "
                                 f"and receives")
    return order


def _access(g, st) -> list:
    """(location, kind) pairs a step touches; locations are (gpu, buffer, offset)."""
    src = [(g, st.srcbuf, st.srcoff + i) for i in range(st.cnt)]
    dst = [(g, st.dstbuf, st.dstoff + i) for i in range(st.cnt)]
    t = st.type
    if t == "s":
        return [(x, "R") for x in src]
    if t in ("r", "rcs"):
        return [(x, "W") for x in dst]
    if t == "rrs":
        return [(x, "R") for x in src]
    if t in ("rrc", "rrcs", "re"):
        out = [(x, "U") for x in dst]
        return out + [(x, "R") for x in src if x not in set(dst)]
    if t == "cpy":
        return [(x, "R") for x in src] + [(x, "W") for x in dst]
    return []


def execute(algo: MscclAlgo, lay: Layout) -> Execution:
    """Build happens-before, refuse races and deadlocks, and execute the algorithm symbolically."""
    total = algo.num_steps()
    check_memory(total * total / 8 * 1.5 + total * 400, f"the happens-before closure of {total} MSCCL steps",
                 "use an algorithm with fewer steps")
    nodes, names, preds, pairs = _graph(algo)
    order = _topological(preds, names)
    topo = [0] * len(nodes)
    for i, x in enumerate(order):
        topo[x] = i
    anc = [0] * len(nodes)
    for x in order:
        m = 0
        for p in preds[x]:
            m |= anc[p] | (1 << p)
        anc[x] = m
    accesses = []
    for x, (g, _, st) in enumerate(nodes):
        accesses += [(loc, topo[x], x, kind) for loc, kind in _access(g, st)]
    accesses.sort(key=lambda a: (a[0], a[1]))
    _races(accesses, anc, names)
    return _run(algo, lay, nodes, names, order, pairs, accesses)


def _races(accesses: list, anc: list, names: list) -> None:
    last, reads, loc0 = None, [], None
    for loc, _, x, kind in accesses:
        if loc != loc0:
            last, reads, loc0 = None, [], loc
        others = ([last] if last is not None else []) + (reads if kind != "R" else [])
        for p in others:
            if p != x and not (anc[x] >> p) & 1:
                g, buf, off = loc
                what = {"i": "input", "o": "output", "s": "scratch"}[buf]
                raise MscclRaceError(f"gpu {g} {what} offset {off}: {names[p]} and {names[x]} both access it, "
                                     f"one writes, and no dependency orders them", Where(node=g))
        if kind == "R":
            reads.append(x)
        else:
            last, reads = x, []


def _run(algo, lay, nodes, names, order, pairs, accesses) -> Execution:
    red = lay.reduction
    mem = {}
    for g in range(lay.ngpus):
        for off, c in enumerate(lay.input_chunks(g).tolist()):
            if c >= 0:
                mem[(g, "i", off)] = (c, 1 << g if red else 0)
    match_of = {v: u for u, v in pairs}
    tid = {v: i for i, (_, v) in enumerate(pairs)}
    out_of = {u: i for i, (u, _) in enumerate(pairs)}
    payload, transfers, forwards, double = {}, [None] * len(pairs), [], None

    def read(x, g, buf, off):
        value = mem.get((g, buf, off))
        if value is None:
            what = {"i": "input", "o": "output", "s": "scratch"}[buf]
            raise MissingDataError(f"{names[x]} reads {what} offset {off}, which holds no data", Where(node=g))
        return value

    for x in order:
        g, tb, st = nodes[x]
        t = st.type
        incoming = None
        if t in RECVS:
            incoming = payload[match_of[x]]
            u = match_of[x]
            transfers[tid[x]] = (nodes[u][0], g, [c for c, _ in incoming], t in REDUCES, u, x)
            if x in out_of:
                forwards.append((tid[x], out_of[x]))
        if t in REDUCES:
            local = [read(x, g, st.srcbuf, st.srcoff + i) for i in range(st.cnt)]
            other = incoming if incoming is not None else [read(x, g, st.dstbuf, st.dstoff + i)
                                                           for i in range(st.cnt)]
            result = []
            for (c1, m1), (c2, m2) in zip(local, other):
                if c1 != c2:
                    raise ConflictingWriteError(f"{names[x]} combines chunk {c1} with chunk {c2}", Where(node=g))
                if m1 & m2 and double is None:
                    double = f"{names[x]} combines contributions {sorted(_bits(m1 & m2))} to chunk {c1} twice"
                result.append((c1, m1 | m2))
        elif t == "cpy" or t == "s":
            result = [read(x, g, st.srcbuf, st.srcoff + i) for i in range(st.cnt)]
        else:
            result = incoming
        if t in ("r", "rcs", "rrc", "rrcs", "cpy", "re"):
            for i, value in enumerate(result):
                mem[(g, st.dstbuf, st.dstoff + i)] = value
        if t in SENDS:
            chunks = [c for c, _ in result]
            if len(set(chunks)) < len(chunks):
                raise MscclFormatError(f"{names[x]} sends one chunk twice ({chunks}): collsim's payloads are sets")
            payload[x] = result
    return Execution(transfers, accesses, forwards, mem, double, names, tid, out_of)


def _bits(mask: int) -> list:
    return [i for i in range(mask.bit_length()) if (mask >> i) & 1]
