"""Writing files safely: through a temporary file in the same folder, renamed into place.

Every file collsim writes goes through :func:`atomic_write`, so an interrupted or
failed write (a full disk, a killed process) leaves the destination as it was and
no temporary file behind: the data goes to a temporary file in the destination's
folder, is flushed and fsync'ed, and only then renamed over the destination (and
the folder fsync'ed, so the rename survives a crash).  The result has the
permissions a plain ``open()`` would give (an existing file keeps its own).  A
symbolic link is written through (the file it names is replaced, the link stays);
a destination that is not a regular file (``/dev/null``, ``/dev/stdout``, a named
pipe) has nothing to replace and is written in place.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from .errors import InputError


def os_reason(exc: OSError) -> str:
    """What went wrong with a file, in words, without Python's ``[Errno N]`` and repr.

    Parameters
    ----------
    exc : OSError
        The error.

    Returns
    -------
    str
        E.g. ``"it does not exist"``, ``"it is a directory"``, or the system's message.

    Examples
    --------
    >>> os_reason(FileNotFoundError(2, "No such file or directory", "x.json"))
    'it does not exist'
    """
    if isinstance(exc, FileNotFoundError):
        return "it does not exist"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return str(exc.strerror or exc)


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
    target = Path(os.path.realpath(path)) if path.is_symlink() else path  # a link keeps pointing at the file
    try:
        mode = target.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"cannot write {path}: it is a folder")
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(path, target, write)  # /dev/null, /dev/stdout, a named pipe: nothing to replace
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.chmod(tmp, _mode_for(target))  # mkstemp's 0600 -> the mode a plain open() would give
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
    _sync_folder(target.parent)


def _write_in_place(path: Path, target: Path, write) -> None:
    try:
        with open(target, "wb") as fh:
            write(fh)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _sync_folder(folder: Path) -> None:
    """Make the rename durable: fsync the folder (best effort; not every system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
