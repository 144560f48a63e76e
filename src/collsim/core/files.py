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

Every file collsim reads goes through :mod:`collsim.core.reading`.

:func:`os_reason` and :func:`os_error_message` turn an ``OSError`` (a full disk, a
read-only folder, a name too long) into words, naming the file and what to do.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

from .errors import InputError

# What to do about an OSError, by errno: appended to the system's message.
_HINTS = {
    errno.ENOSPC: "the disk is full: free some space or write elsewhere",
    errno.EDQUOT: "free some space or write elsewhere",
    errno.EROFS: "write to a folder on a writable file system",
    errno.ENAMETOOLONG: "use a shorter name (most file systems allow 255 bytes per name)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EFBIG: "the file would be larger than the file system or the process's file-size limit allows",
}
# Errors that can only happen when writing: the message says "cannot write", not "cannot open".
_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}


def os_reason(exc: OSError) -> str:
    """What went wrong with a file, in words, without Python's ``[Errno N]`` and repr."""
    if isinstance(exc, FileNotFoundError):
        return "it does not exist"
    if isinstance(exc, IsADirectoryError):
        return "it is a directory"
    text = "permission denied" if isinstance(exc, PermissionError) else str(exc.strerror or exc)
    hint = _HINTS.get(exc.errno)
    return f"{text}; {hint}" if hint else text


def os_error_message(exc: OSError, path: str | os.PathLike | None = None, verb: str | None = None) -> str:
    """One line about a failed file operation: what, on which file, why, and what to do."""
    name = path if path is not None else exc.filename
    verb = verb or ("write" if exc.errno in _WRITE_ERRORS else "open")
    where = f" {os.fsdecode(name)}" if name is not None else ""
    return f"cannot {verb}{where}: {os_reason(exc)}"


def environment_error(exc: BaseException, path: str | os.PathLike | None = None,
                      what: str = "the results store") -> str | None:
    """One line for an error of the machine rather than of collsim (a full disk, a read-only folder), or None."""
    if isinstance(exc, OSError):
        return os_error_message(exc, path) if exc.errno is not None else None
    sqlite3 = sys.modules.get("sqlite3")  # imported only where a store is kept
    if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError) or isinstance(
            exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError)):
        return None
    text = str(exc)
    hint = ("free some space or use another store" if "full" in text else
            "use a store in a folder you can write" if "readonly" in text or "read-only" in text else
            "use another store")
    where = f"{what} {os.fsdecode(path)}" if path is not None else what
    return f"cannot write {where}: {text}; {hint} (what was stored before is kept)"


@contextlib.contextmanager
def naming(path: str | os.PathLike, what: str = "the results store"):
    """Turn what the machine refuses inside the block (:func:`environment_error`) into an InputError naming ``path``."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - re-raised unless the machine refused
        message = environment_error(exc, path if not getattr(exc, "filename", None) else None, what)
        if message is None:
            raise
        raise InputError(message) from exc


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
    """Write a file through a temporary file in the same folder, renamed into place."""
    path = Path(path)
    try:
        target = Path(os.path.realpath(path)) if path.is_symlink() else path  # a link keeps pointing at the file
    except OSError as exc:  # a name too long, a path through a file
        raise InputError(os_error_message(exc, path, "write")) from exc
    try:
        mode = target.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"cannot write {path}: it is a folder")
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(path, target, write)  # /dev/null, /dev/stdout, a named pipe: nothing to replace
        return
    # The temporary name starts as the destination's, cut short: a name the file system allows
    # must not fail because ".NAME.random.tmp" would be too long.
    stem = os.fsencode(target.name)[:100].decode(errors="ignore")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise InputError(os_error_message(exc, path, "write")) from exc
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
            raise InputError(os_error_message(exc, path, "write")) from exc
        raise
    _sync_folder(target.parent)


def _write_in_place(path: Path, target: Path, write) -> None:
    try:
        with open(target, "wb") as fh:
            write(fh)
    except OSError as exc:
        raise InputError(os_error_message(exc, path, "write")) from exc


def writable_folder(folder: str | os.PathLike, what: str = "the output folder") -> Path:
    """Create a folder (and its parents) if need be and check that files can be written in it.

    A trial file is created and removed at once, so the answer is the file system's (as
    root, a read-only mount or ``/sys`` refuses writes that ``os.access`` allows).
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder, prefix=".collsim-probe."):
            pass
    except FileExistsError:
        raise InputError(f"cannot write {what} {folder}: it is a file, not a folder") from None
    except OSError as exc:
        raise InputError(f"cannot write {what} {folder}: {os_reason(exc)}") from None
    return folder


def writable_file(path: str | os.PathLike, what: str = "the output") -> Path:
    """Check, before any work, that ``path`` can be written; return it.

    The folder must exist, the name must fit the file system, and a trial file is created
    in the folder and removed at once (as root, ``os.access`` says yes to ``/sys``).  A
    device or a named pipe (``/dev/null``, ``/dev/stdout``) is written in place, and accepted.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"cannot write {what} {p}: {os_reason(exc)}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot write {what} {p}: it is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return p  # /dev/null, a named pipe: written in place
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"cannot write {what} {p}: folder {folder} does not exist")
    try:
        longest = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    if len(os.fsencode(p.name)) > longest:
        raise InputError(f"cannot write {what} {p}: {os_reason(OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)))}")
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=".collsim-probe."):
            pass
    except OSError as exc:
        raise InputError(f"cannot write {what} {p}: {os_reason(exc)}") from None
    return p


def _sync_folder(folder: Path) -> None:
    """Make the rename durable: fsync the folder (best effort; not every system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
