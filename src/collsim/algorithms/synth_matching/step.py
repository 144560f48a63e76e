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

PREFERENCES = ("rarest", "fresh")
"""How a link picks among the pieces its head lacks (:func:`match`'s ``prefer``)."""


def match(system, chunks: int, capacity: int, seed: int, block_bytes, *, reverse: bool = False,  # noqa: PLR0915, C901
          root: int | None = None, owners: np.ndarray | None = None,
          stop_after_s: float = float("inf"), prefer: str = "rarest") -> Plan | None:
    """Run the link-chunk matching once.

    ``prefer="rarest"``: every link takes the pieces its head lacks that the fewest nodes hold
    (one order a step, ties by the seeded permutation).  ``"fresh"`` (all-gather and
    reduce-scatter): first the pieces that no other in-neighbour of the head holds and none was
    brought this step, then by rarity.  Rarest-first sends the same rare piece into a dense
    cluster over each of its entry links at once; the cluster then wastes its cut, and its nodes
    starve at the end (a 4-node clique with 4 links in, in a 32-node random 4-regular graph: 188
    crossings of the cut for the 112 pieces it needs, 47 steps where 31 would do).

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
    fresh = prefer == "fresh"
    if fresh:  # each node's out-neighbours, to mark what it brings as near for them
        by_tail = np.argsort(src, kind="stable")
        out_len = np.bincount(src, minlength=n)
        out_ptr = np.concatenate(([0], np.cumsum(out_len)))
    rng = np.random.default_rng(seed)
    has = np.zeros((n, total), bool)
    first = (np.full(chunks, root) if root is not None else np.repeat(np.arange(n), chunks) if owners is None
             else np.asarray(owners))
    has[first, np.arange(total)] = True
    holders = has.sum(axis=0)
    order = np.arange(total)  # for an all-gather ``has`` is kept with its columns in the last step's order
    bits = total >= BITS_FROM_PIECES
    piece_bytes = (np.asarray(block_bytes(chunks), dtype=float) if callable(block_bytes)
                   else np.full(total, block_bytes / chunks))
    startup = float(getattr(system, "startup_s", None) or 0.0)
    ahead = _Lookahead(n, dst, bw, lat, cap, piece_bytes, startup) if stop_after_s < float("inf") else None
    rows, time_s, step = [], 0.0, 0
    big = np.iinfo(np.int64).max
    while True:
        missing = int(total * n - holders.sum())
        if missing == 0:
            break
        tie = rng.permutation(total)
        if root is None:  # the rarest-first order is fixed for the step: work in permuted columns, as bits
            pi = np.lexsort((tie, holders))
            where = np.empty_like(order)
            where[order] = np.arange(total)  # piece p is column where[p] of ``has``
            before_p = np.take(has, where[pi], axis=1)  # C order, unlike has[:, ...]: packbits runs along rows
            if bits:
                before_p = _pack(before_p)
            blocked_p = before_p.copy()  # held before the step, or brought in this step
            if fresh:
                crowded, near = _crowded(before_p, src, dst, groups), np.zeros_like(before_p)
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
                pick = (lambda c, k: _pick_in_order(c, k, total)) if bits else _pick_in_cells
                if fresh:
                    r, piece = _pick_fresh(cand, cap[ids], crowded[v] | near[v], pick, bits)
                else:
                    r, piece = pick(cand, cap[ids])
                if not r.size:
                    continue
                if fresh:  # the head's out-neighbours may get these from it next step
                    heads = v[r]
                    cnt = out_len[heads]
                    tails = by_tail[np.repeat(out_ptr[heads], cnt) + np.arange(int(cnt.sum()))
                                    - np.repeat(np.cumsum(cnt) - cnt, cnt)]
                    _mark(near, dst[tails], np.repeat(piece, cnt), bits)
                if bits:
                    np.bitwise_or.at(blocked_p, (v[r], piece >> 6), np.left_shift(_ONE, (piece & 63).astype(np.uint64)))
                else:
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
        if root is None:  # the holdings stay in this step's order: the next step's order is taken from it
            has, order = (_unpack(blocked_p, total) if bits else blocked_p), pi
            holders = np.empty_like(holders)
            holders[pi] = has.sum(axis=0)
        else:
            has |= taken
            holders = has.sum(axis=0)
        time_s += step_s + startup
        step += 1
        if time_s > stop_after_s or (ahead is not None and ahead.beyond(has, stop_after_s - time_s)):
            return None
    cols = [np.concatenate(x) for x in zip(*rows)] if rows else [np.zeros(0, np.int64)] * 4
    return Plan(*cols, steps=step, predicted_time_s=time_s)


class _Lookahead:
    """A lower bound on the time a run still needs, from what each node lacks (the search's pair floors,
    :func:`~collsim.algorithms.synth_matching.search._pair_floors`, taken again after every step).

    Every step lasts at least the shortest latency plus the start-up, and a node ``v`` receiving
    ``b`` bytes in it at least ``b`` over its in-links' bandwidth more; ``v`` receives at most its
    in-links' capacities in pieces a step.  A node lacking ``p`` pieces lacks at least ``p`` times
    the smallest piece's bytes.  So a run whose elapsed time plus ``max_v (p_v x smallest piece /
    inbw_v + ceil(p_v / pieces_v a step) x (lat_min + startup))`` exceeds the limit cannot end
    within it: :func:`match` gives up on it at once instead of when it passes the limit, with the
    same result (the search keeps a run that ends within its limit, ties included).
    """

    def __init__(self, n, dst, bw, lat, cap, piece_bytes, startup) -> None:
        self.piece_s = float(piece_bytes.min()) / np.bincount(dst, weights=bw, minlength=n)
        self.per_step = np.bincount(dst, weights=cap, minlength=n)
        self.step_s = float(lat.min()) + startup

    def beyond(self, has: np.ndarray, left_s: float) -> bool:
        """Whether holdings ``has`` (node x piece, in any column order) need more than ``left_s``
        (with a relative margin of 1e-9, so that rounding never gives up on a tie)."""
        lack = has.shape[1] - np.count_nonzero(has, axis=1)
        live = lack > 0
        if not live.any():
            return False
        need_s = lack[live] * self.piece_s[live] + np.ceil(lack[live] / self.per_step[live]) * self.step_s
        return float(need_s.max()) > left_s + 1e-9 * abs(left_s) + 1e-15


BITS_FROM_PIECES = 256
"""From this many pieces in flight an all-gather's matching keeps its sets as bits (below, as booleans:
a row of a few words gains less from packing than the packing costs)."""

_ONE = np.uint64(1)
_WORD = np.dtype("<u8")
"""The matching's node x piece sets are bits, 64 pieces a little-endian word (bit ``j`` of word ``w``
is piece ``64 w + j``): the per-link gathers of every step move an eighth of the bytes of booleans."""


def _pack(cells: np.ndarray) -> np.ndarray:
    """Boolean rows as rows of 64-bit words (the padding bits past the last column are 0)."""
    rows, cols = cells.shape
    words = -(-cols // 64)
    packed = np.zeros((rows, words * 8), np.uint8)
    packed[:, : -(-cols // 8)] = np.packbits(cells, axis=1, bitorder="little")
    return packed.view(_WORD)


def _unpack(words: np.ndarray, cols: int) -> np.ndarray:
    """The boolean rows of :func:`_pack`'s words, ``cols`` columns."""
    return np.unpackbits(words.view(np.uint8), axis=1, count=cols, bitorder="little").view(bool)


