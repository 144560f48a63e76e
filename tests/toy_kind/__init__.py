"""A toy kind of system, registered by importing this package and by nothing else.

It proves that a kind added to collsim needs no line outside its own package (tests/test_kind_plugins.py):
a ring of point-to-point links whose result rows carry one extra field, ``toy_links``.
:func:`unregister` removes it again, so that the rest of the suite never sees it.
"""

from __future__ import annotations

from .model import ToyModel, ToyPart, ToyView, register, unregister
from .system import ToyRing

register()

__all__ = ["ToyModel", "ToyPart", "ToyRing", "ToyView", "register", "unregister"]
