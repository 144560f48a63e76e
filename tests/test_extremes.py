"""Extreme physical parameters: refused up front in one line, or computed without overflow (issue 31, item 3).

``compare --system ocs -S port_bandwidth_bytes_per_s=1e308`` used to print numpy overflow warnings, then a
false cause ("the end nodes are not strongly connected") and abort the whole comparison.  Now every kind
refuses a rate outside [1e-30, 1e30] per second, or a duration above 1e30 s, naming the parameter and
the range (``collsim.core.validate.physical``); inside the range nothing overflows, and one algorithm's
failure is one skipped row with its own reason.
"""

from __future__ import annotations

import json
import warnings

import pytest

import collsim
from conftest import names
from collsim.core import errors as E
from collsim.core.validate import MAX_PHYSICAL, MIN_RATE
from collsim.kinds.network.custom import CustomNetwork


def _one_line_refusal(proc, *names: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.mark.parametrize("args,names", [
    (["--system", "ocs", "-S", "port_bandwidth_bytes_per_s=1e308", "-c", "allgather"], ["port_bandwidth_bytes_per_s", "1e+30"]),
    (["--system", "ocs", "-S", "port_bandwidth_bytes_per_s=1e-308"], ["port_bandwidth_bytes_per_s", "1e-30"]),
    (["--system", "ocs", "-S", "reconfiguration_s=1e308"], ["reconfiguration_s", "1e+30"]),
    (["--system", "ring", "-n", "6", "-S", "link_latency_s=1e300"], ["link_latency_s", "1e+30"]),
    (["--system", "torus", "-S", "dims=3,3", "-S", "link_bandwidth_bytes_per_s=1e308", "-c", "alltoall"],
     ["link_bandwidth_bytes_per_s", "1e+30"]),
    (["--system", "ring", "-n", "6", "-S", "startup_s=1e308", "-c", "allreduce"], ["startup_s", "1e+30"]),
    (["--system", "paper", "-n", "8", "-S", "mrr_reconfig_s=1e308"], ["mrr_reconfig_s", "1e+30"]),
    (["--system", "paper", "-n", "8", "-S", "wavelength_rate_bits_per_s=1e308"], ["wavelength_rate_bits_per_s"]),
    (["--system", "hierarchical", "-n", "8", "-S", "dims=switch:4:1e299,switch:2"], ["dimension", "bandwidth"]),
])
def test_meaningless_values_are_refused_in_one_line_naming_them(run_cli, args, names):
    _one_line_refusal(run_cli("compare", *args, "-s", "1KiB"), *names)


def test_a_custom_links_rate_is_refused_naming_the_link(run_cli, tmp_path):
    (tmp_path / "net.toml").write_text('[system]\nkind = "custom"\nnodes = 2\n\n[[system.link]]\na = 0\nb = 1\n'
                                       'bandwidth = 1e308\n')
    _one_line_refusal(run_cli("compare", "--system", str(tmp_path / "net.toml"), "-s", "1KiB"), "custom link 0",
                      "bandwidth")


def test_the_range_limits_themselves_run_without_overflow(run_cli):
    for value in (f"{MAX_PHYSICAL:g}", f"{MIN_RATE:g}"):
        proc = run_cli("compare", "--system", "ocs", "-n", "6", "-S", f"port_bandwidth_bytes_per_s={value}", "-c",
                       "allgather", "-s", "1KiB", "--json")
        assert proc.returncode == 0 and "Warning" not in proc.stderr, proc.stderr
        rows = [r for r in json.loads(proc.stdout) if r["skipped"] is None]
        assert rows and all(r["verified"] and r["lower_bound_s"] * (1 - 1e-9) <= r["time_s"] < float("inf")
                            for r in rows)
        assert not any("strongly connected" in (r["skipped"] or "") for r in json.loads(proc.stdout))


def _hetero(tmp_path) -> str:
    """Six hosts on a switch, one host's link at the slowest rate collsim takes and the others at the fastest."""
    lines = ["[system]", 'kind = "custom"', "nodes = 6", "switches = 1"]
    for a, bw in ((0, MAX_PHYSICAL), (1, MIN_RATE), (2, MAX_PHYSICAL), (3, 1.0), (4, MAX_PHYSICAL), (5, MAX_PHYSICAL)):
        lines += ["", "[[system.link]]", f"a = {a}", "b = 6", f"bandwidth = {bw!r}"]
    (tmp_path / "hetero.toml").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "hetero.toml")


