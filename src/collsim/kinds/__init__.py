"""System models: each kind of system's behaviour in one place (see :mod:`.base`).

Importing this package imports every module in it (:func:`pkgutil.iter_modules`), and each kind's
module registers its model (:func:`~collsim.kinds.base.register_model`): a new kind is a new module
here, with no registration line anywhere else.

>>> from collsim.kinds import model_for, models
>>> from collsim.systems import load_system
>>> model_for(load_system("mlfm", d=2)).name
'network'
>>> {"optical-ring", "optical-torus", "network"} <= {m.name for m in models()}
True
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import CAPABILITIES, KindModel, SystemModel, Timing, model_for, models, register_model, require

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")

from .network import NetworkModel, NetworkPart  # noqa: E402  (names kept for existing callers)
from .optical_ring import OpticalPart, OpticalRingModel  # noqa: E402
from .optical_torus import OpticalTorusModel  # noqa: E402

__all__ = ["CAPABILITIES", "KindModel", "NetworkModel", "NetworkPart", "OpticalPart", "OpticalRingModel",
           "OpticalTorusModel", "SystemModel", "Timing", "model_for", "models", "register_model", "require"]
