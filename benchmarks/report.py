"""Benchmark the report: seconds of ``boardsweep report`` for every shipped sweep.

Run: ``python benchmarks/report.py [NAME ...] [--full] [--repeat N] [--deck-orders]``.  For each
``sweeps/*.toml`` it runs the sweep into a temporary store (with ``--full``
as shipped; by default with its run shape cut to at most 200 games and
5,000 turns per replicate, which keeps every grid, figure and table the
report draws; ``NAME``: only these sweeps), then times ``boardsweep report`` on it as a user runs it (a
new process: imports, reading the store, analysis, figures, page), the best
of ``--repeat`` runs.  ``--deck-orders`` times the opt-in deck-order check
too.  Prints one line per sweep: wall and CPU seconds (on a busy machine the
CPU seconds of this one-thread command estimate an idle machine's wall time)
and whether it is under the goal (:data:`GOAL_S`, 10 s on 2 cores); the
machine's cores and load are printed with it, since a shared machine's
figures vary from run to run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Seconds a shipped sweep's report may take (issue 43).
GOAL_S = 10.0
#: The cut run shape of the default benchmark and of the docs' gallery
#: (``docs/_ext/gallery.py`` reads it from here): at most this many games (or
#: turns) per replicate.
SMALL = {"games": 200, "turns": 5000}


def cut(spec: dict) -> dict:
    """``spec`` (a parsed spec file) with its run shape cut to :data:`SMALL`
    and no ``store`` key: every grid point, axis and headline kept."""
    spec = {**spec, "run": dict(spec.get("run", {}))}
    for key, most in SMALL.items():
        if key in spec["run"]:
            spec["run"][key] = min(int(spec["run"][key]), most)
    spec.pop("store", None)
    return spec


def _overrides(spec: Path, full: bool) -> list[str]:
    """``--set`` items that cut the spec's run shape (none with ``full``)."""
    if full:
        return []
    run = tomllib.loads(spec.read_text()).get("run", {})
    return [f"--set=run.{k}={v}" for k, v in cut({"run": run})["run"].items() if k in SMALL]


def timed(argv: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of the command ``argv`` in a new
    process (it must succeed; its stderr is kept for the error).  On a loaded
    machine the CPU seconds are the better guess of the wall time on an idle
    one: the report is one thread."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _boardsweep(*args: str) -> tuple[float, float]:
    """:func:`timed` of one ``boardsweep`` command run from the repository."""
    return timed([sys.executable, "-m", "boardsweep", *args], cwd=ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="the sweeps to time (default: every sweeps/*.toml)")
    parser.add_argument("--full", action="store_true", help="the shipped run shapes (minutes per sweep)")
    parser.add_argument("--repeat", type=int, default=2, help="report runs per sweep; the best is printed")
    parser.add_argument("--deck-orders", action="store_true", help="also time report --deck-orders")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}; goal: under {GOAL_S:.0f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in sorted((ROOT / "sweeps").glob("*.toml")):
            if args.names and spec.stem not in args.names:
                continue
            store = str(Path(tmp) / f"{spec.stem}.zarr")
            run_s, _ = _boardsweep("run", str(spec), "--store", store, *_overrides(spec, args.full))
            flags = [[]] + ([["--deck-orders"]] if args.deck_orders else [])
            for extra in flags:
                out = str(Path(tmp) / f"{spec.stem}.report")
                wall, cpu = min(_boardsweep("report", store, "--out", out, *extra) for _ in range(args.repeat))
                verdict = "ok" if min(wall, cpu) < GOAL_S or extra else "OVER THE GOAL"
                print(f"{spec.stem:14s} report{' --deck-orders' if extra else '':14s} wall {wall:6.1f} s, "
                      f"CPU {cpu:6.1f} s  (run {run_s:.0f} s, load {os.getloadavg()[0]:.1f})  {verdict}", flush=True)


if __name__ == "__main__":
    main()
