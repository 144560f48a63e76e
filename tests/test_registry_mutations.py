"""Mutation tests over the whole registry: every algorithm's schedules can be caught breaking."""

from __future__ import annotations

import numpy as np
import pytest

from collsim import build, verify
from collsim.algorithms import REGISTRY
from collsim.core import errors as E
from collsim.systems import load_system
from collsim.kinds.optical_ring import OpticalRing
from collsim.core.collective import collective_type

from test_mutations import take


def _instances():
    for name, spec in sorted(REGISTRY.items()):
        for coll in spec.collectives:
            if "optical-ring" in spec.systems:
                yield name, coll, OpticalRing(nodes=12, wavelengths=4)
            elif "optical-torus" in spec.systems:
                yield name, coll, load_system("optical-torus", rows=3, cols=4, wavelengths=4)
            elif "mlfm" in spec.systems:
                yield name, coll, load_system("mlfm", d=3, selection=(2, 3, 2))
            elif "ocs" in spec.systems:  # an optical circuit switch with 2 ports and its phases
                yield name, coll, load_system("ocs", nodes=16, ports=2)
            elif "hierarchical" in spec.systems:  # boxes of 4 behind a switch, on rings of 4
                yield name, coll, load_system("hierarchical", dims="switch:4,ring:4")
            elif name == "mesh":
                yield name, coll, load_system("torus", dims=(4, 4))
            elif name == "rotated-dims":     # grids only; sides that differ
                yield name, coll, load_system("mesh", dims=(3, 4))
            else:
                yield name, coll, load_system("hypercube", nodes=16)


CASES = list(_instances())


def test_every_instance_is_one_its_algorithm_supports():
    unsupported = [(name, coll, system.topology) for name, coll, system in CASES
                   if REGISTRY[name].requires is not None and REGISTRY[name].requires(system, collective_type(coll))]
    assert not unsupported and len(CASES) == sum(len(s.collectives) for s in REGISTRY.values()), unsupported


@pytest.mark.parametrize("name,collective,system", CASES, ids=[f"{a}-{c}" for a, c, _ in CASES])
def test_dropping_the_last_step_breaks_the_postcondition(name, collective, system):
    s = build(name, system, collective, 4096)  # every instance of CASES is one its algorithm supports
    verify(s)
    keep = np.flatnonzero(s.step < s.num_steps - 1)
    with pytest.raises(E.PostconditionError):
        verify(take(s, keep))


@pytest.mark.parametrize("name,collective,system", CASES, ids=[f"{a}-{c}" for a, c, _ in CASES])
def test_data_flow_mutations_are_caught(name, collective, system):
    """Send a chunk the sender never had; or send from a node holding nothing; or reduce twice."""
    s = build(name, system, collective, 4096)
    c = s.collective
    first = np.flatnonzero(s.step == 0)
    holds = {v: set(c.pre_chunk[c.pre_node == v].tolist()) for v in range(c.nodes)}
    for t in first:  # 1. a step-0 sender given a chunk it does not hold
        lacking = [ch for ch in range(c.chunks) if ch not in holds[int(s.src[t])]]
        if lacking:
            idx = s.chunk_idx.copy()
            idx[s.chunk_ptr[t]] = lacking[0]
            with pytest.raises(E.MissingDataError) as info:
                verify(s.replace(chunk_idx=idx), resources=False)
            assert info.value.step == 0 and info.value.transfer == int(t)
            return
    empty = [v for v in range(c.nodes) if not holds[v]]
    if empty:  # 2. the first transfer sent by a node that holds nothing (broadcast: a non-root)
        src = s.src.copy()
        src[first[0]] = empty[0] if empty[0] != s.dst[first[0]] else empty[-1]
        with pytest.raises(E.MissingDataError):
            verify(s.replace(src=src), resources=False)
        return
    # 3. every node holds every chunk (reductions): repeating a reduction counts twice
    t = int(np.flatnonzero(s.reduce)[0])
    rows = np.insert(np.arange(len(s)), t + 1, t)
    with pytest.raises(E.DoubleCountError):
        verify(take(s, rows), resources=False)
