"""The commands.  Each one parses options, calls the library, and prints.

Keep the imports up here light: rich and the library (algorithms, systems,
pipeline, ...) are imported inside the commands that use them, so that loading
this module costs little.  ``collsim --help`` and ``--version`` do not load it at
all (collsim.cli.main; docs/performance.md; tests/test_startup.py).
"""

from __future__ import annotations

import sys

import click

from ..core.units import format_time
from .options import StrictCommand, checked, given_options, load, parse_params, system_options
from .sizes import retired_fibers_flag, size_options
from .tables import text_width, wrap_text
from .output import Output, ProgressBar, TableColumn, echo, emit, emit_json, emit_one, output_options, print_table


@click.command("algorithms", cls=StrictCommand)
@click.argument("name", required=False)
@output_options()
def algorithms_cmd(name, out: Output) -> None:
    """List registered algorithms: name, collectives, systems, reference.

    With NAME, show that algorithm: its parameters and defaults, collectives,
    systems, constraints and full references.

    \b
    Examples:
      collsim algorithms
      collsim algorithms optree
      collsim algorithms --json
      collsim algorithms --format csv
    """
    from .info import print_references, show_algorithm
    if name is not None:
        show_algorithm(name, out)
        return
    from ..algorithms import REGISTRY
    rows = [{"name": s.name, "aliases": list(s.aliases), "collectives": list(s.collectives),
             "systems": list(s.systems), "constraints": s.constraints, "params": list(s.params),
             "summary": s.summary, "reference": s.reference, "citations": [c.key for c in s.citations]}
            for s in sorted(REGISTRY.values(), key=lambda s: s.name)]

    def table() -> None:
        print_table("collsim algorithms", [
            TableColumn("name", [r["name"] + (f" ({', '.join(r['aliases'])})" if r["aliases"] else "") for r in rows],
                        left=True, wrap=True, ratio=1),
            *(TableColumn(key, [", ".join(r[key]) if isinstance(r[key], list) else r[key] or "-" for r in rows],
                          left=True, wrap=True, ratio=3 if key == "reference" else 1)
              for key in ("collectives", "systems", "constraints", "reference"))])
        echo("References:")
        print_references(*(r["reference"] for r in rows))
    emit(out, rows, table)


@click.command("compare", cls=StrictCommand)
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to run.")
@size_options(among="algorithms")
@click.option("--algorithms", "-a", multiple=True,
              help="Algorithm names, comma-separated or repeated (-a ring -a osm; default: all that apply).")
@click.option("--param", "-p", "params", multiple=True,
              help="Algorithm parameter key=value, passed to the algorithms that take it (m=65, k=6, radices=4,4,4,4,4).")
@output_options(wide=True, explain=True)
def compare_cmd(system, collective, sizes, algorithms, params, out: Output) -> None:
    """Build, verify and time algorithms side by side.

    With no options: the paper system, N=1024, w=64, all-gather of 4 MiB per node,
    every applicable algorithm.  JSON and CSV rows hold raw numbers (seconds, bytes,
    bytes/s); an algorithm that does not apply is a row with its reason in "skipped".

    \b
    Examples:
      collsim compare
      collsim compare --explain
      collsim compare --nodes 512 --algorithms ring,osm --json
      collsim compare --system terarack --collective allreduce --size 32KiB --format csv
      collsim compare --system ring -n 8 -a ring,bruck -b 1KiB -e 1MiB -f 4
      collsim compare --system ring -n 8 --total-size 8MiB
      collsim compare --system star -n 8 -c broadcast --root 3
      collsim compare -a optree,wrht -p k=6 -p m=65 --wide
    """
    from .columns import compare_table, compare_total, legend_kind, print_legend, skipped_rows
    from .sizes import compare_rows
    names = [a.strip() for arg in algorithms for a in arg.split(",") if a.strip()] if algorithms else None
    if names is not None and not names:
        raise click.BadParameter("--algorithms needs at least one name")
    sysm = load(system)  # once (tests/test_compare_once.py)
    per_size = compare_total(sysm, collective, names)
    with ProgressBar("building and verifying", total=per_size and per_size * sizes.count()) as bar:
        rows, skipped = compare_rows(sysm, collective, sizes, algorithms=names, strategy=system.strategy,
                                     params=parse_params(params), progress=bar.begin)
    emit(out, [{**r.to_json(), "skipped": None} for r in rows] + skipped_rows(rows, skipped),
         lambda: compare_table(rows, wide=out.wide))
    _skip_notes(skipped, out.explain)
    _routing_warning(sysm, rows[0].collective)  # the rows' collective: its canonical name
    if out.explain:
        print_legend(legend_kind(rows[0]), err=out.format != "table")
    if not all(r.verified for r in rows):
        sys.exit(1)


