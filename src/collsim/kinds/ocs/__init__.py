"""The optical circuit switch: its system, circuit configurations, phases and reconfiguration
time, its reconfiguration-aware lower bound and the crossovers between its algorithms.

Importing any module of this package registers the kind (:mod:`.model`).

>>> from collsim.kinds.ocs import OCS
>>> OCS(nodes=8, ports=2).ports
2
"""

from .system import OCS
from .model import OCSModel, OCSPart, ocs_lower_bound_s
from .view import OCSView

__all__ = ["OCSView", "OCS", "OCSModel", "OCSPart", "ocs_lower_bound_s"]
