"""Every public entry point of ``collsim`` works as the first call in a fresh interpreter (issue 31).

``collsim.load("x.json")`` once failed unless another call had registered the kinds first
("unknown system kind 'ring'; known: " with an empty list): a lookup below :mod:`collsim.kinds` must
discover the plug-in kinds itself (:func:`collsim.core.plugins.discover`).  Each case here runs in a
new interpreter whose only collsim call is the one under test; objects it needs (a schedule) arrive
as a file or a pickle, never built in that interpreter first.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import pytest

import collsim

# Each public name of collsim._LAZY that can be called, with the first call a user might make and a fact
# about its answer.  SCHEDULE is a path to a schedule file, PICKLE a path to the same schedule pickled
# (ring all-gather on a 4-node ring of electrical links, 1 KiB per node: 3 steps, 12 transfers).
CASES = {
    "build": "s = collsim.build('ring', 'ring', 'allgather', 1024, nodes=4); assert s.num_steps == 3",
    "verify": "assert collsim.verify(SCHEDULE).steps == 3",
    "evaluate": "r = collsim.evaluate(pickle.load(open(PICKLE, 'rb'))); assert r.verified and r.steps == 3",
    "build_symmetric": "s = collsim.build_symmetric('ring', 'paper', 'allreduce', 4096, nodes=8); "
                       "assert s.transfers == 112 and collsim.verify(s).data_flow == 'orbits'",
    "build_repeated": "s = collsim.build_repeated('ring', 'fat-tree', 'allreduce', 4096, nodes=16); "
                      "assert s.transfers == 480 and s.classes == 2 and collsim.verify(s).data_flow == 'orbits'",
    "run": "r = collsim.run('ring', 'ring', 'allgather', 1024); assert r.verified and r.nodes >= 2",
    "schedule_time_s": "assert collsim.schedule_time_s(SCHEDULE) > 0",
    "lower_bound_s": "c = collsim.make_collective('allgather', 4, 1024); "
                     "assert collsim.lower_bound_s('ring', c) > 0",
    "compare": "rows, _ = collsim.compare('ring', 'allgather', '1KiB', nodes=4, algorithms=['ring']); "
               "assert rows[0].verified",
    "simulate": "assert collsim.simulate(pickle.load(open(PICKLE, 'rb'))).total_time_s > 0",
    "synthesize": "out = collsim.synthesize('mesh', 'allgather', '1KiB', system_options={'dims': (2, 2)}); "
                  "assert out.result.verified",
    "load": "assert len(collsim.load(SCHEDULE)) == 12",
    "save": "import os; out = os.path.join(os.path.dirname(SCHEDULE), 'again.json'); "
            "collsim.save(pickle.load(open(PICKLE, 'rb')), out); assert len(collsim.load(out)) == 12",
    "load_system": "assert collsim.load_system('torus', dims=(2, 3)).nodes == 6",
    "OpticalRing": "assert collsim.OpticalRing(nodes=8, wavelengths=2).nodes == 8",
    "make_collective": "assert collsim.make_collective('allgather', 4, 1024).nodes == 4",
}
NOT_CALLED = {  # public names that are classes a user reads or catches (or builds with make_collective)
    "Collective", "Schedule", "SymmetricSchedule", "RepeatedSteps", "Result", "VerifyReport", "SimResult", "Synthesis", "CollsimError", "InputError",
    "UnknownNameError", "UnsupportedError", "ScheduleFormatError", "VerificationError"}


def test_every_public_name_has_a_first_call_case():
    assert set(CASES) | NOT_CALLED == set(collsim._LAZY), "a public name without a fresh-interpreter case"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh")
    sched = collsim.build("ring", "ring", "allgather", 1024, nodes=4)
    collsim.save(sched, folder / "ring.json")
    (folder / "ring.pickle").write_bytes(pickle.dumps(sched))
    return folder


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_public_entry_point_works_as_the_first_call(name, files):
    code = textwrap.dedent(f"""
        import pickle, sys
        import collsim
        SCHEDULE, PICKLE = {str(files / 'ring.json')!r}, {str(files / 'ring.pickle')!r}
        assert not any(m.startswith('collsim.kinds') for m in sys.modules), 'kinds loaded before the call'
        {CASES[name]}
        print('ok')
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
