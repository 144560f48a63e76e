"""System models: each kind of system's behaviour in one place (see :mod:`.base`).

Importing this package registers the models, for optical rings, optical tori and
electrical networks.

>>> from collsim.kinds import model_for
>>> from collsim.systems import load_system
>>> model_for(load_system("mlfm", d=2)).name
'network'
"""

from __future__ import annotations

from .base import SystemModel, Timing, model_for, register_model
from .network import NetworkModel, NetworkPart
from .optical_ring import OpticalPart, OpticalRingModel
from .optical_torus import OpticalTorusModel

__all__ = ["NetworkModel", "NetworkPart", "OpticalPart", "OpticalRingModel", "OpticalTorusModel", "SystemModel",
           "Timing", "model_for", "register_model"]
