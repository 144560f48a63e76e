"""A schedule as per-rank replay files for SimGrid's SMPI, the replay program, and how to run it.

:func:`write_replay` writes, beside a platform (:mod:`collsim.interop.simgrid`):

* ``ranks/rank-R.txt``: rank ``R``'s operations, ``step s|r peer bytes`` per line, by step
  and then by collsim transfer (header ``collsim-replay 1 R N count``);
* ``replay.c``: the MPI program that replays them (package data, ``simgrid_replay.c``): per
  step it posts every ``MPI_Irecv`` and ``MPI_Isend`` of the step, then ``MPI_Waitall``; no
  barrier, no computation;
* ``run.sh``: the exact ``smpicc`` and ``smpirun`` commands with :data:`SMPI_CONFIG`.

A rank starts its step ``k`` when its own earlier steps are done and a message moves when both
ends have posted it (rendezvous): :func:`collsim.sim.simulate` with ``mode="rank"`` models the
same.  :data:`SMPI_CONFIG` makes SimGrid's network model the max-min flow model collsim uses
(docs/flow-simulator.md, "Cross-check with SimGrid's SMPI").

References
----------
A. Degomme, A. Legrand, G. S. Markomanolis, M. Quinson, M. Stillwell, F. Suter, "Simulating MPI
applications: the SMPI approach", IEEE Trans. Parallel Distrib. Syst. 28(8), 2017.
H. Casanova, A. Giersch, A. Legrand, M. Quinson, F. Suter, "Versatile, scalable, and accurate
simulation of distributed applications and platforms", J. Parallel Distrib. Comput. 74(10), 2014.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..core.errors import InputError, UnsupportedError
from ..core.positions import schedule_position
from ..core.files import atomic_write
from ..core.plugins import require
from ..core.schedule import Schedule
from .simgrid import HOST_FILE, PLATFORM_FILE, _network, ecmp_refusal

REPLAY_DIR = "ranks"
PROGRAM_SOURCE = "replay.c"
RUN_SCRIPT = "run.sh"
MAX_MESSAGE_BYTES = 2**31 - 1  # an MPI count of MPI_BYTE is an int

SMPI_CONFIG: tuple[str, ...] = (
    "network/model:CM02",                 # pure max-min sharing: no SMPI piecewise bandwidth/latency factors
    "network/latency-factor:1",           # (CM02's defaults, stated)
    "network/bandwidth-factor:1",
    "network/weight-S:0",                 # no bandwidth term in the sharing weight (RTT-only weights)
    "network/TCP-gamma:0",                # no TCP window bound gamma / (2 latency) on a flow's rate
    "network/crosstraffic:0",             # no 5 % reverse-path (ACK) traffic on the back route
    "smpi/simulate-computation:no",       # the host's CPU time between MPI calls is not charged
    "smpi/host-speed:1Gf",                # (only used to convert CPU time; none is simulated)
    "smpi/send-is-detached-thresh:0",     # every send is rendezvous: it completes with its transfer
    "smpi/async-small-thresh:0",          # no eager delivery into a permanent receive mailbox
    "smpi/os:0:0:0",                      # no send, receive or isend software overheads
    "smpi/or:0:0:0",
    "smpi/ois:0:0:0",
    "smpi/wtime:0",                       # MPI_Wtime costs no simulated time
    "smpi/display-timing:yes",            # print the total simulated time
)
"""SimGrid 3.32 settings (``--cfg=KEY:VALUE``) under which SMPI times what collsim's flow simulator does."""


