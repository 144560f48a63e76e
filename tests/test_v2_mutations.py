"""Schedule v2 (common columns + routes part): mutations of link routes and bands are rejected.

Also: striping divides serialisation time, and the ``.npz`` / JSON formats round-trip.
"""

from __future__ import annotations

import numpy as np
import pytest

import collsim
from collsim import build, verify
from collsim.core import errors as E
from collsim.core.ring import arc_start
from collsim.core.serialize import dumps, load, loads, save
from collsim.cost import block_steps
from collsim.pipeline import schedule_time_s
from collsim.kinds.optical_ring import OpticalRing

# ---------------------------------------------------------------- electrical routes


@pytest.fixture(scope="module", params=["torus-ring", "fat-tree-pairwise"])
def net(request):
    if request.param == "torus-ring":
        return collsim.build("ring", "torus", "allgather", 1024, nodes=16)
    return collsim.build("pairwise", "fat-tree", "alltoall", 1024, nodes=16)


def _longest(s):
    """Index, route offset, hop count and links of the transfer with the longest route."""
    t = int(np.argmax(s.hops))
    p, h = int(s.route_ptr[t]), int(s.hops[t])
    assert h >= 2, "fixture should have multi-hop routes"
    return t, p, h, s.route_links[p:p + h]


def test_network_originals_verify(net):
    verify(net)
    assert type(net.routes).__name__ == "LinkRoutes"


def test_broken_walk_is_a_route_error(net):
    s = net
    links = s.system.links
    t, p, h, r = _longest(s)
    i = 1 if h >= 3 else 0  # an interior link when there is one, else the first one
    tail = int(s.src[t]) if i == 0 else int(links.dst[r[i - 1]])
    # a link leaving the right vertex (so the walk is fine up to it) that does not lead on to r[i+1]
    cand = [x for x in range(len(links))
            if links.src[x] == tail and links.dst[x] != links.src[r[i + 1]]]
    assert cand
    rl = s.route_links.copy()
    rl[p + i] = cand[0]
    with pytest.raises(E.RouteError) as info:
        verify(s.replace(route_links=rl))
    assert info.value.step == int(s.step[t]) and info.value.transfer == t
    assert "breaks" in str(info.value)
    assert info.value.where.link == s.system.link_name(int(r[i + 1]))


