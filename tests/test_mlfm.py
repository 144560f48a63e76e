"""MLFM topology, the partial-server all-to-all (seed 001), its congestion check and Fig. 3."""

from __future__ import annotations

import numpy as np

from collsim.verify.resources import check_network_routes
import pytest

import collsim
from collsim import build, verify
from collsim.algorithms import mlfm as mlfm_alg  # noqa: F401  (registers "mlfm")
from collsim.algorithms.mlfm import (largest_selection, mlfm_schedule, phase_destinations, validate_select)
from collsim.core.errors import InputError, RouteError, UnsupportedError
from collsim.kinds.network.network import Network
from collsim.core.system import system_from_description
from collsim.experiments.papers.mlfm.congestion import (_phase_flows, all_selections, check_selection,
                                                 congestion_table, format_table)
from collsim.experiments.papers.mlfm.throughput import (LINK_MIB_PER_S, SCALES, block_bytes, mlfm_testbed,
                                                 pairwise_phase_loads, per_node_throughput, throughput_experiment)
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.mlfm import MLFM, compare_with_fat_tree, fat_tree_counts, mlfm_counts
from conftest import raises_naming


# --- topology -------------------------------------------------------------------------------
def test_counts_d3_from_the_built_graph():
    net = MLFM.from_options(d=3)
    assert (net.nodes, net.leaves, net.spines, net.switches) == (36, 12, 6, 18)
    c = net.structure()
    assert (c["servers"], c["leaves"], c["spines"]) == (36, 12, 6)
    lt = net.links
    deg_out = np.bincount(lt.src, minlength=net.vertices)
    deg_in = np.bincount(lt.dst, minlength=net.vertices)
    assert (deg_out == deg_in).all()
    assert (deg_out[:36] == 1).all()
    assert (deg_out[36:] == 6).all()                   # every port of every 6-port switch used
    assert len(lt) == 2 * (36 + 12 * 3) == 2 * c["cables"]


def test_counts_d18_and_radix():
    assert mlfm_counts(18)["servers"] == 6156
    net = MLFM.from_options(radix=36)
    assert net.d == 18 and net.nodes == 6156 and net.leaves == 342 and net.spines == 171
    for d in range(1, 10):
        c = mlfm_counts(d)
        assert c["servers"] == d * d * (d + 1) and c["leaves"] == d * (d + 1) and 2 * c["spines"] == d * (d + 1)
        assert c["leaf_ports_used"] == c["spine_ports_used"] == c["radix"] == 2 * d


def test_testbed_variant_and_from_options():
    tb = MLFM.from_options(d=3, last_layer_servers=2)
    assert tb.nodes == 32 and tb.structure()["last_layer_leaf_ports_used"] == 5
    assert MLFM.from_options(nodes=32, last_layer_servers=2).d == 3
    assert MLFM.from_options(nodes=36).d == 3
    sel = MLFM.from_options(d=3, last_layer_servers=2, select=(2, 4, 3))
    assert sel.nodes == 24 and sel.selection == (2, 4, 3) and sel.structure()["servers"] == 32
    with pytest.raises(InputError, match="nodes=30"):
        MLFM.from_options(d=3, nodes=30)
    with pytest.raises(InputError, match="no d gives 35"):
        MLFM.from_options(nodes=35)
    with raises_naming(InputError, "radix", "even", "7"):
        MLFM.from_options(radix=7)
    with pytest.raises(InputError, match="servers per leaf"):
        MLFM.from_options(d=3, last_layer_servers=2, selection=(3, 4, 3))   # last layer has 2
    with pytest.raises(InputError, match="no parameter"):
        MLFM.from_options(d=3, bogus=1)
    assert system_from_description(sel.describe()) == sel
    assert collsim.load_system("mlfm", d=3, selection=[2, 3, 2]).nodes == 12


