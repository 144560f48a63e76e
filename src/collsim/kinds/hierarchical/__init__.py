"""Hierarchical systems (boxes of accelerators joined by networks, one dimension per level): the
system, its dimensions and the per-dimension bounds.

Importing any module of this package registers the kind (:mod:`.model`).

>>> from collsim.kinds.hierarchical import Hierarchical
>>> Hierarchical.topology
'hierarchical'
"""

from .system import Hierarchical
from .model import HierarchicalModel, HierarchicalPart
from .view import HierarchicalView

__all__ = ["HierarchicalView", "Hierarchical", "HierarchicalModel", "HierarchicalPart"]
