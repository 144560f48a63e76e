"""MSCCL algorithm XML out and in (docs/formats.md, "MSCCL algorithm XML").

The format is the one msccl-executor-nccl and RCCL execute (M. Cowan et al., "MSCCLang:
Microsoft Collective Communication Language", ASPLOS 2023; the repositories
Azure/msccl-executor-nccl and microsoft/msccl-tools).  :func:`export_msccl` writes an
electrical collsim schedule as such a file (:mod:`.msccl_export`); :func:`import_msccl`
reads one written by any tool, checks it (:mod:`.msccl_check`, :mod:`.msccl_hb`) and
verifies it as a collsim schedule (:mod:`.msccl_import`).
"""

from __future__ import annotations

import os

from ...core.schedule import Schedule
from .rules import check_algo
from .writing import schedule_to_msccl
from .reading import MscclImport, import_msccl, infer_root
from .xml_model import MscclAlgo, MscclLimits, from_xml, read_xml, to_xml, write_xml


def export_msccl(schedule: Schedule, path: str | os.PathLike, *, limits: MscclLimits = MscclLimits(),
                 **options) -> MscclAlgo:
    """Write an electrical schedule as MSCCL algorithm XML, atomically, after checking the result.

    Parameters
    ----------
    schedule : Schedule
        A schedule of allgather, reducescatter, allreduce, alltoall, broadcast or reduce on an
        electrical network.
    path : str or path
        The XML file to write.
    limits : MscclLimits, optional
        The executor's limits.
    **options
        ``proto``, ``name``, ``min_bytes``, ``max_bytes`` (:func:`.msccl_export.schedule_to_msccl`).

    Returns
    -------
    MscclAlgo
        What was written (the same input gives byte-identical files).

    Examples
    --------
    >>> import collsim, os, tempfile
    >>> s = collsim.build("ring", "star", "allreduce", 1024, nodes=4)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     algo = export_msccl(s, os.path.join(d, "ring.xml"))
    ...     import_msccl(os.path.join(d, "ring.xml")).schedule.num_steps
    6
    """
    algo = schedule_to_msccl(schedule, limits=limits, **options)
    check_algo(algo, limits, schedule.collective.root)
    write_xml(algo, path)
    return algo


__all__ = ["MscclAlgo", "MscclImport", "MscclLimits", "check_algo", "export_msccl", "from_xml", "import_msccl",
           "infer_root", "read_xml", "schedule_to_msccl", "to_xml", "write_xml"]
