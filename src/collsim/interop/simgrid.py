"""SimGrid platforms: a collsim electrical network as SimGrid XML (version 4.1) and a host file.

The mapping (docs/formats.md, "SimGrid platforms"):

* one ``<host id="nI" speed="1Gf">`` per end node ``I`` (switches are not hosts: they only
  join links, and a route names its links directly);
* one ``<link id="lK">`` per collsim **directed** link ``K``, with its bandwidth in ``Bps`` and
  its latency in ``s`` (``sharing_policy`` left at SimGrid's default, SHARED: each direction is
  its own link, so SPLITDUPLEX is not needed) and a ``<prop id="collsim" value="n0->s1"/>``
  naming it as collsim does;
* if the system has a per-message ``startup_s``, one more link ``startup``, FATPIPE (each flow
  gets its whole bandwidth: it never constrains a rate), with that latency, put first on every
  route: SimGrid then charges ``startup_s + sum of link latencies`` per message, collsim's
  fixed latency;
* one ``<route src dst symmetrical="NO">`` for every ordered pair of hosts, listing the links of
  collsim's own route (:meth:`collsim.kinds.network.network.Network.route`), in a zone with
  ``routing="Full"``; or, given ``pairs`` (the pairs a schedule's transfers use, both ways:
  :func:`schedule_pairs`), for those pairs only.

The route table has ``N (N - 1)`` routes (or one per given pair) and as many times the mean hop
count link references; it is estimated (from a sample of the pairs) and refused before anything
is built when it exceeds ``max_route_entries``.  A schedule uses few pairs (a ring's
all-gather 2N of the N (N - 1)), so the replay of a 256-node ring needs 512 routes, not 65280.

References
----------
H. Casanova, A. Giersch, A. Legrand, M. Quinson, F. Suter, "Versatile, scalable, and accurate
simulation of distributed applications and platforms", J. Parallel Distrib. Comput. 74(10),
2014 (SimGrid, its platform description and its flow-level network models).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.errors import InputError, UnsupportedError
from ..core.files import atomic_write
from ..kinds.network.network import Network
from ..core.plugins import require
from ..core.system import System

PLATFORM_FILE = "platform.xml"
HOST_FILE = "hosts.txt"
HOST_SPEED = "1Gf"
"""Host speed written for every host; no computation is simulated, so it only has to be valid."""
MAX_ROUTE_ENTRIES = 2_000_000
"""Default ceiling on the link references of the route table (about 100 MB of XML)."""
XML_HEADER = (b"<?xml version='1.0'?>\n"
              b'<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n')
_SAMPLE_PAIRS = 4096


def _network(system: System) -> Network:
    require(system, "simgrid", "a SimGrid platform")
    return system  # a Network: the kinds that declare "simgrid" are networks


def ecmp_refusal(system: System) -> UnsupportedError:
    """The error for a network that splits transfers over several paths (SimGrid: one route per pair)."""
    return UnsupportedError(f"a SimGrid platform has one route per pair of hosts, but {system.name} splits "
                            f"transfers over equal-cost paths (routing = \"ecmp\"); export it with single-path "
                            f"routing: -S routing=single-path (routing = \"single-path\" in a TOML file)")


def host_name(node: int) -> str:
    """SimGrid host id of end node ``node``: collsim's own vertex name."""
    return f"n{int(node)}"


