"""Options shared by several commands, defined once.

Fibers per direction are ``-F/--fibers``: ``-f`` is nccl-tests' ``--step-factor`` of a
size sweep (:mod:`collsim.cli.sizes`).  Bandwidths follow collsim's unit rule
(docs/units.md): SI prefixes decimal, IEC binary, ``B`` bytes, ``b`` bits.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

import click

from ..core.errors import InputError

if TYPE_CHECKING:
    from ..systems.options import SystemOptions  # imported by pack(): loading this module imports no system


class ScopedOption(click.Option):
    """An option that applies only to the system kinds that take one system parameter.

    ``applies_to`` names that parameter (``wavelengths``, ``link_bandwidth_bytes_per_s``
    ...): the option is refused, naming the kinds it applies to, on a system whose kind
    does not take it (:func:`check_scope`), instead of being ignored or failing later
    with the parameter's name.  Every system option declares its scope this way;
    commands declare which options they take by the options they add.
    """

    def __init__(self, *args: Any, applies_to: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.applies_to = applies_to


# Each system option: its declaration, and the system parameter that says where it applies.
_SYSTEM_OPTIONS: dict[str, tuple[tuple, dict]] = {
    "nodes": (("--nodes", "-n"), dict(type=int, default=None, help="Number of nodes N (default: the system's).")),
    "wavelengths": (("--wavelengths", "-w"), dict(
        type=int, default=None, applies_to="wavelengths", help="Wavelengths per fiber w (optical).")),
    "fibers": (("--fibers", "-F"), dict(
        type=int, default=None, applies_to="fibers",
        help="Fibers per direction F (optical; -F, since -f is nccl-tests' --step-factor).")),
    "link_bandwidth": (("--link-bandwidth",), dict(
        default=None, applies_to="link_bandwidth_bytes_per_s",
        help="Electrical link bandwidth in bytes/s, or with a unit: 10GB/s = 10^10 B/s, 100Gb/s (bits) = "
             "12.5*10^9 B/s, 1GiB/s = 2^30 B/s (SI prefixes decimal, IEC binary, B bytes, b bits).")),
    "link_latency": (("--link-latency",), dict(
        default=None, applies_to="link_latency_s", help="Electrical per-hop link latency (1us, 500ns, seconds).")),
    "startup": (("--startup",), dict(
        default=None, applies_to="startup_s",
        help="Per-message start-up cost t_s (electrical; default: link latency).")),
    "radix": (("--radix",), dict(
        type=int, default=None, applies_to="radix", help="Switch port count (fat-tree k, MLFM 2d).")),
    "select": (("--select",), dict(
        default=None, applies_to="selection", help="MLFM partial-server selection n,l,m.")),
    "system_params": (("--system-param", "-S", "system_params"), dict(
        multiple=True, help="Other system parameter key=value (e.g. dims=4,4  k=8  levels=2  radix=8).")),
    "strategy": (("--strategy",), dict(
        default="first-fit", show_default=True, applies_to="wavelengths",
        help="Wavelength assignment (optical): first-fit, best-fit or most-used.")),
}
_SYSTEM_SPEC = "collsim.system"  # ctx.meta key: the --system value the scope check reads


def system_help() -> str:
    """``--system``'s help, read from the registries of presets and kinds, so it cannot go stale."""
    from ..systems import PRESETS, kind_names, preset_description
    kinds: dict[str, list[str]] = {}
    for name in PRESETS:
        kinds.setdefault(preset_description(name)["kind"], []).append(name)
    presets = ", ".join(f"{', '.join(names)} ({kind})" for kind, names in kinds.items())
    return (f"A preset: {presets}; a system kind: {', '.join(kind_names())}; or a TOML file with a [system] "
            "table (collsim systems shows each with its parameters).")


