"""System loading: presets, TOML files, overrides, physical-layer tables, round trips."""

from __future__ import annotations

import json

import pytest

import collsim
from collsim.core.errors import InputError, ScheduleFormatError, UnknownNameError
from collsim.core.serialize import dumps, loads
from collsim.core.system import system_from_description
from collsim.physical import PhysicalParams
from collsim.systems import OpticalRing, load_system


def test_physical_table_in_toml(tmp_path):
    path = tmp_path / "ring.toml"
    path.write_text('[system]\nkind = "optical-ring"\nnodes = 64\n[system.physical]\nlaser_power_dbm = 10\n')
    sysm = load_system(str(path))
    assert isinstance(sysm.physical, PhysicalParams) and sysm.physical.laser_power_dbm == 10
    assert system_from_description(json.loads(json.dumps(sysm.describe()))) == sysm


def test_physical_parameters_change_feasibility(tmp_path):
    weak = OpticalRing(nodes=64)
    strong = OpticalRing(nodes=64, physical={"laser_power_dbm": 10.0, "crosstalk_db_per_interface": -60.0})
    rows_weak, _ = collsim.compare(weak, "allgather", "4KiB", algorithms=["osm", "ring"])
    rows_strong, _ = collsim.compare(strong, "allgather", "4KiB", algorithms=["osm"])
    by = {r.algorithm: r for r in rows_weak}
    assert by["ring"].feasible and not by["osm"].feasible and by["osm"].max_hops == 32
    assert rows_strong[0].feasible and rows_strong[0].max_feasible_hops >= 32


def test_schedule_file_keeps_physical_parameters():
    sysm = OpticalRing(nodes=8, physical={"laser_power_dbm": 3.0})
    s = collsim.build("ring", sysm, "allgather", 100)
    assert loads(dumps(s)).system.physical.laser_power_dbm == 3.0


@pytest.mark.parametrize("bad,exc", [
    ({"physical": {"warp": 1}}, InputError),
    ({"physical": 5}, InputError),
    ({"wavelengths": 0}, InputError),
    ({"fibers": 1.5}, InputError),
    ({"clock_hz": -1.0}, InputError),
    ({"max_rx_channels": 0}, InputError),
])
def test_bad_optical_parameters(bad, exc):
    with pytest.raises(exc):
        OpticalRing(nodes=8, **bad)


def test_unknown_names_and_files(tmp_path):
    with pytest.raises(UnknownNameError):
        load_system("nonesuch")
    (tmp_path / "x.toml").write_text('[system]\nkind = "optical-ring"\nnodes = 8\nwarp = 9\n')
    with pytest.raises(ScheduleFormatError, match="no parameter warp"):
        load_system(str(tmp_path / "x.toml"))
    (tmp_path / "y.toml").write_text('nodes = 8\n')
    with pytest.raises(ScheduleFormatError, match=r"\[system\]"):
        load_system(str(tmp_path / "y.toml"))


def test_overrides_and_network_kinds():
    assert load_system("terarack", nodes=32).nodes == 32
    ring = load_system("ring", nodes=12, link_latency_s=2e-6)
    assert ring.kind == "ring" and ring.name == "ring" and ring.link_latency_s == 2e-6
    with pytest.raises(InputError, match="no parameter wavelengths"):
        load_system("star", wavelengths=4)
