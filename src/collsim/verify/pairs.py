"""Compact ids for the (node, chunk) pairs a schedule can touch.

The data-flow verifier indexes its state by :class:`PairIndex` ids, in one of two
modes, whichever :func:`plan` estimates smaller:

* *sorted*: an id for every pair that can matter (the explicit pre- and
  postcondition pairs of the collective and the (dst, chunk) and (src, chunk)
  of every chunk delivery, a *row*), found with one sort of ``int64`` keys
  ``node * chunks + chunk``.  Memory grows with the deliveries, not with
  nodes x chunks (all-to-all: N^2 deliveries among N^3 pairs).
* *direct*: the id is the key itself, over all nodes x chunks pairs, when that
  table is no bigger than the sorted index would be (all-gather, all-reduce:
  about every pair receives a delivery anyway).

Either way ids follow the keys (node-major), so comparing ids compares
(node, chunk).  In sorted mode, pairs of "every node" chunks that no delivery
touches are never materialised: :func:`first_absent` checks them per chunk.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..core.schedule import Schedule

INDEX = np.int64
KEY_SPACE = 2**62
"""Keys ``node * chunks + chunk`` are used directly below this; above it chunk ids are
rank-compressed to the chunks that appear."""


_FORCE_DIRECT: bool | None = None  # tests: force a mode
BLOCK_ROWS = 1 << 20
"""Rows processed at once where rows can be processed in blocks."""


def plan(nodes: int, chunks: int, pre_pairs: int, deliveries: int, post_pairs: int,
         state_bytes: int, copies: bool = False) -> tuple[bool, int, int]:
    """Choose the index mode and estimate the verifier's peak bytes, before allocating."""
    k = pre_pairs + 2 * deliveries + post_pairs
    pairs = nodes * chunks
    sort_index, key_index = 30 * k + 24 * deliveries, 8 * k + 24 * deliveries + 17 * pairs
    if copies:
        key_index = 48 * min(deliveries, BLOCK_ROWS) + 16 * (pre_pairs + post_pairs)
    by_sort = sort_index + min(k, pairs) * state_bytes
    by_key = key_index + pairs * state_bytes
    direct = (by_key <= by_sort and pairs < KEY_SPACE) if _FORCE_DIRECT is None else (
        _FORCE_DIRECT and pairs < KEY_SPACE)
    return (True, key_index, by_key) if direct else (False, sort_index, by_sort)


