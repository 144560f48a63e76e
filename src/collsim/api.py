"""The library's front door: build a verified schedule in one call."""

from __future__ import annotations

from typing import Any

from .algorithms import build_logical, get_algorithm
from .core.errors import InputError
from .core.schedule import Schedule
from .core.system import System
from .core.units import parse_size
from .rwa.realize import realize
from .systems import load_system


def build(algorithm: str, system: str | System, collective: str, size: str | int, *,
          nodes: int | None = None, wavelengths: int | None = None, fibers: int | None = None,
          strategy: str = "first-fit", system_options: dict | None = None, **params: Any) -> Schedule:
    """Build the physical schedule of an algorithm (not yet verified).

    Parameters
    ----------
    algorithm : str
        Registry name (``ring``, ``ne``, ``osm`` ...; see ``collsim algorithms``).
    system : str or System
        Preset (``paper``, ``terarack``), TOML path, or System.
    collective : str
        ``allgather``, ``reducescatter``, ``allreduce``, ``broadcast``, ``reduce``, ``alltoall``.
    size : str or int
        Message size (``"4MiB"``, ``"32KB"``, bytes).
    nodes, wavelengths, fibers : int, optional
        Overrides of the system's parameters.
    system_options : dict, optional
        Further system parameters (``link_bandwidth_bytes_per_s``, ``dims``, ``k`` ...).
    strategy : str, optional
        Wavelength-assignment strategy for rounds without a pre-assigned colouring.
    **params
        Algorithm parameters.

    Returns
    -------
    Schedule
        The physical schedule; pass it to :func:`collsim.verify`.

    Raises
    ------
    collsim.core.errors.CollsimError
        For bad input or an inapplicable algorithm.

    Examples
    --------
    >>> from collsim import build, verify
    >>> s = build("osm", "paper", "allgather", "4KiB", nodes=16, wavelengths=2)
    >>> verify(s).steps
    16
    """
    options = {"nodes": nodes, "wavelengths": wavelengths, "fibers": fibers}
    options.update({k: v for k, v in (system_options or {}).items() if v is not None})
    sysm = load_system(system, **options)
    size_bytes = parse_size(size)
    spec = get_algorithm(algorithm)
    logical, chosen = build_logical(spec.name, sysm, collective, size_bytes, **params)
    if not isinstance(strategy, str) and not callable(strategy):
        raise InputError(f"invalid strategy {strategy!r}")
    chosen = dict(chosen)
    if isinstance(strategy, str) and sysm.optical:
        chosen.setdefault("strategy", strategy)
    return realize(sysm, logical, strategy=strategy, algorithm=spec.name, params=chosen)
