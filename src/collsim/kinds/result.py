"""A result row: one algorithm's evaluated schedule, its common fields and its kind's part.

:func:`collsim.pipeline.evaluate` makes the rows (``collsim.pipeline.Result`` is this class).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..core.errors import InputError
from .base import models


@dataclass(frozen=True)
class Result:
    """One algorithm's evaluated schedule: common fields plus its kind's part.

    ``slots`` counts physical time slots; ``block_steps`` is the time in the papers'
    unit (one block on one channel, :func:`collsim.cost.block_steps`) and is what
    ``paper_steps`` compares with.  The part's fields read as attributes of the row
    (``r.feasible``, ``r.simulated_time_s``; another kind's field is an AttributeError); :meth:`to_json`
    flattens them, with no other kind's keys, and keeps ``steps`` as an alias of ``slots``.
    Times are seconds, bandwidths bytes/s.

    Parameters
    ----------
    algorithm, collective, system : str
        Algorithm registry name, canonical collective name and system name.
    nodes, size_bytes : int
        Node count and message size (collsim's size: a node's block, a pair's block or the vector,
        :mod:`collsim.core.totals`).
    total_bytes : int or None, optional
        nccl-tests' size of the same collective: the total buffer (``N * size_bytes`` for
        all-gather, reduce-scatter, all-to-all, scatter and gather, else ``size_bytes``).
    root : int or None, optional
        Root node of a rooted collective (None for the others).
    shift : int or None, optional
        q of a circular shift (None for the other collectives).
    rounds, slots : int
        Logical rounds and physical time slots.
    block_steps : float
        Time in the papers' unit.
    transfers, max_hops : int
        Number of transfers and the longest route in links.
    time_s : float
        The answer, never below ``lower_bound_s``: the optical step model on optical systems,
        the flow-simulated time on networks (``simulated_time_s``; the alpha-beta estimate is
        ``alpha_beta_time_s``).
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
    part : dataclass or None, optional
        The system kind's fields (an instance of its model's ``part_class``).

    Examples
    --------
    >>> from collsim.pipeline import run
    >>> from collsim.systems import load_system
    >>> r = run("ring", load_system("ring", nodes=4), "allgather", 1024)
    >>> r.verified, r.slots, type(r.part).__name__, r.max_link_load, hasattr(r, "wavelengths")
    (True, 3, 'NetworkPart', 1, False)
    >>> r.to_json()["steps"], "wavelengths" in r.to_json()
    (3, False)
    """

    algorithm: str
    collective: str
    system: str
    nodes: int
    size_bytes: int
    total_bytes: int | None = field(default=None, kw_only=True)  # kw_only: listed here, after size_bytes
    root: int | None = field(default=None, kw_only=True)
    shift: int | None = field(default=None, kw_only=True)
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
    part: Any = None

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
        raise AttributeError(f"a {type(part).__name__ if part is not None else 'kind-less'} result row has no {name!r}")

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-able dict: the common keys and its own kind's part, no other kind's keys
        (so registering a kind changes no other kind's output; tables and CSV take the union of the
        rows they print)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "part"}
        out["steps"] = self.slots
        if self.part is not None:
            out.update(asdict(self.part))
        return out


VERIFICATION = ("passed", "failed", "not run")
"""What a result's ``verification`` says: the verifier ran and passed it, ran and failed it, or did not run."""



def part_keys() -> tuple[str, ...]:
    """The keys every kind's part adds to a row, in the kinds' registration order (each once).

    Returns
    -------
    tuple of str
        The union of the fields of every registered model's ``part_class``: the keys a table or
        CSV of rows of several kinds may hold (each row carries only its own kind's).

    Examples
    --------
    >>> keys = part_keys()
    >>> "wavelengths" in keys and "simulated_time_s" in keys and keys.count("time_model")
    1
    """
    classes = tuple(m.part_class for m in models() if m.part_class is not None)
    if _KEYS.get("classes") != classes:  # a kind registered since the last call
        _KEYS["classes"] = classes
        _KEYS["keys"] = tuple(dict.fromkeys(f.name for cls in classes for f in fields(cls)))
    return _KEYS["keys"]


_KEYS: dict[str, Any] = {}

__all__ = ["VERIFICATION", "Result", "part_keys"]
