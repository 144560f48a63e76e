"""Options shared by several commands, defined once.

Fibers per direction are ``-F/--fibers``: ``-f`` is nccl-tests' ``--step-factor`` of a
size sweep (:mod:`collsim.cli.sizes`).  Bandwidths follow collsim's unit rule
(docs/units.md): SI prefixes decimal, IEC binary, ``B`` bytes, ``b`` bits.
"""

from __future__ import annotations

import functools

import click

from ..core.errors import InputError


def system_options(fn):
    """Add the system options shared by every command that builds schedules."""
    @click.option("--system", "system", default="paper", show_default=True,
                  help="Optical preset (paper, terarack), network kind (ring, line, star, mesh, torus, "
                       "hypercube, fat-tree, mlfm, ...) or a TOML file with a [system] table.")
    @click.option("--nodes", "-n", type=int, default=None, help="Number of nodes N (default: the system's).")
    @click.option("--wavelengths", "-w", type=int, default=None, help="Wavelengths per fiber w (optical).")
    @click.option("--fibers", "-F", type=int, default=None,
                  help="Fibers per direction F (optical; -F, since -f is nccl-tests' --step-factor).")
    @click.option("--link-bandwidth", default=None,
                  help="Electrical link bandwidth in bytes/s, or with a unit: 10GB/s = 10^10 B/s, 100Gb/s (bits) = "
                       "12.5*10^9 B/s, 1GiB/s = 2^30 B/s (SI prefixes decimal, IEC binary, B bytes, b bits).")
    @click.option("--link-latency", default=None, help="Electrical per-hop link latency (1us, 500ns, seconds).")
    @click.option("--startup", default=None, help="Per-message start-up cost t_s (electrical; default: link latency).")
    @click.option("--radix", type=int, default=None, help="Switch port count (fat-tree k, MLFM 2d).")
    @click.option("--select", default=None, help="MLFM partial-server selection n,l,m.")
    @click.option("--system-param", "-S", "system_params", multiple=True,
                  help="Other system parameter key=value (e.g. dims=4,4  k=8  levels=2  radix=8).")
    @click.option("--strategy", default="first-fit", show_default=True,
                  help="Wavelength assignment: first-fit, best-fit or most-used.")
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def overrides(nodes, wavelengths, fibers, link_bandwidth=None, link_latency=None, startup=None,
              system_params=(), radix=None, select=None) -> dict:
    """System overrides from the shared options.

    Parameters
    ----------
    nodes, wavelengths, fibers : int or None
        Direct overrides.
    link_bandwidth, link_latency, startup : str or None
        Electrical link parameters with units.
    system_params : tuple of str
        Further ``key=value`` parameters.
    radix : int or None
        Switch radix (``k`` of a fat tree, ``2d`` of an MLFM).
    select : str or None
        MLFM selection ``"n,l,m"``.

    Returns
    -------
    dict
        Keyword overrides for :func:`collsim.systems.load_system`.
    """
    from ..core.units import parse_bandwidth, parse_time
    out = {"nodes": nodes, "wavelengths": wavelengths, "fibers": fibers}
    if link_bandwidth is not None:
        out["link_bandwidth_bytes_per_s"] = parse_bandwidth(link_bandwidth)
    if link_latency is not None:
        out["link_latency_s"] = parse_time(link_latency)
    if startup is not None:
        out["startup_s"] = parse_time(startup)
    if radix is not None:
        out["radix"] = radix
    if select is not None:
        out["selection"] = _value(select)
    out.update(parse_params(system_params, "--system-param/-S"))
    return out


def parse_params(items: tuple[str, ...], option: str = "--param") -> dict:
    """Parse ``--param key=value`` pairs (ints, floats, comma lists, strings).

    Parameters
    ----------
    items : tuple of str
        Raw ``key=value`` strings.
    option : str, optional
        The option they came from, for the message.

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
            raise InputError(f"{option} expects key=value, got {item!r}")
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


class StrictCommand(click.Command):
    """A command that refuses an option given twice instead of keeping the last value.

    click keeps the last of repeated single-value options (``-s 1KiB -s 2KiB`` would
    quietly run 2 KiB); options declared ``multiple`` and flags may repeat.

    Examples
    --------
    >>> from click.testing import CliRunner
    >>> @click.command(cls=StrictCommand)
    ... @click.option("-s")
    ... def cmd(s):
    ...     click.echo(s)
    >>> CliRunner().invoke(cmd, ["-s", "1", "-s", "2"]).output.splitlines()[-1]
    'Error: -s was given 2 times; give it once (it takes one value)'
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Check for repeated single-value options, then parse as click does.

        Parameters
        ----------
        ctx : click.Context
            The command's context.
        args : list of str
            The command line after the command name.

        Returns
        -------
        list of str
            What click's own parsing returns.
        """
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        counts: dict[str, int] = {}
        for param in order:
            if isinstance(param, click.Option) and not (param.multiple or param.count or param.is_flag):
                counts[param.name] = counts.get(param.name, 0) + 1
                if counts[param.name] == 2:
                    names = "/".join(param.opts)
                    raise click.UsageError(f"{names} was given {sum(p is param for p in order)} times; give it "
                                           f"once (it takes one value)", ctx)
        return super().parse_args(ctx, args)


def given_options(ctx: click.Context, exclude: tuple[str, ...] = ()) -> list[str]:
    """The options the user typed (not defaults), as they are spelled on the command line.

    Parameters
    ----------
    ctx : click.Context
        The running command's context.
    exclude : tuple of str
        Parameter names to leave out.

    Returns
    -------
    list of str
        The long spelling of each option given on the command line or in the environment.

    Examples
    --------
    >>> @click.command()
    ... @click.option("--nodes", "-n", type=int, default=4)
    ... @click.option("--mode", default="bulk")
    ... def cmd(nodes, mode):
    ...     click.echo(given_options(click.get_current_context()))
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(cmd, ["-n", "8"]).output
    "['--nodes']\\n"
    """
    from click.core import ParameterSource
    out = []
    for param in ctx.command.params:
        if param.name in exclude or not isinstance(param, click.Option):
            continue
        if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            out.append(max(param.opts, key=len))
    return out
