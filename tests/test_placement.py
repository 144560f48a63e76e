"""Root, shift and algorithm parameters: one placement for every command and the library (issue 31).

Every command that takes ``--root``, ``--shift`` and ``-p`` goes through
:mod:`collsim.algorithms.placement`; the library's ``build``, ``compare`` and ``synthesize`` do too.
A root or shift out of range is refused with one line naming the value and N; a parameter is
checked against the type its algorithm declares; a parameter no algorithm (or synthesizer) takes
is refused; ``synthesize`` honours ``--root``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import collsim
from collsim.algorithms import REGISTRY, get_algorithm
from collsim.algorithms.placement import place_all, placement_params
from collsim.core.errors import InputError, UnsupportedError
from collsim.systems import PRESETS, kind_names, load_system

pytestmark = pytest.mark.schedule_first(45)  # about 45 s of work: handed out early (tests/conftest.py)

MESH9 = ("--system", "mesh", "-S", "dims=3,3")
STAR8 = ("--system", "star", "-n", "8")


def _one_line_exit_2(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# -- synthesize honours --root --------------------------------------------------------------------

@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_synthesize_builds_from_the_root_it_is_given(collective):
    out = collsim.synthesize("mesh", collective, "1MiB", system_options={"dims": (3, 3)}, root=3)
    sched = out.schedule
    assert sched.collective.root == 3 and out.result.root == 3 and sched.params["root"] == 3
    first = sched.step == sched.step.min()
    if collective == "broadcast":  # the root's pieces leave it first: every first transfer starts at node 3
        assert set(sched.src[first].tolist()) == {3}
    else:                          # the reduce ends at the root: every last transfer reaches node 3
        last = sched.step == sched.step.max()
        assert set(sched.dst[last].tolist()) == {3}


def test_cli_synthesize_root_and_its_schedule_file(run_cli, tmp_path):
    proc = run_cli("synthesize", *MESH9, "-c", "broadcast", "-s", "64KiB", "--root", "3", "-o", "b.json", "--json",
                   check=True)
    assert json.loads(proc.stdout)["params"]["root"] == 3
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["collective"]["root"] == 3
    assert _rows_equal(run_cli("synthesize", *MESH9, "-c", "broadcast", "-s", "64KiB", "-p", "root=3", "--json",
                               check=True).stdout, proc.stdout)


def _rows_equal(a: str, b: str) -> bool:
    return json.loads(a) == json.loads(b)


# -- roots and shifts out of range: every command, one line naming the value and N ----------------

COMMANDS = {
    "compare": ("compare", *STAR8, "-c", "broadcast", "-s", "1KiB"),
    "compare -a binomial": ("compare", *STAR8, "-c", "broadcast", "-s", "1KiB", "-a", "binomial"),
    "compare -a ring": ("compare", *STAR8, "-c", "broadcast", "-s", "1KiB", "-a", "ring"),  # ring takes no root
    "schedule binomial": ("schedule", "binomial", *STAR8, "-c", "broadcast", "-s", "1KiB", "-o", "x.json"),
    "schedule ring": ("schedule", "ring", *STAR8, "-c", "broadcast", "-s", "1KiB", "-o", "x.json"),
    "simulate": ("simulate", "binomial", *STAR8, "-c", "broadcast", "-s", "1KiB"),
    "synthesize": ("synthesize", *STAR8, "-c", "broadcast", "-s", "1KiB"),
    "export msccl": ("export", "msccl", "binomial", *STAR8, "-c", "broadcast", "-s", "1KiB", "-o", "x.xml"),
    "export simgrid": ("export", "simgrid", *STAR8, "--schedule", "binomial", "-c", "broadcast", "-s", "1KiB",
                       "-o", "sg"),
    "mpi": ("mpi", "binomial", *STAR8, "-c", "broadcast", "-s", "1KiB"),
}


ROOTS = ["8", "100", "-1"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("option", ["--root", "-p"])
def test_a_root_out_of_range_is_refused_by_every_command(run_cli, tmp_path, command, option):
    # each command and option form with one of the three values, turn by turn: every command meets two
    # of them and every value six or seven commands, at a third of the console-script runs of the full cross
    root = ROOTS[(sorted(COMMANDS).index(command) + (option == "-p")) % len(ROOTS)]
    args = (option, root) if option == "--root" else (option, f"root={root}")
    proc = run_cli(*COMMANDS[command], *args)
    _one_line_exit_2(proc, "root", f"got {root}", "0..7", "8 nodes")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # bad input changes nothing


@pytest.mark.parametrize("command", ["compare", "synthesize", "schedule ring", "export simgrid"])
def test_a_root_of_an_unrooted_collective_is_refused(run_cli, command):
    args = [a if a != "broadcast" else "allgather" for a in COMMANDS[command]]
    _one_line_exit_2(run_cli(*args, "--root", "3"), "allgather has no root")


def test_a_shift_out_of_range_is_refused(run_cli):
    for command in (("compare", *STAR8, "-c", "shift", "-s", "1KiB"),
                    ("schedule", "direct", *STAR8, "-c", "shift", "-s", "1KiB", "-o", "x.json")):
        for q in ("0", "8", "-3"):
            _one_line_exit_2(run_cli(*command, "--shift", q), "shift q", f"got {q}", "8 nodes")
    _one_line_exit_2(run_cli("synthesize", *MESH9, "--shift", "3"), "allgather has no shift")


def test_export_simgrid_refuses_schedule_options_without_a_schedule(run_cli, tmp_path):
    for extra in (("--root", "3"), ("-s", "1KiB"), ("-c", "broadcast"), ("-p", "root=3")):
        proc = run_cli("export", "simgrid", *STAR8, "-o", "sg", *extra)
        _one_line_exit_2(proc, "--schedule")
    assert not (tmp_path / "sg").exists()


def test_import_msccl_checks_its_root(run_cli):
    run_cli("export", "msccl", "binomial", *STAR8, "-c", "broadcast", "--root", "3", "-o", "b.xml", check=True)
    run_cli("export", "msccl", "ring", *STAR8, "-c", "allgather", "-o", "a.xml", check=True)
    assert run_cli("import", "msccl", "b.xml", "--root", "3").returncode == 0
    _one_line_exit_2(run_cli("import", "msccl", "b.xml", "--root", "100"), "root", "got 100", "8 nodes")
    _one_line_exit_2(run_cli("import", "msccl", "a.xml", "--root", "2"), "allgather has no root")


@pytest.mark.parametrize("call", ["build", "build-ring", "compare", "compare-ring", "synthesize"])
@pytest.mark.parametrize("root", [9, 100, -1, 1.5, True])
def test_the_library_refuses_a_root_out_of_range(call, root):
    mesh = {"system_options": {"dims": (3, 3)}}
    run = {
        "build": lambda: collsim.build("binomial", "mesh", "broadcast", "1KiB", root=root, **mesh),
        "build-ring": lambda: collsim.build("ring", "mesh", "broadcast", "1KiB", root=root, **mesh),
        "compare": lambda: collsim.compare("mesh", "broadcast", "1KiB", root=root, dims=(3, 3)),
        "compare-ring": lambda: collsim.compare("mesh", "broadcast", "1KiB", root=root, algorithms=["ring"],
                                                dims=(3, 3)),
        "synthesize": lambda: collsim.synthesize("mesh", "broadcast", "1KiB", root=root, **mesh),
    }[call]
    with pytest.raises(InputError, match=r"^root must be a node id in 0\.\.8 \(the system has 9 nodes\), got "):
        run()


def test_placement_without_the_node_count_still_checks_the_type():
    with pytest.raises(InputError, match="root must be an integer, got 1.5"):
        placement_params("ring", "broadcast", root=1.5)
    assert placement_params("binomial", "broadcast", root=3) == {"root": 3}  # the range waits for N
    with pytest.raises(InputError, match=r"in 0\.\.7 \(the system has 8 nodes\), got 8"):
        placement_params("ring", "broadcast", root=8, nodes=8)  # out of range before "ring takes no root"


# -- parameters: ones nobody takes are refused, each is checked against its declared type ---------

def test_synthesize_refuses_a_parameter_no_synthesizer_takes(run_cli):
    for bad in ("colour=red", "chunk=4", "capacty=2", "overlai=ring"):  # typos of chunks, capacity, overlay
        _one_line_exit_2(run_cli("synthesize", *MESH9, "-p", bad), "no synthesizer takes", bad.split("=")[0])
    with pytest.raises(InputError, match="no synthesizer takes parameter.s. colour"):
        collsim.synthesize("mesh", "allgather", "1KiB", system_options={"dims": (3, 3)}, params={"colour": "red"})
    # a parameter of a synthesizer that does not apply to this collective does not apply either
    _one_line_exit_2(run_cli("synthesize", *MESH9, "-c", "alltoall", "-s", "1KiB", "-p", "chunks=2"),
                     "no synthesizer takes", "chunks", "split")


INT_BAD = ["nan", "inf", "-inf", "1.5", "abc", "1e30", "99999999999999999999999"]


INT_COMMANDS = [
    (("synthesize", *MESH9, "-p"), "seed"),
    (("compare", "--system", "ring", "-n", "8", "-a", "ring", "-p"), "stripe"),
    (("compare", "--system", "ring", "-n", "8", "-p"), "chunks"),
]


@pytest.mark.parametrize("value", INT_BAD)
def test_cli_int_parameters_of_the_wrong_type_are_refused(run_cli, value):
    """Each bad value on two of the three commands, in turn: every command meets most of the values (the
    values' parsing is one function, its every case tested in-process by the hypothesis property below)."""
    i = INT_BAD.index(value)
    for command, name in (INT_COMMANDS[i % 3], INT_COMMANDS[(i + 1) % 3]):
        _one_line_exit_2(run_cli(*command, f"{name}={value}"), name, "integer")


def _int_parameters():
    return sorted((name, p) for name, spec in REGISTRY.items() for p, atoms in spec.param_types().items()
                  if "int" in atoms and p not in ("root", "shift"))


def test_the_registry_declares_int_parameters():
    declared = dict.fromkeys(name for name, _ in _int_parameters())
    assert {"ring", "synth-matching", "synth-alltoall", "wrht", "hier-allgather"} <= set(declared)
    assert get_algorithm("synth-matching").param_types()["seed"] == ("int", "None")


@given(st.sampled_from(_int_parameters()),
       st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5), st.booleans(),
                 st.integers(min_value=2**63), st.integers(max_value=-2**63), st.tuples(st.integers())))
