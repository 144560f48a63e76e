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
    """The name of transfer ``index`` of entry ``entry`` of a file's ``steps`` list."""
    return f"steps[{entry}].transfers[{index}]"


def transfer_position(step, t: int, starts=None) -> str:
    """Name transfer ``t`` of a schedule as its file does: ``steps[i].transfers[j]``.

    Every message about one transfer (format errors, violations) names it so: ``i``
    is the entry of the file's ``steps`` list and ``j`` the transfer's index in that
    entry's ``transfers`` (the same numbering in a ``.npz`` file's columns, whose
    entries are the runs of equal step numbers).
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
    """:func:`transfer_position` of transfer ``t`` of a schedule (the file's entries when it was read from JSON)."""
    return transfer_position(schedule.step, t, getattr(schedule, "_cache", {}).get("file_entries"))
