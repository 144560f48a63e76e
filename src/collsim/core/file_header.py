"""The header of a schedule file, shared by the JSON and the ``.npz`` formats: format, version,
system, collective, algorithm and params (docs/schedule-format.md)."""

from __future__ import annotations

from typing import Any

from .collective import make_collective
from .collectives import TYPES
from .errors import InputError, ScheduleFormatError
from .fields import check_ints, need, optional, refuse_unknown
from .schedule import Schedule
from .system import system_from_description
from .validate import is_integer

FORMAT = "collsim-schedule"
VERSION = 2
READS = (1, 2, 3, 4)
"""Versions read. Version 2 adds "band" (a version-1 file is a version-2 file without bands);
version 3, written only as ``.npz``, may leave out a CSR pointer column whose every row has one
entry (:mod:`collsim.core.binary`); its JSON form would be version 2's. Version 4 holds a
schedule's representatives and, in ``symmetry``, the group that moves them
(:mod:`collsim.core.compact_file`)."""
COMPACT_VERSION = 3
"""The version of a ``.npz`` file that leaves out a pointer column."""
SYMMETRIC_VERSION = 4
"""The version of a file holding representatives and their group in ``symmetry``
(:mod:`collsim.core.compact_file`); a ``.npz`` one may leave out pointer columns as version 3 does."""
HEADER_KEYS = frozenset({"format", "version", "system", "collective", "algorithm", "params", "symmetry"})
COLLECTIVE_KEYS = frozenset({"kind", "nodes", "size_bytes", "split", "root", "shift"})

def header(s: Schedule, version: int = VERSION, symmetry: dict[str, Any] | None = None) -> dict[str, Any]:
    """The file header of a schedule: format, version, system, collective, algorithm, params; with
    ``symmetry`` (``s`` being representatives), version 4 and the group."""
    out = {"format": FORMAT, "version": SYMMETRIC_VERSION if symmetry is not None else version,
           "system": s.system.describe(), "collective": s.collective.describe(), "algorithm": s.algorithm,
           "params": dict(s.params)}
    if symmetry is not None:
        out["symmetry"] = symmetry
    return out


def read_header(doc: Any, body: tuple[str, ...] = ()):
    """Check a file header and rebuild its system and collective."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ScheduleFormatError(f"not a collsim schedule (expected \"format\": \"{FORMAT}\")")
    if not is_integer(doc.get("version")) or doc.get("version") not in READS:  # not 2.0, not true
        raise ScheduleFormatError(f"unsupported schedule version {doc.get('version')!r} "
                                  f"(this collsim reads {', '.join(map(str, READS))})")
    refuse_unknown(doc, HEADER_KEYS | set(body), "file")
    sd, cd = need(doc, "system", dict, "file"), need(doc, "collective", dict, "file")
    if not isinstance(doc.get("algorithm", ""), str):
        raise ScheduleFormatError("file: 'algorithm' must be a string")
    if not isinstance(doc.get("params", {}), dict):
        raise ScheduleFormatError("file: 'params' must be an object")
    check_ints(sd, "system")
    check_ints(cd, "collective")
    refuse_unknown(cd, COLLECTIVE_KEYS, "collective")
    try:
        system = system_from_description(sd)
    except OverflowError as exc:
        raise ScheduleFormatError(f"system: a number is out of range ({exc})") from exc
    kind = need(cd, "kind", str, "collective")
    if kind not in TYPES:
        raise ScheduleFormatError(f"collective: unknown kind {kind!r}")
    root = cd.get("root")
    if root is not None and not is_integer(root):
        raise ScheduleFormatError("collective: 'root' must be an integer or null")
    if root is not None and not TYPES[kind].rooted:
        raise ScheduleFormatError(f"collective: {kind} has no root, but 'root' is {root} (give null or leave it out)")
    if "shift" in cd and not TYPES[kind].shifted:
        raise ScheduleFormatError(f"collective: only the shift collective has a 'shift', not {kind}")
    try:
        # representatives (version 4) stand for a schedule that need not fit in memory: not refused here
        coll = make_collective(kind, need(cd, "nodes", int, "collective"), need(cd, "size_bytes", int, "collective"),
                               split=optional(cd, "split", 1, "collective"), root=root, shift=cd.get("shift", 1),
                               explicit=doc.get("version") != SYMMETRIC_VERSION)
    except InputError as exc:
        raise ScheduleFormatError(f"collective: {exc}") from exc
    except OverflowError as exc:
        raise ScheduleFormatError(f"collective: a number is out of range ({exc})") from exc
    if coll.nodes != system.nodes:  # malformed before any route is read against the wrong system
        raise ScheduleFormatError(f"the collective has {coll.nodes} nodes but the system has {system.nodes}")
    return system, coll
