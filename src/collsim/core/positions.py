"""How messages name a transfer: as its schedule file does, ``steps[i].transfers[j]``.

A schedule file nests transfers per step (``"steps": [{"step": 0, "transfers": [...]}, ...]``),
so every message about one transfer, a format error of the reader or a violation of
the verifier, names it by its entry ``i`` of ``steps`` and its index ``j`` in that
entry's ``transfers`` (:func:`transfer_position`).  The verifier's checks work on
global row indices and are decorated with :func:`collsim.core.errors.located`, which renames
the transfer of any violation they raise.
"""

from __future__ import annotations

import bisect



def position_name(entry: int, index: int) -> str:
    """The name of transfer ``index`` of entry ``entry`` of a file's ``steps`` list.

    Parameters
    ----------
    entry, index : int
        Entry of ``steps``, and index in its ``transfers``.

    Returns
    -------
    str
        ``"steps[entry].transfers[index]"``: the one spelling every message uses.

    Examples
    --------
    >>> position_name(1, 4)
    'steps[1].transfers[4]'
    """
    return f"steps[{entry}].transfers[{index}]"


def transfer_position(step, t: int, starts=None) -> str:
    """Name transfer ``t`` of a schedule as its file does: ``steps[i].transfers[j]``.

    Every message about one transfer (format errors, violations) names it so: ``i``
    is the entry of the file's ``steps`` list and ``j`` the transfer's index in that
    entry's ``transfers`` (the same numbering in a ``.npz`` file's columns, whose
    entries are the runs of equal step numbers).

    Parameters
    ----------
    step : array_like
        The schedule's step column (non-decreasing, as in any well-formed schedule).
    t : int
        Global index of the transfer (its row in the schedule's columns).
    starts : array_like, optional
        First transfer of each entry of the file's ``steps`` list, when it is known and
        differs from the runs of equal step numbers (a JSON file that repeats a step number).

    Returns
    -------
    str
        ``"steps[1].transfers[4]"``.

    Examples
    --------
    >>> transfer_position([0, 0, 0, 1, 1, 1], 4)
    'steps[1].transfers[1]'
    >>> transfer_position([0, 0, 0, 0, 2, 2], 5)       # entries start where the number changes
    'steps[1].transfers[1]'
    >>> transfer_position([0, 0, 0, 1], 2, starts=[0, 2, 3])   # a file that wrote step 0 in two entries
    'steps[1].transfers[0]'
    """
    t = int(t)
    if starts is not None:
        k = bisect.bisect_right(list(starts), t) - 1
        return position_name(k, t - int(starts[k]))
    import numpy as np  # here, not at the top: core.errors imports this module, and the help imports no numpy
    run = np.asarray(step[:t + 1])
    change = np.flatnonzero(run[1:] != run[:-1])  # entry k starts after the k-th change of step number
    return position_name(len(change), t - (int(change[-1]) + 1 if len(change) else 0))


def schedule_position(schedule, t: int) -> str:
    """:func:`transfer_position` of transfer ``t`` of a schedule (the file's entries when it was read from JSON).

    Parameters
    ----------
    schedule : Schedule
        The schedule.
    t : int
        Global index of the transfer.

    Returns
    -------
    str
        ``"steps[i].transfers[j]"``.

    Examples
    --------
    >>> import collsim
    >>> schedule_position(collsim.build("ring", "paper", "allgather", 1000, nodes=4), 5)
    'steps[1].transfers[1]'
    """
    return transfer_position(schedule.step, t, getattr(schedule, "_cache", {}).get("file_entries"))
