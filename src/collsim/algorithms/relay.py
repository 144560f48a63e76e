"""Hop-bounded variants: relay every lightpath longer than H hops through O/E/O at intermediate nodes.

:func:`relay_logical` transforms the schedule of a base algorithm (OSM, OpTree,
WRHT) so that no lightpath crosses more than ``H`` links, ``H`` defaulting to
the longest lightpath the ring's physical parameters allow
(:func:`collsim.kinds.optical_ring.physical.max_feasible_hops`, 25 with collsim's defaults).  The
base is realised first (route, colours, physical slots).  A transfer of ``h``
hops is cut into ``k = ceil(h / H)`` segments of ``floor`` / ``ceil(h / k)`` hops
along its own (pinned) direction; segment ``j`` runs in sub-round ``j``, from the
node where segment ``j - 1`` ended, which received the data electrically (O/E/O)
and re-sends it on a new lightpath.  Each base round is laid out in one of two
ways, whichever takes fewer slots: (A) every base slot ``s`` becomes
``ceil(h_s / H)`` sub-rounds and each segment keeps its parent's fiber and
wavelengths (it lies inside its parent's arc, so no channel is shared); (B) the
round becomes ``ceil(h_r / H)`` sub-rounds and each sub-round's segments are
coloured afresh by start class (:func:`_packed_colours`), which fills every link
again: OSM's relayed all-gather at N = 1024 takes 2245 slots this way against
35869 slot by slot.  Registered as one algorithm, ``relay`` (alias
``hop-bounded``), with ``base=`` and ``max_hops=``; its ``tune=`` hook offers every
base.  The base is realised with first-fit colouring whatever strategy the caller
asks for (its exact colourings are pre-assigned and kept).  Derivation, slot
count and costs: docs/derivations/hop-bounded.md.

Only non-reducing collectives are relayed: a relay stores what it forwards in
its own buffer for that chunk, and in collsim's model a copy *overwrites* the
buffer, so a partial sum passing through a node would clobber that node's own
contribution or partial (docs/derivations/hop-bounded.md, "Reductions").

References
----------
I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
bandwidth optical WANs", IEEE Transactions on Communications 40(7), 1992 (traffic
over a sequence of lightpaths, switched electronically between them); F. Dai,
Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024, §IV-B (the longest feasible signal path).  The relay construction is
collsim's own.
"""

from __future__ import annotations

import numpy as np

from ..core.collective import BYTES_PER_DELIVERY
from ..core.collectives import CollectiveType
from ..core.errors import InputError, UnsupportedError
from ..core.limits import check_memory
from ..core.ring import arc_start
from ..core.schedule import INDEX, LogicalSchedule, permute_csr
from ..kinds.optical_ring.physical import max_feasible_hops
from ..kinds.optical_ring.rwa import realize_ring
from .registry import get_algorithm, register
from .shared import shared_build

__all__ = ["BASES", "default_max_hops", "relay", "relay_logical", "relay_slots"]

_REF = ("[Chlamtac92] (traffic over a sequence of lightpaths, O/E/O between them); [OpTree24] §IV-B "
        "(the longest feasible signal path); relaying every lightpath longer than max_hops is collsim's own")


def default_max_hops(system) -> int:
    """The longest lightpath, in hops, that the ring's physical parameters allow.

    References
    ----------
    F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
    Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
    Society, 2024, §IV-B, eqs. (4)-(9).
    """
    h = int(max_feasible_hops(system.physical_params()))
    if h < 1:
        raise UnsupportedError("no lightpath is feasible with this ring's physical parameters "
                               "(max_feasible_hops is 0), so no relay distance works")
    return h


def _check_hops(system, max_hops) -> int:
    if max_hops is None:
        return default_max_hops(system)
    if isinstance(max_hops, bool) or not isinstance(max_hops, (int, np.integer)) or max_hops < 1:
        raise InputError(f"max_hops must be an integer >= 1, got {max_hops!r}")
    return int(max_hops)