def test_ids_and_link_numbering():
    for kw in (dict(d=3), dict(d=3, last_layer_servers=2), dict(d=4, selection=(3, 4, 2))):
        net = MLFM.from_options(**kw)
        ids = np.arange(net.nodes)
        i, j, k = net.server_coords(ids)
        assert (net.server_id(i, j, k) == ids).all()
        assert (np.lexsort((k, j, i)) == ids).all()          # (i, j, k) lexicographic order
        assert net.vertex_name(int(net.leaf_id(1, 2))) == "leaf(1,2)"
        assert net.vertex_name(int(net.spine_id(3, 1))) == "spine{1,3}"
        assert net.link_name(int(net.uplink_id(1, 2, 0))) == "leaf(1,2)->spine{0,2}"
        assert net.link_name(int(net.downlink_id(1, 2, 0))) == "spine{0,2}->leaf(1,2)"
        assert net.link_name(int(net.server_id(1, 0, 1))) == "srv(1,0,1)->leaf(1,0)"
    net = MLFM.from_options(d=3)
    assert net.server_id(1, 2, 0) == (1 * 4 + 2) * 3
    with pytest.raises(InputError, match="not an end node"):
        MLFM.from_options(d=3, selection=(2, 2, 2)).server_id(0, 2, 0)


@pytest.mark.parametrize("kw", [dict(d=2), dict(d=3, last_layer_servers=2), dict(d=3, selection=(2, 4, 3)),
                                dict(d=4, selection=(3, 2, 1)), dict(d=2, selection=(2, 1, 2))])
def test_arithmetic_routes_equal_next_hop_walk(kw):
    net = MLFM.from_options(**kw)
    n = net.nodes
    s, d = np.divmod(np.arange(n * n), n)
    keep = s != d
    p1, l1 = Network.route(net, s[keep], d[keep])          # walks next_hop
    p2, l2 = net.route(s[keep], d[keep])
    assert (p1 == p2).all() and (l1 == l2).all()
    check_network_routes(net, s[keep], d[keep], p2, l2, np.zeros(int(keep.sum()), np.int64))
    assert set(np.diff(p2).tolist()) <= {2, 4}


def test_explicit_spine_and_default_rule():
    net = MLFM.from_options(d=3)                            # L = d+1 = 4 columns
    a, b = net.server_id(0, 1, 2), net.server_id(2, 1, 0)
    _, links = net.route([a], [b])                          # default: spine {1, (1+2+1)%4} = {0,1}
    assert net.link_name(int(links[1])) == "leaf(0,1)->spine{0,1}"
    _, links = net.route_via([a], [b], [3])
    assert [net.link_name(int(x)) for x in links] == ["srv(0,1,2)->leaf(0,1)", "leaf(0,1)->spine{1,3}",
                                                      "spine{1,3}->leaf(2,1)", "leaf(2,1)->srv(2,1,0)"]
    with pytest.raises(RouteError, match="does not exist"):
        net.route_via([a], [b], [1])
    sel = MLFM.from_options(d=3, selection=(2, 3, 2))       # L = l = 3: spine {j, (j+k+1)%3}
    assert sel.default_spine_column(2, 1).item() == (2 + 1 + 1) % 3


# --- fat tree ----------------------------------------------------------------------------------
def test_fat_tree_comparison_radix_36():
    c = compare_with_fat_tree(36)
    assert c["mlfm_servers"] == 6156 and c["fat_tree_2_hosts"] == 648 and c["fat_tree_3_hosts"] == 36 ** 3 // 4
    assert c["mlfm_switches"] == 342 + 171 and c["fat_tree_2_switches"] == 54
    assert c["switch_saving_per_server_vs_fat_tree_3"] == pytest.approx(0.4)
    for r in (4, 8, 12, 48):
        c = compare_with_fat_tree(r)
        assert c["fat_tree_2_hosts"] == r * r // 2 and c["fat_tree_3_hosts"] == r ** 3 // 4
        assert c["mlfm_servers"] == (r // 2) ** 2 * (r // 2 + 1)
    with pytest.raises(InputError):
        compare_with_fat_tree(35)


def test_fat_tree_counts_match_the_fat_tree_graph():
    for k, levels in ((4, 2), (6, 2), (4, 3), (6, 3)):
        c = fat_tree_counts(k, levels)
        ft = FatTree(nodes=c["hosts"], k=k, levels=levels)
        assert ft.switches == c["switches"]
        deg = np.bincount(ft.links.src, minlength=ft.vertices)[ft.nodes:]
        assert deg.max() <= k


# --- validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("select,match", [
    ((0, 3, 2), r"violates 1 <= n"), ((4, 3, 2), r"violates n <= d = 3"),
    ((1, 1, 1), r"violates 1 <= l-1"), ((1, 6, 2), r"violates l-1 <= d = 3"),
    ((1, 3, 0), r"violates 1 <= m"), ((1, 3, 4), r"violates m <= d = 3"),
    ((1, 3, 3), r"violates m <= l-1 although it satisfies the paper's stated condition 1 <= l-1 <= m <= d"),
    ((2, 2, 2), r"congestion-free iff 1 <= m <= l-1 <= d"),
    ("2,a,3", r"three integers"), ((1, 2), r"\(n, l, m\)"), ((1.5, 2, 1), r"n must be an integer"),
])
def test_validation_names_the_violated_condition(select, match):
    with pytest.raises(InputError, match=match):
        validate_select(3, select)


