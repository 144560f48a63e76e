"""The results store: one SQLite row per sweep point, keyed by a hash of its configuration.

A point (:mod:`collsim.experiments.sweep.point`) is a dict: system, nodes, wavelengths,
fibers, link bandwidth and latency, size, collective, algorithm and the algorithm's
parameters.  Its row's ``key`` is the SHA-256 of the canonical JSON (sorted keys,
no spaces) of ``{"model_version": MODEL_VERSION, "point": <the point>}``, so a
result computed by an older model is never found for, or mixed with, a new one.

:class:`Store` writes and reads the rows; the file itself (SQLite in WAL mode, shared
by concurrent sweeps, each finished point committed on its own), its tables and its
schema version are :mod:`collsim.experiments.sweep.store_schema`'s.  Rows hold no wall-clock
value: the same points give the same rows (docs/sweeps.md).

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     store = Store(os.path.join(d, "r.sqlite"))
...     p = {"system": "ring", "nodes": 4, "size_bytes": 1024, "collective": "allgather", "algorithm": "ring"}
...     _ = store.put(p, {"algorithm": "ring", "slots": 3, "error": None})
...     [(r["status"], r["result"]["slots"]) for r in store.records(system="ring")]
[('ok', 3)]
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from ...core.errors import InputError, did_you_mean
from .store_schema import StoreFile, _loads

__all__ = ["FILTERS", "MODEL_VERSION", "Store", "canonical_json", "flat_record", "point_key"]

# Bump MODEL_VERSION whenever a model changes what a point computes (a time model, a lower
# bound, the simulator, an algorithm's schedule, a system's defaults, the row's keys): the keys
# of every point change with it, so a sweep re-runs its points and records() never mixes rows of
# two models (docs/sweeps.md; the table layout's version is store_schema.SCHEMA_VERSION).
MODEL_VERSION = "collsim-model-3"

FILTERS = ("system", "collective", "algorithm", "nodes", "size_bytes", "status")


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON-able")


def canonical_json(value: Any) -> str:
    """JSON text that is the same for equal values: sorted keys, no spaces, tuples as lists."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def point_key(point: Mapping[str, Any], model_version: str | None = None) -> str:
    """A point's row key: SHA-256 of the canonical JSON of the point and the model version."""
    version = MODEL_VERSION if model_version is None else model_version
    text = canonical_json({"model_version": version, "point": dict(point)})
    return hashlib.sha256(text.encode()).hexdigest()


def flat_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """One record of :meth:`Store.records` as one level: key, status, error, then the result's keys.

    Keys of the point missing from the result (an error's point has no result) are taken from
    the point; ``params`` is the schedule's (with defaults) when there is a result.
    """
    out: dict[str, Any] = {"key": record["key"], "status": record["status"], "error": record["error"]}
    for k, v in (record.get("result") or {}).items():
        if k != "error":
            out[k] = v
    for k, v in (record.get("point") or {}).items():
        if out.get(k) is None:
            out[k] = v
    return out


class Store(StoreFile):
    """An SQLite results store (created if missing), safe to share between processes.

    The rows of a :class:`~collsim.experiments.sweep.store_schema.StoreFile` (the open file).
    """

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM points WHERE model_version = ?", (MODEL_VERSION,)).fetchone()[0]

    def get(self, point: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored record of a point under the current :data:`MODEL_VERSION`, or None."""
        row = self._conn.execute(f"SELECT {_COLUMNS} FROM points WHERE key = ?", (point_key(point),)).fetchone()
        return None if row is None else _record(row)

    def keys(self) -> set[str]:
        """Keys of every row under the current :data:`MODEL_VERSION`."""
        rows = self._conn.execute("SELECT key FROM points WHERE model_version = ?", (MODEL_VERSION,))
        return {k for (k,) in rows}

    def put(self, point: Mapping[str, Any], result: Mapping[str, Any] | None = None, *,
            error: str | None = None) -> str:
        """Store a point's result or error, committed at once (replacing an earlier row of the point)."""
        if (result is None) == (error is None):
            raise InputError("Store.put takes a result or an error, not both or neither")
        self.check_writable()
        if result is not None:
            error = result.get("error")
            row = dict(result) if "error_type" not in result else None
        else:
            row = None
        status = "ok" if error is None else "error"
        src = row or {}
        values = {k: src.get(k) if src.get(k) is not None else point.get(k)
                  for k in ("collective", "algorithm", "nodes", "size_bytes")}
        key = point_key(point)
        self._retry(self._conn.execute,
                    "INSERT OR REPLACE INTO points (key, model_version, config, status, error, result, system, "
                    "collective, algorithm, nodes, size_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, MODEL_VERSION, canonical_json(dict(point)), status, error,
                     None if row is None else json.dumps(row, default=_jsonable),
                     point.get("system"), values["collective"], values["algorithm"], values["nodes"],
                     values["size_bytes"]))
        return key

    def records(self, *, model_version: str | None = None, all_versions: bool = False,
                **filters: Any) -> list[dict[str, Any]]:
        """The stored records, in a fixed order (system, collective, algorithm, nodes, size, point)."""
        where, args = [], []
        if not all_versions:
            where.append("model_version = ?")
            args.append(MODEL_VERSION if model_version is None else model_version)
        for name, value in filters.items():
            if value is None:
                continue
            if name not in FILTERS:
                hint = did_you_mean(name, FILTERS)
                raise InputError(f"unknown filter {name!r}{hint + ' Known' if hint else '; known'}: "
                                 f"{', '.join(FILTERS)}")
            where.append(f"{name} = ?")
            args.append(value)
        sql = (f"SELECT {_COLUMNS} FROM points" + (f" WHERE {' AND '.join(where)}" if where else "")
               + " ORDER BY system, collective, algorithm, nodes, size_bytes, config, model_version")
        return [_record(row) for row in self._conn.execute(sql, args)]

    def dataframe(self, **filters: Any) -> Any:
        """The records as a pandas DataFrame, one flat row each (:func:`flat_record`)."""
        try:
            import pandas
        except ImportError:
            raise InputError("Store.dataframe needs pandas (pip install pandas); Store.records gives the "
                             "same rows as dicts") from None
        return pandas.DataFrame([flat_record(r) for r in self.records(**filters)])


_COLUMNS = "key, model_version, status, error, config, result"


def _record(row: tuple) -> dict[str, Any]:
    key, version, status, error, config, result = row
    return {"key": key, "model_version": version, "status": status, "error": error, "point": _loads(config),
            "result": _loads(result)}
