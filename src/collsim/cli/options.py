"""Options shared by several commands, defined once."""

from __future__ import annotations

import functools

import click

from ..core.errors import InputError


def system_options(fn):
    """Add ``--system --nodes --wavelengths --fibers --strategy`` to a command."""
    @click.option("--system", "system", default="paper", show_default=True,
                  help="Preset (paper, terarack) or a TOML file with a [system] table.")
    @click.option("--nodes", "-n", type=int, default=None, help="Number of nodes N (default: the system's).")
    @click.option("--wavelengths", "-w", type=int, default=None, help="Wavelengths per fiber w.")
    @click.option("--fibers", "-f", type=int, default=None, help="Fibers per direction F.")
    @click.option("--strategy", default="first-fit", show_default=True,
                  help="Wavelength assignment: first-fit, best-fit or most-used.")
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def overrides(nodes, wavelengths, fibers) -> dict:
    """System overrides from the shared options."""
    return {"nodes": nodes, "wavelengths": wavelengths, "fibers": fibers}


def parse_params(items: tuple[str, ...]) -> dict:
    """Parse ``--param key=value`` pairs (ints, floats, comma lists, strings).

    Parameters
    ----------
    items : tuple of str
        Raw ``key=value`` strings.

    Returns
    -------
    dict
        Parsed parameters.

    Raises
    ------
    InputError
        For an item without ``=``.
    """
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise InputError(f"--param expects key=value, got {item!r}")
        out[key.strip()] = _value(raw.strip())
    return out


def _value(raw: str):
    if "," in raw:
        return tuple(_value(p) for p in raw.split(",") if p)
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw
