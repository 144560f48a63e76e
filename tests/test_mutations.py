"""The verifier rejects broken schedules, naming the step, transfer, link and wavelength."""

from __future__ import annotations

import numpy as np
import pytest

from collsim import build, verify
from collsim.core import errors as E
from collsim.core.schedule import Schedule
from collsim.kinds.optical_ring import OpticalRing
from conftest import raises_naming


def take(s: Schedule, rows, **cols) -> Schedule:
    """Schedule made of rows ``rows`` (in that order), with columns overridden."""
    return s.take(rows, **cols)


@pytest.fixture(scope="module")
def ring_ag():
    return build("ring", OpticalRing(nodes=8, wavelengths=4), "allgather", 1024)


@pytest.fixture(scope="module")
def ring_ar():
    return build("ring", OpticalRing(nodes=6, wavelengths=4), "allreduce", 6000)


@pytest.fixture(scope="module")
def osm_ag():
    return build("osm", OpticalRing(nodes=9, wavelengths=3), "allgather", 1024)


def test_originals_verify(ring_ag, ring_ar, osm_ag):
    for s in (ring_ag, ring_ar, osm_ag):
        verify(s)


def test_dropping_the_last_transfer_breaks_the_postcondition(ring_ag):
    bad = take(ring_ag, np.arange(len(ring_ag) - 1))
    with pytest.raises(E.PostconditionError) as info:
        verify(bad)
    assert info.value.where.node == int(ring_ag.dst[-1])


def test_dropping_an_early_transfer_starves_a_later_one(ring_ag):
    bad = take(ring_ag, np.arange(1, len(ring_ag)))  # node 0's first send is gone
    with pytest.raises(E.MissingDataError) as info:
        verify(bad)
    assert info.value.step == 1 and info.value.transfer is not None


def test_duplicating_a_reduction_is_a_double_count(ring_ar):
    t = int(np.flatnonzero(ring_ar.reduce)[0])
    rows = np.insert(np.arange(len(ring_ar)), t + 1, t)  # same reduction twice in its step
    wl = ring_ar.wavelength[rows].copy()
    wl[t + 1] = 1  # on its own wavelength, so only the data flow is wrong
    with pytest.raises(E.DoubleCountError) as info:
        verify(take(ring_ar, rows, wavelength=wl))
    assert info.value.step == int(ring_ar.step[t])


def test_repeating_a_reduction_in_a_later_step_is_a_double_count(ring_ar):
    t = int(np.flatnonzero(ring_ar.reduce)[0])
    late = int(np.flatnonzero(ring_ar.step == 1)[0])
    rows = np.insert(np.arange(len(ring_ar)), late, t)
    step = ring_ar.step[rows].copy()
    step[late] = 1
    wl = ring_ar.wavelength[rows].copy()
    wl[late] = 1
    with pytest.raises(E.DoubleCountError):
        verify(take(ring_ar, rows, step=step, wavelength=wl))


def test_two_overlapping_lightpaths_on_one_wavelength_conflict(osm_ag):
    s = osm_ag
    # find two lightpaths in the same step and direction that share a link, on different wavelengths
    from collsim.core.ring import arc_start
    n = s.system.nodes
    start = arc_start(s.src, s.direction, n)
    for a in range(len(s)):
        for b in range(a + 1, len(s)):
            if s.step[a] != s.step[b] or s.direction[a] != s.direction[b]:
                continue
            la = {(start[a] + k) % n for k in range(s.hops[a])}
            lb = {(start[b] + k) % n for k in range(s.hops[b])}
            if la & lb:
                wl = s.wavelength.copy()
                wl[b] = wl[a]
                fb = s.fiber.copy()
                fb[b] = fb[a]
                with pytest.raises(E.ChannelConflictError) as info:
                    verify(s.replace(wavelength=wl, fiber=fb))
                where = info.value.where
                assert where.step == int(s.step[a]) and where.wavelength == int(wl[a])
                assert where.link is not None and where.transfer in (a, b)
                return
    pytest.fail("no overlapping pair found")


def test_reversing_a_route_is_rejected(osm_ag):
    s = osm_ag
    t = int(np.flatnonzero(s.hops >= 2)[0])
    d = s.direction.copy()
    d[t] = -d[t]
    with pytest.raises(E.RouteError) as info:
        verify(s.replace(direction=d))
    assert info.value.transfer == t


def test_moving_a_transfer_before_its_data_arrives(ring_ag):
    s = ring_ag
    t = int(np.flatnonzero(s.step == 3)[0])  # forwards a chunk received in step 2
    step = s.step.copy()
    step[t] = 0
    wl = s.wavelength.copy()
    wl[t] = 1  # a free wavelength: only the timing of the data is wrong
    order = np.argsort(step, kind="stable")
    with pytest.raises(E.MissingDataError) as info:
        verify(take(s, order, step=step[order], wavelength=wl[order]))
    assert info.value.step == 0


def test_wavelength_out_of_range(ring_ag):
    wl = ring_ag.wavelength.copy()
    wl[5] = 4
    with pytest.raises(E.ChannelRangeError) as info:
        verify(ring_ag.replace(wavelength=wl))
    assert info.value.where.wavelength == 4 and info.value.transfer == 5


def test_route_that_misses_its_destination(ring_ag):
    hops = ring_ag.hops.copy()
    hops[3] = 2
    with pytest.raises(E.RouteError):
        verify(ring_ag.replace(hops=hops))


def test_copy_into_a_reduction_collective_conflicts(ring_ar):
    # a copy and a reduction into the same buffer in the same step
    t = int(np.flatnonzero(ring_ar.reduce)[0])
    rows = np.insert(np.arange(len(ring_ar)), t + 1, t)
    red = ring_ar.reduce[rows].copy()
    red[t + 1] = False
    wl = ring_ar.wavelength[rows].copy()
    wl[t + 1] = 1
    with pytest.raises(E.ConflictingWriteError):
        verify(take(ring_ar, rows, reduce=red, wavelength=wl))


def test_reduce_flag_on_allgather_is_rejected(ring_ag):
    red = ring_ag.reduce.copy()
    red[0] = True
    with raises_naming(E.UnexpectedReductionError, "reduces", "allgather"):   # what the transfer does, and to what
        verify(ring_ag.replace(reduce=red))


def test_transceiver_limit():
    ring = OpticalRing(nodes=8, wavelengths=8)
    s = build("osm", ring, "broadcast", 1024)
    verify(s)  # unlimited by default
    limited = OpticalRing(nodes=8, wavelengths=8, max_tx_channels=2)
    with pytest.raises(E.TransceiverLimitError) as info:
        verify(s.replace(system=limited))
    assert info.value.where.node == 0 and info.value.step == 0
    ok = build("osm", limited, "broadcast", 1024)  # RWA splits the round instead
    assert verify(ok).steps == 4


def test_error_message_names_the_location(osm_ag):
    d = osm_ag.direction.copy()
    t = int(np.flatnonzero(osm_ag.hops >= 2)[0])
    d[t] = -d[t]
    k = int(osm_ag.step[t])
    j = t - int(np.searchsorted(osm_ag.step, k))  # its index within its step, as the file lists it
    with pytest.raises(E.RouteError, match=rf"\(steps\[{k}\]\.transfers\[{j}\]\)"):
        verify(osm_ag.replace(direction=d))
