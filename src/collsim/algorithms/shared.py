"""Logical schedules built once and shared by the algorithms of one comparison.

An algorithm may build another's schedule as its base (``relay`` cuts the lightpaths of OpTree's,
WRHT's or OSM's).  When both run in one ``collsim compare``, the base would be built twice: once as
its own row, once inside the other's build (OpTree on 4,096 nodes: 16.8 M transfers).  Inside
:func:`shared_bases`, a build of a (algorithm, parameters) pair that some compared algorithm names
as its base (:attr:`~collsim.algorithms.registry.AlgorithmSpec.bases`) is kept, and the next build of
the same pair on the same system, collective and size returns it.  Nothing else is kept, and
nothing outlives the block, so a library caller's builds are never cached behind its back.

Builders are deterministic and their schedules are frozen and never written, so a shared
schedule is the schedule a second build would make (``tests/test_compare_once.py``).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterable, Iterator, Mapping

_SHARED: ContextVar[tuple[frozenset, dict] | None] = ContextVar("collsim_shared_bases", default=None)


def base_key(name: str, params: Mapping[str, Any]) -> str:
    """The key of an (algorithm, parameters) pair: its name and its parameters in canonical JSON.

    Examples
    --------
    >>> import numpy as np
    >>> base_key("optree", {"radices": (4, 4), "k": np.int64(2)})
    'optree {"k": 2, "radices": [4, 4]}'
    """
    return f"{name} {json.dumps(dict(params), sort_keys=True, default=_plain)}"


def _plain(value: Any) -> Any:
    """JSON's form of a parameter value it does not know: numpy scalars and arrays, tuples, sets."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return sorted(value) if isinstance(value, (set, frozenset)) else list(value)


@contextmanager
def shared_bases(wanted: Iterable[str]) -> Iterator[None]:
    """Within the block, builds of the pairs ``wanted`` (:func:`base_key`) are made once and shared.

    Parameters
    ----------
    wanted : iterable of str
        The keys of the bases that the algorithms about to run build.

    Examples
    --------
    >>> with shared_bases([base_key("optree", {})]):
    ...     pass
    """
    token = _SHARED.set((frozenset(wanted), {}))
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared_build(name: str, system: Any, collective: Any, size_bytes: int, params: Mapping[str, Any],
                 make: Callable[[], tuple[Any, dict]]) -> tuple[Any, dict]:
    """``make()``, or the result of the same build made before inside :func:`shared_bases`.

    Parameters
    ----------
    name : str
        The algorithm's registry name.
    system, collective, size_bytes, params
        The build's instance and parameters (the system by identity).
    make : callable
        Runs the builder: ``() -> (LogicalSchedule, params)``.

    Returns
    -------
    tuple
        ``(LogicalSchedule, params)``; the parameters are a fresh dict every time.

    Examples
    --------
    >>> shared_build("ring", None, "allgather", 1024, {}, lambda: ("logical", {"a": 1}))
    ('logical', {'a': 1})
    """
    state = _SHARED.get()
    if state is None:
        return make()
    key = base_key(name, params)
    if key not in state[0]:
        return make()
    made = state[1]
    full = (key, id(system), str(getattr(collective, "name", collective)), int(size_bytes))
    hit = made.get(full)
    if hit is None or hit[0] is not system:   # the identity, held: an id is never reused while it lives
        hit = made[full] = (system, make())
    logical, chosen = hit[1]
    return logical, dict(chosen)
