"""Schedule files say nothing that is silently ignored (issue 21).

Unknown keys at every level, a ``dir`` or ``hops`` that contradicts its ``path``,
a 2-node ``path`` without ``dir``, node counts that disagree, a reduction in a
collective without one, the plural of "vertex", the collective aliases of the
docs, and one name for a transfer everywhere: ``steps[i].transfers[j]``.
"""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import collsim
from collsim.core import errors as E
from collsim.core.binary import write_npz
from collsim.core.collective import ALIASES, canonical_collective
from collsim.core.serialize import dumps, load, loads
from collsim.kinds.optical_ring import OpticalRing
from conftest import names, raises_naming, refusal

DOCS = Path(__file__).resolve().parents[1] / "docs"

RING3 = json.loads(dumps(collsim.build("ring", "paper", "allgather", 1000, nodes=3)))   # 2 steps x 3 transfers
RING4 = json.loads(dumps(collsim.build("osm", OpticalRing(nodes=4, wavelengths=4), "allgather", 1000)))
STAR = json.loads(dumps(collsim.build("ring", "star", "allgather", 1000, nodes=4)))     # an electrical network


def _with(doc: dict, change) -> str:
    doc = copy.deepcopy(doc)
    change(doc)
    return json.dumps(doc)


def _refused(text: str, needle: str, error=E.ScheduleFormatError):
    with pytest.raises(error) as info:
        collsim.verify(loads(text))
    assert needle in str(info.value), str(info.value)
    return info.value


# ---------------------------------------------------------------- unknown keys, at every level

@pytest.mark.parametrize("where,change,needle", [
    ("top", lambda d: d.update(stpes=[]), "file: unknown key stpes; did you mean steps?"),
    ("collective", lambda d: d["collective"].update(spilt=2), "collective: unknown key spilt; did you mean split"),
    ("step", lambda d: d["steps"][1].update(stpe=1), "steps[1]: unknown key stpe; did you mean step?"),
    ("transfer", lambda d: d["steps"][1]["transfers"][2].update(reduse=True),
     "steps[1].transfers[2]: unknown key reduse; did you mean reduce? Known: band, bytes, chunks, dir, dst"),
    ("transfer, two keys", lambda d: d["steps"][0]["transfers"][0].update(colour=1, weight=2),
     "steps[0].transfers[0]: unknown keys colour, weight; known:"),
    ("root of an all-gather", lambda d: d["collective"].update(root=1), "allgather has no root, but 'root' is 1"),
    ("shift of an all-gather", lambda d: d["collective"].update(shift=1), "only the shift collective has a 'shift'"),
    ("params not an object", lambda d: d.update(params=[1, 2]), "'params' must be an object"),
])
def test_unknown_keys_are_refused_with_a_did_you_mean(where, change, needle):
    _refused(_with(RING3, change), needle)


def test_unknown_keys_on_network_transfers_include_ring_fields():
    # 'dir' and 'hops' mean nothing on an electrical network: refused, not ignored
    text = _with(STAR, lambda d: d["steps"][0]["transfers"][0].update(dir="cw"))
    _refused(text, "steps[0].transfers[0]: unknown key dir; known: bytes, chunks, dst, path, paths, reduce, round, shares, src")


def test_a_reduse_typo_exits_2_through_the_console_script(run_cli, tmp_path):
    doc = copy.deepcopy(json.loads(dumps(collsim.build("ring", "paper", "allreduce", 1000, nodes=3))))
    t = next(t for st in doc["steps"] for t in st["transfers"] if t["reduce"])
    t["reduse"] = t.pop("reduce")
    (tmp_path / "s.json").write_text(json.dumps(doc))
    names(refusal(run_cli("verify", "s.json")), "reduse", "reduce")   # the key, and the one it may mean


