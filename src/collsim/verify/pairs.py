"""Compact ids for the (node, chunk) pairs a schedule can touch.

The data-flow verifier does not index its state by a dense nodes x chunks
table.  :class:`PairIndex` gives an id to every pair that can matter: the
explicit pre- and postcondition pairs of the collective and the (dst, chunk)
and (src, chunk) of every chunk delivery (a *row*: one chunk of one transfer).
One stable sort of ``int64`` keys ``node * chunks + chunk`` groups equal pairs;
ids follow the keys (node-major), so comparisons by id are comparisons by
(node, chunk).  Pairs of "every node" chunks that no delivery touches are never
materialised: :func:`first_absent` checks them per chunk.
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InputError
from ..core.schedule import Schedule

INDEX = np.int64
KEY_SPACE = 2**62
"""Keys ``node * chunks + chunk`` are used directly below this; above it chunk ids are
rank-compressed to the chunks that appear."""


def grouping_bytes(pre_pairs: int, deliveries: int, post_pairs: int) -> int:
    """Peak bytes :class:`PairIndex` needs.

    Parameters
    ----------
    pre_pairs, deliveries, post_pairs : int
        Explicit precondition pairs, chunk deliveries (rows), explicit postcondition pairs.

    Returns
    -------
    int
        About 30 bytes per element (keys, sort order, sorted keys, flags, group ids)
        plus 24 per row (its transfer and endpoints while keys are built).
    """
    k = pre_pairs + 2 * deliveries + post_pairs
    return 30 * k + 24 * deliveries


class PairIndex:
    """Compact ids of the (node, chunk) pairs a schedule and its collective mention.

    Elements are, in this order: the explicit precondition pairs, the (dst, chunk)
    of every row, the (src, chunk) of every row, the explicit postcondition pairs.
    Equal pairs form one *group*; groups are numbered by ascending key
    ``node * width + chunk`` (node-major) and, the sort being stable, a group's
    first element is a precondition pair if the pair is pre-held, else its
    earliest write if it is ever written.

    Parameters
    ----------
    s : Schedule
        The schedule (chunk ids already range-checked).

    Attributes
    ----------
    groups : int
        Number of distinct pairs.
    key : numpy.ndarray
        Key of each group, ascending.
    first : numpy.ndarray
        Element position of each group's first element.
    pre, write, read, post : numpy.ndarray
        Group of each explicit pre pair, row destination, row source, explicit post pair.
    row_t : numpy.ndarray
        Transfer of each row.
    p, r, q : int
        Numbers of explicit pre pairs, rows and explicit post pairs.
    """

    def __init__(self, s: Schedule) -> None:
        c = s.collective
        n, nc = c.nodes, c.chunks
        pre_n, pre_c = c.pre.explicit()
        post_n, post_c = c.post.explicit()
        p, r, q = len(pre_n), len(s.chunk_idx), len(post_n)
        self.p, self.r, self.q = p, r, q
        self.row_t = np.repeat(np.arange(len(s.src), dtype=INDEX), np.diff(s.chunk_ptr))
        ch = s.chunk_idx
        if n * nc < KEY_SPACE:
            self.universe, self.width = None, nc
        else:  # rank-compress chunk ids to the ones that appear
            u = np.concatenate([pre_c, ch, post_c])
            u.sort()
            self.universe = u[np.concatenate(([True], u[1:] != u[:-1]))] if u.size else u
            self.width = max(len(self.universe), 1)
            if n * self.width >= 2**62:
                raise InputError(f"{n} nodes x {self.width} chunks are too many pairs to index")
        k = p + 2 * r + q
        keys = np.empty(k, dtype=INDEX)
        keys[:p] = self.encode(pre_n, pre_c)
        keys[p:p + r] = self.encode(s.dst[self.row_t], ch)
        keys[p + r:p + 2 * r] = self.encode(s.src[self.row_t], ch)
        keys[p + 2 * r:] = self.encode(post_n, post_c)
        del pre_n, pre_c, post_n, post_c
        pbits = max(k - 1, 1).bit_length()
        if (n * self.width - 1).bit_length() + pbits <= 63:
            # stable sort without argsort: the element position rides in the low bits
            keys <<= pbits
            keys |= np.arange(k, dtype=INDEX)
            keys.sort()
            order = keys & ((1 << pbits) - 1)
            keys >>= pbits
            sk = keys
        else:
            order = np.argsort(keys, kind="stable")
            sk = keys[order]
        del keys
        new = np.empty(k, dtype=bool)
        new[:1] = True
        np.not_equal(sk[1:], sk[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        self.key = sk[starts]
        del sk
        self.groups = len(starts)
        gdt = np.int32 if self.groups < 2**31 else INDEX
        gid = np.cumsum(new, dtype=gdt)
        gid -= 1
        del new
        grp = np.empty(k, dtype=gdt)
        grp[order] = gid
        del gid
        self.first = order[starts]
        del order, starts
        self.pre = grp[:p]
        self.write = grp[p:p + r]
        self.read = grp[p + r:p + 2 * r]
        self.post = grp[p + 2 * r:]

    def encode(self, node: np.ndarray, chunk: np.ndarray) -> np.ndarray:
        """Keys of the pairs (node[i], chunk[i]).

        Parameters
        ----------
        node, chunk : numpy.ndarray
            Pairs.

        Returns
        -------
        numpy.ndarray
            ``int64`` keys, ordered as (node, chunk).
        """
        if self.universe is not None:
            chunk = np.searchsorted(self.universe, chunk)
        return np.asarray(node, dtype=INDEX) * self.width + chunk

    def node_of(self, g) -> np.ndarray:
        """Node of groups ``g`` (an index array or a slice)."""
        return self.key[g] // self.width

    def chunk_of(self, g) -> np.ndarray:
        """Chunk of groups ``g`` (an index array or a slice)."""
        rank = self.key[g] % self.width
        return rank if self.universe is None else self.universe[rank]

    def first_pre(self) -> np.ndarray:
        """Whether each group holds an explicit precondition pair."""
        return self.first < self.p

    def first_write_row(self) -> np.ndarray:
        """Row of each group's earliest write (rows are in step order), or -1."""
        f = self.first
        return np.where((f >= self.p) & (f < self.p + self.r), f - self.p, -1)


def first_absent(nodes: int, every_post: np.ndarray, thr: np.ndarray, pnode: np.ndarray,
                 pchunk: np.ndarray) -> tuple[int, int] | None:
    """First failing untouched pair of the every-node postcondition chunks, node-major.

    A pair (v, c) with ``every_post[c]`` that is not among the present pairs keeps
    its initial state; that state fails the postcondition iff ``v >= thr[c]``.

    Parameters
    ----------
    nodes : int
        Node count (``thr[c] >= nodes``: never fails).
    every_post : numpy.ndarray
        ``bool`` per chunk: every node must end with it.
    thr : numpy.ndarray
        Per chunk, the smallest node whose untouched pair fails.
    pnode, pchunk : numpy.ndarray
        Present pairs (distinct), which are checked elsewhere.

    Returns
    -------
    tuple of int or None
        ``(node, chunk)`` of the smallest failing absent pair, or None.
        O(chunks + present pairs + nodes).

    Examples
    --------
    >>> import numpy as np
    >>> first_absent(3, np.array([True, True]), np.array([0, 0]), np.array([0, 0, 1]), np.array([0, 1, 0]))
    (1, 1)
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