def test_paper_24A_is_accepted_and_builder_errors():
    assert validate_select(3, (3, 4, 2)) == (3, 4, 2)       # violates the paper's l-1 <= m, but is right
    assert validate_select(3, "2,4,3") == (2, 4, 3)
    assert largest_selection(3) == (3, 4, 3) and largest_selection(3, 2) == (3, 4, 2)
    with pytest.raises(InputError, match="violates m <= l-1"):
        build("mlfm", MLFM.from_options(d=3, selection=(1, 3, 3)), "alltoall", 64)
    with raises_naming(InputError, "select=(2, 4, 2)", "(2, 3, 2)"):   # the selection asked for, and the system's
        build("mlfm", MLFM.from_options(d=3, selection=(2, 3, 2)), "alltoall", 64, select=(2, 4, 2))
    with pytest.raises(UnsupportedError, match="not an n x l x m box"):
        build("mlfm", MLFM.from_options(d=3, last_layer_servers=2), "alltoall", 64)
    s = build("mlfm", MLFM.from_options(d=2), "alltoall", 64)   # full machine = largest selection
    assert s.params["select"] == [2, 3, 2]


# --- schedules ----------------------------------------------------------------------------------
SELECTIONS = [(2, (1, 2, 1)), (2, (2, 3, 2)), (3, (2, 3, 2)), (3, (3, 3, 2)), (3, (3, 4, 2)), (3, (2, 4, 3)),
              (4, (4, 5, 4)), (4, (3, 5, 2)), (5, (2, 6, 3))]


@pytest.mark.parametrize("d,sel", SELECTIONS)
def test_mlfm_schedules_verify_and_are_congestion_free(d, sel):
    net = MLFM.from_options(d=d, selection=sel)
    n_, l, m = sel
    N = n_ * l * m
    sched = build("mlfm", net, "alltoall", 1000)
    rep = verify(sched)                                     # routes + all-to-all postcondition
    assert rep.steps == N - 1 and rep.transfers == N * (N - 1)
    assert sched.max_link_load() == 1
    for a, b in zip(sched.step_bounds[:-1], sched.step_bounds[1:]):   # each phase a permutation
        assert sorted(sched.src[a:b]) == list(range(N)) and sorted(sched.dst[a:b]) == list(range(N))
    explicit = mlfm_schedule(net, 1000)                     # spines named per transfer
    assert (explicit.route_ptr == sched.route_ptr).all() and (explicit.route_links == sched.route_links).all()
    # the congestion checker's link numbering is the network's
    keys, _ = sched.link_loads()
    f = _phase_flows(d, n_, l, m, np.arange(1, N))
    nl = len(net.links)
    mine = np.concatenate([((np.arange(N - 1)[:, None]) * nl + f[c])[f[c] >= 0]
                           for c in ("acc_up", "acc_down", "up", "down")])
    assert (np.sort(mine) == keys).all()


