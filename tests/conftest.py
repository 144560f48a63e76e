"""Shared fixtures and helpers."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True, print_blob=True)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


# matplotlib keeps its font cache under $XDG_CACHE_HOME/matplotlib unless MPLCONFIGDIR says where: pin it to
# where it is now, so that the per-test cache folders below do not make every plotting subprocess rebuild it
os.environ.setdefault("MPLCONFIGDIR", str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                                          / "matplotlib"))


@pytest.fixture(autouse=True)
def _own_cache_folder(tmp_path_factory, monkeypatch):
    """Each test gets its own empty ``$XDG_CACHE_HOME``: ``collsim tune``'s default results store
    (``$XDG_CACHE_HOME/collsim/tune.sqlite``) is never the user's, and no test sees what another
    test (or another pytest-xdist worker) stored there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture(autouse=True)
def _no_progress_lines(monkeypatch):
    """No progress line off a terminal (every 30 s of work, docs/output.md) in what a test reads: how long a
    command runs depends on the machine's load, so such lines would come and go.  The progress tests set
    their own interval (and clock)."""
    monkeypatch.setenv("COLLSIM_PROGRESS_INTERVAL", "1e9")


def collsim_exe() -> str:
    """The installed console script (next to the running interpreter, else on PATH)."""
    here = Path(sys.executable).parent / "collsim"
    if here.exists():
        return str(here)
    found = shutil.which("collsim")
    if not found:
        pytest.fail("the collsim console script is not installed")
    return found


