"""Exhaustive congestion check of the MLFM partial-server all-to-all rule (seed 001 §2).

For a selection ``(n, l, m)`` on an MLFM of ``2d``-port switches, every phase
``(s, t, u)`` and every selected server is evaluated at once with numpy: the
destination (paper's rule, :func:`collsim.algorithms.mlfm.phase_destinations`),
the spine the rule names, and the (up to four) directed links of the route,
numbered exactly as the links of ``MLFM(d=d, selection=(n, l, m))``
(:mod:`collsim.kinds.network.mlfm`).  Then

* link loads: one ``bincount`` over ``(phase, link)`` keys per batch of phases;
* each phase a permutation and every (source, destination) pair served exactly
  once: ``n l m`` phases times ``n l m`` sources give exactly ``(n l m)²`` keys,
  so marking them in a boolean array and finding it full proves bijectivity;
* routability: a rule naming the spine ``{j, j}`` (which does not exist) is
  counted as *unroutable* and not given links.

A selection is *congestion-free* when every flow is routable, no directed link
carries more than one flow in any phase, every phase is a permutation and every
pair is served exactly once.  ``check_selection`` checks only the hardware
(``1 <= n <= d``, ``1 <= l <= d+1``, ``1 <= m <= d``), not the paper's or the
corrected condition, so both can be tested.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

import numpy as np

from ....algorithms.mlfm import correct_condition_holds, paper_condition_holds, phase_destinations
from ....core.errors import InputError
from ....core.validate import integer

I64 = np.int64
BATCH_FLOWS = 1 << 21


@dataclass(frozen=True)
class SelectionCheck:
    """Result of :func:`check_selection`."""

    d: int
    n: int
    l: int
    m: int
    servers: int
    max_link_load: int
    congested_links: int
    unroutable: int
    phases_are_permutations: bool
    pairs_exactly_once: bool
    congestion_free: bool
    paper_condition: bool
    correct_condition: bool
    counter_example: dict | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        """JSON-able dict."""
        return asdict(self)


def _check_hw(d: int, n: int, l: int, m: int) -> None:
    d = integer("mlfm check: d", d, lo=1)
    n, l, m = (integer(f"mlfm check: {name}", v, lo=1, hi=hi)       # the hardware's range
               for name, v, hi in (("n", n, d), ("l", l, d + 1), ("m", m, d)))
    if n * l * m < 2:
        raise InputError("mlfm check: a selection needs at least 2 servers")


def _phase_flows(d: int, n: int, l: int, m: int, phases: np.ndarray) -> dict[str, np.ndarray]:
    """Destination and route links of every server in each phase; arrays (len(phases), N)."""
    N = n * l * m
    C = d + 1
    U = d * d * C
    r = np.arange(N, dtype=I64)
    i, j, k = r // (l * m), (r // m) % l, r % m
    p = np.asarray(phases, dtype=I64)[:, None]
    s, t, u = p // (l * m), (p // m) % l, p % m
    i2, j2, k2, via = phase_destinations(n, l, m, s, t, u, i, j, k)
    dst = (i2 * l + j2) * m + k2
    moving = dst != r
    same_leaf = (i2 == i) & (j2 == j)
    spine = moving & ~same_leaf
    unroutable = spine & (via == j)
    good = spine & ~unroutable
    other = j + via - j2                                    # spine {j, via}: column that is not j2
    up = np.where(good, 2 * N + (i * C + j) * d + np.where(via < j, via, via - 1), -1)
    down = np.where(good, 2 * N + U + (i2 * C + j2) * d + np.where(other < j2, other, other - 1), -1)
    return {"dst": dst, "via": via, "moving": moving, "unroutable": unroutable,
            "acc_up": np.where(moving, r, -1), "acc_down": np.where(moving, N + dst, -1),
            "up": up, "down": down}


def _name_server(n: int, l: int, m: int, rank: int) -> str:
    return f"({rank // (l * m)}, {(rank // m) % l}, {rank % m})"


def _link_name(d: int, n: int, l: int, m: int, link: int) -> str:
    N = n * l * m
    C = d + 1
    U = d * d * C
    if link < N:
        return f"srv{_name_server(n, l, m, link)}->leaf"
    if link < 2 * N:
        return f"leaf->srv{_name_server(n, l, m, link - N)}"
    x = link - 2 * N
    direction = "up" if x < U else "down"
    x %= U
    leaf, slot = divmod(x, d)
    i, j = divmod(leaf, C)
    c = slot if slot < j else slot + 1
    a, b = min(j, c), max(j, c)
    return f"leaf({i},{j})->spine{{{a},{b}}}" if direction == "up" else f"spine{{{a},{b}}}->leaf({i},{j})"


def _phase_tuple(l: int, m: int, p: int) -> tuple[int, int, int]:
    return (p // (l * m), (p // m) % l, p % m)


def check_selection(d: int, n: int, l: int, m: int) -> SelectionCheck:
    """Check the paper's rule for one selection exhaustively (every phase, every server, every link)."""
    _check_hw(d, n, l, m)
    N = n * l * m
    NL = 2 * N + 2 * d * d * (d + 1)
    seen_pair = np.zeros(N * N, dtype=bool)
    seen_phase = np.zeros(N * N, dtype=bool)
    r = np.arange(N, dtype=I64)
    max_load = 0
    congested = 0
    unroutable = 0
    example = None
    batch = max(1, min(N, BATCH_FLOWS // N))
    for p0 in range(0, N, batch):
        phases = np.arange(p0, min(N, p0 + batch), dtype=I64)
        f = _phase_flows(d, n, l, m, phases)
        dst = f["dst"]
        seen_pair[(r[None, :] * N + dst).ravel()] = True
        seen_phase[(phases[:, None] * N + dst).ravel()] = True
        unr = f["unroutable"]
        nu = int(unr.sum())
        if nu and example is None:
            b, src = (int(x[0]) for x in np.nonzero(unr))
            j = (src // m) % l
            example = {"kind": "unroutable", "phase": _phase_tuple(l, m, int(phases[b])),
                       "source": _name_server(n, l, m, src), "destination": _name_server(n, l, m, int(dst[b, src])),
                       "spine": f"{{{j},{j}}}"}
        unroutable += nu
        row = (phases - p0)[:, None] * NL
        keys = np.concatenate([(row + f[name])[f[name] >= 0] for name in ("acc_up", "acc_down", "up", "down")])
        counts = np.bincount(keys, minlength=len(phases) * NL)
        mx = int(counts.max()) if counts.size else 0
        max_load = max(max_load, mx)
        over = np.flatnonzero(counts > 1)
        congested += len(over)
        if over.size and (example is None or example["kind"] != "link"):
            key = int(over[0])
            b, link = divmod(key, NL)
            srcs = np.flatnonzero((f["acc_up"][b] == link) | (f["acc_down"][b] == link)
                                  | (f["up"][b] == link) | (f["down"][b] == link))
            example = {"kind": "link", "phase": _phase_tuple(l, m, int(phases[b])), "link": link,
                       "link_name": _link_name(d, n, l, m, link), "load": int(counts[key]),
                       "flows": [(_name_server(n, l, m, int(sx)), _name_server(n, l, m, int(dst[b, sx])))
                                 for sx in srcs]}
    perms = bool(seen_phase.all())
    pairs = bool(seen_pair.all())
    if not pairs and example is None:
        miss = int(np.flatnonzero(~seen_pair)[0])
        example = {"kind": "pair", "source": _name_server(n, l, m, miss // N),
                   "destination": _name_server(n, l, m, miss % N), "note": "never served"}
    ok = max_load <= 1 and unroutable == 0 and perms and pairs
    return SelectionCheck(d, n, l, m, N, max_load, congested, unroutable, perms, pairs, ok,
                          paper_condition_holds(d, n, l, m), correct_condition_holds(d, n, l, m),
                          example)


def all_selections(d: int) -> list[tuple[int, int, int]]:
    """Every hardware selection with at least two columns."""
    return [(n, l, m) for n in range(1, d + 1) for l in range(2, d + 2) for m in range(1, d + 1)]


def congestion_table(d_values: Iterable[int] = range(2, 9)) -> list[dict[str, Any]]:
    """Check every selection for each d; one summary row per d.

    Every hardware selection (``1<=n<=d, 2<=l<=d+1, 1<=m<=d``) is checked, so the
    table reports the paper's set and the corrected set, and whether the rule
    works exactly on the corrected set.
    """
    rows = []
    for d in d_values:
        results = [check_selection(d, *sel) for sel in all_selections(d)]
        paper = [x for x in results if x.paper_condition]
        corr = [x for x in results if x.correct_condition]
        bad_paper = [x for x in paper if not x.congestion_free]
        ce = None
        if bad_paper:
            links = [x for x in bad_paper if (x.counter_example or {}).get("kind") == "link"]
            first = (links or bad_paper)[0]
            ce = {"select": (first.n, first.l, first.m), **(first.counter_example or {})}
        rows.append({
            "d": d, "checked": len(results),
            "paper_valid": len(paper), "paper_congestion_free": sum(x.congestion_free for x in paper),
            "paper_max_link_load": max((x.max_link_load for x in paper), default=0),
            "correct_valid": len(corr), "correct_congestion_free": sum(x.congestion_free for x in corr),
            "correct_max_link_load": max((x.max_link_load for x in corr), default=0),
            "ok_iff_correct": all(x.congestion_free == x.correct_condition for x in results),
            "counter_example": ce})
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table of :func:`congestion_table` rows."""
    head = ("| d | paper-valid selections | congestion-free | max link load | corrected-valid selections "
            "| congestion-free | max link load | congestion-free ⇔ corrected condition (all n,l,m) |\n"
            "|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        lines.append(f"| {r['d']} | {r['paper_valid']} | {r['paper_congestion_free']} | {r['paper_max_link_load']} "
                     f"| {r['correct_valid']} | {r['correct_congestion_free']} | {r['correct_max_link_load']} "
                     f"| {'yes' if r['ok_iff_correct'] else 'NO'} ({r['checked']} checked) |")
    return "\n".join(lines)


__all__ = ["SelectionCheck", "all_selections", "check_selection", "congestion_table", "format_table"]
