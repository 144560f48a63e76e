"""Issue #11 ("Trust at the boundary"), items 2-6: what a schedule file may say, and what it means.

* numbers are exact, and values that do not fit collsim's int64 columns are refused with
  exit 2 and one line, never exit 3 or a silent wrap-around;
* step numbers are 0, 1, 2, ... without gaps, in JSON and in ``.npz``;
* the verifier's last holes: paths through nodes that do not exist, a chunk named twice
  in a transfer, negative informative fields;
* malformed (exit 2) versus violation (exit 1), as docs/model.md's table says;
* docs/derivations/step-counts.md: W(N) = ceil(N^2/8) except for odd N.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import collsim_exe, raises_naming

import collsim
from collsim.core import errors as E
from collsim.core.serialize import dumps, load, loads, save
from collsim.core.wellformed import MAX_BYTES, check_wellformed, first_duplicate, traffic_bytes
from collsim.kinds.optical_ring import OpticalRing

DOCS = Path(__file__).resolve().parents[1] / "docs"
BASE = json.loads(dumps(collsim.build("ring", "paper", "allgather", 1000, nodes=3)))  # 2 steps x 3 transfers
T0 = ("steps", 0, "transfers", 0)


def _set(doc: dict, path: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    obj = doc
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return doc


def _edit(path: tuple, value):
    return lambda doc: _set(doc, path, value)


def _cli(tmp_path: Path, doc: dict | str, *args: str) -> subprocess.CompletedProcess:
    f = tmp_path / "s.json"
    f.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return subprocess.run([collsim_exe(), "verify", str(f), *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


# ------------------------------------------------------------------ the cases, through the console script

CASES = {
    "size 2^63": (_edit(("collective", "size_bytes"), 2**63), 2, "collective.size_bytes is 9223372036854775808, out of range"),
    "size 2^64": (_edit(("collective", "size_bytes"), 2**64), 2, "out of range: collsim's integers are int64"),
    "size 2^63-127": (_edit(("collective", "size_bytes"), 2**63 - 127), 2, re.compile(r"2\^63|2\*\*63")),
    "size 2^63-1": (_edit(("collective", "size_bytes"), 2**63 - 1), 2, re.compile(r"2\^63|2\*\*63")),
    "step 2^63": (_edit(("steps", 1, "step"), 2**63), 2, "'step' is 9223372036854775808, out of range"),
    "one step numbered 5": (lambda d: _set(_set(d, ("steps",), d["steps"][:1]), ("steps", 0, "step"), 5), 2,
                            "steps[0]: the first step is numbered 5, not 0"),
    "step 2^40": (_edit(("steps", 1, "step"), 2**40), 2, "steps[1]: step 1099511627776 follows step 0"),
    "negative step": (_edit(("steps", 0, "step"), -1), 2, "the first step is numbered -1"),
    "an empty step": (lambda d: _set(d, ("steps",), [d["steps"][0], {"step": 1, "transfers": []}, d["steps"][1]]),
                      2, "step 1 has no transfers"),
    "fibers 2^63": (_edit(("system", "fibers"), 2**63), 2, "system.fibers is 9223372036854775808, out of range"),
    "chunk 2^63": (_edit(T0 + ("chunks",), [2**63]), 2, "'chunks' is 9223372036854775808, out of range"),
    "chunk -2^63-1": (_edit(T0 + ("chunks",), [-2**63 - 1]), 2, "out of range"),
    "src 2^64": (_edit(T0 + ("src",), 2**64), 2, "'src' is 18446744073709551616, out of range"),
    "fiber 70000": (_edit(T0 + ("fiber",), 70000), 2, "'fiber' is 70000, out of range: collsim stores it as int16"),
    "duplicate chunks": (_edit(T0 + ("chunks",), [0, 0]), 2, "steps[0].transfers[0] carries chunk 0 more than once"),
    "no chunks": (_edit(T0 + ("chunks",), []), 1, "missing data: transfer carries no chunk (steps[0].transfers[0])"),
    "path through node 4 of 3": (lambda d: _set(_set(d, T0 + ("dst",), 2), T0 + ("path",), [0, 4, 2]), 1,
                                 "bad route: path visits node 4, which does not exist (nodes are 0..2)"),
    "negative bytes": (_edit(T0 + ("bytes",), -1), 2, "steps[0].transfers[0]: 'bytes' must be >= 0, got -1"),
    "negative round": (_edit(T0 + ("round",), -1), 2, "steps[0].transfers[0]: 'round' must be >= 0, got -1"),
    "round not an integer": (_edit(T0 + ("round",), "one"), 2, "'round' must be an integer"),
    "node counts differ": (_edit(("collective", "nodes"), 4), 2, "the collective has 4 nodes but the system has 3"),
    "a 4301-digit integer": (lambda d: json.dumps(d).replace('"size_bytes": 1000', '"size_bytes": ' + "9" * 4301), 2,
                             "not valid JSON"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_file_boundary_cases_through_the_console_script(tmp_path, name):
    mutate, code, needle = CASES[name]
    proc = _cli(tmp_path, mutate(BASE))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    found = needle.search(lines[0]) if isinstance(needle, re.Pattern) else needle in lines[0]
    assert len(lines) == 1 and lines[0].startswith("collsim: ") and found, proc.stderr
    assert proc.stdout == ""


def test_2_53_plus_1_stays_exact_end_to_end(tmp_path):
    exact = 2**53 + 1
    doc = _set(_set(BASE, ("collective", "size_bytes"), exact), ("system", "max_tx_channels"), exact)
    proc = _cli(tmp_path, doc, "--json")
    assert proc.returncode == 0, proc.stderr
    s = load(tmp_path / "s.json")
    assert s.collective.size_bytes == exact and int(s.size_bytes.max()) == exact
    for suffix in (".json", ".npz"):
        save(s, tmp_path / f"again{suffix}")
        again = load(tmp_path / f"again{suffix}")
        assert again.collective.size_bytes == exact and again.system.max_tx_channels == exact
        text = dumps(again)
        assert '"size_bytes": 9007199254740993' in text and '"bytes":9007199254740993' in text
        assert '"max_tx_channels": 9007199254740993' in text


# ------------------------------------------------------------------ property: exact, or refused with exit 2

INTERESTING = st.one_of(
    st.integers(-2**66, 2**66),
    st.builds(lambda base, delta, sign: sign * (base + delta),
              st.sampled_from([0, 2**15, 2**16, 2**31, 2**32, 2**53, 2**62, 2**63, 2**64]),
              st.integers(-3, 3), st.sampled_from([1, -1])))
FIELDS = [("collective", "size_bytes"), ("collective", "split"), ("collective", "root"), ("system", "nodes"),
          ("system", "wavelengths"), ("system", "fibers"), ("system", "packet_bytes"), ("system", "flit_bytes"),
          ("system", "max_rx_channels"), ("steps", 1, "step"), T0 + ("src",), T0 + ("dst",), T0 + ("round",),
          T0 + ("bytes",), T0 + ("fiber",), T0 + ("wavelength",), T0 + ("band",), T0 + ("chunks", 0),
          T0 + ("path", 1)]
KEPT = {("collective", "size_bytes"), ("collective", "split"), ("system", "wavelengths"), ("system", "fibers"),
        ("system", "packet_bytes"), ("system", "flit_bytes"), ("system", "max_rx_channels"), T0 + ("round",),
        T0 + ("fiber",), T0 + ("wavelength",), T0 + ("band",), T0 + ("chunks", 0)}  # written back as read


def _run_main(argv: list[str]) -> int:
    from collsim.cli.main import main
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code
    assert code != 3, err.getvalue()
    return code


@settings(max_examples=int(os.environ.get("BOUNDARY_EXAMPLES", "150")))
@given(field=st.sampled_from(FIELDS), value=INTERESTING)
def test_random_integers_round_trip_exactly_or_are_refused_with_exit_2(field, value):
    doc = _set(BASE, field, value)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "s.json"
        f.write_text(json.dumps(doc))
        try:
            s = load(f)
        except (E.ScheduleFormatError, E.InputError):
            assert _run_main(["verify", str(f)]) == 2
            return
        except E.VerificationError:  # a path read as a bad route
            assert _run_main(["verify", str(f)]) == 1
            return
        assert _run_main(["verify", str(f)]) in (0, 1, 2)
        for suffix in (".json", ".npz"):
            save(s, Path(d) / f"again{suffix}")
            back = json.loads(dumps(load(Path(d) / f"again{suffix}")))
            if field in KEPT:
                obj = back
                for key in field[:-1]:
                    obj = obj[key]
                obj = obj.get(field[-1], 1) if field[-1] == "band" else obj[field[-1]]  # a band of 1 is omitted
                assert obj == value and type(obj) is int, (field, value, obj)


# ------------------------------------------------------------------ .npz: the same checks, vectorised

def _npz(tmp_path: Path, s, **columns) -> Path:
    f = tmp_path / "s.npz"
    save(s, f)
    with np.load(f) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(columns)
    np.savez(f, **arrays)
    return f


NE = collsim.build("ne", "paper", "allgather", 1000, nodes=4)  # transfers 4..7 carry two chunks


@pytest.mark.parametrize("columns,needle", [
    ({"step": np.array([0, 0, 0, 0, 2, 2, 2, 2])}, "steps[1].transfers[0] is in step 2, after step 0"),
    ({"step": np.array([1, 1, 1, 1, 2, 2, 2, 2])}, "the first step is numbered 1"),
    ({"step": np.array([0, 0, 0, 0, 1, 1, 1, 0])}, "steps[2].transfers[0] is in step 0, after step 1"),
    ({"step": np.array([0, 0, 0, 0, 1, 1, 1, 2**63], dtype=np.uint64)}, "column 'step' holds 9223372036854775808"),
    ({"fiber": np.array([0, 0, 0, 0, 0, 0, 0, 70000])}, "column 'fiber' holds 70000, out of range"),
    ({"round": np.array([0, 0, 0, 0, 1, 1, 1, -1])}, "steps[1].transfers[3] has round -1"),
    ({"chunk_idx": np.array([0, 1, 2, 3, 5, 5, 0, 1, 3, 0, 2, 3])}, "steps[1].transfers[0] carries chunk 5 more than once"),
    ({"chunk_ptr": np.array([0, 1, 2, 3, 4, 6, 5, 10, 12])}, "chunk_ptr must start at 0, never decrease"),
])
def test_npz_files_are_checked_like_json(tmp_path, columns, needle):
    f = _npz(tmp_path, NE, **columns)
    with pytest.raises(E.ScheduleFormatError, match=re.escape(needle)):
        load(f)
    proc = subprocess.run([collsim_exe(), "verify", str(f)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_duplicate_detection_on_out_of_order_payloads():
    # the worst case: transfers whose chunks are all out of order (sorted payloads, what collsim
    # builds, take one linear pass); its wall time at a million transfers (a Python loop per
    # transfer takes minutes) is benchmarks/run.py's duplicates-1m workload
    rng = np.random.default_rng(0)
    counts = rng.integers(2, 8, 100_000)
    ptr = np.concatenate([[0], np.cumsum(counts)])
    idx = rng.permutation(int(ptr[-1]))
    assert first_duplicate(ptr, idx) is None
    idx[ptr[70_000] + 1] = idx[ptr[70_000]]
    assert first_duplicate(ptr, idx) == (70_000, int(idx[ptr[70_000]]))
    idx[ptr[90_000]] = idx[ptr[90_000] + 1]  # a later duplicate: the first one is still named
    assert first_duplicate(ptr, idx) == (70_000, int(idx[ptr[70_000]]))
    assert first_duplicate(np.array([0, 3, 3, 5]), np.array([2, 1, 2, 7, 7])) == (0, 2)
    assert first_duplicate(np.array([0, 2, 4]), np.array([2**62, -2**62, 5, 5])) == (1, 5)  # lexsort path


# ------------------------------------------------------------------ routes on networks

@pytest.mark.parametrize("path,exc,needle", [
    ([0, 99, 1], E.RouteError, "path visits vertex 99, which does not exist"),
    ([0, 2**62, 1], E.RouteError, "path visits vertex 4611686018427387904"),  # once u*V + v wrapped round
    ([0, 2**63, 1], E.ScheduleFormatError, "'path' is 9223372036854775808, out of range"),
    ([0, -1, 1], E.RouteError, "path visits vertex -1"),
])
def test_network_paths_must_name_existing_vertices(path, exc, needle):
    doc = json.loads(dumps(collsim.build("ring", "ring", "allgather", 64, nodes=4)))
    with pytest.raises(exc, match=re.escape(needle)):
        loads(json.dumps(_set(doc, T0 + ("path",), path)))


# ------------------------------------------------------------------ byte counts

def test_traffic_beyond_int64_is_counted_exactly():
    # issue 21: the traffic (bytes x links, summed) may exceed int64; it is exact, and only the flow
    # simulator, whose link counters are int64, refuses it (tests/test_results_truth.py)
    size = 3 * 2**58  # whole data x nodes = 9 x 3 x 2^58 < 2^63: make_collective accepts it
    doc = _set(BASE, ("collective", "size_bytes"), size)
    s = loads(json.dumps(doc))
    assert traffic_bytes(s) == 6 * size <= MAX_BYTES
    extra = [dict(doc["steps"][1], step=k) for k in range(2, 6)]  # redundant copies: 18 transfers
    big = loads(json.dumps(_set(doc, ("steps",), doc["steps"] + extra)))
    assert traffic_bytes(big) == 18 * size == 15564440312192434176 > MAX_BYTES
    assert collsim.verify(big).transfers == 18


def test_packets_are_padded_within_int64():
    s = collsim.build("ring", "paper", "allgather", 1000, nodes=3)
    big = s.replace(collective=replace(s.collective, size_bytes=2**62 + 2),
                    system=replace(s.system, packet_bytes=2**62 + 1))  # two packets: 2^63 + 2 bytes
    with pytest.raises(E.ScheduleFormatError, match="once padded to 4611686018427387905-byte packets"):
        check_wellformed(big)


def test_traffic_is_exact_beyond_float_precision():
    s = collsim.build("ring", "paper", "allgather", 1000, nodes=3)
    s = s.replace(collective=replace(s.collective, size_bytes=2**60 + 1))
    assert traffic_bytes(s) == 6 * (2**60 + 1)


# ------------------------------------------------------------------ channels and transceivers with huge numbers

def test_channel_check_survives_huge_channel_numbers():
    # keys used to be (step*2 + dir) * F + fiber, then * (w + 1): int64 wrapped round for large F, w, steps
    n, steps = 4, 70_000
    sysm = OpticalRing(nodes=n, wavelengths=2**31 - 1, fibers=2**15 - 1)
    coll = collsim.core.collective.make_collective("broadcast", n, 64)
    step = np.arange(steps).repeat(1)
    src, dst = np.zeros(steps, np.int64), np.ones(steps, np.int64)
    routes = collsim.kinds.optical_ring.routes.RingRoutes.create(direction=np.ones(steps), hops=np.ones(steps),
                                                   fiber=np.full(steps, 2**15 - 2),
                                                   wavelength=np.full(steps, 2**31 - 3), band=2)
    s = collsim.core.schedule.Schedule(sysm, coll, "test", {}, step, step, src, dst, np.arange(steps + 1),
                                       np.zeros(steps, np.int64), np.zeros(steps, bool), routes)
    from collsim.kinds.optical_ring.resources import verify_channels
    verify_channels(s)  # one transfer per step: no conflict
    clash = s.replace(step=np.minimum(step, steps - 2), round=np.minimum(step, steps - 2))
    with pytest.raises(E.ChannelConflictError, match=re.escape("steps[69998].transfers[0] and steps[69998].transfers[1]")):
        verify_channels(clash)


def test_transceiver_limits_with_many_nodes():
    n = 3_000_000  # steps x nodes far beyond the transfers: counted by sorting, not a dense table
    sysm = OpticalRing(nodes=n, max_tx_channels=1)
    s = collsim.core.schedule.Schedule(
        sysm, collsim.core.collective.make_collective("broadcast", n, 64), "test", {}, np.array([0, 1, 1]),
        np.array([0, 1, 1]), np.array([0, 0, 0]), np.array([1, 2, n - 1]), np.arange(4), np.zeros(3, np.int64),
        np.zeros(3, bool), collsim.kinds.optical_ring.routes.RingRoutes.create(direction=[1, 1, -1], hops=[1, 2, 1],
                                                                 fiber=[0, 0, 0], wavelength=[0, 0, 0]))
    from collsim.kinds.optical_ring.resources import verify_transceivers
    with pytest.raises(E.TransceiverLimitError, match=r"node 0 transmits on 2 channels, limit 1 .steps\[1\]\.transfers\[0\]"):
        verify_transceivers(s)


# ------------------------------------------------------------------ the API classifies the same way

def test_node_count_mismatch_is_malformed_in_the_api_too():
    s = collsim.build("ring", "paper", "allgather", 64, nodes=4)
    with raises_naming(E.ScheduleFormatError, "collective", "4 nodes", "system", "5"):
        collsim.verify(s.replace(system=replace(s.system, nodes=5)))
    with raises_naming(E.ScheduleFormatError, "first step", "2", "0"):
        collsim.verify(s.take(np.argsort(-s.step, kind="stable")))
    with raises_naming(E.ScheduleFormatError, "steps[2].transfers[0]", "step 0", "step 1"):
        collsim.verify(s.take([0, 4, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11]))


def test_every_error_class_is_in_the_documented_table_with_its_exit_code():
    import importlib
    import pkgutil
    # every module, so that each error class is seen whatever other tests imported in this worker
    for info in pkgutil.walk_packages(collsim.__path__, "collsim."):
        if not info.name.endswith(".__main__"):  # (mpi4py itself is imported only when ranks run)
            importlib.import_module(info.name)
    text = (DOCS / "model.md").read_text()
    table = text[text.index("| error class | exit |"):]
    rows = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `(\w+)`[^|]*\| (\d) \|", table, re.MULTILINE)}
    abstract = {"CollsimError", "VerificationError", "DataFlowError", "ResourceError"}

    def walk(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from walk(sub)
    classes = {c.__name__: c for c in walk(E.CollsimError) if c.__module__.startswith("collsim.")}
    for name, cls in classes.items():
        if name in abstract:
            continue
        assert name in rows, f"{name} is not in docs/model.md's error table"
        assert rows[name] == (1 if issubclass(cls, E.VerificationError) else 2), name
    assert "A transfer must carry at least one\nchunk" in text


# ------------------------------------------------------------------ docs/derivations/step-counts.md

def _busiest_link(n: int) -> int:
    """Fewest one-hop all-to-all lightpaths on a directed link, over every split of the antipodal ties."""
    pairs = [(s, d) for s in range(n) for d in range(n) if s != d]
    ties = [(s, d) for s, d in pairs if 2 * ((d - s) % n) == n]
    best = None
    for split in itertools.product((1, -1), repeat=len(ties)):
        way = dict(zip(ties, split))
        load = np.zeros((2, n), int)
        for s, d in pairs:
            cw = (d - s) % n
            direction = way.get((s, d), 1 if cw < n - cw else -1)
            hops = cw if direction == 1 else n - cw
            for k in range(hops):
                load[int(direction > 0), (s + direction * k) % n] += 1
        best = load.max() if best is None else min(best, load.max())
    return int(best)


def test_w_is_ceil_n2_over_8_except_for_odd_n():
    from collsim.kinds.optical_ring.alltoall import uniform_alltoall_wavelengths
    for n in range(2, 41):
        w = uniform_alltoall_wavelengths(n)
        assert w == math.ceil(n * n / 8) - (n % 2), n  # the exception is odd N, not N = 2 mod 4
        if n % 4 == 2:
            assert w == (n * n + 4) // 8 == math.ceil(n * n / 8)
        if n <= 10:
            assert _busiest_link(n) == w, n
        if n <= 16:
            steps = collsim.verify(collsim.build("osm", OpticalRing(nodes=n, wavelengths=1), "allgather", 64)).steps
            assert steps == w, n
    for n, w in itertools.product((5, 7, 9, 10), (1, 2, 3, 5)):  # the paper's ceil(N^2/8w): one more iff w | W
        osm = collsim.verify(collsim.build("osm", OpticalRing(nodes=n, wavelengths=w), "allgather", 64)).steps
        wn = uniform_alltoall_wavelengths(n)
        assert osm == -(-wn // w) == math.ceil(n * n / (8 * w)) - (n % 2 == 1 and wn % w == 0), (n, w)
    doc = (DOCS / "derivations" / "step-counts.md").read_text()
    assert "except for N ≡ 2 mod 4" not in doc and "one less for every odd N" in doc
