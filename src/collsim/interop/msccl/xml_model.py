"""MSCCL algorithm XML: the data model, the executor's limits, writing and parsing.

An MSCCL algorithm (M. Cowan et al., "MSCCLang: Microsoft Collective Communication
Language", ASPLOS 2023; the format msccl-executor-nccl and RCCL read) is one ``<algo>``
holding a ``<gpu>`` per rank, each holding ``<tb>`` thread blocks of ordered ``<step>``
instructions.  This module holds it as frozen dataclasses, writes it with
:mod:`xml.etree.ElementTree` (no XML declaration: the executor's own parser stops at
``<?xml``) and reads it back, refusing a missing or non-integer attribute with a
:class:`~collsim.interop.msccl.errors.MscclFormatError` naming the gpu, thread block and step.
The rules beyond attributes are checked by :mod:`collsim.interop.msccl.rules`.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ...core.errors import InputError
from .errors import MscclFormatError

ALGO_ATTRS = ("name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
              "minBytes", "maxBytes")
GPU_ATTRS = ("id", "i_chunks", "o_chunks", "s_chunks")
TB_ATTRS = ("id", "send", "recv", "chan")
STEP_ATTRS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")
SENDS = frozenset({"s", "rcs", "rrs", "rrcs"})
RECVS = frozenset({"r", "rcs", "rrs", "rrc", "rrcs"})
REDUCES = frozenset({"rrs", "rrc", "rrcs", "re"})
BUFFERS = ("i", "o", "s")
PROTOS = ("Simple", "LL", "LL128")


@dataclass(frozen=True)
class MscclLimits:
    """The executor's limits, each an option where it depends on the executor's version."""

    max_steps: int = 64
    max_thread_blocks: int = 64
    max_tbs_per_channel: int = 32
    max_channels: int = 32
    max_count: int = 71
    max_offset: int = 32767

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_thread_blocks", "max_tbs_per_channel", "max_channels", "max_count",
                     "max_offset"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class MscclStep:
    """One ``<step>``: an instruction of a thread block."""

    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int
    hasdep: int


@dataclass(frozen=True)
class MscclThreadBlock:
    """One ``<tb>``: a thread block with at most one send and one receive peer, on one channel."""

    id: int
    send: int
    recv: int
    chan: int
    steps: tuple[MscclStep, ...]


@dataclass(frozen=True)
class MscclGpu:
    """One ``<gpu>``: a rank's buffer sizes (in chunks) and thread blocks."""

    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: tuple[MscclThreadBlock, ...]


@dataclass(frozen=True)
class MscclAlgo:
    """One ``<algo>``: an MSCCL algorithm."""

    name: str
    proto: str
    coll: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    inplace: int
    outofplace: int
    min_bytes: int
    max_bytes: int
    gpus: tuple[MscclGpu, ...]

    def num_steps(self) -> int:
        """Steps in the whole algorithm, nops included."""
        return sum(len(tb.steps) for g in self.gpus for tb in g.tbs)


def to_xml(algo: MscclAlgo) -> str:
    """The algorithm as MSCCL XML text (attributes in the executor's order, two-space indent)."""
    root = ET.Element("algo", {"name": algo.name, "proto": algo.proto, "nchannels": str(algo.nchannels),
                               "nchunksperloop": str(algo.nchunksperloop), "ngpus": str(algo.ngpus),
                               "coll": algo.coll, "inplace": str(algo.inplace), "outofplace": str(algo.outofplace),
                               "minBytes": str(algo.min_bytes), "maxBytes": str(algo.max_bytes)})
    for g in algo.gpus:
        ge = ET.SubElement(root, "gpu", {"id": str(g.id), "i_chunks": str(g.i_chunks), "o_chunks": str(g.o_chunks),
                                         "s_chunks": str(g.s_chunks)})
        for tb in g.tbs:
            te = ET.SubElement(ge, "tb", {"id": str(tb.id), "send": str(tb.send), "recv": str(tb.recv),
                                          "chan": str(tb.chan)})
            for st in tb.steps:
                ET.SubElement(te, "step", {k: str(getattr(st, k)) for k in STEP_ATTRS})
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def write_xml(algo: MscclAlgo, path: str | os.PathLike) -> None:
    """Write the algorithm to ``path`` atomically (:func:`collsim.core.files.atomic_write`)."""
    from ...core.files import atomic_write
    data = to_xml(algo).encode("ascii", "xmlcharrefreplace")
    atomic_write(path, lambda fh: fh.write(data))


def _ints(elem: ET.Element, names: tuple[str, ...], where: str) -> dict:
    out = {}
    for name in names:
        raw = elem.get(name)
        if raw is None:
            raise MscclFormatError(f"{where}: missing attribute {name!r}")
        if name in ("type", "srcbuf", "dstbuf", "name", "proto", "coll"):
            out[name] = raw.strip()
            continue
        try:
            out[name] = int(raw.strip())
        except ValueError:
            raise MscclFormatError(f"{where}: attribute {name}={raw!r} is not an integer") from None
        if not -2**31 <= out[name] < 2**63:
            raise MscclFormatError(f"{where}: attribute {name}={raw!r} is out of range")
    return out


def from_xml(text: str | bytes, source: str = "the XML") -> MscclAlgo:
    """Parse MSCCL algorithm XML (every attribute the executor requires must be there)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MscclFormatError(f"{source}: not well-formed XML ({exc})") from None
    if root.tag != "algo":
        raise MscclFormatError(f"{source}: the root element is <{root.tag}>, not <algo>")
    a = _ints(root, ALGO_ATTRS[:1] + ("proto", "coll"), f"{source}: algo")
    a.update(_ints(root, ("nchannels", "nchunksperloop", "ngpus", "inplace", "outofplace", "minBytes", "maxBytes"),
                   f"{source}: algo"))
    gpus = []
    for gi, ge in enumerate(root.findall("gpu")):
        g = _ints(ge, GPU_ATTRS, f"{source}: gpu #{gi}" if ge.get("id") is None else f"{source}: gpu {ge.get('id')}")
        tbs = []
        for ti, te in enumerate(ge.findall("tb")):
            tname = f"{source}: gpu {g['id']}, tb " + (f"#{ti}" if te.get("id") is None else str(te.get("id")))
            t = _ints(te, TB_ATTRS, tname)
            steps = []
            for si, se in enumerate(te.findall("step")):
                sname = f"{tname}, step " + (f"#{si}" if se.get("s") is None else str(se.get("s")))
                steps.append(MscclStep(**_ints(se, STEP_ATTRS, sname)))
            tbs.append(MscclThreadBlock(t["id"], t["send"], t["recv"], t["chan"], tuple(steps)))
        gpus.append(MscclGpu(g["id"], g["i_chunks"], g["o_chunks"], g["s_chunks"], tuple(tbs)))
    return MscclAlgo(a["name"], a["proto"], a["coll"], a["nchannels"], a["nchunksperloop"], a["ngpus"], a["inplace"],
                     a["outofplace"], a["minBytes"], a["maxBytes"], tuple(gpus))


def read_xml(path: str | os.PathLike) -> MscclAlgo:
    """Read an MSCCL algorithm XML file."""
    from ...core.reading import read_bytes
    data = read_bytes(path, error=MscclFormatError)  # a regular file, never a device (core.files)
    return from_xml(data, str(path))
