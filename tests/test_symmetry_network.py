"""Symmetric schedules on networks: a network's translations (kinds/network/symmetry.py), and
``synth-trees`` built as its transfers into node 0 (algorithms/synth_trees/orbits.py).

The representatives' expansion must be the schedule the packing builds root by root (the path
that moves every tree to every root, then pipelines all of them), and the two must verify and
simulate alike.  Derived golden counts: a group of order ``|G|`` acting freely has ``L / |G|``
orbits of links.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import collsim.pipeline as pipeline
from collsim import build, build_symmetric, evaluate, verify
from collsim.algorithms.synth_trees import build as trees
from collsim.algorithms.synth_trees.orbits import expand, group_of
from collsim.core.collective import collective_type
from collsim.core.errors import InputError, UnsupportedError
from collsim.core.symmetry import SymmetricSchedule, Translations
from collsim.experiments.network_families import dragonfly, hetero_mesh, rail_boxes
from collsim.kinds.network import symmetry
from collsim.sim.flow import simulate
from collsim.synthesis import synthesize
from collsim.systems import load_system

from conftest import rows_alike, acts_freely_on_links, is_its_full_build, quotient_is_expansion, rejected_alike, representative_mutants, ring_is_its_full_build_under_rotations


def _rows(s):
    """Every transfer as a sortable tuple: round, ends, reduction, its chunks as a set, its route."""
    cp, rp = s.chunk_ptr, s.routes.route_ptr
    return sorted((int(s.round[t]), int(s.src[t]), int(s.dst[t]), bool(s.reduce[t]),
                   tuple(sorted(s.chunk_idx[cp[t]:cp[t + 1]].tolist())),
                   tuple(s.routes.route_links[rp[t]:rp[t + 1]].tolist())) for t in range(len(s.src)))


@settings(max_examples=30, deadline=None)
@given(radices=st.lists(st.integers(1, 5), min_size=1, max_size=3))
def test_a_table_of_translations_is_recognised(radices):
    group = Translations(tuple(radices))
    n = group.nodes
    table = np.stack([group.act(g, np.arange(n)) for g in range(n)])
    found = Translations.of_permutations(table)
    assert found is not None
    assert np.array_equal(np.stack([found.act(g, np.arange(n)) for g in range(n)]), table)


def test_other_regular_groups_are_not_translations():
    # the symmetric group S3 acting on itself (6 nodes): regular, not abelian
    import itertools
    perms = list(itertools.permutations(range(3)))
    def compose(a, b):
        return tuple(a[b[i]] for i in range(3))
    index = {p: i for i, p in enumerate(perms)}
    table = np.array([[index[compose(g, h)] for h in perms] for g in perms])
    table = table[np.argsort(table[:, 0])]           # row g takes node 0 (the identity) to g
    assert Translations.of_permutations(table) is None
    relabelled = np.array([[1, 0, 3, 2], [0, 1, 2, 3]])   # row 0 is not the identity
    assert Translations.of_permutations(relabelled) is None


NETWORKS = {
    "torus 3x4": (lambda: load_system("torus", dims=(3, 4)), (3, 4)),
    "hetero torus 4x6": (lambda: hetero_mesh(4, 6, 8.0, torus=True), (4, 6)),
    "hypercube 16": (lambda: load_system("hypercube", nodes=16), (2, 2, 2, 2)),
    "ring 8": (lambda: load_system("ring", nodes=8), (8,)),
    "4 boxes of 8 on 2 rails": (lambda: rail_boxes(4, rails=2), (4, 8)),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_translation_group_acts_freely_on_links(name):
    make, radices = NETWORKS[name]
    system = make()
    g = symmetry.translation_group(system)
    assert g is not None and g.radices == radices and g.regular
    assert pipeline.model_for(system).accepts_group(system, g)
    acts_freely_on_links(system, g, symmetry)


@pytest.mark.parametrize("system", [load_system("mesh", dims=(3, 4)), dragonfly(4, 4)], ids=["mesh", "dragonfly"])
def test_no_group_without_translations(system):
    assert symmetry.translation_group(system) is None
    assert group_of(system) is None
    with pytest.raises(UnsupportedError, match="no translation group"):
        build_symmetric("synth-trees", system, "allgather", 4096)


def test_a_group_that_keeps_bandwidths_but_not_latencies_is_refused():
    """The packing reads bandwidths only; the orbits need every link of an orbit alike."""
    from collsim.kinds.network.custom import CustomNetwork
    edges = [(r * 4 + c, r * 4 + (c + 1) % 4) for r in range(3) for c in range(4)] + \
            [(r * 4 + c, ((r + 1) % 3) * 4 + c) for r in range(3) for c in range(4)]   # a 3x4 torus
    links = tuple((a, b, 50e9, 1e-6 * (1 + i / len(edges)), True) for i, (a, b) in enumerate(edges))
    system = CustomNetwork(nodes=12, link=links)
    assert symmetry.translation_group(load_system("torus", dims=(3, 4))) is not None
    g = symmetry.translation_group(system)
    assert g is None or not pipeline.model_for(system).accepts_group(system, g)
    assert group_of(system) is None


@st.composite
def _networks(draw):
    kind = draw(st.sampled_from(["torus", "rails", "hypercube", "fat-tree", "boxes-on-fat-tree"]))
    if kind == "fat-tree":        # a full fat tree: its closed-form translations (pods, edge switches, ports)
        return load_system("fat-tree", k=4)
    if kind == "boxes-on-fat-tree":   # 16 boxes of 2 GPUs on a full fat tree: the hierarchical kind's group
        return load_system("hierarchical", dims=f"switch:2:{draw(st.sampled_from([50, 300]))}GB/s,fat-tree:16:50GB/s")
    if kind == "torus":
        return hetero_mesh(draw(st.integers(2, 4)), draw(st.integers(3, 5)),
                           float(draw(st.sampled_from([1, 2, 4, 8]))), torus=True)
    if kind == "rails":
        return rail_boxes(draw(st.integers(2, 3)), gpus=draw(st.sampled_from([2, 4])), rails=draw(st.sampled_from([1, 2])))
    return load_system("hypercube", nodes=draw(st.sampled_from([4, 8])))


@settings(max_examples=20, deadline=None)
@given(system=_networks(), coll=st.sampled_from(["allgather", "reducescatter", "allreduce"]),
       plan=st.sampled_from([(2, 1, "auto"), (4, 2, "auto"), (4, None, "auto"), (8, None, "timed"), (6, None, "pipeline")]))
def test_representatives_expand_to_the_root_by_root_schedule(system, coll, plan):
    """The representatives, moved by every element, are the schedule built by moving every tree to
    every root and pipelining all of them; and they verify and time alike on their orbits."""
    pieces, rounds, timing = plan
    group = group_of(system)
    assume(group is not None)    # 3 boxes of 2 on 2 rails: the regular group found is not abelian
    assert group.order == system.nodes
    size = 3 * 2**20 * (system.nodes if coll == "allreduce" else 1) * 8
    ct = collective_type(coll)
    whole = trees._synthesized(system, ct, size, pieces, rounds, 0, timing, None)
    reps = trees._synthesized(system, ct, size, pieces, rounds, 0, timing, None, group=group)
    assert whole[1] == reps[1]            # pieces, rounds, trees, timing and the predicted time
    assert (reps[0].dst == 0).all()
    assert _rows(expand(system, group, reps[0])) == _rows(whole[0])
    sym = build_symmetric("synth-trees", system, coll, size, pieces=pieces, rounds=rounds, timing=timing)
    full = build("synth-trees", system, coll, size, pieces=pieces, rounds=rounds, timing=timing)
    assert sym.transfers == len(full)
    a, b = verify(sym), verify(full)
    assert a.data_flow == "orbits" and b.data_flow != "orbits"
    ra, rb = evaluate(sym, report=a), evaluate(full, report=b)
    assert ra.verified and rb.verified
    assert ra.to_json() == rb.to_json()


@settings(max_examples=10, deadline=None)
@given(system=_networks(), coll=st.sampled_from(["allreduce", "allgather", "reducescatter"]),
       seed=st.integers(0, 2**32 - 1))
def test_mutants_rejected_alike(system, coll, seed):
    """A mutant of the representatives fails on its orbits iff its expansion fails, in the same way."""
    assume(group_of(system) is not None)
    size = 2**16 * (system.nodes if coll == "allreduce" else 1)
    sym = build_symmetric("synth-trees", system, coll, size, pieces=2, rounds=1)
    rng = np.random.default_rng(seed)
    assert rejected_alike(sym, representative_mutants(sym.reps, rng)) >= 3


@pytest.mark.parametrize("system", [load_system("fat-tree", k=4), load_system("fat-tree", k=6),
                                    load_system("hierarchical", dims="switch:2,fat-tree:16"),
                                    load_system("hierarchical", dims="switch:4:300GB/s,fat-tree:54:50GB/s")],
                         ids=["fat-tree-4", "fat-tree-6", "2-on-fat-tree-4", "4-on-fat-tree-6"])
def test_closed_form_translations_are_a_table_of_automorphisms(system):
    """A full fat tree (and boxes on one) declares its translations in closed form: the table synthesis
    reads has row g taking node 0 to node g, as the kind's group acts, and every row maps the links
    one to one onto links of the same bandwidth (so synth-trees plans one root and moves it)."""
    from collsim.kinds import model_for
    table = system.symmetries()
    group = model_for(system).symmetry_group(system)
    n, lk = system.nodes, system.links
    assert group is not None and group.regular and table.shape == (n, system.vertices)
    assert np.array_equal(table[:, :n], group.act(np.arange(n)[:, None], np.arange(n)[None, :]))
    images = lk.index(table[:, lk.src], table[:, lk.dst])
    assert (images >= 0).all() and (np.sort(images, axis=1) == np.arange(len(lk.src))).all()
    bw = np.asarray(lk.bandwidth_bytes_per_s)
    assert (bw[images] == bw).all()
    assert group_of(system) == group


def test_quotient_simulation_is_the_expansions():
    """Boxes on rails: every path between boxes crosses switches, two links of one orbit at times."""
    system = rail_boxes(4, gpus=4, rails=2)
    sym = build_symmetric("synth-trees", system, "allgather", 2**20, pieces=8)
    assert (sym.reps.routes.path_hops > 1).any()
    quotient_is_expansion(sym, symmetry)


def test_ring_on_a_network_ring_is_symmetric_under_all_rotations_and_on_a_mesh_is_not():
    ring = load_system("ring", nodes=8)
    sym = build_symmetric("ring", ring, "allreduce", 8 * 4096)
    assert sym.group == Translations((8,))
    full = build("ring", ring, "allreduce", 8 * 4096)
    assert _rows(sym.expand()) == _rows(full)
    assert evaluate(sym).to_json() == evaluate(full).to_json()
    with pytest.raises(UnsupportedError, match="no translation group"):   # reflections only: no rotation
        build_symmetric("ring", load_system("mesh", dims=(3, 4)), "allgather", 4096)


@settings(max_examples=15, deadline=None)
@given(kind=st.sampled_from(["torus", "hypercube"]), dims=st.lists(st.integers(2, 4), min_size=2, max_size=3),
       coll=st.sampled_from(["allreduce", "allgather", "reducescatter"]), seed=st.integers(0, 2**32 - 1))
def test_ring_on_a_torus_is_symmetric_under_its_leading_coordinate(kind, dims, coll, seed):
    """Translating a torus's (or hypercube's) leading coordinate by one rotates the node numbering by
    D = N / n_1 without a carry: the ring's schedule is invariant under the n_1 rotations by
    multiples of D, stored as its transfers into nodes 0..D-1.  The group does not act regularly,
    so a link's orbit representative is its image by the element taking its anchor into the domain
    (the anchor does not name an element: the quotient was wrong here before)."""
    system = load_system("hypercube", nodes=2 ** len(dims)) if kind == "hypercube" else load_system("torus", dims=tuple(dims))
    ring_is_its_full_build_under_rotations(system, 2 if kind == "hypercube" else dims[0], coll, seed, symmetry, _rows)


@settings(max_examples=15, deadline=None)
@given(kind=st.sampled_from(["ring", "torus", "hypercube"]), dims=st.lists(st.integers(2, 5), min_size=1, max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_neighbour_exchange_is_symmetric_under_the_even_rotations(kind, dims, seed):
    """ne's pairs (2a, 2a + 1), (2a + 1, 2a + 2) and the chunk pairs they forward move with every
    rotation by an even number of nodes: on a ring, the N/2 rotations by multiples of 2; on a torus
    or hypercube, its leading coordinate's rotations by D = N / n_1 when D is even (else none)."""
    from collsim.algorithms.ring import rotations_by
    n = 2 * math.prod(dims)
    system = load_system("ring", nodes=n) if kind == "ring" else load_system("hypercube", nodes=2 ** len(dims)) \
        if kind == "hypercube" else load_system("torus", dims=(2 * dims[0], *dims[1:]))
    n = system.nodes
    group = rotations_by(system, 2)
    # one dimension is a ring (every rotation); else the leading coordinate's n_1 rotations
    lead = n // 2 if kind == "ring" or len(dims) == 1 else 2 if kind == "hypercube" else 2 * dims[0]
    if (n // lead) % 2:   # an odd stride moves a pair's even node to an odd one: no symmetry declared
        assert group is None
        with pytest.raises(UnsupportedError, match="declares no symmetry"):
            build_symmetric("ne", system, "allgather", 64)
        return
    stride = n // group.order
    assert group.order == lead and group.act(stride % n, np.arange(n)).tolist() == ((np.arange(n) + stride) % n).tolist()
    sym, full = build_symmetric("ne", system, "allgather", 64), build("ne", system, "allgather", 64)
    assert sym.group == group
    is_its_full_build(sym, full, symmetry, seed, _rows)


def test_compare_switches_to_orbits_with_the_same_rows(monkeypatch):
    from collsim.experiments.compare import compare
    kw = dict(dims=(3, 4))
    algs = "synth-trees,ring,bruck"
    rows_full, _ = compare("torus", "allgather", 2**20, algorithms=algs, **kw)
    monkeypatch.setattr(pipeline, "SYMMETRIC_ABOVE_TRANSFERS", 1)
    monkeypatch.setattr(pipeline, "REPEATED_ABOVE_TRANSFERS", 1)
    made = []
    real = pipeline.build_repeated
    monkeypatch.setattr(pipeline, "build_repeated", lambda *a, **k: made.append(a[0]) or real(*a, **k))
    rows_sym, _ = compare("torus", "allgather", 2**20, algorithms=algs, **kw)
    assert [getattr(s, "name", s) for s in made] == ["ring"]
    assert [r.algorithm for r in rows_full] == [r.algorithm for r in rows_sym]
    for a, b in zip(rows_full, rows_sym):   # the ring's steps repeat (a torus lacks its 12 rotations): times to 1e-12
        assert a.to_json() == b.to_json() if a.algorithm != "ring" else rows_alike(a, b) is None


def test_above_128_end_nodes_with_translations():
    """A 12x12 torus (144 end nodes) is packed through its translations and verified on its orbits;
    a 12x12 mesh (reflections only) is refused with the reason."""
    torus = hetero_mesh(12, 12, 2.0, torus=True)
    assert trees.requires(torus, collective_type("allgather")) is None
    sym = pipeline.build_compact("synth-trees", torus, "allgather", 2**20, pieces=4)
    assert isinstance(sym, SymmetricSchedule) or len(sym) > 0
    sym = build_symmetric("synth-trees", torus, "allgather", 2**20, pieces=4)
    assert sym.transfers == len(sym.reps) * 144
    row = evaluate(sym)
    assert row.verified and row.lower_bound_s <= row.time_s
    assert "end nodes" in trees.requires(hetero_mesh(12, 12, 2.0), collective_type("allgather"))
    assert "end nodes" in trees.requires(torus, collective_type("broadcast"))


def test_synthesize_may_answer_with_representatives(monkeypatch):
    monkeypatch.setattr(pipeline, "SYMMETRIC_ABOVE_TRANSFERS", 1)
    out = synthesize("torus", "allgather", 2**20, system_options={"dims": (3, 4)}, registered=False)
    assert out.result.verified
    if out.schedule.algorithm == "synth-trees":
        assert isinstance(out.schedule, SymmetricSchedule)
        assert out.result.transfers == out.schedule.transfers


def test_an_all_reduce_cuts_every_block_alike():
    """A 12-MiB vector on 12 nodes: the plan's pieces are brought down to a divisor of each node's
    1 MiB block, so that the schedule is symmetric (chunk sizes equal at every anchor)."""
    torus = load_system("torus", dims=(3, 4))
    sym = build_symmetric("synth-trees", torus, "allreduce", 12 * 2**20)
    assert 2**20 % sym.params["pieces"] == 0
    assert verify(sym).data_flow == "orbits"
    assert evaluate(sym).to_json() == evaluate(build("synth-trees", torus, "allreduce", 12 * 2**20)).to_json()


def test_an_explicit_build_too_large_to_expand_is_planned_within_the_explicit_cap(monkeypatch):
    """``build`` expands the representatives where they fit; beyond, it plans within a million chunk
    deliveries as on a network without translations, while the representatives keep more pieces."""
    torus = hetero_mesh(6, 8, 2.0, torus=True)      # (5 x 6 now plans within the cap: the fewest pieces kept)
    size = 2**30 // 48
    sym = build_symmetric("synth-trees", torus, "allgather", size)
    assert len(sym.reps.chunk_idx) * 48 > trees.MAX_DELIVERIES        # more than an explicit plan may hold
    monkeypatch.setattr(trees, "EXPLICIT_DELIVERIES", 1000)
    full = build("synth-trees", torus, "allgather", size)
    assert len(full.chunk_idx) <= trees.MAX_DELIVERIES < len(sym.reps.chunk_idx) * 48
    assert full.params["pieces"] < sym.params["pieces"]
    assert verify(full).transfers == len(full)



def test_an_explicit_build_too_large_to_expand_above_the_translated_limit_is_refused(monkeypatch):
    """Above ``MAX_TRANSLATED_END_NODES`` an explicit schedule would pack every root's trees (a
    1,024-node hypercube's all-reduce of 1000 MB, its chunks unequal: 2 min 46 s and 11.7 GB for 20 % of
    the bound), so ``build`` refuses in one line with the expansion's estimate; the representatives
    still build and verify.  Here the limit is lowered to 47 end nodes of a 48-node torus."""
    torus = hetero_mesh(6, 8, 2.0, torus=True)
    size = 2**30 // 48
    monkeypatch.setattr(trees, "EXPLICIT_DELIVERIES", 1000)
    monkeypatch.setattr(trees, "MAX_TRANSLATED_END_NODES", 47)
    with pytest.raises(UnsupportedError, match=r"chunk deliveries \(about [0-9.]+ GiB") as info:
        build("synth-trees", torus, "allgather", size)
    assert "\n" not in str(info.value) and "48 end nodes" in str(info.value)
    sym = build_symmetric("synth-trees", torus, "allgather", size)
    assert verify(sym).data_flow == "orbits"


def test_above_the_translated_limit_the_representatives_are_planned_again_with_pieces_that_expand(monkeypatch):
    """Where the representatives would expand beyond the explicit cap, above ``MAX_TRANSLATED_END_NODES``
    they are planned again with the most pieces a block whose expansion fits (3 here: 48 x 47 x 3
    deliveries), and that expansion is the explicit schedule: it verifies and holds at most the cap."""
    torus = hetero_mesh(6, 8, 2.0, torus=True)
    size = 2**30 // 48
    cap = 48 * 47 * 3
    monkeypatch.setattr(trees, "EXPLICIT_DELIVERIES", cap)
    monkeypatch.setattr(trees, "MAX_TRANSLATED_END_NODES", 47)
    full = build("synth-trees", torus, "allgather", size)
    assert full.params["pieces"] == 3 and len(full.chunk_idx) <= cap
    assert verify(full).transfers == len(full)
    assert len(build_symmetric("synth-trees", torus, "allgather", size).reps.chunk_idx) * 48 > cap


def test_a_size_that_leaves_the_chunks_unequal_is_refused_as_representatives_before_planning(monkeypatch):
    """An all-reduce of 12 MiB + 1 byte on a 3x4 torus cannot be cut alike at every node: the symmetric
    build says so before any packing or plan (on 1,024 nodes planning them first took a minute and
    10 GB), and the whole schedule is still built and verifies."""
    torus = load_system("torus", dims=(3, 4))
    planned = []
    real = trees._synthesized
    monkeypatch.setattr(trees, "_synthesized", lambda *a, **k: planned.append(1) or real(*a, **k))
    with pytest.raises(InputError, match="chunk sizes differ between nodes"):
        build_symmetric("synth-trees", torus, "allreduce", 12 * 2**20 + 1)
    assert not planned
    assert verify(build("synth-trees", torus, "allreduce", 12 * 2**20 + 1)).transfers > 0 and planned

# --- a fat tree's translations in closed form (FatTree.translation_radices), which a hierarchical
# system's fat-tree dimension moves with: links, D-mod-k routes and link anchors go to their images


def _link_ids(system, src, dst):
    lt = system.links
    v = system.vertices
    key = lt.src.astype(np.int64) * v + lt.dst
    order = np.argsort(key)
    want = np.asarray(src, np.int64) * v + dst
    at = np.minimum(np.searchsorted(key[order], want), len(key) - 1)
    return np.where(key[order][at] == want, order[at], -1)


@pytest.mark.parametrize("k, levels", [(2, 3), (4, 3), (6, 3), (8, 3), (2, 2), (4, 2), (6, 2), (10, 2)])
def test_a_full_fat_tree_s_translations_map_links_routes_and_anchors_onto_themselves(k, levels):
    from collsim.kinds.network.fat_tree import FatTree, fat_tree_capacity
    t = FatTree(nodes=fat_tree_capacity(k, levels), k=k, levels=levels)
    radices = t.translation_radices()
    assert int(np.prod(radices)) == t.nodes
    lt, n = t.links, t.nodes
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    ptr, links = t.route(src, dst)
    anchors = t.link_anchors(lt.src, lt.dst)
    assert (anchors >= 0).all() and (anchors < n).all()
    for g in range(n):
        assert np.array_equal(t.translate(g, np.arange(n)),               # hosts: digit by digit
                              np.ravel_multi_index(tuple((a + b) % r for a, b, r in zip(
                                  np.unravel_index(g, radices), np.unravel_index(np.arange(n), radices), radices)),
                                  radices))
        assert np.array_equal(np.sort(t.translate(g, np.arange(t.vertices))), np.arange(t.vertices))
        image = _link_ids(t, t.translate(g, lt.src), t.translate(g, lt.dst))
        assert (image >= 0).all() and len(np.unique(image)) == len(image)           # links onto links
        assert np.array_equal(t.translate(g, anchors), anchors[image])              # anchors move with them
        moved_ptr, moved = t.route(t.translate(g, src), t.translate(g, dst))
        assert np.array_equal(moved_ptr, ptr) and np.array_equal(moved, image[links])  # routes onto routes
        if g:
            assert (image != np.arange(len(image))).all()                            # freely on the links


def test_a_fat_tree_with_empty_ports_declares_no_translations():
    from collsim.core.errors import InputError, UnsupportedError
    from collsim.kinds.network.fat_tree import FatTree
    t = FatTree(nodes=12, k=4)
    assert t.translation_radices() is None
    with pytest.raises(UnsupportedError):
        t.translate(1, [0])
