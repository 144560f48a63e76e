"""SimGrid platforms and replay files (collsim.interop.simgrid*, ``collsim export simgrid``)."""

from __future__ import annotations

import dataclasses
import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import collsim
from collsim.core.errors import InputError, UnsupportedError
from collsim.kinds.network.routes import LinkRoutes
from collsim.interop.simgrid import (HOST_FILE, PLATFORM_FILE, XML_HEADER, all_routes, estimate_route_entries,
                                     platform_tree, platform_xml, write_platform)
from collsim.interop.simgrid_replay import (SMPI_CONFIG, parse_replay_output, program_source, replay_files,
                                            run_script, smpirun_command, write_replay)
from collsim.systems import load_system
from collsim.kinds.network.custom import CustomNetwork

SYSTEMS = {
    "ring": lambda: load_system("ring", nodes=6),
    "ring-uni": lambda: load_system("ring", nodes=5, bidirectional=False),
    "line": lambda: load_system("line", nodes=5),
    "star": lambda: load_system("star", nodes=6, startup_s=2e-6),
    "mesh": lambda: load_system("mesh", dims=(3, 2)),
    "torus": lambda: load_system("torus", dims=(3, 3)),
    "hypercube": lambda: load_system("hypercube", nodes=8),
    "fat-tree": lambda: load_system("fat-tree", nodes=16),
    "mlfm": lambda: load_system("mlfm", radix=4),
    "custom": lambda: CustomNetwork(nodes=3, switches=1, link=((0, "s0", 1e9, 5e-7), (1, "s0"), (2, "s0", 2e9, 3e-6))),
}


def _value(text: str, unit: str) -> float:
    assert text.endswith(unit), text
    return float(text[:-len(unit)])


@pytest.mark.parametrize("name", SYSTEMS)
def test_platform_structure_matches_collsim(name):
    net = SYSTEMS[name]()
    data = platform_xml(net)
    assert data.startswith(XML_HEADER) and b'<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">' in data
    root = ET.fromstring(data[len(XML_HEADER):])
    assert root.tag == "platform" and root.get("version") == "4.1"
    (zone,) = root.findall("zone")
    assert zone.get("routing") == "Full"
    hosts = [h.get("id") for h in zone.findall("host")]
    assert hosts == [f"n{i}" for i in range(net.nodes)]
    assert all(h.get("speed").endswith("f") for h in zone.findall("host"))
    lt = net.links
    links = {l.get("id"): l for l in zone.findall("link")}
    startup = links.pop("startup", None)
    assert (startup is not None) == bool(net.startup_s)
    if startup is not None:
        assert startup.get("sharing_policy") == "FATPIPE" and _value(startup.get("latency"), "s") == net.startup_s
    assert list(links) == [f"l{k}" for k in range(len(lt))]  # one per collsim directed link
    for k, link in enumerate(links.values()):
        assert link.get("sharing_policy") is None  # SHARED: each direction is its own link, no SPLITDUPLEX
        assert _value(link.get("bandwidth"), "Bps") == lt.bandwidth_bytes_per_s[k]
        assert _value(link.get("latency"), "s") == lt.latency_s[k]
        assert link.find("prop").get("value") == net.link_name(k)
    assert b"SPLITDUPLEX" not in data and b"direction=" not in data
    routes = zone.findall("route")
    src, dst, ptr, want = all_routes(net)
    assert len(routes) == net.nodes * (net.nodes - 1) == len(src)
    got = {(r.get("src"), r.get("dst")): [c.get("id") for c in r.findall("link_ctn")] for r in routes}
    assert len(got) == len(routes) and all(r.get("symmetrical") == "NO" for r in routes)
    for i in range(len(src)):  # every ordered pair, over exactly collsim's route
        expect = ["startup"] if startup is not None else []
        expect += [f"l{k}" for k in want[ptr[i]:ptr[i + 1]]]
        assert got[(f"n{src[i]}", f"n{dst[i]}")] == expect
    assert estimate_route_entries(net) == len(want) + (len(src) if startup is not None else 0)


def test_bytes_are_deterministic(tmp_path):
    net = load_system("torus", dims=(3, 3))
    a = platform_xml(net)
    assert a == platform_xml(load_system("torus", dims=(3, 3)))
    write_platform(net, tmp_path / "x")
    write_platform(net, tmp_path / "y")
    for f in (PLATFORM_FILE, HOST_FILE):
        assert (tmp_path / "x" / f).read_bytes() == (tmp_path / "y" / f).read_bytes()
    assert (tmp_path / "x" / PLATFORM_FILE).read_bytes() == a
    assert (tmp_path / "x" / HOST_FILE).read_text().split() == [f"n{i}" for i in range(9)]


def test_optical_and_oversized_platforms_are_refused():
    with pytest.raises(UnsupportedError, match="optical"):
        platform_xml(load_system("paper", nodes=8))
    with pytest.raises(InputError, match=r"needs about [\d,]+ route entries"):
        platform_tree(load_system("ring", nodes=64), max_route_entries=1000)


def test_large_estimate_is_close_and_cheap():
    net = load_system("ring", nodes=512)
    est = estimate_route_entries(net)
    exact = 512 * sum(min(d, 512 - d) for d in range(1, 512))
    assert abs(est - exact) / exact < 0.05


