"""The bibliography: every work collsim implements or compares with, under a short key.

Registry references (``reference=`` of :func:`~collsim.algorithms.registry.register`)
and ``collsim reproduce`` cite works as ``[Key]``; :func:`citations` turns such
text into the full entries (authors, title, venue, year) that ``collsim
algorithms`` and ``collsim reproduce`` print.  docs/references.md is the same
list for readers, with what collsim takes from each work.

Details (volume, pages) are given only where they were checked against the
work itself or the reference list of a paper that cites it; none is guessed.

>>> BIBLIOGRAPHY["Bruck97"].year
1997
>>> [c.key for c in citations("[OpTree24] Table 1, after [Chen05]")]
['OpTree24', 'Chen05']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import UnknownNameError, did_you_mean


@dataclass(frozen=True)
class Citation:
    """One bibliography entry.

    References
    ----------
    The entries follow the reference lists of the works collsim implements (see
    docs/references.md for where each detail was checked).
    """

    key: str
    authors: str
    title: str
    venue: str
    year: int | None
    details: str = ""

    def text(self) -> str:
        """The full citation: authors, "title", venue[ details], year."""
        volume = re.match(r"\d+(\(|,|$)", self.details)  # "19(1), pp. 49-66" follows the journal's name
        venue = f"{self.venue} {self.details}" if volume else ", ".join(p for p in (self.venue, self.details) if p)
        return f'{self.authors}, "{self.title}", {venue}' + (f", {self.year}." if self.year else ".")

    def to_json(self) -> dict:
        """The entry as a JSON-able dict (with the formatted ``citation``)."""
        return {"key": self.key, "authors": self.authors, "title": self.title, "venue": self.venue,
                "year": self.year, "details": self.details, "citation": self.text()}


_ENTRIES = (
    # --- the source papers ------------------------------------------------------------------------------------
    Citation("OpTree24", "F. Dai, Y. Chen, Z. Huang, H. Zhang",
             "OpTree: An Efficient Algorithm for All-gather Operation in Optical Interconnect Systems",
             "IEEE Open Journal of the Communications Society", 2024),
    Citation("OpTree23", "F. Dai, Y. Chen, Z. Huang, H. Zhang",
             "OpTree: An Efficient Algorithm for All-gather Operation in Optical Interconnect Systems",
             "ICC 2023 - IEEE International Conference on Communications", 2023, "pp. 428-434"),
    Citation("WRHT23", "F. Dai, Y. Chen, Z. Huang, H. Zhang, F. Zhang",
             "POSTER: Efficient All-reduce for Distributed DNN Training in Optical Interconnect Systems",
             "28th ACM SIGPLAN Annual Symposium on Principles and Practice of Parallel Programming (PPoPP '23)",
             2023, "doi:10.1145/3572848.3577391"),
    Citation("WRHT-ICPP23", "F. Dai, Y. Chen, Z. Huang, H. Zhang",
             "WRHT: Efficient All-reduce for Distributed DNN Training in Optical Interconnect Systems",
             "Proceedings of the 52nd International Conference on Parallel Processing (ICPP)", 2023, "pp. 556-565"),
    Citation("MLFM16", "T. Shimizu, M. Miwa, K. Nakashima",
             "Acceleration of All-to-all Communication on Multi-Layer Full Mesh, Low-cost Connectable Network "
             "Topology", "technical poster, SC16 (Salt Lake City, UT)", 2016),
    Citation("Grama03", "A. Grama, A. Gupta, G. Karypis, V. Kumar", "Introduction to Parallel Computing",
             "Addison-Wesley", 2003, "2nd ed., ch. 4, 'Basic Communication Operations' (collsim follows the "
             "chapter's lecture slides)"),
    # --- MPI collectives and cost models ----------------------------------------------------------------------
    Citation("Thakur05", "R. Thakur, R. Rabenseifner, W. Gropp",
             "Optimization of Collective Communication Operations in MPICH",
             "The International Journal of High Performance Computing Applications", 2005, "19(1), pp. 49-66"),
    Citation("Bruck97", "J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby",
             "Efficient Algorithms for All-to-All Communications in Multiport Message-Passing Systems",
             "IEEE Transactions on Parallel and Distributed Systems", 1997, "8(11)"),
    Citation("Chen05", "J. Chen, L. Zhang, Y. Zhang, W. Yuan",
             "Performance Evaluation of Allgather Algorithms on Terascale Linux Cluster with Fast Ethernet",
             "Eighth International Conference on High-Performance Computing in Asia-Pacific Region (HPCAsia'05), "
             "IEEE", 2005),
    Citation("Chen05b", "J. Chen, Y. Zhang, L. Zhang, W. Yuan",
             "Performance of a New Allgather Algorithm on Terascale DeepComp 6800",
             "Proceedings of the 2005 Joint DCABES and ICPACE Meeting", 2005, "pp. 73-76"),
    Citation("Patarasuk09", "P. Patarasuk, X. Yuan",
             "Bandwidth Optimal All-reduce Algorithms for Clusters of Workstations",
             "Journal of Parallel and Distributed Computing", 2009, "69(2), pp. 117-124"),
    Citation("Rabenseifner04", "R. Rabenseifner", "Optimization of Collective Reduction Operations",
             "International Conference on Computational Science (ICCS 2004), LNCS 3036, Springer", 2004),
    Citation("KoggeStone73", "P. M. Kogge, H. S. Stone",
             "A Parallel Algorithm for the Efficient Solution of a General Class of Recurrence Equations",
             "IEEE Transactions on Computers", 1973, "C-22(8)"),
    Citation("Chan07", "E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn",
             "Collective Communication: Theory, Practice, and Experience",
             "Concurrency and Computation: Practice and Experience", 2007, "19(13)"),
    Citation("HararySchwenk74", "F. Harary, A. J. Schwenk", "The Communication Problem on Graphs and Digraphs",
             "Journal of the Franklin Institute", 1974, "297"),
    Citation("Hockney94", "R. W. Hockney", "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
             "Parallel Computing", 1994, "20(3)"),
    Citation("nccl-tests", "NVIDIA", "nccl-tests: performance notes (doc/PERFORMANCE.md, algorithm and bus "
             "bandwidth)", "software documentation, github.com/NVIDIA/nccl-tests", None),
    # --- networks ---------------------------------------------------------------------------------------------
    Citation("AlFares08", "M. Al-Fares, A. Loukissas, A. Vahdat", "A Scalable, Commodity Data Center Network "
             "Architecture", "Proceedings of ACM SIGCOMM 2008", 2008, "pp. 63-74"),
    Citation("Dally04", "W. J. Dally, B. Towles", "Principles and Practices of Interconnection Networks",
             "Morgan Kaufmann", 2004),
    Citation("Bertsekas92", "D. Bertsekas, R. Gallager", "Data Networks", "Prentice Hall", 1992, "2nd ed."),
    Citation("Shahrokhi90", "F. Shahrokhi, D. W. Matula", "The Maximum Concurrent Flow Problem",
             "Journal of the ACM 37(2)", 1990, "pp. 318-334"),
    Citation("Huangfu18", "Q. Huangfu, J. A. J. Hall", "Parallelizing the Dual Revised Simplex Method",
             "Mathematical Programming Computation 10", 2018, "pp. 119-142"),
    Citation("TACOS23", "W. Won, M. Elavazhagan, S. Srinivasan, S. Gupta, T. Krishna",
             "TACOS: Topology-Aware Collective Algorithm Synthesizer for Distributed Machine Learning",
             "arXiv preprint", 2023, "arXiv:2304.05301"),
    Citation("ForestColl24", "L. Zhao, S. Maleki, A. Shah, Z. Yang, H. Pourreza, A. Krishnamurthy",
             "ForestColl: Efficient Collective Communications on Heterogeneous Network Fabrics",
             "arXiv preprint", 2024, "arXiv:2402.06787 (version 1)"),
    Citation("Edmonds73", "J. Edmonds", "Edge-disjoint branchings",
             "Combinatorial Algorithms (R. Rustin, ed.), Algorithmics Press", 1973, "pp. 91-96"),
    Citation("Edmonds67", "J. Edmonds", "Optimum branchings",
             "Journal of Research of the National Bureau of Standards 71B", 1967, "pp. 233-240"),
    Citation("ChuLiu65", "Y. J. Chu, T. H. Liu", "On the shortest arborescence of a directed graph",
             "Scientia Sinica 14", 1965, "pp. 1396-1400"),
    Citation("Tarjan77", "R. E. Tarjan", "Finding optimum branchings", "Networks 7", 1977, ""),
    Citation("BangJensen95", "J. Bang-Jensen, A. Frank, B. Jackson",
             "Preserving and increasing local edge-connectivity in mixed graphs",
             "SIAM Journal on Discrete Mathematics 8(2)", 1995, "pp. 155-178"),
    Citation("Schwartz80", "J. T. Schwartz", "Fast probabilistic algorithms for verification of polynomial identities",
             "Journal of the ACM", 1980, "27(4)"),
    Citation("DantzigWolfe60", "G. B. Dantzig, P. Wolfe", "Decomposition principle for linear programs",
             "Operations Research 8(1)", 1960, "pp. 101-111"),
    Citation("FordFulkerson58", "L. R. Ford, D. R. Fulkerson", "Constructing maximal dynamic flows from static flows",
             "Operations Research 6(3)", 1958, "pp. 419-433"),
    Citation("SaadSchultz89", "Y. Saad, M. H. Schultz", "Data communication in parallel architectures",
             "Parallel Computing 11(2)", 1989),
    Citation("McKay14", "B. D. McKay, A. Piperno", "Practical graph isomorphism, II",
             "Journal of Symbolic Computation 60", 2014, "pp. 94-112"),
    Citation("WeisfeilerLeman68", "B. Weisfeiler, A. Leman",
             "The reduction of a graph to canonical form and the algebra which appears therein",
             "Nauchno-Technicheskaya Informatsia, Ser. 2, 9", 1968),
    Citation("ImaseItoh83", "M. Imase, M. Itoh", "A design for directed graphs with minimum diameter",
             "IEEE Transactions on Computers C-32(8)", 1983, "pp. 782-784"),
    Citation("ReddyPradhanKuhl80", "S. M. Reddy, D. K. Pradhan, J. G. Kuhl",
             "Directed graphs with minimal diameter and maximal connectivity",
             "School of Engineering, Oakland University, Technical Report", 1980),
    Citation("Zahavi10", "E. Zahavi",
             "D-Mod-K Routing Providing Non-Blocking Traffic for Shift Permutations on Real Life Fat Trees",
             "CCIT Report 776, Technion - Israel Institute of Technology", 2010),
    Citation("SimGrid08", "H. Casanova, A. Legrand, M. Quinson",
             "SimGrid: a Generic Framework for Large-Scale Distributed Experiments",
             "Tenth International Conference on Computer Modeling and Simulation (UKSim 2008), IEEE", 2008,
             "pp. 126-131"),
    Citation("Mirsadeghi16", "S. H. Mirsadeghi, A. Afsahi", "Topology-Aware Rank Reordering for MPI Collectives",
             "2016 IEEE International Parallel and Distributed Processing Symposium Workshops (IPDPSW)", 2016,
             "pp. 1759-1768"),
    # --- optical networks and the physical layer --------------------------------------------------------------
    Citation("Opatrny03", "J. Opatrny", "Uniform multi-hop all-to-all optical routings in rings",
             "Theoretical Computer Science", 2003, "297(1-3), pp. 385-397"),
    Citation("Bermond96", "J.-C. Bermond, L. Gargano, S. Perennes, A. A. Rescigno, U. Vaccaro",
             "Efficient Collective Communication in Optical Networks",
             "International Colloquium on Automata, Languages, and Programming (ICALP), Springer", 1996,
             "pp. 574-585"),
    Citation("Chlamtac92", "I. Chlamtac, A. Ganz, G. Karmi",
             "Lightpath Communications: An Approach to High Bandwidth Optical WAN's",
             "IEEE Transactions on Communications", 1992, "40(7)"),
    Citation("Zang00", "H. Zang, J. P. Jue, B. Mukherjee", "A Review of Routing and Wavelength Assignment "
             "Approaches for Wavelength-Routed Optical WDM Networks", "Optical Networks Magazine", 2000, "1(1)"),
    Citation("Ozdaglar03", "A. E. Ozdaglar, D. P. Bertsekas", "Routing and Wavelength Assignment in Optical "
             "Networks", "IEEE/ACM Transactions on Networking", 2003, "11(2), pp. 259-272"),
    Citation("Subramaniam97", "S. Subramaniam, R. A. Barry", "Wavelength Assignment in Fixed Routing WDM Networks",
             "IEEE International Conference on Communications (ICC '97)", 1997),
    Citation("Sathishkumar15", "P. Sathishkumar, V. Mahalingam", "Best-fit Wavelength Assignment Algorithm for "
             "Persistent Communication in Optical Networks",
             "International Journal of Computer Science and Information Technologies", 2015, "6(1), pp. 728-733"),
    Citation("SiPML21", "M. Khani, M. Ghobadi, M. Alizadeh, Z. Zhu, M. Glick, K. Bergman, A. Vahdat, B. Klenk, "
             "E. Ebrahimi", "SiP-ML: High-Bandwidth Optical Network Interconnects for Machine Learning Training",
             "Proceedings of ACM SIGCOMM 2021", 2021, "pp. 657-675"),
    Citation("TeraRack20", "M. Khani, M. Ghobadi, M. Alizadeh, Z. Zhu, M. Glick, K. Bergman, A. Vahdat, "
             "B. Klenk, E. Ebrahimi", "TeraRack: A Tbps Rack for Machine Learning Training",
             "manuscript (cited without a venue by OpTree24 and WRHT23)", 2020),
    Citation("Duong15", "L. H. Duong, M. Nikdast, J. Xu, Z. Wang, Y. Thonnart, S. Le Beux, P. Yang, X. Wu, "
             "Z. Wang", "Coherent Crosstalk Noise Analyses in Ring-Based Optical Interconnects",
             "Design, Automation & Test in Europe Conference & Exhibition (DATE), IEEE", 2015, "pp. 501-506"),
    Citation("Sarkar09", "S. Sarkar, N. R. Das", "Study of Component Crosstalk and Obtaining Optimum Detection "
             "Threshold for Minimum Bit-Error-Rate in a WDM Receiver", "Journal of Lightwave Technology", 2009,
             "27(19), pp. 4366-4373"),
    # --- hierarchical systems -----------------------------------------------------------------------------
    Citation("Sergeev18", "A. Sergeev, M. Del Balso", "Horovod: fast and easy distributed deep learning in "
             "TensorFlow", "arXiv preprint arXiv:1802.05799", 2018),
    Citation("Cho19", "M. Cho, U. Finkler, M. Serrano, D. Kung, H. Hunter", "BlueConnect: Decomposing all-reduce "
             "for deep learning on heterogeneous network hierarchy", "IBM Journal of Research and Development",
             2019, "63(6)"),
    Citation("Rashidi20", "S. Rashidi, S. Sridharan, S. Srinivasan, T. Krishna", "ASTRA-SIM: Enabling SW/HW "
             "Co-Design Exploration for Distributed DL Training Platforms", "IEEE International Symposium on "
             "Performance Analysis of Systems and Software (ISPASS)", 2020),
    Citation("Rashidi22", "S. Rashidi, W. Won, S. Srinivasan, S. Sridharan, T. Krishna", "Themis: A Network "
             "Bandwidth-Aware Collective Scheduling Policy for Distributed Training of DL Models",
             "Proceedings of the 49th Annual International Symposium on Computer Architecture (ISCA)", 2022),
)

BIBLIOGRAPHY: dict[str, Citation] = {c.key: c for c in _ENTRIES}
"""Every entry by key (docs/references.md lists the same keys)."""

_CITE = re.compile(r"\[([A-Za-z][\w.-]*)\]")


def cited_keys(text: str) -> list[str]:
    """The ``[Key]`` citations in ``text``, in order of first appearance (known or not).

    References
    ----------
    The keys are those of :data:`BIBLIOGRAPHY` (docs/references.md).
    """
    return list(dict.fromkeys(_CITE.findall(text)))


def citations(text: str) -> list[Citation]:
    """The bibliography entries ``text`` cites as ``[Key]``.

    References
    ----------
    The entries of :data:`BIBLIOGRAPHY` (docs/references.md).
    """
    out = []
    for key in cited_keys(text):
        if key not in BIBLIOGRAPHY:
            raise UnknownNameError(f"unknown citation [{key}]{did_you_mean(key, BIBLIOGRAPHY)}")
        out.append(BIBLIOGRAPHY[key])
    return out


__all__ = ["BIBLIOGRAPHY", "Citation", "cited_keys", "citations"]
