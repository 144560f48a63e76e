"""Collectives are objects with predicates (issue 23).

Each :class:`~collsim.core.collectives.CollectiveType` must agree with the behaviour it replaced:
the name-branching code of 8db759e is kept below as the reference (pre/post pairs, chunk
counts, sizes, busbw, traffic and cut demands), and compared for random N, split, root and q.
The branch counter (``benchmarks/collective_branches.py``) must find no branch on a
collective's name outside the collective objects and ``algorithms/`` but the ones listed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.core.collective import make_collective, min_deliveries
from collsim.core.collectives import TYPES
from collsim.cost.bounds import ring_distance_sum, traffic_bound
from collsim.kinds.network.cuts import cut_demand_bytes

KINDS = sorted(TYPES)
ROOT = Path(__file__).resolve().parents[1]


# -- the behaviour of 8db759e, branch by branch -------------------------------------------------
def old_holders(kind, n, s, root, q):
    """Explicit (pre, post) holders per chunk (-2: every node), as make_collective built them."""
    owner = np.repeat(np.arange(n), s)
    c = {"allgather": n * s, "reducescatter": n * s, "scatter": n * s, "gather": n * s,
         "shift": n * s, "alltoall": n * n * s}.get(kind, s)
    every, at_root = np.full(c, -2), np.full(c, root if root is not None else -9)
    if kind == "alltoall":
        a = np.repeat(np.arange(n), n * s)
        b = np.tile(np.repeat(np.arange(n), s), n)
        same = a == b
        a[same], b[same] = -1, -1
        return a, b
    return {"allgather": (owner, every), "reducescatter": (every, owner), "allreduce": (every, every),
            "scan": (every, every), "broadcast": (at_root, every), "reduce": (every, at_root),
            "scatter": (at_root, owner), "gather": (owner, at_root),
            "shift": (owner, (owner + (q or 1)) % n)}[kind]


OLD_BUSBW = {"allreduce": lambda n: 2 * (n - 1) / n, "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0,
             "scan": lambda n: 1.0, "shift": lambda n: 1.0}
OLD_DELIVERIES = {"allgather": lambda n, s: (n - 1) * n * s, "reducescatter": lambda n, s: (n - 1) * n * s,
                  "allreduce": lambda n, s: n * s, "broadcast": lambda n, s: (n - 1) * s,
                  "reduce": lambda n, s: (n - 1) * s, "alltoall": lambda n, s: (n - 1) * n * s,
                  "scatter": lambda n, s: (n - 1) * s, "gather": lambda n, s: (n - 1) * s,
                  "scan": lambda n, s: (n - 1) * s, "shift": lambda n, s: n * s}


def old_traffic(kind, n, m, q):
    if kind == "allgather":
        return (n - 1) * m, m, n * (n - 1) * m
    if kind == "reducescatter":
        return (n - 1) * m, (n - 1) * m, n * (n - 1) * m
    if kind == "allreduce":
        per = 2 * (n - 1) * m / n
        return per, per, 2 * (n - 1) * m
    if kind in ("broadcast", "reduce", "scan"):
        return m, m, (n - 1) * m
    if kind in ("scatter", "gather"):
        return ((n - 1) * m if kind == "gather" else m, (n - 1) * m if kind == "scatter" else m, (n - 1) * m)
    if kind == "shift":
        return m, m, n * min(q, n - q) * m
    return (n - 1) * m, (n - 1) * m, ring_distance_sum(n) * m


def old_demand(kind, n, m, root, q, in_a):
    """Per-cut bytes A -> B and B -> A by brute force over the postcondition's needs."""
    ab, ba = np.zeros(len(in_a)), np.zeros(len(in_a))
    for k, side in enumerate(in_a):
        for x, y, out in ((side, ~side, ab), (~side, side, ba)):
            if not x.any() or not y.any():
                continue
            src, dst = np.flatnonzero(x), np.flatnonzero(y)
            if kind == "allgather":
                out[k] = len(src) * m
            elif kind == "reducescatter":
                out[k] = len(dst) * m
            elif kind == "allreduce":
                out[k] = m
            elif kind == "alltoall":
                out[k] = len(src) * len(dst) * m
            elif kind == "broadcast":
                out[k] = m if x[root] else 0
            elif kind == "reduce":
                out[k] = m if y[root] else 0
            elif kind == "scatter":
                out[k] = len(dst) * m if x[root] else 0
            elif kind == "gather":
                out[k] = len(src) * m if y[root] else 0
            elif kind == "scan":
                out[k] = m if src.min() < dst.max() else 0
            else:
                out[k] = sum(m for i in src if (i + q) % n in set(dst))
    return ab, ba


def explicit(h):
    """Holders per chunk of a Holdings (-2: every node)."""
    return np.where(h.every, -2, h.holder.astype(np.int64))


instances = st.tuples(st.sampled_from(KINDS), st.integers(2, 9), st.integers(1, 3), st.integers(0, 8),
                      st.integers(1, 8), st.integers(1, 10**6))


