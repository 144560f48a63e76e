"""The optical WDM ring: its system, routes and their file format, routing and wavelength
assignment, resource checks, optical time model, lower bound and physical layer.

Importing any module of this package registers the kind (:mod:`.model`), so a system of it
always finds its model.

>>> from collsim.kinds.optical_ring import OpticalRing
>>> OpticalRing(nodes=8).topology
'optical-ring'
"""

from .system import OpticalRing
from .model import OpticalPart, OpticalRingModel
from .view import OpticalRingView

__all__ = ["OpticalRingView", "OpticalPart", "OpticalRing", "OpticalRingModel"]
