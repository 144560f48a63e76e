"""Kinds of system, one subpackage each: ``optical_ring``, ``optical_torus``, ``network``, ``ocs`` and
``hierarchical`` (docs/layout.md).

A kind's subpackage holds its system classes, routes and their file format, routing or wavelength
assignment, resource checks, time model, lower bound and physical layer, and its model
(:class:`~collsim.kinds.base.KindModel`), which it registers on import
(:func:`~collsim.kinds.base.register_model`).  Importing this package imports every module and
subpackage in it (:func:`pkgutil.iter_modules`): a new kind is a new subpackage here, with no
registration line anywhere else.  Code below this layer never imports it: the package is loaded
through the entry-point group ``collsim.system_kinds`` (:func:`collsim.core.plugins.discover`).

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

__all__ = ["CAPABILITIES", "KindModel", "SystemModel", "Timing", "model_for", "models", "register_model", "require"]
