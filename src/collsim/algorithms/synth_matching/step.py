"""One run of the link-chunk matching: who sends which pieces to whom in each step.

:func:`match` runs the rarest-first matching once for a fixed choice of pieces per block,
pieces per step and tie-break seed; :func:`collsim.algorithms.synth_matching.search.best_plan`
searches those choices, and :mod:`collsim.algorithms.synth_matching.build` turns the plan into a
schedule for each collective.

References
----------
W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301,
2023 (greedy link-chunk matching over a time-expanded network).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import UnsupportedError


@dataclass(frozen=True)
class Plan:
    """An all-gather found by the matching: who sends which pieces to whom in each step.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.
    """

    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    piece: np.ndarray
    steps: int
    predicted_time_s: float

def _direct_links(system):
    """End-node-to-end-node links: (src, dst, bandwidth, latency)."""
    lk = system.links
    n = system.nodes
    keep = (lk.src < n) & (lk.dst < n) & (lk.bandwidth_bytes_per_s > 0)
    return lk.src[keep], lk.dst[keep], lk.bandwidth_bytes_per_s[keep], lk.latency_s[keep]

def match(system, chunks: int, capacity: int, seed: int, block_bytes, *, reverse: bool = False,  # noqa: PLR0915
          root: int | None = None, owners: np.ndarray | None = None,
          stop_after_s: float = float("inf")) -> Plan | None:
    """Run the link-chunk matching once.

    References
    ----------
    W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
    Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301, 2023.
    """
    n = system.nodes
    src, dst, bw, lat = _direct_links(system)
    if reverse:
        src, dst = dst, src
    total = n * chunks if root is None else chunks
    cap = np.minimum(np.maximum(1, np.floor(capacity * (bw / bw.min()) + 1e-9)), total).astype(np.int64)
    order = np.lexsort((src, dst))
    src, dst, cap, bw, lat = src[order], dst[order], cap[order], bw[order], lat[order]
    rank = np.arange(len(dst)) - np.searchsorted(dst, dst)
    if root is not None:  # a broadcast: links leaving one node choose one after another, so they differ
        by_src = np.lexsort((dst, src))
        out_rank = np.empty(len(src), np.int64)
        out_rank[by_src] = np.arange(len(src)) - np.searchsorted(src[by_src], src[by_src])
        rank = rank * (int(out_rank.max()) + 1) + out_rank
    groups = [g for g in (np.flatnonzero(rank == j) for j in range(int(rank.max()) + 1)) if g.size]
    rng = np.random.default_rng(seed)
    has = np.zeros((n, total), bool)
    first = (np.full(chunks, root) if root is not None else np.repeat(np.arange(n), chunks) if owners is None
             else np.asarray(owners))
    has[first, np.arange(total)] = True
    holders = has.sum(axis=0)
    piece_bytes = (np.asarray(block_bytes(chunks), dtype=float) if callable(block_bytes)
                   else np.full(total, block_bytes / chunks))
    startup = float(getattr(system, "startup_s", None) or 0.0)
    rows, time_s, step = [], 0.0, 0
    big = np.iinfo(np.int64).max
    while True:
        missing = int(total * n - holders.sum())
        if missing == 0:
            break
        tie = rng.permutation(total)
        if root is None:  # the rarest-first order is fixed for the step: work in permuted columns
            pi = np.lexsort((tie, holders))
            before_p = has[:, pi]
            blocked_p = before_p.copy()  # held before the step, or brought in this step
        else:
            before = has.copy()
            taken = np.zeros_like(has)
        step_s, got = 0.0, 0
        for j in rng.permutation(len(groups)):
            ids = groups[j]
            u, v = src[ids], dst[ids]
            if root is None:
                cand = before_p[u]
                cand &= ~blocked_p[v]
                r, piece = _pick_in_order(cand, cap[ids])
                if not r.size:
                    continue
                blocked_p[v[r], piece] = True
                piece = pi[piece]
            else:
                cand = before[u] & ~before[v] & ~taken[v]
                score = np.where(cand, holders[None, :] * total + tie[None, :], big)
                width = int(cap[ids].max())
                if width == 1:
                    pick = score.argmin(axis=1)[:, None]
                elif width < total:
                    pick = np.argpartition(score, width - 1, axis=1)[:, :width]
                else:
                    pick = np.argsort(score, axis=1)
                ok = cand[np.arange(len(ids))[:, None], pick] & (np.arange(pick.shape[1])[None, :] < cap[ids][:, None])
                r, c = np.nonzero(ok)
                if not r.size:
                    continue
                piece = pick[r, c]
                taken[v[r], piece] = True
                holders = holders + np.bincount(piece, minlength=total)  # the next links pick other pieces
            rows.append((np.full(r.size, step), u[r], v[r], piece))
            sent = np.bincount(r, weights=piece_bytes[piece], minlength=len(ids))
            busy = np.bincount(r, minlength=len(ids)) > 0
            got += r.size
            step_s = max(step_s, float((sent[busy] / bw[ids][busy] + lat[ids][busy]).max()))
        if got == 0:  # cannot happen on a strongly connected graph, which the builder checks first
            raise UnsupportedError(f"the matching stalled in step {step}: no link could carry any of the "
                                   f"{missing} missing deliveries")
        if root is None:
            inverse = np.empty_like(pi)
            inverse[pi] = np.arange(total)
            has = blocked_p[:, inverse]
        else:
            has |= taken
        holders = has.sum(axis=0)
        time_s += step_s + startup
        step += 1
        if time_s > stop_after_s:
            return None
    cols = [np.concatenate(x) for x in zip(*rows)] if rows else [np.zeros(0, np.int64)] * 4
    return Plan(*cols, steps=step, predicted_time_s=time_s)


def _pick_in_order(cand: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first ``cap[row]`` candidates (columns are already in preference order).

    Returns the row and column of every pick.
    """
    width = int(cap.max())
    if width <= 8:  # a few first-true scans beat a running count over the whole row
        rows_all = np.arange(len(cap))
        out_r, out_c = [], []
        live = cand if width == 1 else cand.copy()
        for j in range(width):
            first = live.argmax(axis=1)
            r = rows_all[live[rows_all, first] & (cap > j)]
            if not r.size:
                break
            out_r.append(r)
            out_c.append(first[r])
            if j + 1 < width:
                live[r, first[r]] = False
        if not out_r:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r, c = np.concatenate(out_r), np.concatenate(out_c)
        order = np.lexsort((c, r))
        return r[order], c[order]
    if int(cap.min()) >= cand.shape[1]:  # flooding: every candidate goes
        return np.nonzero(cand)
    rank = np.cumsum(cand, axis=1, dtype=np.int32)
    return np.nonzero(cand & (rank <= cap[:, None]))


