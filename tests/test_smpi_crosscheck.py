"""collsim's flow simulator against SimGrid's SMPI on the same platforms and schedules (issue #15).

For each workload the platform and per-rank replay files are exported
(:mod:`collsim.interop.simgrid`, :mod:`collsim.interop.simgrid_replay`), the replay program is
compiled once with ``smpicc`` and run under ``smpirun`` with
:data:`~collsim.interop.simgrid_replay.SMPI_CONFIG`, and every rank's simulated finish time is
compared with ``simulate(mode="rank")`` (and bulk, where every step is symmetric) to 0.1 %.
docs/flow-simulator.md, "Cross-check with SimGrid's SMPI", explains the settings and the table.

Without ``smpicc``/``smpirun`` the tests skip locally and FAIL when ``CI`` is set (.ci/run
installs SimGrid).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import collsim
from collsim.core.collective import make_collective
from collsim.core.schedule import LogicalBuilder
from collsim.interop.simgrid import schedule_pairs, write_platform
from collsim.interop.simgrid_replay import PROGRAM_SOURCE, program_source, run_smpi, write_replay
from collsim.pipeline import realize
from collsim.sim import simulate
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork

TOLERANCE = 1e-3  # 0.1 %
SIZES = [4096, 1 << 20]


def slow_star() -> CustomNetwork:
    """8 hosts on one switch; the switch's links into hosts 3 and 6 take 10 us, all others 1 us."""
    links = []
    for i in range(8):
        links += [(i, "s0", 12.5e9, 1e-6, False), ("s0", i, 12.5e9, 1e-5 if i in (3, 6) else 1e-6, False)]
    return CustomNetwork(nodes=8, switches=1, link=tuple(links))


# (id, algorithm, system, collective, every step symmetric: compare bulk too)
WORKLOADS = [
    ("ne-ring16", "ne", lambda: load_system("ring", nodes=16), "allgather", True),
    ("recursive-doubling-hypercube16", "recursive-doubling", lambda: load_system("hypercube", nodes=16),
     "allgather", True),
    ("pairwise-fattree16", "pairwise",  # latency as a per-message start-up (SimGrid: a FATPIPE link)
     lambda: load_system("fat-tree", nodes=16, link_latency_s=0.0, startup_s=2e-6), "alltoall", True),
    ("ring-allreduce-ring16", "ring", lambda: load_system("ring", nodes=16), "allreduce", True),
    ("binomial-broadcast-ring16", "binomial", lambda: load_system("ring", nodes=16), "broadcast", True),
    ("bruck-alltoall-ring16", "bruck", lambda: load_system("ring", nodes=16), "alltoall", True),  # 4 flows a link
    ("binomial-broadcast-slowstar8", "binomial", slow_star, "broadcast", False),  # rank < bulk
]


@pytest.fixture(scope="module")
def replay_program(tmp_path_factory) -> str:
    missing = [tool for tool in ("smpicc", "smpirun") if shutil.which(tool) is None]
    if missing:
        why = f"{' and '.join(missing)} not found (apt-get install simgrid libsimgrid-dev)"
        if os.environ.get("CI"):
            pytest.fail(f"the SMPI cross-check needs SimGrid under CI: {why}")
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("smpi")
    (folder / PROGRAM_SOURCE).write_bytes(program_source())
    subprocess.run(["smpicc", "-O2", "-o", str(folder / "replay"), str(folder / PROGRAM_SOURCE)], check=True,
                   capture_output=True, timeout=120)
    return str(folder / "replay")


def node_finish_s(s, finish: np.ndarray) -> np.ndarray:
    """Per node: the latest finish of a transfer it sends or receives (0 if none)."""
    out = np.zeros(s.system.nodes)
    np.maximum.at(out, s.src, finish)
    np.maximum.at(out, s.dst, finish)
    return out


def smpi_times(s, folder, program) -> np.ndarray:
    write_platform(s.system, folder, pairs=schedule_pairs(s))  # the routes the export writes with --schedule
    write_replay(s, folder)
    return run_smpi(folder, s.system.nodes, program=program, timeout_s=120)


@pytest.mark.parametrize("size", SIZES, ids=lambda b: f"{b}B")
@pytest.mark.parametrize("wid,algorithm,make,collective,symmetric", WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_collsim_matches_smpi(replay_program, tmp_path, wid, algorithm, make, collective, symmetric, size):
    s = collsim.build(algorithm, make(), collective, size)
    collsim.verify(s)
    smpi = smpi_times(s, tmp_path, replay_program)
    rank = simulate(s, mode="rank")
    assert smpi.max() == pytest.approx(rank.total_time_s, rel=TOLERANCE)
    assert smpi == pytest.approx(node_finish_s(s, rank.transfer_finish_s), rel=TOLERANCE)  # every rank
    bulk = simulate(s).total_time_s
    if symmetric:
        assert smpi.max() == pytest.approx(bulk, rel=TOLERANCE)
    else:  # barriers cost time here; SMPI has none
        assert smpi.max() < bulk * (1 - 10 * TOLERANCE)


def test_known_difference_rtt_weighted_sharing(replay_program, tmp_path):
    """Two flows of unequal latency share a link: SimGrid's CM02 gives the 1-hop flow 3x the rate of
    the 3-hop one (sharing weight = route latency) and starts each flow's bytes after its latency;
    collsim shares equally from the start.  Documented, not neutralised (docs/flow-simulator.md)."""
    line = load_system("line", nodes=4)
    b = LogicalBuilder(make_collective("alltoall", 4, 1 << 20))
    b.add(0, np.array([0, 1]), np.array([3, 2]), np.array([[3], [6]]))
    s = realize(line, b.build())
    smpi = smpi_times(s, tmp_path, replay_program)
    bw, lat, m = 12.5e9, 1e-6, float(1 << 20)
    # SimGrid: 1->2 alone for 2 us (0->3 still in its latency), then 3:1 until 1->2 ends, then 0->3 alone
    short = 3 * lat + (m - 2 * lat * bw) / (0.75 * bw)
    long_ = short + (m - 0.25 * bw * (short - 3 * lat)) / bw
    assert smpi[[0, 1]] == pytest.approx([long_, short], rel=1e-9)
    r = simulate(s, mode="rank", check=False)  # two flows of an all-to-all, not a whole one: not verifiable
    assert r.transfer_finish_s == pytest.approx([3 * lat + 2 * m / bw, lat + 2 * m / bw], rel=1e-12)
    assert smpi[1] < 0.7 * r.transfer_finish_s[1]
