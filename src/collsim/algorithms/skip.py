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

    Parameters
    ----------
    algorithm : str
        Registry name.
    note : str
        The reason as one sentence naming the algorithm first (``"ne cannot build allgather here:
        needs an even number of nodes, got 9"``, ``"osm failed on this instance: ..."``): JSON rows
        keep it under ``skipped``, and ``str(skip)`` is it.
    failed : bool, optional
        True when the algorithm should have run and failed on this instance (an error while it
        was built, verified or timed); False (the default) when it does not apply to the instance.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).

    Examples
    --------
    >>> s = Skip("ne", "ne cannot build allgather here: needs an even number of nodes, got 9")
    >>> s.failed, str(s).startswith("ne cannot")
    (False, True)
    """

    algorithm: str
    note: str
    failed: bool = False

    def __str__(self) -> str:
        return self.note


def summary(skips: list[Skip] | tuple[Skip, ...]) -> str | None:
    """The algorithms that do not apply, in one line (None if there are none); failures are left to their notes.

    Parameters
    ----------
    skips : sequence of Skip
        What was not run.

    Returns
    -------
    str or None
        ``"mesh, ne and recursive-doubling do not apply to this instance"``.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication operations in
    MPICH", IJHPCA 19(1), 2005 (several algorithms per collective, each applicable to some instances).

    Examples
    --------
    >>> summary([Skip("mesh", "..."), Skip("ne", "..."), Skip("osm", "...", failed=True)])
    'mesh and ne do not apply to this instance'
    >>> summary([Skip("ne", "...")]), summary([])
    ('ne does not apply to this instance', None)
    """
    names = list(dict.fromkeys(s.algorithm for s in skips if not s.failed))
    if not names:
        return None
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{listed} {'does' if len(names) == 1 else 'do'} not apply to this instance"
