"""Write ring16.xml and ring16.hosts: SimGrid's view of collsim's ``--system ring -n 16``.

Written by collsim's own exporter (:func:`collsim.interop.simgrid.write_platform`, the same as
``collsim export simgrid --system ring -n 16``): 16 hosts ``n0..n15``, one SimGrid link per
directed ring link (12.5e9 bytes/s, 1 us: collsim's electrical defaults), and collsim's route for
every ordered pair.  The neighbour exchange (ne_allgather.c) uses only the one-hop routes.

    python benchmarks/smpi/make_platform.py [N]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from collsim.interop.simgrid import HOST_FILE, PLATFORM_FILE, write_platform
from collsim.kinds.network.electrical import Ring


def main(argv: list[str]) -> None:
    n = int(argv[0]) if argv else 16
    here = Path(__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        write_platform(Ring(nodes=n), tmp)
        (here / f"ring{n}.xml").write_bytes((Path(tmp) / PLATFORM_FILE).read_bytes())
        (here / f"ring{n}.hosts").write_bytes((Path(tmp) / HOST_FILE).read_bytes())


if __name__ == "__main__":
    main(sys.argv[1:])