def _skip_notes(skipped, explain: bool) -> None:
    """What was not run, on stderr: the algorithms that do not apply in one line (each with its reason
    under ``--explain``), and every one that failed on this instance with its error.  Prose, wrapped at
    the terminal's width as the table is."""
    from ..algorithms.skip import summary
    width = text_width(err=True)
    shown = [s for s in skipped if s.failed or explain]
    line = None if explain else summary(skipped)
    if line:
        echo(wrap_text(f"skipped: {line} (--explain says why)", width), err=True)
    for skip in shown:
        echo(wrap_text(f"skipped: {skip}", width), err=True)


def _routing_warning(sysm, collective: str | None = None) -> None:
    """A warning on standard error when the routing leaves switches or links idle (:mod:`.routing_note`),
    wrapped at the terminal's width as the table is; ``collective`` is a canonical name (a result row's)."""
    from .routing_note import idle_warning
    note = idle_warning(sysm, collective)
    if note:
        echo(wrap_text(note, text_width(err=True)), err=True)


@click.command("schedule", cls=StrictCommand)
@click.argument("algorithm")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to build.")
@size_options(sweep=False)
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="File to write; - for JSON on standard output.")
@click.option("--trace", default=None, type=click.Path(dir_okay=False), metavar="FILE.json",
              help="Also write its timeline as trace-event JSON (Perfetto, chrome://tracing): optical lightpaths "
                   "per fiber and wavelength, or the alpha-beta steps of an electrical schedule.")
@click.option("--compact", is_flag=True,
              help="Where compare checks the schedule on its orbits (a large symmetric schedule, or one whose "
                   "steps repeat), write its representatives and their group (file version 4) instead of every "
                   "transfer; verify, simulate and load read it back.")
def schedule_cmd(algorithm, system, collective, sizes, params, out, trace, compact) -> None:
    """Build, verify and write a schedule file (JSON; numpy's binary format if the name ends in .npz).

    \b
    Examples:
      collsim schedule ring --nodes 8 --out ring.json
      collsim schedule osm --nodes 1024 --out osm.npz
      collsim schedule osm --nodes 16 --wavelengths 2 --collective alltoall --size 1KiB --out a2a.json
      collsim schedule ring --nodes 8 --out - | collsim verify -
      collsim schedule osm --nodes 16 --wavelengths 4 --out osm.json --trace osm-trace.json
      collsim schedule hier-allreduce --system hierarchical -S dims=switch:8,fat-tree:1024 -c allreduce \
          -s 256MiB --compact --out hier.npz
    """
    from ..core.files import writable_file
    from ..pipeline import verify
    from .io import write_schedule
    from .sizes import iter_schedules
    checked(system)
    if compact and trace:
        raise click.UsageError("--trace draws every transfer: give it without --compact")
    for path, what in ((out, "the schedule"), (trace, "the trace")):  # both, before either is written
        if path and path != "-":
            writable_file(path, what)
    with ProgressBar("building") as bar:
        sched = next(iter_schedules(algorithm, system, collective, sizes, params=parse_params(params),
                                    compact=compact))
        bar.update(description="verifying")
        report = verify(sched)
        bar.update(description=f"writing {out}")
        where = write_schedule(sched, out, bar.callback, expand=not compact)  # steps written of all
        if trace:
            from ..interop.trace.optical import write_schedule_trace
            bar.update(description=f"writing {trace}")
            write_schedule_trace(trace, sched)
    from ..core.wording import counted
    from ..core.compact_file import symmetry_of
    from ..core.schedule import Schedule
    held = "" if isinstance(sched, Schedule) else f" as {len(symmetry_of(sched)[0]):,} representatives and their group"
    click.echo(f"wrote {where}: {sched.algorithm} {sched.collective.name}, {counted(report.steps, 'step')} "
               f"({'time slot' if report.steps == 1 else 'time slots'}), {counted(report.transfers, 'transfer')}"
               f"{held}, verified", err=out == "-")


