"""``collsim export msccl`` and ``collsim import msccl``: MSCCL algorithm XML both ways (docs/formats.md)."""

from __future__ import annotations

import functools

import click

from .options import StrictCommand, given_options, load, parse_params, system_options
from .output import Output, emit_one, output_options
from .sizes import size_options


def _limit_options(fn):
    @click.option("--max-steps", type=click.IntRange(1), default=64, show_default=True,
                  help="Steps per thread block (MSCCL_MAX_NUM_STEPS: 64 in msccl-executor-nccl, 256 in RCCL).")
    @click.option("--max-thread-blocks", type=click.IntRange(1), default=64, show_default=True,
                  help="Thread blocks per gpu (MSCCL_MAX_NUM_THREAD_BLOCKS; 216 in RCCL).")
    @click.option("--max-tbs-per-channel", type=click.IntRange(1), default=32, show_default=True,
                  help="Thread blocks with a send (or a receive) peer per channel.")
    @click.option("--max-channels", type=click.IntRange(1), default=32, show_default=True,
                  help="Channels (NCCL's MAXCHANNELS).")
    @click.option("--max-count", type=click.IntRange(1), default=71, show_default=True,
                  help="Chunks per step, cnt (below MSCCL_MAX_COUNT = 72).")
    @functools.wraps(fn)
    def wrapper(*args, max_steps, max_thread_blocks, max_tbs_per_channel, max_channels, max_count, **kwargs):
        from ..interop.msccl.xml_model import MscclLimits
        limits = MscclLimits(max_steps=max_steps, max_thread_blocks=max_thread_blocks,
                             max_tbs_per_channel=max_tbs_per_channel, max_channels=max_channels, max_count=max_count)
        return fn(*args, limits=limits, **kwargs)
    return wrapper


@click.command("msccl", cls=StrictCommand)
@click.argument("target")
@system_options(default="star")
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to build.")
@size_options(sweep=False)
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="The XML file to write.")
@click.option("--proto", type=click.Choice(["Simple", "LL", "LL128"]), default="Simple", show_default=True,
              help="NCCL protocol the executor uses.")
@click.option("--name", default=None, help="The algorithm's name attribute.")
@click.option("--min-bytes", default="0", show_default=True, help="Smallest message the algorithm serves.")
@click.option("--max-bytes", default="1TiB", show_default=True, help="Largest message the algorithm serves.")
@_limit_options
def export_msccl_cmd(target, system, collective, sizes, params, out, proto, name, min_bytes, max_bytes,
                     limits) -> None:
    """Write an electrical schedule as MSCCL algorithm XML (msccl-executor-nccl, RCCL).

    TARGET is an algorithm (built on --system, default star) or a schedule file (.json/.npz).
    allgather, reducescatter, allreduce, alltoall, broadcast and reduce; out-of-place.

    \b
    Examples:
      collsim export msccl ring --system star -n 8 -c allreduce --out ring.xml
      collsim export msccl pairwise -n 16 -c alltoall --out a2a.xml
      collsim export msccl sched.json --out sched.xml
    """
    from ..core.errors import InputError
    from ..core.units import parse_size
    from ..interop.msccl.files import export_msccl
    from ..pipeline import verify
    from .io import read_schedule
    ctx = click.get_current_context()
    from .resolve import resolve_target
    if resolve_target(target).is_file:  # the one rule of ALGORITHM|FILE (cli/resolve.py)
        extra = given_options(ctx, exclude=("out", "proto", "name", "min_bytes", "max_bytes", "max_steps",
                                            "max_thread_blocks", "max_tbs_per_channel", "max_channels", "max_count"))
        if extra:
            raise InputError(f"a schedule file has its own system, collective and size: {', '.join(extra)} "
                             f"would be ignored")
        sched = read_schedule(target)
    else:
        from .sizes import iter_schedules
        sysm = load(system)
        from ..interop.msccl.precheck import precheck_export
        precheck_export(target, sysm, collective, {}, limits)  # limits known from (algorithm, N, collective)
        sched = next(iter_schedules(target, sysm, collective, sizes, params=parse_params(params),
                                    strategy=system.strategy))
    verify(sched)
    low = 0 if min_bytes.strip() in ("0", "0B") else parse_size(min_bytes)
    algo = export_msccl(sched, out, limits=limits, proto=proto, name=name, min_bytes=low,
                        max_bytes=parse_size(max_bytes))
    nops = sum(st.type == "nop" for g in algo.gpus for tb in g.tbs for st in tb.steps)
    chans = f"{algo.nchannels} channel{'s' * (algo.nchannels != 1)}"
    click.echo(f"wrote {out}: {sched.algorithm} {algo.coll} on {algo.ngpus} gpus, {chans}, "
               f"{sum(len(g.tbs) for g in algo.gpus)} thread blocks, {algo.num_steps()} steps ({nops} nop), "
               f"verified")


