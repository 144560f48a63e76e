"""Symmetries a network does not declare: groups of automorphisms, found by search.

A torus's shifts map its links onto themselves, and synthesis uses them to plan one node's part
and move it to every node (:meth:`~collsim.kinds.network.network.Network.translations`).  A network a user
brings (a torus with one dimension faster, boxes on rail switches, a leaf-spine) often has such a
group too, without saying so.  :func:`regular_translations` finds one: ``N`` permutations of the
vertices that keep every link with its bandwidth and latency, exactly one of them taking end node 0
to each end node (a group acting *regularly* on the end nodes; its elements need not commute).
Where none exists (a mesh's reflections keep its corners corners), :func:`automorphism_group`
finds a group with fewer orbits of end nodes than end nodes, and synthesis plans one per orbit.
Before searching, :func:`numbered_translations` tries the translations of the end nodes' own
numbering (mixed radix, one to three digits), extending each to the switches by refinement: boxes
of GPUs on rails and tori numbered as usual have them, and the search can miss them among the
many automorphisms that move one box's GPUs alone.

The search is individualisation–refinement, as in nauty [McKay14]: colour refinement (the
one-dimensional Weisfeiler–Leman method) of two copies of the network, one with an end node
singled out and the other with its target, then more vertices singled out pairwise until every
colour holds one vertex of each copy; that pairing is an automorphism if it keeps the links
(checked exactly, so a hash collision in the refinement can only lose an automorphism, never admit
a wrong one).  For a regular group, an end node's image is tried just after it and a switch's as
itself, which favours maps that shift the end nodes alike everywhere (a leaf-spine's hosts one
place along in every leaf, the leaves kept), and no end node is mapped into its own orbit under
the group found so far.  The group grows from one generator per end node not yet reached, kept if
the group it closes fixes no end node, with backtracking.  The searches are greedy within budgets:
they can miss a group that exists (synthesis then plans every node on its own), but what they
return is checked.

References
----------
B. D. McKay, A. Piperno, "Practical graph isomorphism, II", Journal of Symbolic Computation 60,
2014 (individualisation–refinement); B. Weisfeiler, A. Leman, "The reduction of a graph to
canonical form and the algebra which appears therein", NTI Ser. 2(9), 1968 (colour refinement).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

MAX_VERTICES = 2048
"""Largest network searched (above it :func:`regular_translations` returns None at once: synthesis
moves one root's trees only on networks of up to a few hundred end nodes)."""

CANDIDATES = 256
"""Automorphisms tried per new orbit point (generator) before backtracking."""

CLOSURES = 4000
"""Candidate generators tried in all (the search backtracks over earlier choices within it)."""

WORK = 5_000_000
"""Refinements allowed in all, times the links and vertices each refines (at most 20,000): a
vertex-transitive network without a regular group (Petersen's graph) costs at most this."""

_K1, _K2, _K3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on uint64 (wrapping)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _K2
    x = x ^ (x >> np.uint64(27))
    x = x * _K3
    return x ^ (x >> np.uint64(31))


class _Graph:
    """Two copies of the network (vertices ``v`` and ``V + v``) for joint refinement."""

    def __init__(self, nodes: int, vertices: int, src: np.ndarray, dst: np.ndarray, label: np.ndarray):
        self.nodes, self.v = nodes, vertices
        self.src, self.dst, self.label = src, dst, label
        self.src2 = np.concatenate([src, src + vertices])
        self.dst2 = np.concatenate([dst, dst + vertices])
        self.lab2 = np.tile(label.astype(np.uint64) * _K1, 2)
        self.keys = np.sort((src * vertices + dst) * (int(label.max()) + 1) + label)

    def refine(self, colour: np.ndarray) -> np.ndarray:
        """Colour refinement to the stable partition, colours canonical across both copies."""
        k = int(colour.max()) + 1
        while True:
            c = colour.astype(np.uint64)
            out = np.zeros(colour.size, np.uint64)
            inn = np.zeros(colour.size, np.uint64)
            np.add.at(out, self.src2, _mix(self.lab2 + c[self.dst2]))
            np.add.at(inn, self.dst2, _mix(self.lab2 ^ _mix(c[self.src2] + _K3)))
            _, new = np.unique(np.stack([c, out, inn], axis=1), axis=0, return_inverse=True)
            new = new.ravel().astype(np.int64)
            kn = int(new.max()) + 1
            if kn == k:
                return new
            colour, k = new, kn

    def is_automorphism(self, sigma: np.ndarray) -> bool:
        """Whether ``sigma`` maps the links onto themselves with their labels."""
        moved = (sigma[self.src] * self.v + sigma[self.dst]) * (int(self.label.max()) + 1) + self.label
        return bool(np.array_equal(np.sort(moved), self.keys))


def _pairs(colour: np.ndarray, a: int, bs: np.ndarray, fresh: int) -> Iterator[np.ndarray]:
    """The colouring with ``a`` (first copy) and each ``b`` (second copy) singled out together."""
    v = colour.size // 2
    for b in bs:
        c = colour.copy()
        c[a] = c[v + int(b)] = fresh
        yield c


class _Budget:
    """Search effort left, counted down by every refinement and every candidate generator."""

    def __init__(self, refinements: int = 20_000, closures: int = CLOSURES):
        self.refinements, self.closures = refinements, closures


def automorphisms(graph: _Graph, colour: np.ndarray, budget: _Budget | None = None,
                  orbit: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """Automorphisms that respect a joint colouring of the two copies (depth-first, bounded)."""
    v = graph.v
    budget = _Budget() if budget is None else budget
    stack: list[Iterator[np.ndarray]] = [iter([colour])]
    while stack:
        c = next(stack[-1], None)
        if c is None:
            stack.pop()
            continue
        budget.refinements -= 1
        if budget.refinements < 0:
            return
        c = graph.refine(c)
        k = int(c.max()) + 1
        count_a, count_b = np.bincount(c[:v], minlength=k), np.bincount(c[v:], minlength=k)
        if not np.array_equal(count_a, count_b):
            continue
        if orbit is not None:                   # a pair settled inside an orbit: prune
            single = count_a[c[:graph.nodes]] == 1
            where_b = np.full(k, -1, np.int64)
            where_b[c[v:]] = np.arange(v)
            mate = where_b[c[:graph.nodes][single]]
            if (orbit[mate] == orbit[:graph.nodes][single]).any():
                continue
        if count_a.max() == 1:
            where_b = np.empty(k, np.int64)
            where_b[c[v:]] = np.arange(v)
            sigma = where_b[c[:v]]
            if graph.is_automorphism(sigma):
                yield sigma
            continue
        sizes = np.where(count_a > 1, count_a, v + 1)
        cls = int(np.argmin(sizes))
        a = int(np.flatnonzero(c[:v] == cls)[0])
        bs = np.flatnonzero(c[v:] == cls)
        shift = int(a < graph.nodes)            # an end node's image just after it, a switch's itself
        bs = bs[np.argsort((bs - a - shift) % v, kind="stable")]
        if orbit is not None and a < graph.nodes:
            bs = bs[orbit[bs] != orbit[a]]
        stack.append(_pairs(c, a, bs, k))


def _closure(gens: list[np.ndarray], nodes: int) -> np.ndarray | None:
    """The group the generators make, rows indexed by node 0's image; None if it fixes an end node."""
    v = gens[0].size
    group = np.full((nodes, v), -1, np.int64)
    group[0] = np.arange(v)
    frontier = group[:1]
    while frontier.size:
        prod = np.concatenate([g[frontier] for g in gens])
        key = prod[:, 0]
        if (key >= nodes).any():
            return None
        known = group[key, 0] >= 0
        if (group[key[known]] != prod[known]).any():
            return None                       # two elements agree on node 0: one fixes it
        fresh = prod[~known]
        uk, first = np.unique(fresh[:, 0], return_index=True)
        rows = fresh[first]
        if (fresh != rows[np.searchsorted(uk, fresh[:, 0])]).any():
            return None
        group[uk] = rows
        frontier = rows
    have = group[group[:, 0] >= 0]
    if (have[1:, :nodes] == np.arange(nodes)).any():
        return None                           # not semiregular: no regular group contains it
    return have


def _prepared(nodes, vertices, src, dst, bandwidth_bytes_per_s, latency_s) -> tuple[_Graph, np.ndarray]:
    """The doubled network, links labelled by (bandwidth, latency), and its refined colours
    (end nodes and switches told apart from the start)."""
    labels = np.stack([np.asarray(bandwidth_bytes_per_s, float), np.asarray(latency_s, float)], axis=1)
    label = np.unique(labels, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    graph = _Graph(nodes, vertices, np.asarray(src, np.int64), np.asarray(dst, np.int64), label)
    return graph, graph.refine(np.tile((np.arange(vertices) >= nodes).astype(np.int64), 2))


def regular_translations(nodes: int, vertices: int, src: np.ndarray, dst: np.ndarray,
                         bandwidth_bytes_per_s: np.ndarray, latency_s: np.ndarray) -> np.ndarray | None:
    """A group of automorphisms acting regularly on the end nodes, or None if none is found.

    References
    ----------
    B. D. McKay, A. Piperno, "Practical graph isomorphism, II", Journal of Symbolic Computation
    60, 2014.
    """
    if vertices > MAX_VERTICES or nodes < 1 or np.size(src) == 0:
        return None
    if nodes == 1:
        return np.arange(vertices)[None]
    graph, whole = _prepared(nodes, vertices, src, dst, bandwidth_bytes_per_s, latency_s)
    if np.unique(whole[:nodes]).size > 1:     # end nodes told apart: not vertex-transitive
        return None
    budget = _Budget(min(20_000, WORK // (vertices + graph.src.size)))
    group = _grow(graph, whole, [], np.arange(vertices)[None], nodes, budget)
    return None if group is None else group[np.argsort(group[:, 0])]


def numbered_translations(nodes: int, vertices: int, src: np.ndarray, dst: np.ndarray,
                          bandwidth_bytes_per_s: np.ndarray, latency_s: np.ndarray,
                          max_entries: int = 1 << 26) -> np.ndarray | None:
    """The translations of the end nodes' own numbering, if they extend to automorphisms, or None.

    For every way of writing ``N`` as a product of one to three radices (fewest first), node ``u``
    in mixed radix, the unit translation of each digit is tried: end nodes moved by it, each
    singled out with its image, and the switches' images found by colour refinement (they must
    come out one to one), then the links checked exactly.  The first radices whose every unit
    translation is an automorphism give the group: ``(N, V)`` vertex permutations, row ``g``
    taking node 0 to node ``g``.  Boxes of GPUs on rails, tori and rings numbered as usual have
    such a group, which the search of :func:`regular_translations` can miss among the many
    automorphisms that move one box's GPUs alone.

    Examples
    --------
    >>> src, dst = np.array([0, 1, 2, 3, 1, 2, 3, 0]), np.array([1, 2, 3, 0, 0, 1, 2, 3])   # a ring of 4
    >>> numbered_translations(4, 4, src, dst, np.ones(8), np.ones(8))[1].tolist()
    [1, 2, 3, 0]
    """
    n, v = int(nodes), int(vertices)
    if n < 2 or n * v > max_entries or np.size(src) == 0:
        return None
    graph, whole = _prepared(n, v, src, dst, bandwidth_bytes_per_s, latency_s)
    if np.unique(whole[:n]).size > 1:
        return None
    for radices in _factorisations(n):
        units = []
        stride = 1
        for r in reversed(radices):
            units.append((stride, r))
            stride *= r
        sigmas = []
        for stride, r in units:
            digit = np.arange(n) // stride % r
            image = np.arange(n) + np.where(digit == r - 1, -(r - 1) * stride, stride)
            sigma = _extend(graph, image)
            if sigma is None:
                break
            sigmas.append((stride, r, sigma))
        else:
            table = np.empty((n, v), np.int64)
            table[0] = np.arange(v)
            for g in range(1, n):
                stride, r, sigma = next(x for x in sigmas if g // x[0] % x[1])   # the lowest nonzero digit
                table[g] = sigma[table[g - stride]]
            return table
    return None


def _factorisations(n: int) -> Iterator[tuple[int, ...]]:
    """Ordered products of one to three radices of at least 2 equal to ``n``, fewest radices first."""
    yield (n,)
    divisors = [d for d in range(2, n) if n % d == 0]
    for a in divisors:
        yield (a, n // a)
    for a in divisors:
        for b in divisors:
            if (n // a) % b == 0 and n // a // b >= 2:
                yield (a, b, n // a // b)


def _extend(graph: _Graph, image: np.ndarray) -> np.ndarray | None:
    """The automorphism moving the end nodes by ``image``, the switches by refinement, or None."""
    n, v = graph.nodes, graph.v
    colour = np.zeros(2 * v, np.int64)
    colour[:n] = 2 + np.arange(n)
    colour[v + image] = 2 + np.arange(n)
    colour[n:v] = colour[v + n:] = 1
    colour = graph.refine(colour)
    first, second = colour[:v], colour[v:]
    order = np.argsort(second, kind="stable")
    if not np.array_equal(np.sort(first), second[order]) or np.unique(first).size != v:
        return None
    sigma = order[np.searchsorted(second[order], first)]
    return sigma if graph.is_automorphism(sigma) else None


def _grow(graph: _Graph, whole: np.ndarray, gens: list[np.ndarray], group: np.ndarray, nodes: int,
          budget: _Budget) -> np.ndarray | None:
    """Depth-first over generators: one taking node 0 to the first end node not yet reached, kept
    if the group it closes stays semiregular, then the rest; back to another generator if stuck."""
    if len(group) == nodes:
        return group
    reached = np.zeros(nodes, bool)
    reached[group[:, 0]] = True
    t = int(np.flatnonzero(~reached)[0])
    v = graph.v
    colour = whole.copy()
    colour[0] = colour[v + t] = int(whole.max()) + 1
    orbit = np.arange(v)
    orbit[:nodes] = group[:, :nodes].min(axis=0)
    for tried, sigma in enumerate(automorphisms(graph, colour, budget, orbit)):
        budget.closures -= 1
        if budget.closures < 0 or tried >= CANDIDATES:
            return None
        grown = _closure(gens + [sigma], nodes)
        if grown is not None:
            found = _grow(graph, whole, gens + [sigma], grown, nodes, budget)
            if found is not None:
                return found
            if budget.closures < 0 or budget.refinements < 0:
                return None
    return None


MAX_ORDER = 512
"""Most elements of a group :func:`automorphism_group` returns (a generator that would close a
larger one is left out: any subgroup serves synthesis, with more orbits)."""


def _group_closure(gens: list[np.ndarray], cap: int) -> np.ndarray | None:
    """Every element the generators make (identity first), or None above ``cap`` elements."""
    v = gens[0].size
    seen = {np.arange(v).tobytes()}
    elems = [np.arange(v)]
    frontier = [np.arange(v)]
    while frontier:
        nxt = []
        for f in frontier:
            for g in gens:
                p = g[f]
                key = p.tobytes()
                if key not in seen:
                    seen.add(key)
                    elems.append(p)
                    nxt.append(p)
                    if len(elems) > cap:
                        return None
        frontier = nxt
    return np.asarray(elems)


def automorphism_group(nodes: int, vertices: int, src: np.ndarray, dst: np.ndarray,
                       bandwidth_bytes_per_s: np.ndarray, latency_s: np.ndarray) -> np.ndarray | None:
    """A group of link- and label-keeping automorphisms with as few orbits of end nodes as found.

    Where no group acts regularly (a mesh's reflections keep its corners corners), synthesis
    can still plan one end node of every orbit and move its part by the group.  For every end
    node, in order, that is the least of its orbit so far, an automorphism is sought to every
    end node of the same refined colour outside that orbit; each found joins the generators
    unless the group would exceed :data:`MAX_ORDER` elements.

    References
    ----------
    B. D. McKay, A. Piperno, "Practical graph isomorphism, II", Journal of Symbolic Computation
    60, 2014.
    """
    if vertices > MAX_VERTICES or nodes < 2 or np.size(src) == 0:
        return None
    graph, whole = _prepared(nodes, vertices, src, dst, bandwidth_bytes_per_s, latency_s)
    budget = _Budget(min(20_000, WORK // (vertices + graph.src.size)))
    gens: list[np.ndarray] = []
    group = np.arange(vertices)[None]
    for u in range(nodes):
        for t in np.flatnonzero(whole[:nodes] == whole[u]):
            orbit = group[:, u]
            if orbit.min() < u:
                break                          # u's orbit was handled from its least member
            if t in orbit:
                continue
            colour = whole.copy()
            colour[u] = colour[vertices + t] = int(whole.max()) + 1
            sigma = next(automorphisms(graph, colour, budget), None)
            if budget.refinements < 0:
                return None if len(group) == 1 else group
            if sigma is not None:
                grown = _group_closure(gens + [sigma], MAX_ORDER)
                if grown is not None:
                    gens.append(sigma)
                    group = grown
    return None if len(group) == 1 else group
