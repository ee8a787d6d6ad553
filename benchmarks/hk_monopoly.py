"""Speed of the hk_monopoly simulator: games per second on one core (per CPU second).

Plays 4-player, 100-round games with the default strategies (``always`` buy,
``short`` jail) through the numba kernel (single-threaded: one core), after a
warm-up run that compiles or loads the cached kernel.  In the same run, the
same rules are played as plain Python (a subprocess with
``NUMBA_DISABLE_JIT=1``, so every numba function runs as ordinary Python) on
fewer games, and the two runs are checked to agree on those games.

Usage::

    python benchmarks/hk_monopoly.py [--games 200000] [--python-games 300] [--json]

Target: >= 20,000 games per second per core for the numba kernel.  Issue 12
asks for 1.5x the kernel before it (41,500 games/s on this project's AMD EPYC,
AVX2, in another run): the kernel as it was then is frozen in
:mod:`benchmarks.hk_monopoly_previous` and timed beside the current one in the
same run, interleaved repeat by repeat (best of ``--repeats``), on the same
games, whose outputs must agree; the ratio of the two is the figure.  The
machine is shared: pin it (``taskset -c 1``) and compare ratios only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

PARAMS = {"players": 4, "rounds": 100}
SEED = 2024

_CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.filterwarnings("ignore", category=RuntimeWarning)  # uint64 wrap-around in the RNG
sys.path.insert(0, {root!r})
from benchmarks.hk_monopoly import play
games = {games}
start = time.process_time()
sim = play(games)
elapsed = time.process_time() - start
print(json.dumps({{"seconds": elapsed, "landings": sim["landings"][-1].tolist()}}))
"""


def play(games: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """Simulate ``games`` benchmark games and return the game's output arrays."""
    from boardsweep.core.games import get_game

    game = get_game("hk_monopoly")
    params = game.resolve_params(PARAMS)
    return game.simulate(params, seed, {"games": games}, np.array([games], dtype=np.int64))


def _previous_module():
    """:mod:`hk_monopoly_previous`, beside this file (run as a script or imported)."""
    name = "hk_monopoly_previous"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def play_previous(games: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """The same games through the frozen kernel from before issue 12's rewrite."""
    from boardsweep.core.games import get_game
    from boardsweep.core.hk_monopoly.board import load_board
    from boardsweep.core.hk_monopoly.game import parse_chance, seat_table
    from boardsweep.core.hk_monopoly.rules import MAX_SEATS, make_cfg
    from boardsweep.core.hk_monopoly.simulate import OUTPUTS
    from boardsweep.core.rng import seed_key

    previous_kernel = _previous_module().previous_kernel
    params = get_game("hk_monopoly").resolve_params(PARAMS)
    board = load_board(params["board"])
    cfg = make_cfg(params["players"], params["dice_sides"], params["rounds"], board.go, board.jail)
    shape = {"landings": (1, board.table.shape[0] + 1), "turns": 1, "rounds": 1, "games": 1}
    out = {name: np.zeros(shape.get(name, (1, MAX_SEATS)), np.int64) for name in OUTPUTS}
    previous_kernel(seed_key(seed), board.table, cfg, seat_table(params), parse_chance(params["chance"]),
                    np.array([games], dtype=np.int64), [out[name] for name in OUTPUTS])
    return out


def _cpu_seconds(fn, games: int) -> float:
    start = time.process_time()
    fn(games)
    return time.process_time() - start


def numba_rates(games: int, repeats: int) -> tuple[float, float]:
    """Best games per CPU second of the current and of the previous kernel.

    Measured after a warm-up run, interleaved repeat by repeat.  The kernels
    are single-threaded, so games per CPU second is games per second per
    core, and it is not inflated by other processes sharing the machine as
    wall time is.
    """
    play(100)
    play_previous(100)
    new = old = float("inf")
    for _ in range(repeats):
        new = min(new, _cpu_seconds(play, games))
        old = min(old, _cpu_seconds(play_previous, games))
    return games / new, games / old


def cpu_name() -> str:
    """The processor's model name (and AVX2 when it has it), from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        name = next(line.split(":", 1)[1].strip() for line in info.splitlines()
                    if line.startswith("model name"))
        return name + (", AVX2" if " avx2" in info else "")
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def python_rate(games: int) -> tuple[float, float, list[int]]:
    """(games per CPU second, CPU seconds, landings) of the same rules as plain Python."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    code = _CHILD.format(root=root, games=games)
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return games / result["seconds"], result["seconds"], result["landings"]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--python-games", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    fast, previous = numba_rates(args.games, args.repeats)
    slow, slow_s, slow_landings = python_rate(args.python_games)
    same = play(args.python_games)["landings"][-1].tolist() == slow_landings
    new, old = play(args.games // 10), play_previous(args.games // 10)
    same_previous = all(np.array_equal(new[name], old[name]) for name in old)
    report = {
        "config": "hk_monopoly, 4 players, 100 rounds, always/short, 1 core",
        "cpu": cpu_name(), "load_average_1min": os.getloadavg()[0],
        "numba_games": args.games, "repeats": args.repeats, "numba_games_per_cpu_s": fast,
        "previous_games_per_cpu_s": previous, "ratio_to_previous": fast / previous,
        "previous_matches_numba": same_previous,
        "python_games": args.python_games, "python_cpu_seconds": slow_s,
        "python_games_per_cpu_s": slow,
        "speedup": fast / slow, "python_matches_numba": same, "target_games_per_s": 20_000,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['config']}; {report['cpu']}; load {report['load_average_1min']:.1f}")
        print(f"numba   : {fast:12,.0f} games per CPU s  (best of {args.repeats} x {args.games} games)")
        print(f"previous: {previous:12,.0f} games per CPU s  (the kernel before issue 12's rewrite, "
              f"same run; same outputs: {same_previous})")
        print(f"python  : {slow:12,.1f} games per CPU s  ({args.python_games} games in {slow_s:.2f} CPU s)")
        print(f"x{fast / previous:.2f} the previous kernel (issue 12 asks for x1.5); speedup over "
              f"python x{fast / slow:,.0f}; same results on the python games: {same}; "
              f"target >= 20,000 games/s: {'met' if fast >= 20_000 else 'NOT met'}")
    return report


if __name__ == "__main__":
    main()
