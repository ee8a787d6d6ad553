"""Benchmark the report: seconds of ``boardsweep report`` for every shipped sweep.

Run: ``python benchmarks/report.py [--full] [--repeat N] [--deck-orders]``.  For each
``sweeps/*.toml`` it runs the sweep into a temporary store (with ``--full``
as shipped; by default with its run shape cut to at most 2,000 games and
20,000 turns per replicate, which keeps every grid, figure and table the
report draws), then times ``boardsweep report`` on it as a user runs it (a
new process: imports, reading the store, analysis, figures, page), the best
of ``--repeat`` runs.  ``--deck-orders`` times the opt-in deck-order check
too.  Prints one line per sweep and whether it is under the goal
(:data:`GOAL_S`, 10 s on 2 cores); the machine's cores and load are printed
first, since a shared machine's figures vary from run to run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Seconds a shipped sweep's report may take (issue 43).
GOAL_S = 10.0
#: The cut run shape of the default (not ``--full``) benchmark.
SMALL = {"games": 2000, "turns": 20000}


def _overrides(spec: Path, full: bool) -> list[str]:
    """``--set`` items that cut the spec's run shape (none with ``full``)."""
    if full:
        return []
    run = tomllib.loads(spec.read_text()).get("run", {})
    return [f"--set=run.{k}={min(int(run[k]), most)}" for k, most in SMALL.items() if k in run]


def _boardsweep(*args: str) -> float:
    """Seconds of one ``boardsweep`` command in a new process (it must succeed)."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "boardsweep", *args], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the shipped run shapes (minutes per sweep)")
    parser.add_argument("--repeat", type=int, default=2, help="report runs per sweep; the best is printed")
    parser.add_argument("--deck-orders", action="store_true", help="also time report --deck-orders")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}; goal: under {GOAL_S:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((ROOT / "sweeps").glob("*.toml")):
            store = str(Path(tmp) / f"{spec.stem}.zarr")
            run_s = _boardsweep("run", str(spec), "--store", store, *_overrides(spec, args.full))
            flags = [[]] + ([["--deck-orders"]] if args.deck_orders else [])
            for extra in flags:
                out = str(Path(tmp) / f"{spec.stem}.report")
                best = min(_boardsweep("report", store, "--out", out, *extra) for _ in range(args.repeat))
                verdict = "ok" if best < GOAL_S or extra else "OVER THE GOAL"
                print(f"{spec.stem:14s} report{' --deck-orders' if extra else '':14s} {best:6.1f} s  "
                      f"(run {run_s:.0f} s)  {verdict}", flush=True)


if __name__ == "__main__":
    main()