def relay_slots(step_max_hops, max_hops: int) -> int:
    """Slots of layout A (slot by slot), ``sum_s ceil(h_s / H)``: at least what :func:`relay_logical` takes.

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992.  The formula is derived
    in docs/derivations/hop-bounded.md.
    """
    h = np.asarray(step_max_hops, dtype=np.int64)
    return int((-(-h // int(max_hops))).sum())


def relay_logical(system, logical: LogicalSchedule, max_hops: int) -> LogicalSchedule:
    """Cut every lightpath of ``logical`` longer than ``max_hops`` into relayed segments.

    References
    ----------
    I. Chlamtac, A. Ganz, G. Karmi, "Lightpath communications: an approach to high
    bandwidth optical WANs", IEEE Trans. Commun. 40(7), 1992 (electronic switching
    between lightpaths).  docs/derivations/hop-bounded.md.
    """
    c = logical.collective
    if c.reduction or logical.reduce.any():
        raise UnsupportedError(f"relaying {c.name} is not supported: a relay stores a forwarded partial in "
                               f"its own buffer, which a copy overwrites (docs/derivations/hop-bounded.md)")
    h_max = _check_hops(system, max_hops)
    n, w = system.nodes, system.wavelengths
    phys = realize_ring(system, logical)
    t = len(phys.src)
    if t == 0:
        return logical
    hops = phys.hops                                            # read, never written (no copy)
    k = hops.astype(np.int32 if n < 2**31 - h_max else np.int64)   # segments per transfer, ceil(h / H):
    k += h_max - 1                                              # int32 while hops < N fit (a 4-byte column,
    k //= h_max                                                 # not two 8-byte ones: 16.8 M parents at N = 4096)
    segments = int(k.sum())                                     # refuse before allocating them
    deliveries = int((k * np.diff(phys.chunk_ptr)).sum())
    check_memory(deliveries * BYTES_PER_DELIVERY + segments * 128,
                 f"relaying {t} lightpaths on {n} nodes as {segments} segments of at most {h_max} hops",
                 "use fewer nodes, a larger max_hops or another base")
    # Segment-sized arrays are built with np.repeat (equal to indexing by parent) and, while every value
    # fits, in int32: j < k <= h < n, so j * h and (j + 1) * h < n * n, and positions, rounds < 2**31.
    it = np.int32 if n * n < 2**31 and segments < 2**31 and len(phys.round) and int(phys.round.max()) < 2**31 \
        else np.int64
    parent = np.repeat(np.arange(t, dtype=it), k)
    j = np.arange(segments, dtype=it) - np.repeat((np.cumsum(k) - k).astype(it), k)
    h, kk = np.repeat(hops.astype(it), k), np.repeat(k.astype(it), k)
    lo = j * h // kk
    length = (j + 1) * h // kk                                 # hi; balanced: every segment floor/ceil(h/k) hops
    del h, kk
    length -= lo
    d = np.repeat(phys.direction, k)                           # int8
    src = np.repeat(phys.src.astype(it), k)
    lo *= d
    src += lo
    src %= n
    del lo                                                     # dst = (src + d * length) % n, made at the end
    band = np.repeat(phys.band, k).astype(np.int32)
    base_round = np.repeat(phys.round.astype(it), k)
    # layout A, per base slot: slot s -> ceil(h_s / H) sub-rounds, segments on their parent's channel
    k_slot = _group_max(phys.step, k)
    slot_rnd = np.repeat(_starts(k_slot)[phys.step].astype(it), k)
    slot_rnd += j
    slot_color = _parent_colours(slot_rnd, d, band, np.repeat(phys.fiber, k), np.repeat(phys.wavelength, k), w).astype(it, copy=False)
    # blocks of whole base rounds: every quantity below is per (sub-round, direction) group, and a
    # group lies in one base round, so blocks give the whole arrays' values with a block's temporaries
    rounds = int(phys.round[-1]) + 1
    blocks = _round_blocks(base_round)
    slots_a = sum(_round_slots(slot_rnd[a:b], d[a:b], band[a:b], slot_color[a:b], system, base_round[a:b], rounds)
                  for a, b in blocks)
    # layout B, per base round: round r -> ceil(h_r / H) sub-rounds, segments packed afresh
    k_round = _group_max(phys.round, k)
    pack_rnd = _starts(k_round).astype(it)[base_round]
    pack_rnd += j
    pack_color = np.empty(segments, it)
    for a, b in blocks:
        pack_color[a:b] = _packed_colours(pack_rnd[a:b], d[a:b], band[a:b], src[a:b], length[a:b], n, w)
    # per base round, the layout with fewer slots (realize_ring: a group needs ceil((max colour + 1) / cap))
    slots_b = sum(_round_slots(pack_rnd[a:b], d[a:b], band[a:b], pack_color[a:b], system, base_round[a:b], rounds)
                  for a, b in blocks)
    del pack_rnd
    use_b = slots_b < slots_a
    sub = np.where(use_b, k_round, _group_sum(phys.round[_first_of(phys.step)], k_slot, len(k_round)))
    ub = use_b[base_round]
    slot_rnd -= _starts(k_slot)[_first_step(phys)].astype(it)[base_round]
    rnd = np.where(ub, j, slot_rnd)
    del j, slot_rnd
    rnd += _starts(sub).astype(it)[base_round]
    del base_round
    color = np.where(ub, pack_color, slot_color)
    del ub, pack_color, slot_color
    o = _physical_order(rnd, d, band, color, system)          # rounds in order, parents' order within
    lengths, chunk_idx = np.diff(phys.chunk_ptr), phys.chunk_idx
    del phys
    po = parent[o]
    del parent
    ptr, idx = permute_csr(lengths, chunk_idx, po)
    del po, lengths, chunk_idx
    rnd = rnd[o].astype(INDEX, copy=False)
    color = color[o].astype(INDEX, copy=False)
    src, d, length, band = src[o], d[o], length[o], band[o]
    del o
    dst = d * length
    del length
    dst += src
    dst %= n
    return LogicalSchedule(c, rnd, src.astype(INDEX), dst.astype(INDEX), ptr, idx,
                           np.zeros(len(rnd), bool), direction=d.astype(np.int8, copy=False),
                           color=color, band=band)


def _physical_order(rnd, d, band, color, system) -> np.ndarray:
    """The segments' order: by round, then by the sub-step their colour puts them in, as
    :func:`~collsim.kinds.optical_ring.rwa.realize_ring` lays a round out (a colour ``c`` of a
    (round, direction) whose widest band is ``b`` goes to sub-step ``c // (fibers * (w // b))``),
    the parents' order within.  Realising then keeps the order, so the physical schedule shares
    the logical columns instead of copying them all (relay k = 2 on 4,096 nodes: 35 M transfers),
    and it is the same schedule: realising sorts by step stably, keeping this order within a step.
    Where a strategy still colours some segments (colour -1), by round alone."""
    if not len(color) or int(color.min()) < 0:
        return np.argsort(rnd, kind="stable")
    _, width = _widths(rnd, d, band)
    sub = color // (system.fibers * (system.wavelengths // width))
    levels = int(sub.max()) + 1
    if levels == 1:
        return np.argsort(rnd, kind="stable")
    key = rnd.astype(np.int64)
    key *= levels
    key += sub
    del sub
    return np.argsort(key, kind="stable")


def _group_max(key: np.ndarray, value: np.ndarray) -> np.ndarray:
    out = np.zeros(int(key.max()) + 1, np.int64)
    # one dtype throughout: numpy's fast path for ufunc.at (int32 values into an int64 result miss it:
    # 2.8 s of `collsim compare -n 4096` went there)
    np.maximum.at(out, np.asarray(key, np.intp), np.asarray(value, np.int64))
    return out


def _group_sum(key: np.ndarray, value: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(key, weights=value, minlength=size).astype(np.int64)


def _starts(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def _first_of(step: np.ndarray) -> np.ndarray:
    """Index of the first transfer of every slot (slots are sorted and contiguous)."""
    return np.searchsorted(step, np.arange(int(step.max()) + 1))


def _first_step(phys) -> np.ndarray:
    """First physical slot of every base round (a round's slots are consecutive)."""
    out = np.full(int(phys.round.max()) + 1, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(out, np.asarray(phys.round, np.intp), np.asarray(phys.step, np.int64))
    return out


def _widths(rnd: np.ndarray, d: np.ndarray, band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group id (sub-round, direction) and its widest band, per segment (as realize_ring groups them)."""
    wide = rnd.dtype.itemsize > 4 or (len(rnd) > 0 and int(rnd.max()) >= 2**30)
    group = rnd.astype(np.int64 if wide else np.int32)   # twice a sub-round and one more fits the type
    group *= 2
    group += d > 0
    if band.min() == band.max():                               # one band width (the bases' 1): no grouping
        return group, np.int64(band[0])                           # broadcasts as the full column would
    return group, _group_max(group, band)[group]


def _parent_colours(rnd, d, band, fiber, wl, w) -> np.ndarray:
    """Colours that realize_ring maps back to the parent's (fiber, wavelength), in one slot."""
    group, width = _widths(rnd, d, band)
    if np.ndim(width) == 0 and int(width) == 1:   # the bases' one wavelength a lightpath: colour = fiber * w + wl
        ct = np.int32 if (int(fiber.max()) + 1) * w < 2**31 else np.int64
        color = fiber.astype(ct)
        color *= w
        color += wl                                             # 0 <= wl < w: never a bad layout
        return color
    per_fiber = w // width
    fiber, wl = fiber.astype(np.int64), wl.astype(np.int64)
    color = fiber * per_fiber + wl // width
    bad = (wl % width != 0) | (wl // width >= per_fiber)
    if bad.any():                                               # rare band layouts: let the strategy colour
        color[np.isin(group, np.unique(group[bad]))] = -1
    return color


def _packed_colours(rnd, d, band, src, length, n, w) -> np.ndarray:
    """Colour short arcs by start class (docs/derivations/hop-bounded.md, "Packing").

    In a group whose arcs have at most P hops, let T = floor(n/P) and b_i = floor(i n / T): the
    position p with b_i <= p < b_(i+1) has class p - b_i, so one class's positions are at least
    floor(n/T) >= P apart, around the seam too, and its arcs never overlap.  Colour = the class's
    offset + the arc's rank among the arcs starting at p; ceil(n/T) classes.
    """
    group, _ = _widths(rnd, d, band)
    small = np.int32 if n * n < 2**31 else np.int64           # (start + 1) * T and i * n stay below n * n
    start = arc_start(src, d, n).astype(small)
    with np.errstate(divide="ignore"):   # ids of no group have no arcs: their entry is never read
        per = (n // _group_max(group, length)).astype(small)[group]    # T: positions per class, >= P apart
    safe = np.maximum(per, 1)
    i = start + 1
    i *= safe
    i -= 1
    i //= n                                                    # the largest i with floor(i n / T) <= start
    i *= n
    i //= safe
    del safe
    cls = np.where(per > 0, start - i, start)                  # < ceil(n / T) <= n
    del per, i
    s = len(start)
    kt = np.int32 if (int(group.max()) + 1) * n < 2**31 else np.int64
    key = group.astype(kt)
    key *= n
    key += start                                               # 0 <= start < n: orders as (group, start)
    del start
    order = np.argsort(key, kind="stable")                     # ties in index order
    key.sort(kind="stable")                                    # key[order], in place
    first = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    del key
    it = np.int32 if s < 2**31 else np.int64
    rank = np.empty(s, it)
    rank[order] = np.arange(s, dtype=it) - np.repeat(first.astype(it), np.diff(np.append(first, s)))
    del order, first
    ckey = group.astype(np.intp)
    del group
    ckey *= 2 * n
    ckey += cls
    del cls
    size = int(ckey.max()) + 1
    if size <= 2 * s + 1024:  # keys dense enough: count in a table instead of sorting them (np.unique)
        count = np.zeros(size, np.int64)
        np.maximum.at(count, ckey, (rank + 1).astype(np.int64))
        uk = np.flatnonzero(count)                             # the classes present, ascending
        count = count[uk]
    else:
        uk, inv = np.unique(ckey, return_inverse=True)
        count = np.zeros(len(uk), np.int64)
        np.maximum.at(count, np.asarray(inv, np.intp).ravel(), (rank + 1).astype(np.int64))
    before = np.cumsum(count) - count                          # colours of earlier classes, all groups
    gstart = np.flatnonzero(np.concatenate([[True], uk[1:] // (2 * n) != uk[:-1] // (2 * n)]))
    base = np.repeat(before[gstart], np.diff(np.append(gstart, len(uk))))
    offset = before - base                                     # a class's first colour within its group
    if size <= 2 * s + 1024:
        table = np.zeros(size, np.int64)
        table[uk] = offset
        out = table[ckey]
    else:
        out = offset[inv]
        del inv
    del ckey
    out += rank
    return out


BLOCK_SEGMENTS = 1 << 22
"""Segments whose colours and slots are computed at once (whole base rounds; one round may be more).
In one pass, relay with k = 2 on 4,096 nodes (35 M segments) held 0.8 GiB more of temporaries."""


def _round_blocks(base_round: np.ndarray) -> list[tuple[int, int]]:
    """``(lo, hi)`` ranges of whole base rounds (``base_round`` is sorted), about :data:`BLOCK_SEGMENTS` each."""
    s = len(base_round)
    if s <= BLOCK_SEGMENTS:
        return [(0, s)]
    bounds = np.concatenate(([0], np.flatnonzero(base_round[1:] != base_round[:-1]) + 1, [s]))
    cuts = bounds[np.searchsorted(bounds, np.arange(BLOCK_SEGMENTS, s, BLOCK_SEGMENTS), side="right") - 1]
    cuts = np.unique(np.concatenate(([0], cuts, [s])))
    return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))


def _round_slots(rnd, d, band, color, system, base_round, rounds: int) -> np.ndarray:
    """Slots every base round (``rounds`` of them) takes in a layout: per (sub-round, direction)
    ceil((max colour + 1) / cap)."""
    group, width = _widths(rnd, d, band)
    cap = system.fibers * (system.wavelengths // width)
    need = _group_max(group, np.where(color < 0, np.int64(1 << 40), color // cap + 1))   # -1: unknown, never chosen
    need = np.append(need, np.zeros(len(need) % 2, np.int64))
    per_sub = np.maximum(need[0::2], need[1::2])
    sub_round = _group_max(rnd, base_round)                    # each sub-round belongs to one base round
    return _group_sum(sub_round, per_sub[:len(sub_round)], rounds)


BASES = {"allgather": ("optree", "wrht", "osm"), "alltoall": ("osm",), "broadcast": ("osm",)}
"""Bases relayed per collective, the default first (the fastest relayed base at N = 1024, w = 64)."""
_BASE_PARAMS = {"optree": ("tree", "k", "radices"), "wrht": ("m",), "osm": ()}


def _base_for(collective: CollectiveType, base) -> str:
    if base is None:
        return BASES[collective.name][0]
    name = str(base).strip().lower()
    name = {"one-stage": "osm", "op-tree": "optree"}.get(name, name)
    if name not in _BASE_PARAMS:
        raise InputError(f"relay: unknown base {base!r}; it relays {', '.join(sorted(_BASE_PARAMS))}")
    if name not in BASES[collective.name]:
        raise UnsupportedError(f"relay cannot relay {name} for {collective.name}: its bases for {collective.name} are "
                               f"{', '.join(BASES[collective.name])}")
    return name


def _tune(system, collective: CollectiveType, size_bytes):
    h = default_max_hops(system)
    out: list[dict] = []
    for base in BASES.get(collective.name, ()):
        found = get_algorithm(base).candidates(system, collective, size_bytes)
        if base == "optree":                    # relaying makes long final stages dear: try deeper trees
            found += [{"k": k} for k in range(2, min(6, max(2, (system.nodes - 1).bit_length())) + 1)]
        for p in found:
            cand = {"base": base, "max_hops": h, **p}
            if cand not in out:
                out.append(cand)
    return out


def _bases(system, collective: CollectiveType, params) -> list[tuple[str, dict]]:
    # the base relay builds with these parameters, as relay() builds it
    name = _base_for(collective, params.get("base"))
    return [(name, {p: params[p] for p in ("tree", "k", "radices", "m") if params.get(p) is not None})]

@register("relay", collectives=tuple(BASES), systems=("optical-ring",), aliases=("hop-bounded",),
          params=("base", "max_hops", "tree", "k", "radices", "m"), realised=("steps", "reconfigurations"),
          tune=_tune, constraints="base: optree, wrht or osm (all-gather), osm (all-to-all, broadcast)", bases=_bases,
          reference="[OpTree24] §III-B (OSM), §IV-A (OpTree), §IV-A.2 and [WRHT23] §2 (WRHT): the bases; " + _REF,
          summary="a base (OpTree, WRHT, OSM) with every lightpath longer than max_hops relayed through O/E/O")
def relay(system, collective: CollectiveType, size_bytes, *, base: str | None = None, max_hops: int | None = None,
          tree: str | None = None, k: int | None = None, radices=None, m: int | None = None):
    """Build a base algorithm's schedule with lightpaths of at most ``max_hops`` hops.

    Parameters
    ----------
    system : OpticalRing
        Target ring.
    collective : CollectiveType
        ``allgather``, ``alltoall`` or ``broadcast``.
    size_bytes : int
        Message size.
    base : str, optional
        ``optree`` (default for all-gather), ``wrht`` or ``osm`` (default otherwise).
    max_hops : int, optional
        Longest lightpath H (default: :func:`default_max_hops`, 25 with collsim's
        default device values).
    tree, k, radices : optional
        OpTree's parameters (base ``optree``).
    m : int, optional
        WRHT's group size (base ``wrht``).

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``: ``base``, ``max_hops`` and the base's parameters.

    Raises
    ------
    InputError
        A parameter the base does not take, or a bad ``max_hops``.

    References
    ----------
    F. Dai et al., "OpTree: An Efficient Algorithm for All-gather Operation in Optical
    Interconnect Systems", IEEE OJ-COMS 2024, §III-B, §IV-A, §IV-B; I. Chlamtac, A. Ganz,
    G. Karmi, "Lightpath communications", IEEE Trans. Commun. 40(7), 1992.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("relay", "paper", "allgather", "1MiB", nodes=32, wavelengths=8, base="osm", max_hops=5)
    >>> verify(s).max_hops, s.num_steps, s.params["base"]
    (5, 27, 'osm')
    >>> build("relay", "paper", "allgather", "1MiB", nodes=64, wavelengths=8).params["base"]
    'optree'
    """
    name = _base_for(collective, base)
    given = {"tree": tree, "k": k, "radices": radices, "m": m}
    extra = sorted(p for p, v in given.items() if v is not None and p not in _BASE_PARAMS[name])
    if extra:
        raise InputError(f"relay with base={name} takes no parameter(s) {', '.join(extra)}"
                         + (f"; {name} takes {', '.join(_BASE_PARAMS[name])}" if _BASE_PARAMS[name] else ""))
    spec = get_algorithm(name)
    spec.check(system, collective)
    h = _check_hops(system, max_hops)
    params = {p: v for p, v in given.items() if v is not None}
    # the base's own row in the same comparison builds it once for both (collsim.algorithms.shared)
    logical, chosen = shared_build(name, system, collective, size_bytes, params,
                                   lambda: spec.builder(system, collective, size_bytes, **params))
    return relay_logical(system, logical, h), {"base": name, "max_hops": h, **chosen}