class SystemOption(click.Option):
    """``--system``, whose help (:func:`system_help`) is read from the registries when help is shown.

    Loading a command's module builds its options; reading the registries then would import every
    system kind for every command.  The help is made only when ``--help`` prints it.
    """

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """As :meth:`click.Option.get_help_record`, with the help made now."""
        if not self.help:
            self.help = system_help()
        return super().get_help_record(ctx)


def system_options(fn: Callable | None = None, *, default: str = "paper", omit: tuple[str, ...] = (),
                   nodes_default: str = "the system's") -> Callable:
    """Add the system options shared by every command that builds schedules, packed into one argument.

    Usable bare (``@system_options``) or with arguments (``@system_options(default="star")``).
    The command receives one ``system`` argument, a :class:`collsim.systems.options.SystemOptions`
    (:func:`pack`), instead of the options one by one; :func:`load` builds the system from it after
    the scope check.
    """
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            ctx = click.get_current_context(silent=True)
            if ctx is not None:  # read by checked(): the options are checked against the system they build
                ctx.meta[_SYSTEM_SPEC] = kwargs.get("system")
            kwargs["system"] = pack(kwargs.pop("system"), **{k: kwargs.pop(k) for k in _SYSTEM_OPTIONS if k in kwargs})
            return fn(*args, **kwargs)
        for name, (decls, attrs) in reversed(list(_SYSTEM_OPTIONS.items())):
            if name == "nodes":
                attrs = {**attrs, "help": f"Number of nodes N (default: {nodes_default})."}
            if name not in omit:
                wrapper = click.option(*decls, cls=ScopedOption, **attrs)(wrapper)
        return click.option("--system", "system", cls=SystemOption, default=default, show_default=True)(wrapper)
    return decorate(fn) if fn is not None else decorate


def record_system(spec: Any) -> None:
    """Record the system the running command builds, for :func:`check_scope` (a command whose
    ``--system`` has another spelling too, as ``topology SYSTEM``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_SYSTEM_SPEC] = spec


def _kind_of(spec: Any) -> type | None:
    """The system class ``--system SPEC`` names, without building it; None when it cannot say
    (:func:`collsim.systems.load_system` then reports what is wrong)."""
    from pathlib import Path

    from ..core.system import system_kind
    from ..systems import PRESETS, kind_names, preset_description
    try:
        key = str(spec).strip().lower()
        if key in PRESETS:
            return system_kind(preset_description(key)["kind"])
        if key in kind_names():
            return system_kind(key)
        path = Path(str(spec).strip())
        if path.suffix.lower() == ".toml" and path.is_file():
            import tomllib

            from ..core.reading import read_text  # the one reader (size limit)
            return system_kind(str(tomllib.loads(read_text(path))["system"]["kind"]).strip().lower())
    except Exception:  # noqa: BLE001 - load_system says what is wrong with it
        return None
    return None


def check_scope(ctx: click.Context | None, spec: Any = None) -> None:
    """Refuse every option given on the command line that does not apply to the system's kind."""
    from click.core import ParameterSource
    spec = (ctx.meta.get(_SYSTEM_SPEC) if ctx is not None else None) if spec is None else spec
    scoped = [] if ctx is None else [p for p in ctx.command.params if isinstance(p, ScopedOption) and p.applies_to
              and ctx.get_parameter_source(p.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)]
    cls = _kind_of(spec) if scoped and spec is not None else None
    if cls is None:
        return
    from ..core.system import system_kind
    from ..systems import PRESETS, kind_names, kind_parameters, preset_description
    for param in scoped:
        if param.applies_to in kind_parameters(cls):
            continue
        kinds = [k for k in kind_names() if param.applies_to in kind_parameters(system_kind(k))]
        presets = [p for p in PRESETS if preset_description(p)["kind"] in kinds]
        name = "/".join(param.opts)
        raise click.UsageError(
            f"{name} does not apply to {spec} ({cls.topology} systems have no parameter {param.applies_to}); it applies "
            f"to {', '.join(kinds)} systems" + (f" and the presets {', '.join(presets)}" if presets else ""), ctx)


