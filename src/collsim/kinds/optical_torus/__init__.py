"""The optical torus (WDM rings along each dimension): its system, routing and wavelength
assignment, resource checks and time model.

Importing any module of this package registers the kind (:mod:`.model`).

>>> from collsim.kinds.optical_torus import OpticalTorus
>>> OpticalTorus(rows=4, cols=4).nodes
16
"""

from .system import OpticalTorus
from .model import OpticalTorusModel

__all__ = ["OpticalTorus", "OpticalTorusModel"]
