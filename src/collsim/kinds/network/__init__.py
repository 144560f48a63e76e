"""Electrical networks: the network system and its link table, the topologies (line, ring, star,
mesh, torus, hypercube, fat tree, MLFM, custom graphs), routing (shortest paths, ECMP, the
multicommodity flow), the route file format, the cut and flow lower bounds and the model that
times schedules with the flow simulator.

Importing any module of this package registers the kind (:mod:`.model`) and its topologies.

>>> from collsim.kinds.network import Torus
>>> Torus(16, dims=(4, 4)).dims
(4, 4)
"""

from .network import LinkTable, Network
from .model import NetworkModel, NetworkPart
from .view import NetworkView
from .custom import CustomNetwork
from .electrical import Line, Ring, Star
from .fat_tree import FatTree
from .hypercube import Hypercube
from .mesh_torus import Mesh, Torus
from .mlfm import MLFM

__all__ = ["NetworkView", "CustomNetwork", "FatTree", "Hypercube", "Line", "LinkTable", "MLFM", "Mesh", "Network", "NetworkModel",
           "NetworkPart", "Ring", "Star", "Torus"]
