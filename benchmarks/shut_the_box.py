"""Benchmark Shut the Box: exact solve times and Monte Carlo games per second.

Run: ``python benchmarks/shut_the_box.py``.  Prints

* the optimal-policy solve time (policy iteration, cold ``lru_cache``, JIT
  already compiled) for n = 6 and n = 8, with the expected rolls;
* games per second on one core for the numba kernel and for the very same
  kernel run as plain Python (a subprocess with ``NUMBA_DISABLE_JIT=1``, on
  fewer games), for each policy at n = 6, checking that both give the same
  rolls for the same seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from boardsweep.core.shut_the_box import solve
from boardsweep.core.shut_the_box.simulate import simulate_rolls

_CHILD = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from boardsweep.core.shut_the_box.simulate import simulate_rolls
n, policy, games = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
table = np.load(sys.argv[4]) if policy == "optimal" else None
t = time.perf_counter()
out = simulate_rolls(n, policy, 2024, np.array([games]), table)
print(json.dumps({"seconds": time.perf_counter() - t, "rolls_sum": int(out["rolls_sum"][-1])}))
"""


def time_solve(n: int) -> tuple[float, float]:
    """Seconds for a cold optimal solve of ``n`` and the value at the start."""
    solve.solve_optimal.cache_clear()
    t = time.perf_counter()
    value = solve.solve_optimal(n).value[0]
    return time.perf_counter() - t, value


def numba_rate(n: int, policy: str, games: int) -> tuple[float, int]:
    """Games per second of the compiled kernel and the rolls of the first ``games // 10`` games."""
    table = solve.solve_optimal(n).policy if policy == "optimal" else None
    simulate_rolls(n, policy, 0, np.array([10]), table)  # compile or load the cache
    t = time.perf_counter()
    out = simulate_rolls(n, policy, 2024, np.array([games // 10, games]), table)
    return games / (time.perf_counter() - t), int(out["rolls_sum"][0])


def python_rate(n: int, policy: str, games: int) -> tuple[float, int]:
    """Games per second of the same kernel interpreted by Python (NUMBA_DISABLE_JIT=1)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "table.npy")
        np.save(path, solve.solve_optimal(n).policy)
        res = subprocess.run(
            [sys.executable, "-c", _CHILD, str(n), policy, str(games), path],
            env=env, capture_output=True, text=True, check=True,
        )
    out = json.loads(res.stdout.strip().splitlines()[-1])
    return games / out["seconds"], out["rolls_sum"]


def main() -> None:
    solve.solve_optimal(2)  # JIT warm-up
    for n in (6, 8):
        seconds, value = time_solve(n)
        print(f"exact optimal solve n={n}: {seconds:.3f} s  (E[rolls] = {value:.6f})")
    n = 6
    for policy in solve.POLICIES:
        games = 50_000 if policy != "random" else 500
        fast, fast_rolls = numba_rate(n, policy, games)
        slow, slow_rolls = python_rate(n, policy, games // 10)  # first games // 10 games
        same = "same rolls" if fast_rolls == slow_rolls else "DIFFERENT rolls"
        print(
            f"simulate n={n} {policy:8s}: numba {fast:12,.0f} games/s, "
            f"plain Python {slow:9,.1f} games/s, speed-up x{fast / slow:,.0f} ({same})"
        )


if __name__ == "__main__":
    main()
