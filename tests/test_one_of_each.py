"""Issue 23: one of each thing that was written twice (the report class, the paper registry)."""

from __future__ import annotations

import math
import sys

import collsim
import collsim.pipeline


def test_one_verify_report_class():
    report_cls = sys.modules["collsim.verify"].VerifyReport
    assert collsim.VerifyReport is collsim.pipeline.VerifyReport is report_cls
    assert report_cls.__mro__[1] is object  # no subclass that only adds fields
    report = collsim.verify(collsim.build("ring", "paper", "allgather", 1024, nodes=8))
    assert type(report) is report_cls and report.time_s > 0 and report.closed_form_time_s > 0
    untimed = collsim.verify(collsim.build("ring", "paper", "allgather", 1024, nodes=8), answer=False)
    assert math.isnan(untimed.time_s) and untimed.describes(collsim.build("ring", "paper", "allgather", 1024, nodes=8))
