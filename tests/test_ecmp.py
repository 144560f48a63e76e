"""ECMP routing (issue 21): transfers split over equal-cost paths, and the warnings about idle switches.

The leaf-spine of ``tests/data/custom/leaf-spine.toml`` (4 leaves of 8 hosts, 2 spines) is the
issue's example: with single-path routing every inter-leaf byte crosses spine s4 and s5 carries
nothing, so pairwise all-to-all reads about 50 % efficient; with ECMP it approaches the bound.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import collsim
from collsim.core.binary import read_npz, write_npz
from collsim.kinds.network.ecmp import hop_tables, min_hop_links
from collsim.core.errors import InputError, RouteError, ScheduleFormatError, UnsupportedError
from collsim.core.serialize import dumps, loads
from collsim.cost.network import alpha_beta_time_s
from collsim.interop.simgrid import platform_xml
from collsim.interop.simgrid_replay import replay_files
from collsim.pipeline import run
from collsim.sim import simulate
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork
from collsim.kinds.network.fat_tree import FatTree
from collsim.verify import verify_network_resources
from conftest import names, raises_naming

LEAF_SPINE = Path(__file__).parent / "data" / "custom" / "leaf-spine.toml"
B, M = 1e9, 1 << 20


def leaf_spine(**over) -> CustomNetwork:
    return load_system(str(LEAF_SPINE), **over)


def test_leaf_spine_alltoall_efficiency_single_path_vs_ecmp():
    single = run("pairwise", leaf_spine(routing="single-path"), "alltoall", M)
    ecmp = run("pairwise", leaf_spine(), "alltoall", M)
    assert single.verified and ecmp.verified
    assert single.lower_bound_s == ecmp.lower_bound_s
    assert single.efficiency == pytest.approx(0.496, abs=0.01)       # half the spines carry everything
    assert ecmp.efficiency > 0.97                                   # ECMP (the default) uses both
    assert single.max_link_load == 8 and ecmp.max_link_load == 4


def test_leaf_spine_ecmp_loads_both_spines_equally():
    s = collsim.build("pairwise", leaf_spine(), "alltoall", M)
    r = simulate(s)
    net = s.system
    by_name = {net.link_name(i): int(r.link_bytes[i]) for i in range(len(net.links))}
    ups = [by_name[f"s{leaf}->s{sp}"] for leaf in range(4) for sp in (4, 5)]
    assert ups == [ups[0]] * 8 and ups[0] == 8 * 24 * M // 2       # 24 remote peers per host, half each way
    single = simulate(collsim.build("pairwise", leaf_spine(routing="single-path"), "alltoall", M))
    assert single.link_bytes[[i for i in range(len(net.links)) if "s5" in net.link_name(i)]].sum() == 0


def brute_paths(net, s, d):
    """Every minimum-hop path from s to d with its per-hop ECMP share (pure Python)."""
    adj: dict[int, list[tuple[int, int]]] = {}
    for i, (u, v) in enumerate(zip(net.links.src.tolist(), net.links.dst.tolist())):
        adj.setdefault(u, []).append((v, i))
    dist = {d: 0}
    frontier = [d]
    while frontier:
        nxt = []
        for x in frontier:
            for u, outs in adj.items():
                if u not in dist and any(v == x for v, _ in outs):
                    dist[u] = dist[x] + 1
                    nxt.append(u)
        frontier = nxt
    out = []

    def walk(v, links, share):
        if v == d:
            out.append((tuple(links), share))
            return
        steps = sorted((w, i) for w, i in adj[v] if dist.get(w, -1) == dist[v] - 1)
        for w, i in steps:
            walk(w, links + [i], share / len(steps))

    walk(s, [], 1.0)
    return out


@pytest.mark.parametrize("net", [
    CustomNetwork(nodes=4, switches=4, link=((0, "s0"), (1, "s0"), (2, "s1"), (3, "s1"), ("s0", "s2"),
                                             ("s0", "s3"), ("s1", "s2"), ("s1", "s3"))),
    CustomNetwork(nodes=6, link=((0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0))),        # even ring: ties
    CustomNetwork(nodes=4, switches=3, link=((0, "s0"), (1, "s0"), ("s0", "s1"), ("s0", "s2"), ("s1", 2),
                                             ("s2", 2), ("s1", 3), ("s2", 3), ("s1", "s2"))),
    FatTree(nodes=16, k=4, routing="ecmp"),
], ids=["two-level", "ring6", "diamond", "fat-tree"])
def test_ecmp_paths_and_shares_match_brute_force(net):
    n = net.nodes
    s, d = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = s != d
    s, d = s[keep], d[keep]
    r = net.routes(s, d)
    assert r.multipath
    for t in range(len(s)):
        got = [(tuple(r.route_links[r.route_ptr[p]:r.route_ptr[p + 1]].tolist()), float(r.weights[p]))
               for p in range(r.path_ptr[t], r.path_ptr[t + 1])]
        want = brute_paths(net, int(s[t]), int(d[t]))
        assert sorted(x for x, _ in got) == sorted(x for x, _ in want)
        assert dict(got) == pytest.approx(dict(want))
    assert np.add.reduceat(r.weights, r.path_ptr[:-1]) == pytest.approx(np.ones(len(s)))


def test_ecmp_is_single_path_where_paths_are_unique():
    star = CustomNetwork(nodes=3, switches=1, link=((0, "s0"), (1, "s0"), (2, "s0")))
    r = star.routes(np.array([0, 1]), np.array([2, 0]))
    assert not r.multipath and r.route_ptr.tolist() == [0, 2, 4]


def test_single_path_routing_keeps_lowest_vertex_id():
    net = leaf_spine(routing="single-path")
    r = net.routes(np.array([0]), np.array([31]))
    assert not r.multipath
    assert [net.link_name(int(x)) for x in r.route_links] == ["n0->s0", "s0->s4", "s4->s3", "s3->n31"]


def test_routing_parameter_is_checked_and_reaches_the_toml_and_cli(tmp_path):
    with pytest.raises(InputError, match='routing must be one of "ecmp", "single-path"'):
        leaf_spine(routing="adaptive")
    text = LEAF_SPINE.read_text().replace('switches = 6', 'switches = 6\nrouting = "single-path"')
    (tmp_path / "ls.toml").write_text(text)
    assert load_system(str(tmp_path / "ls.toml")).routing == "single-path"
    assert FatTree(nodes=16).routing == "d-mod-k"
    assert FatTree(nodes=16, routing="single-path").routing == "d-mod-k"
    with pytest.raises(InputError, match="routing must be one of"):
        FatTree(nodes=16, routing="spray")


def test_fat_tree_default_routing_unchanged_and_ecmp_option():
    d_mod_k = FatTree(nodes=16, k=4)
    src, dst = np.array([0]), np.array([15])
    assert not d_mod_k.routes(src, dst).multipath
    r = FatTree(nodes=16, k=4, routing="ecmp").routes(src, dst)
    assert r.path_ptr.tolist() == [0, 4] and r.weights.tolist() == [0.25] * 4   # 2 aggregation x 2 core choices


def split_net(slow=1e8):
    """n0 -> s0, then s0 -> s1 -> n1 (slow) or s0 -> s2 -> n1 (fast): two equal-hop paths."""
    return CustomNetwork(nodes=2, switches=3, link_latency_s=0.0, link_bandwidth_bytes_per_s=B,
                         link=((0, "s0"), ("s0", "s1", slow), ("s0", "s2"), ("s1", 1), ("s2", 1)))


def one_transfer(net, size=M):
    return collsim.build("pairwise", net, "alltoall", size)


def test_flow_simulator_splits_a_transfer_into_sub_flows():
    fast = one_transfer(split_net(slow=B))        # both paths at B: the host link (B) is the bottleneck
    assert fast.routes.multipath
    r = simulate(fast)
    assert r.total_time_s == pytest.approx(M / B)
    assert r.peak_link_flows == 2                 # both sub-flows on the host link
    slow = one_transfer(split_net(slow=B / 10))   # half the bytes over the slow link: it finishes last
    r = simulate(slow)
    # max-min: the slow sub-flow is capped at B/10, the fast one takes the rest of the host link (9B/10)
    t_fast = (M / 2) / (9 * B / 10)
    t_slow = (M / 2) / (B / 10)
    assert r.transfer_finish_s[0] == pytest.approx(max(t_fast, t_slow))
    assert r.link_bytes.sum() == 2 * 3 * M       # both transfers (0 -> 1, 1 -> 0): every byte crosses 3 links


def test_alpha_beta_charges_the_most_loaded_link_share():
    s = one_transfer(split_net(slow=B))
    assert alpha_beta_time_s(s) == pytest.approx(M / B)          # not M / (2B): both halves leave n0
    s = one_transfer(split_net(slow=B / 10))
    assert alpha_beta_time_s(s) == pytest.approx((M / 2) / (B / 10))


def test_dataflow_and_rank_modes_with_ecmp():
    s = collsim.build("pairwise", leaf_spine(), "alltoall", 1 << 16)
    bulk = simulate(s).total_time_s
    for mode in ("dataflow", "rank"):
        assert 0 < simulate(s, mode=mode).total_time_s <= bulk * (1 + 1e-9)


def test_verifier_checks_every_path_and_the_shares():
    s = collsim.build("pairwise", leaf_spine(), "alltoall", 1024)
    verify_network_resources(s)
    r = s.routes
    t = int(np.flatnonzero(np.diff(r.path_ptr) == 2)[0])
    w = r.path_weight.copy()
    w[r.path_ptr[t]] = 0.75
    with raises_naming(ScheduleFormatError, "shares", "positive", "sum to 1") as err:
        verify_network_resources(s.replace(path_weight=w))
    assert f"transfer {t}:" in str(err.value) or f"transfers[{t}]" in str(err.value)
    links = r.route_links.copy()
    p = r.path_ptr[t] + 1                                          # the transfer's second path
    links[r.route_ptr[p] + 1] = links[r.route_ptr[p]]             # n -> leaf twice: not a walk
    with pytest.raises(RouteError) as err:
        verify_network_resources(s.replace(route_links=links))
    assert err.value.where.transfer == t


def test_take_keeps_each_transfers_paths():
    s = collsim.build("pairwise", leaf_spine(), "alltoall", 1024)
    rows = np.array([len(s) - 1, 0, 5])
    sub = s.take(rows)
    for i, t in enumerate(rows):
        a = s.routes
        want = [a.route_links[a.route_ptr[p]:a.route_ptr[p + 1]].tolist() for p in range(a.path_ptr[t], a.path_ptr[t + 1])]
        b = sub.routes
        got = [b.route_links[b.route_ptr[p]:b.route_ptr[p + 1]].tolist() for p in range(b.path_ptr[i], b.path_ptr[i + 1])]
        assert got == want


def test_schedule_files_keep_the_paths_and_shares():
    s = collsim.build("pairwise", leaf_spine(), "alltoall", 4096)
    text = dumps(s)
    row = next(json.loads(line.strip().rstrip(",")) for line in text.splitlines() if '"paths"' in line)
    assert row["shares"] == [0.5, 0.5] and len(row["paths"]) == 2
    buf = io.BytesIO()
    write_npz(s, buf)
    buf.seek(0)
    for back in (loads(text), read_npz(buf)):
        assert back.routes.multipath
        for name in ("route_ptr", "route_links", "path_ptr", "path_weight"):
            assert np.array_equal(getattr(back.routes, name), getattr(s.routes, name)), name
        assert simulate(back).total_time_s == simulate(s).total_time_s


def test_simgrid_refuses_ecmp_and_names_single_path():
    with pytest.raises(UnsupportedError, match="-S routing=single-path"):
        platform_xml(leaf_spine())
    with pytest.raises(UnsupportedError, match="-S routing=single-path"):
        replay_files(collsim.build("pairwise", leaf_spine(), "alltoall", 1024))
    assert b"<route" in platform_xml(leaf_spine(routing="single-path"))
    assert len(replay_files(collsim.build("pairwise", leaf_spine(routing="single-path"), "alltoall", 1024))) == 32


def test_min_hop_links_and_idle_resources():
    net = leaf_spine(routing="single-path")
    assert min_hop_links(net.links, hop_tables(net.links, net.vertices)[1], net.nodes).all()
    idle = net.idle_resources()
    assert idle["switches"] == ["s5"] and idle["switches_on_paths"] == 6
    assert sorted(idle["links"]) == sorted(f"s{a}->s{b}" for leaf in range(4) for a, b in ((leaf, 5), (5, leaf)))
    assert leaf_spine().idle_resources() == {"switches": [], "switches_on_paths": 6, "links": [],
                                             "links_on_paths": len(net.links)}
    assert FatTree(nodes=16, k=4).idle_resources()["links"] == []          # full tree: D-mod-k uses every link


class Ran:
    def __init__(self, exit_code, stdout, stderr):
        self.exit_code, self.stdout, self.stderr, self.output = exit_code, stdout, stderr, stdout + stderr


def cli(*argv) -> Ran:
    """One command line through ``collsim.cli.main.main`` in a CliRunner isolation (in process: fast)."""
    from collsim.cli.main import main
    code = 0
    with CliRunner().isolation(env={"COLUMNS": "200"}) as (out, err, _):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return Ran(code, out.getvalue().decode(), err.getvalue().decode())


def test_compare_and_topology_warn_about_an_idle_spine():
    res = cli("compare", "--system", str(LEAF_SPINE), "-S", "routing=single-path", "-c", "alltoall", "-a",
              "pairwise", "-s", "64KiB", "--format", "csv")
    assert res.exit_code == 0, res.output
    warn = [x for x in res.stderr.splitlines() if x.startswith("warning:")]
    (line,) = warn
    names(line, "1 of 6", "s5", 'routing = "single-path"', "-S routing=ecmp")   # which switch, why, the way out
    res = cli("compare", "--system", str(LEAF_SPINE), "-c", "alltoall", "-a", "pairwise", "-s", "64KiB",
              "--format", "csv")
    assert res.exit_code == 0 and "warning" not in res.stderr
    res = cli("topology", str(LEAF_SPINE), "-S", "routing=single-path", "--format", "csv")
    assert res.exit_code == 0
    names(res.stderr, "warning", "1 of 6", "s5")
    res = cli("topology", "fat-tree", "-n", "10", "-S", "k=4", "--format", "csv")     # partly filled
    names(res.stderr, "warning", 'routing = "d-mod-k"')
    res = cli("topology", "fat-tree", "-n", "16", "--format", "csv")
    assert "warning" not in res.stderr


def test_traces_show_the_paths_and_each_paths_share(tmp_path):
    from collsim.interop.trace.network import write_alpha_beta_trace, write_simulation_trace
    s = collsim.build("pairwise", leaf_spine(), "alltoall", 4096)
    t = int(np.flatnonzero(np.diff(s.routes.path_ptr) == 2)[0])
    for name, write in (("ab.json", lambda p: write_alpha_beta_trace(p, s)),
                        ("sim.json", lambda p: write_simulation_trace(p, s, simulate(s)))):
        write(tmp_path / name)
        events = json.loads((tmp_path / name).read_text())["traceEvents"]
        mine = [e for e in events if e.get("args", {}).get("transfer") == t]
        node = [e for e in mine if e["cat"] == "transfer"]
        assert len(node) == 1 and node[0]["args"]["paths"] == 2
        on_links = [e["args"]["size_bytes"] for e in mine if e["cat"] == "link"]
        assert on_links == [2048] * 8                          # a slice per sub-flow and link: 2 paths x 4 links


def test_schedule_files_refuse_bad_paths_and_shares():
    text = dumps(collsim.build("pairwise", leaf_spine(), "alltoall", 4096))
    good = '"shares":[0.5,0.5]'
    assert good in text
    with raises_naming(ScheduleFormatError, "'shares'", "2 numbers"):
        loads(text.replace(good, '"shares":[1.0]', 1))
    with raises_naming(ScheduleFormatError, "shares", "positive", "sum to 1"):
        loads(text.replace(good, '"shares":[0.5,0.25]', 1))
