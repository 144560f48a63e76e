"""System loading: presets, TOML files, overrides, physical-layer tables, round trips."""

from __future__ import annotations

import json

import pytest

import collsim
from collsim.core.errors import InputError, ScheduleFormatError, UnknownNameError
from collsim.core.serialize import dumps, loads
from collsim.core.system import system_from_description
from collsim.kinds.optical_ring.physical import PhysicalParams
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing


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
    assert ring.topology == "ring" and ring.name == "ring" and ring.link_latency_s == 2e-6
    with pytest.raises(InputError, match="no parameter wavelengths"):
        load_system("star", wavelengths=4)


# -- issue 21: one unit rule for every size, bandwidth and time field of every system TOML ---------------

_UNIT_TEXT = {"_bytes_per_s": ("100Gb/s", 12.5e9), "_bits_per_s": ("40Gb/s", 40e9), "_bytes": ("1KiB", 1024),
              "_s": ("500ns", 5e-7)}
_LINKS = '[[system.link]]\na = 0\nb = "s0"\n[[system.link]]\na = 1\nb = "s0"\n'


def _unit_fields(kind: str) -> list[tuple[str, str, float]]:
    from collsim.core.system import system_kind
    from collsim.systems import kind_parameters
    out = []
    for name in kind_parameters(system_kind(kind)):
        for suffix, (text, value) in _UNIT_TEXT.items():
            if name.endswith(suffix):
                out.append((name, text, value))
                break
    return out


@pytest.mark.parametrize("kind", ["custom", "fat-tree", "hypercube", "line", "mesh", "mlfm", "optical-ring",
                                  "optical-torus", "ring", "star", "torus"])
def test_every_unit_field_of_a_kinds_toml_reads_units(tmp_path, kind):
    """``link_bandwidth_bytes_per_s = "100Gb/s"`` in a built-in kind's TOML was refused ("must be a positive
    number") while the CLI, sweeps and custom networks took it: every such field goes through the CLI's parser."""
    fields = _unit_fields(kind)
    assert fields, kind
    lines = "".join(f'{name} = "{text}"\n' for name, text, _ in fields)
    path = tmp_path / "sys.toml"
    custom = "nodes = 2\nswitches = 1\n" if kind == "custom" else ""
    path.write_text(f'[system]\nkind = "{kind}"\n{custom}{lines}' + (_LINKS if kind == "custom" else ""))
    sysm = load_system(str(path))
    for name, _, value in fields:
        assert getattr(sysm, name) == pytest.approx(value), name


def test_presets_and_overrides_read_units():
    assert load_system("paper", wavelength_rate_bits_per_s="40Gb/s", mrr_reconfig_s="25us",
                       flit_bytes="32B", packet_bytes="128B") == load_system("paper")
    assert load_system(load_system("ring"), link_bandwidth_bytes_per_s="100Gb/s").link_bandwidth_bytes_per_s == 12.5e9
    with pytest.raises(InputError, match="link_bandwidth_bytes_per_s: invalid bandwidth '100gb/s'.*did you mean"):
        load_system("ring", link_bandwidth_bytes_per_s="100gb/s")
