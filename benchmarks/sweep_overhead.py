"""Sweep overhead and scaling of ``boardsweep run`` on a 24-point Monopoly grid.

Each task is one replicate of one grid point with about 10^7 dice rolls
(one token, ``--turns`` turns).  For 1 and 2 workers the script times the
whole ``boardsweep run`` command (process start, cluster start, store
creation, exact answers, tasks, summary) and reads the summed kernel time of
the tasks from the run's report.  It prints:

* overhead = 1 - kernel / (workers x wall): the share of the workers' time not
  spent simulating (target < 10% at 2 workers);
* the same with the embedded cluster's start-up excluded (``run_sweep`` wall);
* speed-up = wall(1 worker) / wall(2 workers) (target >= 1.8).

Usage::

    python benchmarks/sweep_overhead.py [--turns 8500000] [--workers 1 2]

The machine's load average is printed too: other processes on the cores
inflate the overhead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
name = "overhead"
game = "monopoly"
seed = 1

[params]
chance_deck = "standard"
tally = "per_roll"

[grid]
dice_sides = [4, 6, 8, 10, 12, 20]
deck_policy = ["independent", "shuffled_cycle"]
jail_strategy = ["short", "long"]

[run]
replicates = {replicates}
games = 1
players = 1
turns = {turns}

[checkpoints]
count = 16

[tasks]
replicates_per_task = 1
"""


def measure(spec: Path, workers: int, tmp: Path) -> dict:
    """Run the sweep once from scratch; return wall and the run's report."""
    store, report = tmp / f"w{workers}.zarr", tmp / f"w{workers}.json"
    command = [sys.executable, "-m", "boardsweep", "run", str(spec), "--store", str(store),
               "--workers", str(workers), "--report-json", str(report)]
    t0 = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(out.stdout + out.stderr)
    data = json.loads(report.read_text())
    data.pop("records")
    data["command_wall_s"] = wall
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=8_500_000, help="turns per task (~1.18 rolls each)")
    parser.add_argument("--replicates", type=int, default=1, help="replicates (tasks) per grid point")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "overhead.toml"
        spec.write_text(SPEC.format(turns=args.turns, replicates=args.replicates))
        for workers in args.workers:
            r = measure(spec, workers, Path(tmp))
            results[workers] = r
            wall, inner, kernel = r["command_wall_s"], r["wall_s"], r["kernel_s"]
            print(
                f"workers={workers}: tasks={r['tasks_run']} command wall {wall:.2f} s, "
                f"run_sweep wall {inner:.2f} s, kernel sum {kernel:.2f} s, writes {r['write_s']:.2f} s | "
                f"overhead {1 - kernel / (workers * wall):.1%} (excl. process+cluster start "
                f"{1 - kernel / (workers * inner):.1%})"
            )
    if 1 in results and 2 in results:
        print(f"speed-up 1 -> 2 workers: {results[1]['command_wall_s'] / results[2]['command_wall_s']:.2f} "
              f"(kernel-only ideal {results[1]['kernel_s'] / max(results[2]['kernel_s'], 1e-9) * 2:.2f})")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
