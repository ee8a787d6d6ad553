"""Kernels made ready while a run starts (:mod:`boardsweep.pipeline.run.warm`):
the short runs load or compile the same specialisations the real tasks use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run.warm import COMPILE_CLOCK, warm_kernels
from boardsweep.pipeline.run.warm import warm_points
from specs import spec_toml  # tests/support is on sys.path

SPEC = spec_toml(
    "chutes_ladders", grid={"sides": [4, 6]}, params={"board": "milton_bradley"},
    run={"replicates": 2, "games": 50}, checkpoints={"count": 3}, tasks={"replicates_per_task": 1})


def test_short_runs_leave_nothing_for_the_tasks_to_compile():
    """After the warm-up, a full-size run of every point takes no compiler
    lock in this thread: the short runs used the tasks' specialisations."""
    spec = parse_spec(SPEC, "warm.toml")
    points = [p for _, p in spec.points()]
    warm_kernels(spec.game, spec.seed, points, spec.run_shape, spec.checkpoints, threading.Event())
    before = COMPILE_CLOCK.seconds()
    for params in points:
        out = spec.game.simulate(params, 1, spec.run_shape, spec.checkpoints)
        assert all(len(v) for v in out.values())
    assert COMPILE_CLOCK.seconds() == before


def test_a_stopped_warm_up_runs_nothing():
    spec = parse_spec(SPEC, "warm.toml")
    calls = []
    stop = threading.Event()
    stop.set()
    game = spec.game

    class Counting:  # the game, its simulate counted
        def __getattr__(self, name):
            return getattr(game, name)

        def simulate(self, *args):
            calls.append(args)
            return game.simulate(*args)

    warm_points(Counting(), spec.seed, [p for _, p in spec.points()], spec.run_shape, spec.checkpoints, stop)
    assert calls == []
    warm_points(Counting(), spec.seed, [p for _, p in spec.points()], spec.run_shape, spec.checkpoints)
    assert len(calls) == 2 and all(args[2][game.checkpoint_of] == 4 for args in calls)  # short runs


PARALLEL = """
import json, os, sys, threading
from numba.core import event
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run import startup

compiled, depth = [], threading.local()

class Listener(event.Listener):  # what this process compiles, outermost functions only
    def on_start(self, ev):
        depth.n = getattr(depth, "n", 0) + 1
        if depth.n == 1:
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        depth.n -= 1

event.register("numba:compile", Listener())
spec = parse_spec(sys.stdin.read(), "parallel.toml")
if sys.argv[1:] == ["children-compile-nothing"]:
    spec.game.extras["compile_code"] = len  # picklable, runs, compiles nothing: here and in the children
told = []
warming = startup.WarmUp(spec, lambda: told.append(1))
warming.head_start([])
warming.thread.join()
code = spec.game.extras["compiled_code"]
points = [p for _, p in spec.resolved_points()]
print(json.dumps({"children": [child.returncode for child in warming.compilers._children], "told": len(told),
                  "here": [list(unit) for unit in warming.compilers._here], "compiled": compiled,
                  "cached": all(all(code(p, spec.run_shape).values()) for p in points),
                  "cores": len(os.sched_getaffinity(0))}))
"""


@pytest.mark.slow
def test_a_cold_cache_is_compiled_by_parallel_processes(tmp_path):
    """Issue 44: with an empty numba cache, the warm-up deals the units of
    code missing (the tables' builders, two kernel variants) between this
    process and child processes (one per further core): this process
    compiles only its share, nothing twice, and loads the rest from the cache
    the children wrote; the user is told once that kernels compile."""
    text = spec_toml("monopoly", grid={"deck_policy": ["independent", "shuffled_cycle"], "dice_sides": [4, 6]},
                     run={"replicates": 1, "games": 4, "turns": 100}, checkpoints={"count": 2})
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    out = subprocess.run([sys.executable, "-c", PARALLEL], input=text, capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.splitlines()[-1])
    assert found["cached"] and found["told"] == 1, found
    if found["cores"] < 2:  # one core: everything compiled here, as before
        assert found["children"] == [] and len(set(found["compiled"])) == len(found["compiled"]) == 3, found
        return
    processes = min(3, found["cores"])  # 3 units: one each, this process's the last dealt
    assert found["children"] == [0] * (processes - 1) and len(found["here"]) == 1, found
    kind, shuffled, several, direct = found["here"][0]
    mine = f"run_kernel.<locals>._run_{('independent', 'shuffled')[shuffled]}_one_direct"
    assert kind == "kernel" and not several and direct and found["compiled"] == [mine], found


