"""``run --dry-run``: planned from the game's cost model without compiling
anything (it compiled kernels to time them, 32 s on a fresh install), as
lines or JSON, and a game without a model timed as the run's calibration
times it, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from clirun import run_cli
from specs import spec_toml

SPEC = spec_toml("monopoly", name="planned", grid={"dice_sides": [4, 6], "deck_policy": ["independent",
                 "shuffled_cycle"]}, run={"replicates": 4, "games": 2, "turns": 5000}, checkpoints={"count": 3})

#: Runs the dry run in a fresh process whose numba cache is an empty folder, then
#: prints every numba dispatcher that holds a compiled overload.
NO_COMPILE = """
import gc, sys
from boardsweep.pipeline.cli.commands import main
try:
    main(["run", sys.argv[1], "--store", sys.argv[2], "--dry-run", "--workers", "2"])
except SystemExit as exc:
    assert not exc.code, exc.code
from numba.core.dispatcher import Dispatcher
print("COMPILED", [d.py_func.__qualname__ for d in gc.get_objects() if isinstance(d, Dispatcher) and d.overloads])
"""


def test_the_dry_run_compiles_nothing_and_runs_no_kernel(tmp_path, write_spec):
    path = write_spec(SPEC)
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", NO_COMPILE, str(path), str(tmp_path / "p.zarr")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "COMPILED []" in out.stdout, out.stdout
    assert "from game 'monopoly''s cost model" in out.stdout and "nothing run" in out.stdout, out.stdout
    assert "plus compiling 3 units of numba code first (not in numba's cache yet" in out.stdout  # the cache is empty
    assert [p for p in cache.rglob("*") if p.is_file()] == []  # nothing compiled into the cache either (folders: numba probing it)
    assert not (tmp_path / "p.zarr").exists()


def test_the_plan_as_json_holds_what_the_lines_say(tmp_path, write_spec, capsys):
    path = write_spec(SPEC)
    store = str(tmp_path / "p.zarr")
    assert run_cli("run", str(path), "--store", store, "--dry-run", "--workers", "2", "--format", "json") == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["grid"] == {"points": 4, "axes": {"dice_sides": 2, "deck_policy": 2}}
    assert plan["store"]["state"] == "new" and plan["replicates"] == 4
    assert plan["tasks"]["simulation"] * plan["tasks"]["replicates_per_task"] == 16
    timed = plan["time"]
    assert timed["source"] == "model" and timed["workers"] == 2
    assert timed["wall_s"] > timed["startup_s"] > 0 and timed["kernel_s"] > 0
    assert run_cli("run", str(path), "--store", store, "--dry-run", "--workers", "2") == 0
    text = capsys.readouterr().out
    assert f"{plan['tasks']['simulation']} simulation tasks of up to {plan['tasks']['words']}" in text, text
    assert not (tmp_path / "p.zarr").exists()


def test_a_game_without_a_cost_model_is_timed_here_and_says_so(tmp_path, toy_spec_text, write_spec, capsys):
    path = write_spec(toy_spec_text)
    assert run_cli("run", str(path), "--store", str(tmp_path / "t.zarr"), "--dry-run", "--format", "json") == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["time"]["source"] == "timed" and plan["time"]["points_priced"] == 3  # the first, middle and last of 4
    assert run_cli("run", str(path), "--store", str(tmp_path / "t.zarr"), "--dry-run") == 0
    assert "game 'toy' has no cost model: one replicate timed here at 3 grid points" in capsys.readouterr().out
