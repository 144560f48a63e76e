"""WdmDevice: the optical ring's and the optical torus's device fields, written once, in the order files rely on.

System descriptions, ``describe()``, JSON and TOML round trips, ``repr`` and schedule files list a
system's fields in dataclass order; the device fields moved into a shared base must keep it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from collsim.core.errors import InputError
from collsim.kinds.optical_ring.device import WdmDevice
from collsim.kinds.optical_ring.physical import PhysicalParams
from collsim.kinds.optical_ring.system import OpticalRing
from collsim.kinds.optical_torus.system import OpticalTorus

DEVICE = ["wavelengths", "fibers", "wavelength_rate_bits_per_s", "mrr_reconfig_s", "slot_latency_s",
          "oeo_cycles_per_flit", "clock_hz", "flit_bytes", "packet_bytes", "max_tx_channels", "max_rx_channels",
          "physical"]
DEFAULTS = [64, 1, 40e9, 25e-6, 0.0, 1.0, 1e9, 32, 128, None, None, None]


def test_field_order_and_defaults():
    assert [f.name for f in dataclasses.fields(WdmDevice)] == DEVICE
    assert [f.name for f in dataclasses.fields(OpticalRing)] == ["nodes", "name", *DEVICE]
    assert [f.name for f in dataclasses.fields(OpticalTorus)] == ["nodes", "name", "rows", "cols",
                                                                 "shared_transceivers", *DEVICE]
    for cls, head in ((OpticalRing, [dataclasses.MISSING, "custom"]), (OpticalTorus, [None, "custom", 32, 32, True])):
        assert [f.default for f in dataclasses.fields(cls)] == head + DEFAULTS
    assert list(OpticalRing(nodes=4).describe()) == ["kind", "nodes", "name", *DEVICE]
    assert repr(OpticalTorus(rows=2, cols=3)).startswith(
        "OpticalTorus(nodes=6, name='custom', rows=2, cols=3, shared_transceivers=True, wavelengths=64, fibers=1,")


@pytest.mark.parametrize("bad, message", [
    (dict(wavelengths=0), "wavelengths must be a positive integer, got 0"),
    (dict(fibers=2**15), "fibers must be at most 32767 (collsim's schedule columns), got 32768"),
    (dict(slot_latency_s="soon"), "slot_latency_s must be a non-negative time (2us, 500ns, seconds), got 'soon'"),
    (dict(clock_hz=0), "clock_hz must be a positive number, got 0"),
    (dict(physical=3), "physical must be a table of parameters, got 3"),
])
def test_ring_and_torus_share_the_device_checks(bad, message):
    for build in (WdmDevice, lambda **kw: OpticalRing(nodes=4, **kw), lambda **kw: OpticalTorus(rows=2, cols=2, **kw)):
        with pytest.raises(InputError) as err:
            build(**bad)
        assert str(err.value) == message


def test_system_checks_run_before_the_device_checks():
    with pytest.raises(InputError, match="name must be a string"):
        OpticalRing(nodes=4, name=3, wavelengths=0)
    with pytest.raises(InputError, match="optical-torus: rows must be"):
        OpticalTorus(rows=0, wavelengths=0)


def test_device_fields_are_normalised_alike():
    kw = dict(wavelengths=np.int64(4), clock_hz=np.float32(5e8), slot_latency_s="2us", physical={"ber_target": 1e-9})
    ring, torus = OpticalRing(nodes=4, **kw), OpticalTorus(rows=2, cols=2, **kw)
    for f in DEVICE:
        assert getattr(ring, f) == getattr(torus, f) and type(getattr(ring, f)) is type(getattr(torus, f)), f
    assert type(ring.wavelengths) is int and ring.slot_latency_s == 2e-6 and isinstance(ring.physical, PhysicalParams)
    assert torus.row_ring.physical_params() == torus.physical_params() == ring.physical_params()
    assert torus.transfer_time_s(np.array([4096])).tolist() == ring.transfer_time_s(np.array([4096])).tolist()
