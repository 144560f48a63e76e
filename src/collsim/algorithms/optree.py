"""OpTree all-gather on the optical ring: a k-stage m-ary tree of one-hop all-to-alls.

Seed 004 (Dai et al., OpTree, journal version) §IV-A.  Stage 1 cuts the ring
into groups of consecutive nodes; the nodes at the same position of sibling
groups form a subset that does a one-stage all-to-all, each member sending
everything it has gathered so far; stage ``j`` repeats this inside each group of
stage ``j-1``; at the last stage the groups are single nodes.  Each chunk ``d``
travels on its own lightpath ("each node has ``m^{j-1} d`` data to send by
``m^{j-1}`` wavelengths for load balance"), so one transfer carries exactly one
chunk and every physical step lasts one chunk time.

Trees are radix vectors ``(m_1, ..., m_k)`` (``docs/algorithms/optree.md``): any
``N >= 2`` is supported, including primes, with groups of ``G_j = m_{j+1}...m_k``
nodes and a short last group when the product exceeds ``N``.  The tree is chosen
by ``tree``: ``"lemma3-ceil"`` / ``"lemma3-round"`` (Lemma 3's ``k*`` with the printed
ceiling or with nearest-integer rounding), ``"theorem1"`` (the ``k`` minimising
Theorem 1's ``S(k)``), each then made integral by :func:`integral_radices`; or
``"search"`` (default), the radix vector with the smallest exact collsim time
(:func:`collsim.algorithms.optree_search.search_tree`).  ``k`` fixes the depth and
``radices`` the whole vector.

Colours are an exact construction, not a greedy strategy: stage 1 maps the
optimal ring all-to-all colouring (:mod:`collsim.rwa.alltoall_ring`) onto every
subset, stage ``j >= 2`` uses the optimal line colouring of
:func:`~collsim.algorithms.optree_layout.line_alltoall_colours`, interleaved
subsets get disjoint colour ranges, and copies (chunks) are laid out by
:func:`~collsim.algorithms.optree_layout.arrange_colours` so that steps repeat
lightpath sets and skip MRR reconfigurations.  ``realize`` turns colour ``c`` into
sub-step ``c // (F w)``; the ``strategy`` argument is not used.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.collective import make_collective
from ..core.errors import InputError
from ..core.schedule import LogicalSchedule
from .optree_formulas import (_TOL, _check, _root, algorithm1_steps, algorithm1_time, lemma3_k,
                              theorem1_k, theorem1_proof_steps, theorem1_steps)
from .optree_layout import INDEX, arrange_colours, max_depth, stage_templates, validate_radices
from .optree_search import evaluate_tree, search_tree
from .registry import register

__all__ = ["theorem1_steps", "theorem1_k", "lemma3_k", "algorithm1_steps", "algorithm1_time",
           "theorem1_proof_steps", "integral_radices", "choose_tree", "optree", "TREE_MODES"]

TREE_MODES = ("lemma3-ceil", "lemma3-round", "theorem1", "search")


def _paper_model_factorisation(n: int, k: int) -> tuple[int, ...] | None:
    """Depth-k factorisation of n minimising m_1 + 2 (m_2 + ... + m_k), or None."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def best(rest: int, depth: int):  # (sum, max, tail) with product rest, depth factors >= 2
        if depth == 0:
            return (0, 0, ()) if rest == 1 else None
        out = None
        for m in range(2, rest + 1):
            if rest % m:
                continue
            sub = best(rest // m, depth - 1)
            if sub is not None:
                cand = (sub[0] + m, max(sub[1], m), tuple(sorted((m,) + sub[2], reverse=True)))
                if out is None or cand < out:
                    out = cand
        return out

    found = None
    for m1 in range(2, n + 1):
        if n % m1:
            continue
        tail = best(n // m1, k - 1)
        if tail is not None:
            vec = (m1,) + tail[2]
            key = (m1 + 2 * tail[0], max(m1, tail[1]), tuple(-m for m in vec))
            if found is None or key < found[0]:
                found = (key, vec)
    return None if found is None else found[1]


def integral_radices(nodes: int, k: int) -> tuple[int, ...]:
    """Make ``m = N^(1/k)`` integral for a tree of depth ``k``.

    If ``N`` has factorisations into ``k`` radices ``>= 2``, take the one that
    minimises the paper's cost model: Theorem 1's proof with the ceilings dropped
    charges stage 1 ``N m_1 / 8w`` and stage ``j >= 2`` ``N m_j / 4w`` steps, so
    minimise ``m_1 + 2 (m_2 + ... + m_k)`` (ties: smallest largest radix, then
    lexicographically largest).  This
    is ``(m, ..., m)`` when ``N = m^k``.  Otherwise (e.g. prime ``N``) take ``k``
    radices from ``{q, q+1}``, ``q = floor(N^(1/k))``, with as few ``q + 1`` as make
    the product reach ``N``, the larger ones first; the last groups are then short.

    Parameters
    ----------
    nodes : int
        ``N``.
    k : int
        Depth, ``1 <= k <= ceil(log2 N)``.

    Returns
    -------
    tuple of int
        A valid radix vector.

    Raises
    ------
    InputError
        If ``k`` is out of range.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Lemma 2 (at most ``m = N^(1/k)`` children per tree node) and the proof of Theorem 1.

    Examples
    --------
    >>> integral_radices(1024, 7), integral_radices(4096, 6), integral_radices(13, 2)
    ((4, 4, 4, 2, 2, 2, 2), (4, 4, 4, 4, 4, 4), (4, 4))
    """
    n, k = _check("nodes", nodes, 2), _check("k", k, 1)
    if k > max_depth(n):
        raise InputError(f"OpTree depth k={k} is too deep for {n} nodes (at most {max_depth(n)})")
    exact = _paper_model_factorisation(n, k)
    if exact is not None:
        return validate_radices(n, exact)
    q = max(2, int(math.floor(_root(n, k) + _TOL)))
    while q ** k > n and q > 2:
        q -= 1
    for t in range(k + 1):
        if q ** (k - t) * (q + 1) ** t >= n:
            return validate_radices(n, (q + 1,) * t + (q,) * (k - t))
    raise AssertionError("unreachable")  # pragma: no cover


def choose_tree(system, size_bytes: int, tree: str = "search", k: int | None = None,
                radices=None) -> tuple[tuple[int, ...], str]:
    """Pick the radix vector for the builder's ``tree``, ``k`` and ``radices`` parameters.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    size_bytes : int
        Each node's block (the search minimises time at this size).
    tree : str
        One of :data:`TREE_MODES`.
    k : int, optional
        Fix the depth (overrides the mode's depth).
    radices : sequence of int, optional
        Fix the whole vector (``k``, if given, must equal its length).

    Returns
    -------
    tuple
        ``(radices, how)`` with ``how`` the mode actually used.

    Raises
    ------
    InputError
        For an unknown mode, a bad depth or a bad radix vector.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024,
    Theorem 1 (steps for depth k), Lemma 3 (the optimal depth k*) and §V-B, Fig. 4.

    Examples
    --------
    >>> from collsim.systems import OpticalRing
    >>> choose_tree(OpticalRing(nodes=1024, wavelengths=64), 4 << 20, "lemma3-ceil")
    ((4, 4, 4, 2, 2, 2, 2), 'lemma3-ceil')
    """
    n = system.nodes
    if tree not in TREE_MODES:
        raise InputError(f"OpTree tree must be one of {', '.join(TREE_MODES)}; got {tree!r}")
    if k is not None:
        k = _check("k", k, 1)
        if k > max_depth(n):
            raise InputError(f"OpTree depth k={k} is too deep for {n} nodes (at most {max_depth(n)})")
    if radices is not None:
        rad = validate_radices(n, radices)
        if k is not None and k != len(rad):
            raise InputError(f"OpTree k={k} disagrees with radices {rad} (depth {len(rad)})")
        return rad, "radices"
    w = system.channels_per_direction
    if tree == "search":
        best, _ = search_tree(system, size_bytes, k=k)
        return best.radices, tree
    if k is None:
        if tree == "theorem1":
            k = theorem1_k(n, w)
        else:
            k = lemma3_k(n, "ceil" if tree == "lemma3-ceil" else "round")
    return integral_radices(n, k), tree


def _paper_steps(system, collective, params):
    if collective != "allgather" or "k" not in params:
        return None
    return theorem1_steps(system.nodes, system.channels_per_direction, params["k"])


def _tune(system, collective, size_bytes):
    # collsim tune: the best tree of every depth, since a deeper tree has shorter lightpaths and may be
    # feasible where the fastest is not.  Every tree's stage 1 spans about N/2 hops (its longest
    # lightpath, (m-1)N/m hops, taken the short way round), so beyond twice the physical layer's reach
    # no depth is feasible and the exact search's tree (the default) is the only one worth building.
    from ..physical import max_feasible_hops
    if system.nodes // 2 > max_feasible_hops(system.physical_params()):
        return [{}]
    return [{"k": k} for k in range(1, max_depth(system.nodes) + 1)]


@register(
    "optree", collectives=("allgather",), systems=("optical-ring",), aliases=("op-tree",),
    paper_steps=_paper_steps, params=("tree", "k", "radices"), realised=("steps", "reconfigurations"),
    tune=_tune,
    reference="[OpTree24] §IV-A: routing, Theorem 1 eq. (1), Lemma 3 eq. (2), Theorem 2, Algorithm 1, "
              "Table 1; §V-B Fig. 4 (conference version: [OpTree23])",
    summary="k-stage m-ary tree of one-hop all-to-alls, one chunk per lightpath, exact colouring",
)
def optree(system, collective, size_bytes, *, tree: str = "search", k: int | None = None, radices=None):
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
    collective : str
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