def pack(system: Any, nodes: int | None = None, wavelengths: int | None = None, fibers: int | None = None,
         link_bandwidth: str | None = None, link_latency: str | None = None, startup: str | None = None,
         radix: int | None = None, select: str | None = None, system_params: tuple[str, ...] = (),
         strategy: str | None = None) -> SystemOptions:
    """The system options as given on the command line, read into one :class:`SystemOptions`."""
    from ..core.units import parse_bandwidth, parse_time
    from ..systems.options import SystemOptions
    return SystemOptions(
        system=system, nodes=nodes, wavelengths=wavelengths, fibers=fibers,
        link_bandwidth_bytes_per_s=None if link_bandwidth is None else parse_bandwidth(link_bandwidth),
        link_latency_s=None if link_latency is None else parse_time(link_latency),
        startup_s=None if startup is None else parse_time(startup), radix=radix,
        selection=None if select is None else _value(select, "--select"),
        params=tuple(parse_params(system_params, "--system-param/-S").items()), strategy=strategy or "first-fit")


def checked(options: SystemOptions) -> SystemOptions:
    """``options`` once every option given on the command line is known to apply to its system."""
    check_scope(click.get_current_context(silent=True))
    return options


def load(options: SystemOptions, **more: Any):
    """The system of the command's options (:func:`checked`, then :func:`collsim.systems.load_system`)."""
    from ..systems import load_system
    return load_system(checked(options), **more)


def parse_params(items: tuple[str, ...], option: str = "--param") -> dict:
    """Parse ``--param key=value`` pairs (ints, floats, comma lists, strings)."""
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise InputError(f"{option} expects key=value, got {item!r}")
        out[key.strip()] = _value(raw.strip(), f"{option.split('/')[-1]} {key.strip()}")
    return out


def _value(raw: str, what: str):
    """An int, a float, a tuple of them (``4,4``) or the text: numbers by the one digit rule (core.numbers)."""
    from ..core.numbers import parse_number
    if "," in raw:
        return tuple(_value(p, what) for p in raw.split(",") if p)
    return parse_number(raw, what, otherwise=raw)


class StrictCommand(click.Command):
    """A command that refuses an option given twice instead of keeping the last value.

    click keeps the last of repeated single-value options (``-s 1KiB -s 2KiB`` would
    quietly run 2 KiB); options declared ``multiple`` and flags may repeat.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Check for repeated single-value options, then parse as click does."""
        opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        _ascii_numbers(opts, order)
        counts: dict[str, int] = {}
        for param in order:
            if isinstance(param, click.Option) and not (param.multiple or param.count or param.is_flag):
                counts[param.name] = counts.get(param.name, 0) + 1
                if counts[param.name] == 2:
                    names = "/".join(param.opts)
                    raise click.UsageError(f"{names} was given {sum(p is param for p in order)} times; give it "
                                           f"once (it takes one value)", ctx)
        return super().parse_args(ctx, args)


def _ascii_numbers(opts: dict, params: list) -> None:
    """Refuse a number in other digits (``-n ８``) given to a numeric option or argument: click reads numbers
    with Python's ``int()``, which reads every script's digits; collsim reads 0-9 only (core.numbers)."""
    from ..core.numbers import parse_number
    for param in dict.fromkeys(params):
        if not isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType)):
            continue
        given = opts.get(param.name)
        for value in given if isinstance(given, (list, tuple)) else [given]:
            if isinstance(value, str):
                parse_number(value, "/".join(param.opts) or param.name,
                             integer=isinstance(param.type, click.types.IntParamType), otherwise=None)


def given_options(ctx: click.Context, exclude: tuple[str, ...] = ()) -> list[str]:
    """The options the user typed (not defaults), as they are spelled on the command line."""
    from click.core import ParameterSource
    out = []
    for param in ctx.command.params:
        if param.name in exclude or not isinstance(param, click.Option):
            continue
        if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            out.append(max(param.opts, key=len))
    return out
