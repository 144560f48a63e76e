"""Realise a logical schedule on an electrical network: route every transfer, one step per round.

Routing is the network's own (:meth:`collsim.kinds.network.network.Network.routes`): a deterministic
single-path rule, or with ``routing = "ecmp"`` an even split over the minimum-hop paths,
applied to all transfers at once; a per-transfer route hint (``LogicalSchedule.via``,
e.g. the spine an MLFM same-column transfer crosses) is passed to it as data.  A logical
schedule that carries explicit routes (``LogicalSchedule.routes``, e.g. the paths of
``synth-alltoall``'s flow LP) keeps them: the verifier still checks every path is a walk of links.
"""

from __future__ import annotations

from typing import Any, Mapping


from ...core.errors import UnsupportedError
from ...core.limits import check_memory
from .network import BYTES_PER_ROUTE_ENTRY
from .routes import LinkRoutes
from ...core.csr import dense_rank
from ...core.schedule import LogicalSchedule, Schedule


def realize_network(system, logical: LogicalSchedule, *, algorithm: str = "custom",
                    params: Mapping[str, Any] | None = None) -> Schedule:
    """Route every transfer on a network; logical round ``r`` becomes step ``r`` (empty rounds dropped).

    References
    ----------
    W. J. Dally, B. Towles, *Principles and Practices of Interconnection Networks*,
    Morgan Kaufmann 2004 (deterministic routing: dimension order, up/down).
    """
    if logical.band is not None and (logical.band > 1).any():
        raise UnsupportedError(f"{system.topology} networks have no wavelength bands; stripe > 1 applies to "
                               f"optical rings")
    if logical.routes is not None:  # the algorithm chose every path itself
        if not isinstance(logical.routes, LinkRoutes) or len(logical.routes) != len(logical.src):
            raise UnsupportedError(f"explicit routes must be LinkRoutes with one row per transfer "
                                   f"({len(logical.src)})")
        return _schedule(system, logical, logical.routes, algorithm, params)
    hops = system.distance(logical.src, logical.dst)
    if hops is not None:  # refuse before routing what would not fit
        entries = int(hops.sum())
        check_memory(entries * BYTES_PER_ROUTE_ENTRY, f"routing {len(logical.src)} transfers ({entries} link "
                     f"crossings) on the {system.topology} network of {system.nodes} nodes",
                     "use fewer nodes or a collective with fewer transfers")
    routes = system.routes(logical.src, logical.dst, via=logical.via)  # ECMP: several paths per transfer
    return _schedule(system, logical, routes, algorithm, params)


def _schedule(system, logical: LogicalSchedule, routes: LinkRoutes, algorithm: str, params) -> Schedule:
    """The physical schedule of ``logical`` with these routes: logical round ``r`` is step ``r``."""
    return Schedule(system=system, collective=logical.collective, algorithm=algorithm, params=dict(params or {}),
                    step=dense_rank(logical.round), round=logical.round, src=logical.src, dst=logical.dst,
                    chunk_ptr=logical.chunk_ptr, chunk_idx=logical.chunk_idx, reduce=logical.reduce,
                    routes=routes)
