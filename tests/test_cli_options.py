"""Issue 21: one meaning per option across commands, options refused where they cannot apply, true defaults.

The walk over the click commands reads their declarations (no command runs); everything a user sees is
checked through the installed ``collsim`` script (the ``run_cli`` fixture).
"""

from __future__ import annotations

import json
from collections import defaultdict

import click
import pytest

from collsim.cli import commands
from collsim.cli.options import ScopedOption
from conftest import names


def _leaves():
    """Every command as (its name on the command line, the click command)."""
    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd
    for cmd in commands.ALL:
        yield from walk(cmd, [cmd.name])


def _options():
    for where, cmd in _leaves():
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden:
                names = [*p.opts, *p.secondary_opts]
                yield where, p, [n for n in names if n.startswith("--")], [n for n in names if not n.startswith("--")]


def test_each_short_option_means_one_thing_in_every_command():
    """-i was --step-bytes on compare but --iterations on calibrate; -a was --algorithms on compare and
    --algorithm on results: a short option maps to one long name (its first) everywhere, and a long name has
    at most one short one."""
    by_short, by_long = defaultdict(set), defaultdict(set)
    for where, _, longs, shorts in _options():
        for short in shorts:
            by_short[short].add((longs[0] if longs else None, where))
        for long in longs:
            by_long[long].update((short, where) for short in shorts)
    clashes = {s: sorted(uses) for s, uses in by_short.items() if len({name for name, _ in uses}) > 1}
    assert not clashes, clashes
    doubled = {name: sorted(uses) for name, uses in by_long.items() if len({s for s, _ in uses}) > 1}
    assert not doubled, doubled
    assert {name for name, _ in by_short["-i"]} == {"--step-bytes"}
    assert {name for name, _ in by_short["-a"]} == {"--algorithms"}
    assert {name for name, _ in by_short["-o"]} == {"--out"} and {name for name, _ in by_short["-j"]} == {"--jobs"}


def test_every_command_that_names_a_system_takes_system():
    """``topology`` took the system only positionally; every command that builds a system takes --system."""
    takers = {where for where, _, longs, _ in _options() if "--nodes" in longs and where != "results"}
    with_system = {where for where, _, longs, _ in _options() if "--system" in longs}
    assert "topology" in takers and takers <= with_system, takers - with_system


def test_every_scoped_option_applies_somewhere():
    from collsim.core.system import system_kind
    from collsim.systems import kind_names, kind_parameters
    scoped = {p.applies_to for _, p, _, _ in _options() if isinstance(p, ScopedOption) and p.applies_to}
    assert {"wavelengths", "fibers", "link_bandwidth_bytes_per_s", "radix", "selection"} <= scoped
    for parameter in scoped:
        assert any(parameter in kind_parameters(system_kind(k)) for k in kind_names()), parameter


@pytest.mark.parametrize("args,needle", [
    (("compare", "--system", "ring", "-n", "8", "-a", "ring", "--strategy", "best-fit"),
     "--strategy does not apply to ring"),  # was silently accepted
    (("compare", "--system", "ring", "-n", "8", "-a", "ring", "-w", "8"), "--wavelengths/-w does not apply to ring"),
    (("compare", "--system", "star", "-n", "8", "-a", "ring", "-F", "2"), "--fibers/-F does not apply to star"),
    (("compare", "-n", "8", "-a", "ring", "--link-bandwidth", "10GB/s"),
     "--link-bandwidth does not apply to paper (optical-ring systems"),
    (("simulate", "ring", "--system", "torus", "--radix", "4"), "--radix does not apply to torus"),
    (("schedule", "ring", "--system", "ring", "-n", "4", "--strategy", "most-used", "--out", "x.json"),
     "--strategy does not apply to ring"),
    (("tune", "--system", "star", "-n", "4", "-b", "1KiB", "-e", "2KiB", "--strategy", "best-fit", "--no-store"),
     "--strategy does not apply to star"),
    (("topology", "--system", "torus", "--select", "1,2,3"), "--select does not apply to torus"),
])
def test_options_that_cannot_apply_are_refused(run_cli, args, needle):
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert "applies to" in lines[0]


def test_topology_takes_system_and_keeps_the_positional(run_cli):
    new = run_cli("topology", "--system", "mlfm", "--radix", "8", "--json", check=True)
    old = run_cli("topology", "mlfm", "--radix", "8", "--json", check=True)
    assert json.loads(new.stdout) == json.loads(old.stdout) and json.loads(new.stdout)["kind"] == "mlfm"
    clash = run_cli("topology", "ring", "--system", "torus")
    assert clash.returncode == 2 and "give --system only" in clash.stderr


def _help_default(run_cli, *command: str, option: str = "--system") -> str:
    text = " ".join(run_cli(*command, "--help", check=True).stdout.split())
    after = text[text.index(option):]
    return after[after.index("[default: ") + len("[default: "):].split("]")[0]


def test_msccl_help_states_the_system_it_uses(run_cli, tmp_path):
    """``import msccl`` and ``export msccl`` said ``[default: paper]`` but used a star."""
    assert _help_default(run_cli, "import", "msccl") == "star"
    assert _help_default(run_cli, "export", "msccl") == "star"
    run_cli("export", "msccl", "ring", "-n", "8", "-c", "allreduce", "--out", "a.xml", check=True)
    run_cli("export", "msccl", "ring", "-n", "8", "-c", "allreduce", "--system", "star", "--out", "b.xml",
            check=True)
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    got = json.loads(run_cli("import", "msccl", "a.xml", "--json", check=True).stdout)
    assert got["system"] == "star" and got["nodes"] == 8
    help_text = " ".join(run_cli("import", "msccl", "--help", check=True).stdout.split())
    names(help_text, "ngpus")  # the default is the XML's, not the system's (star has 16)