def test_one_algorithms_failure_is_one_skipped_row_with_its_true_reason(run_cli, tmp_path):
    # synth-alltoall's LP cannot be solved for rates 60 orders apart: before, it reported that "some end node
    # cannot reach another" (false: all are linked) and aborted the whole comparison
    proc = run_cli("compare", "--system", _hetero(tmp_path), "-c", "alltoall", "-s", "1KiB", "--json")
    assert proc.returncode == 0 and "Warning" not in proc.stderr, proc.stderr
    rows = {r["algorithm"]: r for r in json.loads(proc.stdout)}
    assert rows["synth-alltoall"]["skipped"].startswith("synth-alltoall failed on this instance")
    assert "bandwidths" in rows["synth-alltoall"]["skipped"] and "reach" not in rows["synth-alltoall"]["skipped"]
    assert rows["pairwise"]["verified"] and rows["pairwise"]["skipped"] is None


def test_the_matching_computes_its_capacities_without_overflow():
    # a ring whose links run 60 orders of magnitude apart: a fast link's capacity, 2 x 1e60 pieces per
    # step, was cast to int64 before it was capped at the pieces there are (an invalid cast: garbage)
    ring = CustomNetwork(nodes=4, link=((0, 1, MAX_PHYSICAL), (1, 2, MAX_PHYSICAL), (2, 3, MIN_RATE),
                                        (3, 0, MAX_PHYSICAL)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # a numpy overflow or invalid cast would raise here
        s = collsim.build("synth-matching", ring, "allgather", 1024, chunks=4, capacity=2)
    assert collsim.verify(s, answer=False).transfers == len(s)


def test_a_bug_in_one_algorithm_is_a_skipped_row_and_the_others_run(monkeypatch):
    import collsim.experiments.compare as cmp
    real = cmp._run_one

    def run_one(spec, *args, **kwargs):
        if spec.name == "ne":
            raise ZeroDivisionError("injected")
        return real(spec, *args, **kwargs)
    monkeypatch.setattr(cmp, "_run_one", run_one)
    rows, skipped = collsim.compare("paper", "allgather", "1KiB", nodes=8, algorithms=["ring", "ne"])
    assert [r.algorithm for r in rows] == ["ring"]
    (note,) = skipped
    assert note.algorithm == "ne" and note.failed
    names(str(note), "ne", "ZeroDivisionError", "injected")
    with pytest.raises(ZeroDivisionError):                   # every algorithm failed: the first error stands
        collsim.compare("paper", "allgather", "1KiB", nodes=8, algorithms=["ne"])


def test_the_systems_own_error_is_raised_once_before_any_algorithm(monkeypatch):
    import collsim.experiments.compare as cmp
    ran = []
    monkeypatch.setattr(cmp, "_run_one", lambda spec, *a, **k: ran.append(spec.name))

    def broken(system, collective):
        raise E.UnsupportedError("injected: the bound of this system")
    monkeypatch.setattr(cmp, "lower_bound_s", broken)
    with pytest.raises(E.UnsupportedError, match="bound of this system"):
        collsim.compare("ring", "allgather", "1KiB", nodes=4)
    assert ran == []


def test_the_lp_refuses_a_spread_it_cannot_solve_and_says_so():
    from collsim.kinds.network.mcf import solve_mcf
    spread = CustomNetwork(nodes=3, switches=1, link=((0, 3, 1e20), (1, 3, 1.0), (2, 3, 1e20)))
    with pytest.raises(E.UnsupportedError, match="span more than"):
        solve_mcf(spread)


KINDS = [("ring", {"nodes": 6}), ("star", {"nodes": 5}), ("torus", {"dims": (3, 3)}), ("hypercube", {"nodes": 8}),
         ("fat-tree", {"nodes": 8}), ("mlfm", {"radix": 4}), ("ocs", {"nodes": 6}), ("hierarchical", {"nodes": 8})]


@pytest.mark.parametrize("kind,opts", KINDS, ids=[k for k, _ in KINDS])
def test_both_ends_of_the_range_run_on_every_network_kind_without_a_numpy_warning(kind, opts):
    for rate, latency in ((MAX_PHYSICAL, 0.0), (MIN_RATE, MAX_PHYSICAL)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for coll in ("allgather", "alltoall"):
                rows, skipped = collsim.compare(kind, coll, "1KiB", link_bandwidth_bytes_per_s=rate,
                                                link_latency_s=latency, **opts)
                assert rows and all(r.verified and r.time_s < float("inf") for r in rows), (kind, coll, skipped)
                assert all(r.time_s >= r.lower_bound_s * (1 - 1e-9) for r in rows), (kind, coll)


@pytest.mark.parametrize("system,opts", [("paper", {"nodes": 8, "wavelengths": 2}), ("optical-torus", {"rows": 2, "cols": 3})])
def test_both_ends_of_the_range_run_on_optical_systems_without_a_numpy_warning(system, opts):
    for rate, delay in ((MAX_PHYSICAL, 0.0), (MIN_RATE, MAX_PHYSICAL)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rows, _ = collsim.compare(system, "allgather", "1KiB", wavelength_rate_bits_per_s=rate,
                                      mrr_reconfig_s=delay, slot_latency_s=delay, **opts)
            assert rows and all(r.verified and r.time_s < float("inf") for r in rows), system
