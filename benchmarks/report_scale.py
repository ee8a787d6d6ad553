"""``boardsweep report`` of a large grid, beside the previous code (issue 57): seconds and bytes written.

Run: ``python benchmarks/report_scale.py [--points 10000 100000] [--old /work/main/.venv/bin/boardsweep]
[--old-below 500000]``.
For each size it runs the money-game grid of :mod:`sweep_million` (``dice_sides`` x ``jail_strategy``
x a fine ``buy_policy`` reserve axis, 5 rounds, 1 replicate) into a temporary store, then times
``boardsweep report`` on that one store with the old code (``--old``: another install's command)
and with this checkout's, each a new process into its own folder, and prints per size: wall and
CPU seconds, the bytes of the report folder and of its ``summary.json``, beside the goal
(:data:`GOAL_S`, :data:`GOAL_BYTES` at 10^6 points).  The CPU model and load are printed first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import timed  # noqa: E402
from sweep_million import cpu_model, points_of, spec_text, uptime  # noqa: E402

#: The issue's goal for ``report`` at 10^6 points: seconds and bytes written.
GOAL_S, GOAL_BYTES = 60.0, 50e6


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes of every file in ``folder``, bytes of its summary.json)."""
    total = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    summary = folder / "summary.json"
    return total, summary.stat().st_size if summary.exists() else 0


def report(command: list[str], store: str, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``command report STORE --out OUT -q`` (it must succeed)."""
    return timed([*command, "report", store, "--out", str(out), "-q"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--old", default="/work/main/.venv/bin/boardsweep", help="the previous code's command")
    parser.add_argument("--old-below", type=int, default=500_000,
                        help="run the old code only on grids smaller than this (9 min at 10^6 on an idle machine)")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; {uptime()}")
    print(f"goal at 10^6 points: {GOAL_S:.0f} s, {GOAL_BYTES / 1e6:.0f} MB written")
    new = [sys.executable, "-m", "boardsweep"]
    with tempfile.TemporaryDirectory() as tmp:
        for points in args.points:
            spec, store = Path(tmp) / f"r{points}.toml", str(Path(tmp) / f"r{points}.zarr")
            spec.write_text(spec_text(points, f"r{points}", {"points_per_task": 2000}))
            t0 = time.perf_counter()
            subprocess.run([*new, "run", str(spec), "--store", store, "-q"], check=True, stdout=subprocess.DEVNULL)
            print(f"{points_of(points):,} points: store made in {time.perf_counter() - t0:.0f} s")
            for name, command in (("old", [args.old]), ("new", new)):
                if name == "old" and points >= args.old_below:
                    print(f"  old: not run (--old-below {args.old_below:,})")
                    continue
                out = Path(tmp) / f"r{points}.{name}.report"
                wall, cpu = report(command, store, out)
                total, summary = folder_bytes(out)
                print(f"  {name}: {wall:7.1f} s wall, {cpu:7.1f} s CPU, {total / 1e6:9.1f} MB written "
                      f"(summary.json {summary / 1e6:.1f} MB)", flush=True)
            print(f"  ({uptime()})", flush=True)


if __name__ == "__main__":
    main()
