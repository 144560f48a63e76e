"""The electrical-network core: routing, route verification, link loads, α–β, files."""

from __future__ import annotations

import numpy as np

from collsim.verify.resources import check_network_routes
import pytest

import collsim
from collsim.core import errors as E
from collsim.core.collective import make_collective
from collsim.core.schedule import LogicalBuilder
from collsim.core.serialize import dumps, loads
from collsim.cost import alpha_beta_time_s
from collsim.pipeline import lower_bound_s
from collsim.pipeline import realize
from collsim.kinds.network.electrical import Line, Ring, Star


@pytest.mark.parametrize("system", [Line(nodes=7), Ring(nodes=7), Ring(nodes=8), Ring(nodes=6, bidirectional=False),
                                    Star(nodes=5)])
def test_all_pairs_route_and_check(system):
    n = system.nodes
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    ptr, links = system.route(s[keep], d[keep])
    check_network_routes(system, s[keep], d[keep], ptr, links, np.zeros(keep.sum(), np.int64))
    hops = np.diff(ptr)
    if system.topology == "line":
        assert (hops == np.abs(s[keep] - d[keep])).all()
    elif system.topology == "star":
        assert (hops == 2).all()
    elif system.bidirectional:
        dist = np.abs(s[keep] - d[keep])
        assert (hops == np.minimum(dist, n - dist)).all()


def test_broken_network_route_is_rejected():
    s = collsim.build("ring", Ring(nodes=6), "allgather", 64)
    links = s.route_links.copy()
    links[3] = (links[3] + 2) % len(s.system.links)
    with pytest.raises(E.RouteError) as info:
        collsim.verify(s.replace(route_links=links))
    assert info.value.transfer == 3


def test_link_loads_and_alpha_beta_by_hand():
    # every node sends 1000 B to the node two hops clockwise in one step, on a one-way ring:
    # each link carries two flows, 2000 B, so the alpha-beta time is 2 hops of 1 us + 2000 B / 1 GB/s
    # (before issue 31 it charged one flow's 1000 B: 3 us, as if the links were not shared).
    ring = Ring(nodes=6, bidirectional=False, link_latency_s=1e-6, link_bandwidth_bytes_per_s=1e9)
    b = LogicalBuilder(make_collective("shift", 6, 1000, shift=2))
    i = np.arange(6)
    b.add(0, i, (i + 2) % 6, i[:, None])
    s = realize(ring, b.build())
    collsim.verify(s)
    assert s.max_link_load() == 2
    assert alpha_beta_time_s(s) == pytest.approx(2e-6 + 2 * 1000 / 1e9)
    assert lower_bound_s(ring, s.collective) <= alpha_beta_time_s(s)


def test_startup_cost_replaces_latency_as_ts():
    star = Star(nodes=4, link_latency_s=0.0, startup_s=5e-6, link_bandwidth_bytes_per_s=1e9)
    assert star.alpha_s == 5e-6
    s = collsim.build("ring", star, "allgather", 1000)
    assert alpha_beta_time_s(s) == pytest.approx(3 * (5e-6 + 1e-6))


def test_network_schedule_file_round_trip_and_bad_path():
    s = collsim.build("ne", Star(nodes=6), "allgather", 100)
    text = dumps(s)
    again = loads(text)
    collsim.verify(again)
    assert dumps(again) == text and np.array_equal(again.route_links, s.route_links)
    bad = text.replace('"path":[0,6,1]', '"path":[0,1]', 1)
    assert bad != text
    with pytest.raises(E.RouteError, match="no link"):
        loads(bad)


def test_network_systems_refuse_bad_parameters():
    with pytest.raises(E.InputError):
        Ring(nodes=4, link_bandwidth_bytes_per_s=0)
    with pytest.raises(E.InputError):
        Star(nodes=4, link_latency_s=-1)
    with pytest.raises(E.InputError):
        Line(nodes=1)


def test_blocked_link_loads_equal_a_direct_count(monkeypatch):
    # link_loads works block by block of steps; a tiny block size must give the same counts
    from collsim.core import csr
    from collsim.kinds.network import routes
    from collsim.kinds.network.fat_tree import FatTree
    s = collsim.build("pairwise", FatTree(nodes=32, k=8), "alltoall", "1KiB")
    steps = np.repeat(s.step, s.hops)
    want_keys, want_counts = np.unique(steps * len(s.system.links) + s.route_links, return_counts=True)
    keys, counts = s.link_loads()
    assert np.array_equal(keys, want_keys) and np.array_equal(counts, want_counts)
    small = csr.row_blocks
    calls = []

    def tiny(ptr, max_entries=0):  # blocks of at most 7 entries: many blocks
        calls.append(len(ptr))
        return small(ptr, 7)
    monkeypatch.setattr(routes, "row_blocks", tiny)  # the link routes count their loads block by block
    fresh = s.replace()
    keys, counts = fresh.link_loads()
    assert np.array_equal(keys, want_keys) and np.array_equal(counts, want_counts)
    assert fresh.max_link_load() == want_counts.max()
    assert calls  # the blocked path ran


def test_dense_rank_and_row_blocks():
    from collsim.core.csr import dense_rank, row_blocks
    dense = np.array([0, 0, 1, 2])
    assert dense_rank(dense) is dense            # already dense: no copy
    assert dense_rank(np.array([3, 3, 9])).tolist() == [0, 0, 1]
    assert dense_rank(np.array([], np.int64)).tolist() == []
    ptr = np.array([0, 3, 3, 10, 11])
    blocks = row_blocks(ptr, 4)
    assert blocks[0][0] == 0 and blocks[-1][1] == 4
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    assert all(ptr[hi] - ptr[lo] <= 4 or hi - lo == 1 for lo, hi in blocks)