def _crowded(before_p: np.ndarray, src: np.ndarray, dst: np.ndarray, groups) -> np.ndarray:
    """Per node and piece: held by at least two of its in-neighbours (as booleans, or as bits)."""
    one, two = np.zeros_like(before_p), np.zeros_like(before_p)
    for ids in groups:  # one in-link of each head a group: plain fancy updates
        held, head = before_p[src[ids]], dst[ids]
        two[head] |= one[head] & held
        one[head] |= held
    return two


def _mark(cells: np.ndarray, rows: np.ndarray, cols: np.ndarray, bits: bool) -> None:
    """Set ``cells[rows, cols]`` (booleans, or bits of 64-bit words)."""
    if bits:
        np.bitwise_or.at(cells, (rows, cols >> 6), np.left_shift(_ONE, (cols & 63).astype(np.uint64)))
    else:
        cells[rows, cols] = True


def _pick_fresh(cand: np.ndarray, cap: np.ndarray, stale: np.ndarray, pick, bits: bool):
    """Each row's picks among its candidates not ``stale`` first, then among the rest (each in column order)."""
    r1, c1 = pick(cand & ~stale, cap)
    left = cap - np.bincount(r1, minlength=len(cap))
    if not r1.size or not left.any():
        return (r1, c1) if r1.size or not left.any() else pick(cand, cap)
    rest = cand.copy()
    if bits:
        np.bitwise_and.at(rest, (r1, c1 >> 6), ~np.left_shift(_ONE, (c1 & 63).astype(np.uint64)))
    else:
        rest[r1, c1] = False
    r2, c2 = pick(rest, left)
    r, c = np.concatenate((r1, r2)), np.concatenate((c1, c2))
    order = np.lexsort((c, r))
    return r[order], c[order]


def _pick_in_cells(cand: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first ``cap[row]`` candidates, ``cand`` as booleans (columns in preference order)."""
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


def _pick_in_order(cand: np.ndarray, cap: np.ndarray, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's first ``cap[row]`` candidates (columns are already in preference order).

    ``cand`` holds each row's candidate columns as bits (:func:`_pack`), ``cols`` of them.
    Returns the row and column of every pick.
    """
    width = int(cap.max())
    if width <= 8:  # a few first-set-bit scans beat a running count over the whole row
        rows_all = np.arange(len(cap))
        out_r, out_c = [], []
        live = cand if width == 1 else cand.copy()
        for j in range(width):
            first = (live != 0).argmax(axis=1)           # the first word with a candidate left
            word = live[rows_all, first]
            ok = (word != 0) & (cap > j)
            r = rows_all[ok]
            if not r.size:
                break
            word, first = word[ok], first[r]
            low = word & (~word + _ONE)                    # its lowest set bit, alone
            bit = np.frexp(low.astype(np.float64))[1] - 1  # 2**b is exact in a double: frexp gives b + 1
            out_r.append(r)
            out_c.append(first * 64 + bit)
            if j + 1 < width:
                live[r, first] &= ~low
        if not out_r:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r, c = np.concatenate(out_r), np.concatenate(out_c).astype(np.int64)
        order = np.lexsort((c, r))
        return r[order], c[order]
    # wider: count each word's candidates, keep the words before a row's cap is reached, and in the
    # word that reaches it only its lowest bits
    count = np.bitwise_count(cand).astype(np.int64)
    before = np.cumsum(count, axis=1) - count            # a row's candidates in its earlier words
    room = cap[:, None] - before                         # picks a word may still make
    r, w = np.nonzero((count > 0) & (room > 0))          # in row-major order: by row, then column
    if not r.size:
        return r, w
    bits = _unpack(cand[r, w][:, None], 64)              # those words' bits, lowest first
    rank = np.cumsum(bits, axis=1, dtype=np.int32)
    k, b = np.nonzero(bits & (rank <= room[r, w][:, None]))
    return r[k], w[k] * 64 + b


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