@click.command("verify", cls=StrictCommand)
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@output_options()
def verify_cmd(file, out: Output) -> None:
    """Check a schedule file (ours or hand-written; JSON or .npz).

    Exit 0 with a summary when valid, 1 with one line naming the violation,
    2 for an unreadable or malformed file.  FILE - reads standard input.
    With --json (or --format csv/tsv) a failure is printed as a record too:
    "valid": false, the error's class and where it happened.

    \b
    Examples:
      collsim verify ring.json
      collsim verify - < ring.json
      collsim verify ring.json --json
    """
    from dataclasses import asdict

    from ..core.errors import CollsimError
    from ..pipeline import verify
    from .io import read_schedule
    from .output import error_record
    sched = None
    try:
        with ProgressBar(f"reading {file}") as bar:
            sched = read_schedule(file, bar.callback, compact=True)  # steps read of all; representatives kept
        with ProgressBar("verifying"):
            report = verify(sched)
    except CollsimError as exc:
        if out.format != "table":
            head = {"file": file} if sched is None else {
                "file": file, "algorithm": sched.algorithm, "collective": sched.collective.name,
                "nodes": sched.system.nodes}
            emit_one(out, {**head, **error_record(exc)}, "")
        raise
    from ..cost import block_steps
    from ..core.schedule import Schedule
    from ..core.wording import counted
    from ..kinds.view import view_for
    from ..pipeline import lower_bound_s, stand_in
    timed = stand_in(sched)   # a file of representatives: what its kind checked and timed
    from ..core.repeated import RepeatedSteps
    form = "explicit" if isinstance(sched, Schedule) else "repeated" if isinstance(sched, RepeatedSteps) else "symmetric"
    summary = {"file": file, "algorithm": sched.algorithm, "collective": sched.collective.name,
               "nodes": sched.system.nodes, **asdict(report), "slots": report.slots,
               "block_steps": block_steps(timed), "time_s": report.time_s,
               "lower_bound_s": lower_bound_s(sched.system, sched.collective), "form": form, "valid": True}
    blocks = summary["block_steps"]
    facts = [counted(report.steps, "step") + (" (time slot)" if report.steps == 1 else " (time slots)"),
             f"{blocks:.6g} block time{'' if blocks == 1 else 's'}",
             counted(report.transfers, "transfer") + ("" if form == "explicit" else f" ({CHECKED_WORDS[form]})"),
             *view_for(sched.system).report_facts(timed, report)]
    if "fingerprint" in report.data_flow:  # docs/model.md, "Fingerprints for large reductions"
        facts.append("data flow checked by fingerprints (a wrong result passes with probability < 2^-95)")
    emit_one(out, summary, f"valid: {sched.collective.name} on {sched.system.topology} N={sched.system.nodes}, "
                           f"{', '.join(facts)}, time {format_time(summary['time_s'])}, "
                           f"bound {format_time(summary['lower_bound_s'])}")


