"""Sizes, size sweeps, root and shift: the options of the commands that build collectives.

One decorator, :func:`size_options`, gives ``compare``, ``simulate``, ``schedule``, ``synthesize``,
``mpi``, ``export msccl`` and ``export simgrid`` the same options, collected into one
:class:`SizeRequest` argument:

* ``-s/--size``: collsim's size (a node's block, a pair's block or the vector,
  :mod:`collsim.core.totals`); ``--total-size``: nccl-tests' total buffer instead;
* ``-b/--min-size``, ``-e/--max-size`` with ``-f/--step-factor`` or
  ``-i/--step-bytes``: a sweep as nccl-tests walks it, one row per size
  (``--total`` reads the sweep as total buffers); ``compare`` and ``simulate`` only;
* ``--root`` and ``--shift``: applied to the algorithm (or every algorithm), or refused, as the
  library places them (:mod:`collsim.algorithms.placement`).

``-f`` was ``--fibers`` before sweeps existed; fibers are now ``-F/--fibers``, and
``-f`` on a command without sweeps says so (:func:`retired_fibers_flag`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import click

from ..core.totals import describe_size, size_from_total, size_help, total_bytes
from ..core.size_sweep import SizeSweep
from ..core.units import parse_size

DEFAULT_SIZE = "4MiB"
_UNITS = ("SI prefixes are decimal (32kB = 32000 B, 4MB = 4000000 B), IEC prefixes binary (32KiB = 32768 B, "
          "4MiB = 4194304 B), B is bytes and b bits (4Mb = 500000 B); a bare number is bytes; at most 2^63-1")


@dataclass(frozen=True)
class SizeRequest:
    """What the size options asked for, before the system's node count is known."""

    size: str | None = None
    total_size: str | None = None
    min_size: str | None = None
    max_size: str | None = None
    factor: int | None = None
    step: str | None = None
    total: bool = False
    root: int | None = None
    shift: int | None = None

    @property
    def sweep(self) -> bool:
        """Whether a sweep (``-b``/``-e``) was asked for."""
        return self.min_size is not None or self.max_size is not None

    @property
    def explicit(self) -> bool:
        """Whether any size, root or shift was given (else the defaults: 4 MiB, root 0, shift 1)."""
        return (self.sweep or self.size is not None or self.total_size is not None or self.root is not None
                or self.shift is not None)

    def check(self) -> None:
        """Refuse contradictory options (before any work)."""
        given = [name for name, on in (("--size", self.size is not None), ("--total-size", self.total_size is not None),
                                       ("-b/-e", self.sweep)) if on]
        if len(given) > 1:
            raise click.UsageError(f"{' and '.join(given)} are mutually exclusive: give one size, one total size "
                                   "or one sweep")
        if self.sweep and (self.min_size is None or self.max_size is None):
            raise click.UsageError("a sweep needs both -b/--min-size and -e/--max-size")
        if not self.sweep and (self.factor is not None or self.step is not None or self.total):
            which = "-f/--step-factor" if self.factor is not None else "-i/--step-bytes" if self.step else "--total"
            hint = " (fibers per direction are -F/--fibers)" if self.factor is not None else ""
            raise click.UsageError(f"{which} needs a sweep: -b/--min-size and -e/--max-size{hint}")
        if self.factor is not None and self.step is not None:
            raise click.UsageError("-f/--step-factor and -i/--step-bytes are mutually exclusive")
        for text in (self.size, self.total_size, self.min_size, self.max_size, self.step):
            if text is not None:
                parse_size(text)

    def count(self) -> int:
        """How many sizes (rows per algorithm) the request makes."""
        if not self.sweep:
            return 1
        self.check()
        return len(self.walk().points())

    def walk(self) -> SizeSweep:
        """The sweep (``-b``, ``-e``, ``-f`` or ``-i``, ``--total``) as the library states it."""
        return SizeSweep(self.min_size, self.max_size, factor=self.factor, step=self.step, total=self.total)

    def sizes(self, collective: str, nodes: int) -> list[int]:
        """collsim's sizes (one per row) for ``collective`` on ``nodes`` nodes."""
        self.check()
        if self.total_size is not None:
            return [size_from_total(collective, nodes, parse_size(self.total_size))]
        if not self.sweep:
            return [parse_size(self.size or DEFAULT_SIZE)]
        return self.walk().sizes(collective, nodes)


def _placement_help(among: str | None) -> tuple[str, str]:
    """``--root`` and ``--shift``'s help: how the command applies them (one algorithm, or each of several)."""
    from ..core.collectives import TYPES
    rooted = [name for name, t in TYPES.items() if t.rooted]
    which = ", ".join(rooted[:-1]) + " and " + rooted[-1]
    if among is None:
        how = "refused if the algorithm cannot take it"
    else:
        how = (f"for every {among[:-1]}: one that cannot take it is skipped with a note"
               + (", or refused if named with -a" if among == "algorithms" else ""))
    return (f"Root node of {which} (default 0; a node id 0..N-1), {how}.",
            f"q of the circular shift collective (default 1; 1..N-1; -p q=3 is the same), {how}.")


