"""The matching synthesizer (``synth-matching``): link-chunk matching over time, after TACOS.

W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna, "TACOS: Topology-Aware
Collective Algorithm Synthesizer for Distributed Machine Learning", arXiv 2304.05301,
2023; ``docs/synthesis.md``.  One module per concept, each using only those listed
before it:

* :mod:`~collsim.algorithms.synth_matching.overlays`: circulant overlays of logical links
  between end nodes, for networks whose end nodes meet only through switches;
* :mod:`~collsim.algorithms.synth_matching.step`: one run of the matching (who sends which
  pieces to whom in each step);
* :mod:`~collsim.algorithms.synth_matching.effort`: what a run costs at least, checked against
  collsim's time limit before it starts;
* :mod:`~collsim.algorithms.synth_matching.search`: the search over its choices (pieces,
  capacity, seeds and overlays);
* :mod:`~collsim.algorithms.synth_matching.build`: the family: the schedule of each
  collective from a plan, and its registration.

Importing the package registers the family; its public names are re-exported here.
"""

from __future__ import annotations

from .build import owner_weights, requires, synth_matching
from .overlays import Overlay, OverlayLinks, by_name, dfs_order, overlay, shift_sets
from .search import best_plan
from .step import Plan, match

__all__ = ["synth_matching", "requires", "owner_weights", "best_plan", "Plan", "match",
           "Overlay", "OverlayLinks", "overlay", "dfs_order", "shift_sets", "by_name"]
