"""Tests for the exact one-hop all-to-all wavelength assignment on a ring.

The checkers below are written from the problem statement only (link
numbering, shortest routes, "same direction + shared directed link => different
wavelength") and share no code with the construction.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from collsim.kinds.optical_ring.alltoall import (
    OneHopAllToAll,
    uniform_alltoall_ring,
    uniform_alltoall_wavelengths,
)

SMALL = list(range(2, 65))
LARGE = [127, 128, 130, 257, 1024]
EXPAND_MAX = 260  # explicit per-link expansion costs ~n**3/4 entries


def _directed_links(r: OneHopAllToAll, n: int):
    """Expand every lightpath into the directed links it uses.

    Returns (lightpath index, direction flag 0=cw/1=ccw, link id) per hop.
    cw link i is i -> i+1; ccw link i is i -> i-1 (the link *leaving* i).
    """
    h = r.hops.astype(np.int64)
    owner = np.repeat(np.arange(h.size), h)
    step = np.arange(owner.size) - np.repeat(np.cumsum(h) - h, h)
    d = r.direction.astype(np.int64)[owner]
    # hop t leaves node src + d*t; in both directions that node names the link
    link = (r.src[owner] + d * step) % n
    return owner, (d < 0).astype(np.int64), link


def _loads_by_difference(r: OneHopAllToAll, n: int) -> np.ndarray:
    """Per-direction link loads (2, n) from a circular difference array."""
    loads = np.zeros((2, n), dtype=np.int64)
    for flag, d in ((0, 1), (1, -1)):
        sel = r.direction == d
        h = r.hops[sel]
        # the used link ids form the cyclic interval [first, first + h)
        first = r.src[sel] if d == 1 else (r.src[sel] - h + 1) % n
        diff = np.zeros(2 * n + 1, dtype=np.int64)
        np.add.at(diff, first, 1)
        np.add.at(diff, first + h, -1)
        c = np.cumsum(diff)[: 2 * n]
        loads[flag] = c[:n] + c[n:]
    return loads


def _interval_conflicts(r: OneHopAllToAll, n: int) -> int:
    """Count overlaps among same-(direction, wavelength) cyclic intervals."""
    bad = 0
    for d in (1, -1):
        sel = r.direction == d
        h = r.hops[sel]
        first = r.src[sel] if d == 1 else (r.src[sel] - h + 1) % n
        w = r.wavelength[sel]
        order = np.lexsort((first, w))
        s, e, w = first[order], (first + h)[order], w[order]
        same = w[1:] == w[:-1]
        bad += int(np.count_nonzero(s[1:][same] < e[:-1][same]))
        # the last interval of each wavelength must not wrap onto the first
        starts = np.flatnonzero(np.r_[True, ~same])
        ends = np.r_[starts[1:] - 1, w.size - 1]
        bad += int(np.count_nonzero(e[ends] > s[starts] + n))
    return bad


def _check(n: int) -> None:
    r = uniform_alltoall_ring(n)
    w_n = uniform_alltoall_wavelengths(n)
    count = n * (n - 1)

    # shape, dtype, frozen
    assert isinstance(r, OneHopAllToAll)
    assert r.wavelengths_per_direction == w_n
    for name in ("src", "dst", "hops", "wavelength"):
        arr = getattr(r, name)
        assert arr.shape == (count,) and arr.dtype == np.int64, name
    assert r.direction.shape == (count,)
    assert np.issubdtype(r.direction.dtype, np.integer)
    assert set(np.unique(r.direction).tolist()) <= {-1, 1}

    # every ordered pair exactly once, sorted by (src, dst)
    assert r.src.min() >= 0 and r.dst.max() < n
    assert not np.any(r.src == r.dst)
    key = r.src * n + r.dst
    assert np.all(np.diff(key) > 0)  # strictly increasing => unique + sorted
    assert key.size == count

    # shortest route, and direction * hops reaches dst
    cw_dist = (r.dst - r.src) % n
    assert np.array_equal(r.hops, np.minimum(cw_dist, n - cw_dist))
    assert r.hops.min() >= 1
    reached = (r.src + r.direction.astype(np.int64) * r.hops) % n
    assert np.array_equal(reached, r.dst)
    if n % 2 == 0:  # ties split evenly
        tie = 2 * r.hops == n
        assert np.count_nonzero(tie & (r.direction == 1)) == n // 2
        assert np.count_nonzero(tie & (r.direction == -1)) == n // 2

    # wavelengths: exactly W(n) per direction, 0-based
    for d in (1, -1):
        used = np.unique(r.wavelength[r.direction == d])
        assert np.array_equal(used, np.arange(w_n)), (n, d)

    # no conflict, and W(n) == max link load (computed from the arcs)
    assert _interval_conflicts(r, n) == 0
    loads = _loads_by_difference(r, n)
    assert loads.max(axis=1).tolist() == [w_n, w_n]
    # loads are uniform except n % 4 == 2, where they are W or W - 1
    assert loads.min() == (w_n - 1 if n % 4 == 2 else w_n)

    if n <= EXPAND_MAX:
        owner, flag, link = _directed_links(r, n)
        assert np.array_equal(
            np.bincount(flag * n + link, minlength=2 * n).reshape(2, n), loads
        )
        slot = (flag * n + link) * w_n + r.wavelength[owner]
        assert np.unique(slot).size == slot.size, "two lightpaths share a link+wavelength"


@pytest.mark.parametrize("n", SMALL)
def test_small_rings_are_exact(n: int) -> None:
    _check(n)


@pytest.mark.parametrize("n", LARGE)
def test_large_rings_are_exact(n: int) -> None:
    _check(n)


def test_wavelength_formula_hand_values() -> None:
    # W(N) = ceil(floor(N^2/4) / 2); hand-derived from the link loads:
    #   N=3: floor(9/4)=2  -> 1   (k=1: load 1)
    #   N=4: floor(16/4)=4 -> 2   (m=2: 1 + 2/2 antipodal = 2)
    #   N=5: floor(25/4)=6 -> 3   (k=2: 1+2 = 3)
    #   N=6: floor(36/4)=9 -> 5   (m=3: 1+2 + ceil(3/2) = 5, total 27 > 4*6)
    #   N=7: floor(49/4)=12 -> 6  (k=3: 1+2+3 = 6)
    #   N=8: floor(64/4)=16 -> 8  (m=4: 1+2+3 + 4/2 = 8)
    hand = {2: 1, 3: 1, 4: 2, 5: 3, 6: 5, 7: 6, 8: 8}
    for n, w in hand.items():
        assert uniform_alltoall_wavelengths(n) == w
    for n in range(2, 300):
        w = uniform_alltoall_wavelengths(n)
        if n % 2:
            assert 8 * w == n * n - 1
        elif n % 4 == 0:
            assert 8 * w == n * n
        else:
            assert 8 * w == n * n + 4
        assert w == -(-((n * n) // 4) // 2)


def test_result_is_frozen_and_deterministic() -> None:
    a, b = uniform_alltoall_ring(10), uniform_alltoall_ring(10)
    for f in dataclasses.fields(OneHopAllToAll):
        assert np.array_equal(getattr(a, f.name), getattr(b, f.name))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.wavelengths_per_direction = 3  # type: ignore[misc]
    assert a.n == 10 and len(a) == 90


@pytest.mark.parametrize("bad", [1, 0, -4])
def test_rejects_small_n(bad: int) -> None:
    with pytest.raises(ValueError):
        uniform_alltoall_ring(bad)
    with pytest.raises(ValueError):
        uniform_alltoall_wavelengths(bad)


@pytest.mark.parametrize("collective", ["allgather", "alltoall", "reducescatter", "allreduce"])
@pytest.mark.parametrize("wavelengths, fibers", [(2, 1), (3, 2)])
def test_osm_comes_in_slot_order_so_realisation_copies_no_column(collective, wavelengths, fibers):
    """OSM's lightpaths come ordered by the slot their colour falls in: the physical schedule keeps the
    logical one's columns (no permutation, no copy: 33.5 M transfers at N = 4096 all-reduce), and its
    slots are the colours' slots."""
    from collsim.algorithms import build_logical
    from collsim.pipeline import realize
    from collsim.systems import load_system
    system = load_system("paper", nodes=24, wavelengths=wavelengths, fibers=fibers)
    logical, params = build_logical("osm", system, collective, 1 << 20)
    s = realize(system, logical, algorithm="osm", params=params)
    assert np.shares_memory(s.src, logical.src) and np.shares_memory(s.chunk_idx, logical.chunk_idx)
    slot = logical.color // (wavelengths * fibers)
    first = np.concatenate([[0], np.cumsum(np.bincount(logical.round))[:-1]])[logical.round]
    assert np.array_equal(s.step, slot + (s.step[first] - slot[first]))  # a round's slots in colour order
    assert (np.diff(s.step) >= 0).all() and s.num_steps > len(set(logical.round.tolist()))
