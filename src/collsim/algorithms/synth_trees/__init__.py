"""The spanning-tree packing synthesizer (``synth-trees``), after ForestColl.

L. Zhao et al., "ForestColl: Efficient collective communications on heterogeneous network
fabrics", arXiv 2402.06787, 2024; ``docs/synthesis.md``.  One module per concept, each using
only those listed before it:

* :mod:`~collsim.algorithms.synth_trees.arborescence`: a minimum-cost arborescence with a given
  root (Chu-Liu/Edmonds), the pricing step;
* :mod:`~collsim.algorithms.synth_trees.packing`: the fractional packing of arborescences at the
  optimal rate, by column generation (HiGHS);
* :mod:`~collsim.algorithms.synth_trees.pipeline`: the packing cut into pieces and pipelined in
  rounds;
* :mod:`~collsim.algorithms.synth_trees.build`: each collective's schedule and the registration.

Importing the package registers the family.
"""

from __future__ import annotations

from .arborescence import min_arborescence
from .build import requires, synth_trees
from .packing import Packing, pack
from .pipeline import per_round, pipeline

__all__ = ["synth_trees", "requires", "pack", "Packing", "pipeline", "per_round", "min_arborescence"]
