"""Results must not lie (issue 21): a result says verified only if the verifier ran and passed the schedule;
the time a row reports as its answer is never below the lower bound; one algorithm's failure does not sink a
comparison."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import collsim
from collsim.core import errors as E
from collsim.pipeline import Result, evaluate, schedule_time_s
from collsim.sim import simulate


def _broken(system="paper", **kw):
    """A valid schedule with its last transfer dropped: it fails the verifier."""
    s = collsim.build("ring", system, "allgather", 1024, nodes=8, **kw)
    return s, s.take(range(len(s) - 1))


# ------------------------------------------------------------------ 1. verified means the verifier passed it

@pytest.mark.parametrize("system", ["paper", "ring"])
def test_evaluate_verifies_what_it_times(system):
    good, broken = _broken(system)
    with pytest.raises(E.VerificationError):
        collsim.verify(broken)
    row = evaluate(broken)
    assert (row.verified, row.verification) == (False, "failed")
    assert "postcondition not met" in row.error
    assert row.to_json()["verified"] is False and row.to_json()["verification"] == "failed"
    ok = evaluate(good)
    assert (ok.verified, ok.verification, ok.error) == (True, "passed", None)


def test_evaluate_without_the_verifier_says_so():
    good, broken = _broken()
    for s in (good, broken):
        row = evaluate(s, check=False)
        assert (row.verified, row.verification, row.error) == (False, "not run", None)


def test_evaluate_takes_a_report_as_proof_only_of_its_own_schedule():
    good, broken = _broken()
    report = collsim.verify(good)
    assert evaluate(good, report=report).verification == "passed"
    with pytest.raises(E.InputError, match="report of another schedule"):
        evaluate(broken, report=report)
    with pytest.raises(E.InputError, match="not both"):
        evaluate(good, report=report, error="boom")


def test_a_result_cannot_claim_verified_without_passing():
    row = evaluate(_broken()[0])
    fields = {k: getattr(row, k) for k in Result.__dataclass_fields__}
    with pytest.raises(E.InputError, match="cannot say verified=True"):
        Result(**{**fields, "verification": "not run"})
    with pytest.raises(E.InputError, match="cannot say verified=True"):
        Result(**{k: v for k, v in fields.items() if k != "verification"})  # the default is "not run"


def test_schedule_time_s_refuses_an_invalid_schedule():
    good, broken = _broken()
    assert schedule_time_s(good) == schedule_time_s(good, report=collsim.verify(good)) > 0
    with pytest.raises(E.PostconditionError):
        schedule_time_s(broken)


def test_simulate_verifies_or_says_it_did_not():
    good, broken = _broken("ring")
    assert simulate(good).verified and simulate(good, report=collsim.verify(good)).verified
    with pytest.raises(E.PostconditionError):
        simulate(broken)
    unchecked = simulate(broken, check=False)
    assert unchecked.verified is False and unchecked.to_json()["verified"] is False
    with pytest.raises(E.InputError):
        simulate(broken, report=collsim.verify(good))


def test_cli_simulate_and_verify_refuse_a_broken_schedule(tmp_path):
    _, broken = _broken("ring")
    path = tmp_path / "broken.json"
    collsim.save(broken, path)
    for cmd in (["simulate", str(path), "--json"], ["verify", str(path)]):
        out = subprocess.run([sys.executable, "-m", "collsim", *cmd], capture_output=True, text=True)
        assert out.returncode == 1 and "postcondition not met" in out.stderr, (cmd, out)
    good = tmp_path / "good.json"
    collsim.save(_broken("ring")[0], good)
    out = subprocess.run([sys.executable, "-m", "collsim", "simulate", str(good), "--json"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["verified"] is True, out
