"""The algorithm registry: a decorator records each algorithm family's builders.

Every entry says which collectives and system kinds it supports, cites its
source, and may refuse a particular instance with a reason (e.g. neighbor
exchange needs an even node count).  ``collsim algorithms`` lists it; the
property tests iterate over it, so a new algorithm is tested the moment it is
registered.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from ..core.collective import CollectiveType, canonical_collective, collective_type
from ..core.errors import (
    InputError,
    UnknownNameError,
    UnsupportedError,
    close_matches,
    did_you_mean,
)
from ..core.plugins import model_for
from ..core.schedule import LogicalSchedule
from ..core.system import System
from ..core.validate import is_integer, is_number
from .bibliography import Citation, citations

Builder = Callable[..., tuple[LogicalSchedule, dict[str, Any]]]


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm (made by :func:`register`).

    Parameters
    ----------
    name : str
        Registry name used on the command line.
    builder : callable
        ``builder(system, collective, size_bytes, **params) -> (LogicalSchedule, params)``.  Every
        hook (``builder``, ``requires``, ``paper_steps``, ``alpha_beta``, ``tune``, ``deliveries``
        and ``closed_forms``) receives the collective as its object
        (:class:`~collsim.core.collectives.CollectiveType`), never its name.
    collectives : tuple of str
        Canonical names of the collectives it implements.
    systems : tuple of str
        Tags of the systems it runs on: a kind's name that kinds accept
        (:attr:`collsim.kinds.base.KindModel.accepts`; ``"network"`` is accepted by every
        electrical network and by any kind that realises point-to-point schedules), or one
        system class's ``kind`` (``"mlfm"``).
    reference : str
        Source: ``[Key]`` citations of :data:`~collsim.algorithms.bibliography.BIBLIOGRAPHY`
        with the section, equation or figure.
    summary : str
        One-line description.
    aliases : tuple of str
        Other accepted names.
    requires : callable or None
        ``requires(system, collective) -> str | None``: a reason it cannot run, or None.
    paper_steps : callable or None
        ``paper_steps(system, collective, params) -> int | None``: the paper's closed form on
        optical rings (sugar for ``closed_forms["optical-ring"]``).
    constraints : str
        Human-readable statement of what ``requires`` checks.
    params : tuple of str
        Keyword parameters the builder accepts.
    alpha_beta : callable or None
        ``alpha_beta(system, collective, size_bytes, params) -> seconds``: the closed-form
        α–β (Hockney) cost the source gives, with ``t_s = system.alpha_s`` and
        ``t_w = 1 / link bandwidth``; None when the source gives none (sugar for
        ``closed_forms["network"]``).
    realised : tuple of str
        Parameters the builder reports that are facts of the realised schedule
        (``steps``, ``reconfigurations``); the pipeline recomputes them after
        realisation, so a schedule never carries a prediction that disagrees with it.
    tune : callable or None
        ``tune(system, collective, size_bytes) -> list[dict]``: the parameter sets worth
        trying on this instance (``collsim tune`` builds, verifies and times each); None
        means the defaults only (:meth:`candidates`).
    closed_forms : Mapping of str to callable, optional
        The algorithm's closed forms per kind, keyed by the kind's name; each kind's model reads
        its own (``closed_forms.get(model.name)``) and defines what it is called with.  Filled
        from ``paper_steps`` and ``alpha_beta`` where those are given.
    deliveries : callable or None
        ``deliveries(system, collective, params) -> int | None``: the chunk deliveries its schedule
        makes (at least), in closed form, where they exceed the collective's own floor (a log factor
        of tree all-reduces and scans, the units of a hierarchical schedule);
        :func:`collsim.algorithms.build_logical` checks them against the memory limit before the
        builder runs.  None: the floor is what it makes.
    transfers : callable or None
        ``transfers(system, collective, params) -> int | None``: the transfers its logical schedule
        holds (at least), in closed form.  With the deliveries, they give the bytes its realisation
        holds at least (:func:`collsim.core.schedule.realised_floor_bytes`), checked before the
        builder runs, so that a schedule that could never be realised is not built first (ring
        all-reduce on 8,192 nodes: 1.3e8 transfers, 14 GiB).  None: not checked before building.
    orbits : callable or None
        ``orbits(system, collective, size_bytes, **params) -> (LogicalSchedule, params[, group[, interleaved]]) | None``:
        the same schedule's transfers into the group's domain alone (node 0 under the system's
        translation group, :meth:`collsim.kinds.base.KindModel.symmetry_group`; or the domain of
        the ``group`` it returns, a subgroup the kind accepts, None for the kind's own), where it
        is invariant, else None; ``interleaved`` says its chunks are numbered unit-major
        (:meth:`~collsim.core.symmetry.Translations.act_chunks`);
        :func:`collsim.pipeline.build_symmetric` realises them as a
        :class:`~collsim.core.symmetry.SymmetricSchedule`.  None: the algorithm declares no symmetry.
    symmetry : str
        Which of the kind's groups ``orbits`` builds under: ``"translations"`` (the default,
        :meth:`~collsim.kinds.base.KindModel.symmetry_group`) or ``"xor"``
        (:meth:`~collsim.kinds.base.KindModel.binary_group`); :meth:`group_on` names it.
    bases : callable or None
        ``bases(system, collective, params) -> list[(name, params)]``: the other algorithms whose
        schedules its builder builds as its base with these parameters (``relay``: OpTree's, WRHT's or
        OSM's); ``collsim compare`` builds each once for both rows
        (:func:`collsim.algorithms.shared.shared_bases`).  None: it builds on no other.
    flow_group : callable or None
        ``flow_group(system, collective) -> Translations | None``: a group under which the
        schedule's *data flow* (sources, destinations, chunks) is invariant on any system, whether
        or not the system's links are (a ring's rotations, on a fat tree too); ``orbits`` called
        with ``group=`` it builds the representatives under it.
        :func:`collsim.pipeline.build_repeated` checks and times such a schedule step class by
        step class (:class:`~collsim.core.repeated.RepeatedSteps`).  None: not declared.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: several
    algorithms per collective, each applicable to some instances; R. W. Hockney, "The
    communication challenge for MPP: Intel Paragon and Meiko CS-2", Parallel Computing
    20(3), 1994 (the α–β model of ``alpha_beta``).

    Examples
    --------
    >>> from collsim.kinds.optical_ring.system import OpticalRing
    >>> spec = get_algorithm("ne")
    >>> spec.collectives, spec.constraints, spec.supports(OpticalRing(nodes=7), "allgather")
    (('allgather',), 'N even', True)
    >>> spec.parameters(), [c.key for c in spec.citations]
    ({'stripe': 1}, ['Chen05', 'Chen05b', 'OpTree24'])
    >>> spec.check(OpticalRing(nodes=7), "allgather")
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnsupportedError: ne cannot build allgather here: needs an even number of nodes, got 7
    """

    name: str
    builder: Builder
    collectives: tuple[str, ...]
    systems: tuple[str, ...]
    reference: str
    summary: str
    aliases: tuple[str, ...] = ()
    requires: Callable[[System, CollectiveType], str | None] | None = None
    paper_steps: Callable[[System, CollectiveType, dict], int | None] | None = None
    constraints: str = ""
    params: tuple[str, ...] = field(default=())
    alpha_beta: Callable[[System, CollectiveType, int, dict], float] | None = None
    realised: tuple[str, ...] = ()
    tune: Callable[[System, CollectiveType, int], list[dict[str, Any]]] | None = None
    closed_forms: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    deliveries: Callable[[System, CollectiveType, Mapping[str, Any]], int | None] | None = None
    orbits: Builder | None = None
    transfers: Callable[[System, CollectiveType, Mapping[str, Any]], int | None] | None = None
    symmetry: str = "translations"
    bases: Callable[[System, CollectiveType, Mapping[str, Any]], list[tuple[str, dict[str, Any]]]] | None = None
    flow_group: Callable[[System, CollectiveType], Any] | None = None

    def __post_init__(self) -> None:
        if self.symmetry not in ("translations", "xor"):
            raise ValueError(f"{self.name}: symmetry must be 'translations' or 'xor', got {self.symmetry!r}")
        forms = dict(self.closed_forms)
        for kind, form in (("optical-ring", self.paper_steps), ("network", self.alpha_beta)):
            if form is not None:
                forms.setdefault(kind, form)
        object.__setattr__(self, "closed_forms", MappingProxyType(forms))

    def group_on(self, system: System) -> Any:
        """The kind's group this algorithm's ``orbits`` builds under (:attr:`symmetry`), or None.

        Examples
        --------
        >>> from collsim.kinds.optical_ring.system import OpticalRing
        >>> get_algorithm("ring").group_on(OpticalRing(nodes=8))
        Translations(radices=(8,), moving=(True,))
        """
        model = model_for(system)
        return model.binary_group(system) if self.symmetry == "xor" else model.symmetry_group(system)

    def candidates(self, system: System, collective: str | CollectiveType,
                   size_bytes: int) -> list[dict[str, Any]]:
        """Parameter sets a tuner should try on this instance (``[{}]``, the defaults, if none declared).

        Parameters
        ----------
        system : System
            Target system.
        collective : str or CollectiveType
            The collective, or its name.
        size_bytes : int
            Message size.

        Returns
        -------
        list of dict
            Keyword parameters for the builder, each a distinct choice; never empty.

        Examples
        --------
        >>> from collsim.kinds.optical_ring.system import OpticalRing
        >>> get_algorithm("ne").candidates(OpticalRing(nodes=8), "allgather", 1024)
        [{}]
        """
        if self.tune is None:
            return [{}]
        found = [dict(p) for p in self.tune(system, collective_type(collective), int(size_bytes))]
        return found or [{}]

    def parameters(self) -> dict[str, Any]:
        """The builder's keyword parameters and their defaults, read from its signature.

        Returns
        -------
        dict
            Name -> default (``None`` where the builder chooses, e.g. OpTree's ``k``).
        """
        sig = inspect.signature(self.builder)
        return {p.name: (None if p.default is p.empty else p.default)
                for p in list(sig.parameters.values())[3:] if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

    def param_types(self) -> dict[str, tuple[str, ...]]:
        """The type each parameter declares, read from the builder's annotations.

        Returns
        -------
        dict
            Name -> the annotation's alternatives (``("int", "None")`` for ``int | None``), for
            the parameters annotated with ``int``, ``float``, ``str``, ``bool`` and ``None`` only;
            others (``radices``, a sequence) are left to the builder.

        Examples
        --------
        >>> get_algorithm("synth-matching").param_types()["seed"], get_algorithm("ring").param_types()
        (('int', 'None'), {'chunks': ('int',), 'stripe': ('int',)})
        """
        out = {}
        for p in list(inspect.signature(self.builder).parameters.values())[3:]:
            if p.name not in self.params or p.annotation is p.empty:
                continue
            text = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
            atoms = tuple(a.strip() for a in str(text).split("|"))
            if atoms and set(atoms) <= set(_EXPECTED):
                out[p.name] = atoms
        return out

    def check_params(self, params: Mapping[str, Any]) -> None:
        """Refuse a parameter whose value is not of the type the builder declares (:meth:`param_types`).

        An ``int`` parameter takes an integer below 2^63 in size (numpy's int64; not a bool, a
        float such as 1.5, NaN or an infinity, nor text); ``None`` is accepted where the annotation allows it (the builder
        then chooses).  The builder still checks each value's range.

        Parameters
        ----------
        params : Mapping
            Parameter name -> value (names the builder does not declare are not checked here).

        Raises
        ------
        InputError
            One line naming the algorithm, the parameter, the expected type and the value.

        Examples
        --------
        >>> get_algorithm("synth-matching").check_params({"seed": 3, "chunks": None})
        >>> get_algorithm("synth-matching").check_params({"seed": float("nan")})
        Traceback (most recent call last):
        ...
        collsim.core.errors.InputError: synth-matching: seed must be an integer, got nan
        """
        for key, atoms in self.param_types().items():
            if key not in params:
                continue
            value = params[key]
            if value is None and "None" in atoms or any(_EXPECTED[a][1](value) for a in atoms if a != "None"):
                continue
            expected = " or ".join(_EXPECTED[a][0] for a in atoms if a != "None")
            if is_integer(value):  # an integer, but beyond 64 bits
                expected += " of at most 63 bits (below 2^63 in size)"
            raise InputError(f"{self.name}: {key} must be {expected}, got {value!r}")

    @property
    def citations(self) -> list[Citation]:
        """The bibliography entries ``reference`` cites as ``[Key]`` (:mod:`.bibliography`)."""
        return citations(self.reference)

    def supports(self, system: System, collective: str | CollectiveType) -> bool:
        """Whether the collective and system kind are in this algorithm's scope."""
        return canonical_collective(collective) in self.collectives and self.runs_on(system)

    def runs_on(self, system: System) -> bool:
        """Whether the system is in scope: its class's ``kind``, or a tag its kind's model accepts."""
        return system.topology in self.systems or any(tag in self.systems for tag in model_for(system).accepts)

    def refusal(self, system: System, collective: str | CollectiveType) -> str | None:
        """Why it cannot build this instance (out of scope, or its ``requires``), or None if it can.

        Examples
        --------
        >>> from collsim.kinds.optical_ring.system import OpticalRing
        >>> get_algorithm("ne").refusal(OpticalRing(nodes=7), "allgather")
        'ne cannot build allgather here: needs an even number of nodes, got 7'
        """
        coll = collective_type(collective)
        if coll.name not in self.collectives:
            return f"{self.name} does not implement {coll.name} (it implements {', '.join(self.collectives)})"
        if not self.runs_on(system):
            return f"{self.name} does not run on {system.topology} systems"
        reason = self.requires(system, coll) if self.requires is not None else None
        return f"{self.name} cannot build {coll.name} here: {reason}" if reason else None

    def check(self, system: System, collective: str | CollectiveType) -> None:
        """Raise :class:`UnsupportedError` with the reason (:meth:`refusal`) if it cannot build this instance."""
        reason = self.refusal(system, collective)
        if reason:
            raise UnsupportedError(reason)


_EXPECTED: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "int": ("an integer", lambda v: is_integer(v) and abs(int(v)) < 2**63),  # numpy's int64 holds it
    "float": ("a finite number", lambda v: is_number(v) and math.isfinite(float(v))),
    "str": ("a name", lambda v: isinstance(v, str)),
    "bool": ("true or false", lambda v: isinstance(v, (bool, np.bool_))),
    "None": ("", lambda v: v is None),
}
"""Annotations :meth:`AlgorithmSpec.check_params` understands: what a value must be, and the test."""

