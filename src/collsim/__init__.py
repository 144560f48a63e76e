"""collsim: build, verify and time collective-communication schedules.

>>> import collsim
>>> sched = collsim.build("ring", "paper", "allgather", "1MiB", nodes=8)
>>> collsim.verify(sched).steps
7
"""

from __future__ import annotations

import sys
import types
from importlib import import_module

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (10 ms)

from ._version import __version__  # a literal in a module importing nothing: ``collsim --version`` stays fast

# Public names, imported on first use (PEP 562): ``import collsim`` loads neither numpy nor any
# subpackage, which keeps the command line's start-up short (docs/performance.md).
_LAZY = {
    # build, check and time schedules
    "build": ".pipeline",
    "build_symmetric": ".pipeline",
    "build_repeated": ".pipeline",
    "verify": ".pipeline",
    "evaluate": ".pipeline",
    "run": ".pipeline",
    "schedule_time_s": ".pipeline",
    "lower_bound_s": ".pipeline",
    "Result": ".pipeline",
    "VerifyReport": ".verify",
    "compare": ".experiments.compare",
    "simulate": ".sim",
    "SimResult": ".sim",
    "synthesize": ".synthesis",
    "Synthesis": ".synthesis",
    # files, systems, collectives
    "load": ".core.serialize",
    "save": ".core.serialize",
    "load_system": ".systems",
    "OpticalRing": ".kinds.optical_ring",
    "Schedule": ".core.schedule",
    "SymmetricSchedule": ".core.symmetry",
    "RepeatedSteps": ".core.repeated",
    "Collective": ".core.collective",
    "make_collective": ".core.collective",
    # errors (every one collsim raises is a CollsimError)
    "CollsimError": ".core.errors",
    "InputError": ".core.errors",
    "UnknownNameError": ".core.errors",
    "UnsupportedError": ".core.errors",
    "ScheduleFormatError": ".core.errors",
    "VerificationError": ".core.errors",
}

if TYPE_CHECKING:  # for type checkers and IDEs; at run time these come from __getattr__
    from .core.collective import Collective, make_collective
    from .core.errors import (CollsimError, InputError, ScheduleFormatError, UnknownNameError, UnsupportedError,
                              VerificationError)
    from .core.schedule import Schedule
    from .core.serialize import load, save
    from .experiments.compare import compare
    from .core.repeated import RepeatedSteps
    from .core.symmetry import SymmetricSchedule
    from .pipeline import Result, build, build_repeated, build_symmetric, evaluate, lower_bound_s, run, schedule_time_s, verify
    from .sim import SimResult, simulate
    from .systems import load_system
    from .kinds.optical_ring import OpticalRing
    from .verify import VerifyReport


def __getattr__(name: str):
    """Import a public name, or a subpackage (``collsim.sim``), on first access; cache it."""
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
    elif name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:  # subpackages stay reachable as attributes of a bare ``import collsim``
        try:
            value = import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The type of the ``collsim`` module: keeps ``collsim.verify`` the function.

    When a subpackage finishes loading, the import system binds it as an attribute of its parent:
    ``setattr(collsim, "verify", <module collsim.verify>)``.  With eager imports this file rebound
    the name to the function afterwards; with lazy ones, ``import collsim.verify.resources`` (or any
    import of the subpackage, e.g. by :mod:`collsim.pipeline`) may come first and would leave
    ``collsim.verify`` a module.  So that binding is skipped, and ``collsim.verify`` stays (or
    becomes, through ``__getattr__``) the function.  The subpackage is still imported by name as
    usual (``from collsim.verify.resources import ...``; ``sys.modules["collsim.verify"]``).
    Assigning a ModuleType subclass to a module's ``__class__`` is the documented way to customise
    attribute setting on a module (Python reference, "Customizing module attribute access").
    """

    def __setattr__(self, name: str, value) -> None:
        if name == "verify" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "build", "build_symmetric", "build_repeated", "verify", "evaluate", "run", "compare", "simulate", "synthesize", "schedule_time_s", "lower_bound_s",
    "load", "save", "load_system", "make_collective",
    "Collective", "OpticalRing", "RepeatedSteps", "Result", "Schedule", "SimResult", "SymmetricSchedule", "Synthesis", "VerifyReport",
    "CollsimError", "InputError", "ScheduleFormatError", "UnknownNameError", "UnsupportedError", "VerificationError",
]
