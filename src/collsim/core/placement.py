"""Where a collective sits on its nodes: the root of a rooted collective and the q of a shift.

One check for each, against the node count, used by everything that accepts a root or a
shift: :func:`collsim.core.collective.make_collective`, the builders that take ``root`` or
``shift`` (through :mod:`collsim.algorithms.common`), and the placement of an algorithm's
parameters that every command and the library go through
(:func:`collsim.algorithms.placement.place`).  A value out of range is refused with one line
naming the value, the range and the node count, before anything is built.
"""

from __future__ import annotations

from typing import Any

from .collectives import TYPES
from .errors import InputError
from .validate import is_integer

__all__ = ["check_placement", "check_root", "check_shift"]


def _shown(value: Any) -> str:
    return str(int(value)) if is_integer(value) else repr(value)


def check_root(root: Any, nodes: int) -> int:
    """Check a root node id against the node count and return it as an ``int``.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4: the rooted operations (one-to-all broadcast,
    all-to-one reduction, scatter, gather).
    """
    n = int(nodes)
    if is_integer(root) and 0 <= int(root) < n:
        return int(root)
    raise InputError(f"root must be a node id in 0..{n - 1} (the system has {n} nodes), got {_shown(root)}")


def check_shift(shift: Any, nodes: int) -> int:
    """Check the q of a circular q-shift against the node count and return it as an ``int``.

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing",
    2nd ed., Addison-Wesley, 2003, ch. 4, "Circular Shift".
    """
    n = int(nodes)
    if is_integer(shift) and 1 <= int(shift) < n:
        return int(shift)
    raise InputError(f"shift q must be an integer in 1..{n - 1} (the system has {n} nodes), got {_shown(shift)}")


def check_placement(kind: str, nodes: int | None, root: Any = None,
                    shift: Any = None) -> tuple[Any, Any]:
    """Check a root and a shift given for a collective: that it has them, and that they are in range."""
    spec = TYPES[kind]
    for key, value, applies in (("root", root, spec.rooted), ("shift", shift, spec.shifted)):
        if value is not None and not applies:
            takers = [n for n, t in TYPES.items() if (t.rooted if key == "root" else t.shifted)]
            which = (", ".join(takers[:-1]) + " and " + takers[-1]) if key == "root" \
                else "the shift collective (q)"
            raise InputError(f"{kind} has no {key}: --{key} applies to {which}")
    if nodes is None:  # the range waits for the node count; the type does not
        for key, value in (("root", root), ("shift", shift)):
            if value is not None and not is_integer(value):
                raise InputError(f"{key} must be an integer, got {value!r}")
        return root, shift
    return (None if root is None else check_root(root, nodes),
            None if shift is None else check_shift(shift, nodes))
