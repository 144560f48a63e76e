"""The rules of ``collsim tune``: its picks as contiguous size ranges, and the rules file's forms.

:func:`rules` merges neighbouring sizes with the same pick (algorithm and parameters)
into one range and puts each range's start at the estimated crossover
(:func:`crossovers`); :func:`rules_document` is the rules file: collsim's own form, or
MPICH's nested collective-selection form (docs/tune.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..._version import __version__
from ...core.errors import InputError
from ...core.totals import total_bytes
from ..sweep.store import canonical_json
from .run import Choice, Trial, Tuning, tune  # noqa: F401  (tune: the examples)

__all__ = ["Rule", "crossovers", "rules", "rules_document"]


@dataclass(frozen=True)
class Rule:
    """One size range and the schedule to use in it."""

    min_bytes: int
    max_bytes: int
    algorithm: str | None
    params: dict[str, Any] | None
    points: tuple[dict[str, Any], ...]
    min_total_bytes: int | None = None
    max_total_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The rule as JSON: its range, choice, worst efficiency over its points, and the points."""
        effs = [p["efficiency"] for p in self.points if p["efficiency"] is not None]
        return {"min_bytes": self.min_bytes, "max_bytes": self.max_bytes, "min_total_bytes": self.min_total_bytes,
                "max_total_bytes": self.max_total_bytes, "algorithm": self.algorithm, "params": self.params, "min_efficiency": min(effs) if effs else None, "points": list(self.points)}


def _key(t: Trial | None) -> tuple | None:
    return None if t is None else (t.algorithm, canonical_json(t.params))


def _best_time(tuning: Tuning, key: tuple, size: int) -> float | None:
    times = [t.time_s for t in tuning.trials if t.size_bytes == size and t.eligible and _key(t) == key]
    return min(times) if times else None


def crossovers(tuning: Tuning) -> list[dict[str, Any]]:
    """Where the pick changes between two measured sizes, estimated on the log-log lines.

    Between measured sizes ``a < b`` with winners X at ``a`` and Y at ``b``, X's and Y's
    times are interpolated linearly in log(size)-log(time); the crossover is where they
    meet, rounded up to a whole byte in ``(a, b]``.  If either has no time at both sizes
    the crossover is ``b``.
    """
    out = []
    for c0, c1 in zip(tuning.choices, tuning.choices[1:]):
        k0, k1 = _key(c0.best), _key(c1.best)
        if k0 == k1:
            continue
        a, b = c0.size_bytes, c1.size_bytes
        at = b
        if k0 is not None and k1 is not None:
            xa, xb, ya, yb = (_best_time(tuning, k0, a), _best_time(tuning, k0, b),
                              _best_time(tuning, k1, a), _best_time(tuning, k1, b))
            if None not in (xa, xb, ya, yb):
                d0, d1 = math.log(xa / ya), math.log(xb / yb)
                if d1 > d0:
                    f = min(1.0, max(0.0, -d0 / (d1 - d0)))
                    at = min(b, max(a + 1, math.ceil(math.exp(math.log(a) + f * (math.log(b) - math.log(a))))))
        out.append({"size_bytes": at, "before": c0.best and c0.best.choice, "after": c1.best and c1.best.choice})
    return out


def rules(tuning: Tuning, min_bytes: int | None = None, max_bytes: int | None = None) -> list[Rule]:
    """The picks as contiguous size ranges, equal winners (algorithm and parameters) merged.

    The ranges cover ``[min_bytes, max_bytes]`` without gaps or overlaps; a range changes
    at each :func:`crossovers` estimate.
    """
    sizes = [c.size_bytes for c in tuning.choices]
    lo = sizes[0] if min_bytes is None else int(min_bytes)
    hi = sizes[-1] if max_bytes is None else int(max_bytes)
    if lo > sizes[0] or hi < sizes[-1]:
        raise InputError(f"the rules must cover the measured sizes {sizes[0]}..{sizes[-1]} B, not {lo}..{hi} B")
    starts = [lo] + [c["size_bytes"] for c in crossovers(tuning)]
    groups: list[list[Choice]] = []
    for c in tuning.choices:
        if groups and _key(groups[-1][-1].best) == _key(c.best):
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for i, group in enumerate(groups):
        end = starts[i + 1] - 1 if i + 1 < len(groups) else hi
        best = group[0].best
        points = tuple({"size_bytes": c.size_bytes, "time_s": c.best and c.best.time_s,
                        "efficiency": c.best and c.best.efficiency, "runner_up": c.runner_up and c.runner_up.choice,
                        "runner_up_time_s": c.runner_up and c.runner_up.time_s} for c in group)
        n, coll = tuning.system.nodes, tuning.collective
        out.append(Rule(starts[i], end, best and best.algorithm, best and dict(best.params), points,
                        total_bytes(coll, n, starts[i]), total_bytes(coll, n, end + 1) - 1))
    return out


def rules_document(tuning: Tuning, min_bytes: int | None = None, max_bytes: int | None = None, *,
                   form: str = "collsim") -> dict[str, Any]:
    """The rules file's contents: deterministic JSON data (no wall-clock, no paths)."""
    found = rules(tuning, min_bytes, max_bytes)
    if form == "mpich":
        tree: dict[str, Any] = {}
        for i, r in enumerate(found):
            key = "avg_msg_size=any" if i == len(found) - 1 else f"avg_msg_size<={r.max_bytes}"
            tree[key] = {f"algorithm=collsim_{r.algorithm or 'none'}": dict(r.params or {})}
        return {f"collective={tuning.collective}": {"comm_type=intra": {f"comm_size<={tuning.system.nodes}": tree}}}
    if form != "collsim":
        raise InputError(f"rules form must be collsim or mpich, not {form!r}")
    return {"collsim_version": __version__, "system": tuning.system.describe(), "collective": tuning.collective,
            "strategy": tuning.strategy,
            "size": "size_bytes: collsim's size (a node's block for allgather, the vector for allreduce; "
                    "docs/units.md); ranges inclusive",
            "rules": [r.to_json() for r in found]}
