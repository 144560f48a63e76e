"""MLFM's congestion-free all-to-all (algorithm ``mlfm``, seed 001 §2), as one package.

* :mod:`~collsim.algorithms.mlfm.selection`: server selections ``(n, l, m)`` and the
  paper's and the corrected conditions on them;
* :mod:`~collsim.algorithms.mlfm.schedule`: the phases' rule, the schedule and its
  registration.

Importing the package registers the algorithm; its public names are re-exported here.
The system is :mod:`collsim.kinds.network.mlfm`; the paper's experiments are
:mod:`collsim.experiments.papers.mlfm.congestion` and :mod:`collsim.experiments.papers.mlfm.throughput`
(docs/mlfm.md).
"""

from __future__ import annotations

from .schedule import mlfm_alltoall, mlfm_logical, mlfm_schedule, phase_destinations
from .selection import (
                        CORRECT_CONDITION,
                        PAPER_CONDITION,
                        correct_condition_holds,
                        largest_selection,
                        paper_condition_holds,
                        parse_select,
                        validate_select,
)

__all__ = ["CORRECT_CONDITION", "PAPER_CONDITION", "correct_condition_holds", "largest_selection",
           "mlfm_alltoall", "mlfm_logical", "mlfm_schedule", "paper_condition_holds", "parse_select",
           "phase_destinations", "validate_select"]
