"""Fit the dry run's cost model (``pipeline/plan/costs.json``) on the real kernels.

For each shipped game, one replicate is simulated at every combination of its
cost keys (the rule variants whose kernels differ in speed), warm (a first
call compiles or loads the kernel and builds the variant's tables), at a size
of some tens of milliseconds, and its thread CPU time over its units of work is the seconds per unit the model tabulates,
:math:`c(k) = (t - t_0) / \\prod_u s_u` (:math:`t_0`, a replicate of 1 game of
1 turn: the call's own cost; the checkpoints' cost, measured apart on a
short game, taken off too: with 11 checkpoints a game of 150 turns costs
twice what it costs with 4), the smallest of ``--repeat`` timings.
Monopoly's checkpoint costs per game and per tally (a checkpoint adds the
game's histogram of tally codes: per landing twice as wide as per roll) and
per number of games (past the 32 lanes, games recycle lanes and reach their
checkpoints apart: 1.5x a checkpoint's cost at 1,000 games against 32), so it
is measured at each tally and number of games (``checkpoint_keys``).

The pipeline's own costs are fitted apart, from real runs of the embedded
cluster (``run_sweep``) on a game whose kernel takes almost nothing (Shut the
Box, 1 game a replicate): a run of 1 task gives the start-up :math:`S`, a run of
:math:`T` one-point tasks on :math:`W` workers gives the cost per task
:math:`(\\text{wall} - S) W / T`.  Exact solves are timed by the game's own
``exact`` at one point.

Run it after changing a kernel (a minute or two on 2 cores) and commit the
file; it prints what it wrote.  Usage::

    python benchmarks/fit_costs.py [--repeat 2] [--out pipeline/plan/costs.json] [--games monopoly ...]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from boardsweep.pipeline.plan.cost import CostModel, checkpoint_seconds

ROOT = Path(__file__).resolve().parent.parent

#: Per game: its units of work, its cost keys with the values measured, the
#: rest of its parameters and run shape for the timing (sized for ~10-100 ms).
#: Monopoly's kernel plays its games side by side: a turn of 1 game costs
#: about twice a turn of 2 or more (1.2e-8 s against 5-6e-9 s at 2-32 games),
#: and a short game its set-up, so the games and the turns are keys too; past its
#: 32 lanes a game takes the lane another left, the lanes no longer end their
#: games together, and a short game's turn costs 1.3x (256 games: 1,000 cost the same).
GAMES = {
    "monopoly": {
        "units": ["games", "players", "turns"],
        "keys": {"tally": ["per_roll", "per_landing", "per_turn"], "deck_policy": ["independent", "shuffled_cycle"],
                 "jail_strategy": ["short", "long"], "dice_sides": [4, 6, 8], "players": [1, 2, 4],
                 "games": [1, 2, 32, 256], "turns": [150, 100_000]},
        "shape": {}, "checkpoint_shape": {"players": 2, "turns": 150}, "checkpoint_units": ["games"],
        "checkpoint_keys": {"tally": ["per_roll", "per_landing", "per_turn"], "games": [1, 32, 256]},
    },
    "hk_monopoly": {
        "units": ["games", "rounds", "players"],
        "keys": {"buy_policy": ["always", "reserve:300", "never"], "jail_strategy": ["short", "long"],
                 "players": [2, 4, 6], "dice_sides": [4, 6]},
        "shape": {"games": 2000}, "checkpoint_shape": {"games": 200},
    },
    "shut_the_box": {
        "units": ["games"],
        "keys": {"policy": ["optimal", "greedy", "random"], "dice_sides": [2, 3, 4, 5, 6, 7, 8]},
        "shape": {"games": 2000}, "checkpoint_shape": {"games": 2000},
    },
}


def _cpu() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        return platform.processor() or platform.machine()


def _call_s(game, repeat: int) -> float:
    """Seconds of a replicate that does (almost) no work: the kernel's call, its
    arrays and checkpoints (thread CPU time of 1 game of 1 turn or round, the smallest of ``repeat``)."""
    params = game.resolve_params({"rounds": 1} if "rounds" in {p.name for p in game.params} else {})
    run_shape = game.resolve_run_shape({k: 1 for k in game.run_shape})
    checkpoints = game.default_checkpoints(run_shape, 1)
    game.simulate(params, 1, run_shape, checkpoints)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        for c in range(200):
            game.simulate(params, 2 + c, run_shape, checkpoints)
        best = min(best, (time.thread_time() - t0) / 200)
    return best


def _checkpoint_s(game, shape: dict, per: list[str], repeat: int, params: dict | None = None) -> float:
    """Seconds a checkpoint costs per unit of ``per`` (a replicate of ``shape``
    at ``params`` with 12 checkpoints against 2): :math:`d = (t_{12} - t_2) / (10 \\prod_v s_v)`."""
    params = game.resolve_params(params or {})
    run_shape = game.resolve_run_shape({k: v for k, v in shape.items() if k in game.run_shape})
    seconds = []
    for count in (2, 12):
        checkpoints = game.default_checkpoints(run_shape, count)
        game.simulate(params, 1, run_shape, checkpoints)
        best = float("inf")
        for r in range(repeat):
            t0 = time.thread_time()
            for c in range(20):
                game.simulate(params, 2 + r * 20 + c, run_shape, checkpoints)
            best = min(best, (time.thread_time() - t0) / 20)
        seconds.append(best)
    merged = {**run_shape, **params}
    return max(seconds[1] - seconds[0], 0.0) / 10 / float(np.prod([merged[u] for u in per] or [1]))


def _per_unit(game, params: dict, shape: dict, units: list[str], repeat: int, call_s: float = 0.0,
              checkpoint: CostModel | None = None) -> float:
    """Seconds per unit of work of one warm replicate at ``params``, its call
    apart (thread CPU time, the smallest of ``repeat``): :math:`(t - t_0) / \\prod_u s_u`."""
    params = game.resolve_params(params)
    run_shape = game.resolve_run_shape({k: v for k, v in shape.items() if k in game.run_shape})
    checkpoints = game.default_checkpoints(run_shape, 4)
    game.simulate(params, 1, run_shape, checkpoints)  # compiles or loads the kernel, builds the variant's tables
    t0 = time.thread_time()
    game.simulate(params, 2, run_shape, checkpoints)
    calls = max(1, int(0.02 / max(time.thread_time() - t0, 1e-6)))  # calls enough for some 20 ms
    best = float("inf")
    for r in range(repeat):
        t0 = time.thread_time()
        for c in range(calls):
            game.simulate(params, 3 + r * calls + c, run_shape, checkpoints)
        best = min(best, (time.thread_time() - t0) / calls)
    merged = {**run_shape, **params}
    fixed = call_s + (checkpoint_seconds(checkpoint, merged) * len(checkpoints) if checkpoint is not None else 0.0)
    return max(best - fixed, best / 10) / float(np.prod([merged[u] for u in units]))


def fit_game(name: str, repeat: int) -> dict:
    """The cost model of game ``name`` (:data:`GAMES`), measured here."""
    from boardsweep.core.games import get_game

    game, how = get_game(name), GAMES[name]
    keys = list(how["keys"])
    shape = {k: v for k, v in how["shape"].items()}
    rows, call_s = [], _call_s(game, repeat)
    checkpoint = _checkpoint_model(game, how, repeat)
    for values in itertools.product(*how["keys"].values()):
        chosen = dict(zip(keys, values))
        here = {**shape, **{k: v for k, v in chosen.items() if k in game.run_shape}}
        params = {k: v for k, v in chosen.items() if k not in game.run_shape}
        rows.append([*values, _per_unit(game, params, here, how["units"], repeat, call_s, checkpoint)])
    params = game.resolve_params({})
    run_shape = game.resolve_run_shape({k: v for k, v in shape.items() if k in game.run_shape})
    exact_s = 0.0
    if game.exact is not None:
        game.exact(params, run_shape, game.default_checkpoints(run_shape, 8))  # compiles or loads
        t0 = time.thread_time()
        game.exact(params, run_shape, game.default_checkpoints(run_shape, 8))
        exact_s = time.thread_time() - t0
    rows = [[*row[:-1], float(f"{row[-1]:.4g}")] for row in rows]
    entry = {"units": how["units"], "keys": keys, "call_s": float(f"{call_s:.4g}"), "exact_s": float(f"{exact_s:.4g}"),
             "checkpoint_units": list(checkpoint.checkpoint_units), "checkpoint_s": float(f"{checkpoint.checkpoint_s:.4g}")}
    if checkpoint.checkpoint_keys:
        entry["checkpoint_keys"] = list(checkpoint.checkpoint_keys)
        entry["checkpoint_rows"] = [[*row[:-1], float(f"{row[-1]:.4g}")] for row in checkpoint.checkpoint_rows]
    return {**entry, "rows": rows}


def _checkpoint_model(game, how: dict, repeat: int) -> CostModel:
    """The checkpoints' part of a game's model: :math:`d` per unit of its
    ``checkpoint_units`` (default: the units but the one checkpoints count), one
    number, or one per combination of its ``checkpoint_keys`` (a run-shape key
    sets the replicate's shape, the others its parameters)."""
    per = how.get("checkpoint_units") or [u for u in how["units"] if u != game.checkpoint_of]
    if not how.get("checkpoint_keys"):
        d = _checkpoint_s(game, how["checkpoint_shape"], per, repeat)
        return CostModel((), (), ((0.0,),), checkpoint_s=d, checkpoint_units=tuple(per))
    names, rows = list(how["checkpoint_keys"]), []
    for values in itertools.product(*how["checkpoint_keys"].values()):
        chosen = dict(zip(names, values))
        shape = {**how["checkpoint_shape"], **{k: v for k, v in chosen.items() if k in game.run_shape}}
        params = {k: v for k, v in chosen.items() if k not in game.run_shape}
        rows.append((*values, _checkpoint_s(game, shape, per, repeat, params)))
    mean = sum(r[-1] for r in rows) / len(rows)
    return CostModel((), (), ((0.0,),), checkpoint_s=mean, checkpoint_units=tuple(per),
                     checkpoint_keys=tuple(names), checkpoint_rows=tuple(rows))


def _run_wall(grid: str, replicates: int, workers: int) -> float:
    """Wall seconds of the command ``boardsweep run`` (process start to end) on
    Shut the Box at ``grid``, ``replicates`` one-replicate tasks of 1 game per point, on ``workers``."""
    text = (f'name = "overhead"\ngame = "shut_the_box"\nseed = 1\n{grid}\n[run]\nreplicates = {replicates}\n'
            'games = 1\n[checkpoints]\ncount = 1\n[tasks]\nreplicates_per_task = 1\n')
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "o.toml").write_text(text)
        t0 = time.perf_counter()
        subprocess.run([str(Path(sys.executable).with_name("boardsweep")), "run", f"{tmp}/o.toml", "--store",
                        f"{tmp}/o.zarr", "--workers", str(workers)], check=True, capture_output=True)
        return time.perf_counter() - t0