REGISTRY: dict[str, AlgorithmSpec] = {}
_ALIASES: dict[str, str] = {}


def register(name: str, *, collectives: tuple[str, ...], systems: tuple[str, ...], reference: str,
             summary: str, aliases: tuple[str, ...] = (), requires=None, paper_steps=None,
             constraints: str = "", params: tuple[str, ...] = (),
             alpha_beta=None, realised: tuple[str, ...] = (), tune=None,
             closed_forms: Mapping[str, Callable[..., Any]] | None = None,
             deliveries=None, orbits=None, transfers=None, symmetry="translations",
             bases=None, flow_group=None) -> Callable[[Builder], Builder]:
    """Decorator registering an algorithm builder.

    Parameters
    ----------
    name : str
        Registry name.
    collectives, systems : tuple of str
        Scope.
    reference, summary : str
        Citation and one-line description.
    aliases : tuple of str, optional
        Other names.
    requires, paper_steps : callable, optional
        See :class:`AlgorithmSpec`.
    constraints : str, optional
        Text describing ``requires``.
    params : tuple of str, optional
        Names of keyword parameters the builder accepts.
    alpha_beta : callable, optional
        Closed-form α–β cost (see :class:`AlgorithmSpec`).
    realised : tuple of str, optional
        Parameters recomputed from the realised schedule (see :class:`AlgorithmSpec`).
    tune : callable, optional
        Candidate parameter sets for a tuner (see :class:`AlgorithmSpec`).
    closed_forms : Mapping, optional
        Closed forms per kind name (see :class:`AlgorithmSpec`); ``paper_steps`` and
        ``alpha_beta`` fill the optical ring's and the network's.
    deliveries : callable, optional
        Chunk deliveries in closed form, checked before building (see :class:`AlgorithmSpec`).
    orbits : callable, optional
        The transfers into node 0 of a schedule invariant under translations (see :class:`AlgorithmSpec`).
    transfers : callable, optional
        Logical transfers in closed form, checked before building (see :class:`AlgorithmSpec`).
    symmetry : str, optional
        The kind's group ``orbits`` builds under, ``"translations"`` or ``"xor"`` (see :class:`AlgorithmSpec`).
    bases : callable, optional
        The other algorithms it builds on, with their parameters (see :class:`AlgorithmSpec`).
    flow_group : callable, optional
        The group of its data flow on any system (see :class:`AlgorithmSpec`).

    Returns
    -------
    callable
        The decorator; it returns the builder unchanged.

    Raises
    ------
    InputError
        If the name or an alias is already taken (also a ``ValueError``).

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: several
    algorithms per collective, chosen per instance.

    Examples
    --------
    A direct all-gather, every node sending its block to every other node at once:

    >>> import numpy as np
    >>> from collsim.core.collective import make_collective
    >>> from collsim.core.schedule import LogicalBuilder
    >>> @register("direct-demo", collectives=("allgather",), systems=("network",),
    ...           reference="none (a demo)", summary="every node sends to every node in one round")
    ... def direct(system, collective, size_bytes):
    ...     src, dst = np.nonzero(~np.eye(system.nodes, dtype=bool))
    ...     b = LogicalBuilder(make_collective(collective, system.nodes, size_bytes))  # the object
    ...     b.add(0, src, dst, src[:, None])
    ...     return b.build(), {}
    >>> from collsim import build, verify
    >>> verify(build("direct-demo", "star", "allgather", 1024, nodes=4))
    VerifyReport(steps=1, rounds=1, transfers=12, wavelengths_used=0, max_hops=2)
    >>> del REGISTRY["direct-demo"]          # leave the registry as it was
    """
    def deco(fn: Builder) -> Builder:
        colls = tuple(canonical_collective(c) for c in collectives)
        spec = AlgorithmSpec(name, fn, colls, tuple(systems), reference, summary, tuple(aliases),
                             requires, paper_steps, constraints, tuple(params), alpha_beta, tuple(realised), tune,
                             dict(closed_forms or {}), deliveries, orbits, transfers, symmetry, bases,
                             flow_group)
        for key in (name, *aliases):
            if key in REGISTRY or key in _ALIASES:
                raise InputError(f"algorithm name {key!r} registered twice")
        REGISTRY[name] = spec
        for a in aliases:
            _ALIASES[a] = name
        return fn
    return deco


def get_algorithm(name: str) -> AlgorithmSpec:
    """Look up an algorithm by name or alias.

    Parameters
    ----------
    name : str
        Registry name or alias (case-insensitive).

    Returns
    -------
    AlgorithmSpec
        The entry.

    Raises
    ------
    UnknownNameError
        If no algorithm has that name.

    References
    ----------
    R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), 2005: several
    algorithms per collective, chosen by name here.

    Examples
    --------
    >>> spec = get_algorithm("Ring-Allgather")        # an alias, any case
    >>> spec.name, spec.params
    ('ring', ('chunks', 'stripe'))
    >>> get_algorithm("optre")
    Traceback (most recent call last):
    ...
    collsim.core.errors.UnknownNameError: unknown algorithm 'optre'; did you mean optree? Known: ...
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in REGISTRY:
        close = dict.fromkeys(_ALIASES.get(k, k) for k in close_matches(name, [*REGISTRY, *_ALIASES], n=6))
        hint = did_you_mean(None, list(close)[:3]) if close else ""
        raise UnknownNameError(f"unknown algorithm {name!r}" + (f"{hint} Known" if hint else "; known")
                               + f": {', '.join(sorted(REGISTRY))}")
    return REGISTRY[key]