def test_replay_files_list_each_ranks_operations_by_step():
    s = collsim.build("binomial", load_system("ring", nodes=8), "broadcast", 4096)
    files = replay_files(s)
    assert len(files) == 8
    seen = []
    for r, data in enumerate(files):
        head, *lines = data.decode().splitlines()
        assert head == f"collsim-replay 1 {r} 8 {len(lines)}"
        steps = [int(l.split()[0]) for l in lines]
        assert steps == sorted(steps)
        for l in lines:
            step, kind, peer, nbytes = l.split()
            seen.append((int(step), r, kind, int(peer), int(nbytes)))
    sends = sorted((st, r, p, b) for st, r, k, p, b in seen if k == "s")
    recvs = sorted((st, p, r, b) for st, r, k, p, b in seen if k == "r")
    want = sorted(zip(s.step.tolist(), s.src.tolist(), s.dst.tolist(), s.size_bytes.tolist()))
    assert sends == recvs == want


def test_replay_refuses_what_smpi_cannot_replay():
    s = collsim.build("ring", load_system("ring", nodes=4), "allgather", 64)
    ccw = s.system.links.index(np.array([0, 3, 2]), np.array([3, 2, 1]))  # 0 -> 1 the long way round
    ptr = np.concatenate([[0], np.cumsum([3] + [1] * (len(s) - 1))])
    other = dataclasses.replace(s, routes=LinkRoutes(route_ptr=ptr, route_links=np.concatenate([ccw, s.route_links[1:]])))
    with pytest.raises(UnsupportedError, match="one route per pair"):
        replay_files(other)
    with pytest.raises(UnsupportedError, match="more than one MPI message"):
        replay_files(collsim.build("ne", load_system("ring", nodes=4), "allgather", "4GiB"))
    with pytest.raises(UnsupportedError, match="not supported on optical-ring"):
        replay_files(collsim.build("ring", "paper", "allgather", 64, nodes=4))


def test_run_files_and_commands(tmp_path):
    s = collsim.build("ne", load_system("ring", nodes=4), "allgather", 64)
    f = write_replay(s, tmp_path)
    assert f.program.read_bytes() == program_source() and b"MPI_Waitall" in program_source()
    script = f.script.read_text()
    assert os.access(f.script, os.X_OK) and script.startswith("#!/bin/sh")
    cmd = smpirun_command(4)
    assert " ".join(cmd) in script and all(f"--cfg={c}" in cmd for c in SMPI_CONFIG)
    assert run_script(4) == f.script.read_bytes()
    for key in ("network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:0", "network/weight-S:0",
                "smpi/simulate-computation:no", "smpi/send-is-detached-thresh:0", "smpi/wtime:0"):
        assert key in SMPI_CONFIG
    with pytest.raises(InputError, match="rank 1"):
        parse_replay_output("collsim-replay rank 0 start_s 0 finish_s 1\n", 2)


# ----------------------------------------------------------------------- the CLI, as users run it

def test_cli_writes_the_platform(run_cli, tmp_path):
    proc = run_cli("export", "simgrid", "--system", "fat-tree", "-n", "16", "--out", "plat", check=True)
    assert "plat/platform.xml" in proc.stdout and proc.stderr == ""
    assert (tmp_path / "plat" / PLATFORM_FILE).read_bytes() == platform_xml(load_system("fat-tree", nodes=16))
    assert (tmp_path / "plat" / HOST_FILE).read_text().split()[0] == "n0"


def test_cli_writes_a_schedule_to_replay(run_cli, tmp_path):
    doc = json.loads(run_cli("export", "simgrid", "--system", "ring", "-n", "8", "--schedule", "ring",
                             "-c", "allreduce", "-s", "1MiB", "--out", "r", "--json", check=True).stdout)
    assert doc["algorithm"] == "ring" and doc["transfers"] == 112 and doc["smpirun"][:3] == ["smpirun", "-np", "8"]
    s = collsim.build("ring", load_system("ring", nodes=8), "allreduce", "1MiB")
    assert doc["collsim_rank_time_s"] == collsim.sim.simulate(s, mode="rank").total_time_s
    files = sorted(p.name for p in (tmp_path / "r" / "ranks").iterdir())
    assert files == [f"rank-{i}.txt" for i in range(8)] and (tmp_path / "r" / "run.sh").exists()
    run_cli("schedule", "ne", "--system", "ring", "-n", "4", "--out", "ne.json", check=True)
    proc = run_cli("export", "simgrid", "--schedule", "ne.json", "--out", "f", check=True)
    assert "ne allgather" in proc.stdout


@pytest.mark.parametrize("args,needle", [
    (["--out", "o"], "optical"),  # the default system, paper, is an optical ring
    (["--system", "ring", "-n", "4", "--out", "/proc/collsim-no/such"], "cannot create"),
    (["--system", "ring", "-n", "4", "--out", "/dev/null"], "cannot create"),  # a file, not a folder
    (["--system", "ring", "-n", "4096", "--out", "o"], "route entries"),
    (["--system", "ring", "-n", "4", "--schedule", "ne", "-s", "4GiB", "--out", "o"], "more than one MPI message"),
    (["--system", "ring", "-n", "4", "--schedule", "nosuch", "--out", "o"], "nosuch"),
])
def test_cli_bad_input_is_one_line_exit_2(run_cli, args, needle):
    proc = run_cli("export", "simgrid", *args)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("collsim: ") and needle in lines[0], \
        proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_cli_out_under_a_file_is_refused(run_cli, tmp_path):
    # A folder that cannot be made (its parent is a file): refused as root too, unlike a read-only folder.
    (tmp_path / "plain").write_text("not a folder")
    proc = run_cli("export", "simgrid", "--system", "ring", "-n", "4", "--out", str(tmp_path / "plain" / "p"))
    assert proc.returncode == 2 and proc.stderr.startswith("collsim: ") and len(proc.stderr.splitlines()) == 1, \
        proc.stderr
    assert "Traceback" not in proc.stderr and (tmp_path / "plain").read_text() == "not a folder"
