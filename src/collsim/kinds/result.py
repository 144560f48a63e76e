"""A result row: one algorithm's evaluated schedule, its common fields and its kind's part.

:func:`collsim.pipeline.evaluate` makes the rows (``collsim.pipeline.Result`` is this class).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..core.errors import InputError
from .network import NetworkPart
from .optical_ring import OpticalPart


@dataclass(frozen=True)
class Result:
    """One algorithm's evaluated schedule: common fields plus its kind's part.

    ``slots`` counts physical time slots; ``block_steps`` is the time in the papers'
    unit (one block on one channel, :func:`collsim.cost.block_steps`) and is what
    ``paper_steps`` compares with.  The part's fields read as attributes of the row
    (``r.feasible``, ``r.simulated_time_s``); :meth:`to_json` flattens them, gives
    the other kind's keys as null, and keeps ``steps`` as an alias of ``slots``.
    Times are seconds, bandwidths bytes/s.

    Parameters
    ----------
    algorithm, collective, system : str
        Algorithm registry name, canonical collective name and system name.
    nodes, size_bytes : int
        Node count and message size (meaning per collective: :mod:`collsim.core.collective`).
    rounds, slots : int
        Logical rounds and physical time slots.
    block_steps : float
        Time in the papers' unit.
    transfers, max_hops : int
        Number of transfers and the longest route in links.
    time_s : float
        The answer, never below ``lower_bound_s``: the optical step model on optical systems,
        the flow-simulated time on networks (``simulated_time_s``; the contention-unaware
        alpha-beta estimate is ``alpha_beta_time_s``).
    lower_bound_s : float
        No schedule of the collective is faster (:func:`collsim.pipeline.lower_bound_s`).
    efficiency : float
        ``lower_bound_s / time_s``.
    algbw_bytes_per_s, busbw_bytes_per_s : float
        nccl-tests' algorithm and bus bandwidths at ``time_s``.
    verified : bool
        True only if the verifier ran on the schedule and passed it.
    error : str or None
        The verifier's error when it failed the schedule.
    verification : str, optional
        ``"passed"``, ``"failed"`` or ``"not run"`` (:func:`collsim.pipeline.evaluate` with ``check=False``);
        ``verified`` is ``verification == "passed"``.
    params : dict, optional
        The algorithm's parameters recorded in the schedule.
    part : OpticalPart or NetworkPart or None, optional
        The system kind's fields.

    Examples
    --------
    >>> from collsim.pipeline import run
    >>> from collsim.systems import load_system
    >>> r = run("ring", load_system("ring", nodes=4), "allgather", 1024)
    >>> r.verified, r.slots, type(r.part).__name__, r.max_link_load, r.wavelengths
    (True, 3, 'NetworkPart', 1, None)
    >>> r.to_json()["steps"], r.to_json()["wavelengths"]
    (3, None)
    """

    algorithm: str
    collective: str
    system: str
    nodes: int
    size_bytes: int
    rounds: int
    slots: int
    block_steps: float
    transfers: int
    max_hops: int
    time_s: float
    lower_bound_s: float
    efficiency: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    verified: bool
    error: str | None
    verification: str = "not run"
    params: dict[str, Any] = field(default_factory=dict)
    part: OpticalPart | NetworkPart | None = None

    def __post_init__(self) -> None:
        if self.verification not in VERIFICATION:
            raise InputError(f"verification must be one of {', '.join(VERIFICATION)}, not {self.verification!r}")
        if self.verified != (self.verification == "passed"):
            raise InputError(f"a result with verification {self.verification!r} cannot say verified={self.verified}")

    @property
    def steps(self) -> int:
        """Alias of ``slots`` (physical time slots)."""
        return self.slots

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "part":
            raise AttributeError(name)
        part = self.part
        if part is not None and name in {f.name for f in fields(part)}:
            return getattr(part, name)
        if name in _PART_KEYS:
            return None  # the other kind's field
        raise AttributeError(name)

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-able dict (every key of both parts; the other kind's are null)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "part"}
        out["steps"] = self.slots
        out.update(dict.fromkeys(_PART_KEYS))
        if self.part is not None:
            out.update(asdict(self.part))
        return out


VERIFICATION = ("passed", "failed", "not run")
"""What a result's ``verification`` says: the verifier ran and passed it, ran and failed it, or did not run."""

_PART_KEYS = tuple(dict.fromkeys(f.name for cls in (OpticalPart, NetworkPart) for f in fields(cls)))


__all__ = ["VERIFICATION", "Result"]
