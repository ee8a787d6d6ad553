"""Speed of the Monopoly engine: kernel rolls per second against plain Python,
and exact solve times.

    python benchmarks/monopoly.py [--turns 4000000] [--json]

The plain-Python figure runs the very same kernel with NUMBA_DISABLE_JIT=1 in a
subprocess (tests/core/monopoly/test_simulate.py proves both give the same
arrays), so the two numbers measure the same rules.  Single core: one process,
no parallel loops.  The machine is shared: run it on an idle machine and take
the best of a few repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

VARIANTS = {
    "per_roll/independent/short": {"tally": "per_roll"},
    "per_landing/shuffled_cycle/long": {
        "tally": "per_landing", "deck_policy": "shuffled_cycle", "jail_strategy": "long"},
}

_TIMED = """
import json, sys, time
from boardsweep.core.monopoly.rules import Rules
from boardsweep.core.monopoly.simulate import simulate_rules
params, turns, repeats = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rules = Rules(**params)
simulate_rules(rules, 0, 1, 1, 100)  # compile (or load the cache)
best = 0.0
for r in range(repeats):
    t0 = time.perf_counter()
    out = simulate_rules(rules, r, 4, 1, turns)
    best = max(best, out["rolls"][-1] / (time.perf_counter() - t0))
print(best)
"""


def rolls_per_second(params: dict, turns: int, repeats: int, jit: bool) -> float:
    """Best rolls per second of ``repeats`` runs of 4 games x ``turns`` turns."""
    env = dict(os.environ)
    if not jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    out = subprocess.run([sys.executable, "-c", _TIMED, json.dumps(params), str(turns),
                          str(repeats)], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def exact_times() -> dict[str, float]:
    from boardsweep.core.monopoly.cards import CHANCE_DECKS, COMMUNITY_CHEST_DECK
    from boardsweep.core.monopoly.exact import build_chain, long_run_frequency
    from boardsweep.core.markov import stationary
    from boardsweep.core.monopoly.rules import Rules

    long_run_frequency(Rules(dice_sides=5))  # warm imports
    t0 = time.perf_counter()
    stationary(build_chain(Rules(dice_sides=6)).P)
    small = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    orders = (rng.permutation(COMMUNITY_CHEST_DECK), rng.permutation(CHANCE_DECKS["standard"]))
    t0 = time.perf_counter()
    stationary(build_chain(Rules(deck_policy="shuffled_cycle"), orders).P)
    large = time.perf_counter() - t0
    return {"exact_121_states_s": small, "exact_fixed_order_31k_states_s": large}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=4_000_000, help="turns per game (4 games)")
    parser.add_argument("--python-turns", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report: dict[str, float] = {}
    for name, params in VARIANTS.items():
        fast = rolls_per_second(params, args.turns, args.repeats, jit=True)
        slow = rolls_per_second(params, args.python_turns, 1, jit=False)
        report[f"{name}: numba rolls/s"] = fast
        report[f"{name}: python rolls/s"] = slow
        report[f"{name}: speed-up"] = fast / slow
    report.update(exact_times())
    report["load_average_1min"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key:48s} {value:14,.4g}")


if __name__ == "__main__":
    main()