def _direct_plan(net, chunks: int, block_bytes, *, reverse: bool = False, root: int | None = None,
                 owners: np.ndarray | None = None) -> Plan:
    """One step on an overlay with every shift: each link carries its tail's own pieces.

    On a direct overlay every end node has a logical link to every other, so an all-gather (or a
    broadcast, ``root``) needs one step; the matching would find the same plan after scanning
    ``n**3`` cells.
    """
    n = net.nodes
    src, dst = net.links.src, net.links.dst
    bw, lat = net.links.bandwidth_bytes_per_s, net.links.latency_s
    if reverse:
        src, dst = dst, src
    total = n * chunks if root is None else chunks
    piece_bytes = (np.asarray(block_bytes(chunks), dtype=float) if callable(block_bytes)
                   else np.full(total, block_bytes / chunks))
    if root is not None:
        owner = np.zeros(total, np.int64) + root
    else:
        owner = np.repeat(np.arange(n), chunks) if owners is None else np.asarray(owners, np.int64)
    by_owner = np.argsort(owner, kind="stable")
    count = np.bincount(owner, minlength=n)
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    use = count[src] > 0
    src, dst, bw, lat = src[use], dst[use], bw[use], lat[use]
    per = count[src]
    link = np.repeat(np.arange(len(src)), per)
    offset = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    piece = by_owner[start[src][link] + offset]
    sent = np.bincount(link, weights=piece_bytes[piece], minlength=len(src))
    time_s = float((sent / bw + lat).max()) + net.startup_s if len(src) else 0.0
    return Plan(np.zeros(len(piece), np.int64), src[link], dst[link], piece,
                steps=1 if len(src) else 0, predicted_time_s=time_s)