def test_every_int_parameter_refuses_what_is_not_an_int64(param, value):
    name, key = param
    with pytest.raises(InputError, match=rf"^{name}: {key} must be an integer"):
        get_algorithm(name).check_params({key: value})


@pytest.mark.parametrize("name, key", _int_parameters())
@pytest.mark.parametrize("value", [math.nan, math.inf, 1.5, "abc", 10**30])
def test_every_int_parameter_is_refused_before_building(name, key, value):
    """Through the builder's one door (:func:`collsim.algorithms.build_logical`), whatever the builder checks."""
    from collsim.algorithms import build_logical
    spec = get_algorithm(name)
    system = next(s for s in _SYSTEMS if any(spec.supports(s, c) for c in spec.collectives))
    coll = next(c for c in spec.collectives if spec.supports(system, c))
    with pytest.raises(InputError, match=key):
        build_logical(spec, system, coll, 1024, **{key: value})


_SYSTEMS = [load_system("paper", nodes=8), load_system("star", nodes=8), load_system("mesh", dims=(4, 4)),
            load_system("hierarchical", dims=("switch:4", "ring:4")), load_system("ocs", nodes=8),
            load_system("mlfm", radix=6), load_system("optical-torus", rows=4, cols=4)]


def test_place_all_is_compare_s_and_synthesize_s_selection():
    star = load_system("star", nodes=8)
    chosen, notes = place_all([get_algorithm("ring"), get_algorithm("binomial")], star, "broadcast", {"root": 3})
    assert list(chosen) == ["binomial"] and chosen["binomial"][1] == {"root": 3}
    assert [(n.algorithm, n.failed) for n in notes] == [("ring", False)] and "root" in str(notes[0])
    with pytest.raises(UnsupportedError, match="ring takes no root"):
        place_all([get_algorithm("ring")], star, "broadcast", root=3, strict=True)
    with pytest.raises(InputError, match="ring: chunks must be an integer, got nan"):
        place_all([get_algorithm("ring")], star, "allgather", {"chunks": float("nan")})


