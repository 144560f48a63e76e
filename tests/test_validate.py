"""One validation module: numpy integers are integers everywhere, bools/floats/strings never are."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import collsim
from collsim.core.collective import make_collective
from collsim.core.errors import InputError
from collsim.core.system import system_from_description
from collsim.core.validate import (integer, is_integer, is_number, node_count, number, optional_integer,
                                   optional_number, positive_integer)
from collsim.kinds.optical_ring import OpticalRing
from collsim.kinds.network.custom import CustomNetwork
from collsim.kinds.network.fat_tree import FatTree
from collsim.kinds.network.hypercube import Hypercube
from collsim.kinds.network.mesh_torus import Mesh, Torus
from collsim.kinds.network.mlfm import MLFM
from conftest import raises_naming

NUMPY_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def _plain(system) -> dict:
    """describe() must hold only plain Python values (it is written to JSON)."""
    desc = system.describe()
    json.dumps(desc)

    def walk(key, value):
        assert not isinstance(value, np.generic), f"{key} holds a {type(value).__name__}"
        if isinstance(value, (tuple, list)):
            for v in value:
                walk(key, v)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(f"{key}.{k}", v)

    for key, value in desc.items():
        walk(key, value)
    return desc


# --- numpy integers are accepted wherever a Python int is -------------------------------------
def test_optical_ring_takes_numpy_integers_and_stores_ints():
    ring = OpticalRing(nodes=np.int64(8), wavelengths=np.int32(4), fibers=np.uint8(2), max_tx_channels=np.int16(3))
    assert ring == OpticalRing(nodes=8, wavelengths=4, fibers=2, max_tx_channels=3)
    for name in ("nodes", "wavelengths", "fibers", "max_tx_channels"):
        assert type(getattr(ring, name)) is int, name
    desc = _plain(ring)
    assert system_from_description(json.loads(json.dumps(desc))) == ring
    assert collsim.verify(collsim.build("ring", ring, "allgather", 64)).steps >= 1


def test_grids_hypercube_fat_tree_custom_take_numpy_integers():
    t = Torus(nodes=np.int64(16), dims=(np.int64(4), np.int32(4)))
    assert t == Torus.from_dims((4, 4)) and type(t.nodes) is int and t.dims == (4, 4)
    assert Torus.from_dims([np.uint8(4), np.int64(2)]).dims == (4, 2)
    assert Mesh.from_options(nodes=np.int64(64), ndim=np.int64(3)).dims == (4, 4, 4)
    assert Hypercube.from_options(dimension=np.int64(3)).nodes == 8
    ft = FatTree(nodes=np.int64(16), k=np.int64(4), levels=np.int64(3))
    assert ft == FatTree(nodes=16, k=4, levels=3) and type(ft.k) is int and type(ft.levels) is int
    cn = CustomNetwork(nodes=np.int64(2), switches=np.int64(1), link=((np.int64(0), 2), (1, np.int32(2))))
    assert type(cn.switches) is int and cn.link[0][:2] == (0, 2)
    for system in (t, ft, cn, Hypercube(nodes=np.int64(8))):
        _plain(system)


def test_mlfm_takes_numpy_integers():
    net = MLFM.from_options(d=np.int64(3), last_layer_servers=np.int32(2), selection=(np.int64(2), 4, np.int8(3)))
    assert net == MLFM.from_options(d=3, last_layer_servers=2, selection=(2, 4, 3))
    assert type(net.d) is int and type(net.last_layer_servers) is int and net.selection == (2, 4, 3)
    assert MLFM(nodes=np.int64(12), d=np.int64(2)).nodes == 12
    assert MLFM.from_options(radix=np.int64(6)).d == 3
    _plain(net)


@pytest.mark.parametrize("t", NUMPY_INTS)
def test_make_collective_takes_numpy_nodes(t):
    c = make_collective("allgather", t(4), 1024)
    assert c.nodes == 4 and type(c.nodes) is int


def test_algorithm_parameters_take_numpy_integers():
    h = Hypercube(nodes=8)
    s = collsim.build("recursive-doubling", h, "broadcast", 64, root=np.int64(3))
    assert s.params["root"] == 3 and type(s.params["root"]) is int
    assert collsim.build("ring", OpticalRing(nodes=8), "broadcast", 64, chunks=np.int32(2)).params["chunks"] == 2
    assert collsim.build("wrht", OpticalRing(nodes=16, wavelengths=2), "allgather", 64, m=np.int64(3)).params["m"] == 3


# --- bools, floats and strings are refused, with one clear message -----------------------------
@pytest.mark.parametrize("bad", [True, False, 8.0, 2.5, "8", None, [8], np.float64(8.0)])
def test_integer_refuses_non_integers(bad):
    with raises_naming(InputError, "k", "integer", ">= 1", repr(bad)) as info:   # the name, the rule, the value
        integer("k", bad, lo=1)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("make,facts", [   # what each message names: the parameter, and the rule it breaks
    (lambda v: OpticalRing(nodes=8, wavelengths=v), ["wavelengths", "positive integer"]),
    (lambda v: OpticalRing(nodes=v), ["nodes", ">= 2"]),
    (lambda v: Torus(nodes=16, dims=(4, v)), ["dims", "integers"]),
    (lambda v: MLFM.from_options(d=v), ["mlfm", "d", ">= 1"]),
    (lambda v: FatTree(nodes=16, k=v), ["fat-tree", "k", "even", ">= 2"]),
    (lambda v: FatTree(nodes=16, k=4, levels=v), ["fat-tree", "levels", "2..3"]),
    (lambda v: Hypercube.from_options(dimension=v), ["hypercube", "dimension", "1..40"]),
    (lambda v: CustomNetwork(nodes=2, switches=v, link=((0, 1),)), ["custom network", "switches", "integer"]),
    (lambda v: make_collective("allgather", v, 64), ["collective", "2 nodes"]),
])
@pytest.mark.parametrize("bad", [True, 4.0, "4"])
def test_systems_refuse_bools_floats_and_strings(make, facts, bad):
    with raises_naming(InputError, *facts) as info:
        make(bad)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("bad", [True, "1e-6", float("nan"), float("inf"), -1.0])
def test_network_rates_refuse_bools_strings_nan_inf_and_negatives(bad):
    with raises_naming(InputError, "link_latency_s", "non-negative"):
        Torus(nodes=4, dims=(2, 2), link_latency_s=bad)


def test_numpy_floats_are_numbers_and_stored_plain():
    t = Torus(nodes=4, dims=(2, 2), link_bandwidth_bytes_per_s=np.float32(1e9), link_latency_s=np.int64(0))
    assert type(t.link_bandwidth_bytes_per_s) is float and t.link_latency_s == 0.0
    ring = OpticalRing(nodes=8, clock_hz=np.float32(2e9), mrr_reconfig_s=np.float16(0))
    assert type(ring.clock_hz) is float and ring.clock_hz == 2e9
    _plain(t), _plain(ring)


# --- the functions themselves ------------------------------------------------------------------
def test_range_messages():
    # each message names the parameter, the rule it breaks (its range) and the value given
    with raises_naming(InputError, "m", ">= 2", "1"):
        integer("m", np.int64(1), lo=2)
    with raises_naming(InputError, "q", "1..7", "8"):
        integer("q", 8, lo=1, hi=7)
    with raises_naming(InputError, "x", "<= 3", "4"):
        integer("x", 4, hi=3)
    with raises_naming(InputError, "root", "node id", "0..3", "-1"):
        integer("root", -1, lo=0, hi=3, what="a node id")
    with raises_naming(InputError, "chunks", "positive", "0"):
        positive_integer("chunks", 0)
    with raises_naming(InputError, "a ring", "2 nodes", "1"):
        node_count(1, owner="a ring")
    with raises_naming(InputError, "p", "(0, 0.5)", "0.5"):
        number("p", 0.5, lo=0, lo_open=True, hi=0.5, hi_open=True)
    with raises_naming(InputError, "r", "positive", "0"):
        number("r", 0, lo_open=True)
    with raises_naming(InputError, "v", "finite", "inf"):
        number("v", math.inf, lo=None)
    assert number("v", -math.inf, lo=None, finite=False) == -math.inf
    with pytest.raises(InputError, match="must be a number, got nan"):
        number("v", math.nan, lo=None, finite=False)


def test_optional_and_predicates():
    assert optional_integer("k", None) is None and optional_integer("k", np.uint64(5), lo=1) == 5
    assert optional_number("t", None) is None and optional_number("t", np.float32(0.5)) == 0.5
    assert is_integer(np.uint8(1)) and not is_integer(np.bool_(True)) and not is_integer(True)
    assert is_number(np.int8(1)) and is_number(np.float16(1)) and not is_number(False)
    assert not is_number(np.bool_(False)) and not is_number("1") and not is_number(1j)


@given(x=st.integers(), lo_gap=st.one_of(st.none(), st.integers(0, 2**70)),
       hi_gap=st.one_of(st.none(), st.integers(0, 2**70)))
@example(x=2**53 + 1, lo_gap=0, hi_gap=0)
@example(x=-(2**63), lo_gap=None, hi_gap=None)
@example(x=10**40 + 1, lo_gap=1, hi_gap=None)
def test_integer_round_trips_any_int_in_range_exactly(x, lo_gap, hi_gap):
    lo = None if lo_gap is None else x - lo_gap
    hi = None if hi_gap is None else x + hi_gap
    got = integer("x", x, lo=lo, hi=hi)
    assert got == x and type(got) is int
    if -(2**63) <= x < 2**63:
        assert integer("x", np.int64(x), lo=lo, hi=hi) == x
    with pytest.raises(InputError):
        integer("x", float(x), lo=lo, hi=hi)
    if lo is not None:
        with pytest.raises(InputError, match=f"got {lo - 1}$"):
            integer("x", lo - 1, lo=lo, hi=hi)
    if hi is not None:
        with pytest.raises(InputError, match=f"got {hi + 1}$"):
            integer("x", hi + 1, lo=lo, hi=hi)
