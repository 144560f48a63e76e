"""OpTree's builder: the explicit schedule of a k-stage m-ary tree of one-hop all-to-alls.

Seed 004 (Dai et al., OpTree, journal version) §IV-A.  Stage 1 cuts the ring
into groups of consecutive nodes; the nodes at the same position of sibling
groups form a subset that does a one-stage all-to-all, each member sending
everything it has gathered so far; stage ``j`` repeats this inside each group of
stage ``j-1``; at the last stage the groups are single nodes.  Each chunk ``d``
travels on its own lightpath ("each node has ``m^{j-1} d`` data to send by
``m^{j-1}`` wavelengths for load balance"), so one transfer carries exactly one
chunk and every physical step lasts one chunk time.

The tree (a radix vector, :mod:`collsim.algorithms.optree.tree`) comes from
:func:`~collsim.algorithms.optree.search.choose_tree`.  Colours are an exact
construction, not a greedy strategy: each stage's lightpath pairs and colour
classes come from :func:`~collsim.algorithms.optree.layout.stage_templates`, and
copies (chunks) are laid out by :func:`~collsim.algorithms.optree.colours.arrange_colours`
so that steps repeat lightpath sets and skip MRR reconfigurations.  ``realize``
turns colour ``c`` into sub-step ``c // (F w)``; the ``strategy`` argument is not used.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.collective import make_collective
from ...core.collectives import CollectiveType
from ...core.csr import INDEX
from ...core.schedule import LogicalSchedule
from .colours import arrange_colours
from .cost import evaluate_tree
from .formulas import algorithm1_steps, theorem1_steps
from .layout import stage_templates
from .search import choose_tree

__all__ = ["optree"]


def optree(system, collective: CollectiveType, size_bytes, *, tree: str = "search", k: int | None = None, radices=None):
    """Build the OpTree all-gather as an explicit logical schedule.

    Stage ``j`` (one logical round) sends, for every subset pair ``u -> v``,
    every chunk ``u`` holds on its own lightpath with a pre-assigned colour.
    Holdings stay disjoint within each group, so each node receives each foreign
    chunk exactly once (``N (N-1)`` transfers).  Everything is vectorised per
    stage: the pair templates have ``O(N m_j)`` rows and the chunk expansion is
    one gather.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        ``"allgather"``.
    size_bytes : int
        Each node's block ``d`` (one chunk per node).
    tree : str, optional
        ``"search"`` (default), ``"lemma3-ceil"``, ``"lemma3-round"`` or ``"theorem1"``.
    k : int, optional
        Fix the depth.
    radices : sequence of int, optional
        Fix the radix vector.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)`` with params ``tree``, ``k``, ``radices``,
        ``theorem1_steps`` (eq. (1) at this ``k``, ``w := F w``), ``algorithm1_steps``
        (Algorithm 1 at this ``k``), ``stage1_groups`` and the ``steps`` /
        ``reconfigurations`` of the exact evaluator (the pipeline recomputes both from
        the realised schedule, which differs from the evaluator's under transceiver limits).

    Raises
    ------
    InputError
        For a bad ``tree``, ``k`` or ``radices``.

    References
    ----------
    Seed 004 §IV-A.1 (routing), Theorem 1 and Lemma 3; seed 000 (conference version).

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("optree", "paper", "allgather", "4KiB", nodes=16, wavelengths=2, radices=(4, 4))
    >>> verify(s).steps, s.params["theorem1_steps"]
    (12, 12)
    """
    n = system.nodes
    coll = make_collective("allgather", n, size_bytes)  # refuses oversized instances before the search
    rad, how = choose_tree(system, size_bytes, tree, k, radices)
    cap = system.channels_per_direction
    total_all = n * (n - 1)
    cols = {"round": np.empty(total_all, INDEX), "src": np.empty(total_all, INDEX),
            "dst": np.empty(total_all, INDEX), "chunk": np.empty(total_all, INDEX),
            "color": np.empty(total_all, INDEX), "direction": np.empty(total_all, np.int8)}
    filled = 0
    # holdings: CSR over nodes, node v holds hidx[hptr[v]:hptr[v+1]]
    hlen = np.ones(n, INDEX)
    hptr = np.arange(n + 1, dtype=INDEX)
    hidx = np.arange(n, dtype=INDEX)
    templates = stage_templates(n, rad)
    for j, tpl in enumerate(templates):
        order = np.argsort(tpl.dst, kind="stable")
        src, dst, cls = tpl.src[order], tpl.dst[order], tpl.cls[order]
        c = hlen[src]
        ct = np.zeros(tpl.classes, INDEX)
        np.maximum.at(ct, cls, c)
        base, stride, _, _, _ = arrange_colours(ct, cap)
        total = int(c.sum())
        pair = np.repeat(np.arange(len(src), dtype=INDEX), c)
        first = np.zeros(len(src), INDEX)
        np.cumsum(c[:-1], out=first[1:])
        r = np.arange(total, dtype=INDEX) - first[pair]
        chunk = hidx[hptr[src][pair] + r]
        colour = (base[cls] - first * stride[cls])[pair] + np.arange(total, dtype=INDEX) * stride[cls][pair]
        del r
        if j + 1 < len(templates):  # holdings after the stage (lightpaths are grouped by dst)
            recv = np.bincount(dst, weights=c, minlength=n).astype(INDEX)
            new_len = hlen + recv
            new_ptr = np.zeros(n + 1, INDEX)
            np.cumsum(new_len, out=new_ptr[1:])
            new_idx = np.empty(int(new_ptr[-1]), INDEX)
            owner = np.repeat(np.arange(n, dtype=INDEX), hlen)
            new_idx[new_ptr[owner] + np.arange(len(hidx), dtype=INDEX) - hptr[owner]] = hidx
            recv_ptr = np.zeros(n + 1, INDEX)
            np.cumsum(recv, out=recv_ptr[1:])
            lp_dst = dst[pair]
            new_idx[new_ptr[lp_dst] + hlen[lp_dst] + np.arange(total, dtype=INDEX) - recv_ptr[lp_dst]] = chunk
            hlen, hptr, hidx = new_len, new_ptr, new_idx
        # emit in physical-step order (colour // cap), so realize needs no re-sort
        sub = colour // cap
        key = sub.astype(np.uint16) if total and int(sub.max()) < 1 << 16 else sub
        perm = np.argsort(key, kind="stable")
        emit = pair[perm]
        sl = slice(filled, filled + total)
        cols["round"][sl] = j
        cols["src"][sl] = src[emit]
        cols["dst"][sl] = dst[emit]
        cols["direction"][sl] = tpl.direction[order][emit]
        cols["chunk"][sl] = chunk[perm]
        cols["color"][sl] = colour[perm]
        filled += total
    if filled != total_all:  # pragma: no cover - the construction delivers each chunk once
        raise AssertionError(f"OpTree built {filled} transfers, expected {total_all}")
    logical = LogicalSchedule(coll, cols["round"], cols["src"], cols["dst"],
                              np.arange(total_all + 1, dtype=INDEX), cols["chunk"],
                              np.zeros(total_all, bool), cols["direction"], cols["color"])
    cost = evaluate_tree(system, size_bytes, rad)
    kk = len(rad)
    params = {
        "tree": how, "k": kk, "radices": list(rad),
        "theorem1_steps": theorem1_steps(n, cap, kk),
        "algorithm1_steps": algorithm1_steps(n, cap, kk),
        "stage1_groups": -(-n // math.prod(rad[1:])),
        "steps": cost.steps, "reconfigurations": cost.reconfigurations,
    }
    return logical, params
