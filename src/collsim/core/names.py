"""Suggestions for mistyped names and keys: the did-you-mean of every "unknown ..." message.

:func:`did_you_mean` is used wherever a name is looked up (collectives, systems,
algorithms, presets); :func:`unknown_names` ends every message that refuses
unknown keys (system files and descriptions, schedule files, sweep files), so
they all read the same.  :mod:`collsim.core.errors` re-exports them.
"""

from __future__ import annotations

import difflib


def close_matches(name: object, choices, *, n: int = 3) -> list[str]:
    """The valid names closest to a mistyped one, ignoring case (:func:`difflib.get_close_matches`)."""
    lowered = {str(c).lower(): str(c) for c in choices}
    return [lowered[c] for c in difflib.get_close_matches(str(name).strip().lower(), list(lowered), n=n, cutoff=0.6)]


def did_you_mean(name: object, choices, *, n: int = 3) -> str:
    """A ``"; did you mean X?"`` hint for a mistyped name, or ``""`` when nothing is close."""
    names = list(choices) if name is None else close_matches(name, choices, n=n)
    if not names:
        return ""
    return "; did you mean " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]) + "?"


def unknown_names(bad, known) -> str:
    """The tail of a message refusing unknown keys: the keys, a did-you-mean for one, and the known keys.

    System files, system descriptions and schedule files refuse unknown keys with it,
    so every such message reads the same.
    """
    bad, known = sorted(map(str, bad)), sorted(map(str, known))
    hint = did_you_mean(bad[0], known) if len(bad) == 1 else ""
    return ", ".join(bad) + (f"{hint} Known" if hint else "; known") + f": {', '.join(known)}"
