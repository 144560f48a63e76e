"""Why an algorithm in scope was not run: it does not apply to the instance, or it failed on it.

:func:`~collsim.algorithms.placement.place_all` notes one :class:`Skip` per algorithm that does not apply,
and :func:`~collsim.experiments.compare.compare` returns them with one per algorithm that failed.  The two
kinds differ for the reader: an algorithm that *does not apply* (N odd for NE, not a power of two
for recursive doubling, the wrong kind of system, a root it cannot honour) was never expected to
run, and ``collsim compare`` names them in one line (``--explain`` gives each reason); one that
*failed* should have run and raised an error of its own while it was built, verified or timed
(:data:`~collsim.experiments.compare.ALGORITHM_FAILURES`, or memory), and gets its full note.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Skip", "summary"]


@dataclass(frozen=True)
class Skip:
    """An algorithm that was not run, and why.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).
    """

    algorithm: str
    note: str
    failed: bool = False

    def __str__(self) -> str:
        return self.note


def summary(skips: list[Skip] | tuple[Skip, ...]) -> str | None:
    """The algorithms that do not apply, in one line (None if there are none); failures are left to their notes.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).
    """
    names = list(dict.fromkeys(s.algorithm for s in skips if not s.failed))
    if not names:
        return None
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{listed} {'does' if len(names) == 1 else 'do'} not apply to this instance"
