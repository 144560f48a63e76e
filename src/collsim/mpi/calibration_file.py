"""A file ``collsim calibrate`` wrote, read back: its raw tables, the model it carries, its system.

One reader for every command that takes a calibration (``collsim calibrate --refit``, ``collsim
validate --calibration``).  It reads the file once, and says what a file that is not the calibration
asked for is, before any MPI work: a system file of another kind (a ``custom`` network, a ``ring``)
has no ``[calibration]`` table; a plain α–β calibration has no ``[calibration.exchange]`` table for
``loggp-piecewise``.  Any system file also loads as a system, so a reader that began with
:func:`collsim.systems.load_system` would take a 6-node ring for "a calibration of 6 ranks".
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..core.errors import InputError
from .calibrate import Calibration, Sample, calibration_from

__all__ = ["MODELS", "CalibrationFile", "read_calibration"]

MODELS = ("loggp-piecewise", "alpha-beta")
"""The models ``collsim calibrate --model`` fits, the default first."""
_RAW = ("size_bytes", "count", "median_s", "min_s")


@dataclass(frozen=True, eq=False)
class CalibrationFile:
    """A calibration file as read: where it is, its TOML document and a hash of its bytes."""

    path: str
    document: dict
    digest: str

    @property
    def table(self) -> dict[str, Any]:
        """The ``[calibration]`` table."""
        return self.document["calibration"]

    @property
    def model(self) -> str:
        """``loggp-piecewise`` when the file carries the exchange tables, else ``alpha-beta``."""
        return "loggp-piecewise" if isinstance(self.table.get("exchange"), dict) else "alpha-beta"

    @property
    def ranks(self) -> int:
        """The MPI ranks calibrated."""
        return int(self.table["ranks"])

    def plain(self, statistic: str = "min") -> Calibration:
        """The ping-pong table fitted again (``statistic``: the column the α–β line is fitted to)."""
        t = self.table
        samples = [Sample(int(s), int(c), float(md), float(mn)) for s, c, md, mn in zip(*(t[k] for k in _RAW),
                                                                                          strict=True)]
        if isinstance(t.get("q1_s"), list) and isinstance(t.get("q3_s"), list):
            samples = [Sample(x.size_bytes, x.count, x.median_s, x.min_s, float(q1), float(q3))
                       for x, q1, q3 in zip(samples, t["q1_s"], t["q3_s"], strict=True)]
        return calibration_from(samples, float(t["overhead_s"]), self.ranks, int(t["iterations"]), statistic)

    def require(self, model: str, purpose: str) -> None:
        """Refuse a file that does not carry ``model``, saying what it is and what ``purpose`` needs."""
        if model == "loggp-piecewise" and self.model != model:   # a loggp-piecewise file holds the plain one too
            raise InputError(f"{self.path} is an alpha-beta calibration (ping-pong only), and {purpose} needs a "
                             f"{model} one: collsim calibrate writes it by default (--model {model})")

    def system(self):
        """The calibrated system (a star of one node per rank, with its model if it carries one)."""
        from pathlib import Path

        from ..systems import load_system
        system = load_system({"name": Path(self.path).stem, **self.document.get("system", {})})
        if system.nodes != self.ranks:
            raise InputError(f"{self.path}: its [system] has {system.nodes} nodes but its [calibration] has "
                             f"{self.ranks} ranks; collsim calibrate writes them equal")
        return system


def _what_it_is(document: dict) -> str:
    system = document.get("system")
    if not isinstance(system, dict) or "kind" not in system:
        return "it has no [calibration] table"
    nodes = f" of {system['nodes']} nodes" if isinstance(system.get("nodes"), int) else ""
    return f"it describes a {system['kind']} system{nodes} and has no [calibration] table"


def read_calibration(path: str) -> CalibrationFile:
    """Read a file ``collsim calibrate`` wrote, refusing any other file in one line."""
    import tomllib

    from ..core.reading import read_bytes
    data = read_bytes(path, name=f"calibration file {path}")  # a regular file, never a device (core.files)
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    table = document.get("calibration")
    if not isinstance(table, dict):
        raise InputError(f"{path} is not a calibration: {_what_it_is(document)} (collsim calibrate --out FILE "
                         "writes one)")
    out = CalibrationFile(str(path), document, hashlib.sha256(data).hexdigest()[:16])
    try:
        if not all(isinstance(table.get(k), list) for k in _RAW):
            raise KeyError(_RAW[0])
        out.plain()
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: the [calibration] table is malformed: it needs ranks, iterations, overhead_s "
                         f"and lists of numbers of one length ({', '.join(_RAW)}), as collsim calibrate writes "
                         "them") from None
    return out
