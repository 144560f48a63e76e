"""What a size means for each collective, and nccl-tests' total buffer size.

collsim's size (``size_bytes``, ``--size``) is the textbook's message size *m*:
one node's block for all-gather, reduce-scatter, scatter, gather and shift, one
(source, destination) pair's block for all-to-all, the whole vector for
all-reduce, broadcast, reduce and scan (:mod:`collsim.core.collective`).
nccl-tests reports the **total buffer** instead: N blocks for all-gather,
reduce-scatter, all-to-all, scatter and gather, the vector for the others
(the collective object's ``nccl_blocks``, :mod:`collsim.core.collectives`).  :func:`total_bytes` and
:func:`size_from_total` convert between the two, exactly; a total that N does
not divide is refused with the nearest valid totals, where nccl-tests would
silently round it down.
"""

from __future__ import annotations

from .collective import canonical_collective
from .collectives import TYPES
from .errors import InputError
from .units import format_size
from .validate import positive_integer

SIZE_MEANING: dict[str, tuple[str, str]] = {name: (t.size_unit, t.size_meaning) for name, t in TYPES.items()}
"""Per collective: (short phrase for titles, what ``size_bytes`` is)."""


def _factor(kind: str, nodes: int) -> int:
    return positive_integer("nodes", nodes) if TYPES[kind].nccl_blocks else 1


def total_bytes(kind: str, nodes: int, size_bytes: int) -> int:
    """nccl-tests' size (the total buffer) of a collective of collsim's ``size_bytes``."""
    kind = canonical_collective(kind)
    return int(size_bytes) * _factor(kind, nodes)


def size_from_total(kind: str, nodes: int, total: int) -> int:
    """collsim's size of a collective whose nccl-tests size (total buffer) is ``total``."""
    kind = canonical_collective(kind)
    total = int(total)
    n = _factor(kind, nodes)
    block, rest = divmod(total, n)
    if rest == 0:
        return block
    below = [f"{format_size(block * n)} ({format_size(block)} {SIZE_MEANING[kind][0]})"] if block else []
    above = [f"{format_size((block + 1) * n)} ({format_size(block + 1)} {SIZE_MEANING[kind][0]})"]
    nearest = " and ".join(below + above)
    raise InputError(f"total size {format_size(total)} does not divide evenly among {n} nodes ({kind}'s total is "
                     f"{n} blocks): nearest valid total{'s are' if below else ' is'} {nearest}")


def describe_size(kind: str, nodes: int, size_bytes: int) -> str:
    """A size with its meaning and nccl-tests' total, for titles: ``4MiB per node, total 4GiB``."""
    kind = canonical_collective(kind)
    return (f"{format_size(size_bytes)} {SIZE_MEANING[kind][0]}, "
            f"total {format_size(total_bytes(kind, nodes, size_bytes))}")


def size_help() -> str:
    """One paragraph saying what collsim's size is for every collective (for ``--help``)."""
    groups: dict[str, list[str]] = {}
    for kind, (_, meaning) in SIZE_MEANING.items():
        groups.setdefault(meaning, []).append(kind)
    return "; ".join(f"{meaning} for {', '.join(kinds)}" for meaning, kinds in groups.items())


__all__ = ["SIZE_MEANING", "describe_size", "size_from_total", "size_help", "total_bytes"]