@click.command("topology", cls=StrictCommand)
@click.argument("system_arg", required=False, default=None, metavar="[SYSTEM]")
@system_options(omit=("strategy",))
@retired_fibers_flag
@output_options()
def topology_cmd(system_arg, system, out: Output) -> None:
    """Show what a system is made of: nodes, switches, links, radix, diameter.

    The system is --system, as on every other command; SYSTEM without --system is
    the same (deprecated spelling, kept working).

    \b
    Examples:
      collsim topology --system paper
      collsim topology --system torus -S dims=4,4,4
      collsim topology --system fat-tree -S k=8 --json
      collsim topology --system mlfm --radix 36
      collsim topology --system fat-tree -S k=8 --format csv
    """
    if system_arg is not None:
        if "--system" in given_options(click.get_current_context()) and system_arg != system.system:
            raise click.UsageError(f"two systems: --system {system.system} and {system_arg}; give --system only")
        from dataclasses import replace
        system = replace(system, system=system_arg)
    from .options import record_system
    record_system(system.system)
    from .output import flatten, text_of
    sysm = load(system)
    info = {"system": sysm.name, **sysm.summary()}
    _routing_warning(sysm)
    if out.format == "json":  # one object, nested as the system describes itself
        emit_json(info)
        return
    flat = flatten(info)
    emit(out, [flat], lambda: print_table(f"{sysm.topology} ({sysm.name})", [
        TableColumn("field", [k.replace("_", " ") for k in flat], left=True),
        TableColumn("value", [text_of(v) for v in flat.values()])]))


CHECKED_WORDS = {"symmetric": "the file's representatives, checked on their orbits",
                 "repeated": "the file's representatives, checked on their orbits and one whole step per class"}
"""How ``verify`` says a file of representatives and their group was checked."""

FORM_WORDS = {"symmetric": "verified and simulated on the orbits",
              "repeated": "verified on the orbits and simulated one whole step per class"}
"""How ``simulate`` says a schedule was not simulated transfer by transfer (``SimResult.form``)."""


@click.command("simulate", cls=StrictCommand)
@click.argument("target")
@system_options
@click.option("--collective", "-c", default="allgather", show_default=True, help="Collective to build.")
@size_options()
@click.option("--param", "-p", "params", multiple=True, help="Algorithm parameter key=value (repeatable).")
@click.option("--mode", type=click.Choice(["bulk", "dataflow", "rank"]), default="bulk", show_default=True,
              help="Bulk-synchronous steps; start each transfer when its data has arrived (dataflow); "
                   "or as MPI ranks without barriers (rank).")
@click.option("--trace", default=None, type=click.Path(dir_okay=False), metavar="FILE.json",
              help="Also write the simulated timeline as trace-event JSON (Perfetto, chrome://tracing); one size.")
