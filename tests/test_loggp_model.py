"""The calibrated ``loggp-piecewise`` model: the data a star carries, its closed form, the flow simulator.

Expected values are derived by hand from the model's definition (docs/calibration.md):
per step, the busiest rank's ``max message time + o · (posts − 2)+ + local work``.
"""

from __future__ import annotations

import json

import pytest

import collsim
from collsim.core.commmodel import LogGPPiecewise, model_from
from collsim.core.errors import InputError
from collsim.cost.loggp import loggp_step_times_s, loggp_time_s
from collsim.sim import simulate
from collsim.systems import load_system
from collsim.kinds.network.electrical import Star

MODEL = LogGPPiecewise(breakpoints_bytes=(4096, 65536), alpha_s=(2e-6, 5e-6, 20e-6),
                       beta_bytes_per_s=(3e9, 6e9, 1e10), overhead_s=5e-7, copy_s=(1e-6,), copy_bytes_per_s=(1e10,),
                       reduce_breakpoints_bytes=(65536,), reduce_s=(1e-6, 2e-6),
                       reduce_bytes_per_s=(1e10 / 3, 1e9))


def _reduce(m):
    return 1e-6 + 3e-10 * m if m <= 65536 else 2e-6 + m / 1e9


def _msg(m):
    if m <= 4096:
        return 2e-6 + m / 3e9
    if m <= 65536:
        return 5e-6 + m / 6e9
    return 20e-6 + m / 1e10


def test_segments_include_their_breakpoint():
    assert MODEL.message_s(4096) == pytest.approx(_msg(4096))
    assert MODEL.message_s(4097) == pytest.approx(_msg(4097))
    assert MODEL.message_s(65536) == pytest.approx(_msg(65536))
    assert MODEL.message_s(65537) == pytest.approx(_msg(65537))


@pytest.mark.parametrize("size", [1024, 16384, 2**18, 2**22])
def test_ring_allreduce_on_two_ranks(size):
    # 2 ranks: a reduce-scatter step and an all-gather step, each one message of size/2 each way
    star = Star(nodes=2, model=MODEL)
    s = collsim.build("ring", star, "allreduce", size)
    half = size / 2
    expected = (_msg(half) + _reduce(half)) + _msg(half)   # the first step reduces what it received
    assert loggp_time_s(s) == pytest.approx(expected, rel=1e-12)
    assert collsim.evaluate(s).alpha_beta_time_s == pytest.approx(expected, rel=1e-12)
    assert simulate(s).total_time_s == pytest.approx(expected, rel=1e-12)


def test_recursive_doubling_allgather_on_four_ranks():
    star = Star(nodes=4, model=MODEL)
    s = collsim.build("recursive-doubling", star, "allgather", 3000)   # 3000 B, then 6000 B: two segments
    assert loggp_step_times_s(s).tolist() == pytest.approx([_msg(3000), _msg(6000)])


def test_copies_are_charged_only_when_asked():
    star = Star(nodes=2, model=model_from({**MODEL.to_dict(), "charge_copies": True}))
    s = collsim.build("ring", star, "allgather", 1000)
    assert loggp_time_s(s) == pytest.approx(_msg(1000) + 1e-6 + 1e-10 * 1000)
    plain = collsim.build("ring", Star(nodes=2, model=MODEL), "allgather", 1000)
    assert loggp_time_s(plain) == pytest.approx(_msg(1000))


def test_overhead_charges_the_messages_beyond_one_send_and_one_receive():
    # binomial broadcast from 0 on 4 ranks: round 0 sends 0 -> 2, round 1 sends 0 -> 1 and 2 -> 3 (one post each)
    # pairwise all-to-all posts one send and one receive per rank per step: no overhead either.  Bruck
    # all-to-all likewise.  A direct scatter would post N - 1 sends from the root in one step.
    star = Star(nodes=4, model=MODEL)
    s = collsim.build("binomial", star, "broadcast", 1000)
    assert loggp_time_s(s) == pytest.approx(2 * _msg(1000))
    from collsim.core.collective import make_collective
    from collsim.core.schedule import LogicalBuilder
    import numpy as np

    from collsim.pipeline import realize
    b = LogicalBuilder(make_collective("scatter", 4, 1000, root=0))
    b.add(0, np.array([0, 0, 0]), np.array([1, 2, 3]), np.array([[1], [2], [3]]))
    sched = realize(star, b.build(), algorithm="direct-scatter")
    # the root posts 3 sends: 1 beyond the pair that was measured -> + o
    assert loggp_time_s(sched) == pytest.approx(_msg(1000) + 5e-7)


