"""Translations found by search (collsim.core.automorphisms): what is returned is a regular group of
link- and label-keeping automorphisms, Cayley graphs of random groups are recognised under any
vertex numbering, and networks with no such group get None."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collsim.core.automorphisms import numbered_translations, regular_translations
from collsim.experiments import network_families as nf


def _check_regular(group, nodes, vertices, src, dst, bw, lat):
    """Rows: label-keeping automorphisms, row g taking 0 to g, closed, none but row 0 fixing an end node."""
    assert group.shape == (nodes, vertices)
    assert group[:, 0].tolist() == list(range(nodes))
    assert group[0].tolist() == list(range(vertices))
    key = lambda s, d: sorted(zip(s.tolist(), d.tolist(), bw.tolist(), lat.tolist()))  # noqa: E731
    want = key(src, dst)
    for g in group:
        assert sorted(g.tolist()) == list(range(vertices))
        assert key(g[src], g[dst]) == want
    assert not (group[1:, :nodes] == np.arange(nodes)).any()
    rows = {tuple(r) for r in group.tolist()}
    for a, b in itertools.product(group[: min(nodes, 12)], group):
        assert tuple(a[b].tolist()) in rows                 # closed under composition


def _cayley(seed: int, renumber: bool = True):
    """A Cayley digraph of a random abelian group, random connection set and labels, renumbered
    (or numbered in mixed radix, the last digit fastest)."""
    rng = np.random.default_rng(seed)
    dims = [int(x) for x in rng.integers(2, 6, size=int(rng.integers(1, 4)))]
    elems = np.array(list(itertools.product(*[range(d) for d in dims])))
    n = len(elems)
    gens = {tuple(int(rng.integers(0, d)) for d in dims) for _ in range(int(rng.integers(0, 4)))}
    gens |= {tuple(int(i == j) for j in range(len(dims))) for i in range(len(dims))}   # connected
    gens.discard(tuple([0] * len(dims)))
    gens = sorted(gens)
    weight = {g: float(rng.choice([1.0, 2.0, 4.0])) for g in gens}
    strides = np.cumprod([1] + dims[::-1][:-1])[::-1]
    src, dst, bw = [], [], []
    for g in gens:
        to = ((elems + np.array(g)) % np.array(dims)) @ strides
        src.append(np.arange(n)), dst.append(to), bw.append(np.full(n, weight[g]))
    src, dst, bw = np.concatenate(src), np.concatenate(dst), np.concatenate(bw)
    if rng.integers(0, 2):                                  # full duplex: every arc also backwards
        src, dst, bw = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([bw, bw])
    uk, inv = np.unique(src * n + dst, return_inverse=True)  # parallel arcs: one, bandwidths summed
    bw = np.bincount(inv.ravel(), weights=bw)
    perm = rng.permutation(n) if renumber else np.arange(n)
    return n, perm[uk // n], perm[uk % n], bw


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_a_cayley_graph_of_a_random_abelian_group_is_recognised_under_any_numbering(seed):
    n, src, dst, bw = _cayley(seed)
    lat = np.ones_like(bw)
    group = regular_translations(n, n, src, dst, bw, lat)
    assert group is not None
    _check_regular(group, n, n, src, dst, bw, lat)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_the_numbering_s_own_translations_are_found(seed):
    n, src, dst, bw = _cayley(seed, renumber=False)
    lat = np.ones_like(bw)
    group = numbered_translations(n, n, src, dst, bw, lat)
    assert group is not None
    _check_regular(group, n, n, src, dst, bw, lat)


@pytest.mark.parametrize("boxes, gpus, rails", [(16, 8, 1), (16, 8, 2), (16, 8, 4), (8, 8, 8), (3, 2, 2), (5, 4, 2)])
def test_boxes_on_rails_keep_their_numbering_s_translations(boxes, gpus, rails):
    """The search can miss these among the automorphisms moving one box's GPUs alone (128 boxes of 8
    on 1, 2 or 4 rails; 3 boxes of 2 on 2 rails it answered with a group that does not commute)."""
    net = nf.rail_boxes(boxes, gpus=gpus, rails=rails)
    lk = net.links
    args = (net.nodes, net.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lk.latency_s)
    group = numbered_translations(*args)
    assert group is not None
    _check_regular(group, *args)
    assert np.array_equal(net.translations(), group)


def test_a_renumbered_torus_is_left_to_the_search():
    n, src, dst, bw = _cayley(7)
    lat = np.ones_like(bw)
    found = numbered_translations(n, n, src, dst, bw, lat)
    if found is not None:                       # a renumbering can still be some mixed radix's
        _check_regular(found, n, n, src, dst, bw, lat)
    assert regular_translations(n, n, src, dst, bw, lat) is not None
    mesh = nf.hetero_mesh(3, 4, 2.0)             # corners and middles differ: no group at all
    lk = mesh.links
    assert numbered_translations(12, 12, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lk.latency_s) is None


@pytest.mark.parametrize("net", [nf.hetero_mesh(4, 6, 4.0, torus=True), nf.hetero_mesh(3, 5, 8.0, torus=True),
                                 nf.rail_boxes(4, rails=2), nf.rail_boxes(2, rails=8),
                                 nf.fat_tree_oversubscribed(4, 4, 2, 2.0)], ids=lambda n: n.name)
def test_networks_with_switches_and_unequal_links_get_a_regular_group(net):
    lk = net.links
    args = (net.nodes, net.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lk.latency_s)
    group = regular_translations(*args)
    assert group is not None
    _check_regular(group, *args)
    assert np.array_equal(net.translations(), group)        # what synthesis reads


@pytest.mark.parametrize("graph", [nx.petersen_graph(), nx.dodecahedral_graph()], ids=["petersen", "dodecahedron"])
def test_vertex_transitive_graphs_that_are_not_cayley_graphs_get_none(graph):
    """Petersen's graph and the dodecahedron are vertex-transitive with no regular group: nothing
    the search could return would be right."""
    e = np.array(graph.edges())
    src, dst = np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])
    n = graph.number_of_nodes()
    assert regular_translations(n, n, src, dst, np.ones(src.size), np.ones(src.size)) is None


@pytest.mark.parametrize("net", [nf.hetero_mesh(4, 6, 4.0), nf.dragonfly(4, 4), nf.random_regular(16, 3, 1),
                                 nf.one_way(12, 2)], ids=lambda n: n.name)
def test_networks_whose_end_nodes_differ_get_none(net):
    assert net.translations() is None


def test_a_link_whose_latency_differs_breaks_the_group():
    net = nf.hetero_mesh(3, 4, 2.0, torus=True)
    lk = net.links
    lat = np.asarray(lk.latency_s, float).copy()
    assert regular_translations(net.nodes, net.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lat) is not None
    lat[5] *= 2
    assert regular_translations(net.nodes, net.vertices, lk.src, lk.dst, lk.bandwidth_bytes_per_s, lat) is None


def _without_symmetries(net):
    """The same links and bandwidths with every latency different: no automorphism but the identity
    (the packing reads only bandwidths, so its optimum is the same)."""
    from collsim.kinds.network.custom import CustomNetwork
    links = tuple((a, b, bw, lat * (1 + 1e-3 * i), duplex) for i, (a, b, bw, lat, duplex) in enumerate(net.link))
    return CustomNetwork(nodes=net.nodes, switches=net.switches, link=links)


@pytest.mark.parametrize("net", [nf.hetero_mesh(3, 4, 4.0, torus=True), nf.hetero_mesh(3, 4, 2.0),
                                 nf.dragonfly(3, 2), nf.rail_boxes(2, rails=2)], ids=lambda n: n.name)
def test_packing_by_found_symmetries_reaches_the_optimum_without_them(net):
    """Translations (a torus, rails) or only reflections (a mesh, a dragonfly: one root per orbit
    planned) give the packing's rate of the full programme, and every root's shares sum to 1."""
    from collsim.algorithms.synth_trees import pack
    plain = _without_symmetries(net)
    assert plain.symmetries() is None and net.symmetries() is not None
    moved, full = pack(net), pack(plain)
    assert moved.group is not None and full.group is None
    assert moved.z == pytest.approx(full.z, rel=1e-6)
    assert sorted(set(moved.root.tolist())) == list(range(net.nodes))
    for r in range(net.nodes):
        assert moved.weight[moved.root == r].sum() == pytest.approx(1.0, rel=1e-9)


def test_a_mesh_s_reflections_leave_one_root_per_orbit_to_plan():
    from collsim.algorithms.synth_trees.packing import planned_roots
    from collsim.systems import load_system
    assert planned_roots(load_system("mesh", dims=(5, 5))) == 6      # corner, edge, centre classes of D4
    assert planned_roots(nf.hetero_mesh(4, 6, 4.0)) == 6               # 24 nodes / 4 mirror images
    assert planned_roots(nf.random_regular(16, 3, 1)) == 16
