"""Reading files safely: a regular file of bounded size, standard input, or a pipe.

Every file collsim reads goes through :func:`read_bytes` (or :func:`open_for_reading`, or
:func:`read_text` for a text file such as a system TOML file):
a regular file up to :data:`MAX_READ_BYTES`, standard input, or a pipe; a device
(``/dev/zero``), a folder or a socket is refused before a byte is read, so no input
can make collsim read without end.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import BinaryIO

from .errors import InputError
from .files import os_reason

MAX_READ_BYTES = 2 * 2**30
"""The largest input collsim reads (2 GiB): a schedule file, a system, sweep or calibration
TOML file, an MSCCL XML file, or standard input.  A JSON schedule of 2 GiB holds about 16
million transfers; numpy's ``.npz`` holds the same in about half the bytes."""


def _size_text(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _kind_of(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


def _check_readable(fd: int, name: str, limit: int, error: type[Exception], stdin: bool) -> bool:
    """Refuse what is not a regular file, a pipe (or, on standard input, a terminal) or too large.

    Returns True for a stream (a pipe, a terminal) whose size is known only once read.
    """
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        if st.st_size > limit:
            raise error(f"cannot read {name}: it is {_size_text(st.st_size)}, above the {_size_text(limit)} "
                        f"collsim reads (collsim.core.reading.MAX_READ_BYTES)")
        return False
    if stat.S_ISFIFO(st.st_mode) or (stdin and os.isatty(fd)):
        return True
    raise error(f"cannot read {name}: it is {_kind_of(st.st_mode)}, not a file collsim can read "
                "(a regular file, standard input or a pipe)")


def open_for_reading(path: str | os.PathLike, *, limit: int = MAX_READ_BYTES,
                     error: type[Exception] = InputError, name: str | None = None) -> BinaryIO:
    """Open a regular file (at most ``limit`` bytes) or a named pipe for reading, in binary."""
    name = name or os.fsdecode(path)
    try:
        fh = open(path, "rb")  # a named pipe blocks here until a writer opens it, as cat does
    except OSError as exc:
        raise error(f"cannot read {name}: {os_reason(exc)}") from None
    try:
        _check_readable(fh.fileno(), name, limit, error, stdin=False)
    except BaseException:
        fh.close()
        raise
    return fh


def read_bytes(path: str | os.PathLike | None, *, limit: int = MAX_READ_BYTES,
               error: type[Exception] = InputError, name: str | None = None, stream: BinaryIO | None = None) -> bytes:
    """The contents of a file, or of standard input when ``path`` is None or ``-``: at most ``limit`` bytes.

    The one reader of every file collsim reads (schedules, TOML files, XML): see
    :func:`open_for_reading` for what is refused.  Standard input may be a file, a pipe
    or a terminal; a stream is read in pieces and refused as soon as it passes ``limit``.
    """
    if stream is not None:
        return _read_limited(stream, name or "the input", limit, error)
    if path is None or os.fspath(path) == "-":
        name = name or "standard input"
        stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
        if stream is None:
            raise error(f"cannot read {name}: it is closed")
        try:
            _check_readable(stream.fileno(), name, limit, error, stdin=True)
        except (AttributeError, OSError, ValueError):  # not a real file descriptor (a test's stream)
            pass
        return _read_limited(stream, name, limit, error)
    name = name or os.fsdecode(path)
    with open_for_reading(path, limit=limit, error=error, name=name) as fh:
        return _read_limited(fh, name, limit, error)


def read_text(path: str | os.PathLike, *, limit: int = MAX_READ_BYTES, error: type[Exception] = InputError,
              name: str | None = None) -> str:
    """The contents of a text file (UTF-8, as TOML files are), read by :func:`read_bytes`."""
    name = name or os.fsdecode(path)
    data = read_bytes(path, limit=limit, error=error, name=name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"cannot read {name}: it is not a text file (UTF-8)") from None


def _read_limited(fh, name: str, limit: int, error: type[Exception]) -> bytes:
    parts, total = [], 0
    try:
        while True:
            part = fh.read(min(1 << 24, limit + 1 - total))
            if not part:
                return b"".join(parts)
            parts.append(part)
            total += len(part)
            if total > limit:
                raise error(f"cannot read {name}: it is more than the {_size_text(limit)} collsim reads "
                            "(collsim.core.reading.MAX_READ_BYTES)")
    except OSError as exc:
        raise error(f"cannot read {name}: {os_reason(exc)}") from None
