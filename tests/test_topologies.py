"""Electrical topologies: mesh, torus, hypercube, fat tree and custom TOML networks."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim.verify.resources import check_network_routes
import pytest

import collsim
from collsim.core.errors import InputError, ScheduleFormatError
from collsim.core.system import system_from_description
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.hypercube import Hypercube
from collsim.kinds.network.mesh_torus import Mesh, Torus
from conftest import raises_naming

SQUARE = ((0, 1), (0, 2), (1, 3), (2, 3), (3, "s0"), (4, "s0"))  # 0-1-3 and 0-2-3 tie; node 4 on a switch


def custom_square():
    return CustomNetwork(nodes=5, switches=1, link=SQUARE)


SYSTEMS = {
    "mesh-3x4": lambda: Mesh.from_dims((3, 4)),
    "mesh-2x3x4": lambda: Mesh.from_dims((2, 3, 4)),
    "mesh-5": lambda: Mesh.from_dims((5,)),
    "torus-4x4": lambda: Torus.from_dims((4, 4)),
    "torus-3x5": lambda: Torus.from_dims((3, 5)),
    "torus-2x3x4": lambda: Torus.from_dims((2, 3, 4)),
    "torus-4x4x4": lambda: Torus.from_dims((4, 4, 4)),
    "torus-2x2": lambda: Torus.from_dims((2, 2)),
    "hypercube-2": lambda: Hypercube(nodes=2),
    "hypercube-16": lambda: Hypercube(nodes=16),
    "fat-tree-k4": lambda: FatTree(nodes=16, k=4, levels=3),
    "fat-tree-k6-partial": lambda: FatTree(nodes=40, k=6, levels=3),
    "fat-tree-k2": lambda: FatTree(nodes=2, k=2, levels=3),
    "leaf-spine-k4": lambda: FatTree(nodes=8, k=4, levels=2),
    "leaf-spine-k6-partial": lambda: FatTree(nodes=13, k=6, levels=2),
    "custom-square": custom_square,
}


def all_pairs(n):
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    return s[keep], d[keep]


def vertex_path(system, src, dst):
    ptr, links = system.route(np.array([src]), np.array([dst]))
    lt = system.links
    return [int(v) for v in lt.src[links]] + [int(lt.dst[links[-1]])]


def bfs_distance(system, src, dst):
    lt = system.links
    adj = {}
    for a, b in zip(lt.src.tolist(), lt.dst.tolist()):
        adj.setdefault(a, []).append(b)
    seen, queue = {src: 0}, deque([src])
    while queue:
        x = queue.popleft()
        for y in adj.get(x, []):
            if y not in seen:
                seen[y] = seen[x] + 1
                queue.append(y)
    return seen[dst]


def analytic_distance(system, s, d):
    """Independent hop-count formulas (plain Python)."""
    if isinstance(system, (Mesh, Torus)):
        cs, cd = np.unravel_index(s, system.dims), np.unravel_index(d, system.dims)
        total = 0
        for a, b, k in zip(cs, cd, system.dims):
            delta = abs(int(a) - int(b))
            total += min(delta, k - delta) if isinstance(system, Torus) else delta
        return total
    if isinstance(system, Hypercube):
        return bin(s ^ d).count("1")
    if isinstance(system, FatTree):
        m = system.k // 2
        if s // m == d // m:
            return 2
        return 4 if system.levels == 2 or s // (m * m) == d // (m * m) else 6
    return bfs_distance(system, s, d)


@pytest.mark.parametrize("key", sorted(SYSTEMS))
def test_all_pairs_route_contiguously_with_analytic_hop_counts(key):
    system = SYSTEMS[key]()
    s, d = all_pairs(system.nodes)
    ptr, links = system.route(s, d)
    check_network_routes(system, s, d, ptr, links, np.zeros(len(s), np.int64))
    hops = np.diff(ptr)
    expected = np.array([analytic_distance(system, int(a), int(b)) for a, b in zip(s, d)])
    assert (hops == expected).all()
    assert (system.distance(s, d) == expected).all()
    lt = system.links
    assert len(np.unique(lt.src * lt.vertices + lt.dst)) == len(lt), "parallel links"
    summary = system.summary()
    assert summary["diameter"] == expected.max()
    assert {"kind", "nodes", "switches", "links", "node_degree", "switch_radix", "diameter"} <= set(summary)


@pytest.mark.parametrize("key", sorted(SYSTEMS))
def test_describe_round_trips_also_through_json(key):
    system = SYSTEMS[key]()
    assert system_from_description(system.describe()) == system
    again = system_from_description(json.loads(json.dumps(system.describe())))
    assert again == system
    assert (again.links.src == system.links.src).all() and (again.links.dst == system.links.dst).all()


@pytest.mark.parametrize("key", sorted(SYSTEMS))
def test_ring_allgather_builds_and_verifies(key):
    system = SYSTEMS[key]()
    report = collsim.verify(collsim.build("ring", system, "allgather", 1024))
    assert report.steps == system.nodes - 1


# --- dimension order, wrap-around, ties ------------------------------------------------
def test_mesh_numbering_and_row_first_routing():
    m = Mesh.from_dims((3, 4))
    assert m.coords(np.array([6, 11])).tolist() == [[1, 2], [2, 3]]
    assert m.ids(np.array([[1, 2], [2, 3]])).tolist() == [6, 11]
    assert vertex_path(m, 0, 11) == [0, 1, 2, 3, 7, 11]  # along row 0, then down column 3
    assert vertex_path(m, 11, 0) == [11, 10, 9, 8, 4, 0]
    m3 = Mesh.from_dims((2, 3, 4))
    assert vertex_path(m3, 0, 23) == [0, 1, 2, 3, 7, 11, 23]  # last dimension first


def test_torus_wrap_and_parity_ties():
    t = Torus.from_dims((4, 4))
    assert vertex_path(t, 0, 15) == [0, 3, 15]  # wrap in the row, then in the column
    assert vertex_path(t, 0, 2) == [0, 1, 2]  # tie, even source column: +
    assert vertex_path(t, 1, 3) == [1, 0, 3]  # tie, odd source column: -
    assert vertex_path(t, 5, 13) == [5, 1, 13]  # tie along the column, odd source row: -
    assert vertex_path(t, 4, 12) == [4, 0, 12]
    assert vertex_path(t, 0, 8) == [0, 4, 8]  # even source row: +
    t2 = Torus.from_dims((2, 4))
    assert len(t2.links) == 8 + 16  # size-2 dimension: one link each way, no duplicates
    assert vertex_path(t2, 5, 1) == [5, 1]


def test_hypercube_ecube_lowest_bit_first():
    h = Hypercube(nodes=8)
    assert h.dimension == 3
    assert vertex_path(h, 0, 7) == [0, 1, 3, 7]
    assert vertex_path(h, 5, 2) == [5, 4, 6, 2]
    assert vertex_path(h, 6, 1) == [6, 7, 5, 1]
    # a 2x2x2 mesh routes exactly like E-cube
    m = Mesh.from_dims((2, 2, 2))
    s, d = all_pairs(8)
    assert (h.route(s, d)[1] >= 0).all()
    for a, b in zip(s.tolist(), d.tolist()):
        assert vertex_path(m, a, b) == vertex_path(h, a, b)


def test_large_instances_use_analytic_diameter():
    assert Torus.from_dims((40, 40)).summary()["diameter"] == 40
    assert Mesh.from_dims((33, 33)).summary()["diameter"] == 64
    assert Hypercube(nodes=2048).summary()["diameter"] == 11
    assert FatTree(nodes=2000, k=20).summary()["diameter"] == 6


# --- fat tree ----------------------------------------------------------------------------
def test_fat_tree_routes_by_destination_and_numbering():
    t = FatTree(nodes=16, k=4, levels=3)
    assert t.hosts_per_leaf == 2
    assert vertex_path(t, 0, 1) == [0, 16, 1]
    assert vertex_path(t, 0, 3) == [0, 16, 25, 17, 3]  # edge uplink 3 mod 2 = 1
    assert vertex_path(t, 0, 15) == [0, 16, 25, 35, 31, 23, 15]  # agg uplink (15//2) mod 2 = 1
    assert vertex_path(t, 0, 14) == [0, 16, 24, 33, 30, 23, 14]  # core 0*2 + (14//2) mod 2 = 1
    ls = FatTree(nodes=8, k=4, levels=2)
    assert vertex_path(ls, 0, 5) == [0, 8, 13, 10, 5]


@pytest.mark.parametrize("k", [2, 4, 6, 8, 10, 16])
def test_fat_tree_counts(k):
    m = k // 2
    three = FatTree(nodes=k ** 3 // 4, k=k, levels=3)
    assert three.capacity == k ** 3 // 4 and three.switches == 5 * k * k // 4
    assert three.switches_per_level == {"edge": k * m, "aggregation": k * m, "core": m * m}
    assert len(three.links) == 3 * k ** 3 // 2
    two = FatTree(nodes=k * k // 2, k=k, levels=2)
    assert two.capacity == k * k // 2 and two.switches == 3 * k // 2 and len(two.links) == 2 * k * k
    if k >= 4:
        for tree in (two, three):
            deg = np.bincount(tree.links.src, minlength=tree.vertices)
            assert (deg[tree.nodes:] == k).all() and (deg[:tree.nodes] == 1).all()


def test_named_fat_tree_sizes():
    assert (FatTree(nodes=16, k=4).nodes, FatTree(nodes=16, k=4).switches) == (16, 20)
    assert (FatTree(nodes=1024, k=16).capacity, FatTree(nodes=1024, k=16).switches) == (1024, 320)


@pytest.mark.parametrize("k,levels", [(4, 3), (6, 3), (8, 3), (4, 2), (6, 2), (8, 2), (12, 2)])
def test_dmodk_shift_permutations_never_share_a_link(k, levels):
    tree = FatTree(nodes=FatTree(nodes=2, k=k, levels=levels).capacity, k=k, levels=levels)
    n = tree.nodes
    s = np.arange(n)
    for c in range(1, n):
        _, links = tree.route(s, (s + c) % n)
        assert np.bincount(links).max() == 1, f"shift {c}"


def test_fat_tree_validation():
    with pytest.raises(InputError, match="k>=6"):
        FatTree(nodes=20, k=4)
    with pytest.raises(InputError, match="even"):
        FatTree(nodes=4, k=3)
    with pytest.raises(InputError, match="levels"):
        FatTree(nodes=4, k=4, levels=4)
    assert FatTree(nodes=100).k == 8  # k=None picks the smallest that fits


# --- from_options -----------------------------------------------------------------------
def test_from_options():
    assert Torus.from_options(nodes=16).dims == (4, 4)
    assert Torus.from_options().dims == (4, 4)
    assert Mesh.from_options(nodes=64, ndim=3).dims == (4, 4, 4)
    assert Torus.from_options(dims="4x4x2").nodes == 32
    assert Mesh.from_options(nodes=12, dims=[3, 4]).dims == (3, 4)
    with pytest.raises(InputError, match="25 or 36.*4x8"):
        Torus.from_options(nodes=32)
    with pytest.raises(InputError, match="hold 12"):
        Mesh.from_options(nodes=16, dims=(3, 4))
    with pytest.raises(InputError, match="no parameter"):
        Torus.from_options(nodes=16, wavelengths=4)
    assert Torus.from_options(nodes=16, link_latency_s=None).link_latency_s == 1e-6
    assert Hypercube.from_options().nodes == 16
    assert Hypercube.from_options(dimension=5).nodes == 32
    with pytest.raises(InputError, match="8 or 16"):
        Hypercube.from_options(nodes=12)
    assert FatTree.from_options(nodes=128).k == 8
    assert FatTree.from_options(nodes=1024).switches == 320
    assert FatTree.from_options().summary()["switches"] == 20
    assert FatTree.from_options(k=6, levels=2).nodes == 18
    with pytest.raises(InputError, match="k>=6"):
        FatTree.from_options(nodes=17, k=4)


def test_grid_validation():
    with pytest.raises(InputError, match="does not match"):
        Mesh(nodes=15, dims=(4, 4))
    with pytest.raises(InputError, match="at least 2"):
        Torus(nodes=4, dims=(4, 1))
    with pytest.raises(ScheduleFormatError):
        system_from_description({"kind": "torus", "nodes": 16})


# --- custom networks ---------------------------------------------------------------------
TOML = """
[system]
kind = "custom"
nodes = 4
switches = 2
link_latency_s = "500ns"

