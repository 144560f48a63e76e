"""A system and the options that change it, stated once: :class:`SystemOptions`.

The command line builds one from its system options (``--system``, ``-n``, ``-w``, ``-F``,
``--link-bandwidth``, ``--link-latency``, ``--startup``, ``--radix``, ``--select``, ``-S``,
``--strategy``: :func:`collsim.cli.options.system_options`) and passes it to the command as one
argument; a sweep builds one per point (:mod:`collsim.experiments.sweep.point`);
:func:`collsim.systems.load_system` and the library functions that take a system accept it.
Values are typed (bytes/s, seconds), never text with units: the command line reads the units.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..core.errors import InputError


@dataclass(frozen=True)
class SystemOptions:
    """A system (preset, kind, TOML file, ``[system]`` table or System) with the overrides asked for."""

    system: Any = "paper"
    nodes: int | None = None
    wavelengths: int | None = None
    fibers: int | None = None
    link_bandwidth_bytes_per_s: float | None = None
    link_latency_s: float | None = None
    startup_s: float | None = None
    radix: int | None = None
    selection: tuple[int, ...] | None = None
    params: tuple[tuple[str, Any], ...] = ()
    strategy: str = "first-fit"

    def __post_init__(self) -> None:
        if not isinstance(self.params, tuple) or not all(isinstance(p, tuple) and len(p) == 2 for p in self.params):
            raise InputError(f"params must be a tuple of (name, value) pairs, not {self.params!r} "
                             "(SystemOptions.of takes a mapping)")

    @classmethod
    def of(cls, system: Any = "paper", **overrides: Any) -> "SystemOptions":
        """Options from a system and ``load_system``'s keyword overrides (None values are left out)."""
        base = system if isinstance(system, SystemOptions) else cls(system=system)
        named = {f.name for f in dataclasses.fields(cls)} - {"system", "params"}
        given = {k: v for k, v in overrides.items() if v is not None}
        extra = {**dict(base.params), **{k: v for k, v in given.items() if k not in named}}
        return dataclasses.replace(base, params=tuple(extra.items()),
                                   **{k: v for k, v in given.items() if k in named})

    def overrides(self) -> dict[str, Any]:
        """The keyword overrides of :func:`collsim.systems.load_system` (those given; not ``strategy``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("system", "params", "strategy") and getattr(self, f.name) is not None}
        out.update(self.params)
        return out


__all__ = ["SystemOptions"]
