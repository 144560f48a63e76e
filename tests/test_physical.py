"""Physical layer (seed 004 §IV-B, eqs. (4)-(9)): hand-derived values and properties."""

from __future__ import annotations

import dataclasses
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import collsim
from collsim.core.errors import InputError, UnsupportedError
from collsim.kinds.optical_ring.physical import (
    HOPS_CAP,
    PhysicalParams,
    PhysicalReport,
    ber,
    check_schedule,
    insertion_loss_db,
    lightpath_feasible,
    max_feasible_hops,
    params_from_mapping,
    power_feasible,
    required_snr_db,
    snr_db,
)

NEG_INF = float("-inf")
DEFAULT = PhysicalParams()
# Required linear SNR at BER 1e-9 from eq. (9): 4 ln(1 / 2e-9) = 4 * 20.0301 = 80.1206 (19.037 dB).
SNR_LIN_REQ = 4.0 * math.log(5e8)


# ---------------------------------------------------------------- hand-derived values

def test_insertion_loss_by_hand():
    # eq. (5) with L = h + 1 interfaces: P_m + (h+1) P_pass = 1 + (h+1) * 0.32
    assert insertion_loss_db(1) == pytest.approx(1.64)       # 1 + 2 * 0.32
    assert insertion_loss_db(3) == pytest.approx(2.28)       # 1 + 4 * 0.32
    assert insertion_loss_db(0) == pytest.approx(1.32)       # source and destination interfaces only
    np.testing.assert_allclose(insertion_loss_db([1, 3, 10]), [1.64, 2.28, 4.52])  # 1 + 11 * 0.32
    assert isinstance(insertion_loss_db(2), float)
    assert insertion_loss_db(np.array([1, 2])).shape == (2,)


def test_power_budget_by_hand():
    # 0 dBm - 1 dB (P_m) - 1 dB (P_p) - (h+1) * 0.32 >= -20 dBm  <=>  h + 1 <= 56.25  <=>  h <= 55
    assert power_feasible(55) is True and power_feasible(56) is False
    # exact binary values make the boundary itself feasible (eq. (6) is ">="):
    # -2 - (h+1) * 0.25 >= -20  <=>  h + 1 <= 72
    p = PhysicalParams(pass_loss_db_per_node=0.25, crosstalk_db_per_interface=NEG_INF,
                       tx_crosstalk_db=NEG_INF, other_noise_dbm=NEG_INF)
    assert power_feasible(71, p) and not power_feasible(72, p)
    assert max_feasible_hops(p) == 71
    # eq. (6) literally (S_rx = 0 dBm): even 0 hops fail at 0 dBm laser power
    assert not power_feasible(0, PhysicalParams(receiver_sensitivity_dbm=0.0))
    # ... and at 10 dBm: 10 - 2 - (h+1) * 0.32 >= 0  <=>  h + 1 <= 25
    literal = PhysicalParams(laser_power_dbm=10.0, receiver_sensitivity_dbm=0.0)
    assert power_feasible(24, literal) and not power_feasible(25, literal)


def test_snr_by_hand():
    only_rx = PhysicalParams(crosstalk_db_per_interface=-30.0, tx_crosstalk_db=NEG_INF, other_noise_dbm=NEG_INF)
    # P_N / P_S = (h+1) * 1e-3: h = 9 -> 1e-2 -> SNR 20 dB; h = 99 -> 0.1 -> 10 dB
    assert snr_db(9, only_rx) == pytest.approx(20.0)
    assert snr_db(99, only_rx) == pytest.approx(10.0)
    only_tx = PhysicalParams(crosstalk_db_per_interface=NEG_INF, tx_crosstalk_db=-20.0, other_noise_dbm=NEG_INF)
    assert snr_db(1, only_tx) == pytest.approx(20.0) and snr_db(500, only_tx) == pytest.approx(20.0)
    only_po = PhysicalParams(crosstalk_db_per_interface=NEG_INF, tx_crosstalk_db=NEG_INF)
    # P_S = 0 - 1 - 5 * 0.32 = -2.6 dBm, P_O = -39 dBm -> SNR = 36.4 dB
    assert snr_db(4, only_po) == pytest.approx(36.4)
    noiseless = PhysicalParams(crosstalk_db_per_interface=NEG_INF, tx_crosstalk_db=NEG_INF,
                               other_noise_dbm=NEG_INF)
    assert snr_db(7, noiseless) == math.inf and ber(snr_db(7, noiseless)) == 0.0
    # defaults, h = 25: P_S = -1 - 26 * 0.32 = -9.32 dBm
    # P_N/P_S = 26 * 10**-3.5 + 10**-2.5 + 10**((-39 + 9.32) / 10) = 8.2219e-3 + 3.1623e-3 + 1.0765e-3
    rel = 26 * 10**-3.5 + 10**-2.5 + 10**(-2.968)
    assert snr_db(25) == pytest.approx(-10 * math.log10(rel))
    assert 1 / rel > SNR_LIN_REQ > 1 / (27 * 10**-3.5 + 10**-2.5 + 10**(-2.936))   # h = 25 ok, 26 not