@click.command("msccl", cls=StrictCommand)
@click.argument("file", type=click.Path(dir_okay=False))
@system_options(default="star", omit=("strategy",), nodes_default="the XML's ngpus")
@click.option("--size", "-s", default="1MiB", show_default=True,
              help="collsim's message size (docs/units.md): the XML has none.")
@click.option("--root", type=int, default=None, help="Root of broadcast and reduce (default: inferred).")
@click.option("--out", "-o", "out_file", default=None, type=click.Path(dir_okay=False, allow_dash=True),
              help="Also write the collsim schedule (JSON, or .npz).")
@_limit_options
@output_options()
def import_msccl_cmd(file, system, size, root, out_file, limits, out: Output) -> None:
    """Read an MSCCL algorithm XML (any tool's) into a collsim schedule and verify it.

    Exit 0 when valid, 1 for a race, a deadlock or a data-flow violation, 2 for a file that
    breaks the format's rules or the executor's limits.  The default system is a star of
    ngpus nodes (one switch, as an NVSwitch box); -n defaults to the XML's ngpus on any system.

    \b
    Examples:
      collsim import msccl ring.xml
      collsim import msccl ring.xml --system fat-tree -S k=4 --out ring.json
      collsim import msccl ring.xml --json
    """
    _import(file, system, size, root, out_file, limits, out)


def _import(file, system, size, root, out, limits, fmt: Output) -> None:
    from ..core.errors import CollsimError
    from ..core.units import format_time, parse_size
    from ..interop.msccl.files import import_msccl, read_xml
    from ..core.wording import counted
    from .io import write_schedule
    from .output import error_record
    head = {"file": file}
    try:
        algo = read_xml(file)
        head.update(algorithm=algo.name, collective=algo.coll, nodes=algo.ngpus)
        sysm = load(system, nodes=system.nodes or algo.ngpus)  # -n defaults to the XML's ngpus
        got = import_msccl(algo, system=sysm, size_bytes=parse_size(size), root=root, limits=limits)
    except CollsimError as exc:
        if fmt.format != "table":
            emit_one(fmt, {**head, **error_record(exc)}, "")
        raise
    sched = got.schedule
    if out is not None:
        write_schedule(sched, out)
    rec = {**head, "system": sched.system.topology, "proto": algo.proto, "channels": algo.nchannels,
           "thread_blocks": got.thread_blocks, "msccl_steps": got.msccl_steps, "nops": got.nops,
           "steps": sched.num_steps, "slots": sched.num_steps, "transfers": len(sched), "time_s": got.time_s,
           "valid": True}
    chans = f"{algo.nchannels} channel{'s' * (algo.nchannels != 1)}"
    emit_one(fmt, rec, f"valid: {algo.coll} MSCCL XML on {algo.ngpus} gpus ({sched.system.topology}), "
                       f"{chans}, {got.thread_blocks} thread blocks, {got.msccl_steps} MSCCL steps "
                       f"({got.nops} nop) -> {counted(sched.num_steps, 'step')} "
                       f"({'time slot' if sched.num_steps == 1 else 'time slots'}), {counted(len(sched), 'transfer')}, "
                       f"time {format_time(got.time_s)}" + (f"; wrote {out}" if out else ""))