# -- what synthesize says when no synthesizer applies ---------------------------------------------

@pytest.mark.parametrize("collective", ["scan", "gather", "scatter", "shift"])
def test_no_synthesizer_names_what_each_synthesizes(run_cli, collective):
    proc = run_cli("synthesize", *MESH9, "-c", collective, "-s", "1KiB")
    _one_line_exit_2(proc, f"no synthesizer covers {collective}", "synth-matching", "allgather", "broadcast",
                     "synth-alltoall", "alltoall")
    assert not proc.stderr.strip().endswith(":")


def test_no_synthesizer_on_an_optical_ring_says_why():
    with pytest.raises(UnsupportedError, match=r"no synthesizer applies to allgather .*synth-matching does not run"):
        collsim.synthesize("paper", "allgather", "1KiB", system_options={"nodes": 8})


# -- help: no option the command lacks, every kind and preset --------------------------------------

def test_synthesize_help_names_no_missing_option_and_every_system(run_cli):
    text = " ".join(run_cli("synthesize", "--help", check=True).stdout.split())
    assert "-a" not in text.replace("--", "  ").split() and "with -a" not in text
    system_help = text.split("--system TEXT", 1)[1].split("-n, --nodes", 1)[0].replace("- ", "-")
    for name in [*kind_names(), *PRESETS]:
        assert name in system_help, name
    compare = " ".join(run_cli("compare", "--help", check=True).stdout.split())
    assert "refused if named with -a" in compare  # compare has -a


def test_the_system_help_is_read_from_the_registries():
    from collsim.cli.options import system_help
    text = system_help()
    assert all(name in text for name in [*kind_names(), *PRESETS])
    assert np.all([text.count(p) == 1 for p in PRESETS])
