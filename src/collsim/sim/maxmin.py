"""Max-min fair rates of flows over capacitated links, by progressive filling.

A *flow* crosses a set of directed links; the flow–link incidence is a CSR
pair ``(flow_ptr, flow_links)``: flow ``f`` crosses
``flow_links[flow_ptr[f]:flow_ptr[f+1]]``.  An allocation is *max-min fair*
when no flow's rate can grow without shrinking the rate of a flow that is no
faster; it is unique, and progressive filling (water-filling) computes it:

1. every unfrozen flow's rate is the current water level; a link's
   *fair share* is ``remaining capacity / unfrozen flows crossing it``;
2. the link with the smallest fair share is a *bottleneck*: every unfrozen
   flow crossing it (and crossing any other link with the same share) is
   frozen at that share, and its rate is taken off the remaining capacity of
   every link it crosses;
3. repeat until every flow is frozen.

Two shortcuts keep it fast without changing the result.  A flow that is the
only unfrozen flow on every link it crosses ("isolated") would rise until its
tightest link saturates whatever the others do, so it is frozen at once at
the smallest remaining capacity on its route; when every flow is isolated
(the usual case for a well-designed schedule step, e.g. neighbour exchange or
a shift) the whole call is one ``bincount`` and one ``minimum.reduceat``.
And link ids are renumbered to the links actually used when the capacity
table is much larger than the incidence.

Complexity: each round costs O(E + L) numpy work (E incidence entries of the
still-unfrozen flows, L used links: one ``bincount``, one gather and one
``reduceat``); frozen entries are dropped, so the work shrinks as it goes.
The number of rounds is at most the number of distinct bottleneck levels
plus one, so at most ``min(F, L) + 1``; in the worst case O((E + L) min(F, L)),
and O(E + L) when the flows share no link or share it symmetrically.  Memory
is O(E + L + F).  The result is exact up to floating-point rounding: link
shares within a relative 1e-12 of the minimum are treated as tied.
"""

from __future__ import annotations

import numpy as np

#: relative tolerance under which two fair shares count as the same level
TIE_RTOL = 1e-12


def _segment_starts(owner: np.ndarray) -> np.ndarray:
    """Start offsets of the runs of equal values in a sorted ``owner`` array."""
    if owner.size == 0:
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))


def max_min_rates(flow_ptr: np.ndarray, flow_links: np.ndarray, capacity: np.ndarray,
                  active: np.ndarray | None = None, copies: np.ndarray | None = None) -> np.ndarray:
    """Max-min fair rate of every flow (progressive filling, vectorised).

    References
    ----------
    D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall, 1992, ch. 6
    (max-min fair flow control and its computation by progressive filling).
    """
    flow_ptr = np.asarray(flow_ptr, dtype=np.int64)
    flow_links = np.asarray(flow_links, dtype=np.int64)
    capacity = np.asarray(capacity, dtype=np.float64)
    nflows = len(flow_ptr) - 1
    rates = np.zeros(nflows)
    lengths = np.diff(flow_ptr)
    act = np.ones(nflows, bool) if active is None else np.asarray(active, dtype=bool)
    rates[act & (lengths == 0)] = np.inf
    flows = np.flatnonzero(act & (lengths > 0))
    if flows.size == 0:
        return rates
    # incidence of the competing flows: entry -> (local flow id, link id), sorted by flow
    if flows.size == nflows:
        links = flow_links[flow_ptr[0]:flow_ptr[-1]]
        lens = lengths
    else:
        lens = lengths[flows]
        total = int(lens.sum())
        base = np.repeat(flow_ptr[flows] - (np.cumsum(lens) - lens), lens)
        links = flow_links[base + np.arange(total)]
    owner = np.repeat(np.arange(flows.size), lens)
    weight = None if copies is None else np.asarray(copies, dtype=np.float64)[flows]
    nlinks = len(capacity)
    if nlinks > 2 * links.size:  # renumber to the used links only
        mark = np.zeros(nlinks, bool)
        mark[links] = True
        used = np.flatnonzero(mark)
        links = (np.cumsum(mark) - 1)[links]
        rem = capacity[used]
        nlinks = used.size
    else:
        rem = capacity.copy()
    local = np.zeros(flows.size)
    level = 0.0
    while links.size:
        w = None if weight is None else weight[owner]
        count = np.bincount(links, weights=w, minlength=nlinks)
        # isolated flows: alone (with their copies) on every link they still cross -> tightest remaining link
        shared = count[links] > (1 if w is None else w * (1.0 + TIE_RTOL))
        n_shared = np.bincount(owner[shared], minlength=flows.size) if shared.any() else None
        starts = _segment_starts(owner)
        seg_owner = owner[starts]
        alone = rem[links] if w is None else rem[links] / w
        if n_shared is None:
            local[seg_owner] = np.minimum.reduceat(alone, starts)
            break
        iso = n_shared[seg_owner] == 0
        if iso.any():
            local[seg_owner[iso]] = np.minimum.reduceat(alone, starts)[iso]
            keep = shared | (n_shared[owner] > 0)  # entries of non-isolated flows
            links, owner = links[keep], owner[keep]
            w = None if weight is None else weight[owner]
            count = np.bincount(links, weights=w, minlength=nlinks)
        # bottleneck step: smallest fair share among the links still in use
        inuse = count > 0
        share = np.full(nlinks, np.inf)
        share[inuse] = rem[inuse] / count[inuse]
        level = max(level, float(share.min()))  # the water level never falls
        bottleneck = share <= level * (1.0 + TIE_RTOL)
        frozen = np.zeros(flows.size, bool)
        frozen[owner[bottleneck[links]]] = True
        local[frozen] = level
        done = frozen[owner]
        rem -= level * np.bincount(links[done], weights=None if w is None else w[done], minlength=nlinks)
        np.maximum(rem, 0.0, out=rem)
        links, owner = links[~done], owner[~done]
    rates[flows] = local
    return rates


def check_max_min(flow_ptr: np.ndarray, flow_links: np.ndarray, capacity: np.ndarray,
                  rates: np.ndarray, rtol: float = 1e-9) -> bool:
    """Whether ``rates`` is feasible and max-min fair (every flow has a bottleneck link).

    A flow's bottleneck is a saturated link on its route on which no flow is
    faster; an allocation is max-min fair iff it is feasible and every flow has
    one.  Used by the tests as an independent check.

    References
    ----------
    D. Bertsekas, R. Gallager, "Data Networks", 2nd ed., Prentice Hall, 1992, ch. 6
    (max-min fair flow control and its computation by progressive filling).
    """
    lens = np.diff(flow_ptr)
    owner = np.repeat(np.arange(len(lens)), lens)
    links = np.asarray(flow_links)[flow_ptr[0]:flow_ptr[-1]]
    load = np.bincount(links, weights=rates[owner], minlength=len(capacity))
    if (load > capacity * (1 + rtol)).any():
        return False
    fastest = np.zeros(len(capacity))
    np.maximum.at(fastest, links, rates[owner])
    ok = (load[links] >= capacity[links] * (1 - rtol)) & (rates[owner] >= fastest[links] * (1 - rtol))
    has = np.zeros(len(lens), bool)
    has[owner[ok]] = True
    return bool(has.all())
