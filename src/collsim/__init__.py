"""collsim: build, verify and time collective-communication schedules.

>>> import collsim
>>> sched = collsim.build("ring", "paper", "allgather", "1MiB", nodes=8)
>>> collsim.verify(sched).steps
7
"""

from __future__ import annotations

from ._malloc import tune_malloc
from .api import build
from .core.collective import Collective, make_collective
from .core.errors import CollsimError, VerificationError
from .core.schedule import Schedule
from .systems import OpticalRing, load_system
from .verify import VerifyReport, verify

__version__ = "0.1.0"

__all__ = [
    "Collective", "CollsimError", "OpticalRing", "Schedule", "VerificationError", "VerifyReport",
    "build", "load_system", "make_collective", "verify", "compare", "tune_malloc",
]


def compare(*args, **kwargs):
    """Build, verify and time several algorithms (see :func:`collsim.experiments.compare.compare`)."""
    from .experiments.compare import compare as _compare
    return _compare(*args, **kwargs)
