"""The sizes of a sweep, walked as nccl-tests walks them (``-b``, ``-e``, ``-f`` or ``-i``).

:class:`SizeSweep` states one (the command line's ``-b/-e/-f/-i/--total`` and
:func:`collsim.compare`'s ``sizes=``); :func:`sweep_sizes` walks it.  A sweep is a walk over message sizes, not a unit: its bounds are read by
:func:`collsim.core.units.parse_size` and its messages name them with
:func:`collsim.core.units.format_size`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError
from .units import format_size
from .validate import is_integer, positive_integer


def sweep_sizes(min_size: int, max_size: int, *, factor: int | None = None, step: int | None = None,
                limit: int = 1000) -> list[int]:
    """The sizes of a sweep, as nccl-tests walks them (``-b``, ``-e``, ``-f`` or ``-i``).

    From ``min_size``, multiply by ``factor`` (or add ``step``) while the size stays at most
    ``max_size``; ``max_size`` itself is included only if the walk reaches it.
    """
    if factor is not None and step is not None:
        raise InputError("a sweep takes a step factor (-f) or a step size (-i), not both")
    if min_size > max_size:
        raise InputError(f"the sweep is empty: minimum size {format_size(min_size)} is above the maximum "
                         f"{format_size(max_size)}")
    if step is not None:
        step = positive_integer("step size", step)
        count = (max_size - min_size) // step + 1
        if count > limit:
            raise InputError(f"the sweep has {count} sizes, more than {limit}: use a larger step or a factor")
        return [min_size + i * step for i in range(count)]
    factor = 2 if factor is None else factor
    if not is_integer(factor) or factor < 2:
        raise InputError(f"the step factor must be an integer >= 2, got {factor!r}")
    out = [min_size]
    while out[-1] * factor <= max_size:
        out.append(out[-1] * factor)
    return out


@dataclass(frozen=True)
class SizeSweep:
    """A size sweep as nccl-tests states it: ``-b MIN -e MAX`` with ``-f FACTOR`` or ``-i STEP``.

    Sizes are read by :func:`collsim.core.units.parse_size` (``"1KiB"``, ``"4MB"``, bytes).
    With ``total``, the sizes are nccl-tests' total buffers and each is turned into collsim's
    size for the collective and node count (:func:`collsim.core.totals.size_from_total`).
    """

    min_size: str | int
    max_size: str | int
    factor: int | None = None
    step: str | int | None = None
    total: bool = False

    def points(self) -> list[int]:
        """The sizes of the walk as given (total buffers with :attr:`total`), increasing."""
        from .units import parse_size
        return sweep_sizes(parse_size(self.min_size), parse_size(self.max_size), factor=self.factor,
                           step=None if self.step is None else parse_size(self.step))

    def sizes(self, collective: str, nodes: int) -> list[int]:
        """collsim's sizes of the sweep, increasing, for ``collective`` on ``nodes`` nodes."""
        from .totals import size_from_total
        points = self.points()
        return [size_from_total(collective, nodes, p) for p in points] if self.total else points