@output_options(explain=True)
def simulate_cmd(target, system, collective, sizes, params, mode, trace, out: Output) -> None:
    """Run the flow-level simulator on an algorithm's schedule or a schedule FILE (electrical networks).

    \b
    Examples:
      collsim simulate ne --system ring -n 64 -s 1MiB
      collsim simulate pairwise --system fat-tree -n 128 -c alltoall -s 64KiB --json
      collsim simulate sched.json --mode dataflow
      collsim schedule ring --system ring -n 8 --out - | collsim simulate -
      collsim simulate ne --system ring -n 16 -b 64KiB -e 64MiB -f 4 --json
      collsim simulate ne --system ring -n 64 --format csv --explain
      collsim simulate ne --system ring -n 64 -s 1MiB --trace ne.json

    JSON has per-step times and per-link utilisation too; CSV and TSV have one row per size.
    """
    from ..core.wording import counted
    from ..pipeline import lower_bound_s, simulate_compact, verify
    from ..sim import simulate
    from .columns import print_legend
    from .sizes import iter_schedules, schedule_facts, size_title
    if trace and sizes.sweep:
        raise click.UsageError("--trace writes the timeline of one size: give --size, not a sweep (-b/-e)")
    from .resolve import resolve_target
    from_file = resolve_target(target).is_file  # the one rule of ALGORITHM|FILE (cli/resolve.py)
    if from_file:
        if sizes.explicit:
            raise click.UsageError("a schedule file has its own size, root and shift: --size, --total-size, -b/-e, "
                                   "--root and --shift apply when simulating an algorithm")
        ignored = given_options(click.get_current_context(),
                                exclude=("target", "mode", "trace", "fmt", "as_json", "explain_columns", "wide_table"))
        if ignored:
            raise click.UsageError(f"a schedule file carries its own system, collective and algorithm; "
                                   f"{', '.join(ignored)} would be ignored (they apply when simulating an algorithm)")
        from .io import read_schedule
        with ProgressBar(f"reading {target}") as bar:   # representatives kept where the bulk mode takes them
            scheds = [read_schedule(target, bar.callback, compact=mode == "bulk" and not trace)]
    else:
        # in bulk mode without a timeline, the form compare times (symmetric, repeated steps) where it pays:
        # the same totals, step times and link statistics from a fraction of the transfers
        scheds = iter_schedules(target, checked(system), collective, sizes, params=parse_params(params),
                                compact=mode == "bulk" and not trace)
    docs = []
    with ProgressBar("verifying" if from_file else "building",
                     total=3 * (1 if from_file else sizes.count())) as bar:
        for sched in scheds:  # each size's schedule is built (or the file read) as the loop asks for it
            bar.update(advance=1, description="verifying")
            report = verify(sched, answer=False)  # the simulation below is the answer
            bar.update(advance=1, description="simulating")
            result = simulate(sched, mode=mode, report=report) if mode != "bulk" else simulate_compact(sched, report=report)
            if trace:
                from ..interop.trace.network import write_simulation_trace
                bar.update(description=f"writing {trace}")
                write_simulation_trace(trace, sched, result)
            bar.update(advance=1, description="building")
            # one record per size, each with the schedule's sizes (size_bytes, total_bytes), root and shift
            docs.append({**schedule_facts(sched), "alpha_beta_time_s": report.closed_form_time_s,
                         "lower_bound_s": lower_bound_s(sched.system, sched.collective), **result.to_json()})
            if out.format != "table":
                continue
            coll = sched.collective
            echo(f"{sched.algorithm} {coll.name} of {size_title(coll.name, coll.nodes, coll.size_bytes)} on "
                 f"{sched.system.topology} N={sched.system.nodes} ({mode}): "
                 f"simulated {format_time(result.total_time_s)}, "
                 f"alpha-beta {format_time(docs[-1]['alpha_beta_time_s'])}, "
                 f"bound {format_time(docs[-1]['lower_bound_s'])}, "
                 f"{counted(len(result.step_time_s), 'step')}, max link load {result.max_link_load}"
                 + ("" if result.form == "explicit" else f" ({FORM_WORDS[result.form]} of its "
                                                            f"{result.transfers:,} transfers)"))
    if out.format == "json":
        emit_json(docs if sizes.sweep else docs[0])
    elif out.format != "table":  # csv, tsv: the scalars, one row per size
        emit(out, [{k: v for k, v in d.items() if not isinstance(v, (list, dict))} for d in docs])
    if out.explain:
        print_legend("simulate", err=out.format != "table")


@click.command("reproduce", cls=StrictCommand)
@click.argument("name", required=False)
@click.option("--out", "-o", "out_dir", default=None, metavar="DIR",
              help="For a paper (optree, wrht, mlfm, textbook, beyond, all): the folder for its data, figures and "
                   "comparison tables (default: reproduce-NAME).")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None,
              help="Parallel processes for a paper's evaluation.  [default: the cores available]")