def _npz_bytes(s, **extra) -> bytes:
    buf = io.BytesIO()
    write_npz(s, buf)
    arrays = dict(np.load(io.BytesIO(buf.getvalue()), allow_pickle=False))
    arrays.update(extra)
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def test_npz_unknown_arrays_and_header_keys_are_refused(tmp_path):
    s = collsim.build("ring", "paper", "allgather", 1000, nodes=3)
    f = tmp_path / "s.npz"
    f.write_bytes(_npz_bytes(s, reduse=np.zeros(len(s), bool)))
    with raises_naming(E.ScheduleFormatError, "reduse", "reduce"):
        load(f)
    head = json.loads(dumps(s))
    del head["steps"]
    head["colective"] = head["collective"]
    f.write_bytes(_npz_bytes(s, header=np.frombuffer(json.dumps(head).encode(), np.uint8)))
    with raises_naming(E.ScheduleFormatError, "colective", "collective"):
        load(f)


# ---------------------------------------------------------------- dir and hops beside a path

@pytest.mark.parametrize("change,needle", [
    ({"dir": "up"}, "steps[1].transfers[2]: 'dir' must be 'cw' or 'ccw', got 'up'"),
    ({"dir": 1}, "'dir' must be 'cw' or 'ccw', got 1"),
    ({"hops": "x"}, "steps[1].transfers[2]: 'hops' must be an integer"),
    ({"dir": "ccw"}, "steps[1].transfers[2]: 'dir' is 'ccw' but 'path' [2, 0] runs cw"),
    ({"hops": 2}, "steps[1].transfers[2]: 'hops' is 2 but 'path' [2, 0] has 1 hop"),
])
def test_dir_or_hops_that_contradict_the_path_are_malformed(change, needle):
    _refused(_with(RING3, lambda d: d["steps"][1]["transfers"][2].update(change)), needle)


def test_dir_and_hops_are_read_when_they_agree_with_the_path_only():
    s = loads(_with(RING3, lambda d: d["steps"][1]["transfers"][2].update(dir="cw", hops=1)))
    collsim.verify(s)
    _refused(_with(RING3, lambda d: d["steps"][1]["transfers"][2].update(dir="cw", hops=3)), "'hops' is 3 but")


def test_hops_without_dir_is_malformed():
    def change(d):
        t = d["steps"][0]["transfers"][0]
        del t["path"]
        t["hops"] = 1
    _refused(_with(RING3, change), "steps[0].transfers[0]: 'hops' needs a 'dir'")


def test_a_contradiction_exits_2_through_the_console_script(run_cli, tmp_path):
    (tmp_path / "s.json").write_text(_with(RING4, lambda d: d["steps"][0]["transfers"][0].update(dir="ccw")))
    proc = run_cli("verify", "s.json")
    assert proc.returncode == 2 and "'dir' is 'ccw' but 'path'" in proc.stderr, proc.stderr


# ---------------------------------------------------------------- a 2-node ring needs 'dir'

def test_a_2_node_path_without_dir_is_refused():
    doc = json.loads(dumps(collsim.build("ring", OpticalRing(nodes=2), "allgather", 1000)))
    assert all("dir" in t for st in doc["steps"] for t in st["transfers"])  # the writer always says which
    text = _with(doc, lambda d: d["steps"][0]["transfers"][0].pop("dir"))
    _refused(text, "steps[0].transfers[0]: on a 2-node ring a path runs either way round; give 'dir'")
    for d in ("cw", "ccw"):
        s = loads(_with(doc, lambda x: x["steps"][0]["transfers"][0].update(dir=d)))
        assert int(s.direction[0]) == (1 if d == "cw" else -1)


# ---------------------------------------------------------------- node counts first

def test_node_count_mismatch_is_malformed_before_routes(run_cli, tmp_path):
    # the file's collective names 4 nodes, its system 3, and a path visits node 3: malformed, not a bad route
    def change(d):
        d["collective"]["nodes"] = 4
        d["steps"][0]["transfers"][0].update(dst=3, path=[0, 1, 2, 3])
    text = _with(RING3, change)
    _refused(text, "the collective has 4 nodes but the system has 3")
    (tmp_path / "s.json").write_text(text)
    proc = run_cli("verify", "s.json")
    names(refusal(proc), "4 nodes", "3")


