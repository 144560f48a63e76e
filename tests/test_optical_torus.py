"""The optical torus (issue #13, seed 004 §VI-B): system, RWA, verification, bound, torus algorithms.

Golden numbers come from the formulas derived in docs/optical-torus.md, computed here from the
system's parameters, never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim.core.collective import make_collective
from collsim.core.errors import (ChannelConflictError, ChannelRangeError, InputError, RouteError,
                                 TransceiverLimitError, UnsupportedError)
from collsim.core.schedule import LogicalBuilder
from collsim.core.system import system_from_description
from collsim.kinds.optical_ring.bound import optical_lower_bound_s
from collsim.kinds.optical_torus.cost import torus_distance_sum, torus_hop_bytes, torus_lower_bound_s, torus_min_slots
from collsim.kinds import model_for
from collsim.pipeline import build, realize, run, verify
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing
from collsim.kinds.optical_torus import OpticalTorus
from collsim.kinds.optical_torus.resources import verify_torus_resources

B = 40e9 / 8        # bytes per second per wavelength
T_OEO = 1e-9        # one clock cycle per 32-byte flit
T_RECONF = 25e-6


def t_piece(size, band=1, packet=128, flit=32):
    """A transfer of ``size`` bytes over a band (docs/cost-models.md): padded wire bytes over the band,
    plus the band's share of the flits' O/E/O."""
    wire = -(-size // packet) * packet
    return wire / (band * B) + -(-(-(-size // flit)) // band) * T_OEO


def torus(rows, cols, **kw):
    return OpticalTorus(rows=rows, cols=cols, **kw)


# ---------------------------------------------------------------- the system

def test_loads_as_a_kind_with_rows_and_cols():
    t = load_system("optical-torus", rows=32, cols=32, wavelengths=64)
    assert (t.topology, t.nodes, t.rows, t.cols, t.wavelengths, t.fibers) == ("optical-torus", 1024, 32, 32, 64, 1)
    assert load_system("optical-torus", nodes=32).rows == 4 and load_system("optical-torus", nodes=7).cols == 7
    assert load_system("optical-torus", nodes=12, rows=2).cols == 6
    assert model_for(t).name == "optical-torus"
    assert system_from_description(t.describe()) == t


@pytest.mark.parametrize("kw,words", [
    ({"rows": 0, "cols": 4}, "rows must be an integer >= 1, got 0"),
    ({"rows": 4, "cols": -2}, "cols must be an integer >= 1, got -2"),
    ({"rows": "x", "cols": 4}, "rows must be an integer"),
    ({"rows": 1, "cols": 1}, "at least 2"),
    ({"rows": 3, "cols": 3, "nodes": 10}, "nodes=10 does not match rows x cols = 3x3 = 9"),
    ({"rows": 3, "cols": 3, "wavelengths": 0}, "wavelengths"),
    ({"rows": 3, "cols": 3, "shared_transceivers": "maybe"}, "shared_transceivers must be true or false"),
    ({"rows": 3, "cols": 3, "shared_transceivers": 2}, "shared_transceivers must be true or false"),
])
def test_bad_shapes_are_refused_by_name(kw, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        OpticalTorus(**kw)


def test_bad_nodes_for_a_side_is_refused():
    with pytest.raises(InputError, match="not a multiple of 5"):
        load_system("optical-torus", nodes=12, rows=5)


def test_transceivers_shared_or_per_ring():
    f, w = 2, 8
    assert torus(4, 4, fibers=f, wavelengths=w).tx_channels == 2 * f * w
    assert torus(4, 4, fibers=f, wavelengths=w, shared_transceivers=False).rx_channels == 4 * f * w
    assert torus(1, 6, fibers=f, wavelengths=w, shared_transceivers=False).tx_channels == 2 * f * w  # one ring
    assert torus(4, 4, fibers=f, wavelengths=w, max_tx_channels=5).tx_channels == 5
    assert torus(4, 4, fibers=f, wavelengths=w, shared_transceivers=False).tx_limit is None  # links enforce it


def test_link_names_and_counts():
    t = torus(3, 4)
    assert t.link_count == 4 * 12
    assert [t.link_name(k * 12 + 5) for k in range(4)] == ["row cw 5->6", "row ccw 5->4", "col cw 5->9",
                                                           "col ccw 5->1"]
    assert torus(1, 5).link_count == 10 and torus(1, 5).summary()["diameter"] == 2


# ---------------------------------------------------------------- realisation and verification

SHAPES = [(1, 5), (5, 1), (2, 2), (2, 3), (3, 4), (4, 4), (3, 5)]


@pytest.mark.parametrize("rows,cols", SHAPES)
@pytest.mark.parametrize("shared", [True, False])
def test_torus_striped_verifies_on_every_shape(rows, cols, shared):
    sy = torus(rows, cols, wavelengths=4, fibers=2, shared_transceivers=shared)
    for coll in ("allgather", "reducescatter", "allreduce"):
        for orders in (1, 2):
            s = build("torus-striped", sy, coll, 5000, orders=orders)
            report = verify(s)
            assert report.transfers == len(s) and report.max_hops == 1


@pytest.mark.parametrize("rows,cols", SHAPES)
def test_torus_optree_verifies_on_every_shape(rows, cols):
    s = build("torus-optree", torus(rows, cols, wavelengths=2), "allgather", 4096)
    verify(s)
    assert s.hops.max() <= max(rows, cols) // 2 + 1


def test_transfers_outside_a_row_and_column_are_refused():
    sy = torus(3, 3)
    b = LogicalBuilder(make_collective("allgather", 9, 64))
    b.add(0, [0], [4], [[0]])
    with pytest.raises(UnsupportedError, match="shares? neither a row nor a column"):
        realize(sy, b.build())


def _striped(rows=3, cols=4, **kw):
    return build("torus-striped", torus(rows, cols, wavelengths=2, **kw), "allgather", "1KiB")


def test_two_transfers_on_one_channel_are_rejected_naming_step_link_wavelength():
    s = _striped()
    # transfers 0 and 1 of step 0: node 0 and node 1 both clockwise on row 0, fiber 0, band 0..1;
    # make node 0's lightpath two hops long, over node 1's link 1->2
    assert s.src[0] == 0 and s.src[1] == 1 and s.direction[0] == s.direction[1] == 1 and s.step[1] == 0
    bad = s.replace(dst=np.where(np.arange(len(s)) == 0, 2, s.dst), hops=np.where(np.arange(len(s)) == 0, 2, s.hops))
    with pytest.raises(ChannelConflictError) as exc:
        verify_torus_resources(bad)
    msg = str(exc.value)
    assert "steps[0].transfers[0] and steps[0].transfers[1]" in msg and "link row cw 1->2" in msg
    assert "fiber 0" in msg and "wavelength 0" in msg


def test_a_conflict_on_a_column_ring_names_the_column_link():
    s = _striped(4, 3)
    col = np.flatnonzero((s.dst - s.src) % 12 == 3)   # column cw transfers, one hop down
    a, b = int(col[0]), int(col[1])
    assert s.step[a] == s.step[b] and s.src[b] == s.src[a] + 3
    rows = np.arange(len(s))
    bad = s.replace(dst=np.where(rows == a, s.src[a] + 6, s.dst), hops=np.where(rows == a, 2, s.hops))
    with pytest.raises(ChannelConflictError, match=rf"link col cw {int(s.src[b])}->{int(s.src[b]) + 3}"):
        verify_torus_resources(bad)


def test_the_same_channel_on_different_rings_is_no_conflict():
    s = _striped()
    assert (s.fiber == 0).all() and (s.wavelength == 0).all()   # every ring reuses every channel
    verify_torus_resources(s)


@pytest.mark.parametrize("change,error,words", [
    (lambda s: {"wavelength": s.wavelength + 1}, ChannelRangeError, "band 1..2 not in 0..1"),
    (lambda s: {"fiber": s.fiber + 1}, ChannelRangeError, "fiber 1 not in 0..0"),
    (lambda s: {"dst": (s.dst + 5) % 12}, RouteError, "leaves its row and its column"),
    (lambda s: {"hops": s.hops + 1}, RouteError, "ends at"),
    (lambda s: {"hops": s.hops * 0 + 4}, RouteError, "route of 4 hops on a 4-node row ring"),
    (lambda s: {"direction": s.direction * 0}, RouteError, "direction must be"),
])
def test_mutations_are_rejected(change, error, words):
    s = _striped()
    with pytest.raises(error, match=words):
        verify(s.replace(**change(s)))


def _four_ways(sy):
    """Node 0 of a 3x3 torus sends on its four ring-directions at once, every band of w wavelengths."""
    b = LogicalBuilder(make_collective("allgather", 9, 64))
    b.add(0, [0, 0, 0, 0], [1, 2, 3, 6], [[0]] * 4, color=0, band=sy.wavelengths)
    return realize(sy, b.build())


def test_shared_transceivers_split_slots_and_are_enforced():
    w = 2
    per_ring = _four_ways(torus(3, 3, wavelengths=w, shared_transceivers=False))
    assert per_ring.num_steps == 1
    verify_torus_resources(per_ring)
    shared = _four_ways(torus(3, 3, wavelengths=w))
    assert shared.num_steps == 2                       # 4w channels from one node, 2w at a time
    verify_torus_resources(shared)
    with pytest.raises(TransceiverLimitError, match=r"node 0 transmits on 8 channels, limit 4 \(steps\[0\]"):
        verify_torus_resources(per_ring.replace(system=torus(3, 3, wavelengths=w)))


# ---------------------------------------------------------------- the lower bound

def test_distance_sum_against_brute_force():
    for rows, cols in [(1, 2), (2, 2), (3, 4), (5, 3), (4, 6)]:
        brute = 0
        for a in range(rows * cols):
            for b in range(rows * cols):
                dr, dc = abs(a // cols - b // cols), abs(a % cols - b % cols)
                brute += min(dr, rows - dr) + min(dc, cols - dc)
        assert torus_distance_sum(rows, cols) == brute


def test_shift_hop_bytes_and_slots_against_brute_force():
    sy = torus(3, 4)
    for q in range(1, 12):
        c = make_collective("shift", 12, 10, shift=q)
        dist = [min(abs(((a + q) % 12) // 4 - a // 4), 3 - abs(((a + q) % 12) // 4 - a // 4))
                + min(abs(((a + q) % 12) % 4 - a % 4), 4 - abs(((a + q) % 12) % 4 - a % 4)) for a in range(12)]
        assert torus_hop_bytes(sy, c) == 10 * sum(dist)
        both = any(((a + q) % 12) // 4 != a // 4 and ((a + q) % 12) % 4 != a % 4 for a in range(12))
        assert torus_min_slots(sy, c) == (2 if both else 1)


@pytest.mark.parametrize("shared", [True, False])
def test_allgather_bound_closed_form(shared):
    # (N-1) m bytes into every node over 2Fw (shared) or 4Fw channels; two slots of latency
    sy = torus(4, 8, wavelengths=16, fibers=2, shared_transceivers=shared, slot_latency_s=1e-6)
    m = 1 << 20
    tau = 1 / B + T_OEO / 32
    channels = (2 if shared else 4) * 2 * 16
    want = T_RECONF + 2e-6 + tau * 31 * m / channels
    assert torus_lower_bound_s(sy, make_collective("allgather", 32, m)) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("coll", ["allgather", "reducescatter", "allreduce", "alltoall", "broadcast"])
def test_a_1xn_torus_is_the_ring(coll, shared):
    sy, ring = torus(1, 9, wavelengths=4, shared_transceivers=shared), OpticalRing(nodes=9, wavelengths=4)
    c = make_collective(coll, 9, 4096)
    assert torus_lower_bound_s(sy, c) == pytest.approx(optical_lower_bound_s(ring, c), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 5), cols=st.integers(2, 5), w=st.integers(1, 8), f=st.integers(1, 2),
       shared=st.booleans(), size=st.integers(1, 1 << 18), latency=st.sampled_from([0.0, 2e-6]),
       coll=st.sampled_from(["allgather", "reducescatter", "allreduce"]), orders=st.sampled_from([1, 2]))
def test_bound_is_below_every_algorithm(rows, cols, w, f, shared, size, latency, coll, orders):
    sy = torus(rows, cols, wavelengths=w, fibers=f, shared_transceivers=shared, slot_latency_s=latency)
    algs = ["torus-striped", "torus-optree"] if coll == "allgather" else ["torus-striped"]
    for alg in algs:
        r = run(alg, sy, coll, size, orders=orders)
        assert r.verified and r.lower_bound_s <= r.time_s * (1 + 1e-12), (alg, r.lower_bound_s, r.time_s)


# ---------------------------------------------------------------- closed-form times

@pytest.mark.parametrize("rows,cols,f,w", [(4, 8, 1, 64), (3, 5, 2, 4), (6, 2, 1, 1)])
@pytest.mark.parametrize("shared", [True, False])
def test_torus_striped_allgather_time_closed_form(rows, cols, f, w, shared):
    # rows: C-1 slots of one piece m/2F on a band of w; columns: R-1 slots of C pieces; the lightpaths
    # change once, between the phases: 2 reconfigurations
    m = 2 * f * 3000
    sy = torus(rows, cols, wavelengths=w, fibers=f, shared_transceivers=shared, slot_latency_s=1e-6)
    r = run("torus-striped", sy, "allgather", m, orders=1)
    piece = m // (2 * f)
    want = 2 * T_RECONF + (cols - 1) * (t_piece(piece, w) + 1e-6) + (rows - 1) * (t_piece(cols * piece, w) + 1e-6)
    assert r.slots == rows + cols - 2 and r.reconfigurations == 2
    assert r.time_s == pytest.approx(want, rel=1e-12)


def test_torus_striped_both_orders_reaches_the_per_ring_bound():
    # n x n, transceivers per ring: 2(n-1) slots of pieces m/4F then n m/4F, the lightpaths never change;
    # with m a multiple of 4F * packet the time is the bound (N-1) m tau / 4Fw + t_reconf exactly
    n, f, w, m = 8, 1, 16, 4 * 128 * 64
    sy = torus(n, n, wavelengths=w, fibers=f, shared_transceivers=False)
    r = run("torus-striped", sy, "allgather", m)
    assert r.params["orders"] == 2 and r.slots == 2 * (n - 1) and r.reconfigurations == 1
    want = T_RECONF + (n - 1) * (t_piece(m // (4 * f), w) + t_piece(n * m // (4 * f), w))
    assert r.time_s == pytest.approx(want, rel=1e-12)
    assert r.lower_bound_s == pytest.approx(T_RECONF + (n * n - 1) * m * (1 / B + T_OEO / 32) / (4 * f * w))
    assert r.efficiency == pytest.approx(1.0, rel=1e-12)


def test_torus_striped_on_1xn_is_the_striped_ring():
    a = run("torus-striped", torus(1, 7, wavelengths=8), "allreduce", 70000)
    b = run("striped-ring", OpticalRing(nodes=7, wavelengths=8), "allreduce", 70000)
    assert (a.slots, a.time_s, a.lower_bound_s) == (b.slots, b.time_s, b.lower_bound_s)


def test_torus_optree_one_stage_per_ring_closed_form():
    # 4 x 4, w = 2: one-stage all-to-all on a 4-ring has link load 2 per direction (4 one-hop and 2 two-hop
    # arcs over 4 links), so each phase is one slot; one chunk per lightpath: t(m), then t(4m)
    m = 4096
    r = run("torus-optree", torus(4, 4, wavelengths=2), "allgather", m)
    assert r.params["row_radices"] == [4] and r.params["col_radices"] == [4]
    assert (r.slots, r.reconfigurations, r.max_hops) == (2, 2, 2)
    assert r.time_s == pytest.approx(2 * T_RECONF + t_piece(m) + t_piece(4 * m), rel=1e-12)


def test_torus_optree_phases_are_optree_on_each_ring():
    sy = torus(8, 16, wavelengths=4)
    r = build("torus-optree", sy, "allgather", 1000)
    row = build("optree", sy.row_ring, "allgather", 1000)
    col = build("optree", sy.col_ring, "allgather", 16 * 1000)
    assert r.num_steps == row.num_steps + col.num_steps
    assert r.params["row_radices"] == row.params["radices"] and r.params["col_radices"] == col.params["radices"]


# ---------------------------------------------------------------- against the single ring, and the CLI

def test_1024_nodes_torus_against_the_ring():
    sy = load_system("optical-torus", rows=32, cols=32, wavelengths=64)
    ring = load_system("paper", nodes=1024)
    striped = run("torus-striped", sy, "allgather", "4MiB")
    assert striped.slots == 62 and striped.max_hops == 1 and striped.efficiency > 0.99
    tree = run("torus-optree", sy, "allgather", "4MiB")
    assert tree.feasible and tree.max_hops <= 16
    assert not run("optree", ring, "allgather", "4MiB").feasible   # its stage-1 lightpaths are too long
    assert run("torus-striped", sy, "allgather", "4MiB").lower_bound_s == run(
        "striped-ring", ring, "allgather", "4MiB").lower_bound_s   # shared transceivers: the ring's 2Fw


def test_cli_compare_lists_the_torus_algorithms(run_cli):
    res = run_cli("compare", "--system", "optical-torus", "-S", "rows=3", "-S", "cols=4", "-w", "4", "-s", "64KiB",
                  "--format", "csv", check=True)
    assert "torus-striped" in res.stdout and "torus-optree" in res.stdout
    res = run_cli("systems", check=True)
    assert "optical-torus" in res.stdout and "shared_transceivers" in res.stdout


def test_npz_round_trip(tmp_path):
    from collsim.core.serialize import load, save
    s = _striped()
    path = tmp_path / "t.npz"
    save(s, path)
    back = load(path)
    assert back.system == s.system and np.array_equal(back.hops, s.hops)
    verify(back)
    assert math.isclose(model_for(back.system).time(back).time_s, model_for(s.system).time(s).time_s)


def test_json_round_trip_with_directions_and_hops(monkeypatch):
    # the JSON writer's "path" form walks node ids round one ring of N (issue #13 report); the
    # "dir"/"hops" form it uses for big schedules reads back and verifies on the torus
    from collsim.core import serialize
    monkeypatch.setattr(serialize, "PATH_LIMIT", -1)
    s = _striped()
    back = serialize.loads(serialize.dumps(s))
    assert back.system == s.system and np.array_equal(back.direction, s.direction)
    verify(back)


def test_shared_transceivers_from_the_command_line_words():
    assert load_system("optical-torus", rows=2, cols=2, shared_transceivers="false").shared_transceivers is False
    assert load_system("optical-torus", rows=2, cols=2, shared_transceivers="Yes").shared_transceivers is True


@pytest.mark.parametrize("strategy", ["first-fit", "best-fit", "most-used"])
def test_uncoloured_rounds_are_coloured_per_ring_as_on_the_ring(strategy):
    # a direct all-gather along every row at once, no colours given: each row is the ring's problem,
    # coloured independently, so the torus needs exactly the ring's slots
    from collsim.kinds.optical_ring.rwa import realize_ring
    c, rows, w = 6, 3, 2
    a, b = np.nonzero(~np.eye(c, dtype=bool))
    rb = LogicalBuilder(make_collective("allgather", c, 64))
    rb.add(0, a, b, a[:, None])
    ring_slots = realize_ring(OpticalRing(nodes=c, wavelengths=w), rb.build(), strategy=strategy).num_steps
    tb = LogicalBuilder(make_collective("allgather", rows * c, 64))
    for r in range(rows):
        tb.add(0, r * c + a, r * c + b, (r * c + a)[:, None])
    s = realize(torus(rows, c, wavelengths=w), tb.build(), strategy=strategy)
    assert s.num_steps == ring_slots > 1
    verify_torus_resources(s)


def _brute_force_conflict(s) -> bool:
    """Any (step, ring link, direction, fiber, wavelength) used twice, by walking every route."""
    sy, seen = s.system, set()
    for t in range(len(s)):
        path = sy.path(int(s.src[t]), int(s.dst[t]), int(s.direction[t]), int(s.hops[t]))
        dim = 0 if int(s.src[t]) // sy.cols == int(s.dst[t]) // sy.cols else 1
        for v in path[:-1]:
            for lam in range(int(s.wavelength[t]), int(s.wavelength[t]) + int(s.band[t])):
                key = (int(s.step[t]), dim, v, int(s.direction[t]), int(s.fiber[t]), lam)
                if key in seen:
                    return True
                seen.add(key)
    return False


@settings(max_examples=40, deadline=None)
@given(data=st.data(), rows=st.integers(1, 4), cols=st.integers(2, 4), w=st.integers(1, 3), f=st.integers(1, 2))
def test_channel_check_agrees_with_brute_force(data, rows, cols, w, f):
    from collsim.kinds.optical_torus.resources import verify_torus_channels
    sy = torus(rows, cols, wavelengths=w, fibers=f, shared_transceivers=False)
    n = sy.nodes
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (a // cols == b // cols or a % cols == b % cols)]
    picks = data.draw(st.lists(st.sampled_from(pairs), min_size=2, max_size=8))
    rb = LogicalBuilder(make_collective("allgather", n, 64))
    for a, b in picks:
        rb.add(0, [a], [b], [[a]], direction=data.draw(st.sampled_from([1, -1])),
               color=data.draw(st.integers(0, f * w - 1)), band=data.draw(st.integers(1, w)))
    s = realize(sy, rb.build())
    if _brute_force_conflict(s):
        with pytest.raises(ChannelConflictError):
            verify_torus_channels(s)
    else:
        verify_torus_channels(s)


def test_torus_optree_both_orders_closed_form():
    # per-ring transceivers, 4 x 4, w = 2: rows (m/2 per lightpath) and columns (m/2) at once in one slot,
    # then columns (4 m/2) and rows (4 m/2) at once; the same one-stage lightpaths both times: one reconfiguration
    m = 4096
    sy = torus(4, 4, wavelengths=2, shared_transceivers=False)
    r = run("torus-optree", sy, "allgather", m, orders=2)
    assert (r.slots, r.reconfigurations) == (2, 1)
    assert r.time_s == pytest.approx(T_RECONF + t_piece(m // 2) + t_piece(4 * m // 2), rel=1e-12)
    # shared transceivers: 3 + 3 lightpaths from a node exceed its 2Fw = 4, so every stage takes two slots
    assert run("torus-optree", torus(4, 4, wavelengths=2), "allgather", m, orders=2).slots == 4
    with pytest.raises(InputError, match="orders must be 1"):
        build("torus-optree", sy, "allgather", m, orders=3)


@pytest.mark.parametrize("rows,cols", [(1, 4), (3, 1), (2, 5), (4, 3)])
def test_torus_optree_both_orders_verifies(rows, cols):
    for shared in (True, False):
        verify(build("torus-optree", torus(rows, cols, wavelengths=3, shared_transceivers=shared), "allgather",
                     1001, orders=2))


def test_json_schedule_files_round_trip_and_refuse_ring_paths(tmp_path):
    """A torus lightpath stays in one row or column ring: JSON gives dir/hops, and a 'path' is refused."""
    import json
    import subprocess

    from conftest import collsim_exe
    f = tmp_path / "t.json"
    made = subprocess.run([collsim_exe(), "schedule", "torus-striped", "--system", "optical-torus", "-S", "rows=3",
                           "-S", "cols=4", "-w", "2", "-s", "1KiB", "--out", str(f)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    ok = subprocess.run([collsim_exe(), "verify", str(f)], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.startswith("valid"), ok.stdout + ok.stderr
    doc = json.loads(f.read_text())
    first = doc["steps"][0]["transfers"][0]
    assert "path" not in first and {"dir", "hops"} <= set(first)
    first["path"] = [first["src"], first["dst"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = subprocess.run([collsim_exe(), "verify", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2 and "not 'path'" in out.stderr and out.stderr.count("\n") == 1
