"""The fixed part of the α–β closed forms: per round, the start-up plus the route latency.

The textbook's ``t_s`` per message is one number; on a network a message pays the start-up
(``startup_s``) and the latency of every link on its route, in the closed forms of bruck,
recursive doubling and Rabenseifner as in every other.
:func:`rounds_ts_s` sums, over a closed form's rounds, the start-up plus the latency of the
round's farthest message; each family gives its rounds' partners (:func:`xor_rounds` for the
recursive-doubling exchanges, :func:`logical_rounds` for a built schedule).
"""

from __future__ import annotations

import numpy as np

__all__ = ["logical_rounds", "rounds_ts_s", "xor_rounds"]


def rounds_ts_s(system, rounds) -> float:
    """The fixed (size-independent) time of a closed form's rounds: per round, the start-up
    plus the route latency of the round's farthest message, summed.

    The textbook's ``t_s`` per message is one number; on a network a message pays the
    start-up (``startup_s``, if the system sets one) **and the latency of every link on its
    route**, and a round of simultaneous messages lasts as long as its slowest.  So a closed
    form ``Σ_rounds t_s + t_w · bytes`` becomes ``Σ_rounds (startup_s + max route latency) +
    t_w · bytes``: on a hypercube, where every exchange of these algorithms is one hop and
    no start-up is set, that is the textbook's ``t_s = link latency``; on a star every message
    crosses two links; on a ring recursive doubling's round at distance ``d`` crosses
    ``min(d, N - d)``.

    References
    ----------
    R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
    Parallel Computing 20(3), 1994 (α per message); A. Grama, A. Gupta, G. Karypis, V. Kumar,
    "Introduction to Parallel Computing", 2nd ed., Addison-Wesley, 2003, ch. 2.5
    (``t_s + l t_h + t_w m``: the per-hop time ``t_h`` of a route of ``l`` links).
    """
    from ..kinds.network.network import Network
    rounds = list(rounds)
    if not isinstance(system, Network):
        return float(system.alpha_s) * len(rounds)
    startup = float(system.startup_s or 0.0)
    src = [np.asarray(s, dtype=np.int64).reshape(-1) for s, _ in rounds]
    dst = [np.asarray(d, dtype=np.int64).reshape(-1) for _, d in rounds]
    owner = np.repeat(np.arange(len(rounds)), [len(s) for s in src])
    src_all = np.concatenate(src) if src else np.zeros(0, np.int64)
    dst_all = np.concatenate(dst) if dst else np.zeros(0, np.int64)
    keep = src_all != dst_all
    src_all, dst_all, owner = src_all[keep], dst_all[keep], owner[keep]
    worst = np.zeros(len(rounds))
    if len(src_all):
        ptr, links = system.route(src_all, dst_all)
        lat = np.concatenate(([0.0], np.cumsum(system.links.latency_s[links])))
        per = lat[ptr[1:]] - lat[ptr[:-1]]
        np.maximum.at(worst, owner, per)
    return float(len(rounds) * startup + worst.sum())


def xor_rounds(n: int, nodes=None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rounds of a recursive-doubling exchange: round ``k`` pairs ``v`` with ``v XOR 2**k``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005, §4 (recursive doubling and halving).
    """
    v = np.arange(n)
    real = v if nodes is None else np.asarray(nodes)
    return [(real, real[v ^ (1 << k)]) for k in range(n.bit_length() - 1)]


def logical_rounds(logical) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(src, dst)`` of every round of a logical schedule (for :func:`rounds_ts_s`).

    References
    ----------
    A. Grama, A. Gupta, G. Karypis, V. Kumar, "Introduction to Parallel Computing", 2nd ed.,
    Addison-Wesley, 2003, ch. 4 (a closed form's ``t_s`` count is its round count).
    """
    out = []
    for r in range(logical.rounds):
        sel = logical.round == r
        out.append((logical.src[sel], logical.dst[sel]))
    return out