# ---------------------------------------------------------------- reduce in a collective without reduction

def test_reduce_in_an_allgather_names_the_real_mistake(run_cli, tmp_path):
    text = _with(RING3, lambda d: d["steps"][1]["transfers"][2].update(reduce=True))
    exc = _refused(text, "steps[1].transfers[2]", E.UnexpectedReductionError)
    names(str(exc), "reduces", "allgather")
    assert "double" not in str(exc)
    assert not isinstance(exc, E.DoubleCountError) and isinstance(exc, E.DataFlowError)
    (tmp_path / "s.json").write_text(text)
    proc = run_cli("verify", "s.json")
    names(refusal(proc, status=1), "reduces", "allgather", "steps[1].transfers[2]")


# ---------------------------------------------------------------- plurals

def test_a_path_through_a_missing_vertex_says_vertices():
    text = _with(STAR, lambda d: d["steps"][0]["transfers"][0]["path"].insert(1, 99))
    exc = _refused(text, "path visits vertex 99, which does not exist (vertices are 0..4)", E.RouteError)
    assert "vertexs" not in str(exc)


def test_no_message_says_vertexs():
    src = Path(collsim.__file__).parent
    assert not [p for p in src.rglob("*.py") if re.search(r"\{what\}s\b|vertexs", p.read_text())]


# ---------------------------------------------------------------- collective aliases: docs == code

def test_the_alias_table_in_the_docs_is_the_code_s():
    text = (DOCS / "model.md").read_text()
    table = text[text.index("| kind | aliases |"):].split("\n\n")[0]
    documented = {}
    for kind, names in re.findall(r"^\| `(\w+)` \| (.+) \|$", table, re.MULTILINE):
        for alias in re.findall(r"`([^`]+)`", names):
            documented[alias] = kind
    assert documented == ALIASES
    for alias, kind in documented.items():
        assert canonical_collective(alias) == kind
    for sentence in re.findall(r"write it\s+(.+?)\.\n", text, re.DOTALL):  # the all-to-all reduction's names
        for alias in re.findall(r"`([^`]+)`", sentence):
            assert canonical_collective(alias) == "reducescatter"


# ---------------------------------------------------------------- one name for a transfer: steps[i].transfers[j]

def test_violations_name_transfers_as_the_file_does():
    s = collsim.build("ring", OpticalRing(nodes=8, wavelengths=8), "allgather", 1000)   # 7 steps of 8
    t = int(np.flatnonzero(s.step == 2)[3])
    w = s.wavelength.copy()
    w[t] = 99  # out of range
    with pytest.raises(E.ChannelRangeError) as info:
        collsim.verify(s.replace(wavelength=w))
    assert "(steps[2].transfers[3], wavelength 99)" in str(info.value)
    assert info.value.transfer == t and info.value.where.position == "steps[2].transfers[3]"
    doc = json.loads(dumps(s))
    assert doc["steps"][2]["transfers"][3]["wavelength"] == int(s.wavelength[t])  # the same transfer in the file


def test_a_file_that_repeats_a_step_number_is_named_by_its_entries():
    # step 1 written as two entries: the violation names the file's entry, and the step
    def change(d):
        st = d["steps"][1]
        d["steps"][1:2] = [{"step": 1, "transfers": st["transfers"][:1]}, {"step": 1, "transfers": st["transfers"][1:]}]
        d["steps"][2]["transfers"][1]["wavelength"] = 999
    exc = _refused(_with(RING3, change), "(steps[2].transfers[1], step 1, wavelength 999)", E.ChannelRangeError)
    assert exc.transfer == 5


def test_format_errors_and_violations_use_the_same_name(tmp_path):
    s = collsim.build("ne", "paper", "allgather", 1000, nodes=4)
    dup = s.replace(chunk_idx=s.chunk_idx * 0)
    with pytest.raises(E.ScheduleFormatError, match=re.escape("steps[1].transfers[0] carries chunk 0 more than once")):
        collsim.verify(dup)
    bad_src = s.replace(src=np.where(np.arange(len(s)) == 5, 9, s.src))
    with pytest.raises(E.RouteError, match=re.escape("(steps[1].transfers[1])")):
        collsim.verify(bad_src)