class PairIndex:
    """Ids of the (node, chunk) pairs a schedule and its collective mention.

    Elements are, in this order: the explicit precondition pairs, the (dst, chunk)
    of every row, the (src, chunk) of every row, the explicit postcondition pairs.
    Equal pairs share an id (a *group*); ids ascend with the key
    ``node * width + chunk`` (node-major).  In sorted mode the sort is stable, so a
    group's first element is a precondition pair if the pair is pre-held, else
    its earliest write if it is ever written.

    Attributes
    ----------
    groups : int
        Number of ids.
    key : numpy.ndarray or None
        Key of each group, ascending (None in direct mode: the id is the key).
    first : numpy.ndarray or None
        Element position of each group's first element (sorted mode).
    pre, write, read, post : numpy.ndarray
        Group of each explicit pre pair, row destination, row source, explicit post pair.
    row_t : numpy.ndarray
        Transfer of each row.
    p, r, q : int
        Numbers of explicit pre pairs, rows and explicit post pairs.
    """

    def __init__(self, s: Schedule, direct: bool = False) -> None:
        c = s.collective
        n, nc = c.nodes, c.chunks
        p, r, q = c.pre.num_explicit, len(s.chunk_idx), c.post.num_explicit
        self.p, self.r, self.q = p, r, q
        # transfers and, in direct mode, pair keys as int32 while they fit: the index's largest arrays
        self.row_t = np.repeat(np.arange(len(s.src), dtype=np.int32 if len(s.src) < 2**31 else INDEX),
                               np.diff(s.chunk_ptr))
        ch = s.chunk_idx
        self.direct = direct
        if direct or n * nc < KEY_SPACE:
            self.universe, self.width = None, nc
        else:  # rank-compress chunk ids to the ones that appear
            u = np.concatenate([c.pre.explicit()[1], ch, c.post.explicit()[1]])
            u.sort()
            self.universe = u[np.concatenate(([True], u[1:] != u[:-1]))] if u.size else u
            self.width = max(len(self.universe), 1)
            if n * self.width >= 2**62:
                raise InputError(f"{n} nodes x {self.width} chunks are too many pairs to index")
        k = p + 2 * r + q
        pbits = max(k - 1, 1).bit_length()
        packed = not direct and (n * self.width - 1).bit_length() + pbits <= 63
        keys = np.empty(k, dtype=np.int32 if direct and n * self.width < 2**31 else INDEX)
        parts = (lambda: c.pre.explicit(), lambda: (s.dst[self.row_t], ch), lambda: (s.src[self.row_t], ch),
                 lambda: c.post.explicit())
        for lo, part in zip((0, p, p + r, p + 2 * r), parts):  # one part's pairs alive at a time
            node, chunk = part()
            seg = keys[lo:lo + len(chunk)]
            np.multiply(node, self.width, out=seg)
            del node
            seg += chunk if self.universe is None else np.searchsorted(self.universe, chunk)
            if packed:  # the element's position rides in the low bits: a plain sort is then stable
                seg <<= pbits
                seg |= np.arange(lo, lo + len(seg), dtype=INDEX)
            del chunk, seg
        if direct:
            self.groups, self.key, self.first = n * nc, None, None
            self.pre, self.write = keys[:p], keys[p:p + r]
            self.read, self.post = keys[p + r:p + 2 * r], keys[p + 2 * r:]
            return
        if packed:
            keys.sort()
            order = np.empty(k, dtype=np.int32 if k < 2**31 else INDEX)
            np.bitwise_and(keys, (1 << pbits) - 1, out=order, casting="unsafe")
            keys >>= pbits
            sk = keys
        else:
            order = np.argsort(keys, kind="stable")
            sk = keys[order]
        del keys
        new = np.empty(k, dtype=bool)
        new[:1] = True
        np.not_equal(sk[1:], sk[:-1], out=new[1:])
        self.key = sk[new]
        del sk
        self.first = order[new]
        self.groups = len(self.key)
        gdt = np.int32 if self.groups < 2**31 else INDEX
        gid = np.cumsum(new, dtype=gdt)
        gid -= 1
        del new
        grp = np.empty(k, dtype=gdt)
        grp[order] = gid
        del gid, order
        self.pre = grp[:p]
        self.write = grp[p:p + r]
        self.read = grp[p + r:p + 2 * r]
        self.post = grp[p + 2 * r:]

    def encode(self, node: np.ndarray, chunk: np.ndarray) -> np.ndarray:
        """Keys of the pairs (node[i], chunk[i])."""
        if self.universe is not None:
            chunk = np.searchsorted(self.universe, chunk)
        return np.asarray(node, dtype=INDEX) * self.width + chunk

    def _ids(self, g) -> np.ndarray:
        return np.arange(self.groups, dtype=INDEX)[g] if isinstance(g, slice) else np.asarray(g)

    def node_of(self, g) -> np.ndarray:
        """Node of groups ``g`` (an index array or a slice)."""
        if self.key is None:
            return self._ids(g) // self.width
        return self.key[g] // self.width

    def chunk_of(self, g) -> np.ndarray:
        """Chunk of groups ``g`` (an index array or a slice)."""
        rank = self._ids(g) % self.width if self.key is None else self.key[g] % self.width
        return rank if self.universe is None else self.universe[rank]

    def pre_held(self) -> np.ndarray:
        """Whether each group is an explicit precondition pair."""
        if self.first is not None:
            return self.first < self.p
        held = np.zeros(self.groups, dtype=bool)
        held[self.pre] = True
        return held

    def first_write_row(self) -> np.ndarray:
        """Row of each group's earliest write (rows are in step order), or -1."""
        if self.first is not None:
            f = self.first
            return np.where((f >= self.p) & (f < self.p + self.r), f - self.p, -1)
        row = np.full(self.groups, self.r, dtype=INDEX)
        np.minimum.at(row, self.write, np.arange(self.r, dtype=INDEX))
        row[row == self.r] = -1
        return row


def stable_order(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, ids[order])``: a stable ascending order of non-negative ``ids``.

    The position rides in the low bits of one ``int64`` key, so a plain (SIMD) sort is stable;
    several times faster than ``argsort(kind="stable")`` on millions of ids.

    >>> stable_order(np.array([3, 1, 3, 0]))[0].tolist()
    [3, 1, 0, 2]
    """
    k = len(ids)
    if k < 2 or bool((ids[1:] >= ids[:-1]).all()):  # already in order (ring-like steps): nothing to sort
        return np.arange(k), ids
    top = int(ids.max())
    pbits = max(k - 1, 1).bit_length()
    if top.bit_length() + pbits > 62:
        order = np.argsort(ids, kind="stable")
        return order, ids[order]
    key = ids.astype(INDEX) << pbits
    key |= np.arange(k, dtype=INDEX)
    key.sort()
    order = key & ((1 << pbits) - 1)
    key >>= pbits
    return order, key.astype(ids.dtype, copy=False)


def first_absent(nodes: int, every_post: np.ndarray, thr: np.ndarray, pnode: np.ndarray,
                 pchunk: np.ndarray) -> tuple[int, int] | None:
    """First failing untouched pair of the every-node postcondition chunks, node-major.

    A pair (v, c) with ``every_post[c]`` that is not among the present pairs keeps
    its initial state; that state fails the postcondition iff ``v >= thr[c]``.
    """
    cand = every_post & (thr < nodes)
    if not cand.any():
        return None
    need = np.cumsum(np.bincount(thr[cand], minlength=nodes))[:nodes]  # failing chunks per node
    sel = cand[pchunk] & (thr[pchunk] <= pnode)
    have = np.bincount(pnode[sel], minlength=nodes)[:nodes]
    bad = np.flatnonzero(have < need)
    if not bad.size:
        return None
    v = int(bad[0])
    miss = cand & (thr <= v)
    miss[pchunk[pnode == v]] = False
    return v, int(np.flatnonzero(miss)[0])