[[system.link]]
a = 0
b = "s0"
bandwidth = "100Gb/s"
latency = "2us"

[[system.link]]
a = 1
b = "s0"

[[system.link]]
a = "n2"
b = 5

[[system.link]]
a = 3
b = "s1"

[[system.link]]
a = "s0"
b = "s1"
bandwidth = 5e9
latency = 1e-7
"""


def test_custom_toml_per_link_values_and_routes(tmp_path):
    path = tmp_path / "two-switch.toml"
    path.write_text(TOML)
    net = load_system(str(path))
    assert isinstance(net, CustomNetwork) and net.name == "two-switch"
    assert net == CustomNetwork.from_toml(path) == CustomNetwork.from_options(path=path)
    lt = net.links
    assert len(lt) == 10 and net.switches == 2 and net.vertices == 6
    assert lt.bandwidth_bytes_per_s.tolist() == [12.5e9] * 8 + [5e9] * 2
    assert lt.latency_s.tolist() == [2e-6] * 2 + [5e-7] * 6 + [1e-7] * 2
    assert vertex_path(net, 0, 3) == [0, 4, 5, 3]
    assert net.summary()["declared_links"] == 5
    with pytest.raises(InputError, match="not 5"):
        CustomNetwork.from_options(nodes=5, path=path)
    alias = tmp_path / "alias.toml"
    alias.write_text(TOML.replace("[[system.link]]", "[[system.links]]"))
    assert CustomNetwork.from_toml(alias).link == net.link


PER_LINK = """
[system]
kind = "custom"
nodes = 3
switches = 1