def test_the_simgrid_replay_names_transfers_as_the_file_does():
    from collsim.interop.simgrid_replay import replay_files
    s = collsim.build("ring", "star", "allgather", 1000, nodes=4)
    loop = s.replace(dst=np.where(np.arange(len(s)) == 5, s.src, s.dst))
    with pytest.raises(E.UnsupportedError, match=re.escape("steps[1].transfers[1] goes from node 1 to itself")):
        replay_files(loop)


def test_the_torus_docs_say_what_the_reader_does(run_cli, tmp_path):
    # docs/optical-torus.md: the writer's JSON torus files verify, and a 'path' is refused with the quoted message
    text = " ".join((DOCS / "optical-torus.md").read_text().split())
    assert "exits 1" not in text[text.index("## Limits and open points"):]
    run_cli("schedule", "torus-striped", "--system", "optical-torus", "-S", "rows=3", "-S", "cols=4", "-w", "2",
            "-s", "1KiB", "--out", "t.json", check=True)
    assert run_cli("verify", "t.json").returncode == 0
    doc = json.loads((tmp_path / "t.json").read_text())
    t0 = doc["steps"][0]["transfers"][0]
    assert "path" not in t0 and {"dir", "hops"} <= set(t0)
    t0["path"] = [t0["src"], t0["dst"]]
    (tmp_path / "p.json").write_text(json.dumps(doc))
    proc = run_cli("verify", "p.json")
    message = proc.stderr.strip().removeprefix("collsim: ")
    assert proc.returncode == 2 and f"`{message}`" in text, proc.stderr


@pytest.mark.parametrize("change,needle", [
    (lambda t: t.update(paths=[t["path"]], shares=[1.0]), "give 'path' or 'paths' (with 'shares'), not both"),
    (lambda t: t.update(shares=[1.0]), "'shares' goes with 'paths'"),
])
def test_network_route_fields_are_never_ignored(change, needle):
    _refused(_with(STAR, lambda d: change(d["steps"][0]["transfers"][0])), "steps[0].transfers[0]: " + needle)


def test_route_checks_name_transfers_as_the_file_does():
    from collsim.verify.resources import check_network_routes
    s = collsim.build("ring", "ring", "allgather", "1KiB", nodes=4)  # an electrical ring
    with pytest.raises(E.RouteError, match=re.escape("(steps[0].transfers[0])")):
        check_network_routes(s.system, s.src, s.dst, s.route_ptr, s.route_links[::-1], s.step)
    # a JSON file that wrote step 1 in two entries: the verifier names the file's entry
    doc = json.loads(dumps(collsim.build("ring", "star", "allgather", 1000, nodes=4)))
    st = doc["steps"][1]
    doc["steps"][1:2] = [{"step": 1, "transfers": st["transfers"][:1]}, {"step": 1, "transfers": st["transfers"][1:]}]
    s = loads(json.dumps(doc))
    links = s.route_links.copy()
    links[s.route_ptr[6]] = links[s.route_ptr[6] + 1]  # transfer 6 (step 1's third) breaks its route
    broken = s.replace(route_links=links)
    broken._cache["file_entries"] = s._cache["file_entries"]
    with pytest.raises(E.RouteError, match=re.escape("(steps[2].transfers[1], step 1, link")):
        collsim.verify(broken)


def test_a_misspelt_npz_column_gets_a_did_you_mean(tmp_path):
    s = collsim.build("ring", "paper", "allgather", 1000, nodes=3)
    buf = io.BytesIO()
    write_npz(s, buf)
    arrays = dict(np.load(io.BytesIO(buf.getvalue()), allow_pickle=False))
    arrays["reduse"] = arrays.pop("reduce")
    np.savez(tmp_path / "s.npz", **arrays)
    with raises_naming(E.ScheduleFormatError, "reduse", "reduce"):
        load(tmp_path / "s.npz")