@pytest.mark.parametrize("bad", ["len", -1])
def test_unknown_link_id_is_a_route_error(net, bad):
    s = net
    t, p, h, r = _longest(s)
    rl = s.route_links.copy()
    rl[p + h // 2] = len(s.system.links) if bad == "len" else -1
    with pytest.raises(E.RouteError, match="does not exist") as info:
        verify(s.replace(route_links=rl))
    assert info.value.step == int(s.step[t]) and info.value.transfer == t


def test_route_ending_elsewhere_is_a_route_error(net):
    s = net
    links = s.system.links
    t, p, h, r = _longest(s)
    last = int(links.dst[r[h - 2]])
    cand = [x for x in range(len(links)) if links.src[x] == last and links.dst[x] != s.dst[t]]
    assert cand
    rl = s.route_links.copy()
    rl[p + h - 1] = cand[0]  # still a contiguous walk, to the wrong vertex
    with pytest.raises(E.RouteError, match=f"from {int(s.src[t])} to {int(s.dst[t])}") as info:
        verify(s.replace(route_links=rl))
    assert info.value.step == int(s.step[t]) and info.value.transfer == t


# ---------------------------------------------------------------- bands


@pytest.fixture(scope="module")
def osm8():
    return build("osm", OpticalRing(nodes=8, wavelengths=8), "allgather", 64)


def _links_of(s, t):
    n = s.system.nodes
    start = int(arc_start(s.src[t:t + 1], s.direction[t:t + 1], n)[0])
    return {(start + k) % n for k in range(int(s.hops[t]))}


def _sharing_pair(s):
    """Two lightpaths of one step, direction and fiber that share a link (a < b)."""
    for a in range(len(s)):
        for b in range(a + 1, len(s)):
            if (s.step[a], s.direction[a], s.fiber[a]) != (s.step[b], s.direction[b], s.fiber[b]):
                continue
            if _links_of(s, a) & _links_of(s, b):
                return a, b
    pytest.fail("no pair of lightpaths sharing a link")


def test_osm_band_original_verifies(osm8):
    verify(osm8)
    assert (osm8.band == 1).all()


def test_widening_a_band_over_a_neighbour_is_a_conflict(osm8):
    s = osm8
    a, b = _sharing_pair(s)
    assert s.wavelength[a] != s.wavelength[b]  # a valid schedule keeps them apart
    lo, hi = sorted((a, b), key=lambda t: int(s.wavelength[t]))
    band = s.band.copy()
    band[lo] = int(s.wavelength[hi]) - int(s.wavelength[lo]) + 1  # now covers hi's wavelength
    # the pair on its own (only the resources are in question)
    pair = s.take([a, b], band=band[[a, b]])
    with pytest.raises(E.ChannelConflictError) as info:
        verify(pair, dataflow=False)
    where = info.value.where
    assert where.step == int(s.step[a]) and where.transfer == 1  # the later of the two
    assert where.link is not None
    assert where.wavelength == int(s.wavelength[hi])
    # the whole schedule: the conflict is found in that step, inside the widened band
    with pytest.raises(E.ChannelConflictError) as info:
        verify(s.replace(band=band))
    where = info.value.where
    t = where.transfer
    assert where.step == int(s.step[a]) and s.step[t] == s.step[a]
    assert s.wavelength[t] <= where.wavelength < s.wavelength[t] + band[t]
    assert s.wavelength[lo] <= where.wavelength < s.wavelength[lo] + band[lo]


@pytest.mark.parametrize("bands,conflict", [(((0, 2), (2, 2)), None), (((0, 3), (2, 2)), 2),
                                            (((2, 2), (0, 2)), None), (((1, 4), (0, 2)), 1),
                                            (((0, 8), (7, 1)), 7)])
def test_touching_bands_pass_and_overlapping_ones_conflict(osm8, bands, conflict):
    s = osm8
    a, b = _sharing_pair(s)
    (wa, ba), (wb, bb) = bands
    pair = s.take([a, b], wavelength=np.array([wa, wb]), band=np.array([ba, bb]))
    if conflict is None:
        verify(pair, dataflow=False)
        return
    with pytest.raises(E.ChannelConflictError) as info:
        verify(pair, dataflow=False)
    where = info.value.where
    assert where.step == int(s.step[a]) and where.transfer == 1 and where.wavelength == conflict
    assert max(wa, wb) <= where.wavelength < min(wa + ba, wb + bb)


@pytest.fixture(scope="module")
def striped():
    return build("ring", OpticalRing(nodes=8, wavelengths=8), "allgather", 1024, stripe=4)


def test_striped_ring_verifies(striped):
    verify(striped)
    assert (striped.band == 4).all() and striped.wavelengths_used() == 4


def test_band_past_the_last_wavelength_is_out_of_range(striped):
    s = striped
    t = len(s) // 2
    wl = s.wavelength.copy()
    wl[t] = 8 - 4 + 1  # band 5..8, one past the top
    with pytest.raises(E.ChannelRangeError) as info:
        verify(s.replace(wavelength=wl))
    assert info.value.transfer == t and info.value.step == int(s.step[t])
    assert info.value.where.wavelength == 5
    wl[t] = 8 - 4  # band 4..7 fits exactly (and the ring's arcs are disjoint in a step)
    verify(s.replace(wavelength=wl))


def test_band_zero_is_out_of_range(striped):
    s = striped
    t = 3
    band = s.band.copy()
    band[t] = 0
    with pytest.raises(E.ChannelRangeError) as info:
        verify(s.replace(band=band))
    assert info.value.transfer == t and info.value.step == int(s.step[t])


def test_build_refuses_a_band_wider_than_the_transceiver_limit():
    with pytest.raises(E.InputError):
        build("ring", OpticalRing(nodes=8, wavelengths=8, max_tx_channels=2), "allgather", 1024, stripe=4)


def test_transceiver_limits_count_band_width():
    s = build("ring", OpticalRing(nodes=8, wavelengths=8, max_tx_channels=2, max_rx_channels=2),
              "allgather", 1024, stripe=2)
    verify(s)
    t = 5
    band = s.band.copy()
    band[t] = 3
    with pytest.raises(E.TransceiverLimitError) as info:
        verify(s.replace(band=band))
    assert info.value.step == int(s.step[t])
    assert info.value.where.node in (int(s.src[t]), int(s.dst[t]))


# ---------------------------------------------------------------- stripe timing


@pytest.mark.parametrize("stripe", [2, 4, 8])
def test_stripe_divides_serialisation_time(stripe):
    system = OpticalRing(nodes=8, wavelengths=8, mrr_reconfig_s=0, oeo_cycles_per_flit=0)
    size = 1 << 20
    one = build("ring", system, "allgather", size)
    s = build("ring", system, "allgather", size, stripe=stripe)
    verify(s)
    assert s.num_steps == one.num_steps == 7
    assert schedule_time_s(s) == pytest.approx(schedule_time_s(one) / stripe, rel=1e-9)
    assert block_steps(one) == pytest.approx(7)
    assert block_steps(s) == pytest.approx((8 - 1) / stripe)


# ---------------------------------------------------------------- file formats


@pytest.fixture(scope="module", params=["ring-stripe", "network"])
def to_save(request):
    if request.param == "ring-stripe":
        return build("ring", OpticalRing(nodes=8, wavelengths=8), "allgather", 1000, stripe=4)
    return build("pairwise", "fat-tree", "alltoall", 1000, nodes=16)


def _columns(s):
    names = ("step", "round", "src", "dst", "chunk_ptr", "chunk_idx", "reduce")
    route = (("direction", "hops", "fiber", "wavelength", "band") if type(s.routes).__name__ == "RingRoutes"
             else ("hops", "route_ptr", "route_links"))
    return {k: getattr(s, k) for k in names + route}


def _assert_same(a, b):
    assert type(a.routes) is type(b.routes)
    ca, cb = _columns(a), _columns(b)
    for k in ca:
        np.testing.assert_array_equal(ca[k], cb[k], err_msg=k)
    assert a.system == b.system if hasattr(a.system, "__eq__") else True


def test_npz_round_trip(to_save, tmp_path):
    path = tmp_path / "x.npz"
    save(to_save, path)
    back = load(path)
    _assert_same(to_save, back)
    assert dumps(back) == dumps(to_save)
    verify(back)


def test_version_1_json_still_loads(to_save, tmp_path):
    text = dumps(to_save)
    assert '"version": 2' in text
    old = text.replace('"version": 2', '"version": 1', 1)
    back = loads(old)
    _assert_same(to_save, back)
    verify(back)
    path = tmp_path / "x.json"
    path.write_text(old)
    _assert_same(to_save, load(path))
