"""One bound for every command, and an α–β time that counts shared links (issue 31, items 1 and 2).

1. Every command reports the tightest bound collsim knows, through the kind's ``lower_bound_s``
   (:func:`collsim.kinds.network.bound.network_bound`): for all-to-all that includes the
   max-concurrent-flow bound, which ``synthesize`` used to add on its own.  On two 9-node rings
   joined by one link, 81 blocks must cross that link each way: the flow LP sees it (81 µs per
   KB-block at 1 GB/s), the cheaper bounds did not (the total link crossings, 32.7 µs).
2. The schedule's α–β time counts, per step, the bytes every link carries (ECMP paths by their
   shares), so it is never below the bound (it was 47 times below on a synthesized 6x8 torus
   all-to-all: 342.5 µs against 16.11 ms).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim.algorithms import REGISTRY
from collsim.core.collective import make_collective
from collsim.core.schedule import LogicalBuilder
from collsim.kinds.network import bound as nb
from collsim.kinds.network.exact_cut import CutCertificate
from collsim.cost.network import alpha_beta_time_s
from collsim.pipeline import lower_bound_s, realize
from collsim.kinds.network import mcf
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork

RING9 = [(o + i, o + (i + 1) % 9) for o in (0, 9) for i in range(9)]


def _two_rings(latency_s: float = 0.0) -> CustomNetwork:
    return CustomNetwork(nodes=18, link=tuple(RING9) + ((0, 9),), link_bandwidth_bytes_per_s=1e9,
                         link_latency_s=latency_s)


def _toml(path, latency_s: float = 1e-6) -> str:
    lines = ["[system]", 'kind = "custom"', 'name = "two-rings"', "nodes = 18", "link_bandwidth_bytes_per_s = 1e9",
             f"link_latency_s = {latency_s}"]
    for a, b in RING9 + [(0, 9)]:
        lines += ["", "[[system.link]]", f"a = {a}", f"b = {b}"]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


# ------------------------------------------------------------------ 1. one bound, the tightest


def test_the_kind_bound_includes_the_max_concurrent_flow_bound():
    net = _two_rings()
    c = make_collective("alltoall", 18, 1000)
    b = nb.network_bound(net, c)
    assert b.binding == "max-concurrent flow"
    assert b.load_s["max-concurrent flow"] > 2 * b.load_s["link crossings"] > 0   # the cheaper bounds: 32.7 us
    assert lower_bound_s(net, c) == pytest.approx(mcf.mcf_bound(net, 1000).time_s, rel=1e-9)
    assert lower_bound_s(net, c) == pytest.approx(81e-6, rel=1e-6)   # 81 blocks over the 1 GB/s bridge


def test_the_bound_scales_with_the_size_and_keeps_its_latency():
    net = _two_rings(latency_s=1e-6)
    for m in (1, 1000, 10**6, 3 * 10**7):
        want = mcf.mcf_bound(net, m)     # solved afresh for every size: m / λ* + start-up + lowest latency
        assert lower_bound_s(net, make_collective("alltoall", 18, m)) == pytest.approx(
            max(want.time_s, nb.latency_chain_s(net, make_collective("alltoall", 18, m))), rel=1e-9)
    fixed = 1e-6
    small, big = (lower_bound_s(net, make_collective("alltoall", 18, m)) - fixed for m in (10**6, 10**8))
    assert big == pytest.approx(100 * small, rel=1e-9)


def test_the_lp_is_not_solved_where_the_routing_already_reaches_the_cheaper_bound(monkeypatch):
    # the routing's own flow is a concurrent flow, so m / λ* is at most its busiest link's load / bandwidth:
    # where that equals the cheaper bound (every built-in topology) no LP can raise it
    def refuse(*args, **kwargs):
        raise AssertionError("the LP was solved")
    cases = [("torus", {"dims": (4, 4)}), ("mesh", {"dims": (3, 5)}), ("fat-tree", {"nodes": 16}),
             ("star", {"nodes": 8}), ("hypercube", {"nodes": 16}), ("mlfm", {"radix": 4})]
    cheap = {}
    with monkeypatch.context() as m:
        m.setattr(nb, "solve_mcf", refuse)
        for kind, opts in cases:
            system = load_system(kind, **opts)
            c = make_collective("alltoall", system.nodes, 10**6)
            cheap[kind] = (system, c, nb.network_bound(system, c))
            assert "max-concurrent flow" not in cheap[kind][2].load_s
    for kind, (system, c, b) in cheap.items():   # and the LP agrees: it could not have raised the bound
        assert mcf.mcf_bound(system, c.size_bytes).bandwidth_time_s == pytest.approx(b.bandwidth_s, rel=1e-6), kind


def test_lps_above_the_size_rule_are_not_solved(monkeypatch):
    net = _two_rings()
    c = make_collective("alltoall", 18, 1000)
    monkeypatch.setattr(nb, "MCF_BOUND_MAX_VARIABLES", mcf.lp_size(net)["variables"] - 1)
    b = nb.network_bound(CustomNetwork(nodes=18, link=tuple(RING9) + ((0, 9),), link_bandwidth_bytes_per_s=1e9,
                                       link_latency_s=0.0, name="uncached"), c)
    assert "max-concurrent flow" not in b.load_s and b.binding == "link crossings"


def test_synthesize_judges_by_the_rows_bound_with_the_binding_certificate():
    net = _two_rings(latency_s=1e-6)
    out = collsim.synthesize(net, "alltoall", 10**6)
    assert out.bound_s == out.result.lower_bound_s
    assert isinstance(out.certificate, mcf.McfBound) and out.certificate.time_s == pytest.approx(out.bound_s)
    mesh = collsim.synthesize("mesh", "allgather", "1MiB", system_options={"dims": (3, 3)})
    assert isinstance(mesh.certificate, CutCertificate) and mesh.bound_s == mesh.result.lower_bound_s
    assert mesh.certificate.bound_s + 1e-6 == pytest.approx(mesh.bound_s)   # plus the last byte's latency
    ring = load_system("ring", nodes=16, link_latency_s=1e-6)
    tiny = collsim.synthesize(ring, "allgather", 1)
    assert tiny.certificate.term == "hop chain" and tiny.certificate.bound_s == tiny.bound_s
    assert "n8" in tiny.certificate.certificate


def test_every_command_prints_the_same_bound(tmp_path, run_cli):
    system = _toml(tmp_path / "two-rings.toml")
    args = ["--system", system, "-c", "alltoall"]
    want = lower_bound_s(load_system(system), make_collective("alltoall", 18, 2**20))
    assert want == pytest.approx(mcf.mcf_bound(load_system(system), 2**20).time_s, rel=1e-9)
    seen = {}
    compare = json.loads(run_cli("compare", *args, "-s", "1MiB", "-a", "pairwise,bruck", "--json", check=True).stdout)
    seen["compare"] = {r["lower_bound_s"] for r in compare}
    synth = json.loads(run_cli("synthesize", *args, "-s", "1MiB", "--json", "-o", str(tmp_path / "s.json"),
                               check=True).stdout)
    seen["synthesize"] = {synth["lower_bound_s"]}
    seen["verify"] = {json.loads(run_cli("verify", str(tmp_path / "s.json"), "--json", check=True).stdout)[
        "lower_bound_s"]}
    seen["simulate"] = {json.loads(run_cli("simulate", str(tmp_path / "s.json"), "--json", check=True).stdout)[
        "lower_bound_s"]}
    tune = json.loads(run_cli("tune", *args, "-b", "1MiB", "-e", "1MiB", "-a", "pairwise", "--json",
                              check=True).stdout)
    seen["tune"] = {r["lower_bound_s"] for r in tune}
    (tmp_path / "sweep.toml").write_text(f'[sweep]\nsystems = ["{system}"]\nsizes = ["1MiB"]\n'
                                         'collectives = ["alltoall"]\nalgorithms = ["pairwise"]\n')
    run_cli("sweep", str(tmp_path / "sweep.toml"), "--store", str(tmp_path / "st.sqlite"), check=True)
    stored = json.loads(run_cli("results", "--store", str(tmp_path / "st.sqlite"), "--json", check=True).stdout)
    seen["sweep"] = {r["lower_bound_s"] for r in stored}
    assert all(len(v) == 1 for v in seen.values()), seen
    assert {c: v.pop() for c, v in seen.items()} == pytest.approx({c: want for c in seen}, rel=1e-12)
    text = run_cli("verify", str(tmp_path / "s.json"), check=True).stdout
    assert "bound" in text and len(text.strip().splitlines()) == 1


# ------------------------------------------------------------------ 2. α–β counts the load of every link


def test_ecmp_alpha_beta_counts_every_links_bytes_by_hand():
    # hosts n0, n1 on leaf s0, n2, n3 on leaf s1, two spines; 1 GB/s, 1 us links; every host sends
    # m to every other host in one step.  Each host link carries 3 blocks (3m), each leaf-spine link
    # 2 blocks (4 inter-leaf blocks over 2 spines), so the busiest link of every transfer carries 3m:
    # alpha-beta = 4 hops x 1 us (inter-leaf) + 3m / B.  Alone on its links a transfer would take m / B.
    m, bw, lat = 10**6, 1e9, 1e-6
    links = ((0, 4), (1, 4), (2, 5), (3, 5), (4, 6), (4, 7), (5, 6), (5, 7))
    net = CustomNetwork(nodes=4, switches=4, link=links, link_bandwidth_bytes_per_s=bw, link_latency_s=lat)
    b = LogicalBuilder(make_collective("alltoall", 4, m))
    src, dst = np.array([(a, c) for a in range(4) for c in range(4) if a != c]).T
    b.add(0, src, dst, (src * 4 + dst)[:, None])
    s = realize(net, b.build())
    collsim.verify(s)
    assert s.routes.multipath
    assert alpha_beta_time_s(s) == pytest.approx(4 * lat + 3 * m / bw, rel=1e-12)
    assert alpha_beta_time_s(s) >= lower_bound_s(net, s.collective)


def test_the_synthesized_alltoall_alpha_beta_is_not_below_the_bound():
    torus = load_system("torus", dims=(3, 4))
    s = collsim.build("synth-alltoall", torus, "alltoall", "1MiB")
    bound = lower_bound_s(torus, s.collective)
    assert collsim.verify(s).closed_form_time_s >= bound * (1 - 1e-9)
    assert collsim.verify(s).closed_form_time_s == pytest.approx(collsim.verify(s).time_s, rel=1e-3)


ALGORITHMS = ("pairwise", "bruck", "ring", "recursive-doubling", "ne", "binomial", "direct", "ring-personalized",
              "rabenseifner", "ring-shift")


@st.composite
def _networks(draw):
    """Connected custom graphs, some with switches, with mixed bandwidths and latencies."""
    n = draw(st.integers(2, 9))
    switches = draw(st.integers(0, 3))
    v = n + switches
    seen, links = set(), []
    bws = st.sampled_from([1e9, 2.5e9, 1e10])
    lats = st.sampled_from([0.0, 1e-7, 1e-6])

    def add(a, b):
        if a != b and (min(a, b), max(a, b)) not in seen:
            seen.add((min(a, b), max(a, b)))
            links.append((a, b, draw(bws), draw(lats), True))
    for x in range(1, v):
        add(draw(st.integers(0, x - 1)), x)
    for _ in range(draw(st.integers(0, v))):
        add(draw(st.integers(0, v - 1)), draw(st.integers(0, v - 1)))
    return CustomNetwork(nodes=n, switches=switches, link=tuple(links),
                         routing=draw(st.sampled_from(["ecmp", "single-path"])),
                         startup_s=draw(st.sampled_from([None, 2e-6])))


@settings(max_examples=60)
@given(net=_networks(), pick=st.integers(0, 10**6), size=st.sampled_from([1, 100, 4096, 10**6]))
def test_the_schedule_alpha_beta_is_never_below_the_bound(net, pick, size):
    """Per step, the busiest link's load over its bandwidth: summed over steps it covers every cut,
    the total link crossings and the flow bound; every step pays a route latency, every chain of
    steps its hops."""
    options = [(name, c) for name in ALGORITHMS for c in REGISTRY[name].collectives
               if REGISTRY[name].supports(net, c)]
    assert options
    for k in range(len(options)):   # the first that builds, from a drawn start
        name, coll = options[(pick + k) % len(options)]
        try:
            s = collsim.build(name, net, coll, size)
        except collsim.UnsupportedError:
            continue
        collsim.verify(s, answer=False)
        assert alpha_beta_time_s(s) >= lower_bound_s(net, s.collective) * (1 - 1e-9), (name, coll)
        return


@pytest.mark.parametrize("kind,opts", [("mesh", {"dims": (4, 4)}), ("torus", {"dims": (3, 5)}), ("fat-tree", {"nodes": 16}),
                                       ("hypercube", {"nodes": 32}), ("line", {"nodes": 7})])
def test_the_cut_certificate_is_a_real_cut_attaining_the_cut_bound(kind, opts):
    from collsim.kinds.network.cuts import cut_bound_s, cut_certificate, cut_demand_bytes
    system = load_system(kind, **opts)
    lt, n = system.links, system.nodes
    for coll in ("allgather", "reducescatter", "allreduce", "alltoall", "broadcast", "reduce", "shift"):
        c = make_collective(coll, n, 1000, root=n // 2 if coll in ("broadcast", "reduce") else None)
        cert = cut_certificate(system, c)
        side = np.zeros(system.vertices, bool)
        side[list(cert.side)] = True
        into = side[lt.dst] & ~side[lt.src] if cert.direction == "in" else side[lt.src] & ~side[lt.dst]
        demand = cut_demand_bytes(c, ~side[None, :n])[0 if cert.direction == "in" else 1][0]
        assert cert.capacity_bytes_per_s == pytest.approx(lt.bandwidth_bytes_per_s[into].sum()), (kind, coll)
        assert cert.demand_bytes == pytest.approx(demand), (kind, coll)
        assert cert.bound_s == pytest.approx(cut_bound_s(system, c), rel=1e-12) == pytest.approx(
            demand / cert.capacity_bytes_per_s, rel=1e-12), (kind, coll)
