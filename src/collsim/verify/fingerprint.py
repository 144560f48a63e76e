"""Reductions checked by fingerprints: 16 bytes per (node, chunk) pair instead of N bits.

The exact check (:mod:`collsim.verify.reduction`) keeps, per pair, the *set* of
contributions combined in the buffer: ``N / 8`` bytes, 128 bytes at 1,024 nodes and
8 KiB at 65,536.  Above that, the data flow is checked by running the schedule on
random data instead, over the prime field ``GF(P)`` with ``P`` = 4,294,967,291 (the
largest prime below 2^32):

* node ``v``'s contribution to every chunk is an independent uniform value
  ``x_v`` in ``GF(P)``, drawn afresh for every verification, three times over
  (:data:`HASHES`), with a contribution count of 1;
* a copy moves the buffer's three values and count; a reduction adds them
  (modulo ``P``; the count saturates at :data:`COUNT_CAP`);
* at the end, every postcondition buffer must hold the count and the three sums
  of ``x_v`` over exactly the contributions it needs.

**Why this is sound.**  A buffer's value after any sequence of copies and
reductions is ``sum_v m_v x_v``, with ``m_v >= 0`` the number of times ``v``'s
contribution was combined into it.  A wrong buffer has ``m != r`` (``r`` the 0/1
vector of the contributions it needs).  If its count differs from ``|r|`` the check
fails exactly.  Otherwise ``sum_v m_v = |r| < P``, so every ``m_v - r_v`` lies in
``(-P, P)`` and at least one is non-zero modulo ``P``: ``sum_v (m_v - r_v) x_v`` is a
non-zero linear form, which vanishes at a uniform point of ``GF(P)^N`` with
probability exactly ``1/P`` (Schwartz–Zippel for degree 1).  The three sums use
independent values, so a wrong buffer passes with probability at most ``P^-3 <
2^-95.9``.  A broken schedule has at least one wrong postcondition buffer, and is
accepted only if that buffer passes: the probability that a broken schedule is
verified is below ``2^-95``, whatever the schedule (the values are drawn after it is
fixed, so no schedule can be built against them), well inside the ``2^-64`` collsim
promises.

**What it checks, what it does not.**  Exactly as the exact check: a node sending
a chunk it does not hold (a buffer is empty iff its count is 0), a buffer copied
into and reduced into in the same step, and the postcondition (up to the
probability above); two different copies into one buffer in one step are told
apart by their fingerprints (equal fingerprints of different sets: probability
``P^-3`` again).  What it cannot see is a contribution counted twice in an
*intermediate* buffer that never reaches a result (overwritten, or never read):
the exact check refuses such a schedule at that step, this one accepts it, since
every buffer the collective delivers is right.  Every double count that reaches a
result is caught, at the end, as a wrong postcondition.

The verdict does not depend on the draw except with the probability above, so
results stay deterministic.  Exact contributor sets are used whenever they take no
more memory than fingerprints (up to 128 nodes) or fit in one block of
:data:`~collsim.verify.reduction.BLOCK_BYTES` at once; fingerprints otherwise
(:func:`collsim.verify.reduction.choose_method`).

References
----------
.. [Schwartz80] J. T. Schwartz, "Fast probabilistic algorithms for verification of
   polynomial identities", Journal of the ACM 27(4), 1980.

Examples
--------
>>> from collsim import build
>>> from collsim.verify.reduction import verify_reduction
>>> verify_reduction(build("ring", "line", "allreduce", "64KiB", nodes=8), "ring", method="fingerprint")
'fingerprint'
"""

from __future__ import annotations

import secrets

import numpy as np

from ..core.errors import PostconditionError, Where
from ..core.schedule import Schedule

P = 4_294_967_291
"""The field's prime: the largest below 2^32, so a residue is a ``uint32`` and sums of fewer than
2^32 of them fit in a ``uint64``."""
HASHES = 3
"""Independent fingerprints per buffer: a wrong buffer passes all with probability at most ``P**-3``."""
COUNT_CAP = 1 << 30
"""Counts saturate here (a count that reaches it is wrong for any collective collsim can hold)."""
PAIR_BYTES = 4 * (HASHES + 1)
"""Bytes of state per (node, chunk) pair: three residues and a count, ``uint32`` each."""
FAILURE_BOUND = float(P) ** -HASHES
"""Probability that a schedule with a wrong result is accepted, at most."""

_P64 = np.uint64(P)
_COUNT = HASHES  # the count's column