@pytest.fixture
def run_cli(tmp_path):
    """Run the installed ``collsim`` script in an isolated folder."""
    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run([collsim_exe(), *args], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200"}, timeout=300)
        if check and proc.returncode != 0:
            raise AssertionError(f"collsim {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc
    return run


def mpiexec() -> str:
    """The mpiexec of the ``[mpi]`` extra (MPICH's, next to the interpreter), else the one on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if not found:
        pytest.fail("mpiexec not found: pip install '.[mpi]' installs MPICH's")
    return found


def refusal(proc: subprocess.CompletedProcess, status: int = 2) -> str:
    """The one line a refused command printed on stderr, after checking the facts every refusal must have:
    the exit status, one line, collsim's prefix and no traceback (never its wording: see :func:`names`)."""
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collsim: "), proc.stderr
    assert not any(leak in proc.stderr for leak in ("Traceback", "internal error", "[Errno")), proc.stderr
    return lines[0]


def names(text: str, *facts: str) -> None:
    """Assert that a message names every fact it must (a file, an option, a value, a limit), in any wording.

    A fact is found as a whole: ``"4"`` is not found in ``"4096"``, nor ``"HOME"`` in ``"XDG_CACHE_HOME"``."""
    def found(fact: str) -> bool:
        head = r"(?<!\w)" if re.match(r"\w", fact) else ""
        tail = r"(?!\w)" if re.search(r"\w$", fact) else ""
        return re.search(head + re.escape(fact) + tail, text) is not None
    missing = [fact for fact in facts if not found(fact)]
    assert not missing, f"{missing} not named in: {text}"


@contextlib.contextmanager
def raises_naming(error: type[BaseException], *facts: str):
    """``pytest.raises(error)``, then :func:`names` on its message: the facts it must name, in any wording."""
    with pytest.raises(error) as info:
        yield info
    names(str(info.value), *facts)


def rejected_alike(sym, mutants) -> int:
    """Verify every ``(what, representatives)`` mutant of the symmetric schedule ``sym`` on its orbits
    and expanded: both pass, or both fail with the same error class in the same step.  Returns how
    many were rejected (a test asserts enough were, so that it checks something)."""
    from collsim import verify
    from collsim.core.errors import ScheduleFormatError, VerificationError
    from collsim.core.symmetry import SymmetricSchedule

    def verdict(s):
        try:
            verify(s)
            return ("passed",)
        except VerificationError as exc:
            return type(exc).__name__, exc.where.step if exc.where else None
        except ScheduleFormatError as exc:
            return type(exc).__name__, None

    rejected = 0
    for what, reps in mutants:
        mutant = SymmetricSchedule(reps, sym.group, sym.interleaved)
        a, b = verdict(mutant), verdict(mutant.expand())
        assert a == b, what
        rejected += a[0] != "passed"
    return rejected


def representative_mutants(reps, rng):
    """Five mutants of representative transfers (a chunk changed, a transfer dropped, a reduction
    flipped, a route's link changed, a transfer duplicated), each as ``(what, representatives)``."""
    import numpy as np
    t = int(rng.integers(len(reps)))
    c = reps.collective.chunks
    chunk_idx = reps.chunk_idx.copy()
    j = int(reps.chunk_ptr[t])
    chunk_idx[j] = (chunk_idx[j] + int(rng.integers(1, c))) % c
    yield "chunk", reps.replace(chunk_idx=chunk_idx)
    yield "dropped", reps.take(np.delete(np.arange(len(reps)), t))
    red = reps.reduce.copy()
    red[t] = ~red[t]
    yield "reduce", reps.replace(reduce=red)
    links = reps.routes.route_links.copy()
    k = int(reps.routes.route_ptr[t])
    links[k] = (links[k] + 1) % len(reps.system.links.src)
    yield "route", reps.replace(route_links=links)
    yield "duplicate", reps.take(np.sort(np.r_[np.arange(len(reps)), t]))


def rows_alike(a, b) -> None:
    """Result rows equal field by field, floats (times and what is computed from them) to 1e-12
    relative: the time of steps that repeat adds each class's step time times its count, where the
    full simulation adds every step's end to an absolute clock (collsim.core.repeated)."""
    import math
    ja, jb = a.to_json(), b.to_json()
    assert ja.keys() == jb.keys()
    for key in ja:
        x, y = ja[key], jb[key]
        if isinstance(x, float) and isinstance(y, float):
            assert math.isclose(x, y, rel_tol=1e-12), key
        elif isinstance(x, dict):
            for k in x:
                if isinstance(x[k], float):
                    assert math.isclose(x[k], y[k], rel_tol=1e-12), (key, k)
                else:
                    assert x[k] == y[k], (key, k)
        else:
            assert x == y, key


def quotient_is_expansion(sym, symmetry) -> None:
    """The flow simulation of ``sym``'s quotient schedule is its expansion's: the total and every
    step's time, every orbit representative's bytes, and every link of an orbit carrying the same
    (``symmetry``: the kind's module, with ``orbit_representatives``)."""
    import numpy as np
    from collsim.kinds import model_for
    from collsim.sim.flow import simulate
    system = sym.system
    quotient = model_for(system).orbit_schedule(sym)
    a, b = simulate(quotient, check=False), simulate(sym.expand(), check=False)
    assert a.total_time_s == b.total_time_s
    assert np.array_equal(a.step_time_s, b.step_time_s)
    reps = np.unique(quotient.routes.route_links)
    assert np.array_equal(a.link_bytes[reps], b.link_bytes[reps])
    orbit_of = symmetry.orbit_representatives(system, sym.group, np.arange(len(system.links.src)))
    assert np.array_equal(b.link_bytes, b.link_bytes[orbit_of])


def is_its_full_build(sym, full, symmetry, seed: int, rows) -> None:
    """``sym`` is ``full`` stored as representatives: its expansion has the same transfers (``rows``:
    a test's sortable tuples of a schedule), both verify and report alike, the quotient simulation
    is the expansion's, and at least three kinds of mutant of the representatives fail as their
    expansions do."""
    import numpy as np
    from collsim import evaluate, verify
    assert len(sym.reps) * sym.group.order == len(full)
    assert rows(sym.expand()) == rows(full)
    a, b = verify(sym), verify(full)
    assert a.data_flow == "orbits" and (a.steps, a.transfers, a.time_s) == (b.steps, b.transfers, b.time_s)
    assert evaluate(sym, report=a).to_json() == evaluate(full, report=b).to_json()
    quotient_is_expansion(sym, symmetry)
    assert rejected_alike(sym, representative_mutants(sym.reps, np.random.default_rng(seed))) >= 3


def ring_is_its_full_build_under_rotations(system, lead: int, coll: str, seed: int, symmetry, rows) -> None:
    """``ring``'s rotations on ``system`` are those by multiples of ``N / lead`` (its domain the nodes
    below), and its schedule built on them is its full build (:func:`is_its_full_build`)."""
    import numpy as np
    from collsim import build, build_symmetric
    from collsim.algorithms.ring import rotations
    n, group = system.nodes, rotations(system)
    assert group.order == lead and group.domain().tolist() == list(range(n // lead))
    assert group.act(n // lead, np.arange(n)).tolist() == ((np.arange(n) + n // lead) % n).tolist()
    sym, full = build_symmetric("ring", system, coll, 64 * n), build("ring", system, coll, 64 * n)
    assert sym.group == group
    is_its_full_build(sym, full, symmetry, seed, rows)


def acts_freely_on_links(system, group, symmetry) -> None:
    """``group`` maps the links one to one, moves every link (free: ``L / |G|`` orbits) and has
    canonical orbit representatives (``symmetry``: the kind's module)."""
    import numpy as np
    ids = np.arange(len(system.links.src))
    reps = symmetry.orbit_representatives(system, group, ids)
    assert len(np.unique(reps)) * group.order == len(ids)
    for e in group.elements()[1:]:
        image = symmetry.link_images(system, group, e, ids)
        assert (image >= 0).all() and (image != ids).all()
        assert np.array_equal(np.sort(image), ids)
        assert np.array_equal(symmetry.orbit_representatives(system, group, image), reps)


def pytest_collection_modifyitems(config, items):
    """Longest files first: the items of files marked ``schedule_first(seconds)`` move ahead, longest first.

    pytest-xdist (``--dist loadfile --no-loadscope-reorder``, pyproject.toml) hands files to its workers
    in this order, one file at a time as each worker frees up: longest-processing-time-first scheduling,
    so the suite never waits at its end on one long file while the other worker idles.  The sort is
    stable and runs after pytest-randomly's shuffle (its hook wraps this one), so the files' own order,
    and every other file's, stays the seeded random one; every worker computes the same order.
    """
    def weight(item) -> float:
        mark = item.get_closest_marker("schedule_first")
        return -float(mark.args[0]) if mark is not None else 0.0
    items.sort(key=weight)