def _transfers(schedule: Schedule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    s = schedule
    require(s.system, "smpi-replay", "an SMPI replay")
    net = _network(s.system)
    src, dst, step = (np.asarray(a, np.int64) for a in (s.src, s.dst, s.step))
    size = np.asarray(s.size_bytes, np.int64)
    if (src == dst).any():
        t = int(np.flatnonzero(src == dst)[0])
        raise UnsupportedError(f"{schedule_position(s, t)} goes from node {int(src[t])} to itself; SMPI would use "
                               "its loopback")
    if size.size and int(size.max()) > MAX_MESSAGE_BYTES:
        raise UnsupportedError(f"a transfer carries {int(size.max())} bytes, more than one MPI message of "
                               f"MPI_BYTE can ({MAX_MESSAGE_BYTES})")
    if s.routes.multipath:
        raise ecmp_refusal(net) if net.ecmp else UnsupportedError(
            "the schedule splits transfers over several paths; a SimGrid platform has one route per pair of hosts")
    ptr, links = net.route(src, dst)
    if not (np.array_equal(ptr, s.route_ptr) and np.array_equal(links, s.route_links)):
        bad = np.flatnonzero((np.diff(ptr) != np.diff(s.route_ptr)))
        t = int(bad[0]) if bad.size else 0
        raise UnsupportedError(f"the schedule routes transfers differently from the network's own routes (e.g. "
                               f"{schedule_position(s, t)}); a SimGrid platform has one route per pair of hosts")
    return src, dst, step, size


def replay_files(schedule: Schedule) -> list[bytes]:
    """Each rank's replay file (see the module docstring for the format)."""
    src, dst, step, size = _transfers(schedule)
    n = schedule.system.nodes
    t = np.arange(src.size)
    rank = np.concatenate([src, dst])
    order = np.lexsort((np.concatenate([t, t]), np.concatenate([step, step]), rank))
    kind = np.concatenate([np.full(src.size, "s"), np.full(src.size, "r")])[order]
    peer = np.concatenate([dst, src])[order]
    stp = np.concatenate([step, step])[order]
    nbytes = np.concatenate([size, size])[order]
    rank = rank[order]
    bounds = np.searchsorted(rank, np.arange(n + 1))
    out = []
    for r in range(n):
        lo, hi = bounds[r], bounds[r + 1]
        lines = [f"collsim-replay 1 {r} {n} {hi - lo}"]
        lines += [f"{a} {k} {p} {b}" for a, k, p, b in zip(stp[lo:hi].tolist(), kind[lo:hi].tolist(),
                                                          peer[lo:hi].tolist(), nbytes[lo:hi].tolist())]
        out.append(("\n".join(lines) + "\n").encode())
    return out


def program_source() -> bytes:
    """The replay program's C source (package data ``collsim/interop/simgrid_replay.c``)."""
    return resources.files("collsim.interop").joinpath("simgrid_replay.c").read_bytes()


def smpirun_command(nodes: int, *, program: str = "./replay", platform: str = PLATFORM_FILE,
                    hosts: str = HOST_FILE, replay_dir: str = REPLAY_DIR) -> list[str]:
    """The ``smpirun`` command line of the cross-check."""
    return (["smpirun", "-np", str(int(nodes)), "-platform", platform, "-hostfile", hosts]
            + [f"--cfg={c}" for c in SMPI_CONFIG] + [program, replay_dir])


def run_script(nodes: int) -> bytes:
    """``run.sh``: compile the replay program with ``smpicc`` and run it with :func:`smpirun_command`."""
    template = resources.files("collsim.interop").joinpath("simgrid_run.sh.in").read_text()
    return template.replace("@SMPIRUN@", shlex.join(smpirun_command(nodes))).encode()


@dataclass(frozen=True)
class ReplayFiles:
    """What :func:`write_replay` wrote."""

    replay_dir: Path
    program: Path
    script: Path


def write_replay(schedule: Schedule, out_dir: str | Path) -> ReplayFiles:
    """Write the per-rank replay files, ``replay.c`` and ``run.sh`` into ``out_dir``."""
    files = replay_files(schedule)
    out = Path(out_dir)
    folder = out / REPLAY_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    for r, data in enumerate(files):
        atomic_write(folder / f"rank-{r}.txt", lambda fh, data=data: fh.write(data))
    atomic_write(out / PROGRAM_SOURCE, lambda fh: fh.write(program_source()))
    atomic_write(out / RUN_SCRIPT, lambda fh: fh.write(run_script(schedule.system.nodes)))
    (out / RUN_SCRIPT).chmod(0o755)
    return ReplayFiles(folder, out / PROGRAM_SOURCE, out / RUN_SCRIPT)


_LINE = re.compile(r"^collsim-replay rank (\d+) start_s (\S+) finish_s (\S+)$", re.M)


def parse_replay_output(text: str, nodes: int) -> np.ndarray:
    """Each rank's finish time from the replay program's standard output."""
    out = np.full(nodes, np.nan)
    for m in _LINE.finditer(text):
        r = int(m.group(1))
        if 0 <= r < nodes:
            out[r] = float(m.group(3)) - float(m.group(2))
    if np.isnan(out).any():
        raise InputError(f"the replay printed no time for rank {int(np.flatnonzero(np.isnan(out))[0])}")
    return out


def run_smpi(out_dir: str | Path, nodes: int, *, program: str | Path | None = None,
             timeout_s: float = 600.0) -> np.ndarray:
    """Compile the replay program (unless ``program`` is given) and run it under ``smpirun``."""
    out = Path(out_dir).resolve()
    if program is None:
        program = out / "replay"
        _run(["smpicc", "-O2", "-o", str(program), str(out / PROGRAM_SOURCE)], out, timeout_s)
    text = _run(smpirun_command(nodes, program=str(program)), out, timeout_s)
    return parse_replay_output(text, nodes)


def _run(cmd: list[str], cwd: Path, timeout_s: float) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"{cmd[0]} failed: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise InputError(f"{cmd[0]} exited with {proc.returncode}: {tail}")
    return proc.stdout