def test_testbed_selection_schedule_and_phase_rule_examples():
    net = MLFM.from_options(d=3, last_layer_servers=2, selection=(2, 4, 3))
    verify(build("mlfm", net, "alltoall", 64))
    # Fig. 2a-style: leaf (0,0), (s, t) = (1, 3), u = 0, l = 4: k=0 -> col 0+3+0+1 = 4 >= 4 -> (0+3+0+2)%4 = 1
    i2, j2, k2, via = phase_destinations(2, 4, 3, 1, 3, 0, 0, 0, np.arange(3))
    assert int(i2) == 1 and j2.tolist() == [1, 2, 3] and k2.tolist() == [0, 1, 2]
    # Fig. 2b-style: (s, t) = (1, 0): same column via spine {0, k+1}
    i2, j2, k2, via = phase_destinations(2, 4, 3, 1, 0, 0, 0, 0, np.arange(3))
    assert j2.tolist() == [0, 0, 0] and via.tolist() == [1, 2, 3]


# --- exhaustive congestion check ----------------------------------------------------------------
def test_counter_example_inside_the_paper_condition():
    r = check_selection(3, 1, 3, 3)                         # 1 <= l-1 = 2 <= m = 3 <= d = 3
    assert r.paper_condition and not r.correct_condition and not r.congestion_free
    ce = r.counter_example
    assert ce["phase"] == (0, 1, 0) and ce["link_name"] == "leaf(0,0)->spine{0,2}" and ce["load"] == 2
    assert ce["flows"] == [("(0, 0, 0)", "(0, 2, 0)"), ("(0, 0, 2)", "(0, 2, 2)")]
    assert not r.pairs_exactly_once and r.phases_are_permutations
    r = check_selection(3, 2, 3, 3)
    assert r.unroutable > 0                                 # spine {j, j}
    r = check_selection(2, 1, 2, 2)                         # l = m = 2: no shared link, but not all-to-all
    assert r.max_link_load == 1 and not r.pairs_exactly_once and not r.congestion_free


def test_congestion_table_d2_to_8_exhaustive():
    # its wall time (< 60 s, issue #5) is benchmarks/run.py's mlfm-congestion-2-8 workload
    rows = congestion_table(range(2, 9))
    for row in rows:
        d = row["d"]
        assert row["checked"] == d ** 3 == len(all_selections(d))
        assert row["ok_iff_correct"]                         # congestion-free exactly when m <= l-1
        assert row["correct_congestion_free"] == row["correct_valid"] and row["correct_max_link_load"] == 1
        assert row["paper_congestion_free"] == d * d         # only m = l-1 survives the paper's set
        assert row["paper_max_link_load"] == (d + 1) // 2       # ceil(d/2): l = 2, m = d
    assert "| 8 | 288 | 64 | 4 | 288 | 288 | 1 |" in format_table(rows)


def test_full_check_d18():
    # its wall time (< 60 s, issue #5) is benchmarks/run.py's mlfm-d18 workload
    r = check_selection(18, 18, 19, 18)                     # all 6156 servers, 6156 phases
    assert r.servers == 6156 and r.congestion_free and r.max_link_load == 1
    assert r.pairs_exactly_once and r.phases_are_permutations and r.unroutable == 0


# --- pairwise and Fig. 3 --------------------------------------------------------------------------
def test_naive_pairwise_mapping_is_congested():
    for scale, sel in SCALES.items():
        loads = pairwise_phase_loads(sel)
        assert loads.max() > 1, scale
        s = build("pairwise", mlfm_testbed(sel), "alltoall", 64)
        verify(s)
        assert s.max_link_load() == loads.max()
    assert pairwise_phase_loads(SCALES["24-B"]).max() == 3


def test_throughput_pattern_B_ratio_near_paper():
    rows = throughput_experiment(sizes_mib=[64])
    by = {r.scale: r for r in rows}
    for r in rows:
        assert r.mlfm_mib_per_s > 0.97 * LINK_MIB_PER_S and r.ratio > 1.3
        assert r.mlfm_max_link_load == 1 and r.pairwise_max_link_load > 1
    assert by["24-B"].ratio == pytest.approx(2.2, abs=0.1) and by["24-B"].paper_ratio == 2.2


def test_throughput_helpers_without_simulation():
    assert block_bytes(16, 24) == 16 * 2 ** 20 // 24
    assert per_node_throughput(100, 5, 2.0) == 200.0
    net = mlfm_testbed((3, 4, 2))
    assert net.nodes == 24 and net.link_bandwidth_bytes_per_s == 3770 * 2 ** 20