def test_ber_reads_snr_as_linear():
    # eq. (9) at SNR_lin = 80: 0.5 e^-20 = 1.0306e-9
    assert ber(10 * math.log10(80)) == pytest.approx(0.5 * math.exp(-20))
    assert ber(0.0) == pytest.approx(0.5 * math.exp(-0.25))
    assert ber(10 * math.log10(SNR_LIN_REQ)) == pytest.approx(1e-9)
    assert ber(math.inf) == 0.0 and ber(-math.inf) == 0.5
    assert required_snr_db(1e-9) == pytest.approx(10 * math.log10(SNR_LIN_REQ))
    assert required_snr_db(1e-9) == pytest.approx(19.037, abs=1e-3)
    np.testing.assert_allclose(ber([10 * math.log10(80), 0.0]), [0.5 * math.exp(-20), 0.5 * math.exp(-0.25)])
    with pytest.raises(InputError):
        ber(math.nan)
    for bad in (0.0, 0.5, 1.0, -1e-9, True):
        with pytest.raises(InputError):
            required_snr_db(bad)


def test_crosstalk_only_threshold_by_hand():
    # (h+1) * 1e-3 <= 1 / 80.1206 = 0.012481  <=>  h + 1 <= 12  <=>  h <= 11
    p = PhysicalParams(pass_loss_db_per_node=0.0, crosstalk_db_per_interface=-30.0,
                       tx_crosstalk_db=NEG_INF, other_noise_dbm=NEG_INF)
    assert max_feasible_hops(p) == 11


# ---------------------------------------------------------------- monotonicity and thresholds

def test_monotone_in_hops():
    h = np.arange(0, 2000)
    loss, snr = insertion_loss_db(h), snr_db(h)
    assert np.all(np.diff(loss) > 0)
    assert np.all(np.diff(snr) < 0)
    assert np.all(np.diff(ber(snr)) >= 0)
    ok = lightpath_feasible(h[1:])
    assert np.all(ok[:-1] >= ok[1:])          # once infeasible, always infeasible


def test_default_threshold():
    assert max_feasible_hops() == 25
    assert lightpath_feasible(25) and not lightpath_feasible(26)
    assert power_feasible(26)                 # at the defaults, crosstalk (BER) binds first
    assert ber(snr_db(25)) < 1e-9 <= ber(snr_db(26))


@pytest.mark.parametrize("changes", [
    {}, {"laser_power_dbm": 10.0}, {"pass_loss_db_per_node": 2.32}, {"pass_loss_db_per_node": 0.05},
    {"crosstalk_db_per_interface": -45.0, "tx_crosstalk_db": -40.0},
    {"receiver_sensitivity_dbm": 0.0, "laser_power_dbm": 10.0}, {"ber_target": 1e-12},
    {"other_noise_dbm": -25.0}, {"modulator_loss_db": 4.0, "extinction_ratio_penalty_db": 2.0},
])
def test_threshold_is_exact(changes):
    p = PhysicalParams(**changes)
    h = max_feasible_hops(p)
    assert h >= 1
    assert lightpath_feasible(h, p) and not lightpath_feasible(h + 1, p)
    assert lightpath_feasible(np.arange(1, h + 1), p).all()


@given(laser=st.floats(-10, 20), pm=st.floats(0, 6), pas=st.floats(0.001, 3), pp=st.floats(0, 3),
       krx=st.floats(-70, -15), ktx=st.floats(-70, -15), po=st.floats(-80, -20), sens=st.floats(-40, 0))
def test_threshold_property(laser, pm, pas, pp, krx, ktx, po, sens):
    p = PhysicalParams(laser, pm, pas, pp, sens, krx, ktx, po)
    h = max_feasible_hops(p)
    assert 0 <= h < HOPS_CAP
    assert not lightpath_feasible(h + 1, p)
    assert h == 0 or lightpath_feasible(h, p)


def test_no_binding_constraint_returns_cap():
    p = PhysicalParams(pass_loss_db_per_node=0.0, crosstalk_db_per_interface=NEG_INF, tx_crosstalk_db=NEG_INF)
    assert max_feasible_hops(p) == HOPS_CAP


def test_tiny_laser_power_makes_everything_infeasible():
    p = PhysicalParams(laser_power_dbm=-30.0)
    assert max_feasible_hops(p) == 0 and not lightpath_feasible(1, p)


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("changes", [
    {"laser_power_dbm": math.nan}, {"laser_power_dbm": math.inf}, {"laser_power_dbm": NEG_INF},
    {"modulator_loss_db": -1.0}, {"pass_loss_db_per_node": -0.01}, {"extinction_ratio_penalty_db": -0.5},
    {"crosstalk_db_per_interface": 3.0}, {"tx_crosstalk_db": 0.5}, {"other_noise_dbm": math.inf},
    {"crosstalk_db_per_interface": math.nan}, {"ber_target": 0.0}, {"ber_target": 0.5},
    {"ber_target": 0.7}, {"ber_target": -1e-9}, {"ber_target": math.nan}, {"laser_power_dbm": "3"},
    {"laser_power_dbm": True}, {"pass_loss_db_per_node": None},
])
def test_params_reject_nonsense(changes):
    with pytest.raises(InputError):
        PhysicalParams(**changes)


