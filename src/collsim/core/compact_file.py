"""Schedule files that hold a schedule as its representatives and a group (version 4).

A symmetric schedule (:class:`~collsim.core.symmetry.SymmetricSchedule`) is its transfers into
the group's domain and the translation group that moves them; a schedule whose steps repeat
(:class:`~collsim.core.repeated.RepeatedSteps`) is the same under its data flow's group, routed by
the system's rule.  Written with ``save(..., expand=False)``, the file holds the representatives as
an ordinary schedule's transfers and, in its header, the group (docs/schedule-format.md,
"Symmetric files")::

    "version": 4,
    "symmetry": {"form": "symmetric", "radices": [1024, 8], "moving": [true, true], "interleaved": false}

The file *means* the expansion: every representative moved by every element of the group.  So a
reader must not take the representatives for the schedule, and version 4 is refused by a collsim
that does not know it (it reads versions 1 to 3).  A group is believed only where the system's
kind maps it onto the system (:meth:`~collsim.kinds.base.KindModel.accepts_group`); the
representatives are then checked on their orbits as the schedule built in memory is.

References
----------
W. Burnside, *Theory of Groups of Finite Order*, 2nd ed., Cambridge University Press, 1911 (orbits
of a group acting on a set).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InputError, ScheduleFormatError
from .fields import refuse_unknown
from .plugins import model_for
from .schedule import Schedule
from .symmetry import SymmetricSchedule, Translations
from .validate import is_integer

FORMS = ("symmetric", "repeated")
"""The forms a version-4 file's ``symmetry`` names."""

SYMMETRY_KEYS = frozenset({"form", "radices", "moving", "interleaved"})

REPEATED_MAX_CLASS_TRANSFERS = 1 << 22
"""Most transfers the whole steps of a :class:`~collsim.core.repeated.RepeatedSteps` hold, one step per
class: beyond that its steps are too varied for classes to pay (``build_compact`` then builds as
before, and a file's are refused with the estimate)."""


def symmetry_of(schedule) -> tuple[Schedule, dict[str, Any]]:
    """The representatives a compact schedule's file holds, and its header's ``symmetry``.

    Examples
    --------
    >>> from collsim import build_symmetric
    >>> reps, sym = symmetry_of(build_symmetric("ring", "ring", "allgather", "1MiB", nodes=4))
    >>> len(reps), sym
    (3, {'form': 'symmetric', 'radices': [4], 'moving': [True], 'interleaved': False})
    """
    from .repeated import RepeatedSteps
    form = "repeated" if isinstance(schedule, RepeatedSteps) else "symmetric"
    flow = schedule.flow if form == "repeated" else schedule
    if not isinstance(flow, SymmetricSchedule):
        raise InputError(f"a compact file holds a SymmetricSchedule or RepeatedSteps, not {type(schedule).__name__}")
    g = flow.group
    return flow.reps, {"form": form, "radices": list(g.radices), "moving": list(g.moving),
                       "interleaved": bool(flow.interleaved)}


def read_symmetry(doc: dict, version: int) -> dict[str, Any] | None:
    """A header's ``symmetry``, checked: None for versions 1 to 3, required in version 4."""
    if version != 4:
        if "symmetry" in doc:
            raise ScheduleFormatError(f"file: 'symmetry' needs version 4, and the file says version {version}")
        return None
    sym = doc.get("symmetry")
    if not isinstance(sym, dict):
        raise ScheduleFormatError("file: version 4 holds representatives and needs a 'symmetry' object (its group)")
    refuse_unknown(sym, SYMMETRY_KEYS, "symmetry")
    form = sym.get("form")
    if form not in FORMS:
        raise ScheduleFormatError(f"symmetry: 'form' must be one of {', '.join(FORMS)}, not {form!r}")
    radices, moving = sym.get("radices"), sym.get("moving")
    if not isinstance(radices, list) or not radices or not all(is_integer(r) and r >= 1 for r in radices):
        raise ScheduleFormatError("symmetry: 'radices' must be a list of integers of at least 1")
    if not isinstance(moving, list) or len(moving) != len(radices) or not all(isinstance(m, bool) for m in moving):
        raise ScheduleFormatError("symmetry: 'moving' must be a list of true/false, one per radix")
    if not isinstance(sym.get("interleaved", False), bool):
        raise ScheduleFormatError("symmetry: 'interleaved' must be true or false")
    return {"form": form, "radices": [int(r) for r in radices], "moving": list(moving),
            "interleaved": sym.get("interleaved", False)}


def from_file(reps: Schedule, symmetry: dict[str, Any], *, expand: bool, name: str):
    """The schedule a version-4 file means: its representatives under its group, expanded if ``expand``.

    Raises
    ------
    ScheduleFormatError
        The group does not act on the system's nodes, the representatives do not end in its domain,
        the collective is not invariant under it, or (``symmetric``) the system's kind does not map
        it onto the system.
    collsim.core.limits.MemoryLimitError
        ``expand`` and the expansion would exceed the memory limit (its estimate in the message).
    """
    from .limits import MemoryLimitError
    from .repeated import RepeatedSteps
    radices = tuple(symmetry["radices"])
    if int(np.prod(radices, dtype=object)) != reps.system.nodes:
        raise ScheduleFormatError(f"{name}: the group's radices {list(radices)} multiply to "
                                  f"{int(np.prod(radices, dtype=object))}, not the system's {reps.system.nodes} nodes")
    group = Translations(radices, tuple(symmetry["moving"]))
    try:
        flow = SymmetricSchedule(reps, group, symmetry["interleaved"])
    except InputError as exc:
        raise ScheduleFormatError(f"{name}: {exc}") from exc
    model = model_for(reps.system)
    if symmetry["form"] == "symmetric":
        if not model.accepts_group(reps.system, group):
            raise ScheduleFormatError(f"{name}: the translations of radices {list(radices)} (moving "
                                      f"{list(group.moving)}) do not map this {model.name} system onto itself, so "
                                      f"they cannot stand for its transfers")
        out = flow
    else:
        if not model.times_steps_alone(reps.system):
            raise ScheduleFormatError(f"{name}: the {model.name} kind does not time steps alone: no repeated steps")
        from .repeated import step_classes
        step_class, first = step_classes(reps)
        whole = int(np.diff(reps.step_bounds)[first].sum()) * group.order if len(first) else 0
        if whole > REPEATED_MAX_CLASS_TRANSFERS:
            raise MemoryLimitError(f"{name}: its {len(first)} classes of steps alike hold {whole} transfers in their "
                                   f"whole steps, above {REPEATED_MAX_CLASS_TRANSFERS}")
        out = RepeatedSteps.of(flow, lambda s, ls: model.realize(s, ls, algorithm=reps.algorithm, params=reps.params),
                               (step_class, first))
    return out.expand() if expand else out


__all__ = ["FORMS", "REPEATED_MAX_CLASS_TRANSFERS", "from_file", "read_symmetry", "symmetry_of"]
