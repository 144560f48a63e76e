"""The commands.  Each one parses options, calls the library, and prints.

Keep the imports up here light: rich and the library (algorithms, systems,
pipeline, ...) are imported inside the commands that use them, so that loading
this module costs little.  ``collsim --help`` and ``--version`` do not load it at
all (collsim.cli.main; docs/performance.md; tests/test_startup.py).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from ..core.units import format_size, format_time, parse_size
from .options import overrides, parse_params, system_options

if TYPE_CHECKING:
    from rich.console import Console


def _console(err: bool = False) -> Console:
    from rich.console import Console
    console = Console(stderr=err, highlight=False)
    if not console.is_terminal:  # pipes and files get full-width tables
        console = Console(stderr=err, highlight=False, width=200)
    return console


@click.command("algorithms")
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON.")
def algorithms_cmd(as_json: bool) -> None:
    """List registered algorithms: name, collectives, systems, reference.

    \b
    Examples:
      collsim algorithms
      collsim algorithms --json
    """
    from rich.table import Table

    from ..algorithms import REGISTRY
    rows = [{"name": s.name, "aliases": list(s.aliases), "collectives": list(s.collectives),
             "systems": list(s.systems), "constraints": s.constraints, "params": list(s.params),
             "summary": s.summary, "reference": s.reference} for s in sorted(REGISTRY.values(), key=lambda s: s.name)]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    table = Table(title="collsim algorithms")
    for col in ("name", "collectives", "systems", "constraints", "reference"):
        table.add_column(col, overflow="fold", ratio=3 if col == "reference" else 1)
    for r in rows:
        table.add_row(r["name"] + (f" ({', '.join(r['aliases'])})" if r["aliases"] else ""),
                      ", ".join(r["collectives"]), ", ".join(r["systems"]), r["constraints"] or "-", r["reference"])
    _console().print(table)


@click.command("compare")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to run.")
@click.option("--size", "-s", default="4MiB", show_default=True, help="Message size: 4MiB, 32KB, 1048576.")
@click.option("--algorithms", "-a", multiple=True,
              help="Algorithm names, comma-separated or repeated (-a ring -a osm; default: all that apply).")
@click.option("--param", "-p", "params", multiple=True,
              help="Algorithm parameter key=value, passed to the algorithms that take it (m=65, k=6, radices=4,4,4,4,4).")
@click.option("--json", "as_json", is_flag=True, help="Print only a JSON array, one object per algorithm.")
def compare_cmd(system, nodes, wavelengths, fibers, link_bandwidth, link_latency, startup, radix, select,
                system_params, strategy, collective, size, algorithms, params, as_json) -> None:
    """Build, verify and time algorithms side by side.

    With no options: the paper system, N=1024, w=64, all-gather of 4 MiB per node,
    every applicable algorithm.

    \b
    Examples:
      collsim compare
      collsim compare --nodes 512 --algorithms ring,osm --json
      collsim compare --system terarack --collective allreduce --size 32KB
      collsim compare -a optree,wrht -p k=6 -p m=65
    """
    from ..experiments.compare import compare
    names = [a.strip() for arg in algorithms for a in arg.split(",") if a.strip()] if algorithms else None
    if names is not None and not names:
        raise click.BadParameter("--algorithms needs at least one name")
    err = _console(err=True)
    parse_size(size)  # fail on a bad size before any work
    with err.status("building", spinner="dots") as status:
        rows, skipped = compare(system, collective, size, algorithms=names, strategy=strategy,
                                params=parse_params(params),
                                progress=lambda n: status.update(f"building and verifying {n}"),
                                **overrides(nodes, wavelengths, fibers, link_bandwidth, link_latency, startup,
                                            system_params, radix, select))
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=1))
    else:
        _print_table(rows)
    for note in skipped:
        err.print(f"skipped: {note}")
    if not all(r.verified for r in rows):
        sys.exit(1)


def _print_table(rows) -> None:
    from rich.table import Table
    first = rows[0]
    title = f"{first.collective} of {format_size(first.size_bytes)} on {first.system}: N={first.nodes}, " \
            + first.part.title()
    table = Table(title=title)
    kind_cols = [c for c, _ in first.part.cells(first)]
    cols = ["algorithm", "rounds", "slots", "block steps", *kind_cols, "lower bound", "efficiency", "busbw GB/s",
            "verified"]
    for col in cols:
        table.add_column(col, justify="left" if col == "algorithm" else "right")
    for r in rows:
        table.add_row(r.algorithm, str(r.rounds), str(r.slots), f"{r.block_steps:.6g}",
                      *(text for _, text in r.part.cells(r)), format_time(r.lower_bound_s),
                      f"{100 * r.efficiency:.1f}%", f"{r.busbw_bytes_per_s / 1e9:.2f}",
                      "yes" if r.verified else f"NO: {r.error}")
    _console().print(table)


@click.command("schedule")
@click.argument("algorithm")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to build.")
@click.option("--size", "-s", default="4MiB", show_default=True, help="Message size.")
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="File to write.")
def schedule_cmd(algorithm, system, nodes, wavelengths, fibers, link_bandwidth, link_latency, startup,
                 radix, select, system_params, strategy, collective, size, params, out) -> None:
    """Build, verify and write a schedule file (JSON; numpy's binary format if the name ends in .npz).

    \b
    Examples:
      collsim schedule ring --nodes 8 --out ring.json
      collsim schedule osm --nodes 1024 --out osm.npz
      collsim schedule osm --nodes 16 --wavelengths 2 --collective alltoall --size 1KiB --out a2a.json
    """
    from ..core.serialize import save
    from ..pipeline import build, verify
    sys_over = overrides(nodes, wavelengths, fibers, link_bandwidth, link_latency, startup, system_params,
                             radix, select)
    sched = build(algorithm, system, collective, size, strategy=strategy, system_options=sys_over,
                  **parse_params(params))
    report = verify(sched)
    save(sched, out)
    click.echo(f"wrote {out}: {sched.algorithm} {sched.collective.kind}, {report.steps} steps (time slots), "
               f"{report.transfers} transfers, verified")


@click.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def verify_cmd(file, as_json) -> None:
    """Check a schedule file (ours or hand-written; JSON or .npz).

    Exit 0 with a summary when valid, 1 with one line naming the violation,
    2 for an unreadable or malformed file.

    \b
    Examples:
      collsim verify ring.json
    """
    from dataclasses import asdict

    from ..core.serialize import load
    from ..pipeline import schedule_time_s, verify
    sched = load(file)
    report = verify(sched)
    from ..cost import block_steps
    summary = {"file": file, "algorithm": sched.algorithm, "collective": sched.collective.kind,
               "nodes": sched.system.nodes, **asdict(report), "slots": report.slots,
               "block_steps": block_steps(sched), "time_s": schedule_time_s(sched), "valid": True}
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        click.echo(f"valid: {sched.collective.kind} on {sched.system.kind} N={sched.system.nodes}, "
                   f"{report.steps} steps (time slots), {summary['block_steps']:.6g} block-steps, "
                   f"{report.transfers} transfers, "
                   f"{report.wavelengths_used} wavelengths, "
                   f"time {format_time(summary['time_s'])}")


@click.command("topology")
@click.argument("system", default="paper")
@click.option("--nodes", "-n", type=int, default=None, help="Number of nodes N.")
@click.option("--wavelengths", "-w", type=int, default=None, help="Wavelengths per fiber (optical).")
@click.option("--fibers", "-f", type=int, default=None, help="Fibers per direction (optical).")
@click.option("--radix", type=int, default=None, help="Switch port count (fat-tree k, MLFM 2d).")
@click.option("--select", default=None, help="MLFM partial-server selection n,l,m.")
@click.option("--system-param", "-S", "system_params", multiple=True, help="Other system parameter key=value.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def topology_cmd(system, nodes, wavelengths, fibers, radix, select, system_params, as_json) -> None:
    """Show what a system is made of: nodes, switches, links, radix, diameter.

    \b
    Examples:
      collsim topology paper
      collsim topology torus -S dims=4,4,4
      collsim topology fat-tree -S k=8 --json
      collsim topology mlfm --radix 36
    """
    from rich.table import Table

    from ..systems import load_system
    sysm = load_system(system, **overrides(nodes, wavelengths, fibers, system_params=system_params,
                                           radix=radix, select=select))
    info = {"system": sysm.name, **sysm.summary()}
    if as_json:
        click.echo(json.dumps(info, indent=1))
        return
    table = Table(title=f"{sysm.kind} ({sysm.name})", show_header=False)
    table.add_column("field")
    table.add_column("value", justify="right")
    for key, value in _flatten(info):
        table.add_row(key.replace("_", " "), "-" if value is None else str(value))
    _console().print(table)


def _flatten(info: dict, prefix: str = ""):
    """Yield (dotted key, value) pairs of nested dictionaries, for one table row each."""
    for key, value in info.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


@click.command("simulate")
@click.argument("target")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to build.")
@click.option("--size", "-s", default="4MiB", show_default=True, help="Message size.")
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--mode", type=click.Choice(["bulk", "dataflow"]), default="bulk", show_default=True,
              help="Bulk-synchronous steps, or start each transfer when its data has arrived.")
@click.option("--json", "as_json", is_flag=True, help="Print totals, per-step times and per-link utilisation.")
def simulate_cmd(target, system, nodes, wavelengths, fibers, link_bandwidth, link_latency, startup, radix, select,
                 system_params, strategy, collective, size, params, mode, as_json) -> None:
    """Run the flow-level simulator on an algorithm's schedule or a schedule FILE (electrical networks).

    \b
    Examples:
      collsim simulate ne --system ring -n 64 -s 1MiB
      collsim simulate pairwise --system fat-tree -n 128 -c alltoall -s 64KiB --json
      collsim simulate sched.json --mode dataflow
    """
    from pathlib import Path

    from ..core.serialize import load
    from ..pipeline import build, schedule_time_s, verify
    from ..sim import simulate
    if target.endswith((".json", ".npz")) and Path(target).exists():
        sched = load(target)
    else:
        sys_over = overrides(nodes, wavelengths, fibers, link_bandwidth, link_latency, startup, system_params,
                             radix, select)
        sched = build(target, system, collective, size, strategy=strategy, system_options=sys_over,
                      **parse_params(params))
    verify(sched)
    result = simulate(sched, mode=mode)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1))
        return
    click.echo(f"{sched.algorithm} {sched.collective.kind} on {sched.system.kind} N={sched.system.nodes} ({mode}): "
               f"simulated {format_time(result.total_time_s)}, alpha-beta {format_time(schedule_time_s(sched))}, "
               f"{len(result.step_time_s)} steps, max link load {result.max_link_load}")


@click.command("reproduce")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def reproduce_cmd(name, as_json) -> None:
    """Regenerate a paper's published table, the paper's value beside collsim's.

    With no NAME, list the available tables.

    \b
    Examples:
      collsim reproduce
      collsim reproduce optree-table1
      collsim reproduce mlfm-congestion --json
    """
    from rich.table import Table

    from ..core.errors import UnknownNameError
    from ..experiments.papers import EXPERIMENTS
    if name is None:
        for key, (_, what) in EXPERIMENTS.items():
            click.echo(f"{key:20s} {what}")
        return
    if name not in EXPERIMENTS:
        raise UnknownNameError(f"unknown table {name!r}; known: {', '.join(EXPERIMENTS)}")
    fn, what = EXPERIMENTS[name]
    with _console(err=True).status(f"reproducing {name}", spinner="dots"):
        rows = fn()
    if as_json:
        click.echo(json.dumps(rows, indent=1, default=str))
        return
    table = Table(title=f"{name}: {what}")
    keys = [k for k in rows[0] if not isinstance(rows[0][k], (dict, list))]
    for k in keys:
        table.add_column(k.replace("_", " "), justify="right")
    for r in rows:
        table.add_row(*("-" if r[k] is None else (f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]))
                        for k in keys))
    _console().print(table)


ALL = [algorithms_cmd, compare_cmd, reproduce_cmd, schedule_cmd, simulate_cmd, topology_cmd, verify_cmd]
