"""Striped multi-stage schedules on the optical ring: OpTree-like stages over every free channel.

A radix vector ``(r_1, ..., r_k)`` with product N defines k stages; stage j has
stride ``d_j = N / (r_1 ... r_j)`` (stage 1 the longest, the last stride 1).  Before
stage j node x holds the blocks of one residue class mod ``d_{j-1}`` (``D_j = r_1 ...
r_{j-1}`` blocks, its *unit*); in stage j it gathers the units of ``x + t d_j`` for t in
the window ``[-a_j, b_j]``, ``a_j = floor((r_j - 1)/2)``, ``b_j = r_j - 1 - a_j``.

* ``pipeline`` (default): two ring pipelines on the stride-``d_j`` ring, clockwise for
  ``a_j`` rounds and counter-clockwise for ``b_j``; in round q every node forwards the
  unit it received in round q-1.  Every lightpath is ``d_j`` hops, every link carries
  ``d_j`` of them per direction, so each transfer gets a band of about ``F w / d_j``
  wavelengths.  Stage 1 with ``r_1`` even runs ``r_1/2`` rounds both ways, the last one
  carrying half of the unit each way.
* ``direct``: every node sends its unit to all ``r_j - 1`` window members at once, over
  bands as wide as the stage's link load allows (exact circular-arc colouring).

Reduce-scatter runs the all-gather's rounds backwards with the transfers reversed and
reduced at the receiver; all-reduce is reduce-scatter then all-gather over N blocks.
Default radices: the smallest closed-form time (:func:`~.cost.striped_stages_time_s`) among the
ordered factorisations of N into at most four factors, physically feasible ones first.
Derivation and measurements: docs/derivations/striped-stages.md.

One module per concept, each using only those listed before it:

* :mod:`~collsim.algorithms.striped_stages.plan`: radix vectors, the circular-arc
  colouring and the plan of every stage (windows, rounds, pieces, bands);
* :mod:`~collsim.algorithms.striped_stages.cost`: a plan's closed-form time and the
  radices it chooses (the default, and the ``tune=`` candidates);
* :mod:`~collsim.algorithms.striped_stages.build`: the schedule, and its registration.

Importing the package registers the family; its public names are re-exported here.

References
----------
F. Dai, Y. Chen, Z. Huang, H. Zhang, "OpTree: An Efficient Algorithm for All-gather
Operation in Optical Interconnect Systems", IEEE Open Journal of the Communications
Society, 2024, §IV-A (stages of all-to-alls); P. Patarasuk, X. Yuan, "Bandwidth Optimal
All-reduce Algorithms for Clusters of Workstations", JPDC 69(2), 2009 (ring pipelines,
all-reduce as reduce-scatter then all-gather); J. Bruck et al., "Efficient algorithms for
all-to-all communications in multiport message-passing systems", IEEE TPDS 8(11), 1997
(mixed-radix stages).  Striping every stage over the free channels is collsim's own
construction.
"""

from __future__ import annotations

from .build import striped_stages
from .cost import choose_radices, striped_stages_candidates, striped_stages_time_s
from .plan import (
                   STAGE_MODES,
                   StagePlan,
                   StagesPlan,
                   arc_colours,
                   ordered_factorisations,
                   parse_radices,
                   plan_stages,
)

__all__ = ["striped_stages", "striped_stages_time_s", "choose_radices", "striped_stages_candidates",
           "STAGE_MODES", "StagePlan", "StagesPlan", "parse_radices", "ordered_factorisations", "arc_colours",
           "plan_stages"]
