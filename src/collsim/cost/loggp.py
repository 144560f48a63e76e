"""The closed form of the calibrated ``loggp-piecewise`` model (:mod:`collsim.core.commmodel`).

A schedule on a system that carries a :class:`~collsim.core.commmodel.LogGPPiecewise` model is
timed step by step.  In step ``k`` rank ``v`` is busy for

    T(v, k) = o · max(0, sends + receives − 2) + max over its messages of (α_s(m) + m / β_s(m))
              + Σ over the messages it receives of its local work (reduction; copy if charged)

where ``s(m)`` is the segment of the message's size (α and β fitted to a simultaneous two-way
exchange, so a step in which a rank sends and receives is what was measured), ``o`` LogP's
per-message overhead for the messages beyond that one pair, and the local work the
measured cost of reducing (or copying) the received bytes.  The step lasts as long as its
busiest rank, and the steps follow one another (bulk-synchronous, as the executor runs
them): ``Σ_k max_v T(v, k)``.  Contention is not charged here: that is the flow
simulator's part (:mod:`collsim.sim.flow` uses the same model).

References
----------
R. W. Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3), 1994 (α–β); D. Culler, R. Karp, D. Patterson, A. Sahay, K. E.
Schauser, E. Santos, R. Subramonian, T. von Eicken, "LogP: towards a realistic model of
parallel computation", PPoPP 1993 (the overhead o); A. Alexandrov, M. F. Ionescu, K. E.
Schauser, C. Scheiman, "LogGP: incorporating long messages into the LogP model", SPAA 1995
(the per-byte gap G of long messages: here one per segment, 1/β).
"""

from __future__ import annotations

import numpy as np

from ..core.commmodel import LogGPPiecewise
from ..core.schedule import Schedule

__all__ = ["loggp_node_work_s", "loggp_step_times_s", "loggp_time_s", "system_model"]


def system_model(system) -> LogGPPiecewise | None:
    """The calibrated model a system carries, or None (plain α–β).

    References
    ----------
    D. Culler et al., "LogP: towards a realistic model of parallel computation", PPoPP 1993;
    A. Alexandrov et al., "LogGP: incorporating long messages into the LogP model", SPAA 1995;
    R. W. Hockney, Parallel Computing 20(3), 1994 (α–β per segment).
    """
    model = getattr(system, "model", None)
    return model if isinstance(model, LogGPPiecewise) else None


def loggp_node_work_s(schedule: Schedule, model: LogGPPiecewise) -> tuple[np.ndarray, np.ndarray]:
    """Per (step, rank): the overhead of extra messages and the local work on what it receives.

    References
    ----------
    D. Culler et al., "LogP: towards a realistic model of parallel computation", PPoPP 1993;
    A. Alexandrov et al., "LogGP: incorporating long messages into the LogP model", SPAA 1995;
    R. W. Hockney, Parallel Computing 20(3), 1994 (α–β per segment).
    """
    steps, nodes = schedule.num_steps, schedule.system.nodes
    step = np.asarray(schedule.step, dtype=np.int64)
    src = np.asarray(schedule.src, dtype=np.int64)
    dst = np.asarray(schedule.dst, dtype=np.int64)
    size = np.asarray(schedule.size_bytes, dtype=float)
    posts = (np.bincount(step * nodes + src, minlength=steps * nodes)
             + np.bincount(step * nodes + dst, minlength=steps * nodes)).reshape(steps, nodes)
    overhead = model.overhead_s * np.maximum(posts - 2, 0)
    local = np.bincount(step * nodes + dst, weights=model.local_s(size, schedule.reduce),
                        minlength=steps * nodes).reshape(steps, nodes)
    return overhead, local


def loggp_step_times_s(schedule: Schedule, model: LogGPPiecewise | None = None) -> np.ndarray:
    """Each step's time under the ``loggp-piecewise`` model (see the module docstring).

    References
    ----------
    D. Culler et al., "LogP: towards a realistic model of parallel computation", PPoPP 1993;
    A. Alexandrov et al., "LogGP: incorporating long messages into the LogP model", SPAA 1995;
    R. W. Hockney, Parallel Computing 20(3), 1994 (α–β per segment).
    """
    model = model or system_model(schedule.system)
    if model is None:
        raise ValueError("the system carries no loggp-piecewise model")
    steps, nodes = schedule.num_steps, schedule.system.nodes
    if not len(schedule.src):
        return np.zeros(steps)
    step = np.asarray(schedule.step, dtype=np.int64)
    comm = model.message_s(schedule.size_bytes)
    busiest = np.zeros(steps * nodes)
    np.maximum.at(busiest, step * nodes + np.asarray(schedule.src, dtype=np.int64), comm)
    np.maximum.at(busiest, step * nodes + np.asarray(schedule.dst, dtype=np.int64), comm)
    overhead, local = loggp_node_work_s(schedule, model)
    return (busiest.reshape(steps, nodes) + overhead + local).max(axis=1)


def loggp_time_s(schedule: Schedule, model: LogGPPiecewise | None = None) -> float:
    """A schedule's time under the ``loggp-piecewise`` model: the sum of :func:`loggp_step_times_s`.

    References
    ----------
    D. Culler et al., "LogP: towards a realistic model of parallel computation", PPoPP 1993;
    A. Alexandrov et al., "LogGP: incorporating long messages into the LogP model", SPAA 1995;
    R. W. Hockney, Parallel Computing 20(3), 1994 (α–β per segment).
    """
    return float(loggp_step_times_s(schedule, model).sum())
