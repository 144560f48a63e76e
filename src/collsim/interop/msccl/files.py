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
    """Write an electrical schedule as MSCCL algorithm XML, atomically, after checking the result."""
    algo = schedule_to_msccl(schedule, limits=limits, **options)
    check_algo(algo, limits, schedule.collective.root)
    write_xml(algo, path)
    return algo


__all__ = ["MscclAlgo", "MscclImport", "MscclLimits", "check_algo", "export_msccl", "from_xml", "import_msccl",
           "infer_root", "read_xml", "schedule_to_msccl", "to_xml", "write_xml"]
