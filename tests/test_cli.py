"""The installed ``collsim`` console script, end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import collsim_exe

pytestmark = pytest.mark.schedule_first(45)  # about 45 s of work: handed out early (tests/conftest.py)

COMMON = {"algorithm", "collective", "system", "nodes", "size_bytes", "rounds", "steps", "time_s", "lower_bound_s",
          "verified", "params", "efficiency", "algbw_bytes_per_s", "busbw_bytes_per_s", "max_hops"}
KEYS = COMMON | {"wavelengths", "wavelengths_used", "paper_time_s", "paper_steps"}   # an optical ring's row


def test_compare_json_has_the_documented_keys(run_cli):
    proc = run_cli("compare", "--nodes", "64", "--json", check=True)
    rows = json.loads(proc.stdout)  # stdout is only the JSON array
    names = [r["algorithm"] for r in rows]
    assert names == sorted(names) and {"ne", "osm", "ring"} <= set(names)
    for r in rows:
        assert KEYS <= set(r)
        assert r["verified"] is True and r["nodes"] == 64 and r["wavelengths"] == 64
        assert r["size_bytes"] == 4 * 1024 * 1024 and r["lower_bound_s"] <= r["time_s"]
    by = {r["algorithm"]: r for r in rows}
    assert by["ring"]["steps"] == 63 and by["ne"]["steps"] == 32 and by["osm"]["steps"] == 8


def test_compare_table_and_options(run_cli):
    # issue #11: fibers are -F (-f is the sweep's step factor), and 32KB is 32000 bytes: 32KiB keeps 32768
    proc = run_cli("compare", "-n", "31", "-w", "4", "-F", "2", "-c", "all-reduce", "-s", "32KiB",
                   "-a", "ring,osm", check=True)
    assert "allreduce of 32KiB" in proc.stdout and "osm" in proc.stdout and "yes" in proc.stdout


def test_compare_skips_inapplicable_algorithms_with_a_note(run_cli):
    proc = run_cli("compare", "-n", "9", "--json", check=True)
    rows = json.loads(proc.stdout)
    ran = {r["algorithm"] for r in rows if r["skipped"] is None}
    assert {"osm", "ring"} <= ran and "ne" not in ran
    # a skipped algorithm is a row too (docs/output.md): "not applicable" is not "not run"
    ne = [r for r in rows if r["algorithm"] == "ne"]
    assert len(ne) == 1 and ne[0]["verified"] is False and "even number of nodes" in ne[0]["skipped"]
    assert ne[0]["nodes"] == 9 and ne[0]["time_s"] is None and set(ne[0]) == set(rows[0])
    assert "skipped: ne does not apply to this instance" in proc.stderr


def test_schedule_then_verify(run_cli, tmp_path):
    run_cli("schedule", "osm", "-n", "16", "-w", "2", "--out", "osm.json", check=True)
    proc = run_cli("verify", "osm.json", check=True)
    assert proc.stdout.startswith("valid:") and "16 steps" in proc.stdout
    summary = json.loads(run_cli("verify", "osm.json", "--json", check=True).stdout)
    assert summary["steps"] == 16 and summary["valid"] is True


@pytest.mark.parametrize("system, says, never", [
    (("--system", "ring", "-n", "4"), ["3 steps (time slots)", "12 transfers"], ["wavelength"]),
    (("--system", "star", "-n", "2"), ["1 step (time slot)", "1 block time,", "2 transfers"], ["wavelength", "1 steps"]),
    (("--system", "hierarchical", "-S", "dims=switch:2,switch:2"), ["3 steps"], ["wavelength"]),
    (("--system", "ocs", "-n", "4"), ["0 reconfigurations"], ["wavelength"]),
    (("--system", "paper", "-n", "4", "-w", "1"), ["1 wavelength,", "1 reconfiguration,"], ["1 wavelengths"]),
])
def test_verify_states_what_the_kind_has_counted_in_words(run_cli, system, says, never):
    """Issue 31: verify said "0 wavelengths" on electrical systems, and "1 wavelengths", "1 steps"."""
    run_cli("schedule", "ring", *system, "-s", "1KiB", "--out", "s.json", check=True)
    line = run_cli("verify", "s.json", check=True).stdout.strip()
    assert line.startswith("valid:") and all(w in line for w in says), line
    assert not any(w in line for w in never), line
    written = run_cli("schedule", "ring", *system, "-s", "1KiB", "--out", "t.json", check=True)
    assert "1 steps" not in written.stdout + written.stderr and "1 transfers" not in written.stdout + written.stderr


def test_verify_reports_a_violation_with_exit_1(run_cli, tmp_path):
    run_cli("schedule", "ring", "-n", "5", "--out", "ring.json", check=True)
    doc = json.loads((tmp_path / "ring.json").read_text())
    doc["steps"][1]["transfers"].pop()  # drop one forward
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    proc = run_cli("verify", "bad.json")
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert "missing data" in proc.stderr or "postcondition" in proc.stderr


def test_verify_names_the_wavelength_conflict(run_cli, tmp_path):
    run_cli("schedule", "osm", "-n", "8", "-w", "8", "--out", "o.json", check=True)
    doc = json.loads((tmp_path / "o.json").read_text())
    trs = doc["steps"][0]["transfers"]
    a = next(t for t in trs if t["src"] == 0 and t["dst"] == 2)
    b = next(t for t in trs if t["src"] == 1 and t["dst"] == 3)
    b["wavelength"] = a["wavelength"]
    (tmp_path / "c.json").write_text(json.dumps(doc))
    proc = run_cli("verify", "c.json")
    assert proc.returncode == 1 and "wavelength conflict" in proc.stderr
    assert "link cw 1->2" in proc.stderr and f"wavelength {a['wavelength']}" in proc.stderr


@pytest.mark.parametrize("args,needle", [
    (("compare", "--nodes", "1"), "at least 2 nodes"),
    # the fixed cap on (node, chunk) pairs became a memory estimate against a limit (issue: core model v2)
    (("compare", "--nodes", "100000"), "memory limit"),
    (("compare", "--nodes", "30000", "-a", "osm"), "memory limit"),
    (("compare", "--wavelengths", "0"), "wavelengths must be a positive integer"),
    (("compare", "--fibers", "-1"), "fibers"),
    (("compare", "--size", "-4MiB"), "invalid size"),
    (("compare", "--size", "lots"), "invalid size"),
    (("compare", "--size", "0"), "invalid size"),
    (("compare", "--algorithms", "bogus"), "unknown algorithm"),
    (("compare", "--collective", "allgossip"), "unknown collective"),
    (("compare", "--system", "nowhere.toml"), "does not exist"),
    (("compare", "--strategy", "random"), "unknown wavelength-assignment strategy"),
    (("compare", "-n", "9", "-a", "ne"), "even number of nodes"),
    (("compare", "--nodes", "ten"), "not a valid integer"),
    (("schedule", "ring", "--out", "x.json", "-p", "chunks"), "key=value"),
    (("schedule", "ne", "--out", "x.json", "-p", "m=3"), "takes no parameter"),
    (("schedule", "ring", "-c", "broadcast", "--out", "x.json", "-p", "chunks=abc"), "chunks must be an integer"),
    (("schedule", "ring", "-c", "broadcast", "--out", "x.json", "-p", "chunks=0"), "positive integer"),
    (("verify", "missing.json"), "cannot read"),
    (("schedule", "ring", "-n", "4", "--out", "no/such/dir/x.json"), "cannot write"),
    (("frobnicate",), "No such command"),
])
def test_bad_input_is_one_clear_line_and_exit_2(run_cli, args, needle):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""


def test_truncated_and_garbage_files_exit_2(run_cli, tmp_path):
    run_cli("schedule", "ring", "-n", "4", "--out", "r.json", check=True)
    text = (tmp_path / "r.json").read_text()
    (tmp_path / "t.json").write_text(text[: len(text) // 2])
    (tmp_path / "g.json").write_bytes(b"\x00\xff\xfe garbage")
    for name in ("t.json", "g.json"):
        proc = run_cli("verify", name)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_bad_input_changes_nothing(run_cli, tmp_path):
    proc = run_cli("schedule", "ring", "-n", "1", "--out", "never.json")
    assert proc.returncode == 2 and not (tmp_path / "never.json").exists()


def test_system_toml_file(run_cli, tmp_path):
    (tmp_path / "mine.toml").write_text('[system]\nkind = "optical-ring"\nnodes = 12\nwavelengths = 3\n')
    rows = json.loads(run_cli("compare", "--system", "mine.toml", "--json", check=True).stdout)
    assert rows[0]["system"] == "mine" and rows[0]["nodes"] == 12 and rows[0]["wavelengths"] == 3
    (tmp_path / "bad.toml").write_text("[system\nnodes=")
    proc = run_cli("compare", "--system", "bad.toml")
    assert proc.returncode == 2 and "not valid TOML" in proc.stderr


def test_algorithms_listing(run_cli):
    rows = json.loads(run_cli("algorithms", "--json", check=True).stdout)
    names = {r["name"] for r in rows}
    assert {"ring", "ne", "osm"} <= names
    assert all(r["reference"] and r["collectives"] and r["systems"] for r in rows)
    assert "osm" in run_cli("algorithms", check=True).stdout


def test_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "collsim", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "compare" in proc.stdout


def test_console_script_is_installed():
    assert collsim_exe()


def test_compare_on_an_electrical_ring(run_cli):
    rows = json.loads(run_cli("compare", "--system", "ring", "-n", "16", "--link-bandwidth", "100Gb/s",
                              "--link-latency", "500ns", "--json", check=True).stdout)
    skipped = [r for r in rows if r["skipped"] is not None]  # mesh, rotated-dims: a ring has no grid dims
    assert [r["algorithm"] for r in skipped] == ["mesh", "rotated-dims"] and skipped[0]["link_latency_s"] == 5e-7
    rows = [r for r in rows if r["skipped"] is None]
    for r in rows:
        assert COMMON <= set(r) and "wavelengths" not in r and r["system"] == "ring"   # its own kind's keys only
        assert r["link_bandwidth_bytes_per_s"] == 12.5e9 and r["link_latency_s"] == 5e-7
        assert r["max_link_load"] >= 1 and r["simulated_time_s"] >= r["alpha_beta_time_s"] * (1 - 1e-9)
        assert r["time_s"] == r["simulated_time_s"] >= r["lower_bound_s"] * (1 - 1e-9)  # the answer
        assert "paper_steps" not in r and "reconfigurations" not in r
    by = {r["algorithm"]: r for r in rows}
    assert {"ring", "ne", "bruck", "recursive-doubling"} <= set(by)
    for name in ("ring", "ne"):  # neighbour-only: uncongested, so simulation equals alpha-beta
        assert by[name]["max_link_load"] == 1 and by[name]["simulated_time_s"] == pytest.approx(
            by[name]["alpha_beta_time_s"])
    assert by["bruck"]["max_link_load"] > 1 and by["bruck"]["simulated_time_s"] > by["bruck"]["alpha_beta_time_s"]


def test_link_units_are_decimal_and_sizes_binary(run_cli):
    rows = json.loads(run_cli("compare", "--system", "star", "-n", "4", "--link-bandwidth", "1GB/s",
                              "-s", "1MiB", "-a", "ring", "--json", check=True).stdout)
    assert rows[0]["link_bandwidth_bytes_per_s"] == 1e9 and rows[0]["size_bytes"] == 1048576


def test_topology_command(run_cli):
    info = json.loads(run_cli("topology", "star", "-n", "6", "--json", check=True).stdout)
    assert (info["nodes"], info["switches"], info["links"], info["switch_radix"], info["diameter"]) == (6, 1, 12, 6, 2)
    optical = json.loads(run_cli("topology", "terarack", "--json", check=True).stdout)
    assert optical["fibers_per_direction"] == 2 and optical["diameter"] == 512
    assert "diameter" in run_cli("topology", "ring", "-n", "8", check=True).stdout


@pytest.mark.parametrize("args,needle", [
    (("compare", "--system", "ring", "--link-bandwidth", "fast"), "invalid bandwidth"),
    (("compare", "--system", "ring", "--link-latency", "-1us"), "invalid time"),
    (("compare", "--system", "ring", "-w", "4"), "no parameter wavelengths"),
    (("topology", "moon"), "unknown system"),
])
def test_bad_electrical_input(run_cli, args, needle):
    proc = run_cli(*args)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr


def test_simulate_command(run_cli, tmp_path):
    out = run_cli("simulate", "ne", "--system", "ring", "-n", "16", "-s", "64KiB", check=True).stdout
    assert "simulated" in out and "max link load 1" in out
    data = json.loads(run_cli("simulate", "ring", "--system", "line", "-n", "8", "--mode", "dataflow",
                              "--json", check=True).stdout)
    assert data["mode"] == "dataflow" and data["steps"] == 7 and data["links"]
    run_cli("schedule", "ring", "--system", "star", "-n", "4", "--out", "s.json", check=True)
    assert json.loads(run_cli("simulate", "s.json", "--json", check=True).stdout)["transfers"] == 12
    proc = run_cli("simulate", "osm", "-n", "8")
    assert proc.returncode == 2 and "not supported on optical-ring" in proc.stderr


def test_mlfm_compare_and_topology(run_cli):
    rows = json.loads(run_cli("compare", "--system", "mlfm", "--radix", "6", "--select", "2,4,3",
                              "--collective", "alltoall", "--size", "1MiB", "-a", "mlfm,pairwise",
                              "--json", check=True).stdout)
    by = {r["algorithm"]: r for r in rows}
    assert by["mlfm"]["max_link_load"] == 1 and by["pairwise"]["max_link_load"] > 1
    assert by["mlfm"]["per_node_throughput_bytes_per_s"] > by["pairwise"]["per_node_throughput_bytes_per_s"]
    assert COMMON <= set(by["mlfm"]) and not KEYS - COMMON & set(by["mlfm"]) and by["mlfm"]["nodes"] == 24
    info = json.loads(run_cli("topology", "mlfm", "--radix", "36", "--json", check=True).stdout)
    assert info["machine_servers"] == 6156
    assert "648" in json.dumps(info["fat_tree_comparison"])


def test_mlfm_bad_selection_is_one_line(run_cli):
    proc = run_cli("compare", "--system", "mlfm", "--radix", "6", "--select", "1,3,3", "-c", "alltoall")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "m <= l-1" in proc.stderr


def test_compare_passes_algorithm_parameters(run_cli):
    rows = json.loads(run_cli("compare", "-n", "256", "-a", "optree,wrht,ring", "-p", "radices=4,4,4,4",
                              "-p", "m=33", "--json", check=True).stdout)
    by = {r["algorithm"]: r for r in rows}
    assert by["optree"]["params"]["radices"] == [4, 4, 4, 4] and by["optree"]["params"]["k"] == 4
    assert by["wrht"]["params"]["m"] == 33 and "m" not in by["ring"]["params"]
    proc = run_cli("compare", "-a", "ring", "-p", "m=3")
    assert proc.returncode == 2 and "takes parameter" in proc.stderr


def test_simulate_reads_standard_input_and_the_api_takes_paths(run_cli, tmp_path):
    import collsim
    text = run_cli("schedule", "ring", "--system", "ring", "-n", "8", "-s", "1KiB", "--out", "-", check=True).stdout
    proc = subprocess.run([collsim_exe(), "simulate", "-", "--json"], input=text, capture_output=True, text=True)
    assert proc.returncode == 0 and json.loads(proc.stdout)["algorithm"] == "ring"
    path = tmp_path / "r.json"
    path.write_text(text)
    assert collsim.simulate(str(path)).total_time_s == json.loads(proc.stdout)["total_time_s"]


def test_parameters_an_algorithm_would_ignore_are_refused(run_cli):
    import collsim
    proc = run_cli("compare", "--system", "ring", "-n", "8", "-a", "ring", "-p", "chunks=4", "-s", "1KiB")
    assert proc.returncode == 2 and "chunks=4 pipelines broadcast and reduce" in proc.stderr
    rows, _ = collsim.compare("ring", "broadcast", "1KiB", nodes=8, algorithms="ring", params={"chunks": 4})
    assert rows[0].params["chunks"] == 4


def test_compare_names_what_does_not_apply_in_one_line_and_every_failure_in_full(run_cli):
    """Issue 31: every network compare printed one to five "skipped: ..." notes for algorithms that do not
    apply.  They are one line now (--explain gives each reason); one that failed keeps its full note."""
    import collsim
    rows, skipped = collsim.compare("ring", "allgather", "1KiB", nodes=7)
    assert {s.algorithm for s in skipped} == {"mesh", "ne", "recursive-doubling", "rotated-dims"} \
        and not any(s.failed for s in skipped)
    _, on_ocs = collsim.compare("ocs", "allgather", "1KiB", nodes=8)
    # synth-trees plans on one circuit configuration; the matching would use any circuit in any step
    assert {(s.algorithm, s.failed) for s in on_ocs} == {("mesh", False), ("rotated-dims", False), ("synth-matching", False)}
    _, on_ocs = collsim.compare("ocs", "alltoall", "1KiB", nodes=8)
    # the all-to-all synthesizer plans on more circuits than one port allows: it fails when built
    assert {(s.algorithm, s.failed) for s in on_ocs} == {("mesh", False), ("synth-alltoall", True)}   # rotated-dims: no alltoall
    proc = run_cli("compare", "--system", "ring", "-n", "7", "-s", "1KiB", check=True)
    notes = [line for line in proc.stderr.splitlines() if line.startswith("skipped:")]
    assert len(notes) == 1 and all(n in notes[0] for n in ("mesh", "ne", "recursive-doubling", "--explain")), notes
    assert "even number" not in proc.stderr
    explained = run_cli("compare", "--system", "ring", "-n", "7", "-s", "1KiB", "--explain", check=True).stderr
    assert "ne cannot build allgather here: needs an even number of nodes, got 7" in explained
    rows = json.loads(run_cli("compare", "--system", "ring", "-n", "7", "-s", "1KiB", "--json", check=True).stdout)
    assert {r["algorithm"]: r["skipped"] for r in rows if r["skipped"]}.keys() == {"mesh", "ne", "recursive-doubling",
                                                                                 "rotated-dims"}
    ocs = run_cli("compare", "--system", "ocs", "-n", "8", "-c", "alltoall", "-s", "1KiB", check=True).stderr
    notes = [line for line in ocs.splitlines() if line.startswith("skipped:")]
    assert len(notes) == 2 and "mesh does not apply" in notes[0], notes
    assert notes[1].split()[1] == "synth-alltoall" and "port" in notes[1], notes
    assert "failed on this instance: " in notes[1], notes
