"""Schedule files on the command line: ``-`` is standard input or output.

* ``collsim schedule ... --out FILE`` writes through
  :func:`collsim.core.files.atomic_write` (a failed write leaves FILE as it was);
  ``--out -`` writes the schedule to standard output, always as JSON (the
  exchange format: text, which pipes and terminals carry).  ``.npz`` is written
  only to a named file: there is no way to ask for it on standard output, so
  binary never reaches a terminal.
* ``collsim verify -`` reads a schedule from standard input: ``.npz`` if the
  bytes start as a zip archive does, JSON otherwise.  Files and standard input
  are read by :func:`collsim.core.reading.read_bytes`: a regular file, a pipe or a
  terminal, at most :data:`~collsim.core.reading.MAX_READ_BYTES` (a device such as
  ``/dev/zero`` is refused before a byte is read).

Loading this module imports neither numpy nor the library: the functions import
what they need.
"""

from __future__ import annotations

import os
import sys

STDIO = "-"


def write_schedule(sched, out: str, progress=None, *, expand: bool = True) -> str:
    """Write ``sched`` to the file ``out``, or as JSON to standard output if ``out`` is ``-``.

    Returns what to call the destination in messages.  ``progress(done, total)`` is called
    per step written (a progress bar's hook).  ``expand=False``: a symmetric schedule or one
    whose steps repeat is written as its representatives and group (version 4).
    """
    if out != STDIO:
        from ..core.serialize import save
        save(sched, out, progress, expand=expand)
        return out
    from ..core.serialize import write_json
    stream = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else sys.stdout
    try:
        sys.stdout.flush()
        write_json(sched, lambda text: stream.write(text.encode()), progress, expand=expand)
        stream.flush()
    except BrokenPipeError:  # the reader went away: say nothing more, and let nothing flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise
    return "standard output"


def read_schedule(file: str, progress=None, *, compact: bool = False):
    """Read the schedule file ``file``, or standard input if ``file`` is ``-`` (JSON or ``.npz``).

    ``progress(done, total)`` is called per step read from a JSON file (a progress bar's hook).
    The one loader, :func:`collsim.core.schedule_file.load_schedule`, reads it; ``compact``: a file
    of representatives and their group stays in that form (else it is expanded).
    """
    from ..core.schedule_file import load_schedule
    return load_schedule(file, progress, stdin=True, what="reading a schedule", compact=compact)