@click.option("--quick", is_flag=True, help="A reduced grid of every figure (for a fast look).")
@output_options()
def reproduce_cmd(name, out_dir, jobs, quick, out: Output) -> None:
    """Regenerate a paper's published table, or a paper's whole evaluation with its figures.

    With no NAME, list the available tables and papers. A table NAME prints the
    paper's values beside collsim's. A paper NAME (optree, wrht, mlfm, textbook;
    beyond: collsim's own evaluation on the OpTree paper's grids)
    writes its data (CSV), figures (PNG, SVG) and a comparison table (CSV,
    Markdown) into --out; "all" does every paper and writes one HTML report.

    \b
    Examples:
      collsim reproduce
      collsim reproduce optree-table1
      collsim reproduce mlfm-congestion --json
      collsim reproduce mlfm-throughput --format csv
      collsim reproduce optree --out optree-figs
      collsim reproduce all --out evaluation --jobs 2
    """
    from ..core.errors import UnknownNameError
    from ..experiments.papers.reproduce import EXPERIMENTS, SIZE_NOTES, paper_names
    from .paper_cmd import PAPER_DESCRIPTIONS
    if name in paper_names():
        from ..experiments.papers.reproduce import available_cores  # noqa: PLC0415
        from .paper_cmd import run_papers  # noqa: PLC0415
        run_papers(name, out_dir, jobs=available_cores() if jobs is None else jobs, quick=quick, out=out)
        return
    if out_dir is not None or quick or jobs is not None:
        raise click.UsageError(f"--out, --jobs and --quick apply to a paper ({', '.join(paper_names())}), "
                               f"not to the table {name or '(listing)'}")
    from .output import text_of
    from ..algorithms.bibliography import citations
    from .info import print_references
    if name is None:
        listing = [{"name": key, "description": what, "references": [c.text() for c in citations(what)]}
                   for key, (_, what) in EXPERIMENTS.items()]
        listing += [{"name": p, "description": PAPER_DESCRIPTIONS[p], "references": []} for p in paper_names()]

        def table() -> None:
            for r in listing:
                echo(f"{r['name']:20s} {r['description']}")
            echo("References:")
            print_references(*(what for _, what in EXPERIMENTS.values()))
        emit(out, listing, table)
        return
    if name not in EXPERIMENTS:
        from ..core.errors import did_you_mean
        known = [*EXPERIMENTS, *paper_names()]
        hint = did_you_mean(name, known)
        raise UnknownNameError(f"unknown table or paper {name!r}" + (f"{hint} Known" if hint else "; known")
                               + f": {', '.join(known)}")
    fn, what = EXPERIMENTS[name]
    with ProgressBar(f"reproducing {name}"):
        rows = fn()
    keys = [k for k in rows[0] if not isinstance(rows[0][k], (dict, list))]
    emit(out, rows, lambda: print_table(f"{name}: {what}", [
        TableColumn(k.replace("_", " "), [text_of(r[k]) for r in rows], left=isinstance(rows[0][k], str))
        for k in keys], caption=([SIZE_NOTES[name]] if name in SIZE_NOTES else [])  # the paper's sizes, in bytes
        + [f"[{c.key}] {c.text()}" for c in citations(what + " " + SIZE_NOTES.get(name, ""))]))


from .info import systems_cmd  # noqa: E402  (its own module: ``collsim systems``)

from .sweep_cmds import results_cmd, sweep_cmd  # noqa: E402  (collsim sweep, collsim results)
from .tune_cmd import tune_cmd  # noqa: E402  (collsim tune)
from .mpi_cmd import mpi_cmd  # noqa: E402  (collsim mpi)
from .calibrate_cmd import calibrate_cmd  # noqa: E402  (collsim calibrate)
from .validate_cmd import validate_cmd  # noqa: E402  (collsim validate)
from .export_cmd import export_cmd, import_cmd  # noqa: E402  (collsim export, collsim import)
from .synth_cmd import synthesize_cmd  # noqa: E402  (collsim synthesize)

ALL = [algorithms_cmd, compare_cmd, reproduce_cmd, schedule_cmd, simulate_cmd, systems_cmd, topology_cmd, verify_cmd,
       results_cmd, sweep_cmd, tune_cmd, mpi_cmd, calibrate_cmd, validate_cmd, export_cmd, import_cmd, synthesize_cmd]
