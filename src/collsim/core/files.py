"""Writing files safely: through a temporary file in the same folder, renamed into place.

Every file collsim writes goes through :func:`atomic_write`, so an interrupted or
failed write (a full disk, a killed process) leaves the destination as it was and
no temporary file behind; the result has the permissions a plain ``open()`` would
give (an existing file keeps its own).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import InputError


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)  # elsewhere: set and restore (not atomic across threads)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """Permission bits for a file written at ``path``: an existing file's, else 0666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def atomic_write(path: str | Path, write) -> None:
    """Write a file through a temporary file in the same folder, renamed into place.

    Parameters
    ----------
    path : str or Path
        Destination.
    write : callable
        ``write(binary_file)`` writes the contents.

    Returns
    -------
    None

    Raises
    ------
    InputError
        If the file cannot be written; the destination is then untouched and no
        temporary file is left behind.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     atomic_write(os.path.join(d, "a.txt"), lambda fh: fh.write(b"hi")); os.listdir(d)
    ['a.txt']
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.chmod(tmp, _mode_for(path))  # mkstemp's 0600 -> the mode a plain open() would give
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