def test_params_accept_minus_inf_noise_and_coerce_to_float():
    p = PhysicalParams(crosstalk_db_per_interface=NEG_INF, tx_crosstalk_db=NEG_INF, other_noise_dbm=NEG_INF,
                       receiver_sensitivity_dbm=NEG_INF, laser_power_dbm=3)
    assert isinstance(p.laser_power_dbm, float) and p.laser_power_dbm == 3.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.laser_power_dbm = 5.0   # type: ignore[misc]
    assert hash(p) == hash(PhysicalParams(**dataclasses.asdict(p)))


@pytest.mark.parametrize("hops", [-1, 1.5, math.nan, True, [1, -2], "3"])
def test_hops_reject_nonsense(hops):
    with pytest.raises(InputError):
        insertion_loss_db(hops)


def test_params_from_mapping():
    assert params_from_mapping(None) == DEFAULT
    assert params_from_mapping({}) == DEFAULT
    p = params_from_mapping({"laser_power_dbm": 5, "ber_target": 1e-12})
    assert p.laser_power_dbm == 5.0 and p.ber_target == 1e-12
    assert params_from_mapping(dataclasses.asdict(p)) == p          # round trip
    with pytest.raises(InputError, match="unknown physical parameter.*laser_dbm"):
        params_from_mapping({"laser_dbm": 5})
    with pytest.raises(InputError):
        params_from_mapping({"ber_target": 2})
    with pytest.raises(InputError):
        params_from_mapping([("laser_power_dbm", 5)])


def test_params_from_toml_table():
    text = """
[system]
kind = "optical-ring"
nodes = 64
[system.physical]
laser_power_dbm = 6.0
pass_loss_db_per_node = 0.5
other_noise_dbm = -inf
"""
    p = params_from_mapping(tomllib.loads(text)["system"]["physical"])
    assert p.laser_power_dbm == 6.0 and p.pass_loss_db_per_node == 0.5 and p.other_noise_dbm == NEG_INF


# ---------------------------------------------------------------- schedules

@pytest.fixture(scope="module")
def osm64():
    return collsim.build("osm", "paper", "allgather", "4KiB", nodes=64)


def test_check_real_schedule(osm64):
    r = check_schedule(osm64)
    assert isinstance(r, PhysicalReport)
    assert r.max_hops == int(osm64.hops.max()) == 32                 # N/2 on a bidirectional ring
    assert osm64.hops[r.worst_index] == r.max_hops
    assert r.worst_step == int(osm64.step[r.worst_index])
    assert r.worst_loss_db == pytest.approx(1 + 33 * 0.32)           # 11.56 dB
    assert r.worst_snr_db == pytest.approx(snr_db(32)) and r.worst_ber == pytest.approx(ber(snr_db(32)))
    assert r.power_ok and not r.ber_ok and not r.feasible
    assert r.max_feasible_hops == 25
    assert r.infeasible_lightpaths == int(np.count_nonzero(osm64.hops > 25)) > 0


def test_check_feasible_with_better_devices(osm64):
    p = PhysicalParams(crosstalk_db_per_interface=-50.0, tx_crosstalk_db=-40.0)
    r = check_schedule(osm64, p)
    assert r.feasible and r.power_ok and r.ber_ok and r.infeasible_lightpaths == 0
    assert r.max_feasible_hops >= r.max_hops


def test_check_infeasible_with_tiny_laser(osm64):
    r = check_schedule(osm64, PhysicalParams(laser_power_dbm=-30.0))
    assert not r.power_ok and not r.feasible
    assert r.max_feasible_hops == 0 and r.infeasible_lightpaths == len(osm64)


def test_check_empty_and_electrical(osm64):
    empty = osm64.take([])
    r = check_schedule(empty)
    assert r.feasible and r.max_hops == 0 and r.worst_index is None and math.isnan(r.worst_ber)
    electrical = collsim.build("ring", "mesh", "allgather", 64, nodes=9)
    with pytest.raises(UnsupportedError):
        check_schedule(electrical)


def test_doc_lists_every_parameter():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "physical-layer.md").read_text()
    for f in dataclasses.fields(PhysicalParams):
        assert f"`{f.name}`" in doc, f.name


def test_channel_counts_beyond_the_schedule_columns_are_refused():
    # a schedule stores each transfer's wavelength as int32 and fiber as int16
    from collsim.core.errors import InputError
    from collsim.kinds.optical_ring import OpticalRing
    with pytest.raises(InputError, match=r"wavelengths must be at most 2147483647"):
        OpticalRing(nodes=4, wavelengths=2**62)
    with pytest.raises(InputError, match=r"fibers must be at most 32767"):
        OpticalRing(nodes=4, fibers=2**63)
    assert OpticalRing(nodes=4, wavelengths=2**31 - 1, fibers=2**15 - 1).fibers == 32767
