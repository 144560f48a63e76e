"""The Python API: what ``collsim`` exports, real signatures, paths to verify, typed errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import collsim
from collsim.core.errors import CollsimError, MalformedScheduleError


def test_all_lists_what_a_user_needs():
    need = {"build", "verify", "simulate", "compare", "load", "save", "schedule_time_s", "lower_bound_s",
            "evaluate", "run", "load_system", "CollsimError", "VerificationError", "Schedule", "VerifyReport"}
    assert need <= set(collsim.__all__)
    assert "tune_malloc" not in collsim.__all__
    from collsim._malloc import tune_malloc  # the CLI and the benchmarks use it from there
    assert callable(tune_malloc)


def test_compare_shows_its_real_signature():
    params = inspect.signature(collsim.compare).parameters
    assert {"system", "collective", "size", "algorithms", "params"} <= set(params)
    assert collsim.compare.__module__ == "collsim.experiments.compare"


def test_verify_accepts_a_path_and_reports_the_time(tmp_path):
    sched = collsim.build("ne", "paper", "allgather", "64KiB", nodes=8)
    report = collsim.verify(sched)
    assert report.time_s == pytest.approx(collsim.schedule_time_s(sched)) and report.time_s > 0
    assert isinstance(report, collsim.VerifyReport)
    for name in ("ne.json", "ne.npz"):
        collsim.save(sched, tmp_path / name)
        for path in (tmp_path / name, str(tmp_path / name)):
            again = collsim.verify(path)
            assert (again.steps, again.transfers) == (report.steps, report.transfers)
            assert again.time_s == pytest.approx(report.time_s)


def test_verify_of_a_missing_file_or_a_wrong_type_is_a_collsim_error(tmp_path):
    with pytest.raises(CollsimError):
        collsim.verify(tmp_path / "nowhere.json")
    with pytest.raises(CollsimError, match="Schedule or a schedule file"):
        collsim.verify(42)


def test_a_malformed_schedule_is_a_collsim_error_and_still_a_value_error():
    sched = collsim.build("ring", "paper", "allgather", 1024, nodes=4)
    fields = {f: getattr(sched, f) for f in ("system", "collective", "algorithm", "params", "step", "round", "src",
                                             "dst", "chunk_ptr", "chunk_idx", "reduce", "routes")}
    fields["step"] = np.zeros(1, dtype=fields["step"].dtype)
    with pytest.raises(MalformedScheduleError) as info:
        collsim.Schedule(**fields)
    assert isinstance(info.value, CollsimError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("call", [
    lambda: collsim.load_system("toruss"),
    lambda: collsim.load_system("nowhere.toml"),
    lambda: collsim.load_system(3.5),
    lambda: collsim.load_system("torus", dims="4,a"),
    lambda: collsim.load_system("mlfm", select=("a", "b", "c")),
    lambda: collsim.build("optre", "paper", "allgather", 1024),
    lambda: collsim.build("ring", "paper", "allgather", 1024, nodes="8"),
])
def test_bad_calls_raise_collsim_errors(call):
    with pytest.raises(CollsimError) as info:
        call()
    assert "\n" not in str(info.value)