@pytest.mark.slow
def test_children_that_compile_nothing_leave_it_to_this_process(tmp_path):
    """A child process that does not write the cache (here: its units not
    compiled at all) costs a wait, nothing else: this process then compiles
    each unit where a point needs it, once."""
    text = spec_toml("monopoly", grid={"dice_sides": [4, 6]}, run={"replicates": 1, "games": 4, "turns": 100},
                     checkpoints={"count": 2})
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    out = subprocess.run([sys.executable, "-c", PARALLEL, "children-compile-nothing"], input=text,
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.splitlines()[-1])
    assert found["cached"] and found["told"] == 1, found
    assert found["children"] == ([0] if found["cores"] >= 2 else []), found
    assert sorted(found["compiled"]) == ["_landing_rows", "_throw_keys",
                                         "run_kernel.<locals>._run_independent_one_direct"], found


LOADED_AT_ONCE = """
import json, sys
from boardsweep.core.monopoly.kernel import run_kernel, variant
from boardsweep.core.monopoly.rules import Rules
from boardsweep.pipeline.spec.parse import parse_spec
from boardsweep.pipeline.run import startup

spec = parse_spec(sys.stdin.read(), "loaded.toml")
points = [p for _, p in spec.resolved_points()]
code = spec.game.extras["compiled_code"]
cached = all(all(code(p, spec.run_shape).values()) for p in points)
warming = startup.WarmUp(spec)
loaded = [bool(run_kernel(*variant(Rules.from_params(p), spec.run_shape["players"])).signatures) for p in points]
warming.head_start([])
warming.thread.join()
print(json.dumps({"cached": cached, "loaded": loaded}))
"""


@pytest.mark.slow
def test_kernels_numbas_cache_holds_are_loaded_before_the_warm_up_returns(tmp_path):
    """Issue 44, the warm first run: where numba's cache holds every unit of
    the first points' code, the warm-up loads it in the caller before it
    returns (beside the run's imports, both holding the interpreter lock, it
    took twice as long), so that its thread simulates from the start; with
    code to compile, it returns at once and compiles in its thread."""
    text = spec_toml("monopoly", grid={"deck_policy": ["independent", "shuffled_cycle"]},
                     run={"replicates": 1, "games": 4, "turns": 100}, checkpoints={"count": 2})
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    found = []
    for _ in range(2):  # an empty cache, then the cache the first filled
        out = subprocess.run([sys.executable, "-c", LOADED_AT_ONCE], input=text, capture_output=True, text=True,
                             env=env, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        found.append(json.loads(out.stdout.splitlines()[-1]))
    assert found[0]["cached"] is False and found[0]["loaded"] == [False, False], found
    assert found[1] == {"cached": True, "loaded": [True, True]}, found


def test_a_ctrl_c_while_the_kernels_load_ends_the_load_and_an_exit_is_left_to_the_task():
    """The kernels numba's cache holds load in the command's own thread, where a
    Ctrl-C arrives: it ends the load (CI: swallowed there, it left numba's state
    half-made and every task failed), while a game's ``sys.exit()``, and in the
    warm-up thread any exit, is left for the task at that point to report, as before."""
    from dataclasses import replace

    spec = parse_spec(SPEC, "spec.toml")
    points = [p for _, p in spec.resolved_points()]

    def raising(error):
        def simulate(*args, **kwargs):
            raise error
        return replace(spec.game, simulate=simulate)

    with pytest.raises(KeyboardInterrupt):
        warm_points(raising(KeyboardInterrupt()), spec.seed, points, spec.run_shape, spec.checkpoints)
    warm_points(raising(SystemExit(3)), spec.seed, points, spec.run_shape, spec.checkpoints)  # no exit here
    outcome = []

    def beside() -> None:  # the warm-up thread (no Ctrl-C reaches it): a kernel's KeyboardInterrupt is left to its task
        try:
            warm_points(raising(KeyboardInterrupt()), spec.seed, points, spec.run_shape, spec.checkpoints)
            outcome.append("returned")
        except BaseException as exc:  # noqa: BLE001 - what left it, named
            outcome.append(type(exc).__name__)

    thread = threading.Thread(target=beside)
    thread.start()
    thread.join()
    assert outcome == ["returned"]
