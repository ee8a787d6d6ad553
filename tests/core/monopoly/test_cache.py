"""Every Dask worker is a new process: the Monopoly kernel must come from
numba's disk cache there, not be compiled again (6-8 s per variant when a
jitted closure's cache key changed from process to process)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

RUN = """
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules
simulate_rules(Rules(dice_sides=6, deck_policy="shuffled_cycle", tally="per_landing"), 0, 2, 2, 50)
simulate_rules(Rules(dice_sides=4), 0, 1, 1, 50)
"""


def _run(debug: bool) -> str:
    env = {**os.environ, "NUMBA_DEBUG_CACHE": "1" if debug else "0"}
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, check=True)
    return out.stdout + out.stderr


def test_a_new_process_loads_the_kernel_from_the_cache():
    _run(debug=False)  # compiles and saves whatever is not cached yet
    log = _run(debug=True)
    loaded = [line for line in log.splitlines() if "data loaded" in line and "kernel" in line]
    saved = [line for line in log.splitlines() if "data saved" in line]
    assert any("run_kernel" in line for line in loaded), log[-2000:]
    assert saved == [], saved


FIRST_RUN = """
import json
from numba.core import event
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules

compiled, within = [], []

class Listener(event.Listener):
    def on_start(self, ev):
        within.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        compiled.append((within.pop(), list(within)))

event.register("numba:compile", Listener())
for deck in ("independent", "shuffled_cycle"):
    simulate_rules(Rules(dice_sides=6, deck_policy=deck), 0, 40, 1, 50)
print(json.dumps(compiled))
"""


@pytest.mark.slow
def test_a_first_run_compiles_each_helper_once_and_no_table_allocations(tmp_path):
    """Issue 44: an empty cache, both deck policies (more than 32 games: lanes
    retire and restart).  Each helper of the kernel compiles for int64 lanes
    only (a literal lane 0 compiled ``_start`` again), every function for one
    signature (two processes compiling at once then write alike), and
    the tables' builders compile no numba allocation of their own (numpy
    makes their arrays: about 0.1 s of a first run for each)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    out = subprocess.run([sys.executable, "-c", FIRST_RUN], capture_output=True, text=True, env=env, check=True)
    compiled = json.loads(out.stdout.splitlines()[-1])
    names = [name for name, _ in compiled]
    assert names.count("_start") == 1 and "_swap_rows" not in names, names  # rows swapped by loops, inlined
    assert sorted(n for n in names if n.startswith("run_kernel")) == [
        "run_kernel.<locals>._run_independent_one_direct", "run_kernel.<locals>._run_shuffled_one_direct"], names
    assert all(names.count(name) == 1 for name in names if not name.startswith("ol_")), names  # one signature each
    tables = [name for name, outer in compiled if {"_throw_keys", "_landing_rows"} & set(outer)]
    assert not [name for name in tables if name.startswith("ol_") or "allocate" in name], tables


UNITS = """
import json, sys
import numpy as np
from numba.core import event
from boardsweep.core.monopoly.kernel import compile_code, compiled_code
from boardsweep.core.monopoly.simulate import simulate

POINTS = [({"dice_sides": 6, "deck_policy": "independent"}, 1), ({"dice_sides": 12, "deck_policy": "shuffled_cycle"}, 2)]
found = [compiled_code(params, {"players": players}) for params, players in POINTS]
if sys.argv[1] == "compile":
    for unit in dict.fromkeys(unit for units in found for unit in units):
        compile_code(unit)
    print(json.dumps([sorted(map(list, units.items())) for units in found]))
    sys.exit()
compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass

event.register("numba:compile", Listener())
for params, players in POINTS:
    simulate(params, 1, {"games": 40, "players": players, "turns": 50}, np.array([10, 50]))
print(json.dumps({"cached": [all(units.values()) for units in found], "compiled": compiled}))
"""


@pytest.mark.slow
def test_compiling_a_points_units_leaves_nothing_to_compile(tmp_path):
    """Issue 44: ``compile_code`` of every unit ``compiled_code`` names
    compiles what a simulation runs, for its very argument types: a new
    process then finds all of it cached and compiles nothing (both deck
    policies, dice with and without a column per pair, one and two players).
    Each kernel variant has cache files of its own, and every cached function
    one entry (one signature): processes compiling different variants at once
    never rewrite one index."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    first = subprocess.run([sys.executable, "-c", UNITS, "compile"], capture_output=True, text=True, env=env,
                           check=True)
    before = json.loads(first.stdout.splitlines()[-1])
    assert [[cached for _, cached in units] for units in before] == [[False, False], [False, False]], before
    second = subprocess.run([sys.executable, "-c", UNITS, "simulate"], capture_output=True, text=True, env=env,
                            check=True)
    after = json.loads(second.stdout.splitlines()[-1])
    assert after == {"cached": [True, True], "compiled": []}, after
    indexes = list((tmp_path / "numba-cache").rglob("*.nbi"))
    kernels = sorted(path.name.split("-")[0] for path in indexes if "run_kernel" in path.name)
    assert kernels == ["kernel.run_kernel.locals._run_independent_one_direct",
                       "kernel.run_kernel.locals._run_shuffled_several_columns"], kernels
    for path in indexes:
        with open(path, "rb") as f:
            pickle.load(f)  # numba's version
            _, overloads = pickle.loads(f.read())
        assert len(overloads) == 1, (path.name, list(overloads))