@settings(max_examples=300, deadline=None)
@given(instances)
def test_each_object_agrees_with_the_old_branches(case):
    kind, n, s, root, q, m = case
    t = TYPES[kind]
    root = root % n if t.rooted else None
    q = 1 + (q - 1) % (n - 1) if t.shifted else None
    c = make_collective(kind, n, m, split=s, root=root, **({"shift": q} if q else {}))
    pre, post = old_holders(kind, n, s, root, q)
    assert np.array_equal(explicit(c.pre), pre) and np.array_equal(explicit(c.post), post)
    assert c.split == s and c.chunks == len(pre) == t.chunk_count(n, s)
    assert c.describe() == {"kind": kind, "nodes": n, "size_bytes": m, "split": s, "root": root,
                            **({"shift": q} if kind == "shift" else {})}
    assert c.prefix == (kind == "scan") and c.reduction == (kind in ("reducescatter", "allreduce", "reduce", "scan"))
    assert c.rooted == (kind in ("broadcast", "reduce", "scatter", "gather"))
    assert min_deliveries(kind, n, s) == OLD_DELIVERIES[kind](n, s)
    assert t.busbw_factor(n) == OLD_BUSBW.get(kind, lambda n: (n - 1) / n)(n)
    nccl_n = kind in ("allgather", "reducescatter", "alltoall", "scatter", "gather")
    assert c.total_bytes == m * (n if nccl_n else 1) and t.nccl_blocks == nccl_n
    b = traffic_bound(c)
    assert (b.recv_bytes, b.send_bytes, b.hop_bytes_ring) == old_traffic(kind, n, float(m), q)
    cuts = np.random.default_rng(n * 100 + s).random((6, n)) < 0.5
    got = cut_demand_bytes(c, cuts)
    want = old_demand(kind, n, float(m), root, q, cuts)
    assert np.allclose(got[0], want[0]) and np.allclose(got[1], want[1])
    src, dst = t.endpoints(n, q)
    assert t.point_to_point == (len(src) > 0)
    if t.point_to_point:   # every block's source holds it before, its destination after
        blocks = {(int(a), int(d)) for a, d in zip(pre, post) if a >= 0}
        assert blocks == set(zip(src.tolist(), dst.tolist()))


def test_the_registry_is_the_old_table():
    assert set(TYPES) == {"allgather", "reducescatter", "allreduce", "broadcast", "reduce",
                          "alltoall", "scatter", "gather", "scan", "shift"}
    # the block predicates name what the block layout says
    assert [k for k, t in TYPES.items() if t.per_pair] == ["alltoall"]
    assert {k for k, t in TYPES.items() if t.whole_vector} == {"allreduce", "broadcast", "reduce", "scan"}
    assert all(t.per_node + t.per_pair + t.whole_vector == 1 for t in TYPES.values())
    assert all(t.description and t.title and t.size_meaning and t.mpi_function for t in TYPES.values())
    assert {t.dual for t in TYPES.values() if t.dual} <= set(TYPES)
    assert make_collective("ag", 3, 8).type is TYPES["allgather"] and collsim.core.collective.collective_type(
        "bcast") is TYPES["broadcast"]


def _counter():
    spec = importlib.util.spec_from_file_location("collective_branches", ROOT / "benchmarks" / "collective_branches.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Branches on a collective's name that remain outside the collective objects and algorithms/,
# each with its reason.  The test fails on any other, or on more than these: none remain.
REMAINING: dict[str, int] = {}


def test_no_branch_on_a_collective_name_outside_the_objects_and_algorithms():
    cb = _counter()
    per_file = cb.count(ROOT / "src" / "collsim")
    outside = {rel: len(found) for rel, found in per_file.items() if cb.part_of(rel) == "elsewhere"}
    extra = {rel: [line for line, _ in per_file[rel]] for rel, n in outside.items() if n > REMAINING.get(rel, 0)}
    assert not extra, f"branches on a collective's name (file: lines); ask coll.type instead: {extra}"
    assert sum(outside.values()) == sum(REMAINING.values())
    assert cb.summary(per_file)["objects"] == 0   # the objects hold data and methods, not branches


def test_the_counter_finds_each_form_of_branch():
    cb = _counter()
    src = ('REDS = ("reduce", "allreduce")\n'
           'if coll.name == "alltoall": pass\n'           # comparison
           'if kind in ("broadcast", "scatter"): pass\n'  # membership in a literal
           'if collective not in REDS: pass\n'            # membership in a module constant
           'x = {"scan": 1, "shift": 2}[k]\n'             # dict dispatch
           'if tr["reduce"] or key == "shift" or self.collectives == ("allgather",): pass\n')   # none
    assert cb.branches(src) == [(2, "compare"), (3, "member"), (4, "member"), (5, "dict")]
    assert cb.summary({"core/collectives.py": [(1, "compare")], "algorithms/ring.py": [(1, "dict")] * 2,
                       "kinds/network/cuts.py": [(3, "member")]}) == {
        "total": 4, "objects": 1, "algorithms": 2, "elsewhere": 1, "outside_algorithms": 2, "outside_objects": 3,
        "files": 3}


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(KINDS), st.integers(2, 7), st.integers(1, 3), st.integers(0, 6), st.integers(1, 6))
def test_buffers_hold_what_the_holdings_say(kind, n, s, root, q):
    """A rank's input holds what it holds before and its output what it must hold after (all-to-all's
    own blocks aside); offsets invert chunk ids."""
    t = TYPES[kind]
    root, q = root % n, 1 + (q - 1) % (n - 1)
    c = make_collective(kind, n, 8, split=s, root=root if t.rooted else None, shift=q)
    for which, hold in (("input", c.pre), ("output", c.post)):
        for v in range(n):
            ids = t.buffer_chunks(which, n, s, v, root, q)
            there = ids >= 0
            assert np.array_equal(t.buffer_offsets(which, n, s, v, ids[there], root, q), np.flatnonzero(there))
            holder = explicit(hold)
            held = set(np.flatnonzero((holder == v) | (holder == -2)).tolist())
            got = ids[there]
            if t.per_pair:   # MPI's and MSCCL's all-to-all buffers hold the rank's own block too
                got = got[got // s // n != got // s % n]
            assert set(got.tolist()) == held
