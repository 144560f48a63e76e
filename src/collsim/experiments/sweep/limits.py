"""A sweep's size guards: how many points a grid may have, and the memory its points take.

A grid's points are counted before any is made and refused above :data:`MAX_POINTS`
(``collsim sweep --max-points``); :func:`point_memory_bytes` estimates one point's peak
memory, and :func:`check_sweep` refuses, before anything runs, points that would not fit
in collsim's memory limit (:mod:`collsim.core.limits`), ``jobs`` of them at once.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ...algorithms import get_algorithm
from ...core.errors import CollsimError, InputError
from .store import canonical_json
from .point import _LINKS, _OPTICAL, _PLACED, _load, normalize_point

__all__ = ["MAX_POINTS", "check_sweep", "point_memory_bytes"]

MAX_POINTS = 100_000
"""The most points one sweep may have (``collsim sweep --max-points``): a point takes milliseconds
to minutes, so a bigger grid would run for hours or days before it finished."""


def _check_count(spec: Mapping[str, Any], systems: list, dims: dict, collectives: list, sizes: list,
                 algorithms: list, explicit: bool, grid_params: dict, max_points: int) -> int:
    """The grid's points counted before any is made (an upper bound); refused above ``max_points``."""
    total = 0
    for _, _, default, used in systems:
        combos = 1
        for k in used:
            combos *= len(dims[k])
        per = 0
        for coll in collectives:
            for algo in algorithms:
                spec_a = get_algorithm(algo)
                if not explicit and default is not None and not spec_a.supports(default, coll):
                    continue
                count = len(sizes)
                for k, values in grid_params.items():
                    if k in spec_a.params or k in _PLACED:
                        count *= len(values)
                per += count
        total += combos * per
    if total > max_points:
        shape = " x ".join(f"{len(v)} {k}" for k, v in spec.items() if k != "params" and isinstance(v, list))
        raise InputError(f"the grid has up to {total:,} points ({shape}{', and params' if grid_params else ''}), "
                         f"above the limit of {max_points:,} points of one sweep (a point takes milliseconds to "
                         f"minutes): split it into smaller sweeps, or raise the limit (collsim sweep --max-points)")
    return total



def point_memory_bytes(point: Mapping[str, Any], system: Any = None) -> int:
    """Estimated peak memory of running one point (build, verify, time; 0 if its system cannot be built).

    The fewest chunk deliveries any explicit schedule of the collective needs
    (:func:`~collsim.core.collective.min_deliveries`) times the peak bytes a build takes per
    delivery (:data:`~collsim.experiments.papers.beyond.build_pool.BUILD_BYTES_PER_DELIVERY`), plus the
    collective's own arrays (:func:`~collsim.core.collective.collective_memory_bytes`) and,
    on rings and lines, the cut lower bound's arcs (N x N bytes).
    """
    from ...core.collective import collective_memory_bytes, min_deliveries
    from ..papers.beyond.build_pool import BUILD_BYTES_PER_DELIVERY
    p = normalize_point(point)
    if system is None:
        try:
            system = _load(p)
        except CollsimError:
            return 0
    n, coll = int(system.nodes), p["collective"]
    est = collective_memory_bytes(coll, n, 1) + min_deliveries(coll, n, 1) * BUILD_BYTES_PER_DELIVERY
    est += system.bound_memory_bytes()  # e.g. a ring's or a line's cut arcs, N x N bytes
    return int(est)


def check_sweep(points: Iterable[Mapping[str, Any]], jobs: int = 1) -> None:
    """Refuse, before anything runs, points that would not fit in memory, ``jobs`` of them at once."""
    from ...core.limits import limit_error, memory_limit_bytes
    ests = []
    systems: dict[str, Any] = {}
    for point in points:
        p = normalize_point(point)
        key = canonical_json({k: p.get(k) for k in ("system", "system_config", *_OPTICAL, *_LINKS, "nodes")})
        if key not in systems:
            try:
                systems[key] = _load(p)
            except CollsimError:
                systems[key] = None
        ests.append((0 if systems[key] is None else point_memory_bytes(p, systems[key]), p))
    if not ests:
        return
    ests.sort(key=lambda e: -e[0])
    at_once = ests[:max(1, min(int(jobs), len(ests)))]
    total = sum(e for e, _ in at_once)
    if total <= memory_limit_bytes():
        return
    est, p = at_once[0]
    nodes = _load(p).nodes
    what = f"the point {p['system']}, N={nodes}, {p['collective']}, {p['algorithm']}"
    if len(at_once) > 1:
        raise limit_error(total, f"{len(at_once)} points at once (--jobs {jobs}), the largest {what} "
                                 f"(about {est / 2**30:.3g} GiB)",
                          "use --jobs 1, fewer nodes, or a larger COLLSIM_MEMORY_LIMIT if the machine has it")
    raise limit_error(est, what, "use fewer nodes, or a larger COLLSIM_MEMORY_LIMIT if the machine has it")
