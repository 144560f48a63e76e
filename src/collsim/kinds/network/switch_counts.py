"""Hardware counts of MLFM machines and fat trees, from their structure (no graph is built).

[MLFM16] §1 compares the multi-layer full mesh (MLFM) with fat trees of the same
switch radix: at R = 36 an MLFM connects 6156 servers, a two-level fat tree 648.
:class:`collsim.kinds.network.mlfm.MLFM` and :class:`collsim.kinds.network.fat_tree.FatTree`
build the graphs; these functions only count (details: docs/mlfm.md).

>>> compare_with_fat_tree(36)["mlfm_servers"]
6156
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...core.validate import integer


def _int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """:func:`collsim.core.validate.integer` with the ``mlfm:`` prefix on the name."""
    return integer(f"mlfm: {name}", value, lo=lo, hi=hi)


def mlfm_counts(d: int, last_layer_servers: int | None = None) -> dict[str, int]:
    """Structural counts of the whole MLFM machine (no graph is built)."""
    d = _int("d", d, 1)
    q = d if last_layer_servers is None else _int("last_layer_servers", last_layer_servers, 1, d)
    servers, leaves, spines = ((d - 1) * d + q) * (d + 1), d * (d + 1), d * (d + 1) // 2
    return {"servers": servers, "leaves": leaves, "spines": spines, "switches": leaves + spines,
            "radix": 2 * d, "layers": d, "columns": d + 1,
            "leaf_ports_used": d + d, "last_layer_leaf_ports_used": q + d,  # servers down, d spines up
            "spine_ports_used": 2 * d, "cables": servers + leaves * d}     # spine: 2 leaves per layer


def fat_tree_counts(radix: int, levels: int) -> dict[str, int]:
    """Hosts and switches of a full-bisection fat tree of R-port switches, built up from its structure.

    Two levels: R leaves (R/2 hosts, R/2 up-links each) under R/2 spines of R ports:
    R²/2 hosts.  Three levels: R pods of R/2 edge and R/2 aggregation switches under
    (R/2)² cores, R/2 hosts per edge switch: R³/4 hosts.
    """
    R = _int("radix", radix, 2)
    levels = integer("fat tree: levels", levels, lo=2, hi=3)
    if R % 2:
        raise InputError(f"fat tree: radix must be even, got {R}")
    h = R // 2
    leaves, upper = (R, h) if levels == 2 else (R * h, R * h + h * h)   # edge; aggregation + core
    return {"levels": levels, "hosts": leaves * h, "switches": leaves + upper}


def compare_with_fat_tree(radix: int) -> dict[str, Any]:
    """MLFM versus two- and three-level fat trees of one switch radix ([MLFM16] §1: 6156 vs 648 at R = 36)."""
    R = _int("radix", radix, 2)
    if R % 2:
        raise InputError(f"radix must be even (MLFM uses 2d-port switches), got {R}")
    m = mlfm_counts(R // 2)
    out: dict[str, Any] = {"radix": R, "d": R // 2, "mlfm_leaves": m["leaves"], "mlfm_spines": m["spines"]}
    for key, c in (("mlfm", {"hosts": m["servers"], "switches": m["switches"]}),
                   ("fat_tree_2", fat_tree_counts(R, 2)), ("fat_tree_3", fat_tree_counts(R, 3))):
        out[f"{key}_servers" if key == "mlfm" else f"{key}_hosts"] = c["hosts"]
        out[f"{key}_switches"] = c["switches"]
        out[f"{key}_switches_per_server"] = c["switches"] / c["hosts"]
    out["servers_ratio_vs_fat_tree_2"] = out["mlfm_servers"] / out["fat_tree_2_hosts"]
    out["switch_saving_per_server_vs_fat_tree_3"] = \
        1 - out["mlfm_switches_per_server"] / out["fat_tree_3_switches_per_server"]
    return out


__all__ = ["compare_with_fat_tree", "fat_tree_counts", "mlfm_counts"]
