"""Start-up: ``collsim --version`` and ``--help`` import nothing heavy; lazy ``import collsim``.

Each check that looks at ``sys.modules`` runs in a fresh interpreter.  No test asserts on wall
time (docs/performance.md has the figures).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import collsim
from collsim.cli import commands
from collsim.cli.main import COMMANDS, cli
from conftest import collsim_exe

HEAVY = ("numpy", "rich", "collsim.algorithms", "collsim.pipeline", "collsim.systems", "collsim.cli.commands")


def _python(code: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.mark.parametrize("args, codes", [(["--version"], (0,)), (["--help"], (0,)), (["-h"], (0,)),
                                         ([], (0, 2))])  # bare ``collsim`` shows the help too
def test_version_and_help_import_nothing_heavy(args, codes):
    proc = _python(f"""
        import contextlib, io, sys
        import collsim.cli.main
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                collsim.cli.main.main({args!r})
            except SystemExit as exc:
                assert exc.code in {codes!r}, exc.code
        assert "collsim" in out.getvalue(), out.getvalue()
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
    """)
    assert proc.stdout.strip() == "[]"


def test_import_collsim_is_lazy():
    proc = _python(f"""
        import sys
        import collsim
        assert collsim.__version__
        print(sorted(m for m in sys.modules if m.startswith("collsim") or m in {HEAVY!r}))
    """)
    assert proc.stdout.strip() == "['collsim', 'collsim._version']"


def test_the_commands_module_imports_neither_rich_nor_the_algorithms():
    proc = _python("""
        import sys
        import collsim.cli.commands
        print(sorted(m for m in ("rich", "collsim.algorithms", "collsim.pipeline") if m in sys.modules))
    """)
    assert proc.stdout.strip() == "[]"


VERIFY_ORDERS = {
    "subpackage first": """
        import collsim.verify.resources
        import collsim
        from collsim import build, verify
    """,
    "function first": """
        import collsim
        from collsim import build, verify
        import collsim.verify.resources
        import collsim.verify.dataflow
    """,
    "from the subpackage first": """
        from collsim.verify import VerifyReport
        from collsim.verify.dataflow import verify_dataflow
        import collsim
        from collsim import build, verify
    """,
    "attribute first": """
        import collsim
        verify = collsim.verify
        build = collsim.build
        import collsim.verify.resources
    """,
}


@pytest.mark.parametrize("order", VERIFY_ORDERS)
def test_collsim_verify_is_the_function_whatever_is_imported_first(order):
    proc = _python(VERIFY_ORDERS[order] + """
        import sys, types
        assert callable(collsim.verify) and not isinstance(collsim.verify, types.ModuleType)
        assert verify is collsim.verify
        assert isinstance(sys.modules["collsim.verify"], types.ModuleType)
        assert collsim.VerifyReport is sys.modules["collsim.verify"].VerifyReport
        report = collsim.verify(build("ring", "paper", "allgather", "1MiB", nodes=8))
        print(type(report).__name__, report.steps)
    """)
    assert proc.stdout.split() == ["VerifyReport", "7"]


def test_public_names_and_subpackages_resolve():
    proc = _python("""
        import collsim
        from collsim import *  # noqa: F403
        for name in collsim.__all__:
            assert getattr(collsim, name) is globals()[name], name
        assert "tune_malloc" not in collsim.__all__ and not hasattr(collsim, "tune_malloc")
        from collsim._malloc import tune_malloc
        assert isinstance(tune_malloc(), bool)
        assert collsim.sim.simulate and collsim.systems.load_system is collsim.load_system
        assert not hasattr(collsim, "no_such_thing") and not hasattr(collsim, "_no_such_thing")
        assert set(collsim.__all__) <= set(dir(collsim))
    """)
    assert proc.stderr == ""


def test_version_matches_pyproject():
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    with pyproject.open("rb") as fh:
        assert collsim.__version__ == tomllib.load(fh)["project"]["version"]


def test_the_static_command_table_matches_the_commands():
    real = {cmd.name: cmd for cmd in commands.ALL}
    assert set(COMMANDS) == set(real)
    for name, help_text in COMMANDS.items():
        stand_in = click.Command(name, help=help_text)
        for limit in (20, 45, 60, 80, 200):
            assert stand_in.get_short_help_str(limit) == real[name].get_short_help_str(limit), (name, limit)


@pytest.mark.parametrize("width", [50, 80, 200])
def test_top_level_help_is_the_same_as_with_every_command_loaded(width):
    eager = click.Group("collsim", commands=commands.ALL, help=cli.help, params=cli.params,
                        context_settings=cli.context_settings)
    runner = CliRunner()
    lazy_out = runner.invoke(cli, ["--help"], prog_name="collsim", terminal_width=width)
    eager_out = runner.invoke(eager, ["--help"], prog_name="collsim", terminal_width=width)
    assert lazy_out.exit_code == eager_out.exit_code == 0
    assert lazy_out.output == eager_out.output


def test_console_script_version():
    proc = subprocess.run([collsim_exe(), "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"collsim, version {collsim.__version__}\n" and proc.stderr == ""


def test_console_script_help_lists_every_command_and_the_examples():
    proc = subprocess.run([collsim_exe(), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: collsim [OPTIONS] COMMAND [ARGS]...")
    assert "Examples:" in proc.stdout and "collsim reproduce optree-table1" in proc.stdout
    listed = proc.stdout.split("Commands:\n", 1)[1]
    for name, help_text in COMMANDS.items():
        assert f"  {name}  " in listed and " ".join(help_text.split()[:3]) in listed, name


def test_a_command_s_own_help_loads_it():
    proc = subprocess.run([collsim_exe(), "simulate", "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Usage: collsim simulate [OPTIONS] TARGET" in proc.stdout and "--mode" in proc.stdout
    proc = subprocess.run([collsim_exe(), "no-such-command"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "No such command" in proc.stderr
