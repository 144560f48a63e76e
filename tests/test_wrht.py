"""WRHT (seed 003) all-reduce and its all-gather extension (seed 004 §IV-A.2): explicit schedules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collsim
from collsim import build, verify
from collsim.algorithms import get_algorithm
from collsim.algorithms.wrht import group_size, paper_allgather_steps, paper_allreduce_steps
from collsim.core import errors as E
from collsim.core.schedule import Schedule
from collsim.kinds.optical_ring.alltoall import uniform_alltoall_wavelengths
from collsim.kinds.optical_ring import OpticalRing
from collsim.core.collective import collective_type

STRATEGIES = ["first-fit", "best-fit", "most-used"]
PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 61, 97, 127, 131, 251, 257, 293]
NODES = sorted(set(range(2, 40)) | set(PRIMES) | {64, 81, 100, 128, 129, 130, 200, 243, 256, 258, 300})
WAVES = [1, 2, 3, 4, 7, 16, 64]


def take(s: Schedule, rows, **cols) -> Schedule:
    """Schedule made of rows ``rows`` (in that order), with columns overridden."""
    return s.take(rows, **cols)


def wrht(n, w=64, f=1, collective="allreduce", strategy="first-fit", **params):
    return build("wrht", OpticalRing(nodes=n, wavelengths=w, fibers=f), collective, 4096,
                 strategy=strategy, **params)


def a2a_gap(n, c, m=None):
    """True when the exact all-to-all fits C channels but the paper's ceil(m*^2/8) does not."""
    m = m or 2 * c + 1
    levels, p = 0, 1
    while p < n:
        p, levels = p * m, levels + 1
    m_star = -(-n // m ** (levels - 1))
    return uniform_alltoall_wavelengths(m_star) <= c < -(-m_star * m_star // 8)


# ---------------------------------------------------------------- closed forms

def test_group_size_is_two_channels_plus_one():
    # a representative hears floor(m/2) members per side over the one link next to it: floor(m/2) <= F*w
    assert [group_size(c) for c in (1, 2, 64, 128)] == [3, 5, 129, 257]
    with pytest.raises(E.InputError):
        group_size(0)


def test_closed_forms_at_the_papers_operating_point():
    # N=1024, w=64: m = 129, L = ceil(log_129 1024) = 2 (129 < 1024 <= 16641),
    # m* = ceil(1024/129) = 8, ceil(64/8) = 8 <= 64 wavelengths -> 2L - 1 = 3.
    assert paper_allreduce_steps(1024, 64) == 3
    # N=4096: L = 2, m* = ceil(4096/129) = 32, ceil(1024/8) = 128 > 64 -> 2L = 4.
    assert paper_allreduce_steps(4096, 64) == 4
    # Table 1 (seed 004): theta = 2, m^(theta-1) = 129: 1 + ceil(129*(129-1)/128) = 130 to gather,
    # (theta-1)*129 = 129 to broadcast -> 259, the printed value.  Other variant: 130 + 2*129 = 388.
    assert paper_allgather_steps(1024, 64) == 259
    assert paper_allgather_steps(4096, 64) == 388
    # small ones: N <= m gives 1 (all-to-all fits) or 2
    assert paper_allreduce_steps(16, 64) == 1 and paper_allreduce_steps(64, 64) == 2
    assert paper_allgather_steps(16, 64) == 1 and paper_allgather_steps(64, 64) == 2
    with pytest.raises(E.InputError):
        paper_allreduce_steps(1, 64)
    with pytest.raises(E.InputError):
        paper_allgather_steps(8, 4, m=1)


# ---------------------------------------------------------------- golden explicit schedules

@pytest.mark.parametrize("n,w,m,rounds,paper", [
    # w=2 -> m=5.  N=m=5: W(5)=3 > 2, so one group of 5 to a root and back: 2 = 2*ceil(log_5 5).
    (5, 2, None, 2, 2),
    # N=m^2=25: 5 groups of 5, then the 5 representatives form one group: 2 up + 2 down = 4 = 2*2.
    (25, 2, None, 4, 4),
    # w=64 -> m=129, N=m: 2; N=m^2=16641: 4 (m*=129 needs W(129)=2080 > 64).
    (129, 64, None, 2, 2),
    (16641, 64, None, 4, 4),
    # N=1024: one level of 8 groups (7 x 129 + 121), all-to-all among 8 (W(8)=8 <= 64), back: 3 = 2*2-1.
    (1024, 64, None, 3, 3),
    # N=4096: 32 groups, then one group of 32 (W(32)=128 > 64), then back: 4 = 2*2.
    (4096, 64, None, 4, 4),
    # w=1 -> m=3, N=m=3: the exact all-to-all of 3 nodes needs W(3)=1 wavelength (3 disjoint hops per
    # direction), so 1 round = 2*1-1; the paper's ceil(3^2/8)=2 > 1 predicts 2*1 = 2.
    (3, 1, None, 1, 2),
    # N=m^2=9, w=1: 3 groups of 3, all-to-all among 3, back: 3 = 2*2-1; the paper says 4.
    (9, 1, None, 3, 4),
    # fixed m=4 with w=1: N=m=4, W(4)=2 > 1: one group (2 left, 1 right), 2 logical rounds = 2*1.
    (4, 1, 4, 2, 2),
])
def test_golden_rounds(n, w, m, rounds, paper):
    s = wrht(n, w, m=m) if m else wrht(n, w)
    rep = verify(s)
    assert rep.rounds == rounds
    assert get_algorithm("wrht").paper_steps(s.system, collective_type("allreduce"), s.params) == paper
    if m is None:
        assert rep.steps == rep.rounds  # m = 2Fw+1: every round fits one physical step


def test_oversized_group_is_split_into_steps():
    # m=4, w=1: a representative has 2 left members; both cross its left link, needing 2 wavelengths
    # -> each of the 2 rounds takes 2 physical steps.
    rep = verify(wrht(4, 1, m=4))
    assert (rep.rounds, rep.steps) == (2, 4)


def test_params_are_recorded():
    s = wrht(1024)
    assert s.params == {"m": 129, "levels": 1, "top": 8, "final": "all-to-all",
                        "colors": "strategy (groups) + exact (all-to-all)", "strategy": "first-fit"}
    s = wrht(4096, collective="allgather", strategy="best-fit")
    assert s.params["m"] == 129 and s.params["levels"] == 2 and s.params["final"] == "root"
    assert s.params["colors"] == "strategy"
    assert wrht(100, 2, f=2).params["m"] == 9  # F*w = 4 channels per direction


@pytest.mark.parametrize("bad, message", [(0, "m must be an integer >= 2"), (1, "m must be an integer >= 2"),
                                          (-3, "m must be an integer >= 2"),
                                          # not an int: refused by the type wrht declares, before it builds
                                          (True, "wrht: m must be an integer, got True"),
                                          (2.5, "wrht: m must be an integer, got 2.5"),
                                          ("3", "wrht: m must be an integer, got '3'")])
def test_bad_m_is_an_input_error(bad, message):
    with pytest.raises(E.InputError, match=message):
        wrht(10, 2, m=bad)


def test_alias_and_scope():
    assert get_algorithm("wavelength-reuse-hierarchical-tree").name == "wrht"
    with pytest.raises(E.UnsupportedError):
        wrht(8, collective="reducescatter")


# ---------------------------------------------------------------- verification sweeps

@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("collective", ["allreduce", "allgather"])
@pytest.mark.parametrize("f", [1, 2])
def test_sweep_verifies(strategy, collective, f):
    for n in NODES:
        for w in WAVES:
            s = wrht(n, w, f, collective, strategy)
            rep = verify(s)
            assert rep.steps == rep.rounds  # default m never needs a second step per round
            assert (s.wavelength < w).all() and (s.fiber < f).all()
            if collective == "allgather":
                assert len(s.chunk_idx) == n * (n - 1)  # every node receives every other chunk once
            else:
                paper = paper_allreduce_steps(n, f * w)
                assert rep.steps == paper - a2a_gap(n, f * w)


@pytest.mark.parametrize("collective", ["allreduce", "allgather"])
@pytest.mark.parametrize("m", [2, 3, 4, 5, 8, 17])
def test_fixed_m_verifies(collective, m):
    for n in [2, 3, 4, 5, 7, 8, 9, 16, 17, 25, 27, 64, 97, 125, 128, 293]:
        for w, f in [(1, 1), (2, 1), (3, 2), (64, 1)]:
            for strategy in STRATEGIES:
                s = wrht(n, w, f, collective, strategy, m=m)
                rep = verify(s)
                assert s.params["m"] == m
                if m <= 2 * f * w + 1:
                    assert rep.steps == rep.rounds


@settings(max_examples=40)
@given(n=st.one_of(st.integers(2, 300), st.sampled_from(PRIMES)), w=st.integers(1, 64), f=st.integers(1, 2),
       m=st.one_of(st.none(), st.integers(2, 40)), collective=st.sampled_from(["allreduce", "allgather"]),
       strategy=st.sampled_from(STRATEGIES))
def test_random_instances_verify(n, w, f, m, collective, strategy):
    s = wrht(n, w, f, collective, strategy, m=m)
    rep = verify(s)
    levels = s.params["levels"]
    assert rep.rounds == 2 * levels + (s.params["final"] == "all-to-all")


def test_transceiver_limits_forbid_a_split_reduction_all_to_all():
    # m=3, w=64, N=20: 20 nodes fit an all-to-all in wavelengths (W(20)=50 <= 64), but a node may only
    # source/sink 2 lightpaths: 19 > 2.  Group: 20 -> 7 (groups of 3, last of 2) -> 3 (3,3,1); 3 nodes
    # exchange with 2 lightpaths each -> all-to-all.  Rounds 2 + 1 + 2 = 5; no round is split.
    free = wrht(20, 64, m=3)
    assert free.params["levels"] == 0 and verify(free).rounds == 1
    ring = OpticalRing(nodes=20, wavelengths=64, max_tx_channels=2, max_rx_channels=2)
    s = build("wrht", ring, "allreduce", 4096, m=3)
    rep = verify(s)
    assert (s.params["levels"], s.params["top"], rep.rounds, rep.steps) == (2, 3, 5, 5)


# ---------------------------------------------------------------- mutations

@pytest.fixture(scope="module")
def ar():
    return wrht(10, 1)  # m=3: 10 -> 4 -> 2 representatives, all-to-all between 2


def test_dropping_any_reduce_transfer_breaks_verification(ar):
    verify(ar)
    red = np.flatnonzero(ar.reduce)
    assert len(red) == 10  # 6 + 2 gathers into representatives, 2 all-to-all lightpaths
    for t in red:
        with pytest.raises(E.VerificationError):
            verify(take(ar, np.delete(np.arange(len(ar)), t)))


def test_dropping_a_first_level_reduction_loses_a_contribution(ar):
    t = int(np.flatnonzero(ar.reduce & (ar.step == 0))[0])
    with pytest.raises(E.PostconditionError, match="9 of 10 contributions"):
        verify(take(ar, np.delete(np.arange(len(ar)), t)))


def test_repeating_a_reduction_is_a_double_count(ar):
    t = int(np.flatnonzero(ar.reduce & (ar.step == 0))[0])
    late = int(np.flatnonzero(ar.step == 1)[0])
    rows = np.insert(np.arange(len(ar)), late, t)
    step = ar.step[rows].copy()
    step[late] = 1
    with pytest.raises(E.DoubleCountError):
        verify(take(ar, rows, step=step))


def test_dropping_an_allgather_gather_transfer_starves_the_tree():
    s = wrht(10, 1, collective="allgather")
    verify(s)
    for t in np.flatnonzero(s.step == 0):
        with pytest.raises(E.VerificationError):
            verify(take(s, np.delete(np.arange(len(s)), t)))


def test_group_rounds_use_the_selected_strategy():
    # issue #3: wavelength assignment within each subgroup by the core's RWA strategies
    from collsim.kinds.optical_ring.assign import first_fit
    calls = []

    def spy(start, length, n):
        calls.append(len(start))
        return first_fit(start, length, n)

    s = collsim.build("wrht", "paper", "allreduce", "1MiB", nodes=1024, strategy=spy)
    collsim.verify(s)
    # one call per (gather or broadcast round, direction) whose arcs overlap: 2 rounds x 2 directions;
    # 1024 = 7 groups of 129 (64 members per side) + one of 121 (60 per side): 7*64 + 60 = 508 arcs
    assert calls == [508, 508, 508, 508]
