"""The output layer (issue #11): formats, fitted tables, the legend, ASCII terminals, progress.

Everything runs the installed console script: through pipes (as a consumer reads it) or in
a pseudo-terminal of a given width (as a person sees it).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from collsim.cli.columns import legend, legend_markdown
from collsim.core.units import format_time
from collsim.core.wording import format_number
from conftest import collsim_exe, names

pytestmark = pytest.mark.schedule_first(65)  # about 65 s of work: handed out early (tests/conftest.py)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "output.md"
CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")


def run_pipe(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The console script with stdout and stderr piped (bytes)."""
    return subprocess.run([collsim_exe(), *args], capture_output=True, cwd=cwd, timeout=300,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def run_tty(*args: str, columns: int, env: dict | None = None, cwd: Path | None = None) -> tuple[int, str]:
    """The console script in a pseudo-terminal ``columns`` wide: exit status and everything it drew."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen([collsim_exe(), *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                            env={**os.environ, "COLUMNS": str(columns), "TERM": "xterm", **(env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace").replace("\r", "")


def screen(text: str) -> list[str]:
    """What the terminal shows, line by line, without control codes."""
    return [CONTROL.sub("", line).rstrip() for line in text.split("\n")]


TABLES = {
    "optical": ("compare",),  # the example: the paper system, N=1024, every algorithm
    "network": ("compare", "--system", "fat-tree", "-n", "32", "-c", "alltoall", "-s", "64KiB"),
    "wide": ("compare", "-n", "64", "-a", "ring,osm,wrht", "--wide"),
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """``outputs(which, columns)``: the table ``TABLES[which]`` drawn in a terminal that wide, no progress bar
    (``columns=None``: its ``--json`` rows); each command run once per module (its output depends on nothing else)."""
    cwd, cache = tmp_path_factory.mktemp("tables"), {}

    def get(which: str, columns: int | None):
        if (which, columns) not in cache:
            if columns is None:
                cache[which, columns] = json.loads(run_pipe(*TABLES[which], "--json", cwd=cwd).stdout)
            else:
                cache[which, columns] = run_tty(*TABLES[which], columns=columns, cwd=cwd,
                                                env={"COLLSIM_PROGRESS_DELAY": "600"})
        return cache[which, columns]
    return get


@pytest.mark.parametrize("columns", [100, 80])
@pytest.mark.parametrize("which", list(TABLES))
def test_tables_fit_the_terminal_and_keep_every_number_whole(which, columns, outputs):
    rows = [r for r in outputs(which, None) if r["skipped"] is None]
    code, text = outputs(which, columns)
    assert code == 0, text
    lines = screen(text)
    assert "…" not in text and "..." not in text, text
    table = [line for line in lines if not line.startswith("skipped:")]
    assert max(len(line) for line in table) <= columns, "\n".join(table)
    for r in rows:
        mine = [line.split() for line in table if line.split()[:1] == [r["algorithm"]]]
        assert mine, f"no line for {r['algorithm']}:\n{text}"
        cells = [cell for line in mine for cell in line]
        timed = r["simulated_time_s"] if r.get("simulated_time_s") is not None else r["time_s"]
        value, unit = format_time(timed).split()
        assert any(a == value and b == unit for a, b in zip(cells, cells[1:])), (r["algorithm"], value, cells)
        eff = format_number(100 * r["efficiency"], 3, strip=False) + "%"
        assert str(r["slots"]) in cells and (eff in cells or eff + "*" in cells), (eff, cells)
    if columns == 80 and which != "wide":
        assert any(line.startswith("not shown at 80 columns:") for line in lines)


def test_the_default_table_at_100_columns_reads_as_documented(outputs):
    # the run takes a few seconds: no progress bar (it is tested elsewhere) mixed into the screen
    assert TABLES["optical"] == ("compare",)
    code, text = outputs("optical", 100)
    lines = screen(text)
    head = next(i for i, line in enumerate(lines) if line.startswith("algorithm"))
    # every default algorithm (striped-stages' name widens the first column): the secondary "λ used"
    # column gives way at 100 columns, with a note; every other column and every number stays whole
    assert lines[head].split() == ["algorithm", "slots", "times", "steps", "hops", "feasible", "time",
                                   "time", "ciency", "GB/s", "verified"]
    assert lines[0].startswith("allgather of 4MiB") and "on paper: N=1024, w=64, F=1, lower bound" in lines[0]
    (note,) = [line for line in lines if "λ used" in line]
    names(note, "100 columns", "--wide")   # the column left out, at which width, and how to see it
    assert all(len(line) <= 100 for line in lines)


def test_the_block_time_column_is_named_for_what_it_is(tmp_path):
    """Issue 31: "block steps" (7.992, 0.181641) read as a count of steps beside slots; it is a duration in
    block times (one block over one channel).  The JSON key stays block_steps."""
    for kind in ("optical-ring", "network"):
        (header, _, _, meaning), = [c for c in legend(kind) if c[1] == "block_steps"]
        assert header == "block times" and "duration, not a count" in meaning and "block_steps" in meaning
    proc = run_pipe("compare", "--system", "ring", "-n", "8", "-a", "ring", "-s", "1KiB", cwd=tmp_path)
    lines = proc.stdout.decode().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("algorithm"))
    top, names = lines[head - 1], lines[head]
    at = names.index("times")
    assert top[at:at + 5] == "block" and "steps" not in top + names, (top, names)


def test_piped_output_has_no_progress_or_control_codes(tmp_path):
    for args in (("compare", "-n", "64", "-a", "ring,osm"), ("compare", "-n", "64", "-a", "ring", "--format", "csv"),
                 ("simulate", "ne", "--system", "ring", "-n", "16", "-s", "64KiB")):
        proc = run_pipe(*args, env={"COLLSIM_PROGRESS_DELAY": "0"}, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        for stream in (proc.stdout, proc.stderr):
            assert b"\x1b" not in stream and b"ETA" not in stream and b"\r" not in stream, stream[:300]


def test_a_terminal_gets_a_progress_bar_with_an_eta(tmp_path):
    # with no delay the bar is drawn before the work starts, however loaded the machine is
    code, text = run_tty("compare", "-n", "64", "-a", "ring,osm", columns=100, cwd=tmp_path,
                         env={"COLLSIM_PROGRESS_DELAY": "0"})
    assert code == 0 and "building and verifying" in text and "elapsed, ETA" in text, text[:500]
    assert any(line.startswith("ring ") for line in screen(text))  # the table follows the erased bar
    # work that ends before the delay draws no bar (a delay no run reaches, so the machine's load cannot matter)
    code, text = run_tty("compare", "-n", "8", "-a", "ring", columns=100, cwd=tmp_path,
                         env={"COLLSIM_PROGRESS_DELAY": "600"})
    assert code == 0 and "ETA" not in text and any(line.startswith("ring ") for line in screen(text))


class FakeClock:
    """A time source that moves only when told to."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _terminal():
    from rich.console import Console
    return Console(file=io.StringIO(), force_terminal=True, width=100, color_system=None, highlight=False)


def test_the_eta_is_computed_from_the_injected_clock(monkeypatch):
    from collsim.cli.progress import ProgressBar
    monkeypatch.delenv("COLLSIM_PROGRESS_DELAY", raising=False)
    clock = FakeClock()
    with ProgressBar("x", total=10, clock=clock, console=_terminal(), delay=600) as bar:
        assert bar.clock() == "0:00:00 elapsed, ETA -:--:--"      # nothing done yet: no pace
        clock.now += 12
        bar.update(2)                                            # 2 of 10 in 12 s
        clock.now += 12
        bar.update(4)                                            # the pace since the first unit: 2 per 12 s
        assert bar.clock() == "0:00:24 elapsed, ETA 0:00:36"
        clock.now += 3600                                        # an hour with no unit done: the pace drops
        assert bar.clock() == "1:00:24 elapsed, ETA 3:00:36"     # (3624 - 12) s / 2 units x 6 left
        bar.update(10)
        assert bar.clock().endswith("ETA 0:00:00")
    # library hooks pass at most 20 updates a second on, and always the last one
    clock = FakeClock()
    with ProgressBar("y", clock=clock, console=_terminal(), delay=600) as bar:
        bar.callback(1, 100)
        clock.now += 0.01
        bar.callback(2, 100)                                     # 10 ms later: dropped
        assert bar.completed == 1
        clock.now += 0.05
        bar.callback(3, 100)
        bar.callback(100, 100)                                   # the last one is never dropped
        assert bar.completed == 100 and bar.total == 100


def _not_a_terminal():
    from rich.console import Console
    return Console(file=io.StringIO(), force_terminal=False, width=100, color_system=None)


def test_off_a_terminal_long_work_says_how_far_it_is_at_least_every_interval():
    """Issue 31: reproduce beyond ran 300 s into a log without a word.  Off a terminal, no bar: a line at
    least every interval (30 s by default), at the first update after it has passed."""
    from collsim.cli.progress import INTERVAL_S, ProgressBar
    assert INTERVAL_S == 30
    clock, log = FakeClock(), io.StringIO()
    with ProgressBar("tuning", total=10, clock=clock, console=_not_a_terminal(), log=log, interval=30) as bar:
        bar.update(1)
        clock.now += 29
        bar.update(2, description="tuning 1KiB")                 # 29 s: nothing yet
        assert log.getvalue() == ""
        clock.now += 1
        bar.update(3, description="tuning 4MiB")                 # 30 s: what runs and how far it is
        clock.now += 10
        bar.begin("8MiB")                                        # 10 s after the line: nothing
        clock.now += 30
        bar.update(5)                                            # 30 s after it: the next line
    lines = log.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == ["tuning 4MiB: 3 of 10", "tuning 8MiB: 5 of 10"], lines
    assert lines[0].endswith("0:00:30 elapsed, ETA 0:01:45") and "0:01:10 elapsed" in lines[1], lines
    assert "\x1b" not in log.getvalue() and "\r" not in log.getvalue()


def test_off_a_terminal_a_line_comes_while_the_work_says_nothing():
    """One long build reports nothing for minutes: the timer thread writes the line (a fake clock says
    90 s have passed; the thread wakes every 10 ms of real time to look)."""
    import threading

    from collsim.cli.progress import ProgressBar
    said = threading.Event()

    class Log(io.StringIO):
        def write(self, text):
            said.set()
            return super().write(text)
    clock, log = FakeClock(), Log()
    with ProgressBar("beyond: ring N=1024 w=64 (3/120)", clock=clock, console=_not_a_terminal(), log=log,
                     interval=0.01):
        clock.now += 90
        assert said.wait(timeout=120), "no progress line"
    assert log.getvalue().splitlines()[0] == "beyond: ring N=1024 w=64 (3/120), 0:01:30 elapsed"
    with ProgressBar("x", total=3, console=_terminal(), log=log, interval=0) as bar:  # a terminal: a bar, no lines
        bar.update(1)
    assert log.getvalue().count("\n") == 1


def test_every_long_command_writes_progress_lines_off_a_terminal(tmp_path):
    """COLLSIM_PROGRESS_INTERVAL=0: a line at every step, through the one mechanism every command uses."""
    env = {"COLLSIM_PROGRESS_INTERVAL": "0"}
    tune = run_pipe("tune", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "2KiB", "-a", "ring,bruck",
                    "--no-store", "--json", env=env, cwd=tmp_path)
    assert tune.returncode == 0, tune.stderr
    err = tune.stderr.decode().splitlines()
    total = int(err[-1].split()[1])                                # "tune: 22 trials: ..."
    steps = [line for line in err if line.startswith("tuning ")]
    assert [int(line.split(": ")[1].split(" of ")[0]) for line in steps] == list(range(total + 1)), err
    assert all(f" of {total}, " in line and "elapsed" in line for line in steps)
    assert json.loads(tune.stdout)  # standard output holds the rows only
    compare = run_pipe("compare", "--system", "ring", "-n", "8", "-b", "1KiB", "-e", "2KiB", "-a", "ring,bruck",
                       env=env, cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr
    assert "building and verifying bruck at 2KiB: 3 of 4" in compare.stderr.decode(), compare.stderr
    quiet = run_pipe("compare", "--system", "ring", "-n", "8", "-a", "ring", cwd=tmp_path)  # 30 s: none so soon
    assert quiet.returncode == 0 and quiet.stderr == b"", quiet.stderr


def test_the_bar_renders_on_a_terminal_and_only_after_its_delay(monkeypatch):
    from collsim.cli.progress import ProgressBar
    monkeypatch.delenv("COLLSIM_PROGRESS_DELAY", raising=False)
    clock = FakeClock()
    term = _terminal()
    with ProgressBar("building and verifying", total=4, clock=clock, console=term, delay=0) as bar:
        clock.now += 30
        bar.begin("ring")
        bar.begin("osm")                                         # ring done, osm started
        bar._progress.refresh()                                  # draw now (rich's own refresh is timed)
    out = CONTROL.sub("", term.file.getvalue())
    assert "building and verifying osm" in out and "1/4" in out, out
    assert "0:00:30 elapsed, ETA" in out, out
    # the delay not reached: no bar at all, on a terminal
    term = _terminal()
    with ProgressBar("reading", total=4, clock=FakeClock(), console=term, delay=600) as bar:
        bar.update(4)
    assert term.file.getvalue() == ""
    # not a terminal: no bar even with no delay
    from rich.console import Console
    plain = Console(file=io.StringIO(), force_terminal=False)
    with ProgressBar("reading", total=4, console=plain, delay=0) as bar:
        bar.update(2)
    assert plain.file.getvalue() == ""


def test_csv_and_tsv_hold_the_json_values_raw(tmp_path):
    from collsim.cli.output import _cell
    args = ("compare", "-n", "9", "-w", "4", "-s", "1KiB")
    rows = json.loads(run_pipe(*args, "--json", cwd=tmp_path).stdout)
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        text = run_pipe(*args, "--format", fmt, cwd=tmp_path).stdout.decode()
        assert len(text.splitlines()) == 1 + len(rows)  # one header, one line per row
        got = list(csv.DictReader(io.StringIO(text), delimiter=sep))
        assert list(got[0]) == list(rows[0])
        for want, have in zip(rows, got):
            assert have == {k: _cell(v) for k, v in want.items()}
            if want["time_s"] is not None:
                assert float(have["time_s"]) == want["time_s"] and int(have["size_bytes"]) == 1024
    assert any(r["skipped"] for r in rows) and "ne" in {r["algorithm"] for r in rows if r["skipped"]}


def test_json_flag_is_format_json(tmp_path):
    args = ("compare", "-n", "16", "-w", "4", "-a", "ring,osm")
    assert run_pipe(*args, "--json", cwd=tmp_path).stdout == run_pipe(*args, "--format", "json", cwd=tmp_path).stdout
    proc = run_pipe(*args, "--json", "--format", "tsv", cwd=tmp_path)
    assert proc.returncode == 2 and b"contradicts" in proc.stderr


def test_verify_json_names_the_failure(tmp_path):
    assert run_pipe("schedule", "osm", "-n", "8", "-w", "8", "--out", "o.json", cwd=tmp_path).returncode == 0
    doc = json.loads((tmp_path / "o.json").read_text())
    trs = doc["steps"][0]["transfers"]
    a = next(t for t in trs if t["src"] == 0 and t["dst"] == 2)
    b = next(t for t in trs if t["src"] == 1 and t["dst"] == 3)
    b["wavelength"] = a["wavelength"]
    (tmp_path / "c.json").write_text(json.dumps(doc))
    proc = run_pipe("verify", "c.json", "--json", cwd=tmp_path)
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
    out = json.loads(proc.stdout)
    assert out["valid"] is False and out["error"] == "ChannelConflictError" and out["algorithm"] == "osm"
    assert out["step"] == 0 and out["link"] == "cw 1->2" and out["wavelength"] == a["wavelength"]
    assert set(out) >= {"transfer", "fiber", "node", "chunk", "message"} and "wavelength conflict" in out["message"]
    (tmp_path / "g.json").write_text('{"version":')
    proc = run_pipe("verify", "g.json", "--json", cwd=tmp_path)
    out = json.loads(proc.stdout)
    assert proc.returncode == 2 and out["error"] == "ScheduleFormatError" and out["step"] is None
    proc = run_pipe("verify", "c.json", cwd=tmp_path)  # without --json: nothing on stdout, as before
    assert proc.returncode == 1 and proc.stdout == b""


def test_reproduce_and_simulate_json(tmp_path):
    listing = json.loads(run_pipe("reproduce", "--json", cwd=tmp_path).stdout)
    assert listing[0]["name"] == "optree-table1" and "Table 1" in listing[0]["description"]
    assert {"optree-fig4", "mlfm-throughput"} <= {t["name"] for t in listing}
    sim = json.loads(run_pipe("simulate", "ne", "--system", "ring", "-n", "16", "-s", "64KiB", "--json",
                              cwd=tmp_path).stdout)
    assert (sim["algorithm"], sim["system"], sim["nodes"], sim["collective"], sim["size_bytes"]) == \
        ("ne", "ring", 16, "allgather", 65536)
    assert sim["alpha_beta_time_s"] > 0 and sim["total_time_s"] >= sim["alpha_beta_time_s"] * (1 - 1e-9)


@pytest.mark.parametrize("args", [("compare", "-n", "16", "-w", "4", "--json"),
                                  ("simulate", "bruck", "--system", "ring", "-n", "8", "-s", "8KiB", "--json"),
                                  ("reproduce", "optree-motivation", "--format", "csv")])
def test_results_carry_no_wall_clock_times(args, tmp_path):
    first, second = run_pipe(*args, cwd=tmp_path), run_pipe(*args, cwd=tmp_path)
    assert first.returncode == 0 and first.stdout == second.stdout


def test_an_infeasible_schedule_s_efficiency_is_marked(tmp_path):
    rows = {r["algorithm"]: r for r in json.loads(run_pipe("compare", "-n", "64", "-a", "ring,osm", "--json",
                                                           cwd=tmp_path).stdout)}
    assert rows["osm"]["feasible"] is False and rows["ring"]["feasible"] is True
    lines = run_pipe("compare", "-n", "64", "-a", "ring,osm", cwd=tmp_path).stdout.decode().splitlines()
    osm, ring = (next(x for x in lines if x.startswith(name + " ")) for name in ("osm", "ring"))
    assert "%*" in osm and "no (>25)" in osm and "%*" not in ring
    assert any(x.startswith("* infeasible") for x in lines)


@pytest.mark.parametrize("kind,args", [("optical-ring", ("compare", "-n", "16", "-w", "4", "-a", "ring")),
                                       ("network", ("compare", "--system", "ring", "-n", "8", "-s", "1KiB",
                                                    "-a", "ne")),
                                       ("simulate", ("simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB"))])
def test_explain_names_every_column(kind, args, tmp_path):
    proc = run_pipe(*args, "--explain", cwd=tmp_path)
    text = proc.stdout.decode()
    assert proc.returncode == 0
    for header, key, _, meaning in legend(kind):
        assert f"{header} ({key}" in text and meaning.split()[0] in text
    machine = run_pipe(*args, "--explain", "--format", "csv", cwd=tmp_path)  # the legend keeps out of the data
    assert b"What the" in machine.stderr and b"What the" not in machine.stdout


def test_the_docs_hold_the_legend_and_every_key(tmp_path):
    docs = DOCS.read_text()
    assert legend_markdown() in docs, "docs/output.md is stale: paste `python -m collsim.cli.columns` into it"
    for kind in ("optical-ring", "network", "simulate"):
        for header, key, _, _ in legend(kind):
            assert f"`{key}`" in docs and header in docs
    for args in (("compare", "-n", "9", "-w", "4", "-s", "1KiB"), ("compare", "--system", "ring", "-n", "8")):
        for key in json.loads(run_pipe(*args, "--json", cwd=tmp_path).stdout)[0]:
            assert key in docs, f"docs/output.md does not mention the JSON key {key!r}"
    assert "output.md" in (DOCS.parent / "README.md").read_text()


def test_non_utf8_terminals_get_ascii_names(tmp_path):
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONIOENCODING": "ascii"}
    for args, names in ((("compare", "-n", "16", "-w", "4", "-a", "ring,osm", "--explain"), ("lambda used",)),
                        (("compare", "--system", "ring", "-n", "8", "-s", "1KiB", "--explain"),
                         ("alpha-beta", " us", "alpha-beta time (alpha_beta_time_s)")),
                        (("simulate", "ne", "--system", "ring", "-n", "8", "-s", "1KiB"), ("us,",))):
        proc = run_pipe(*args, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.isascii() and proc.stderr.isascii(), proc.stdout[:400]
        for name in names:
            assert name in proc.stdout.decode(), (name, proc.stdout[:400])
    code, text = run_tty("compare", "-n", "16", "-w", "4", columns=80, env={**env, "COLLSIM_PROGRESS_DELAY": "600"},
                         cwd=tmp_path)
    assert code == 0 and text.isascii() and "lambda" in text and max(map(len, screen(text))) <= 80
    proc = run_pipe("compare", "--system", "ring", "--link-latency", "-1µs", env=env, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.isascii() and b"internal error" not in proc.stderr
