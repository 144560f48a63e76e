"""``synth-trees`` on networks that hold only some links at once, and with translations (issue 32, item 8).

* every candidate circuit configuration of an optical circuit switch fits its ports and is
  strongly connected;
* the packing of one root's trees moved by the translations reaches the rate of the packing of
  every root's trees (the same optimum, from a programme ``N`` times smaller);
* the shallowest trees (each arc one hop level down) have the root's eccentricity as depth;
* on a switch of every port count the synthesized all-gather verifies in one configuration and
  reaches 0.9 of the reconfiguration-aware bound at 1 MiB (the issue's target).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

import collsim
from collsim.algorithms.synth_trees import pack
from collsim.core.errors import UnsupportedError
from collsim.kinds.ocs.system import OCS
from collsim.kinds.ocs.configurations import circuit_configurations


def _pairs(ids, n):
    src, dst = np.divmod(np.asarray(ids), n - 1)
    return src, dst + (dst >= src)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 24), data=st.data())
def test_every_configuration_fits_the_ports_and_is_strongly_connected(n, data):
    p = data.draw(st.integers(1, n - 2))
    configs = circuit_configurations(n, p)
    assert configs and configs[0][0] == ("ring" if p == 1 else f"circulant 1..{p}")
    for _, ids in configs:
        src, dst = _pairs(ids, n)
        assert (src != dst).all() and len(np.unique(ids)) == len(ids)
        assert np.bincount(src, minlength=n).max() <= p and np.bincount(dst, minlength=n).max() <= p
        g = coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
        assert connected_components(g, directed=True, connection="strong")[0] == 1
    assert OCS(nodes=n, ports=n - 1).configurations() is None


@pytest.mark.parametrize("n, p", [(8, 2), (9, 3), (12, 5)])
def test_translated_trees_reach_the_rate_of_every_root_s_trees(n, p):
    sw = OCS(nodes=n, ports=p, link_bandwidth_bytes_per_s=1.0)
    for _, ids in circuit_configurations(n, p)[:2]:          # the circulants: rotations keep them
        for reverse in (False, True):
            moved = pack(sw, reverse=reverse, links=ids)
            plain = pack(sw, np.arange(n), reverse=reverse, links=ids)   # roots given: no translations
            assert moved.z == pytest.approx(plain.z, rel=1e-6)
            assert moved.z == pytest.approx((n - 1) / p, rel=1e-6)      # a node's blocks over its p circuits
            assert set(moved.link_ids.tolist()) == set(ids.tolist())
            assert np.bincount(moved.root, minlength=n).min() == np.bincount(moved.root, minlength=n).max()
            for r in range(n):
                assert moved.weight[moved.root == r].sum() == pytest.approx(1.0)
            assert ((moved.weight @ moved.load) <= moved.z * (1 + 1e-6)).all()
            t = np.arange(len(moved.root))
            assert (moved.parent[t, moved.root] == -1).all() and ((moved.parent >= 0).sum(axis=1) == n - 1).all()


@pytest.mark.parametrize("system, options", [("mesh", {"dims": (3, 4)}), ("hypercube", {"nodes": 8})])
def test_the_shallowest_trees_reach_every_node_in_its_fewest_hops(system, options):
    net = collsim.load_system(system, **options)
    p = pack(net, layered=True)
    lk = net.links
    adj = coo_matrix((np.ones(len(lk.src)), (lk.src, lk.dst)), shape=(net.vertices,) * 2).tocsr()
    hops = shortest_path(adj, unweighted=True)[:net.nodes, :net.nodes]
    assert (p.depth() == hops[p.root]).all()
    assert p.z >= pack(net).z * (1 - 1e-9)


@pytest.mark.parametrize("ports", range(1, 7))
def test_a_switch_of_every_port_count_gets_a_verified_all_gather_in_one_configuration(ports):
    sw = OCS(nodes=7, ports=ports)
    s = collsim.build("synth-trees", sw, "allgather", "1MiB")
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.verified and row.part.reconfigurations == 0
    assert row.lower_bound_s <= row.time_s and row.lower_bound_s / row.time_s >= 0.9
    assert ("configuration" in s.params) == (ports < 6)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_random_switches_reach_nine_tenths_of_the_bound_at_one_mebibyte(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 13))
    sw = OCS(nodes=n, ports=int(rng.integers(1, n - 1)), reconfiguration_s=float(10 ** rng.uniform(-8.4, -2)))
    s = collsim.build("synth-trees", sw, "allgather", "1MiB")
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.verified and row.lower_bound_s / row.time_s >= 0.9


def test_synthesize_leaves_out_the_matching_on_a_switch_and_says_why():
    out = collsim.synthesize(OCS(nodes=8, ports=2), "allgather", "1MiB", registered=False)
    assert out.schedule.algorithm == "synth-trees" and out.result.verified
    assert any("synth-matching" in s and "holds only some of its links" in s for s in out.skipped)
    with pytest.raises(UnsupportedError):
        collsim.build("synth-matching", OCS(nodes=8, ports=2), "allgather", "1MiB")


@settings(max_examples=5, deadline=None)
@given(dims=st.lists(st.integers(2, 6), min_size=1, max_size=3).filter(lambda d: 4 <= np.prod(d) <= 36),
       latency_us=st.sampled_from([0.5, 1.0, 2.0]))
def test_random_tori_reach_ninety_nine_hundredths_of_the_bound_by_translations(dims, latency_us):
    """The issue's target (>= 0.99 of the bound at 1 GiB of all-gather output), met on tori: their
    shifts make one root's packing and timing everyone's (docs/synthesis.md, "Translations")."""
    net = collsim.load_system("torus", dims=tuple(dims), link_latency_s=latency_us * 1e-6)
    s = collsim.build("synth-trees", net, "allgather", 2**30 // net.nodes)
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.verified and row.lower_bound_s / row.time_s >= 0.99
    # direct links: exact, but for chunks of whole bytes (the prediction takes a piece as block / pieces)
    assert row.time_s == pytest.approx(s.params["predicted_time_s"], rel=s.params["pieces"] / (2**30 // net.nodes))


def test_a_switch_s_certificate_is_the_binding_term_of_its_own_bound():
    out = collsim.synthesize(OCS(nodes=8, ports=2), "allgather", "1MiB", registered=False)
    assert out.certificate.time_s == pytest.approx(out.bound_s, rel=1e-12)
    assert out.certificate.configurations >= 1 and "configuration" in out.certificate.certificate


@settings(max_examples=4, deadline=None)
@given(rows=st.integers(2, 6), cols=st.integers(3, 7), ratio=st.sampled_from([1.0, 2.0, 4.0, 8.0]))
def test_random_heterogeneous_tori_are_planned_by_found_translations(rows, cols, ratio):
    """A torus with one dimension faster, given as a plain list of links, declares no shifts: the
    search finds them (collsim.core.automorphisms), so one root's trees are timed and moved, and
    the all-gather comes near the bound.  Measured worst over every torus this draws with rows 4 or 8
    times faster (2026-12-01, with the ordered trees): 0.9684 (4x7, 8x; the tori whose fast
    dimension has 7 nodes stay at 0.968-0.971, those of 6 reach 0.977-0.982); ratios up to 4 reach
    0.989 (docs/synthesis.md).  0.96 is what is asserted, not the issue's 0.99."""
    from collsim.experiments.network_families import hetero_mesh
    net = hetero_mesh(rows, cols, ratio, torus=True)
    assert net.translations() is not None
    s = collsim.build("synth-trees", net, "allgather", 2**30 // net.nodes)
    row = collsim.evaluate(s, report=collsim.verify(s))
    assert row.verified and row.lower_bound_s / row.time_s >= 0.96
    assert row.time_s == pytest.approx(s.params["predicted_time_s"], rel=s.params["pieces"] / (2**30 // net.nodes))
