"""The pipeline's cost beyond the kernel on a large grid of tiny tasks.

The scenario of the scale issue: Monopoly, dice 2..41 x deck policy x jail x
chance deck x tally = 960 grid points, 4 replicates each, one replicate per
task, 500 turns: 3,840 simulation tasks and 960 exact solves.  The script
times, each as its own process (what a user waits for):

* ``boardsweep run`` from scratch (end to end), with the run's summed kernel
  and write times, and the write overhead per task;
* the same command again on the complete store (nothing to do);
* ``boardsweep status``, ``boardsweep query --sel dice_sides=6``;
* ``open_sweep(store)`` (lazy) and ``load_sweep(store)`` (in memory) then
  frequencies summed over replicates, and the same through plain
  ``xarray.open_zarr``;
* ``boardsweep report``.

``--points`` shrinks the dice axis (``--points 24`` is a 1-dice-value smoke
run); ``--replicates 11`` gives about 10,000 tasks at 960 points.

Usage::

    python benchmarks/sweep_scale.py [--points 960] [--replicates 4] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
name = "scale"
game = "monopoly"
seed = 7

[grid]
dice_sides = {dice}
deck_policy = ["independent", "shuffled_cycle"]
jail_strategy = ["short", "long"]
chance_deck = ["standard", "classic15"]
tally = ["per_roll", "per_landing", "per_turn"]

[run]
replicates = {replicates}
games = 1
players = 1
turns = 500

[checkpoints]
count = 4

[tasks]
replicates_per_task = 1
"""

READ_OPEN_SWEEP = """
import boardsweep
from boardsweep.pipeline.analysis.query import frequencies
ds = boardsweep.open_sweep({store!r})
print(float(frequencies(ds).sum("replicate").sum()))
"""

READ_LOAD_SWEEP = """
import boardsweep
from boardsweep.pipeline.analysis.query import frequencies
ds = boardsweep.load_sweep({store!r})
print(float(frequencies(ds).sum("replicate").sum()))
"""

READ_XARRAY = """
import warnings; warnings.simplefilter("ignore")
import xarray as xr
ds = xr.open_zarr({store!r}{chunks})
print(float((ds["counts"] / ds["counts"].sum("location")).sum("replicate").sum()))
"""


def timed(command: list[str]) -> float:
    """Wall seconds of one command (which must succeed)."""
    t0 = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{out.stdout}{out.stderr}")
    return wall


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=960, help="grid points (a multiple of 24)")
    parser.add_argument("--replicates", type=int, default=4, help="replicates (tasks) per grid point")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-report", action="store_true", help="skip timing `boardsweep report`")
    args = parser.parse_args()
    dice = list(range(2, 2 + max(args.points // 24, 1)))
    py, bs = sys.executable, [sys.executable, "-m", "boardsweep"]
    print(f"CPU: {cpu_name()}; cores: {os.cpu_count()}; load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        spec, store, report = Path(tmp) / "scale.toml", Path(tmp) / "scale.zarr", Path(tmp) / "run.json"
        spec.write_text(SPEC.format(dice=dice, replicates=args.replicates))
        run = [*bs, "run", str(spec), "--store", str(store), "--workers", str(args.workers),
               "--report-json", str(report)]
        rows = [("run, end to end", timed(run))]
        r = json.loads(report.read_text())
        tasks = r["tasks_run"] + r["exact_run"]
        rows.append(("run again, nothing to do", timed(run)))
        rows.append(("status", timed([*bs, "status", str(store)])))
        rows.append(("query --sel dice_sides=6", timed([*bs, "query", str(store), "--sel", "dice_sides=6"])))
        rows.append(("open_sweep + frequencies", timed([py, "-c", READ_OPEN_SWEEP.format(store=str(store))])))
        rows.append(("load_sweep + frequencies", timed([py, "-c", READ_LOAD_SWEEP.format(store=str(store))])))
        for chunks in ("", ", chunks=None"):
            rows.append((f"xarray.open_zarr(store{chunks}) + freq.",
                         timed([py, "-c", READ_XARRAY.format(store=str(store), chunks=chunks)])))
        if not args.no_report:
            rows.append(("report", timed([*bs, "report", str(store), "--out", str(Path(tmp) / "report")])))
        files = sum(len(f) for _, _, f in os.walk(store))
    points = len(dice) * 24
    print(f"{points} grid points x {args.replicates} replicates: {r['tasks_run']} simulation tasks, "
          f"{r['exact_run']} exact; {args.workers} workers; store files: {files}")
    print(f"kernel {r['kernel_s']:.1f} s and writes {r['write_s']:.1f} s summed over tasks: "
          f"write overhead {r['write_s'] / max(tasks, 1) * 1e3:.1f} ms per task; "
          f"packing the complete store {r.get('pack_s', 0.0):.1f} s")
    for what, wall in rows:
        print(f"  {what:34s} {wall:7.2f} s")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