def draw_values(nodes: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Every node's contributions, ``(nodes, HASHES + 1)`` ``uint32``: three uniform residues and a count of 1.

    Parameters
    ----------
    nodes : int
        Number of nodes.
    rng : numpy.random.Generator, optional
        The source of the residues; by default one seeded from the operating system's
        randomness (:mod:`secrets`), drawn for each verification.

    Returns
    -------
    numpy.ndarray
        One row per node.

    Examples
    --------
    >>> x = draw_values(4, np.random.default_rng(0))
    >>> x.shape, bool((x[:, :3] < P).all()), x[:, 3].tolist()
    ((4, 4), True, [1, 1, 1, 1])
    """
    rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
    x = np.empty((nodes, HASHES + 1), dtype=np.uint32)
    x[:, :HASHES] = rng.integers(0, P, size=(nodes, HASHES), dtype=np.uint64)
    x[:, _COUNT] = 1
    return x


def _normalise(total: np.ndarray) -> np.ndarray:
    """``uint64`` sums (residue columns, count column) back to state rows."""
    out = np.empty(total.shape, dtype=np.uint32)
    out[:, :HASHES] = total[:, :HASHES] % _P64
    out[:, _COUNT] = np.minimum(total[:, _COUNT], COUNT_CAP)
    return out


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows ``a + b``: residues modulo ``P``, counts saturating at :data:`COUNT_CAP`.

    >>> x = draw_values(2, np.random.default_rng(1))
    >>> int(add(x[:1], x[1:])[0, 3])
    2
    """
    return _normalise(a.astype(np.uint64) + b)


def group_sums(rows: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Sums of consecutive groups of rows beginning at ``starts`` (as :func:`numpy.add.reduceat`)."""
    return _normalise(np.add.reduceat(rows.astype(np.uint64), starts, axis=0))


class Need:
    """What every postcondition buffer must end with: the count and sums of the contributions it needs.

    A chunk every node starts with needs every node's contribution; otherwise those of the nodes
    that start with it; a prefix reduction (scan) needs those of nodes ``0..v`` of them.
    """

    def __init__(self, c, x: np.ndarray) -> None:
        self.c, self.n = c, c.nodes
        self.every = c.pre.every_mask
        csum = np.zeros((self.n + 1, HASHES + 1), dtype=np.uint64)
        np.cumsum(x, axis=0, dtype=np.uint64, out=csum[1:])
        self.prefix_sums = csum                       # rows 0..n: sums over nodes 0..v-1
        pn, pc = c.pre.explicit()
        key = np.unique(np.asarray(pc, np.int64) * self.n + np.asarray(pn, np.int64))
        self.key = key
        ex = np.zeros((len(key) + 1, HASHES + 1), dtype=np.uint64)
        if key.size:
            np.cumsum(x[key % self.n], axis=0, dtype=np.uint64, out=ex[1:])
        self.explicit_sums = ex

    def __call__(self, node: np.ndarray, chunk: np.ndarray) -> np.ndarray:
        node = np.asarray(node, np.int64)
        chunk = np.asarray(chunk, np.int64)
        upto = node + 1 if self.c.prefix else np.full(node.shape, self.n, np.int64)
        total = self.prefix_sums[upto]
        lo = np.searchsorted(self.key, chunk * self.n)
        hi = np.searchsorted(self.key, chunk * self.n + upto)
        held = ~self.every[chunk]
        total[held] = self.explicit_sums[hi[held]] - self.explicit_sums[lo[held]]
        return _normalise(total)


def count(rows: np.ndarray) -> np.ndarray:
    """The contribution counts of state rows."""
    return rows[..., _COUNT].astype(np.int64)


def post_error(c, v: int, k: int, have: np.ndarray, want: np.ndarray) -> PostconditionError:
    """The error of a postcondition buffer whose fingerprint is not the one it needs."""
    hc, wc = int(have[_COUNT]), int(want[_COUNT])
    if hc != wc:
        what = f"ends with {hc} of {wc} contributions to chunk {k}"
    else:
        what = (f"ends with {hc} contributions to chunk {k}, but not the {wc} it needs: some are counted "
                "twice and others missing (fingerprints differ)")
    return PostconditionError(f"node {v} {what}" + ("" if not c.prefix else f" (needs exactly those of nodes 0..{v})"),
                              Where(node=v, chunk=k))


__all__ = ["COUNT_CAP", "FAILURE_BOUND", "HASHES", "P", "PAIR_BYTES", "Need", "add", "draw_values",
           "group_sums", "post_error"]