def estimate_route_entries(system: System, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> int:
    """Link references in the route table of ``system``'s platform, estimated without building it."""
    net = _network(system)
    n = net.nodes
    pairs_of = pairs
    pairs = n * (n - 1) if pairs_of is None else len(pairs_of[0])
    if pairs == 0:
        return 0
    take = (np.arange(pairs, dtype=np.int64) if pairs <= _SAMPLE_PAIRS  # all, or a fixed pseudo-random sample
            else np.random.default_rng(0).integers(0, pairs, _SAMPLE_PAIRS))
    if pairs_of is None:
        src, off = np.divmod(take, n - 1)
        dst = off + (off >= src)  # skip the diagonal
    else:
        src, dst = np.asarray(pairs_of[0], np.int64)[take], np.asarray(pairs_of[1], np.int64)[take]
    ptr, _ = net.route(src, dst)
    per_route = float(np.diff(ptr).mean()) + (1 if net.startup_s else 0)
    return int(round(pairs * per_route))


@dataclass(frozen=True)
class PlatformFiles:
    """What :func:`write_platform` wrote."""

    platform: Path
    hosts: Path
    routes: int
    route_entries: int


def _check_size(net: Network, max_route_entries: int, pairs=None) -> int:
    estimate = estimate_route_entries(net, pairs)
    if estimate > max_route_entries:
        routes = net.nodes * (net.nodes - 1) if pairs is None else len(pairs[0])
        raise InputError(f"the SimGrid platform of a {net.topology} network with {net.nodes} nodes needs about "
                         f"{estimate:,} route entries ({routes:,} routes), above the limit of "
                         f"{max_route_entries:,}: use fewer nodes, or raise the limit (--max-route-entries)")
    return estimate


def schedule_pairs(schedule) -> tuple[np.ndarray, np.ndarray]:
    """The ordered pairs of hosts a schedule's transfers use, each in both directions, source-major.

    The replay sends only along these pairs (``MPI_Isend``/``MPI_Irecv``); the reverse direction
    is listed too, so a protocol message back to the sender has a route.
    """
    n = int(schedule.system.nodes)
    a, b = np.asarray(schedule.src, np.int64), np.asarray(schedule.dst, np.int64)
    keys = np.unique(np.concatenate([a * n + b, b * n + a]))
    src, dst = np.divmod(keys, n)
    keep = src != dst
    return src[keep], dst[keep]


def all_routes(system: System) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """collsim's route of every ordered pair of distinct end nodes, source-major.

    A network with ``routing = "ecmp"`` is refused when some pair has several minimum-hop
    paths (SimGrid routes a pair one way): rebuild it with ``routing = "single-path"``.
    """
    net = _network(system)
    n = net.nodes
    src, dst = np.divmod(np.arange(n * n, dtype=np.int64), n)
    keep = src != dst
    return _routes(net, src[keep], dst[keep])


def _routes(net: Network, src: np.ndarray, dst: np.ndarray):
    routes = net.routes(src, dst)
    if routes.multipath:  # ECMP with equal-cost paths somewhere: SimGrid cannot split a message
        raise ecmp_refusal(net)
    return src, dst, np.asarray(routes.route_ptr, np.int64), np.asarray(routes.route_links, np.int64)


def _number(value: float) -> str:
    """Shortest text that reads back as the same float (deterministic, exact)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e18 else repr(value)


def platform_tree(system: System, *, max_route_entries: int = MAX_ROUTE_ENTRIES, pairs=None) -> ET.Element:
    """The ``<platform>`` element of ``system`` (see the module docstring for the mapping)."""
    net = _network(system)
    _check_size(net, max_route_entries, pairs)
    lt = net.links
    root = ET.Element("platform", version="4.1")
    zone = ET.SubElement(root, "zone", id="collsim", routing="Full")
    for v in range(net.nodes):
        ET.SubElement(zone, "host", id=host_name(v), speed=HOST_SPEED)
    for k in range(len(lt)):
        link = ET.SubElement(zone, "link", id=f"l{k}", bandwidth=f"{_number(lt.bandwidth_bytes_per_s[k])}Bps",
                             latency=f"{_number(lt.latency_s[k])}s")
        ET.SubElement(link, "prop", id="collsim", value=net.link_name(k))
    startup = float(net.startup_s or 0.0)
    if startup > 0:  # a per-message start-up: a latency that never limits a rate
        bw = float(lt.bandwidth_bytes_per_s.max()) if len(lt) else 1.0
        ET.SubElement(zone, "link", id="startup", bandwidth=f"{_number(bw)}Bps", latency=f"{_number(startup)}s",
                      sharing_policy="FATPIPE")
    if pairs is None:
        src, dst, ptr, links = all_routes(net)
    else:
        src, dst, ptr, links = _routes(net, np.asarray(pairs[0], np.int64), np.asarray(pairs[1], np.int64))
    names = [f"l{k}" for k in range(len(lt))]
    for i in range(len(src)):
        route = ET.SubElement(zone, "route", src=host_name(src[i]), dst=host_name(dst[i]), symmetrical="NO")
        if startup > 0:
            ET.SubElement(route, "link_ctn", id="startup")
        for k in links[ptr[i]:ptr[i + 1]].tolist():
            ET.SubElement(route, "link_ctn", id=names[k])
    return root


def platform_xml(system: System, *, max_route_entries: int = MAX_ROUTE_ENTRIES, pairs=None) -> bytes:
    """The platform XML of ``system`` as bytes: declaration, DOCTYPE, then :func:`platform_tree`."""
    root = platform_tree(system, max_route_entries=max_route_entries, pairs=pairs)
    ET.indent(root)
    return XML_HEADER + ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def host_file(system: System) -> bytes:
    """The host file: host ``nI`` on line ``I``, so MPI rank ``I`` runs on collsim node ``I``."""
    net = _network(system)
    return "".join(f"{host_name(v)}\n" for v in range(net.nodes)).encode()


def write_platform(system: System, out_dir: str | Path, *,
                   max_route_entries: int = MAX_ROUTE_ENTRIES, pairs=None) -> PlatformFiles:
    """Write ``platform.xml`` and ``hosts.txt`` for ``system`` into ``out_dir`` (created if needed)."""
    net = _network(system)
    data = platform_xml(net, max_route_entries=max_route_entries, pairs=pairs)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from exc
    atomic_write(out / PLATFORM_FILE, lambda fh: fh.write(data))
    atomic_write(out / HOST_FILE, lambda fh: fh.write(host_file(net)))
    routes = net.nodes * (net.nodes - 1) if pairs is None else len(pairs[0])
    return PlatformFiles(out / PLATFORM_FILE, out / HOST_FILE, routes, data.count(b"<link_ctn "))
