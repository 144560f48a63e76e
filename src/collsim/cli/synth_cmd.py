"""``collsim synthesize``: the best schedule for a network, its time, bound and certificate."""

from __future__ import annotations

import time

import click

from .options import StrictCommand, load, parse_params, system_options
from .output import Output, ProgressBar, echo, emit_one, output_options
from .sizes import size_options


def _certificate_text(cert) -> str:
    """One line naming the cut (or flow) that attains the bound."""
    if cert is None:
        return "certificate: none available for this bound"
    text = getattr(cert, "certificate", None)
    if isinstance(text, str):  # the max-concurrent-flow bound's dual argument
        return f"certificate: {text}"
    side = getattr(cert, "side", None)
    if side is not None:
        from ..core.units import format_bandwidth
        shown = ", ".join(str(v) for v in side[:12]) + (" ..." if len(side) > 12 else "")
        cap = getattr(cert, "capacity_bytes_per_s", None)
        return (f"certificate: vertex set S = {{{shown}}} ({len(side)} vertices), "
                f"{format_bandwidth(cap) if cap is not None else '?'} "
                f"{'leaving' if getattr(cert, 'direction', 'in') == 'out' else 'entering'} it")
    return f"certificate: {cert}"


def _certificate_json(cert):
    if cert is None:
        return None
    from dataclasses import asdict, is_dataclass
    if is_dataclass(cert):  # without wall-clock fields: the record is a result, the same on every run
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cert).items() if k != "solve_s"}
    return str(cert)


@click.command("synthesize", cls=StrictCommand)
@system_options(default="mesh")
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to synthesize.")
@size_options(sweep=False, among="synthesizers")
@click.option("--param", "-p", "params", multiple=True,
              help="Synthesizer parameter key=value (chunks=4, capacity=2, seed=1; through switches "
                   "overlay=ring, near-4, doubling, direct, with /dfs for depth-first order); searched when not given.")
@click.option("--out", "-o", "out_file", default=None, type=click.Path(dir_okay=False),
              help="Also write the schedule (JSON; numpy's binary format if the name ends in .npz).")
@click.option("--compact", is_flag=True,
              help="With --out: where the winner was checked on its orbits (a large symmetric schedule, or one "
                   "whose steps repeat), write its representatives and their group (file version 4), not every "
                   "transfer.")
@click.option("--synthesizers-only", is_flag=True,
              help="Try the synthesizers alone, not the registered algorithms as well.")
@output_options()
def synthesize_cmd(system, collective, sizes, params, out_file: str | None, compact: bool, synthesizers_only: bool,
                   out: Output) -> None:
    """Synthesize the fastest schedule for a network from its graph, with its bound and certificate.

    Every registered synthesizer that applies is built, verified and flow-simulated, and so is
    every other registered algorithm that applies (unless --synthesizers-only), so the answer
    is never slower than the best row of compare; the fastest is printed, named, with the
    lower bound, the efficiency (bound / simulated time), the synthesizer's own prediction,
    the cut that attains the bound, and the synthesis time (on standard error: it is a
    measurement of this machine, not a result).

    \b
    Examples:
      collsim synthesize --system mesh -S dims=5,5 -s 40MiB
      collsim synthesize --system torus -S dims=3,3,3 -c reducescatter -s 1MiB --json
      collsim synthesize --system hypercube -n 64 -c allreduce -s 64MiB -o ar.npz
      collsim synthesize --system fat-tree -n 1024 -s 1MiB
    """
    from ..core.files import writable_file
    from ..synthesis import synthesize
    from .io import write_schedule
    sysm = load(system)
    if compact and not out_file:
        raise click.UsageError("--compact says how --out writes the schedule: give --out FILE")
    if out_file:
        writable_file(out_file, "the schedule")
    size = next(iter(sizes.sizes(collective, sysm.nodes)))
    start = time.perf_counter()
    with ProgressBar("synthesizing"):
        found = synthesize(sysm, collective, size, params=parse_params(params), root=sizes.root, shift=sizes.shift,
                           registered=not synthesizers_only)
    took_s = time.perf_counter() - start
    if out_file:
        write_schedule(found.schedule, out_file, expand=not compact)   # expanded: refused with its estimate if too big
    r = found.result
    record = {"algorithm": r.algorithm, "collective": r.collective, "nodes": r.nodes, "size_bytes": r.size_bytes,
              "params": {k: v for k, v in found.schedule.params.items() if k != "predicted_time_s"},
              "steps": found.schedule.num_steps, "transfers": found.result.transfers, "time_s": r.time_s,
              "predicted_time_s": found.predicted_time_s, "lower_bound_s": found.bound_s,
              "efficiency": found.efficiency, "verified": r.verified,
              "certificate": _certificate_json(found.certificate), "skipped": list(found.skipped)}
    from ..core.units import format_time
    steps = found.schedule.num_steps
    overlay = found.schedule.params.get("overlay")
    line = (f"{r.algorithm} {r.collective} on {r.nodes} nodes: {steps} step{'' if steps == 1 else 's'}"
            + (f" on overlay {overlay}" if overlay else "") + ", verified\n"
            f"simulated {format_time(r.time_s)}"
            + (f" (predicted {format_time(found.predicted_time_s)})" if found.predicted_time_s else "")
            + f", bound {format_time(found.bound_s)}, efficiency {100 * found.efficiency:.2f}%\n"
            f"{_certificate_text(found.certificate)}")
    emit_one(out, record, line)
    echo(f"synthesized in {took_s:.2f} s" + (f"; wrote {out_file}" if out_file else ""), err=True)