def fit_pipeline(workers: int, exact_s: float) -> dict:
    """:class:`cost.Overheads` measured here by real runs (see the module docstring):
    1 task, then 180 (15 points x 12 replicates; the 14 more exact solves taken
    off), the fastest of 3 and 2 runs (on a shared machine, the least disturbed)."""
    start = min(_run_wall("[params]\ndice_sides = 2", 1, workers) for _ in range(3))
    wall = min(_run_wall('[grid]\ndice_sides = [2, 3, 4, 5, 6]\npolicy = ["optimal", "greedy", "random"]', 12, workers)
               for _ in range(2))
    tasks = 15 * 12
    per_task = max(wall - start - 14 * exact_s / workers, 0.0) * workers / (tasks - 1)
    return {"startup_s": round(start, 2), "task_s": round(per_task, 4), "point_s": 0.0, "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "pipeline" / "plan" / "costs.json"))
    parser.add_argument("--games-only", action="store_true", help="keep the file's pipeline costs")
    parser.add_argument("--pipeline-only", action="store_true", help="keep the file's games")
    parser.add_argument("--games", nargs="+", choices=sorted(GAMES), default=sorted(GAMES),
                        help="fit these games only, keep the file's others (with --games-only: its pipeline too)")
    args = parser.parse_args()
    old = json.loads(Path(args.out).read_text()) if Path(args.out).exists() else {}
    table = {"fitted": {"cpu": _cpu(), "date": datetime.date.today().isoformat(),
                        "load": round(os.getloadavg()[0], 2), "by": "benchmarks/fit_costs.py"},
             "pipeline": old.get("pipeline"), "games": dict(old.get("games", {}))}
    for name in () if args.pipeline_only else args.games:
        t0 = time.perf_counter()
        table["games"][name] = fit_game(name, args.repeat)
        print(f"{name}: {len(table['games'][name]['rows'])} variants in {time.perf_counter() - t0:.0f} s")
    if not args.games_only or table["pipeline"] is None:
        table["pipeline"] = fit_pipeline(args.workers, table["games"]["shut_the_box"]["exact_s"])
    Path(args.out).write_text(json.dumps(table, indent=1) + "\n")
    print(json.dumps({"fitted": table["fitted"], "pipeline": table["pipeline"]}, indent=1))


if __name__ == "__main__":
    main()
