"""Issue 23: one rule for ALGORITHM|FILE (collsim.cli.resolve) and one loader of a schedule or a path
(collsim.core.schedule_file), used by every command and function that takes either."""

from __future__ import annotations

import pytest

import collsim
from collsim.cli.resolve import resolve_target
from collsim.core.errors import InputError, ScheduleFormatError, UnknownNameError
from collsim.core.schedule_file import load_schedule
from conftest import names, refusal


def test_algorithm_names_and_aliases_are_algorithms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_target("Ring-Allgather").algorithm == "ring"
    (tmp_path / "ring").write_text("{}")  # a stray file never changes what a command means
    got = resolve_target("ring")
    assert (got.is_file, got.algorithm) == (False, "ring")
    assert resolve_target("./ring").is_file  # the file, written as a path


def test_files_standard_input_and_missing_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_target("-").is_file
    (tmp_path / "sched").write_text("{}")
    assert resolve_target("sched").is_file  # an existing path, whatever its suffix
    with pytest.raises(ScheduleFormatError) as info:
        resolve_target("gone.npz")
    names(str(info.value), "gone.npz", "does not exist")


def test_an_unknown_name_gets_a_did_you_mean_and_no_such_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownNameError) as info:
        resolve_target("rnig")
    names(str(info.value), "'rnig'", "algorithm", "file", "ring")   # neither, and the name it may have meant


@pytest.mark.parametrize("command", [["simulate"], ["mpi"], ["export", "msccl", "--out", "x.xml"],
                                     ["export", "simgrid", "--system", "ring", "-n", "4", "--out", "d",
                                      "--schedule"]])
def test_every_command_reads_the_argument_by_the_one_rule(command, run_cli):
    names(refusal(run_cli(*command, "rnig")), "'rnig'", "algorithm", "file", "ring")


def test_the_loader_takes_a_schedule_a_path_or_standard_input(tmp_path, monkeypatch):
    import io
    sched = collsim.build("ne", "paper", "allgather", 1024, nodes=4)
    assert load_schedule(sched) is sched
    path = tmp_path / "ne.json"
    collsim.save(sched, path)
    assert load_schedule(path).algorithm == "ne"
    assert collsim.verify(str(path)).steps == 2  # the library's verify reads through it too
    from collsim.mpi.executor import load_schedule as mpi_loader
    assert mpi_loader is load_schedule
    with pytest.raises(ScheduleFormatError, match="it is a directory"):
        load_schedule(tmp_path)
    with pytest.raises(ScheduleFormatError) as info:
        load_schedule("-")  # a library call never reads standard input unasked
    names(str(info.value), "file -", "does not exist")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert load_schedule("-", stdin=True).algorithm == "ne"
    with pytest.raises(InputError, match="verify takes a Schedule"):
        collsim.verify(None)


def test_mpi_refuses_standard_input(run_cli):
    names(refusal(run_cli("mpi", "-")), "schedule file", " -")   # what to give, and what not
