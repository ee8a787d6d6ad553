"""Every Dask worker is a new process: the Monopoly kernel must come from
numba's disk cache there, not be compiled again (6-8 s per variant when a
jitted closure's cache key changed from process to process)."""

from __future__ import annotations

import os
import subprocess
import sys

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
