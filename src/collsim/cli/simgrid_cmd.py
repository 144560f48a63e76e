"""``collsim export simgrid``: a system as a SimGrid platform, optionally with a schedule to replay on SMPI."""

from __future__ import annotations

import click

from .options import StrictCommand, given_options, load, parse_params, system_options
from .output import Output, echo, emit_json, output_options
from .sizes import size_options


@click.command("simgrid", cls=StrictCommand)
@system_options
@click.option("--out", "-o", "out_dir", required=True, metavar="DIR",
              help="Folder for platform.xml and hosts.txt (created if needed); with --schedule also ranks/, "
                   "replay.c and run.sh.")
@click.option("--schedule", "target", default=None, metavar="ALGORITHM|FILE",
              help="Also write this algorithm's schedule (or a schedule file, JSON or .npz) as per-rank replay "
                   "files, the MPI replay program and run.sh (smpicc + smpirun with the settings of the cross-check).")
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective of --schedule ALGORITHM.")
@size_options(sweep=False)
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--max-route-entries", type=click.IntRange(min=1), default=None, metavar="COUNT",
              help="Refuse a platform whose route table would list more links than this (default 2000000).")
@output_options()
def export_simgrid_cmd(system, out_dir, target, collective, sizes, params, max_route_entries, out: Output) -> None:
    """Write an electrical system as a SimGrid platform (XML v4.1) and a host file.

    One host per node, one link per directed link (bandwidth and latency with units), and a
    route for every ordered pair of hosts from collsim's own routing (zone routing Full); with
    --schedule, a route for each pair the schedule uses (both ways) instead.  With
    --schedule, also the schedule as per-rank replay files, the MPI program that replays them
    and run.sh, to time it on SimGrid's SMPI and compare with `collsim simulate --mode rank`
    (docs/formats.md, docs/flow-simulator.md).

    \b
    Examples:
      collsim export simgrid --system fat-tree -n 16 --out platform/
      collsim export simgrid --system ring -n 16 --schedule ne -s 1MiB --out ne16/ && sh ne16/run.sh
      collsim export simgrid --system torus -S dims=4,4 --schedule sched.json --out torus/ --json
    """
    from ..interop.simgrid import MAX_ROUTE_ENTRIES, write_platform
    limit = max_route_entries or MAX_ROUTE_ENTRIES
    schedule = None
    from .resolve import resolve_target
    from_file = target is not None and resolve_target(target).is_file  # the one rule (cli/resolve.py)
    if from_file:
        ignored = given_options(click.get_current_context(),
                                exclude=("target", "out_dir", "max_route_entries", "fmt", "as_json"))
        if ignored or sizes.explicit:
            raise click.UsageError(f"a schedule file carries its own system, collective and size; "
                                   f"{', '.join(ignored) or 'the size options'} would be ignored")
        from .io import read_schedule
        schedule = read_schedule(target)
        sysm = schedule.system
    else:
        if target is None:  # the schedule's options without a schedule would be ignored
            ignored = [o for o in given_options(click.get_current_context()) if o in ("--collective", "--param")]
            if ignored or sizes.explicit:
                raise click.UsageError(f"{', '.join(ignored) or 'the size, root and shift options'} apply to the "
                                       f"schedule: give --schedule ALGORITHM|FILE, or leave them out")
        sysm = load(system)
    from ..interop.simgrid import _network, schedule_pairs
    if target is not None and schedule is None:
        from .sizes import iter_schedules
        _network(sysm)  # an optical system is refused before anything is built
        schedule = next(iter(iter_schedules(target, sysm, collective, sizes, params=parse_params(params),
                                            strategy=system.strategy)))
    # with a schedule, routes for the pairs it uses (both ways), not for all N (N - 1) pairs
    pairs = None if schedule is None else schedule_pairs(schedule)
    files = write_platform(sysm, out_dir, max_route_entries=limit, pairs=pairs)
    doc = {"system": sysm.name, "kind": sysm.topology, "nodes": sysm.nodes, "platform": str(files.platform),
           "hosts": str(files.hosts), "routes": files.routes, "route_entries": files.route_entries}
    if target is not None:
        from ..interop.simgrid_replay import smpirun_command, write_replay
        from ..pipeline import verify
        from ..sim import simulate
        report = verify(schedule)
        replay = write_replay(schedule, out_dir)
        doc.update({"algorithm": schedule.algorithm, "collective": schedule.collective.name,
                    "size_bytes": int(schedule.collective.size_bytes), "transfers": len(schedule.src),
                    "replay_dir": str(replay.replay_dir), "program": str(replay.program), "script": str(replay.script),
                    "smpirun": smpirun_command(sysm.nodes),
                    "collsim_rank_time_s": simulate(schedule, mode="rank", report=report).total_time_s})
    if out.format == "json":
        emit_json(doc)
        return
    echo(f"wrote {files.platform} ({sysm.topology}, {sysm.nodes} hosts, {files.routes} routes, "
         f"{files.route_entries} route entries) and {files.hosts}")
    if target is not None:
        echo(f"wrote {doc['replay_dir']}/ ({doc['transfers']} transfers of {doc['algorithm']} {doc['collective']}), "
             f"{doc['program']} and {doc['script']}; collsim simulate --mode rank: {doc['collsim_rank_time_s']:.9e} s")