def test_flow_simulator_adds_contention_on_top_of_the_model():
    # the root's three simultaneous sends share its one link: the simulator is slower than the closed form
    star = Star(nodes=4, link_bandwidth_bytes_per_s=1e10, model=MODEL)
    from collsim.core.collective import make_collective
    from collsim.core.schedule import LogicalBuilder
    import numpy as np

    from collsim.pipeline import realize
    b = LogicalBuilder(make_collective("scatter", 4, 2**20, root=0))
    b.add(0, np.array([0, 0, 0]), np.array([1, 2, 3]), np.array([[1], [2], [3]]))
    sched = realize(star, b.build(), algorithm="direct-scatter")
    closed = loggp_time_s(sched)
    sim = simulate(sched, check=False).total_time_s
    # alone, a 1 MiB flow takes 20 us + 2**20 / 10 GB/s; three sharing the root's link take three times the bytes
    assert closed == pytest.approx(20e-6 + 2**20 / 1e10 + 5e-7)
    assert sim == pytest.approx(20e-6 + 3 * 2**20 / 1e10 + 5e-7)


def test_model_round_trips_through_toml_and_schedule_files(tmp_path):
    path = tmp_path / "host.toml"
    lines = ["[system]", 'kind = "star"', "nodes = 2", "link_bandwidth_bytes_per_s = 1e10", "link_latency_s = 4e-7",
             "", "[system.model]", 'model = "loggp-piecewise"', "breakpoints_bytes = [4096, 65536]",
             "alpha_s = [2e-6, 5e-6, 20e-6]", "beta_bytes_per_s = [3e9, 6e9, 1e10]", "overhead_s = 5e-7",
             "copy_s = [1e-6]", "copy_bytes_per_s = [1e10]", "reduce_breakpoints_bytes = [65536]",
             "reduce_s = [1e-6, 2e-6]", f"reduce_bytes_per_s = [{1e10 / 3!r}, 1e9]"]
    path.write_text("\n".join(lines) + "\n")
    star = load_system(str(path))
    assert star.model == MODEL
    s = collsim.build("ring", star, "allreduce", 4096)
    collsim.save(s, tmp_path / "s.json")
    back = collsim.load(tmp_path / "s.json")
    assert back.system == star and json.loads((tmp_path / "s.json").read_text())
    assert "model" not in Star(nodes=2).describe()   # a plain star describes itself as before


@pytest.mark.parametrize("bad, words", [
    ({"model": "loggp", "breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [1e9]}, "unknown communication"),
    ({"breakpoints_bytes": [4096], "alpha_s": [1e-6], "beta_bytes_per_s": [1e9]}, "1 breakpoints need 2"),
    ({"breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [0]}, "positive"),
    ({"breakpoints_bytes": [8, 4], "alpha_s": [1e-6] * 3, "beta_bytes_per_s": [1e9] * 3}, "ascending"),
    ({"breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [1e9], "gamma": 1}, "unknown key 'gamma'"),
    ({"alpha_s": [1e-6], "beta_bytes_per_s": [1e9]}, "needs breakpoints_bytes"),
    ({"breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [1e9], "overhead_s": -1}, "non-negative"),
    ({"breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [1e9], "reduce_s": [1e-6, 1e-6]},
     "0 reduce_breakpoints need 1"),
    ({"breakpoints_bytes": [], "alpha_s": [1e-6], "beta_bytes_per_s": [float("inf")]}, "finite"),
])
def test_bad_models_are_refused(bad, words):
    with pytest.raises(InputError, match=words):
        model_from(bad)