[[system.link]]
a = "n0"
b = "s0"
bandwidth = "200Gb/s"
latency = "5us"

[[system.link]]
a = "n1"
b = "s0"
bandwidth = "400Gb/s"
latency = "5us"

[[system.link]]
a = "n2"
b = "s0"
bandwidth = "400Gb/s"
latency = "5us"
"""


def test_a_custom_networks_title_gives_the_range_its_links_have(run_cli, tmp_path):
    """Issue 31: the caption named the default (12.5GB/s links, 1 µs latency), which no link had."""
    (tmp_path / "per-link.toml").write_text(PER_LINK)
    args = ("compare", "--system", "per-link.toml", "-a", "ring", "-s", "1KiB")
    from itertools import takewhile
    title = " ".join(takewhile(lambda line: line and not line[0].isspace(), run_cli(*args, check=True).stdout.splitlines()))
    assert "25GB/s\u201350GB/s links" in title and "5 µs latency" in title, title
    assert "12.5GB/s" not in title and "1 µs" not in title, title
    row = json.loads(run_cli(*args, "--json", check=True).stdout)[0]
    assert (row["min_link_bandwidth_bytes_per_s"], row["max_link_bandwidth_bytes_per_s"]) == (25e9, 50e9)
    assert row["min_link_latency_s"] == row["max_link_latency_s"] == 5e-6
    assert row["link_bandwidth_bytes_per_s"] == 12.5e9  # the default, which the file's links override
    uniform = run_cli("compare", "--system", "ring", "-n", "4", "-a", "ring", "-s", "1KiB", check=True)
    assert "12.5GB/s links, 1 µs latency" in " ".join(uniform.stdout.splitlines()[:2])  # one value when all equal


def test_custom_shortest_paths_break_ties_by_lowest_vertex():
    net = custom_square()
    assert vertex_path(net, 0, 3) == [0, 1, 3]
    assert vertex_path(net, 3, 0) == [3, 1, 0]
    assert vertex_path(net, 0, 4) == [0, 1, 3, 5, 4]


def test_custom_one_way_links():
    ring = CustomNetwork(nodes=3, link=tuple({"a": i, "b": (i + 1) % 3, "duplex": False} for i in range(3)))
    assert len(ring.links) == 3
    assert vertex_path(ring, 2, 1) == [2, 0, 1]
    s, d = all_pairs(3)
    ptr, links = ring.route(s, d)
    check_network_routes(ring, s, d, ptr, links, np.zeros(len(s), np.int64))


@pytest.mark.parametrize("links,match", [
    (((0, 1), (1, 9)), "unknown vertex 9"),
    (((0, 1), (1, "s3")), "unknown vertex 's3'"),
    (((0, 1), (1, "x1")), "unknown vertex 'x1'"),
    (((0, 1), (1, 1)), "self-loop at n1"),
    (((0, 1), (1, 0)), "more than one link n0->n1"),
    (((0, 1), (2, 3)), "disconnected: n2"),
    (((0, 1), {"a": 1, "b": 2, "duplex": False}, (2, 3)), "disconnected: n2 cannot reach n0"),
    (((0, 1), (1, 2), (2, 3), (3, "s1")), "switch s0 has no links"),
    (((0, 1), {"a": 1, "b": 2, "bandwidth": "fast"}, (2, 3)), "custom link 1: invalid bandwidth"),
    (((0, 1), {"a": 1, "b": 2, "colour": "red"}, (2, 3)), "unknown key"),
    (((0, 1), {"a": 1}, (2, 3)), "needs both"),
    (((0, 1), {"a": 1, "b": 2, "duplex": "yes"}, (2, 3)), "duplex"),
    ((), "non-empty list of links"),
])
def test_custom_errors(links, match):
    switches = 2 if "s1" in str(links) or "s3" in str(links) else 0
    with pytest.raises(InputError, match=match):
        CustomNetwork(nodes=4, switches=switches, link=links)


def test_custom_file_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(TOML.replace('b = "s1"', 'b = "s7"'))
    with pytest.raises(InputError, match="unknown vertex 's7'"):
        load_system(str(bad))
    with pytest.raises(InputError, match="unknown vertex 's7'"):
        CustomNetwork.from_toml(bad)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[system]\nkind = "torus"\nnodes = 4\ndims = [2, 2]\n')
    with pytest.raises(InputError, match="kind must be"):
        CustomNetwork.from_toml(wrong)
    with pytest.raises(InputError, match="TOML file"):
        CustomNetwork.from_options()


@pytest.mark.parametrize("nodes,k,levels", [(16, 4, 3), (13, 4, 3), (128, 8, 3), (100, 8, 3), (8, 4, 2),
                                            (5, 4, 2), (70, 12, 2), (2, 2, 3), (2, 2, 2)])
def test_fat_tree_arithmetic_routes_equal_the_next_hop_walk(nodes, k, levels):
    # FatTree.route writes routes from link-id arithmetic; the generic walk follows next_hop
    from collsim.kinds.network.network import Network
    t = FatTree(nodes=nodes, k=k, levels=levels)
    s, d = np.divmod(np.arange(nodes * nodes), nodes)
    keep = s != d
    fast, walk = t.route(s[keep], d[keep]), Network.route(t, s[keep], d[keep])
    assert np.array_equal(fast[0], walk[0]) and np.array_equal(fast[1], walk[1])
    check_network_routes(t, s[keep], d[keep], fast[0], fast[1], np.zeros(keep.sum(), np.int64))


LINK_COUNT_CASES = [
    ("fat-tree", dict(nodes=16, k=4)), ("fat-tree", dict(nodes=13, k=4)), ("fat-tree", dict(nodes=8, k=4, levels=2)),
    ("fat-tree", dict(nodes=2, k=2)), ("fat-tree", dict(nodes=100, k=8)), ("ring", dict(nodes=5)),
    ("ring", dict(nodes=5, bidirectional=False)), ("ring", dict(nodes=2)), ("line", dict(nodes=4)),
    ("star", dict(nodes=3)), ("mesh", dict(nodes=12, dims=(3, 4))), ("torus", dict(nodes=24, dims=(2, 3, 4))),
    ("torus", dict(nodes=16, dims=(4, 4))), ("hypercube", dict(nodes=16)),
]


@pytest.mark.parametrize("kind,kw", LINK_COUNT_CASES)
def test_closed_form_link_counts_match_the_link_tables(kind, kw):
    from collsim.core.system import SYSTEM_KINDS
    t = SYSTEM_KINDS[kind](**kw)
    assert t.link_count() == len(t.links)


def test_mlfm_link_count_and_fat_tree_summary_from_closed_forms():
    from collsim.kinds.network.network import Network
    from collsim.kinds.network.mlfm import MLFM
    for m in (MLFM.from_options(d=2), MLFM.from_options(d=3, select=(2, 3, 2))):
        assert m.link_count() == len(m.links)
    for t in (FatTree(nodes=16, k=4), FatTree(nodes=13, k=4), FatTree(nodes=8, k=4, levels=2), FatTree(nodes=100, k=8)):
        closed, built = t.summary(), Network.summary(t)
        assert {k: closed[k] for k in built} == built
    # a fat tree of 250 million hosts is summarised without building anything
    big = FatTree.from_options(radix=1000)
    assert big.summary()["links"] == 2 * (250_000_000 + 2 * 1000 * 500 * 500) and "links" not in big.__dict__


def test_networks_too_big_for_memory_are_refused_before_allocating(monkeypatch):
    from collsim.core.limits import MemoryLimitError
    from collsim.kinds.network.fat_tree import FatTree
    monkeypatch.setenv("COLLSIM_MEMORY_LIMIT", "64MiB")
    with raises_naming(MemoryLimitError, "torus", "links", "64 MiB"):   # the work, and the limit
        Torus(nodes=10**6, dims=(1000, 1000)).links
    monkeypatch.setenv("COLLSIM_MEMORY_LIMIT", "150MiB")  # the collective fits (106 MiB), its routes do not
    with raises_naming(MemoryLimitError, "1047552 transfers", "fat-tree", "150 MiB"):
        collsim.build("pairwise", FatTree(nodes=1024, k=16), "alltoall", "1KiB")


@settings(max_examples=30, deadline=None)
@given(vertices=st.integers(1, 60), links=st.integers(0, 200), seed=st.integers(0, 2**32 - 1))
def test_link_index_from_the_dense_table_is_the_search(vertices, links, seed):
    """Large queries read a dense V x V table of link ids, small ones search the sorted keys: both
    give every pair's first link (duplicates included) and -1 for pairs without one or out of range."""
    from collsim.core import link_table
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, vertices, links), rng.integers(0, vertices, links)
    table = link_table.LinkTable(src, dst, np.ones(links), np.zeros(links), vertices)
    u, v = rng.integers(-2, vertices + 2, 500), rng.integers(-2, vertices + 2, 500)
    u[: min(links, 100)], v[: min(links, 100)] = src[:100], dst[:100]
    saved = link_table.DENSE_QUERY
    try:
        link_table.DENSE_QUERY = 1
        dense = table.index(u, v)
        link_table.DENSE_QUERY = 1 << 40
        searched = table.index(u, v)
    finally:
        link_table.DENSE_QUERY = saved
    assert np.array_equal(dense, searched)
    found = searched >= 0
    assert (src[searched[found]] == u[found]).all() and (dst[searched[found]] == v[found]).all()
    assert found[: min(links, 100)].all()
