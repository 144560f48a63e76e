"""The results store's file: its SQLite tables, its schema version, and opening and upgrading it.

The store is an embedded SQLite file (the standard library's :mod:`sqlite3`) in WAL
mode with a busy timeout: several sweeps may write one store at once, every finished
point is committed on its own (a sweep killed with SIGKILL loses no finished point
and leaves the file readable), and readers never block writers.  :class:`StoreFile`
opens the file, creates its tables, reads its :data:`SCHEMA_VERSION`, refuses a newer
one and upgrades an older one that holds no stale rows;
:class:`~collsim.experiments.sweep.store.Store` adds the rows (docs/sweeps.md).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any, Self

from ...core.errors import InputError

__all__ = ["SCHEMA_VERSION", "StoreFile"]

# SCHEMA_VERSION is the table layout's and the keys': 2 since a point of a system TOML file
# carries the file's [system] table (system_config), so its key follows the file's content
# (schema 1 keyed it by the file's name: an edited file gave stale rows).
SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS points (
    key TEXT PRIMARY KEY,
    model_version TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    error TEXT,
    result TEXT,
    system TEXT,
    collective TEXT,
    algorithm TEXT,
    nodes INTEGER,
    size_bytes INTEGER
);
CREATE INDEX IF NOT EXISTS points_system ON points (system);
CREATE INDEX IF NOT EXISTS points_collective ON points (collective);
CREATE INDEX IF NOT EXISTS points_algorithm ON points (algorithm);
CREATE INDEX IF NOT EXISTS points_nodes ON points (nodes);
CREATE INDEX IF NOT EXISTS points_size ON points (size_bytes);
CREATE INDEX IF NOT EXISTS points_version ON points (model_version);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _named_systems() -> list[str]:
    """System names that are not files (presets and kinds): their points need no content in the key."""
    from ...systems import system_names
    return system_names()


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class StoreFile:
    """An open results-store file: its SQLite connection (WAL mode), tables and schema version.

    :class:`~collsim.experiments.sweep.store.Store` is one, with the rows.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise InputError(f"results store {self.path} is a directory")
        if not create and not os.path.exists(self.path):
            raise InputError(f"no results store at {self.path} (collsim sweep writes one)")
        try:
            self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._retry(self._init)
            self._retry(self._schema, create)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot open results store {self.path}: {exc}") from None

    @staticmethod
    def _retry(fn: Any, *args: Any) -> Any:
        for attempt in range(50):  # a concurrent writer switching to WAL can return "locked" at once
            try:
                return fn(*args)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.05 * (1 + attempt % 5))
        return None  # not reached

    def _init(self) -> None:
        conn = self._conn
        conn.execute("PRAGMA busy_timeout = 60000")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"database is locked (journal mode {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")  # in WAL: a process killed loses no commit
        conn.executescript(_SCHEMA)
        conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _schema(self, create: bool) -> None:
        """Read the schema version; refuse a newer one; upgrade a schema-1 store that has no stale rows."""
        text = self._conn.execute("SELECT value FROM meta WHERE name = 'schema_version'").fetchone()[0]
        try:
            self.schema_version = int(text)
        except ValueError:
            raise InputError(f"results store {self.path}: schema version {text!r} is not a number") from None
        if self.schema_version > SCHEMA_VERSION:
            raise InputError(f"results store {self.path} was written by a newer collsim (schema version "
                             f"{self.schema_version}; this one knows 1 to {SCHEMA_VERSION}): upgrade collsim")
        self._stale: list[str] = []
        if self.schema_version < SCHEMA_VERSION:
            names = set(_named_systems())
            for (config,) in self._conn.execute("SELECT config FROM points"):
                point = _loads(config) or {}
                system = point.get("system")
                if ("experiment" not in point and "tool" not in point and isinstance(system, str)
                        and system.strip().lower() not in names):
                    self._stale.append(system)
            if not self._stale and create:  # nothing keyed by a file's name: the keys are schema 2's
                self._conn.execute("UPDATE meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION),))
                self.schema_version = SCHEMA_VERSION

    def check_writable(self) -> None:
        """Refuse to write to a store whose rows could be found for the wrong points.

        A schema-1 store (written by older versions of collsim) keys the points of system TOML
        files by the file's name, not its content: after the file is edited a sweep would reuse
        the old rows.  Such a store is read (``collsim results``), never written to; a schema-1
        store without such points is upgraded when opened.
        """
        if self._stale:
            files = sorted(set(self._stale))
            raise InputError(f"results store {self.path} was written by an older collsim (schema version "
                             f"{self.schema_version}), which keyed the {len(self._stale)} points of system files "
                             f"({', '.join(files[:3])}{', ...' if len(files) > 3 else ''}) by the file's name, not "
                             f"its content, so an edited file would get stale results: sweep into a new store "
                             f"(--store new.sqlite) or delete {self.path} (collsim results still reads it)")

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def integrity(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: ``"ok"`` for a sound file."""
        return "; ".join(str(r[0]) for r in self._conn.execute("PRAGMA integrity_check"))