def size_options(*, sweep: bool = True, among: str | None = None) -> Callable:
    """Add the size, total-size, sweep (if ``sweep``), root and shift options.

    The command receives one ``sizes`` argument, a :class:`SizeRequest`, instead of the
    individual options; contradictory options are refused before the command runs.
    """
    meaning = size_help()
    options = [
        click.option("--size", "-s", default=None, metavar="SIZE",
                     help=f"Message size in collsim's meaning (default {DEFAULT_SIZE}): {meaning}. {_UNITS}."),
        click.option("--total-size", default=None, metavar="SIZE",
                     help="nccl-tests' size instead of --size: the total buffer, N blocks for allgather, "
                          "reducescatter, alltoall, scatter and gather (N must divide it), the vector otherwise."),
    ]
    if sweep:
        options += [
            click.option("--min-size", "-b", default=None, metavar="SIZE",
                         help="Sweep from this size (as nccl-tests -b; collsim's size unless --total). "
                              "Unlike nccl-tests, 128M is 128*10^6 bytes: write 128MiB for 2^27."),
            click.option("--max-size", "-e", default=None, metavar="SIZE",
                         help="Sweep up to this size (as nccl-tests -e); one row per size."),
            click.option("--step-factor", "-f", "factor", type=int, default=None,
                         help="Multiply the size by this factor each step (as nccl-tests -f; default 2)."),
            click.option("--step-bytes", "-i", "step", default=None, metavar="SIZE",
                         help="Add this size each step instead (as nccl-tests -i)."),
            click.option("--total", is_flag=True,
                         help="Read -b/-e/-i as nccl-tests total buffers (N must divide each size)."),
        ]
    else:
        options.append(_retired_f)
    root_help, shift_help = _placement_help(among)
    options += [
        click.option("--root", type=int, default=None, help=root_help),
        click.option("--shift", type=int, default=None, help=shift_help),
    ]
    names = ("size", "total_size", "min_size", "max_size", "factor", "step", "total", "root", "shift")

    def decorator(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            request = SizeRequest(**{k: kwargs.pop(k, None) for k in names if k != "total"},
                                  total=bool(kwargs.pop("total", False)))
            request.check()
            kwargs["sizes"] = request
            return fn(*args, **kwargs)
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper
    return decorator


def _refuse_f(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None:
        raise click.UsageError("-f is no longer --fibers: write -F or --fibers for fibers per direction "
                               "(-f is nccl-tests' --step-factor on compare and simulate)")


_retired_f = click.option("-f", "retired_f", default=None, hidden=True, expose_value=False, callback=_refuse_f)


def retired_fibers_flag(fn: Callable) -> Callable:
    """Refuse ``-f`` on a command without sweeps, pointing to ``-F/--fibers``."""
    return _retired_f(fn)


def compare_rows(system: Any, collective: str, request: SizeRequest, *,
                 progress: Callable[[str], None] | None = None, **options: Any) -> tuple[list, list[str]]:
    """Run :func:`collsim.experiments.compare.compare` on every requested size (the library walks them)."""
    from ..experiments.compare import compare
    return compare(system, collective, sizes=request.sizes(collective, system.nodes), root=request.root,
                   shift=request.shift, progress=progress, **options)


def iter_schedules(algorithm: str, system: Any, collective: str, request: SizeRequest, *,
                   params: dict[str, Any], strategy: str | None = None, compact: bool = False):
    """Build an algorithm's schedule for each requested size (not verified), one at a time.

    ``compact``: in the smallest form collsim checks and times, as ``compare`` does
    (:func:`collsim.pipeline.build_compact`: symmetric or with repeated steps where that pays)."""
    from ..algorithms.placement import placement_params
    from ..pipeline import build, build_compact
    from ..systems import load_system
    from ..systems.options import SystemOptions
    strategy = strategy or (system.strategy if isinstance(system, SystemOptions) else "first-fit")
    sysm = load_system(system)  # once, for every size
    chosen = placement_params(algorithm, collective, params, root=request.root, shift=request.shift,
                              nodes=sysm.nodes)
    for size in request.sizes(collective, sysm.nodes):
        yield (build_compact if compact else build)(algorithm, sysm, collective, size, strategy=strategy, **chosen)


def schedule_facts(schedule) -> dict[str, Any]:
    """What a schedule's collective is, for result rows: sizes in both conventions, root and shift."""
    coll = schedule.collective
    return {"algorithm": schedule.algorithm, "collective": coll.name, "system": schedule.system.name,
            "nodes": coll.nodes, "size_bytes": coll.size_bytes,
            "total_bytes": total_bytes(coll.name, coll.nodes, coll.size_bytes), "root": coll.root,
            "shift": coll.shift}


def size_title(collective: str, nodes: int, size_bytes: int) -> str:
    """The size part of a title, saying what the size is: ``4MiB per node, total 4GiB``."""
    return describe_size(collective, nodes, size_bytes)
