"""OpTree: all-gather on the optical ring as a k-stage m-ary tree of one-hop all-to-alls.

F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024 (seed 004), §IV-A; ``docs/algorithms/optree.md``.  One module per
concept, each depending only on those listed before it:

* :mod:`~collsim.algorithms.optree.tree`: radix vectors (which trees exist on N nodes);
* :mod:`~collsim.algorithms.optree.formulas`: the paper's closed forms (Theorem 1,
  Lemma 3, Algorithm 1);
* :mod:`~collsim.algorithms.optree.colours`: which colour each chunk copy of a pair
  class gets, so that steps repeat lightpaths;
* :mod:`~collsim.algorithms.optree.layout`: each stage's lightpath pairs and colour classes;
* :mod:`~collsim.algorithms.optree.cost`: the exact collsim time of a tree, without
  building it;
* :mod:`~collsim.algorithms.optree.search`: the choice of tree (the exact search, or the
  paper's depth rules);
* :mod:`~collsim.algorithms.optree.build`: the explicit schedule.

Importing the package registers the family (``optree``, alias ``op-tree``); its
public names are re-exported here.  Its tests sit beside it, in ``tests/``.
"""

from __future__ import annotations

from ...core.collectives import CollectiveType
from ..registry import register
from .build import optree
from .colours import arrange_colours, divisor_blocks
from .cost import (
    StageCost,
    TreeCost,
    evaluate_tree,
    regular_tree_cost,
    uniform_stage_cost,
)
from .formulas import (
    algorithm1_steps,
    algorithm1_time,
    lemma3_k,
    theorem1_k,
    theorem1_proof_steps,
    theorem1_steps,
)
from .layout import StageTemplate, line_alltoall_colours, stage_templates
from .search import TREE_MODES, choose_tree, integral_radices, search_tree
from .tree import block_sizes, enumerate_trees, max_depth, validate_radices

__all__ = ["optree", "TREE_MODES", "choose_tree", "integral_radices", "search_tree",
           "theorem1_steps", "theorem1_k", "lemma3_k", "algorithm1_steps", "algorithm1_time", "theorem1_proof_steps",
           "StageCost", "TreeCost", "evaluate_tree", "regular_tree_cost", "uniform_stage_cost",
           "StageTemplate", "stage_templates", "line_alltoall_colours", "arrange_colours", "divisor_blocks",
           "max_depth", "block_sizes", "validate_radices", "enumerate_trees"]


def _paper_steps(system, collective: CollectiveType, params):
    if collective.name != "allgather" or "k" not in params:
        return None
    return theorem1_steps(system.nodes, system.channels_per_direction, params["k"])


def _tune(system, collective: CollectiveType, size_bytes):
    # collsim tune: the best tree of every depth, since a deeper tree has shorter lightpaths and may be
    # feasible where the fastest is not.  Every tree's stage 1 spans about N/2 hops (its longest
    # lightpath, (m-1)N/m hops, taken the short way round), so beyond twice the physical layer's reach
    # no depth is feasible and the exact search's tree (the default) is the only one worth building.
    from ...kinds.optical_ring.physical import max_feasible_hops
    if system.nodes // 2 > max_feasible_hops(system.physical_params()):
        return [{}]
    return [{"k": k} for k in range(1, max_depth(system.nodes) + 1)]


register(
    "optree", collectives=("allgather",), systems=("optical-ring",), aliases=("op-tree",),
    paper_steps=_paper_steps, params=("tree", "k", "radices"), realised=("steps", "reconfigurations"),
    tune=_tune,
    reference="[OpTree24] §IV-A: routing, Theorem 1 eq. (1), Lemma 3 eq. (2), Theorem 2, Algorithm 1, "
              "Table 1; §V-B Fig. 4 (conference version: [OpTree23])",
    summary="k-stage m-ary tree of one-hop all-to-alls, one chunk per lightpath, exact colouring",
)(optree)
